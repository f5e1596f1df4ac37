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

Errors are JSON ``{"error": "<one line>"}``: 400 malformed event (bad JSON, not an object, unknown
event), 401 missing/wrong bearer token (when ``HOOKGATE_TOKEN`` is set, on every request), 404 unknown
dialect, 413 body over ``max_body`` bytes (default 10 MiB) or an event over 8 MiB, 500 an internal error
while dispatching (logged with its traceback; the server goes on), unless a handler for that
event is ``failClosed``: then the answer is the deny/block ``hookgate run`` gives in that case. Handler
failures are not HTTP errors: they are inside the decision, exactly as with ``hookgate run``.

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
import json
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
from gateway.dialects import DIALECTS, claude, parse_event
from gateway.errors import ConfigError, EventError
from gateway.events import MAX_EVENT_BYTES, HookEvent, decode_event_bytes

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
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

log = logging.getLogger("hookgate.server")


def decision_label(decision: Decision) -> str:
    """The ``decision`` metric label: deny | defer | ask | allow | block | none."""
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

    return Response(json.dumps(body, ensure_ascii=False).encode(), status_code=status,
                    media_type="application/json", headers=headers)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class HookServer:
    """The state behind the app: the current gateway generation, metrics, reload machinery.

    paths: config files (as resolved by ``find_config_paths``). token: bearer token required on every
    request (None: no auth). max_body: request body limit in bytes. reload_interval: seconds between
    config file checks (0: only SIGHUP reloads). Raises ConfigError when the initial config is invalid.
    """

    def __init__(self, paths: list[str], *, token: str | None = None, max_body: int = MAX_BODY,
                 reload_interval: float = 1.0) -> None:
        self.paths = list(paths)
        self.token = token or None
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

    async def _read_event(self, request: Request, dialect: str) -> HookEvent | Response:
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
        try:
            return parse_event(decode_event_bytes(body), dialect)
        except EventError as exc:
            too_large = len(body) > MAX_EVENT_BYTES
            self.metrics.rejected.labels("too_large" if too_large else "malformed").inc()
            return _json(413 if too_large else 400, {"error": _one_line(exc)})

    async def _decide(self, request: Request, dialect: str) -> tuple[HookEvent, Decision] | Response:
        event = await self._read_event(request, dialect)
        if not isinstance(event, HookEvent):
            return event  # an error response
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
        if not isinstance(outcome, tuple):
            return outcome
        event, decision = outcome
        from gateway.cli import render_run

        code, out, err = render_run(decision, event.dialect)
        if RENDERED in request.headers.get("accept", ""):
            from starlette.responses import Response

            stdout = out.encode()
            return Response(stdout + err.encode(), media_type=RENDERED,
                            headers={"hookgate-exit-code": str(code), "hookgate-stdout-length": str(len(stdout))})
        return _json(200, {"event": event.name, "dialect": event.dialect, "exit_code": code, "stdout": out,
                           "stderr": err, "claude": claude.to_json(decision), "decision": decision.to_dict()})

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


class BearerAuth:
    """Pure ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>`` (401 otherwise)."""

    def __init__(self, app: Any, token: str, on_reject: Callable[[], None] | None = None) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()
        self._on_reject = on_reject

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            supplied = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
            if not hmac.compare_digest(supplied, self._expected):
                if self._on_reject is not None:
                    self._on_reject()
                body = b'{"error": "missing or wrong bearer token (see HOOKGATE_TOKEN)"}'
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def create_app(server: HookServer) -> Any:
    """The ASGI app for ``server`` (Starlette, wrapped in ``BearerAuth`` when a token is set)."""
    from starlette.applications import Starlette
    from starlette.routing import Route

    routes = [Route("/hooks", server.hooks_claude, methods=["POST"]),
              Route("/hooks/{dialect}", server.hooks_dialect, methods=["POST"]),
              Route("/healthz", server.healthz, methods=["GET"]),
              Route("/metrics", server.metrics_endpoint, methods=["GET"])]
    app: Starlette = Starlette(routes=routes, lifespan=server.lifespan)
    if server.token:
        return BearerAuth(app, server.token, lambda: server.metrics.rejected.labels("unauthorized").inc())
    return app


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
          reload_interval: float = 1.0, log_level: str = "info") -> int:
    """Run ``hookgate serve`` until SIGTERM/SIGINT. Returns the exit code. Raises ConfigError, OSError.

    The token comes from ``HOOKGATE_TOKEN``. One line on stderr names the URL once the socket is bound
    (with ``port=0`` the chosen port is in it).
    """
    import uvicorn

    from handlers.netguard import is_loopback_host

    _configure_logging(log_level)
    token = os.environ.get("HOOKGATE_TOKEN") or None
    server = HookServer(paths, token=token, max_body=max_body, reload_interval=reload_interval)
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
