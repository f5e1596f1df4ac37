"""``HookServer`` (the state behind ``hookgate serve``: generations, metrics, the lifespan), the ASGI app
(``create_app``: Starlette behind ``RequestGuard``) and ``serve`` (uvicorn until SIGTERM/SIGINT)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator, Awaitable
from typing import TYPE_CHECKING, Any

from gateway.client import event_limit, event_limit_setting
from gateway.serve.guard import RequestGuard, is_loopback_name
from gateway.serve.metrics import Metrics
from gateway.serve.reload import Generations
from gateway.serve.routes import Endpoint, HotPaths, Routes, _json

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

    from gateway.api import Gateway
    from gateway.config.specs import RuntimeConfig
    from gateway.decision import Decision
    from gateway.events import HookEvent

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8787
DEFAULT_READ_TIMEOUT = 10.0
"""Seconds a request's head, then its body, may take to arrive (``--read-timeout``; see ``gateway.serve.protocol``)."""

log = logging.getLogger("hookgate.server")


class HookServer(Routes):
    """The state behind the app: the current gateway generation, metrics, reload machinery.

    paths: config files (as resolved by ``find_config_paths``). token: bearer token required on every
    request (None: no auth). host: the address the server is bound to (decides the ``Host`` check, see
    ``allowed_hosts``). allow_hosts: more names the ``Host`` header may carry (e.g. a local reverse
    proxy's). max_body: event size limit in bytes (default ``event_limit()``: ``HOOKGATE_MAX_EVENT_BYTES`` or
    64 MiB; an event over it is denied, see ``gateway.oversize``). reload_interval: seconds between config file checks
    (0: only SIGHUP reloads). Raises ConfigError when the initial config is invalid.
    """

    def __init__(
        self,
        paths: list[str],
        *,
        token: str | None = None,
        host: str = DEFAULT_HOST,
        allow_hosts: list[str] | tuple[str, ...] = (),
        max_body: int | None = None,
        reload_interval: float = 1.0,
    ) -> None:
        self.paths = list(paths)
        self.token = token or None
        self.host = host
        self.allow_hosts = tuple(allow_hosts)
        self._warned_project_dir = False
        self.max_body = event_limit(max_body)
        self.max_body_setting = event_limit_setting(max_body)
        self.reload_interval = reload_interval
        self.loop: asyncio.AbstractEventLoop | None = None  # the serving loop (set at startup)
        self.metrics = Metrics()
        self.generations = Generations(self.paths, self.metrics)
        self._tasks: set[asyncio.Task[Any]] = set()
        self.started = time.time()
        from gateway.serve.approvals import ApprovalRoutes

        self.approvals = ApprovalRoutes(lambda: self.gateway.context, self.token)

    @property
    def gateway(self) -> Gateway:
        return self.generations.current.gateway

    @property
    def config(self) -> RuntimeConfig:
        return self.generations.current.gateway.config

    @property
    def reload_count(self) -> int:
        return self.generations.count

    async def dispatch(self, event: HookEvent) -> Decision:
        """Dispatch on the current generation, counted in the metrics."""
        self.metrics.dispatching += 1
        started = time.perf_counter()
        try:
            decision = await self.generations.dispatch(event)
        finally:
            self.metrics.dispatching -= 1
        self.metrics.observe(decision, time.perf_counter() - started)
        return decision

    async def reload(self, why: str) -> bool:
        """Compile the config files again and swap them in; False (old config kept) when invalid."""
        return await self.generations.reload(why)

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self.reload_interval)
            changed = self.generations.changed_files()  # the config files and its mcpConfig files
            if changed:
                await self.generations.settled()  # an editor may still be writing it
                await self.reload(f"config file changed: {', '.join(changed)}")

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Any) -> AsyncIterator[None]:
        """Start the file watcher and the SIGHUP handler; on shutdown drain and close everything."""
        loop = asyncio.get_running_loop()
        self.loop = loop
        hup = False
        with contextlib.suppress(ValueError, RuntimeError, NotImplementedError, AttributeError):
            loop.add_signal_handler(signal.SIGHUP, lambda: self._spawn(self.reload("SIGHUP")))
            hup = True
        if self.reload_interval > 0:
            self._spawn(self._watch())
        self._spawn(self.approvals.sweeper())
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
        await self.generations.aclose()

    def allowed_hosts(self) -> frozenset[str] | None:
        """Names the ``Host`` header may carry besides loopback addresses (lowercase, no brackets), or
        None (no Host check: bound beyond loopback and no ``allow_hosts``)."""
        bound = self.host.strip("[]").lower()
        if not (is_loopback_name(bound) or self.allow_hosts):
            return None
        return frozenset({"localhost", bound, *(h.strip("[]").lower().rstrip(".") for h in self.allow_hosts)})


