"""``hookgate serve``: a warm gateway behind HTTP (Starlette under uvicorn).

Routes::

    POST /hooks            a Claude Code hook event -> 200 with the Claude Code JSON body ({} = no decision),
                           so Claude Code's own ``type: "http"`` hook can point straight at it
    POST /hooks/{dialect}  an event in ``dialect`` (claude, kiro, auto) -> 200 with the answer as
                           ``hookgate run`` would print it:
                           {"event": "PreToolUse", "dialect": "claude", "exit_code": 2,
                            "stdout": "...", "stderr": "...", "claude": {...Claude Code JSON...},
                            "decision": {...Decision.to_dict(), results included...}}
                           With ``Accept: application/vnd.hookgate.rendered`` (the thin client) the
                           same answer comes compact: headers ``hookgate-exit-code`` and
                           ``hookgate-stdout-length`` (bytes), body = stdout then stderr (UTF-8).
    GET  /healthz          {"status": "ok", "version", "config": [files], "handlers": n, "reloads": n}
    GET  /metrics          Prometheus text: hookgate_events_total{event,decision},
                           hookgate_handler_duration_seconds{handler,type} (histogram),
                           hookgate_handler_errors_total{handler,type,status}, hookgate_event_duration_seconds,
                           hookgate_inflight_events, hookgate_config_reloads_total{result},
                           hookgate_requests_rejected_total{reason}

Each route also answers with a trailing slash (``/hooks/``, ``/hooks/claude/``): no redirects.

A host event hookgate passes through untouched (Gemini's BeforeModel, AfterModel, BeforeToolSelection:
``gateway.dialects.PassThrough``) gets 200 with the host's "no objection" answer, as ``hookgate run``
prints it: ``{}`` on ``/hooks``; on ``/hooks/{dialect}`` the envelope with ``"decision": null`` and
``"passed_through": "<why>"`` (metric label ``decision="passthrough"``).

Request checks (``RequestGuard``, on every route, before anything else), against cross-site requests
from a browser (CSRF) and DNS rebinding:

- ``Host``: when the server is bound to a loopback address (or ``allow_hosts`` is given), the Host
  header's name must be a loopback address, ``localhost``, the bound host, or one of ``allow_hosts``:
  421 otherwise. A page on ``http://evil.example`` whose name was rebound to 127.0.0.1 still sends
  ``Host: evil.example``.
- ``Origin``: a request that carries one gets 403 (browsers send it on every cross-origin POST; hook
  clients, Claude Code's ``http`` hook and the thin client do not).
- ``Authorization: Bearer <token>`` when ``HOOKGATE_TOKEN`` is set: 401 otherwise.
- ``POST`` bodies must be ``Content-Type: application/json`` (or ``application/vnd.hookgate.*``): 415
  otherwise, so no "simple" cross-site request (``text/plain``, a form) reaches a handler.

``X-Hookgate-Project-Dir`` (percent-encoded UTF-8 absolute path, sent by the thin client from its
``CLAUDE_PROJECT_DIR``) becomes ``HookEvent.project_dir`` for that event, which ``command`` handlers
use instead of the server's own ``CLAUDE_PROJECT_DIR``. It is honoured only when ``HOOKGATE_TOKEN`` is
set (and the caller's token matched): without a token any local user could point command handlers at
a folder of their choosing, so the header is then ignored (one warning in the log) and handlers use the
server's ``CLAUDE_PROJECT_DIR``. A value that is not an absolute path is a 400 (with a token set).

Errors are JSON ``{"error": "<one line>"}``: 400 malformed event (bad JSON, not an object, unknown
event), 401 missing/wrong bearer token (when ``HOOKGATE_TOKEN`` is set, on every request), 403 a
request with an ``Origin``, 404 unknown dialect or path, 405 wrong method for the path, 413 body
over ``max_body`` bytes (default 10 MiB) or an event over 8 MiB, 415 a POST that is not JSON, 421 a
Host that is not this server's, 500 an internal error while dispatching (logged with its traceback;
the server goes on), unless a handler for that event is ``failClosed``: then the answer is the
deny/block ``hookgate run`` gives in that case. Handler failures are not HTTP errors: they are inside
the decision, exactly as with ``hookgate run``.

Warm state: one ``Gateway`` (mode ``serve``): loaded config, handler instances, the shared HTTP pool,
MCP sessions and SDK clients live across events. Reload on SIGHUP and when a config file changes
(polled every ``reload_interval`` seconds): the new config is compiled off the event loop and swapped
in atomically; a bad config is rejected with one log line and the old one keeps serving. Events already
running finish on the config they started with. When only ``hooks`` changed, warm resources are kept;
otherwise the old gateway is closed once its last event finishes. Shutdown (SIGTERM/SIGINT) stops
accepting connections, lets in-flight events finish, then drains background (``async``) handlers.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gateway.api import Gateway
from gateway.config import RuntimeConfig, load_config
from gateway.dialects import DIALECTS, PassThrough, claude, detect, parse_event
from gateway.errors import ConfigError, EventError
from gateway.events import MAX_EVENT_BYTES, HookEvent, decode_event_bytes, dumps

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

    from gateway.decision import Decision

    Scope = MutableMapping[str, Any]
    Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
    Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8787
MAX_BODY = 10 * 1024 * 1024
"""Default request body limit (bytes); larger bodies get 413."""
RENDERED = "application/vnd.hookgate.rendered"
"""``Accept`` value for the compact answer the thin client reads (``gateway.client``)."""
PROJECT_DIR_HEADER = "x-hookgate-project-dir"
"""The caller's ``CLAUDE_PROJECT_DIR``, percent-encoded (``gateway.client.PROJECT_DIR_HEADER``)."""
JSON_TYPES = ("application/json",)
VENDOR_TYPE_PREFIX = "application/vnd.hookgate"
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

