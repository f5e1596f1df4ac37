"""The ``httpx2`` transport of the ``http`` handler: connections go through the SSRF guard.

``GuardedBackend`` is an ``httpcore2`` network backend, so the only place a connection is opened is
its ``connect_tcp``: it resolves the name once, vets every answer (``handlers.netguard.vet``) and dials
the vetted literal IP. Nothing re-resolves the name afterwards, so DNS rebinding cannot slip a private
address in between the check and the connect; TLS SNI, certificate checks and the ``Host`` header still
use the name (httpcore passes the URL host to ``start_tls``).

Streams are ``AsyncioStream`` (asyncio streams with ``asyncio.timeout``), not httpcore's anyio
streams, which cost about a quarter more CPU per delivery. ``GuardedTransport`` routes each request to
a connection pool with the right policy (request extension ``ALLOW_PRIVATE``), maps ``httpcore2``
errors to the ``httpx2`` ones of the same name and never uses proxies. A refusal surfaces as
``handlers.netguard.AddressBlocked`` (never retried); a name that does not resolve as
``httpx2.ConnectError``.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

import httpcore2
import httpx2

from handlers.netguard import AddressBlocked, ResolveError, Resolver, system_resolver, vet

ALLOW_PRIVATE = "hookgate.allow_private_networks"
"""Request extension (bool) that selects the permissive pool (``allowPrivateNetworks: true``)."""


class AsyncioStream(httpcore2.AsyncNetworkStream):
    """An ``httpcore2`` network stream over asyncio streams.

    httpcore's own asyncio path goes through anyio, whose cancel scopes cost about a quarter of the
    CPU of a small delivery; plain ``asyncio.timeout`` does the same job here. Errors map to httpcore2's
    (``ReadTimeout``, ``ReadError``, ``WriteTimeout``, ``WriteError``, ``ConnectTimeout``, ``ConnectError``).
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            async with asyncio.timeout(timeout):
                return await self._reader.read(max_bytes)
        except TimeoutError:
            raise httpcore2.ReadTimeout(f"no data within {timeout:g} s") from None
        except OSError as exc:
            raise httpcore2.ReadError(str(exc) or type(exc).__name__) from None

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        try:
            async with asyncio.timeout(timeout):
                self._writer.write(buffer)
                await self._writer.drain()
        except TimeoutError:
            raise httpcore2.WriteTimeout(f"could not send within {timeout:g} s") from None
        except OSError as exc:
            raise httpcore2.WriteError(str(exc) or type(exc).__name__) from None

    async def aclose(self) -> None:
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore2.AsyncNetworkStream:
        try:
            async with asyncio.timeout(timeout):
                await self._writer.start_tls(ssl_context, server_hostname=server_hostname)
        except TimeoutError:
            await self.aclose()
            raise httpcore2.ConnectTimeout(f"TLS handshake took longer than {timeout:g} s") from None
        except (OSError, ssl.SSLError) as exc:
            await self.aclose()
            raise httpcore2.ConnectError(str(exc) or type(exc).__name__) from None
        return self

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":  # an idle keep-alive connection the server closed (or broke) is stale
            return self._reader.at_eof() or self._reader.exception() is not None or self._writer.is_closing()
        key = {"ssl_object": "ssl_object", "client_addr": "sockname", "server_addr": "peername",
               "socket": "socket"}.get(info)
        return self._writer.get_extra_info(key) if key else None


class GuardedBackend(httpcore2.AsyncNetworkBackend):
    """An ``httpcore2`` network backend that resolves once, vets every answer, dials the vetted IP."""

    def __init__(self, *, allow_private: bool = False, resolver: Resolver | None = None) -> None:
        self.allow_private = allow_private
        self.resolver: Resolver = resolver or system_resolver

    async def vet(self, host: str, port: int, timeout: float | None = None) -> list[str]:
        """The addresses ``host`` may be reached at. Raises AddressBlocked, httpcore2.ConnectError."""
        try:
            return await vet(host, port, allow_private=self.allow_private, resolver=self.resolver, timeout=timeout)
        except ResolveError as exc:
            raise httpcore2.ConnectError(str(exc)) from None

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None) -> httpcore2.AsyncNetworkStream:
        last: Exception | None = None
        for address in await self.vet(host, port, timeout):
            try:
                async with asyncio.timeout(timeout):
                    reader, writer = await asyncio.open_connection(
                        address, port, local_addr=(local_address, 0) if local_address else None)
            except TimeoutError:
                last = httpcore2.ConnectTimeout(f"connecting to {address}:{port} took longer than {timeout:g} s")
                continue
            except OSError as exc:
                last = httpcore2.ConnectError(f"cannot connect to {address}:{port}: {exc.strerror or exc}")
                continue
            sock = writer.get_extra_info("socket")
            for option in socket_options or ():
                sock.setsockopt(*option)
            return AsyncioStream(reader, writer)
        assert last is not None
        raise last

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[Any] | None = None) -> httpcore2.AsyncNetworkStream:
        raise AddressBlocked("unix sockets are not reachable from http handlers")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


