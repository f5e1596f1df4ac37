"""The thin client: forward one hook event to a running ``hookgate serve`` and print its answer.

``hookgate run --server URL`` (or ``HOOKGATE_SERVER=URL``) lands here before anything heavy is
imported. This module imports only the standard library (``_socket``, ``os``, ``sys``; ``json`` only to
read an error or the event's name on the failure path, ``ssl`` only for an ``https`` URL), so a hook
call costs little more than the interpreter start. It uses ``_socket``, the C module behind ``socket``:
``socket`` itself imports ``enum``, ``selectors`` and ``collections``, about 6 ms of a 15 ms call. It
also runs as a script with no package on the path: ``python3 -I -S /path/to/gateway/client.py URL [DIALECT]``.

Protocol (see ``gateway.serve``): ``POST {URL}/hooks/{dialect}`` with the event bytes as read from
stdin, ``Content-Type: application/json``, ``Accept: application/vnd.hookgate.rendered``,
``Authorization: Bearer $HOOKGATE_TOKEN`` when set, and ``X-Hookgate-Project-Dir: $CLAUDE_PROJECT_DIR``
(percent-encoded UTF-8) when that is set to an absolute path, so ``command`` handlers see the caller's
project folder, not the server's. ``200`` answers with headers ``hookgate-exit-code`` and
``hookgate-stdout-length`` (bytes) and a body of stdout then stderr (UTF-8), printed and returned as
they are (the compact form of the JSON envelope, so the client needs no JSON decoder). ``400`` (a
malformed event, ``{"error": ...}``, marked ``hookgate-exit-code: 1``) becomes ``hookgate: <error>`` on
stderr with exit 1, as an in-process run would; a 400 or 413 without the mark is not hookgate serve's.
An event over the size limit is never forwarded cut short: ``hookgate run`` judges it in-process (a
deny), the standalone script denies it (exit 2).

When no valid answer comes back, ``forward`` raises ``ServerUnavailable``:

- ``ServerNotRunning``: nothing listens at the URL (connection refused);
- ``ServerMisconfigured``: the URL is invalid, or the server refused the request as misconfigured
  (401 wrong or missing token, 403, 404/405 wrong path, 415, 421 wrong host name), or what answered
  is not ``hookgate serve``;
- ``ServerUnavailable`` itself: anything else (reset connection, timeout, a 5xx, a cut-short answer).

``on_server_down`` then applies ``--on-server-down`` (``HOOKGATE_ON_SERVER_DOWN``): ``fallback``
(decide in-process; one line on stderr says why, except when the server is simply not running),
``open`` (exit 0) or ``closed``: exit 2 on events where a block holds an action back (PreToolUse,
PermissionRequest, UserPromptSubmit, ...: the rule of ``closed_blocks``), exit 1 on the others (Stop,
PostToolUse, SessionStart, ...), where a block would only make the agent loop or means nothing.
Every case prints one line: ``hookgate: server URL unavailable|misconfigured: <why>; <what now>``.

Environment: ``HOOKGATE_SERVER`` (URL), ``HOOKGATE_TOKEN``, ``HOOKGATE_SERVER_TIMEOUT`` (seconds to
wait for the answer, default 600: Claude Code's own hook timeout; a value that is not a number > 0
(or is over ``MAX_TIMEOUT``) counts as the default), ``CLAUDE_PROJECT_DIR`` (forwarded).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import _socket

try:
    from gateway.errors import ServerMisconfigured, ServerNotRunning, ServerUnavailable
    from gateway.wire import (
        EXIT_CODE_HEADER,
        MAX_EVENT_BYTES,
        PROJECT_DIR_HEADER,
        RENDERED,
        STDOUT_LENGTH_HEADER,
    )
except ImportError:  # a standalone script (python -I -S client.py): the two import-free modules beside it
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from errors import ServerMisconfigured, ServerNotRunning, ServerUnavailable  # type: ignore[no-redef]
    from wire import (  # type: ignore[no-redef]
        EXIT_CODE_HEADER,
        MAX_EVENT_BYTES,
        PROJECT_DIR_HEADER,
        RENDERED,
        STDOUT_LENGTH_HEADER,
    )

    del sys.path[0]

CONNECT_TIMEOUT = 2.0
"""Seconds to open the connection (the server is normally on loopback: it answers or refuses at once)."""
DEFAULT_TIMEOUT = 600.0
MAX_ANSWER = 64 * 1024 * 1024
MAX_TIMEOUT = 1e8
"""The longest ``HOOKGATE_SERVER_TIMEOUT`` taken (seconds: about three years; a socket takes no more)."""


def env_timeout() -> float:
    """``HOOKGATE_SERVER_TIMEOUT``: seconds, when it is a number > 0 and at most ``MAX_TIMEOUT``; else
    ``DEFAULT_TIMEOUT`` (a typo or a ``-1`` never turns the wait into an error, which a host takes as
    non-blocking: the call would go ahead)."""
    try:
        value = float(os.environ.get("HOOKGATE_SERVER_TIMEOUT") or DEFAULT_TIMEOUT)
    except ValueError:
        return DEFAULT_TIMEOUT
    return value if 0 < value <= MAX_TIMEOUT else DEFAULT_TIMEOUT


_BASE_URL_HINT = "the URL must be the server's base URL, e.g. http://127.0.0.1:8787"
_MISCONFIGURED = {
    401: ("unauthorized", ""),  # the message says whether a token was sent
    403: ("forbidden", ""),
    404: ("not found", _BASE_URL_HINT),
    405: ("method not allowed", _BASE_URL_HINT),
    415: ("unsupported media type", ""),
    421: ("misdirected request", "address a server on loopback as 127.0.0.1, localhost or [::1]"),
}
"""Statuses that mean the client or the server is misconfigured (not that the server is down):
status -> (reason phrase, hint shown when the server's answer carries no ``error``)."""

# --on-server-down closed without the package (standalone script): the events on which a block holds
# nothing back, so ``closed`` exits 1 there instead of 2. Canonical names (Claude Code, Codex), then
# Kiro's and Gemini's own. A copy of ``closed_blocks`` over gateway.events.EVENTS (not CONTINUE_EVENTS
# alone: SessionStart, Notification... hold nothing back either) and the dialect tables;
# tests/integration/test_thin_client.py checks that the two agree.
_CLOSED_PASSES = frozenset(
    {
        "SessionStart",
        "Setup",
        "InstructionsLoaded",
        "MessageDisplay",
        "PermissionDenied",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "Notification",
        "SubagentStart",
        "SubagentStop",
        "TaskCompleted",
        "Stop",
        "StopFailure",
        "TeammateIdle",
        "CwdChanged",
        "DirectoryAdded",
        "FileChanged",
        "WorktreeRemove",
        "PostCompact",
        "SessionEnd",
        "agentSpawn",
        "postToolUse",
        "stop",  # Kiro
        "AfterTool",
        "AfterAgent",
        "BeforeModel",
        "AfterModel",
        "BeforeToolSelection",  # Gemini
    }
)


def _split_url(url: str) -> tuple[str, str, int, str]:
    """``(scheme, host, port, base_path)`` of an ``http(s)://host[:port][/path]`` URL. Raises ServerMisconfigured."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in ("http", "https"):
        raise ServerMisconfigured(f"the server URL must start with http:// or https://, got {shown_url(url)!r}")
    authority, _, path = rest.partition("/")
    host, port = authority, 443 if scheme == "https" else 80
    if authority.startswith("["):
        host, closed, tail = authority[1:].partition("]")
        if not closed or (tail and not tail.startswith(":")):  # [::1 or [::1]x: not a host and port
            host = ""
        elif tail:
            port = int(tail[1:]) if _digits(tail[1:]) else -1
    elif ":" in authority:
        host, _, port_text = authority.rpartition(":")
        port = int(port_text) if _digits(port_text) else -1
    if not host or "@" in host or not 0 < port < 65536:
        raise ServerMisconfigured(f"the server URL {shown_url(url)!r} has no valid host and port")
    return scheme, host, port, "/" + path.strip("/") if path.strip("/") else ""


def shown_url(url: str) -> str:
    """``url`` fit for a message: any ``user:password@`` is masked (stderr may reach the agent)."""
    scheme, sep, rest = url.partition("://")
    authority, slash, path = rest.partition("/")
    if sep and "@" in authority:
        return f"{scheme}://***@{authority.rpartition('@')[2]}{slash}{path}"
    return url


def _connect(host: str, port: int, timeout: float) -> _socket.socket:
    """A connected TCP socket (each address ``getaddrinfo`` gives, in order). Raises OSError."""
    import _socket

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
    """Send one request on a fresh connection and read the response until the server closes it, all
    within ``timeout`` seconds (a total: a server that trickles its answer a byte at a time is given up
    at the deadline, not ``timeout`` after its last byte). Raises ServerUnavailable and its kinds."""
    import _socket  # here, not at the top: an in-process ``hookgate run`` uses only emit/read_event
    import time

    deadline = time.monotonic() + timeout

    try:
        sock: _socket.socket = _connect(host, port, min(CONNECT_TIMEOUT, timeout))
    except ConnectionRefusedError as exc:
        raise ServerNotRunning(f"cannot connect to {host}:{port}: {exc.strerror or exc}") from None
    except _socket.gaierror as exc:
        raise ServerMisconfigured(f"cannot resolve {host}: {exc.strerror or exc}") from None
    except OSError as exc:
        raise ServerUnavailable(f"cannot connect to {host}:{port}: {exc.strerror or exc}") from None
    try:
        if scheme == "https":
            import socket
            import ssl

            plain = socket.socket(fileno=sock.detach())
            sock = ssl.create_default_context().wrap_socket(plain, server_hostname=host)
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        sock.sendall(request)  # (sendall's timeout is for the whole request)
        chunks: list[bytes] = []
        size = 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            sock.settimeout(left)
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


def _digits(text: str) -> bool:
    """True for ASCII digits only (``str.isdigit`` also takes ``²``, which ``int`` refuses)."""
    return text.isascii() and text.isdigit()


def _parse_response(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep:
        raise ServerUnavailable("the server closed the connection without a complete answer")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not _digits(parts[1]):
        raise ServerMisconfigured(f"not an HTTP answer: {lines[0][:80]!r}")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = _dechunk(body)
    elif "content-length" in headers:
        if not _digits(headers["content-length"]):
            raise ServerMisconfigured(f"not an HTTP answer: Content-Length {headers['content-length'][:20]!r}")
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
        data = data[size + 2 :]


def header_value(text: str) -> str:
    """``text`` percent-encoded as UTF-8 wherever it is not printable ASCII (``%`` included), so any path
    fits in a header line and no CR/LF can end it. ``urllib.parse.unquote(v, errors="surrogateescape")``
    reverses it; an undecodable byte from the environment (a surrogate escape) goes through as itself."""
    if text.isascii() and text.isprintable() and "%" not in text:
        return text
    return "".join(
        c
        if c.isascii() and c.isprintable() and c != "%"
        else "".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogateescape"))
        for c in text
    )


def forward(
    server: str,
    event: bytes,
    *,
    dialect: str = "auto",
    token: str | None = None,
    timeout: float | None = None,
    project_dir: str | None = None,
) -> tuple[int, str, str]:
    """POST ``event`` to ``{server}/hooks/{dialect}``; return ``(exit_code, stdout, stderr)`` to print.

    project_dir: the caller's ``CLAUDE_PROJECT_DIR``, sent when it is an absolute path. Raises
    ServerUnavailable (or its subclasses ServerNotRunning, ServerMisconfigured) when no valid answer
    comes back (see module docstring).
    """
    if timeout is None:
        timeout = env_timeout()
    scheme, host, port, base = _split_url(server)
    authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    head = (
        f"POST {base}/hooks/{dialect} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: hookgate-client\r\n"
        f"Content-Type: application/json\r\nAccept: {RENDERED}\r\nContent-Length: {len(event)}\r\n"
        "Connection: close\r\n"
    )
    if token:
        head += f"Authorization: Bearer {token}\r\n"
    if project_dir and os.path.isabs(project_dir):
        head += f"{PROJECT_DIR_HEADER}: {header_value(project_dir)}\r\n"
    try:
        request = head.encode("latin-1") + b"\r\n" + event
    except UnicodeEncodeError:  # a token or host that is not Latin-1 can't go in a header
        raise ServerMisconfigured("HOOKGATE_TOKEN or the server URL holds characters a header cannot carry") from None
    raw = _exchange(scheme, host, port, request, timeout)
    try:
        return _answer(raw, token)
    except ServerUnavailable:
        raise
    except Exception as exc:  # whatever holds the port answered something no check above foresaw
        raise ServerMisconfigured(f"what answered is not hookgate serve ({type(exc).__name__}: {exc})") from None


def _answer(raw: bytes, token: str | None) -> tuple[int, str, str]:
    """``forward``'s result from the server's raw answer. Raises ServerUnavailable (and subclasses)."""
    status, headers, body = _parse_response(raw)
    if status != 200:
        error = _error_of(body)
        if status == 400 and error and headers.get(EXIT_CODE_HEADER) == "1":  # hookgate serve's: a malformed event
            return 1, "", f"hookgate: {error}\n"
        if status in (400, 413):  # not marked as hookgate's: whatever holds the port refused the event
            raise ServerMisconfigured(
                f"what answered is not hookgate serve (HTTP {status} without its mark"
                + (f": {error})" if error else ")")
            )
        if status in _MISCONFIGURED:
            phrase, hint = _MISCONFIGURED[status]
            if status == 401:
                error = None
                hint = (
                    "check HOOKGATE_TOKEN: it does not match the server's"
                    if token
                    else "check HOOKGATE_TOKEN: the server wants one and none is set here"
                )
            if status in (404, 405) and error:  # the server names the path; the hint says what to fix
                error = f"{error}; {hint}"
            raise ServerMisconfigured(f"{status} {phrase}" + (f": {error}" if error else f" ({hint})" if hint else ""))
        raise ServerUnavailable(f"the server answered HTTP {status}" + (f": {error}" if error else ""))
    code, length = headers.get(EXIT_CODE_HEADER, ""), headers.get(STDOUT_LENGTH_HEADER, "")
    if not (_digits(code.removeprefix("-")) and _digits(length) and int(length) <= len(body)):
        raise ServerMisconfigured("what answered is not hookgate serve (no hookgate answer headers)")
    if not 0 <= int(code) <= 255:  # an exit status is a byte: 256 would reach the host as 0, an allow
        raise ServerMisconfigured(f"what answered is not hookgate serve (exit code {code[:20]} is not 0-255)")
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
    return error.splitlines()[0] if isinstance(error, str) and error.strip() else None


def _event_name(event: bytes) -> str | None:
    """The event's own ``hook_event_name`` (None when it cannot be read); the failure path only."""
    import json

    try:
        data = json.loads(event)
    except (ValueError, UnicodeDecodeError):
        return None
    name = data.get("hook_event_name") if isinstance(data, dict) else None
    return name if isinstance(name, str) else None


def closed_blocks(name: str) -> bool:
    """Whether ``--on-server-down closed`` blocks (exit 2) the canonical event ``name``: where a block
    holds an action back (PreToolUse, PermissionRequest, UserPromptSubmit, ConfigChange, ...); not on
    ``gateway.events.CONTINUE_EVENTS`` (a block makes the agent keep working: Stop would loop) nor on
    events a block cannot stop (SessionStart, Notification, ...). An unknown name: True."""
    from gateway.events import CONTINUE_EVENTS, EVENTS, PERMISSION_EVENTS

    spec = EVENTS.get(name)
    return spec is None or name in PERMISSION_EVENTS or (spec.blocks and name not in CONTINUE_EVENTS)


def _closed_answer(event: bytes, dialect: str) -> tuple[int, str, str | None]:
    """``(exit code, extra stderr, the host's event name)`` for ``--on-server-down closed`` (see ``closed_blocks``).

    In the package the event is parsed as ``hookgate run`` would (so a Gemini model-level event passes
    through with its own answer); standalone, its ``hook_event_name`` is looked up in ``_CLOSED_PASSES``.
    An event that cannot be read is blocked.
    """
    try:
        from gateway.dialects import parse_event
        from gateway.events import PassedThrough, decode_event_bytes
    except ImportError:  # standalone script
        name = _event_name(event)
        return (1 if name in _CLOSED_PASSES else 2), "", name
    try:
        parsed = parse_event(decode_event_bytes(event), dialect)
    except Exception:  # unreadable: nothing tells it is safe to let through
        return 2, "", _event_name(event)
    if isinstance(parsed, PassedThrough):
        code, _, err = parsed.answer  # "no objection": nothing to hold back (no stdout: it would be a decision)
        return code, err, parsed.name
    host_name = parsed.raw.get("hook_event_name")  # named as the host names it, like the standalone copy
    return (2 if closed_blocks(parsed.name) else 1), "", host_name if isinstance(host_name, str) else parsed.name


def on_server_down(
    server: str, exc: ServerUnavailable, event: bytes, *, dialect: str = "auto", policy: str = "fallback"
) -> tuple[int, str, str] | None:
    """What to do when ``forward`` raised ``exc``: ``(exit_code, stdout, stderr)`` to emit, or None to
    decide in-process (``policy`` ``fallback``, whose one-line reason this writes to stderr itself,
    except when the server is simply not running). See the module docstring for ``open``/``closed``."""
    kind = "misconfigured" if isinstance(exc, ServerMisconfigured) else "unavailable"
    why = f"hookgate: server {shown_url(server)} {kind}: {exc}; "
    if policy == "open":
        return 0, "", why + "failing open\n"
    if policy == "closed":
        code, extra, name = _closed_answer(event, dialect)
        if code == 2:
            return 2, "", why + "failing closed\n"
        what = name or "this event"
        return code, "", why + f"failing closed, but not blocking {what} (a block there holds no action back)\n" + extra
    if not isinstance(exc, ServerNotRunning):
        sys.stderr.write(why + "deciding in-process\n")
    return None


def event_limit(explicit: int | None = None) -> int:
    """The event size limit in bytes: ``explicit`` (serve's ``--max-body``), else
    ``HOOKGATE_MAX_EVENT_BYTES`` (a positive integer), else ``MAX_EVENT_BYTES``. Any other value of the
    variable gives the default; ``event_limit_problem`` says so (``run`` warns, ``serve`` refuses to start)."""
    if explicit is not None:
        return explicit
    value = os.environ.get("HOOKGATE_MAX_EVENT_BYTES", "")
    return int(value) if _digits(value) and int(value) > 0 else MAX_EVENT_BYTES


def event_limit_setting(explicit: int | None = None) -> str:
    """What sets ``event_limit(explicit)``, as the size-limit message names it."""
    if explicit is not None:
        return "--max-body"
    value = os.environ.get("HOOKGATE_MAX_EVENT_BYTES", "")
    if _digits(value) and int(value) > 0:
        return "HOOKGATE_MAX_EVENT_BYTES"
    return "the default; HOOKGATE_MAX_EVENT_BYTES sets another"


def event_limit_problem() -> str | None:
    """One line when ``HOOKGATE_MAX_EVENT_BYTES`` is set to something other than a positive integer
    (bytes), else None. An empty value counts as unset."""
    value = os.environ.get("HOOKGATE_MAX_EVENT_BYTES", "")
    if not value or (_digits(value) and int(value) > 0):
        return None
    return (
        f"HOOKGATE_MAX_EVENT_BYTES={value[:40]!r} is not a positive integer (bytes); "
        f"the default limit, {MAX_EVENT_BYTES // 2**20} MiB, applies"
    )


def read_event(limit: int | None = None) -> bytes:
    """Stdin, at most ``limit + 1`` bytes (default ``event_limit()``), read into one buffer (``read(n)``
    fills a single bytes object): more than ``limit`` means the event is over the limit, and the rest of
    stdin is still unread (``gateway.oversize`` drains it)."""
    return sys.stdin.buffer.read((event_limit() if limit is None else limit) + 1)


def emit(code: int, out: str, err: str) -> int:
    """Write the answer and return its exit code. A stdout that cannot be written (a closed pipe, a full
    disk; none at all: the process was started with that descriptor closed, and ``sys.stdout`` is None)
    loses the JSON but never the exit code: a deny still exits 2 with its reason on stderr."""
    if out and sys.stdout is not None:
        try:
            fd = sys.stdout.fileno()
            if not os.get_blocking(fd):  # a host that set O_NONBLOCK: a write past the pipe's buffer would
                os.set_blocking(fd, True)  # fail half-way (BlockingIOError) and lose the rest of the answer
        except (OSError, ValueError):
            pass
        try:
            sys.stdout.write(out)
            sys.stdout.flush()
        except OSError:
            _silence_stdout()
    if err and sys.stderr is not None:
        try:
            sys.stderr.write(err)
            sys.stderr.flush()
        except OSError:
            pass
    return code


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except OSError:
        pass


def main(argv: list[str] | None = None) -> int:
    """Standalone use: ``client.py [URL] [DIALECT]`` (URL default ``$HOOKGATE_SERVER``).

    With no package to fall back to, an unreachable or misconfigured server fails per
    ``HOOKGATE_ON_SERVER_DOWN``: ``open`` (the default here: exit 0) or ``closed`` (exit 2 where a block
    holds an action back, else 1), with the reason on stderr.
    """
    args = sys.argv[1:] if argv is None else argv
    server = args[0] if args else os.environ.get("HOOKGATE_SERVER", "")
    dialect = args[1] if len(args) > 1 else "auto"
    limit = event_limit()
    event = read_event(limit)
    if len(event) > limit:  # no package here to judge it: deny, never a silent pass
        return emit(
            2,
            "",
            f"hookgate: event is over the limit of {limit} bytes ({event_limit_setting()}): "
            "it cannot be checked, so it is not let through\n",
        )
    try:
        return emit(
            *forward(
                server,
                event,
                dialect=dialect,
                token=os.environ.get("HOOKGATE_TOKEN"),
                project_dir=os.environ.get("CLAUDE_PROJECT_DIR"),
            )
        )
    except ServerUnavailable as exc:
        policy = "closed" if os.environ.get("HOOKGATE_ON_SERVER_DOWN") == "closed" else "open"
        answer = on_server_down(server, exc, event, dialect=dialect, policy=policy)
        assert answer is not None  # only fallback returns None
        return emit(*answer)


if __name__ == "__main__":
    raise SystemExit(main())