log = logging.getLogger("hookgate.server")


def decision_label(decision: Decision) -> str:
    """The ``decision`` metric label: deny | defer | ask | allow | block | none (``passthrough`` is
    counted apart, for a host event hookgate leaves alone)."""
    if decision.permission is not None:
        return decision.permission
    return "block" if decision.block else "none"


class Metrics:
    """Prometheus metrics in a private registry (``prometheus_client``; see module docstring)."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics

        disable_created_metrics()  # type: ignore[no-untyped-call]  # no *_created series: they double the exposition for no use here
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.events = Counter("hookgate_events", "Events answered, by event name and merged decision.",
                              ["event", "decision"], registry=r)
        self.event_seconds = Histogram("hookgate_event_duration_seconds", "Time to answer one event.", ["event"],
                                       buckets=LATENCY_BUCKETS, registry=r)
        self.handler_seconds = Histogram("hookgate_handler_duration_seconds", "Run time of one handler.",
                                         ["handler", "type"], buckets=LATENCY_BUCKETS, registry=r)
        self.handler_errors = Counter("hookgate_handler_errors", "Handler failures (error or timeout).",
                                      ["handler", "type", "status"], registry=r)
        self.inflight = Gauge("hookgate_inflight_events", "Events being dispatched now.", registry=r)
        self.reloads = Counter("hookgate_config_reloads", "Config reloads, by result.", ["result"], registry=r)
        self.rejected = Counter("hookgate_requests_rejected", "Requests refused before dispatch, by reason.",
                                ["reason"], registry=r)

    def observe(self, decision: Decision, seconds: float) -> None:
        self.events.labels(decision.event, decision_label(decision)).inc()
        self.event_seconds.labels(decision.event).observe(seconds)
        for result in decision.results:
            if result.status in ("ok", "error", "timeout"):
                self.handler_seconds.labels(result.id, result.type).observe(result.duration_ms / 1000)
            if result.failed:
                self.handler_errors.labels(result.id, result.type, result.status).inc()

    def render(self) -> tuple[bytes, str]:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return generate_latest(self.registry), CONTENT_TYPE_LATEST


@dataclass(frozen=True)
class PassedThrough:
    """A host event hookgate leaves alone (``gateway.dialects.PassThrough``).

    name: the host's event name. dialect: the dialect that recognised it. answer: ``(exit_code, stdout,
    stderr)`` to give the host. reason: the one-line why.
    """

    name: str
    dialect: str
    answer: tuple[int, str, str]
    reason: str


@dataclass
class _Generation:
    """One loaded config's gateway, with the number of events still running on it."""

    gateway: Gateway
    inflight: int = 0
    retired: bool = False


