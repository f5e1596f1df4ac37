"""The thin client: forward one hook event to a running ``hookgate serve`` and print its answer.

``hookgate run --server URL`` (or ``HOOKGATE_SERVER=URL``) lands here before anything heavy is
imported. This module imports only the standard library (``_socket``, ``os``, ``sys``; ``json`` only to
read an error, ``ssl`` only for an ``https`` URL), so a hook call costs little more than the
interpreter start. It uses ``_socket``, the C module behind ``socket``: ``socket`` itself imports
``enum``, ``selectors`` and ``collections``, about 6 ms of a 15 ms call. It also runs as a script
with no package on the path: ``python3 -I -S /path/to/gateway/client.py URL [DIALECT]``.

Protocol (see ``gateway.server``): ``POST {URL}/hooks/{dialect}`` with the event bytes as read from
stdin, ``Accept: application/vnd.hookgate.rendered``, and ``Authorization: Bearer $HOOKGATE_TOKEN``
when set. ``200`` answers with headers ``hookgate-exit-code`` and ``hookgate-stdout-length`` (bytes)
and a body of stdout then stderr (UTF-8), printed and returned as they are (the compact form of the
JSON envelope, so the client needs no JSON decoder). ``400`` and ``413`` (a malformed or oversized
event, ``{"error": ...}``) become ``hookgate: <error>`` on stderr with exit 1, as an in-process run
would. Anything else (refused or reset connection, timeout, another status, an answer that is not in
that form) raises ``ServerUnavailable``; the caller then falls back to in-process dispatch or fails
open/closed (``--on-server-down``).

Environment: ``HOOKGATE_SERVER`` (URL), ``HOOKGATE_TOKEN``, ``HOOKGATE_SERVER_TIMEOUT`` (seconds to
wait for the answer, default 600: Claude Code's own hook timeout).
"""

from __future__ import annotations

import _socket
import os
import sys

try:
    from gateway.errors import ServerUnavailable
except ImportError:  # run as a standalone script (python -I -S client.py): the package is not importable
    class ServerUnavailable(Exception):  # type: ignore[no-redef]
        """``hookgate serve`` could not be reached (standalone copy of gateway.errors.ServerUnavailable)."""

MAX_EVENT_BYTES = 8 * 1024 * 1024
"""Largest event forwarded (bytes); the same cap as ``gateway.events.MAX_EVENT_BYTES``."""
CONNECT_TIMEOUT = 2.0
"""Seconds to open the connection (the server is normally on loopback: it answers or refuses at once)."""
DEFAULT_TIMEOUT = 600.0
MAX_ANSWER = 64 * 1024 * 1024
RENDERED = "application/vnd.hookgate.rendered"
"""Media type of the compact answer (see module docstring)."""


