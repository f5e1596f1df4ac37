"""``hookgate serve --read-timeout``: a client that sends nothing, half a head, or part of a body is cut
off instead of holding its connection (and a file descriptor) forever, while every other client is
answered as before. Real subprocess, raw sockets; no timing is asserted beyond generous upper bounds."""

from __future__ import annotations

import http.client
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.conftest import CASES, load_case
from tests.fakes.webhooks import read_head
from tests.integration.serve_helpers import ServeProcess, isolated_env

GUARDS = CASES / "configs" / "guards.json"
RM_RF = load_case("claude", "pretooluse-bash-rm-rf.json")
SAFE = load_case("claude", "pretooluse-bash-safe.json")
TIMEOUT = "0.5"
CLOSED_WITHIN = 10.0  # generous: the server cuts off after 0.5 s
KEPT_ALIVE_CLOSED_WITHIN = 20.0  # after a response: uvicorn's keep-alive wait (5 s), then the 0.5 s


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    env = isolated_env(tmp_path_factory.mktemp("serve"))
    with ServeProcess(GUARDS, args=["--read-timeout", TIMEOUT], env=env) as served:
        yield served


def _connect(server: ServeProcess) -> socket.socket:
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=30)


def _read_until_closed(sock: socket.socket, within: float = CLOSED_WITHIN) -> bytes:
    """Everything the server sends until it closes the connection; fails if it is still open after ``within`` s."""
    deadline = time.monotonic() + within
    received = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"the server kept the connection open for {within} s (got {received!r})")
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        except ConnectionResetError:
            return received
        if not chunk:
            return received
        received += chunk


def _head(path: str, length: int, content_type: str = "application/json") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


def _event(server: ServeProcess, body: dict[str, object]) -> httpx2.Response:
    return httpx2.post(f"{server.url}/hooks", content=json.dumps(body).encode(), headers=_JSON, timeout=30)


_JSON = {"content-type": "application/json"}


