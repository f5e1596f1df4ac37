"""The ``http`` handler's outbound client: pooled aiohttp sessions whose only resolver is the SSRF guard.

Why aiohttp: its C HTTP parser makes a small delivery cost about a third of the CPU of an
``httpx2``/``httpcore2`` one (measured by ``tests/bench/bench_serve.py``), which is what bounds
``hookgate serve`` with ``http`` handlers. One ``WebhookClient`` lives per ``RunContext`` (so
``hookgate serve`` keeps connections warm); it holds one ``aiohttp.ClientSession`` per SSRF policy
(``allowPrivateNetworks`` off or on), created on first use. A webhook's cookies are never kept (a
``DummyCookieJar``): each delivery stands alone, and the jar costs nothing per request.

SSRF guard (``handlers.netguard``): a session's ``TCPConnector`` resolves names only through
``GuardedResolver``, which resolves once, vets every answer (``netguard.vet``) and hands aiohttp the
vetted literal IPs, which aiohttp then dials (TLS SNI, the certificate check and ``Host`` still use the
name). aiohttp does not call a resolver for a literal IP in the URL, so ``post`` vets literals itself
before sending. The connector's DNS cache (``DNS_TTL`` seconds) only ever holds vetted answers, and
each policy has its own connector, so a permissive answer never serves a strict request. No proxies
(``trust_env=False``), no redirects, no unix sockets (``TCPConnector`` only), no decompression (the
request asks for ``identity``; a compressed answer is refused), at most ``MAX_BODY`` bytes read.

Failures raise ``DeliveryError`` (``retryable`` for connect failures and connect timeouts, the only ones
worth another attempt), ``handlers.netguard.AddressBlocked`` for a refused destination; an answer is an
``Answer`` whatever its status.
"""

from __future__ import annotations

import functools
import socket
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from gateway.errors import HookgateError
from handlers.netguard import AddressBlocked, ResolveError, Resolver, literal_refusal, parse_ip, system_resolver, vet

if TYPE_CHECKING:
    import ssl

MAX_BODY = 1024 * 1024
"""Largest answer body read (bytes); a larger one is refused."""
POOL_LIMIT = 256
"""Most connections open at once per policy (a fan-out of many handlers keeps them all warm)."""
KEEPALIVE = 30.0
"""Seconds an idle connection stays pooled (the receiver may close it sooner)."""
DNS_TTL = 10
"""Seconds a vetted resolution is reused by new connections."""
_NUMERIC = socket.AI_NUMERICHOST | socket.AI_NUMERICSERV


class Answer(NamedTuple):
    """A webhook's answer: HTTP status, body text (UTF-8), ``Retry-After`` header (or None)."""

    status: int
    text: str
    retry_after: str | None