def _split_url(url: str) -> tuple[str, str, int, str]:
    """``(scheme, host, port, base_path)`` of an ``http(s)://host[:port][/path]`` URL. Raises ServerUnavailable."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in ("http", "https"):
        raise ServerUnavailable(f"server URL must start with http:// or https://, got {url!r}")
    authority, _, path = rest.partition("/")
    host, port = authority, 443 if scheme == "https" else 80
    if authority.startswith("["):
        host, _, tail = authority[1:].partition("]")
        if tail.startswith(":"):
            port = int(tail[1:]) if tail[1:].isdigit() else -1
    elif ":" in authority:
        host, _, port_text = authority.rpartition(":")
        port = int(port_text) if port_text.isdigit() else -1
    if not host or not 0 < port < 65536:
        raise ServerUnavailable(f"server URL {url!r} has no valid host and port")
    return scheme, host, port, "/" + path.strip("/") if path.strip("/") else ""


def _connect(host: str, port: int, timeout: float) -> _socket.socket:
    """A connected TCP socket (each address ``getaddrinfo`` gives, in order). Raises OSError."""
    # An ASCII host goes in as bytes: a str host makes getaddrinfo import the idna codec (~1 ms).
    target = host.encode() if host.isascii() else host
    last: OSError | None = None
    for family, kind, proto, _, address in _socket.getaddrinfo(target, port, 0, _socket.SOCK_STREAM):
        sock = _socket.socket(family, kind, proto)
        sock.settimeout(timeout)
        try:
            sock.connect(address)
            return sock
        except OSError as exc:
            sock.close()
            last = exc
    raise last or OSError(f"no address for {host}")


def _exchange(scheme: str, host: str, port: int, request: bytes, timeout: float) -> bytes:
    """Send one request on a fresh connection and read the response until the server closes it."""
    try:
        sock: _socket.socket = _connect(host, port, min(CONNECT_TIMEOUT, timeout))
    except OSError as exc:
        raise ServerUnavailable(f"cannot connect to {host}:{port}: {exc.strerror or exc}") from None
    try:
        if scheme == "https":
            import socket
            import ssl

            plain = socket.socket(fileno=sock.detach())
            sock = ssl.create_default_context().wrap_socket(plain, server_hostname=host)
        sock.settimeout(timeout)
        sock.sendall(request)
        chunks: list[bytes] = []
        size = 0
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_ANSWER:
                raise ServerUnavailable("the server's answer is too large")
        return b"".join(chunks)
    except TimeoutError:
        raise ServerUnavailable(f"no answer from {host}:{port} within {timeout:g} s") from None
    except OSError as exc:
        raise ServerUnavailable(f"connection to {host}:{port} failed: {exc.strerror or exc}") from None
    finally:
        sock.close()


def _parse_response(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep:
        raise ServerUnavailable("the server closed the connection without a complete answer")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise ServerUnavailable(f"not an HTTP answer: {lines[0][:80]!r}")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = _dechunk(body)
    elif headers.get("content-length", "").isdigit():
        length = int(headers["content-length"])
        if len(body) < length:
            raise ServerUnavailable("the server's answer was cut short")
        body = body[:length]
    return int(parts[1]), headers, body


def _dechunk(data: bytes) -> bytes:
    out = bytearray()
    while True:
        line, sep, data = data.partition(b"\r\n")
        try:
            size = int(line.split(b";", 1)[0].strip(), 16) if sep else -1
        except ValueError:
            size = -1
        if size < 0:
            raise ServerUnavailable("the server's chunked answer is malformed")
        if size == 0:
            return bytes(out)
        out += data[:size]
        data = data[size + 2:]


def forward(server: str, event: bytes, *, dialect: str = "auto", token: str | None = None,
            timeout: float | None = None) -> tuple[int, str, str]:
    """POST ``event`` to ``{server}/hooks/{dialect}``; return ``(exit_code, stdout, stderr)`` to print.

    Raises ServerUnavailable when no valid answer comes back (see module docstring).
    """
    if timeout is None:
        try:
            timeout = float(os.environ.get("HOOKGATE_SERVER_TIMEOUT") or DEFAULT_TIMEOUT)
        except ValueError:
            timeout = DEFAULT_TIMEOUT
    scheme, host, port, base = _split_url(server)
    authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    head = (f"POST {base}/hooks/{dialect} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: hookgate-client\r\n"
            f"Content-Type: application/json\r\nAccept: {RENDERED}\r\nContent-Length: {len(event)}\r\n"
            "Connection: close\r\n")
    if token:
        head += f"Authorization: Bearer {token}\r\n"
    status, headers, body = _parse_response(_exchange(scheme, host, port,
                                                      head.encode("latin-1") + b"\r\n" + event, timeout))
    if status != 200:
        error = _error_of(body)
        if status in (400, 413) and error:
            return 1, "", f"hookgate: {error}\n"
        raise ServerUnavailable(f"the server answered HTTP {status}" + (f": {error}" if error else ""))
    code, length = headers.get("hookgate-exit-code", ""), headers.get("hookgate-stdout-length", "")
    if not (code.lstrip("-").isdigit() and length.isdigit() and int(length) <= len(body)):
        raise ServerUnavailable("the server's answer is not a hookgate answer")
    cut = int(length)
    try:
        return int(code), body[:cut].decode("utf-8"), body[cut:].decode("utf-8")
    except UnicodeDecodeError:
        raise ServerUnavailable("the server's answer is not UTF-8") from None


def _error_of(body: bytes) -> str | None:
    """The one-line ``error`` of a JSON error answer (json is imported only on this rare path)."""
    import json

    try:
        answer = json.loads(body)
    except ValueError:
        return None
    error = answer.get("error") if isinstance(answer, dict) else None
    return error if isinstance(error, str) else None


def read_event() -> bytes:
    """Stdin, at most ``MAX_EVENT_BYTES + 1`` bytes (the server reports an oversized event)."""
    return sys.stdin.buffer.read(MAX_EVENT_BYTES + 1)


def emit(code: int, out: str, err: str) -> int:
    if out:
        sys.stdout.write(out)
        sys.stdout.flush()
    if err:
        sys.stderr.write(err)
    return code


def main(argv: list[str] | None = None) -> int:
    """Standalone use: ``client.py [URL] [DIALECT]`` (URL default ``$HOOKGATE_SERVER``).

    With no package to fall back to, an unreachable server fails per ``HOOKGATE_ON_SERVER_DOWN``
    (``open``, the default here: exit 0; ``closed``: exit 2 with the reason on stderr).
    """
    args = sys.argv[1:] if argv is None else argv
    server = args[0] if args else os.environ.get("HOOKGATE_SERVER", "")
    dialect = args[1] if len(args) > 1 else "auto"
    try:
        return emit(*forward(server, read_event(), dialect=dialect, token=os.environ.get("HOOKGATE_TOKEN")))
    except ServerUnavailable as exc:
        if os.environ.get("HOOKGATE_ON_SERVER_DOWN") == "closed":
            return emit(2, "", f"hookgate: server unavailable ({exc}); failing closed\n")
        return emit(0, "", f"hookgate: server unavailable ({exc}); failing open\n")


if __name__ == "__main__":
    raise SystemExit(main())