def _stamp(paths: list[str]) -> tuple[tuple[str, int, int, int], ...]:
    """What identifies the config files' content on disk: (path, mtime_ns, size, inode), -1 when missing."""
    out = []
    for path in paths:
        try:
            st = os.stat(path)
            out.append((path, st.st_mtime_ns, st.st_size, st.st_ino))
        except OSError:
            out.append((path, -1, -1, -1))
    return tuple(out)


def _json(status: int, body: Any, headers: dict[str, str] | None = None) -> Response:
    from starlette.responses import Response

    return Response(dumps(body).encode(), status_code=status,
                    media_type="application/json", headers=headers)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class HookServer:
    """The state behind the app: the current gateway generation, metrics, reload machinery.

    paths: config files (as resolved by ``find_config_paths``). token: bearer token required on every
    request (None: no auth). host: the address the server is bound to (decides the ``Host`` check, see
    ``allowed_hosts``). allow_hosts: more names the ``Host`` header may carry (e.g. a local reverse
    proxy's). max_body: request body limit in bytes. reload_interval: seconds between config file checks
    (0: only SIGHUP reloads). Raises ConfigError when the initial config is invalid.
    """

    def __init__(self, paths: list[str], *, token: str | None = None, host: str = DEFAULT_HOST,
                 allow_hosts: list[str] | tuple[str, ...] = (), max_body: int = MAX_BODY,
                 reload_interval: float = 1.0) -> None:
        self.paths = list(paths)
        self.token = token or None
        self.host = host
        self.allow_hosts = tuple(allow_hosts)
        self._warned_project_dir = False
        self.max_body = max_body
        self.reload_interval = reload_interval
        self.metrics = Metrics()
        self._stamp = _stamp(self.paths)
        self._current = _Generation(Gateway(load_config(self.paths), mode="serve"))
        self._retired: set[asyncio.Task[None]] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._reload_lock: asyncio.Lock | None = None
        self.reload_count = 0
        self.started = time.time()

    @property
    def gateway(self) -> Gateway:
        return self._current.gateway

    @property
    def config(self) -> RuntimeConfig:
        return self._current.gateway.config

    # ------------------------------------------------------------------ dispatch

    async def dispatch(self, event: HookEvent) -> Decision:
        """Dispatch on the current generation (which stays alive until this event finishes)."""
        generation = self._current
        generation.inflight += 1
        self.metrics.inflight.inc()
        started = time.perf_counter()
        try:
            decision = await generation.gateway.dispatch(event)
        finally:
            generation.inflight -= 1
            self.metrics.inflight.dec()
            if generation.retired and generation.inflight == 0:
                self._close_generation(generation)
        self.metrics.observe(decision, time.perf_counter() - started)
        return decision

    # ------------------------------------------------------------------ reload

    async def reload(self, why: str) -> bool:
        """Compile the config files again and swap them in; False (old config kept) when invalid."""
        if self._reload_lock is None:
            self._reload_lock = asyncio.Lock()
        async with self._reload_lock:
            stamp = _stamp(self.paths)
            try:
                config = await asyncio.to_thread(load_config, self.paths, use_cache=False)
            except ConfigError as exc:
                more = f" (and {len(exc.issues) - 1} more)" if len(exc.issues) > 1 else ""
                log.error("config reload (%s) rejected: %s%s; still serving the previous config", why,
                          exc.issues[0], more)
                self._stamp = stamp
                self.metrics.reloads.labels("rejected").inc()
                return False
            except Exception as exc:  # never let a reload take the server down
                log.error("config reload (%s) failed: %s: %s; still serving the previous config", why,
                          type(exc).__name__, _one_line(exc))
                self._stamp = stamp
                self.metrics.reloads.labels("rejected").inc()
                return False
            old = self._current
            new = Gateway(config, mode="serve")
            old_config = old.gateway.config
            keep_resources = (config.mcp_servers, config.llm, config.settings) == \
                (old_config.mcp_servers, old_config.llm, old_config.settings)
            if keep_resources:
                new.context = old.gateway.context
                new.context.config = config
            self._current = _Generation(new)
            self._stamp = stamp
            self.reload_count += 1
            self.metrics.reloads.labels("ok").inc()
            if not keep_resources:
                old.retired = True
                if old.inflight == 0:
                    self._close_generation(old)
            log.info("config reloaded (%s): %d handler(s) from %s", why, config.handler_count(),
                     ", ".join(config.sources))
            for warning in config.warnings:
                log.warning("config: %s", warning)
            return True

    def _close_generation(self, generation: _Generation) -> None:
        task = asyncio.ensure_future(generation.gateway.aclose())
        self._retired.add(task)
        task.add_done_callback(self._retired.discard)

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self.reload_interval)
            if _stamp(self.paths) != self._stamp:
                await self.reload("config file changed")

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Any) -> AsyncIterator[None]:
        """Start the file watcher and the SIGHUP handler; on shutdown drain and close everything."""
        loop = asyncio.get_running_loop()
        hup = False
        with contextlib.suppress(ValueError, RuntimeError, NotImplementedError, AttributeError):
            loop.add_signal_handler(signal.SIGHUP, lambda: self._spawn(self.reload("SIGHUP")))
            hup = True
        if self.reload_interval > 0:
            self._spawn(self._watch())
        try:
            yield
        finally:
            if hup:
                loop.remove_signal_handler(signal.SIGHUP)
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await self.aclose()

    async def aclose(self) -> None:
        """Drain background handlers and close every generation's resources."""
        await self._current.gateway.aclose()
        if self._retired:
            await asyncio.gather(*self._retired, return_exceptions=True)

    # ------------------------------------------------------------------ HTTP endpoints

    def allowed_hosts(self) -> frozenset[str] | None:
        """Names the ``Host`` header may carry besides loopback addresses (lowercase, no brackets), or
        None (no Host check: bound beyond loopback and no ``allow_hosts``)."""
        bound = self.host.strip("[]").lower()
        if not (_is_loopback_name(bound) or self.allow_hosts):
            return None
        return frozenset({"localhost", bound, *(h.strip("[]").lower().rstrip(".") for h in self.allow_hosts)})

    def _project_dir(self, request: Request) -> str | Response | None:
        """The caller's project folder from ``X-Hookgate-Project-Dir`` (see module docstring)."""
        value = request.headers.get(PROJECT_DIR_HEADER)
        if value is None:
            return None
        if self.token is None:  # RequestGuard has already refused a missing or wrong token
            if not self._warned_project_dir:
                self._warned_project_dir = True
                log.warning("ignoring X-Hookgate-Project-Dir (the caller's project folder): it is accepted only "
                            "with HOOKGATE_TOKEN set; command handlers use this server's CLAUDE_PROJECT_DIR")
            return None
        from urllib.parse import unquote

        path = unquote(value.strip(), errors="surrogateescape")
        if not os.path.isabs(path) or "\0" in path:
            self.metrics.rejected.labels("malformed").inc()
            return _json(400, {"error": "X-Hookgate-Project-Dir must be an absolute path"})
        return path

    async def _read_event(self, request: Request, dialect: str) -> HookEvent | PassedThrough | Response:
        media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
        if media_type not in JSON_TYPES and not media_type.startswith(VENDOR_TYPE_PREFIX):
            self.metrics.rejected.labels("unsupported_media_type").inc()
            got = f"got {media_type!r}" if media_type else "none was given"
            return _json(415, {"error": f"Content-Type must be application/json ({got})"})
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body:
            self.metrics.rejected.labels("too_large").inc()
            return _json(413, {"error": f"request body is {declared} bytes; the limit is {self.max_body} bytes"})
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > self.max_body:
                self.metrics.rejected.labels("too_large").inc()
                return _json(413, {"error": f"request body exceeds the limit of {self.max_body} bytes"})
            chunks.append(chunk)
        body = b"".join(chunks)
        data: dict[str, Any] = {}
        try:
            data = decode_event_bytes(body)
            dialect = detect(data) if dialect == "auto" else dialect
            return parse_event(data, dialect)
        except PassThrough as exc:
            name = data.get("hook_event_name")
            return PassedThrough(name if isinstance(name, str) else "", dialect, exc.answer, _one_line(exc))
        except EventError as exc:
            too_large = len(body) > MAX_EVENT_BYTES
            self.metrics.rejected.labels("too_large" if too_large else "malformed").inc()
            return _json(413 if too_large else 400, {"error": _one_line(exc)})

    async def _decide(self, request: Request,
                      dialect: str) -> tuple[HookEvent, Decision] | PassedThrough | Response:
        project_dir = self._project_dir(request)
        if not (project_dir is None or isinstance(project_dir, str)):
            return project_dir  # an error response
        event = await self._read_event(request, dialect)
        if isinstance(event, PassedThrough):
            self.metrics.events.labels(event.name, "passthrough").inc()
            return event
        if not isinstance(event, HookEvent):
            return event  # an error response
        event.project_dir = project_dir
        try:
            return event, await self.dispatch(event)
        except Exception as exc:  # the server never dies of a dispatch bug
            log.exception("internal error while dispatching %s", event.name)
            self.metrics.rejected.labels("internal_error").inc()
            message = f"internal error while dispatching {event.name}: {type(exc).__name__}: {_one_line(exc)}"
            from gateway.cli import internal_failure

            failed = internal_failure(self.config, event, message)  # failClosed handlers: deny/block
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
            return _json(404, {"error": f"unknown dialect {dialect!r} (expected one of: "
                                        f"{', '.join(DIALECTS)}, auto)"})
        outcome = await self._decide(request, dialect)
        if isinstance(outcome, PassedThrough):
            code, out, err = outcome.answer
            envelope: dict[str, Any] = {"event": outcome.name, "dialect": outcome.dialect, "exit_code": code,
                                        "stdout": out, "stderr": err, "claude": {}, "decision": None,
                                        "passed_through": outcome.reason}
        elif isinstance(outcome, tuple):
            event, decision = outcome
            from gateway.cli import render_run

            code, out, err = render_run(decision, event.dialect)
            envelope = {"event": event.name, "dialect": event.dialect, "exit_code": code, "stdout": out,
                        "stderr": err, "claude": claude.to_json(decision), "decision": decision.to_dict()}
        else:
            return outcome
        if RENDERED in request.headers.get("accept", ""):
            from starlette.responses import Response

            stdout = out.encode()
            return Response(stdout + err.encode(), media_type=RENDERED,
                            headers={"hookgate-exit-code": str(code), "hookgate-stdout-length": str(len(stdout))})
        return _json(200, envelope)

    async def healthz(self, request: Request) -> Response:
        from gateway import __version__

        config = self.config
        return _json(200, {"status": "ok", "version": __version__, "config": config.sources,
                           "handlers": config.handler_count(), "reloads": self.reload_count,
                           "uptime_s": round(time.time() - self.started, 1)})

    async def metrics_endpoint(self, request: Request) -> Response:
        from starlette.responses import Response

        body, content_type = self.metrics.render()
        return Response(body, media_type=content_type)