_ERRORS: tuple[tuple[type[Exception], type[httpx2.TransportError]], ...] = tuple(
    (getattr(httpcore2, name), getattr(httpx2, name)) for name in (
        "ConnectTimeout", "ReadTimeout", "WriteTimeout", "PoolTimeout", "TimeoutException", "ConnectError",
        "ReadError", "WriteError", "NetworkError", "RemoteProtocolError", "LocalProtocolError", "ProxyError",
        "UnsupportedProtocol", "ProtocolError"))


@contextlib.contextmanager
def _mapped_errors(request: httpx2.Request) -> Iterator[None]:
    """Map httpcore2 exceptions to the httpx2 ones of the same name (most specific first)."""
    try:
        yield
    except Exception as exc:
        for core, mapped in _ERRORS:
            if isinstance(exc, core):
                raise mapped(str(exc) or type(exc).__name__, request=request) from exc
        raise


class _ResponseStream(httpx2.AsyncByteStream):
    def __init__(self, stream: Any, request: httpx2.Request) -> None:
        self._stream = stream
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _mapped_errors(self._request):
            async for chunk in self._stream:
                yield chunk

    async def aclose(self) -> None:
        if hasattr(self._stream, "aclose"):
            with _mapped_errors(self._request):
                await self._stream.aclose()


class GuardedTransport(httpx2.AsyncBaseTransport):
    """An ``httpx2`` transport over ``GuardedBackend`` pools (see module docstring).

    One pool per (policy, TLS) pair, created on first use; the TLS context (the system trust store,
    unless ``ssl_context`` is given) is built only when an ``https`` URL is first called. No proxies
    (``HTTP(S)_PROXY`` cannot redirect webhooks).
    """

    def __init__(self, *, resolver: Resolver | None = None, limits: httpx2.Limits | None = None,
                 ssl_context: ssl.SSLContext | None = None) -> None:
        self.resolver = resolver
        self.ssl_context = ssl_context
        self.limits = limits or httpx2.Limits(max_connections=100, max_keepalive_connections=20,
                                              keepalive_expiry=30.0)
        self._pools: dict[tuple[bool, bool], httpcore2.AsyncConnectionPool] = {}

    def _pool(self, allow_private: bool, tls: bool) -> httpcore2.AsyncConnectionPool:
        key = (allow_private, tls)
        pool = self._pools.get(key)
        if pool is None:
            pool = httpcore2.AsyncConnectionPool(
                ssl_context=(self.ssl_context or httpx2.create_ssl_context(trust_env=False)) if tls else None,
                max_connections=self.limits.max_connections,
                max_keepalive_connections=self.limits.max_keepalive_connections,
                keepalive_expiry=self.limits.keepalive_expiry,
                network_backend=GuardedBackend(allow_private=allow_private, resolver=self.resolver))
            self._pools[key] = pool
        return pool

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        assert isinstance(request.stream, httpx2.AsyncByteStream)
        pool = self._pool(bool(request.extensions.get(ALLOW_PRIVATE)), request.url.scheme == "https")
        core_request = httpcore2.Request(
            method=request.method,
            url=httpcore2.URL(scheme=request.url.raw_scheme, host=request.url.raw_host, port=request.url.port,
                              target=request.url.raw_path),
            headers=request.headers.raw, content=request.stream, extensions=request.extensions)
        with _mapped_errors(request):
            response = await pool.handle_async_request(core_request)
        return httpx2.Response(status_code=response.status, headers=response.headers,
                               stream=_ResponseStream(response.stream, request), extensions=response.extensions)

    async def aclose(self) -> None:
        pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            await pool.aclose()
