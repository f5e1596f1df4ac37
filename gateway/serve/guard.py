"""``RequestGuard``: the checks in front of every ``hookgate serve`` route (Host against DNS rebinding,
Origin against cross-site requests, the bearer token, a JSON ``Content-Type`` on every POST), as pure
ASGI middleware (see ``gateway.serve``).

Every POST must say ``application/json`` (or hookgate's own ``application/vnd.hookgate...`` types),
415 otherwise, so that no "simple" cross-site request (``text/plain``, a form) reaches a route; the
only exceptions are the paths given as ``json_exempt`` (Slack's interactivity callback, which Slack
sends as a form and which its signature authenticates).

The console (``/ui`` paths, ``gateway.serve.ui``) follows the same rules with two browser-shaped
differences: the token may come as the session cookie (``ui_cookie_name``; HttpOnly, ``SameSite=Strict``,
set by ``POST /ui/session`` after it checked the token, for ``UI_SESSION_SECONDS``; its value is its
expiry and an HMAC of the token and that expiry, never the token), and an ``Origin`` equal to the
server's own (``http://`` or, through a TLS-terminating proxy, ``https://`` + the checked Host) is
allowed, so the console's own POSTs work while every cross-site request is still refused. ``GET /ui/login``
and its files carry no data and need no token (``POST /ui/session`` checks the token itself); ``GET /ui``
without it redirects to the sign-in form."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import hmac
import ipaddress
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from gateway.events import dumps
from gateway.wire import VENDOR_TYPE_PREFIX

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

UI_COOKIE = "hookgate_ui"
"""The session cookie's name prefix: the name is ``ui_cookie_name(token)``."""


def ui_cookie_name(token: str) -> str:
    """The console session cookie's name for a server with ``token``: ``hookgate_ui_`` and 12 hex digits
    of an HMAC of the token. A browser keeps cookies per host name, not per port, so with one name for
    every server, signing in to a second ``hookgate serve`` on the same machine (another port, another
    token) replaced the first one's cookie and signed you out of it; servers with the same token share
    a cookie, which both take."""
    return UI_COOKIE + "_" + hmac.new(token.encode(), b"hookgate-ui-cookie-name", hashlib.sha256).hexdigest()[:12]


UI_PUBLIC = frozenset({"/ui/login", "/ui/session", "/ui/assets/login.js", "/ui/assets/console.css"})
"""Console paths served without the token (they hold no data; ``/ui/session`` checks the token)."""


UI_SESSION_SECONDS = 12 * 3600
"""How long a console sign-in lasts (the cookie's ``Max-Age``, and the expiry its value carries)."""


def ui_cookie_value(token: str, expires: int | None = None) -> str:
    """The console session cookie's value for ``token``: ``<expires>.<mac>``, ``expires`` in epoch seconds
    (default: ``UI_SESSION_SECONDS`` from now) and ``mac`` HMAC-SHA256(token, purpose and expiry), hex.
    It never holds the token, and a copied cookie stops working when it expires."""
    if expires is None:
        expires = int(time.time()) + UI_SESSION_SECONDS
    mac = hmac.new(token.encode(), b"hookgate-ui-session-v2:%d" % expires, hashlib.sha256).hexdigest()
    return f"{expires}.{mac}"


def ui_cookie_valid(value: bytes, token: str, now: float) -> bool:
    """Whether ``value`` is a console session cookie for ``token`` that has not expired at ``now``."""
    stamp, sep, _mac = value.partition(b".")
    if not sep or not stamp.isdigit() or len(stamp) > 12:
        return False
    expires = int(stamp)
    if not now < expires <= now + UI_SESSION_SECONDS + 60:
        return False
    return hmac.compare_digest(value, ui_cookie_value(token, expires).encode())


def bearer_matches(authorization: bytes, token: bytes) -> bool:
    """Whether an ``Authorization`` header value carries ``token`` as a bearer credential: the scheme is
    case-insensitive (RFC 7235 section 2.1: ``bearer``, ``BEARER``), one or more spaces separate it from the
    credential, which is compared in constant time."""
    scheme, _, credential = authorization.strip().partition(b" ")
    return scheme.lower() == b"bearer" and hmac.compare_digest(credential.lstrip(b" "), token)