def _answers_events(server: ServeProcess) -> None:
    deny = _event(server, RM_RF)
    assert deny.status_code == 200 and deny.json()["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert _event(server, SAFE).status_code == 200


def _no_traceback(server: ServeProcess) -> None:
    assert not [line for line in server.lines if "Traceback" in line or "Exception in ASGI" in line], server.lines


def test_a_connection_that_sends_nothing_is_closed(server: ServeProcess) -> None:
    with _connect(server) as sock:
        assert _read_until_closed(sock) == b""
    _answers_events(server)


def test_a_partial_head_is_closed(server: ServeProcess) -> None:
    with _connect(server) as sock:
        sock.sendall(b"POST /hooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty")
        assert _read_until_closed(sock) == b""


def test_a_head_sent_a_byte_at_a_time_is_closed(server: ServeProcess) -> None:
    """Each byte would restart an idle timer; the deadline counts from the connection's opening."""
    head = _head("/hooks", 2)
    with _connect(server) as sock:
        deadline = time.monotonic() + CLOSED_WITHIN
        try:
            for byte in head[:-4]:
                sock.sendall(bytes([byte]))
                time.sleep(0.05)
                assert time.monotonic() < deadline, "the server still reads a head trickling in"
        except (BrokenPipeError, ConnectionResetError):
            return
        assert _read_until_closed(sock) == b""


@pytest.mark.parametrize("path", ["/hooks", "/hooks/claude", "/ui/session"])
def test_a_body_that_never_finishes_gets_408(server: ServeProcess, path: str) -> None:
    with _connect(server) as sock:
        sock.sendall(_head(path, 100) + b'{"hook_eve')
        answer = _read_until_closed(sock)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 "), answer
    assert b"content-type: application/json" in head.lower() and b"connection: close" in head.lower()
    assert json.loads(body) == {"error": "request body not received within 0.5 s"}
    _answers_events(server)
    _no_traceback(server)


def test_events_are_answered_while_slow_clients_hold_connections(server: ServeProcess) -> None:
    stalled = [_connect(server) for _ in range(3)]
    try:
        stalled[1].sendall(b"POST /hooks HTTP/1.1\r\n")
        stalled[2].sendall(_head("/hooks", 100) + b"{")
        _answers_events(server)
        for sock in stalled:
            _read_until_closed(sock)
        _answers_events(server)
    finally:
        for sock in stalled:
            sock.close()
    text = httpx2.get(f"{server.url}/metrics").text
    assert 'hookgate_requests_rejected_total{reason="read_timeout"}' in text


def test_a_kept_alive_connection_serves_requests_back_to_back(server: ServeProcess) -> None:
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        answers = []
        socks = set()
        for event in (RM_RF, SAFE, RM_RF):
            conn.request("POST", "/hooks", body=json.dumps(event).encode(), headers=_JSON)
            socks.add(id(conn.sock))
            response = conn.getresponse()
            answers.append((response.status, json.loads(response.read())))
            time.sleep(0.7)  # longer than the read timeout between requests: uvicorn's keep-alive wait rules
        assert len(socks) == 1, "the connection was not kept alive"
    finally:
        conn.close()
    assert [status for status, _ in answers] == [200, 200, 200]
    assert answers[0][1]["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_pipelined_requests_are_all_answered(server: ServeProcess) -> None:
    bodies = [json.dumps(event).encode() for event in (RM_RF, SAFE)]
    with _connect(server) as sock:
        sock.sendall(b"".join(_head("/hooks", len(body)) + body for body in bodies))
        received = b""
        while received.count(b"HTTP/1.1 200 ") < 2:
            chunk = sock.recv(65536)
            assert chunk, f"closed before both answers: {received!r}"
            received += chunk
    assert b"permissionDecision" in received


def test_a_partial_head_after_a_response_is_closed(server: ServeProcess) -> None:
    """uvicorn's keep-alive timer stops at the next request's first byte: the rest of the head is bounded too."""
    body = json.dumps(SAFE).encode()
    with _connect(server) as sock:
        sock.sendall(_head("/hooks", len(body)) + body)
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = sock.recv(65536)
            assert chunk, received
            received += chunk
        assert received.startswith(b"HTTP/1.1 200 ")
        sock.sendall(b"POST /hooks HTTP/1.1\r\nHost: 12")
        _read_until_closed(sock, KEPT_ALIVE_CLOSED_WITHIN)


def test_the_unread_rest_of_an_answered_body_is_bounded(server: ServeProcess) -> None:
    """A 415 is answered without reading the body; a client that never sends the rest is closed."""
    with _connect(server) as sock:
        sock.sendall(_head("/hooks", 100, "text/plain") + b"x" * 10)
        answer = _read_until_closed(sock, KEPT_ALIVE_CLOSED_WITHIN)
    assert answer.startswith(b"HTTP/1.1 415 ") and answer.count(b"HTTP/1.1") == 1


def test_dispatch_time_is_not_bounded_by_the_read_timeout(tmp_path: Path) -> None:
    config = tmp_path / "hookgate.yaml"
    config.write_text("hooks:\n  PreToolUse:\n    - hooks: [{type: command, command: 'sleep 1.5; exit 2', id: slow}]\n")
    with ServeProcess(config, args=["--read-timeout", TIMEOUT], env=isolated_env(tmp_path)) as served:
        answer = _event(served, SAFE)
        assert answer.status_code == 200
        assert answer.json()["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_body_that_never_finishes_does_not_hold_shutdown(tmp_path: Path) -> None:
    """uvicorn's graceful shutdown waits for every request in progress: one whose body never ends ends at the deadline."""
    with ServeProcess(GUARDS, args=["--read-timeout", TIMEOUT], env=isolated_env(tmp_path)) as served:
        sock = _connect(served)
        try:
            sock.sendall(_head("/hooks", 100) + b"{")
            _event(served, SAFE)  # the stalled request is in the app, reading its body
            assert served.stop(timeout=CLOSED_WITHIN) == 0
            assert _read_until_closed(sock).startswith(b"HTTP/1.1 408 ")
        finally:
            sock.close()


def test_time_the_loop_is_held_up_does_not_count_against_a_client(tmp_path: Path) -> None:
    """A body that arrives while an in-process handler holds the event loop is read once the loop is free,
    in several reads for a large one; the connection then gets a fresh deadline (it used to have run out
    meanwhile: a 408, which a host reads as "go ahead")."""
    import threading

    config = tmp_path / "hookgate.yaml"
    config.write_text(
        "hooks:\n  PreToolUse:\n    - hooks: [{type: python, callable: 'tests.fakes.threaded:hold', id: hold}]\n"
    )
    big = json.dumps({**SAFE, "tool_input": {"command": "ls", "pad": "x" * 1_000_000}}).encode()
    with (
        ServeProcess(config, args=["--read-timeout", TIMEOUT], env=isolated_env(tmp_path)) as served,
        _connect(served) as sock,
    ):
        sock.sendall(_head("/hooks", len(big)) + big[:100])  # the head is read; the body is due in 0.5 s
        time.sleep(0.2)
        holding = threading.Thread(target=_event, args=(served, {**SAFE, "tool_input": {"command": "hold"}}))
        holding.start()
        time.sleep(0.5)  # the loop is held for 2 s from about 0.3 s ago
        rest = threading.Thread(target=sock.sendall, args=(big[100:],))
        rest.start()
        answer = read_head(sock)
        rest.join(10)
        holding.join(10)
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]
