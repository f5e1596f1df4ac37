"""The endpoints of ``hookgate serve`` (see ``gateway.serve`` for the routes, bodies and errors), as a
mixin of ``HookServer``: reading and checking the request body, dispatching, and the answer envelopes."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from gateway.dialects import DIALECTS, claude, detect, parse_event, render
from gateway.dispatcher import internal_failure
from gateway.errors import EventError
from gateway.events import HookEvent, PassedThrough, decode_event_bytes, dump_bytes
from gateway.oversize import DRAIN_LIMIT, HEAD_BYTES, Oversized, oversize_decision
from gateway.serve.reload import one_line
from gateway.wire import (
    EXIT_CODE_HEADER,
    PROJECT_DIR_HEADER,
    RENDERED,
    STDOUT_LENGTH_HEADER,
    VENDOR_TYPE_PREFIX,
    VERSION,
)

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from gateway.api import Gateway
    from gateway.config.specs import RuntimeConfig
    from gateway.decision import Decision
    from gateway.serve.metrics import Metrics

JSON_TYPES = ("application/json",)

log = logging.getLogger("hookgate.server")


def _json(status: int, body: Any, headers: dict[str, str] | None = None) -> Response:
    from starlette.responses import Response

    return Response(dump_bytes(body), status_code=status, media_type="application/json", headers=headers)


class Routes:
    """The endpoints; ``HookServer`` provides the state they read (declared here)."""

    metrics: Metrics
    token: str | None
    max_body: int
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

    def _project_dir(self, request: Request) -> str | Response | None:
        """The caller's project folder from ``X-Hookgate-Project-Dir`` (see module docstring)."""
        value = request.headers.get(PROJECT_DIR_HEADER)
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
        self, request: Request, dialect: str
    ) -> HookEvent | PassedThrough | tuple[HookEvent, Decision] | Response:
        media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
        if media_type not in JSON_TYPES and not media_type.startswith(VENDOR_TYPE_PREFIX):
            self.metrics.rejected.labels("unsupported_media_type").inc()
            got = f"got {media_type!r}" if media_type else "none was given"
            return _json(415, {"error": f"Content-Type must be application/json ({got})"})
        body = bytearray()
        over: Oversized | None = None
        async for chunk in request.stream():
            if over is not None:
                over.feed(chunk)
                if over.size > DRAIN_LIMIT:
                    break
            elif len(body) + len(chunk) > self.max_body:
                room = max(0, HEAD_BYTES - len(body))  # the head (where the event's name is) spans chunks
                over = Oversized(body + chunk[:room], self.max_body)
                over.feed(chunk[room:])
                body = bytearray()
            else:
                body += chunk
        if over is not None:
            self.metrics.rejected.labels("too_large").inc()
            return self._oversized(over, dialect)
        try:
            data = decode_event_bytes(body)
            del body
            return parse_event(data, detect(data) if dialect == "auto" else dialect)
        except EventError as exc:
            self.metrics.rejected.labels("malformed").inc()
            return _json(400, {"error": one_line(exc)})

    def _oversized(self, over: Oversized, dialect: str) -> tuple[HookEvent, Decision] | PassedThrough:
        """An event over ``max_body``: its deny/block (HTTP 200, never a non-2xx, which Claude Code's
        ``http`` hook reads as "go ahead"), or, where a block holds nothing back, the exit-1 answer
        ``hookgate run`` gives (see ``gateway.oversize``)."""
        dialect, decision = oversize_decision(over, dialect)
        name = over.event_name() or ""
        if decision is None:
            return PassedThrough(name, dialect, over.message, (1, "", f"hookgate: {over.message}\n"))
        return HookEvent({"hook_event_name": decision.event}, dialect=dialect), decision

    async def _decide(self, request: Request, dialect: str) -> tuple[HookEvent, Decision] | PassedThrough | Response:
        project_dir = self._project_dir(request)
        if not (project_dir is None or isinstance(project_dir, str)):
            return project_dir  # an error response
        event = await self._read_event(request, dialect)
        if isinstance(event, tuple):
            return event  # over the size limit: already decided
        if isinstance(event, PassedThrough):
            self.metrics.count_event(event.name, "passthrough")
            return event
        if not isinstance(event, HookEvent):
            return event  # an error response
        event.project_dir = project_dir
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

    async def hooks_claude(self, request: Request) -> Response:
        """``POST /hooks``: Claude Code JSON in, Claude Code JSON body out."""
        outcome = await self._decide(request, "claude")
        if isinstance(outcome, PassedThrough):
            return _json(200, {})
        if not isinstance(outcome, tuple):
            return outcome
        return _json(200, claude.to_json(outcome[1]))

    async def hooks_dialect(self, request: Request) -> Response:
        """``POST /hooks/{dialect}``: the rendered answer envelope (see module docstring)."""
        dialect = request.path_params["dialect"]
        if dialect != "auto" and dialect not in DIALECTS:
            self.metrics.rejected.labels("unknown_dialect").inc()
            return _json(404, {"error": f"unknown dialect {dialect!r} (expected one of: {', '.join(DIALECTS)}, auto)"})
        outcome = await self._decide(request, dialect)
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
            return outcome
        if RENDERED in request.headers.get("accept", ""):
            from starlette.responses import Response

            stdout = out.encode()
            return Response(
                stdout + err.encode(),
                media_type=RENDERED,
                headers={EXIT_CODE_HEADER: str(code), STDOUT_LENGTH_HEADER: str(len(stdout))},
            )
        return _json(200, envelope)

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