JSON_MEDIA = (b"application/json",)
"""The media types a POST body may be declared as, besides hookgate's own (``wire.VENDOR_TYPE_PREFIX``)."""
_VENDOR_MEDIA = VENDOR_TYPE_PREFIX.encode()


def json_media_problem(content_type: bytes | None) -> str | None:
    """None when a ``Content-Type`` value is JSON (``application/json``, parameters and case aside, or a
    hookgate vendor type), else the 415 message: ``Content-Type must be application/json (got ...)``."""
    media = (content_type or b"").partition(b";")[0].strip().lower()
    if media in JSON_MEDIA or media.startswith(_VENDOR_MEDIA):
        return None
    got = f"got {media.decode('latin-1')[:100]!r}" if media else "none was given"
    return f"Content-Type must be application/json ({got})"


def _is_ui(path: str) -> bool:
    return path == "/ui" or path.startswith("/ui/")


def _cookie(header: bytes, name: str) -> bytes | None:
    for part in header.split(b";"):
        key, sep, value = part.strip().partition(b"=")
        if sep and key == name.encode():
            return value
    return None


@functools.lru_cache(maxsize=256)  # checked on every request; a server sees few distinct Host names
def is_loopback_name(host: str) -> bool:
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
    """The name in a ``Host`` header value (port and IPv6 brackets removed, lowercase, no trailing dot).
    An IPv6 address is one only in brackets (RFC 7230 section 5.4: ``[::1]:8787``): an unbracketed value
    with several colons (``::1:8787``, ``::1``) names nothing, and gives ``""``, which no check allows."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:].partition("]")[0]
    if value.count(":") > 1:
        return ""
    name, sep, port = value.rpartition(":")
    return (name if sep and (port.isdigit() or not port) else value).rstrip(".")


class RequestGuard:
    """Pure ASGI middleware in front of every route: the Host, Origin and token checks of the module
    docstring, in that order (421, 403, 401; one JSON error line each).

    allowed_hosts: names the Host header may carry besides loopback addresses (None: no Host check).
    on_reject: called with the reason label (``bad_host``, ``cross_origin``, ``unauthorized``,
    ``unsupported_media_type``). self_authenticated: path prefixes whose routes check credentials
    themselves. json_exempt: exact paths whose POSTs may carry another media type (see module docstring).
    """

    def __init__(
        self,
        app: Any,
        *,
        token: str | None,
        allowed_hosts: frozenset[str] | None,
        on_reject: Callable[[str], None] | None = None,
        self_authenticated: tuple[str, ...] = (),
        json_exempt: frozenset[str] = frozenset(),
    ) -> None:
        self.app = app
        self._json_exempt = json_exempt
        self._self_authenticated = self_authenticated  # path prefixes whose routes check credentials themselves
        self._expected = token.encode() if token else None
        self._token = token
        self._cookie_name = ui_cookie_name(token) if token else UI_COOKIE
        self._allowed_hosts = allowed_hosts
        self._good_hosts: set[bytes] = set()  # Host header values already found allowed
        self._on_reject = on_reject

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path = str(scope.get("path", ""))
            own_check = bool(self._self_authenticated) and path.startswith(self._self_authenticated)
            problem = self._problem(scope["headers"], path, scope.get("method", "GET"), check_token=not own_check)
            if problem is not None:
                if problem is _UNAUTHORIZED and _presents_token(scope["headers"]) and not await WRONG_TOKENS.pause():
                    problem = _TOO_MANY
                status, reason, message, extra = problem
                if self._on_reject is not None:
                    self._on_reject(reason)
                body = dumps({"error": message}).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": status,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            *extra,
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)

    def _problem(
        self, headers: list[tuple[bytes, bytes]], path: str = "", method: str = "GET", *, check_token: bool = True
    ) -> tuple[int, str, str, list[tuple[bytes, bytes]]] | None:
        host = origin = content_type = None
        authorization = cookies = b""
        for key, value in headers:
            if key == b"host":
                host = value
            elif key == b"origin":
                origin = value
            elif key == b"authorization":
                authorization = value
            elif key == b"cookie":
                cookies = value
            elif key == b"content-type" and content_type is None:  # the first one, as the routes read it
                content_type = value
        ui = _is_ui(path)
        if self._allowed_hosts is not None and host is not None and host not in self._good_hosts:
            sent = host.decode("latin-1")
            name = host_name(sent)
            if is_loopback_name(name) or name in self._allowed_hosts:
                if len(self._good_hosts) < 256:  # a server sees few distinct Host values
                    self._good_hosts.add(host)
            else:
                return (
                    421,
                    "bad_host",
                    f"Host {sent.strip()[:100]!r} is not this server's name (DNS rebinding guard): "
                    "address it as 127.0.0.1, localhost or [::1], or allow the name with --allow-host",
                    [],
                )
        if origin is not None and not (ui and host is not None and _own_origin(origin, host)):
            return (
                403,
                "cross_origin",
                f"cross-origin request refused (Origin: {origin.decode('latin-1')[:100]}): "
                "hook clients send no Origin header",
                [],
            )
        if check_token and self._expected is not None and not bearer_matches(authorization, self._expected):
            refused = self._ui_without_token(path, method, cookies) if ui else _UNAUTHORIZED
            if refused is not None:
                return refused
        if method == "POST" and path not in self._json_exempt:
            problem = json_media_problem(content_type)
            if problem is not None:
                return 415, "unsupported_media_type", problem, []
        return None

    def _ui_without_token(
        self, path: str, method: str, cookies: bytes
    ) -> tuple[int, str, str, list[tuple[bytes, bytes]]] | None:
        """A console request without the bearer token: None when it may go on (a public path, a valid
        session cookie), the sign-in redirect for the page itself, else 401."""
        session = _cookie(cookies, self._cookie_name)
        assert self._token is not None
        if path in UI_PUBLIC or (session is not None and ui_cookie_valid(session, self._token, time.time())):
            return None
        if method == "GET" and path in ("/ui", "/ui/"):
            return (303, "unauthorized", "sign in first: /ui/login", [(b"location", b"/ui/login")])
        return _UNAUTHORIZED


def _own_origin(origin: bytes, host: bytes) -> bool:
    """Whether a console request's ``Origin`` is the server's own: ``http://`` or ``https://`` and the
    checked Host, port included (``https://``: the page came through a TLS-terminating proxy that passes
    the Host on, ``--allow-host``; a page elsewhere, another port included, has another origin)."""
    origin, host = origin.lower(), host.lower()
    return origin in (b"http://" + host, b"https://" + host)


def _presents_token(headers: list[tuple[bytes, bytes]]) -> bool:
    """Whether a request carries a bearer credential (a guess, when it is wrong)."""
    return any(key == b"authorization" and value.strip() for key, value in headers)


class WrongTokens:
    """Paces guesses of the serve token: every request that presents a wrong one (a bearer token, the
    console's sign-in) waits ``PAUSE`` seconds before its 401, one at a time for the whole server, so
    guesses cannot go faster than 1 / ``PAUSE`` a second however many connections make them (a local
    process, the agent's own shell included, could otherwise try a dictionary of tokens in minutes).
    Requests with the right token never wait. Past ``MAX_WAITING`` waiting guesses, the next is refused
    at once with 429, so a flood holds no more connections than that."""

    PAUSE = 0.5
    MAX_WAITING = 32

    def __init__(self) -> None:
        self._lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        self._waiting = 0

    async def pause(self) -> bool:
        """Wait this guess's turn; False when too many wait already (answer 429 instead)."""
        if self._waiting >= self.MAX_WAITING:
            return False
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock[0] is not loop:  # a lock serves one loop (a test runs several)
            self._lock = (loop, asyncio.Lock())
        lock = self._lock[1]
        self._waiting += 1
        try:
            async with lock:
                await asyncio.sleep(self.PAUSE)
        finally:
            self._waiting -= 1
        return True


WRONG_TOKENS = WrongTokens()
"""The server's one pacer (a process serves one token)."""

_TOO_MANY: tuple[int, str, str, list[tuple[bytes, bytes]]] = (
    429,
    "unauthorized",
    "too many wrong tokens at once; try again later",
    [(b"retry-after", b"5")],
)

_UNAUTHORIZED: tuple[int, str, str, list[tuple[bytes, bytes]]] = (
    401,
    "unauthorized",
    "missing or wrong bearer token (see HOOKGATE_TOKEN)",
    [(b"www-authenticate", b"Bearer")],
)