class DeliveryError(HookgateError):
    """A delivery got no usable answer. ``status`` is the HTTP status when one came back."""

    def __init__(self, message: str, *, retryable: bool = False, status: int | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status


class GuardedResolver(AbstractResolver):
    """aiohttp resolver that returns only addresses ``netguard.vet`` allows (resolving once)."""

    def __init__(self, *, allow_private: bool, resolver: Resolver | None = None) -> None:
        self.allow_private = allow_private
        self.resolver: Resolver = resolver or system_resolver

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        try:
            addresses = await vet(host, port, allow_private=self.allow_private, resolver=self.resolver)
        except ResolveError as exc:  # aiohttp reports an OSError here as a connect (DNS) error
            raise OSError(str(exc)) from None
        return [
            ResolveResult(
                hostname=host,
                host=ip,
                port=port,
                proto=0,
                flags=_NUMERIC,
                family=socket.AF_INET6 if ":" in ip else socket.AF_INET,
            )
            for ip in addresses
        ]

    async def close(self) -> None:
        return None


class WebhookClient:
    """Pooled, SSRF-guarded POSTs (see module docstring).

    ``resolver`` replaces the system resolver and ``ssl_context`` the system trust store (tests, private
    CAs); ``user_agent`` is sent on every request.
    """

    def __init__(
        self,
        *,
        resolver: Resolver | None = None,
        ssl_context: ssl.SSLContext | None = None,
        user_agent: str = "hookgate",
    ) -> None:
        self.resolver = resolver
        self.ssl_context = ssl_context
        self.user_agent = user_agent
        self._sessions: dict[bool, aiohttp.ClientSession] = {}

    def _session(self, allow_private: bool) -> aiohttp.ClientSession:
        session = self._sessions.get(allow_private)
        if session is None:
            connector = aiohttp.TCPConnector(
                resolver=GuardedResolver(allow_private=allow_private, resolver=self.resolver),
                limit=POOL_LIMIT,
                keepalive_timeout=KEEPALIVE,
                ttl_dns_cache=DNS_TTL,
            )
            session = aiohttp.ClientSession(
                connector=connector,
                trust_env=False,
                auto_decompress=False,
                cookie_jar=aiohttp.DummyCookieJar(),  # no cookie state carried from one delivery to the next
                headers={"User-Agent": self.user_agent},
            )
            self._sessions[allow_private] = session
        return session

    async def post(
        self,
        url: str,
        body: bytes,
        headers: dict[str, str],
        *,
        connect_timeout: float,
        allow_private: bool,
        read_timeout: float | None = None,
    ) -> Answer:
        """POST ``body`` to ``url``. ``connect_timeout``: seconds to resolve and connect (a new connection;
        a pooled one is reused at once); ``read_timeout``: seconds allowed between reads (None: no limit
        here, the caller bounds the whole delivery, as the dispatcher's ``asyncio.timeout`` does for the
        ``http`` handler). Raises DeliveryError, AddressBlocked."""
        refusal = _url_refusal(url, allow_private)
        if refusal:  # aiohttp skips the resolver for literal IPs: they are vetted here
            raise AddressBlocked(refusal)
        limits = _limits(connect_timeout, read_timeout)
        try:
            async with self._session(allow_private).post(
                url, data=body, headers=headers, allow_redirects=False, timeout=limits, ssl=self.ssl_context or True
            ) as response:
                text = await _read_capped(response)
                status = response.status
                retry_after = response.headers.get("Retry-After") if status == 429 or status >= 500 else None
                return Answer(status, text, retry_after)
        except aiohttp.ClientSSLError as exc:  # a bad certificate does not get better with retries
            raise DeliveryError(f"TLS failed: {_detail(exc)}") from None
        except aiohttp.ClientConnectorError as exc:
            raise DeliveryError(f"cannot connect: {_detail(exc)}", retryable=True) from None
        except aiohttp.ConnectionTimeoutError:
            raise DeliveryError(f"could not connect within {connect_timeout:g} s", retryable=True) from None
        except TimeoutError:
            raise DeliveryError(f"no answer within {read_timeout or 0:g} s (timed out)") from None
        except aiohttp.ServerDisconnectedError:
            raise DeliveryError("the server closed the connection without an answer") from None
        except aiohttp.ClientError as exc:
            raise DeliveryError(f"{type(exc).__name__}: {_detail(exc)}") from None

    async def aclose(self) -> None:
        sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            await session.close()


@functools.lru_cache(maxsize=1024)
def _url_refusal(url: str, allow_private: bool) -> str | None:
    """Why ``url``'s host, when it is a literal IP, may not be contacted (a pure function: cached)."""
    ip = parse_ip(urlsplit(url).hostname or "")
    return None if ip is None else literal_refusal(ip, allow_private=allow_private)


@functools.lru_cache(maxsize=64)
def _limits(connect: float, read: float | None) -> aiohttp.ClientTimeout:
    """The ``ClientTimeout`` for one delivery: no total (the caller's deadline bounds it), ``connect``
    seconds for a new connection, ``read`` seconds between reads (None: none). Immutable, so shared."""
    return aiohttp.ClientTimeout(total=None, connect=connect, sock_read=read)


def _detail(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


async def _read_capped(response: aiohttp.ClientResponse) -> str:
    """The answer body as text, at most ``MAX_BODY`` bytes. Raises DeliveryError past the cap.

    With a ``Content-Length`` and no ``Transfer-Encoding`` (the usual answer) the declared size is
    checked first and the body read in one go (aiohttp's parser reads exactly that many bytes, so
    nothing past the check arrives); an empty body is not read at all. Otherwise (chunked, or until
    EOF) the body is read chunk by chunk and cut off once it passes the cap."""
    status = response.status
    headers = response.headers
    encoding = headers.get("Content-Encoding")
    if encoding is not None and encoding.lower() not in ("identity", ""):
        raise DeliveryError(f"answer is compressed ({encoding}); hookgate asks for identity encoding", status=status)
    declared = headers.get("Content-Length")
    if declared is not None and declared.isdigit() and "Transfer-Encoding" not in headers:
        size = int(declared)
        if size > MAX_BODY:
            raise DeliveryError(f"answer body is {declared} bytes; the limit is {MAX_BODY} bytes", status=status)
        if size == 0:
            return ""
        data = await response.read()
    else:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.content.iter_any():
            size += len(chunk)
            if size > MAX_BODY:
                raise DeliveryError(f"answer body exceeds {MAX_BODY} bytes; cut off", status=status)
            chunks.append(chunk)
        data = b"".join(chunks)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DeliveryError(f"answer body is not valid UTF-8 (byte {exc.start})", status=status) from None