def _is_loopback_name(host: str) -> bool:
    """True for ``localhost`` and a loopback address literal (``127.0.0.0/8``, ``::1``, IPv4-mapped)."""
    name = host.strip("[]").lower().rstrip(".")
    if name == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(name.partition("%")[0])
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return ip.is_loopback or (mapped is not None and mapped.is_loopback)


def host_name(value: str) -> str:
    """The name in a ``Host`` header value (port and IPv6 brackets removed, lowercase, no trailing dot)."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:].partition("]")[0]
    name, sep, port = value.rpartition(":")
    return (name if sep and (port.isdigit() or not port) else value).rstrip(".")


class RequestGuard:
    """Pure ASGI middleware in front of every route: the Host, Origin and token checks of the module
    docstring, in that order (421, 403, 401; one JSON error line each).

    allowed_hosts: names the Host header may carry besides loopback addresses (None: no Host check).
    on_reject: called with the reason label (``bad_host``, ``cross_origin``, ``unauthorized``).
    """

    def __init__(self, app: Any, *, token: str | None, allowed_hosts: frozenset[str] | None,
                 on_reject: Callable[[str], None] | None = None) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode() if token else None
        self._allowed_hosts = allowed_hosts
        self._on_reject = on_reject

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            problem = self._problem(scope["headers"])
            if problem is not None:
                status, reason, message, extra = problem
                if self._on_reject is not None:
                    self._on_reject(reason)
                body = dumps({"error": message}).encode()
                await send({"type": "http.response.start", "status": status,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(body)).encode()), *extra]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)

    def _problem(self, headers: list[tuple[bytes, bytes]]
                 ) -> tuple[int, str, str, list[tuple[bytes, bytes]]] | None:
        host = origin = None
        authorization = b""
        for key, value in headers:
            if key == b"host":
                host = value
            elif key == b"origin":
                origin = value
            elif key == b"authorization":
                authorization = value
        if self._allowed_hosts is not None and host is not None:
            name = host_name(host.decode("latin-1"))
            if not (_is_loopback_name(name) or name in self._allowed_hosts):
                return (421, "bad_host", f"Host {name[:100]!r} is not this server's name (DNS rebinding guard): "
                        "address it as 127.0.0.1, localhost or [::1], or allow the name with --allow-host", [])
        if origin is not None:
            return (403, "cross_origin", f"cross-origin request refused (Origin: {origin.decode('latin-1')[:100]}): "
                    "hook clients send no Origin header", [])
        if self._expected is not None and not hmac.compare_digest(authorization, self._expected):
            return (401, "unauthorized", "missing or wrong bearer token (see HOOKGATE_TOKEN)",
                    [(b"www-authenticate", b"Bearer")])
        return None


def create_app(server: HookServer) -> Any:
    """The ASGI app for ``server``: Starlette behind ``RequestGuard`` (Host, Origin and token checks)."""
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.routing import Route

    endpoints = [("/hooks", server.hooks_claude, "POST"), ("/hooks/{dialect}", server.hooks_dialect, "POST"),
                 ("/healthz", server.healthz, "GET"), ("/metrics", server.metrics_endpoint, "GET")]
    # Each path answers with and without a trailing slash (no 307 redirect: a hook client would not follow
    # it, and a redirected POST has no body); any other path or method gets a JSON error.
    routes = [Route(path + slash, endpoint, methods=[method])
              for path, endpoint, method in endpoints for slash in ("", "/")]

    async def http_error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        if status == 405:
            message = f"method {request.method} not allowed on {request.url.path[:200]}"
        else:
            message = (f"no route {request.method} {request.url.path[:200]} (hookgate serve answers POST /hooks, "
                       "POST /hooks/{dialect}, GET /healthz, GET /metrics)")
        headers = dict(exc.headers or {}) if isinstance(exc, HTTPException) else None
        return _json(status, {"error": message}, headers)

    app: Starlette = Starlette(routes=routes, lifespan=server.lifespan,
                               exception_handlers={404: http_error, 405: http_error})
    app.router.redirect_slashes = False
    return RequestGuard(app, token=server.token, allowed_hosts=server.allowed_hosts(),
                        on_reject=lambda reason: server.metrics.rejected.labels(reason).inc())


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: any free port). Raises OSError."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and without
    # it every answer (headers, then body) waits ~40 ms for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(2048)
    return sock


def _configure_logging(level: str) -> None:
    logger = logging.getLogger("hookgate")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(levelname)s:     hookgate: %(message)s"))
        logger.addHandler(handler)
    logger.setLevel(level.upper())
    logger.propagate = False


def serve(paths: list[str], *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, max_body: int = MAX_BODY,
          reload_interval: float = 1.0, log_level: str = "info", allow_hosts: list[str] | None = None) -> int:
    """Run ``hookgate serve`` until SIGTERM/SIGINT. Returns the exit code. Raises ConfigError, OSError.

    The token comes from ``HOOKGATE_TOKEN``. allow_hosts: extra names the ``Host`` header may carry
    (``--allow-host``). One line on stderr names the URL once the socket is bound (with ``port=0`` the
    chosen port is in it).
    """
    import uvicorn

    from handlers.netguard import is_loopback_host

    _configure_logging(log_level)
    token = os.environ.get("HOOKGATE_TOKEN") or None
    server = HookServer(paths, token=token, host=host, allow_hosts=allow_hosts or (), max_body=max_body,
                        reload_interval=reload_interval)
    if token is None and not is_loopback_host(host):
        log.warning("listening on %s without HOOKGATE_TOKEN: anyone who can reach this port can submit events "
                    "and run your handlers", host)
    sock = bind(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    config = server.config
    sys.stderr.write(f"hookgate: serving {config.handler_count()} handler(s) from {', '.join(config.sources)} "
                     f"on http://{shown}:{bound}\n")
    sys.stderr.flush()
    uv_config = uvicorn.Config(create_app(server), log_level=log_level, access_log=False, lifespan="on",
                               loop="asyncio", server_header=False)
    # uvicorn re-raises the signal that stopped it once it has shut down gracefully; a no-op handler
    # turns that into a clean exit 0 instead of death by SIGTERM.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: None)
    uvicorn.Server(uv_config).run(sockets=[sock])
    return 0