MIN_TOKEN_CHARS = 20
"""A ``HOOKGATE_TOKEN`` shorter than this gets a warning when ``serve`` starts."""


def create_app(server: HookServer) -> Any:
    """The ASGI app for ``server``: Starlette behind ``RequestGuard`` (Host, Origin, token and POST
    Content-Type checks)."""
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.requests import ClientDisconnect
    from starlette.routing import Route

    endpoints: list[tuple[str, Any, str]] = [
        ("/hooks", Endpoint(server.hooks_claude), "POST"),  # ASGI endpoints: no Request/Response per event
        ("/hooks/{dialect}", Endpoint(server.hooks_dialect), "POST"),
        ("/healthz", server.healthz, "GET"),
        ("/metrics", server.metrics_endpoint, "GET"),
    ]
    # Each path answers with and without a trailing slash (no 307 redirect: a hook client would not follow
    # it, and a redirected POST has no body); any other path or method gets a JSON error.
    routes = [
        Route(path + slash, endpoint, methods=[method]) for path, endpoint, method in endpoints for slash in ("", "/")
    ]
    routes += server.approvals.routes() + server.approvals.ui_routes()
    from gateway.serve.ui import ui_routes

    routes += ui_routes(lambda: server.config, server.token)

    async def http_error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        if status == 405:
            message = f"method {request.method} not allowed on {request.url.path[:200]}"
        else:
            message = (
                f"no route {request.method} {request.url.path[:200]} (hookgate serve answers POST /hooks, "
                "POST /hooks/{dialect}, GET /healthz, GET /metrics, GET /ui)"
            )
        headers = dict(exc.headers or {}) if isinstance(exc, HTTPException) else None
        return _json(status, {"error": message}, headers)

    async def client_gone(request: Request, exc: Exception) -> Response:
        # A body cut short (the client left, or the read deadline answered 408 and closed the connection):
        # this answer goes nowhere, and the log gets no traceback for it.
        return _json(408, {"error": "request body not received"})

    from gateway.errors import StoreError

    said: dict[str, float] = {}

    async def store_error(request: Request, exc: Exception) -> Response:
        # The state store cannot be opened or read (a stateDir that is not a directory, a shared database
        # down): the console's and the approvals routes answer one JSON line, 503, and the log gets one
        # line per distinct problem a minute, not a traceback every time the console refreshes.
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        now = time.monotonic()
        if now - said.get(message, -120.0) >= 60.0:
            if len(said) > 64:
                said.clear()
            said[message] = now
            log.error("%s %s: %s", request.method, request.url.path[:200], message)
        return _json(503, {"error": message})

    app: Starlette = Starlette(
        routes=routes,
        lifespan=server.lifespan,
        exception_handlers={404: http_error, 405: http_error, ClientDisconnect: client_gone, StoreError: store_error},
    )
    app.router.redirect_slashes = False
    from gateway.serve.approvals import FORM_CALLBACKS, SELF_AUTHENTICATED

    return RequestGuard(
        HotPaths(app, server),
        token=server.token,
        allowed_hosts=server.allowed_hosts(),
        on_reject=lambda reason: server.metrics.rejected.labels(reason).inc(),
        self_authenticated=SELF_AUTHENTICATED,
        json_exempt=FORM_CALLBACKS,
    )


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


