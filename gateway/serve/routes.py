"""The endpoints of ``hookgate serve`` (see ``gateway.serve`` for the routes, bodies and errors), as a
mixin of ``HookServer``: reading and checking the request body, dispatching, and the answer envelopes.

``POST /hooks`` and ``POST /hooks/{dialect}`` are plain ASGI endpoints (``Endpoint``: Starlette routes
to them as to any ASGI app): they read the three request headers they use from the scope and the body
from ``receive``, and send a JSON answer as two ASGI messages, the same bytes and headers a Starlette
``Response`` would send, without building a ``Request``, a ``Headers`` mapping or a ``Response`` per
event (a few microseconds of every event's CPU). The other routes are ordinary Starlette endpoints."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

from gateway.caller import RECEIVE
from gateway.dialects import DIALECTS, claude, detect, parse_event, render
from gateway.dispatcher import internal_failure
from gateway.errors import EventError, EventUndecodable
from gateway.events import HookEvent, PassedThrough, decode_event_bytes, dump_bytes
from gateway.oversize import DRAIN_LIMIT, HEAD_BYTES, Oversized, oversize_decision
from gateway.serve.guard import json_media_problem
from gateway.serve.reload import one_line
from gateway.wire import (
    EXIT_CODE_HEADER,
    PROJECT_DIR_HEADER,
    RENDERED,
    STDOUT_LENGTH_HEADER,
    VERSION,
)

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from gateway.api import Gateway
    from gateway.config.specs import RuntimeConfig
    from gateway.decision import Decision
    from gateway.serve.guard import Receive, Scope, Send
    from gateway.serve.metrics import Metrics

_PROJECT_DIR = PROJECT_DIR_HEADER.lower().encode()
_RENDERED = RENDERED.encode()
_JSON_HEADERS = (b"content-type", b"application/json")

log = logging.getLogger("hookgate.server")


def _json(status: int, body: Any, headers: dict[str, str] | None = None) -> Response:
    from starlette.responses import Response

    return Response(dump_bytes(body), status_code=status, media_type="application/json", headers=headers)


class Endpoint:
    """A route's handler as an ASGI app (Starlette calls a non-function endpoint with the matched scope)."""

    def __init__(self, handle: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.handle = handle

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.handle(scope, receive, send)


class HotPaths:
    """ASGI middleware: ``POST /hooks`` and ``POST /hooks/{dialect}`` (with or without a trailing slash)
    go straight to their endpoints; every other request goes on to ``app`` (Starlette: its router, its
    404/405 JSON errors, its error middleware). The two hook routes are the same routes Starlette has
    (``create_app`` registers them there too), minus its per-request router walk and middleware layers.
    An exception from an endpoint reaches the ASGI server, which answers 500 if nothing was sent yet, as
    Starlette's error middleware would; a client gone before its body was in (``ClientGone``: it went
    away, or the read deadline answered 408 and closed its connection, ``gateway.serve.protocol``) ends
    the request quietly, with nothing to answer."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], routes: Routes) -> None:
        self.app = app
        self.claude = routes.hooks_claude
        self.dialect = routes.hooks_dialect

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            path: str = scope["path"]
            try:
                if path == "/hooks" or path == "/hooks/":
                    await self.claude(scope, receive, send)
                    return
                if path.startswith("/hooks/"):
                    name = path[7:-1] if path.endswith("/") else path[7:]
                    if name and "/" not in name:
                        scope["path_params"] = {"dialect": name}
                        await self.dialect(scope, receive, send)
                        return
            except ClientGone:
                log.debug("POST %s: the client was gone before its body was in", path[:200])
                return
        await self.app(scope, receive, send)


class ClientGone(Exception):
    """The request's body was cut short: the client went away, or the read deadline closed its connection
    (``http.disconnect`` before the last chunk). Nothing can be answered."""


class Head:
    """The request headers the hook endpoints read (the first of each; names are lowercase in ASGI)."""

    __slots__ = ("accept", "content_type", "project_dir")

    def __init__(self, scope: Scope) -> None:
        content_type: bytes | None = None
        project_dir: bytes | None = None
        accept: bytes | None = None
        for key, value in scope["headers"]:
            if key == b"content-type":
                content_type = value if content_type is None else content_type
            elif key == _PROJECT_DIR:
                project_dir = value if project_dir is None else project_dir
            elif key == b"accept":
                accept = value if accept is None else accept
        self.content_type: bytes | None = content_type
        self.project_dir: str | None = None if project_dir is None else project_dir.decode("latin-1")
        self.accept: bytes = accept or b""


async def send_json(send: Send, status: int, body: Any) -> None:
    """``body`` as a JSON answer: what ``_json(status, body)`` sends, as two ASGI messages."""
    data = dump_bytes(body)
    headers = [(b"content-length", str(len(data)).encode()), _JSON_HEADERS]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


class Routes:
    """The endpoints; ``HookServer`` provides the state they read (declared here)."""

    metrics: Metrics
    token: str | None
    max_body: int
    max_body_setting: str
    started: float
    _warned_project_dir: bool
    dispatch: Callable[[HookEvent], Awaitable[Decision]]

    if TYPE_CHECKING:

        @property
        def config(self) -> RuntimeConfig: ...

        @property
        def gateway(self) -> Gateway: ...

        @property
        def reload_count(self) -> int: ...

    def _project_dir(self, head: Head) -> str | Response | None:
        """The caller's project folder from ``X-Hookgate-Project-Dir`` (see module docstring)."""
        value = head.project_dir
        if value is None:
            return None
        if self.token is None:  # RequestGuard has already refused a missing or wrong token
            if not self._warned_project_dir:
                self._warned_project_dir = True
                log.warning(
                    "ignoring X-Hookgate-Project-Dir (the caller's project folder): it is accepted only "
                    "with HOOKGATE_TOKEN set; command handlers use this server's CLAUDE_PROJECT_DIR"
                )
            return None
        from urllib.parse import unquote

        path = unquote(value.strip(), errors="surrogateescape")
        if not os.path.isabs(path) or "\0" in path or not os.path.isdir(path):
            self.metrics.rejected.labels("malformed").inc()
            return _json(400, {"error": "X-Hookgate-Project-Dir must be the absolute path of an existing directory"})
        return path

    async def _read_event(
        self, head: Head, receive: Receive, dialect: str
    ) -> HookEvent | PassedThrough | tuple[HookEvent, Decision] | Response:
        problem = json_media_problem(head.content_type)
        if problem is not None:  # RequestGuard refuses these first; kept for an app built without it
            self.metrics.rejected.labels("unsupported_media_type").inc()
            return _json(415, {"error": problem})
        first = await receive()  # the whole body, mostly (a client's one write, up to uvicorn's buffer)
        if first["type"] == "http.request" and not first.get("more_body", False):
            whole: bytes = first.get("body", b"")
            if len(whole) <= self.max_body:
                return self._parse(whole, dialect)
        body = bytearray()
        over: Oversized | None = None
        async for chunk in _body(receive, first):
            if over is not None:
                over.feed(chunk)
                if over.size > DRAIN_LIMIT:
                    break
            elif len(body) + len(chunk) > self.max_body:
                room = max(0, HEAD_BYTES - len(body))  # the head (where the event's name is) spans chunks
                over = Oversized(body + chunk[:room], self.max_body, setting=self.max_body_setting)
                over.feed(chunk[room:])
                body = bytearray()
            else:
                body += chunk
        if over is not None:
            self.metrics.rejected.labels("too_large").inc()
            return self._oversized(over, dialect)
        return self._parse(body, dialect)

    def _parse(
        self, body: bytes | bytearray, dialect: str
    ) -> HookEvent | PassedThrough | tuple[HookEvent, Decision] | Response:
        """A body within ``max_body`` as an event (or its error response, or its deny: see ``_oversized``)."""
        try:
            data = decode_event_bytes(body)
        except EventUndecodable as exc:  # valid JSON shaped past decoding (by tool input): denied, not a 400
            self.metrics.rejected.labels("malformed").inc()
            return self._oversized(Oversized(body, self.max_body, str(exc), self.max_body_setting), dialect)
        except EventError as exc:
            return self._malformed(exc)
        try:
            return parse_event(data, detect(data) if dialect == "auto" else dialect)
        except EventError as exc:
            return self._malformed(exc)

    def _malformed(self, exc: EventError) -> Response:
        """400 ``{"error": ...}`` for a malformed event, marked as hookgate's own answer with
        ``hookgate-exit-code: 1`` (what ``hookgate run`` exits with): the thin client trusts a 400 only
        with it, since any other server on the port may answer 400 too."""
        self.metrics.rejected.labels("malformed").inc()
        return _json(400, {"error": one_line(exc)}, {EXIT_CODE_HEADER: "1"})

    def _oversized(self, over: Oversized, dialect: str) -> tuple[HookEvent, Decision] | PassedThrough:
        """An event over ``max_body``: its deny/block (HTTP 200, never a non-2xx, which Claude Code's
        ``http`` hook reads as "go ahead"), or, where a block holds nothing back, the exit-1 answer
        ``hookgate run`` gives (see ``gateway.oversize``)."""
        dialect, decision = oversize_decision(over, dialect)
        name = over.event_name() or ""
        if decision is None:
            return PassedThrough(name, dialect, over.message, (1, "", f"hookgate: {over.message}\n"))
        return HookEvent({"hook_event_name": decision.event}, dialect=dialect), decision

    async def _decide(
        self, head: Head, receive: Receive, dialect: str
    ) -> tuple[HookEvent, Decision] | PassedThrough | Response:
        project_dir = self._project_dir(head)
        if not (project_dir is None or isinstance(project_dir, str)):
            return project_dir  # an error response
        event = await self._read_event(head, receive, dialect)
        if isinstance(event, tuple):
            return event  # over the size limit: already decided
        if isinstance(event, PassedThrough):
            self.metrics.count_event(event.name, "passthrough")
            return event
        if not isinstance(event, HookEvent):
            return event  # an error response
        event.project_dir = project_dir
        watch = RECEIVE.set(receive)  # gateway.caller: a long wait can tell that the client hung up
        try:
            return event, await self.dispatch(event)
        except Exception as exc:  # the server never dies of a dispatch bug
            log.exception("internal error while dispatching %s", event.name)
            self.metrics.rejected.labels("internal_error").inc()
            message = f"internal error while dispatching {event.name}: {type(exc).__name__}: {one_line(exc)}"
            failed = internal_failure(self.config, event, message)  # failClosed handlers: deny/block
            if failed is not None:
                gateway = self.gateway
                gateway.dispatcher.record(event, failed, gateway.context)  # the deny is on the audit trail too
            return (event, failed) if failed is not None else _json(500, {"error": message})
        finally:
            RECEIVE.reset(watch)

    async def hooks_claude(self, scope: Scope, receive: Receive, send: Send) -> None:
        """``POST /hooks`` (ASGI): Claude Code JSON in, Claude Code JSON body out."""
        outcome = await self._decide(Head(scope), receive, "claude")
        if isinstance(outcome, PassedThrough):
            await send_json(send, 200, {})
        elif isinstance(outcome, tuple):
            await send_json(send, 200, claude.to_json(outcome[1]))
        else:
            await outcome(scope, receive, send)

    async def hooks_dialect(self, scope: Scope, receive: Receive, send: Send) -> None:
        """``POST /hooks/{dialect}`` (ASGI): the rendered answer envelope (see module docstring)."""
        dialect = scope["path_params"]["dialect"]
        if dialect != "auto" and dialect not in DIALECTS:
            self.metrics.rejected.labels("unknown_dialect").inc()
            error = f"unknown dialect {dialect!r} (expected one of: {', '.join(DIALECTS)}, auto)"
            await send_json(send, 404, {"error": error})
            return
        head = Head(scope)
        outcome = await self._decide(head, receive, dialect)
        if isinstance(outcome, PassedThrough):
            code, out, err = outcome.answer
            envelope: dict[str, Any] = {
                "event": outcome.name,
                "dialect": outcome.dialect,
                "exit_code": code,
                "stdout": out,
                "stderr": err,
                "claude": {},
                "decision": None,
                "passed_through": outcome.reason,
            }
        elif isinstance(outcome, tuple):
            event, decision = outcome
            code, out, err = render(decision, event.dialect)
            envelope = {
                "event": event.name,
                "dialect": event.dialect,
                "exit_code": code,
                "stdout": out,
                "stderr": err,
                "claude": claude.to_json(decision),
                "decision": decision.to_dict(),
            }
        else:
            await outcome(scope, receive, send)
            return
        if _RENDERED in head.accept:
            from starlette.responses import Response

            stdout = out.encode()
            rendered = Response(
                stdout + err.encode(),
                media_type=RENDERED,
                headers={EXIT_CODE_HEADER: str(code), STDOUT_LENGTH_HEADER: str(len(stdout))},
            )
            await rendered(scope, receive, send)
            return
        await send_json(send, 200, envelope)

    async def healthz(self, request: Request) -> Response:
        config = self.config
        return _json(
            200,
            {
                "status": "ok",
                "version": VERSION,
                "config": config.sources,
                "handlers": config.handler_count(),
                "reloads": self.reload_count,
                "uptime_s": round(time.time() - self.started, 1),
            },
        )

    async def metrics_endpoint(self, request: Request) -> Response:
        from starlette.responses import Response

        body, content_type = self.metrics.render()
        return Response(body, media_type=content_type)


async def _body(receive: Receive, message: MutableMapping[str, Any]) -> AsyncIterator[bytes]:
    """The request body's chunks, from ``message`` (the first received) on, from ``receive`` (as
    Starlette's ``Request.stream``; ClientGone when the client goes away first)."""
    while True:
        if message["type"] == "http.request":
            chunk = message.get("body", b"")
            if chunk:
                yield chunk
            if not message.get("more_body", False):
                return
        elif message["type"] == "http.disconnect":
            raise ClientGone()
        message = await receive()