def serve(
    paths: list[str],
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    max_body: int | None = None,
    reload_interval: float = 1.0,
    log_level: str = "info",
    allow_hosts: list[str] | None = None,
    read_timeout: float = DEFAULT_READ_TIMEOUT,
) -> int:
    """Run ``hookgate serve`` until SIGTERM/SIGINT. Returns the exit code. Raises ConfigError, OSError,
    StoreError (the shared store's schema is older than this hookgate: ``hookgate store migrate``),
    ValueError (``read_timeout`` not > 0).

    The token comes from ``HOOKGATE_TOKEN``. allow_hosts: extra names the ``Host`` header may carry
    (``--allow-host``). read_timeout: seconds a request's head, then its body, may take to arrive
    (``--read-timeout``; a slower one is cut off, see ``gateway.serve.protocol``). One line on stderr
    names the URL once the socket is bound (with ``port=0`` the chosen port is in it).
    """
    import uvicorn

    from gateway.serve.protocol import read_deadline_protocol
    from handlers.netguard import is_loopback_host

    _configure_logging(log_level)
    token = os.environ.get("HOOKGATE_TOKEN") or None
    server = HookServer(
        paths, token=token, host=host, allow_hosts=allow_hosts or (), max_body=max_body, reload_interval=reload_interval
    )
    # ValueError for a read_timeout that is not > 0, before anything is bound
    protocol = read_deadline_protocol(read_timeout, lambda part: server.metrics.rejected.labels("read_timeout").inc())
    from gateway.store import check_at_start

    store_warning = check_at_start(server.config)  # StoreError (schema too old): serve does not start
    if store_warning:
        log.warning("%s", store_warning)
    if token is not None and len(token) < MIN_TOKEN_CHARS:
        log.warning(
            "HOOKGATE_TOKEN is only %d characters: a short token can be guessed (wrong guesses are paced to "
            "2 a second, not stopped); use %d or more random characters, e.g. "
            "python3 -c 'import secrets; print(secrets.token_urlsafe(32))'",
            len(token),
            MIN_TOKEN_CHARS,
        )
    if token is None and not is_loopback_host(host):
        log.warning(
            "listening on %s without HOOKGATE_TOKEN: anyone who can reach this port can submit events, "
            "run your handlers and read the audit trail at /ui, and off loopback there is no Host check, so "
            "a web page a browser here opens can too (DNS rebinding); set HOOKGATE_TOKEN",
            host,
        )
    sock = bind(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    config = server.config
    sys.stderr.write(
        f"hookgate: serving {config.handler_count()} handler(s) from {', '.join(config.sources)} "
        f"on http://{shown}:{bound}\n"
    )
    sys.stderr.flush()
    uv_config = uvicorn.Config(
        create_app(server),
        http=protocol,
        log_level=log_level,
        access_log=False,
        lifespan="on",
        loop="asyncio",
        server_header=False,
    )
    # uvicorn re-raises the signal that stopped it once it has shut down gracefully; a no-op handler
    # turns that into a clean exit 0 instead of death by SIGTERM.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: None)
    _server_class()(uv_config, server).run(sockets=[sock])
    return 0


def _server_class() -> Any:
    import uvicorn

    class GracefulServer(uvicorn.Server):
        """uvicorn's server, which on SIGTERM/SIGINT also ends the approval waits in flight at once
        (``gateway.approvals.wake.stop_waiting``): uvicorn's graceful shutdown waits for every open
        request, and an approval wait would otherwise hold it for its whole timeout. Each waiting call
        answers with its fail-closed "still pending" answer; the request stays pending in the store."""

        def __init__(self, config: Any, hook_server: HookServer) -> None:
            super().__init__(config)
            self.hook_server = hook_server

        def handle_exit(self, sig: int, frame: Any) -> None:
            super().handle_exit(sig, frame)
            from gateway.approvals.wake import stop_waiting

            loop = self.hook_server.loop
            if loop is not None and not loop.is_closed():
                loop.call_soon_threadsafe(stop_waiting)

    return GracefulServer
