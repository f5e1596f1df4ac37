"""The thin client (``hookgate run --server``) against a real ``hookgate serve``, and without one."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import CASES, ROOT, load_case, run_hookgate
from tests.fakes.webhooks import ClosingServer
from tests.integration.serve_helpers import ServeProcess, isolated_env

GUARDS = str(CASES / "configs" / "guards.json")
KIRO = str(CASES / "configs" / "kiro-agent.json")
CLAUDE_CASES = [
    "pretooluse-bash-rm-rf.json",
    "pretooluse-bash-safe.json",
    "pretooluse-write-env.json",
    "userpromptsubmit.json",
    "stop.json",
    "sessionend.json",
]
KIRO_CASES = ["pretooluse-execute-bash-rm.json", "agentspawn.json", "userpromptsubmit.json"]
HEAVY = (
    "pydantic",
    "httpx2",
    "httpcore2",
    "aiohttp",
    "anthropic",
    "openai",
    "mcp",
    "yaml",
    "asyncio",
    "starlette",
    "uvicorn",
    "tenacity",
    "argparse",
    "gateway.events",
    "gateway.config",
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with ServeProcess(GUARDS, KIRO, env=isolated_env(tmp_path_factory.mktemp("serve"))) as s:
        yield s


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def outcome(proc: subprocess.CompletedProcess[str]) -> tuple[int, str, str]:
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("name", CLAUDE_CASES)
def test_same_answer_as_in_process(server: ServeProcess, name: str) -> None:
    event = load_case("claude", name)
    local = run_hookgate(["run", "--config", GUARDS, "--config", KIRO], event)
    remote = run_hookgate(["run", "--server", server.url], event)
    assert outcome(remote) == outcome(local)


@pytest.mark.parametrize("name", KIRO_CASES)
def test_same_answer_as_in_process_for_kiro(server: ServeProcess, name: str) -> None:
    event = load_case("kiro", name)
    local = run_hookgate(["run", "--config", GUARDS, "--config", KIRO, "--dialect", "kiro"], event)
    remote = run_hookgate(["run", "--dialect", "kiro"], event, env={"HOOKGATE_SERVER": server.url})
    assert outcome(remote) == outcome(local)


def test_malformed_event_is_exit_1_with_one_line(server: ServeProcess) -> None:
    proc = run_hookgate(["run", "--server", server.url], "{oops")
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("hookgate: event is not valid JSON") and proc.stderr.count("\n") == 1


def test_standalone_script_form(server: ServeProcess) -> None:
    script = str(ROOT / "gateway" / "client.py")
    proc = subprocess.run(
        [sys.executable, "-I", "-S", script, server.url],
        capture_output=True,
        text=True,
        input=json.dumps(load_case("claude", "pretooluse-bash-rm-rf.json")),
        check=False,
    )
    assert proc.returncode == 2 and "Destructive command blocked by hook" in proc.stderr
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_thin_client_imports_only_the_standard_library(server: ServeProcess) -> None:
    event = json.dumps(load_case("claude", "pretooluse-bash-rm-rf.json"))
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "gateway", "run", "--server", server.url],
        input=event,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr

    def imports(stderr: str) -> set[str]:
        return {
            line.split("|")[-1].strip()
            for line in stderr.splitlines()
            if line.startswith("import time:") and line.split("|")[0][12:].strip().isdigit()
        }

    # what the interpreter imports before any code of ours (site, a distribution's sitecustomize hooks)
    bare = subprocess.run([sys.executable, "-X", "importtime", "-c", "pass"], capture_output=True, text=True)
    imported = imports(proc.stderr) - imports(bare.stderr)
    assert {"gateway.client", "gateway.cli"} <= imported
    assert not imported & set(HEAVY), imported & set(HEAVY)
    ours = {m for m in imported if m.split(".")[0] in ("gateway", "handlers", "configs")}
    assert ours == {
        "gateway",
        "gateway.cli",
        "gateway.client",
        "gateway.errors",
        "gateway.wire",
    }  # __main__ runs, is not imported
    stdlib = set(sys.stdlib_module_names)
    site = {"site", "sitecustomize", "_distutils_hack", "__editable___hookgate_0_1_0_finder", "encodings"}
    others = {m for m in imported - ours if m.split(".")[0] not in stdlib and m.split(".")[0] not in site}
    assert not {m for m in others if not m.startswith("__editable__")}, others


def test_the_installed_command_imports_no_more_than_the_module(server: ServeProcess) -> None:
    # The `hookgate` script is a plain script, not a console-script wrapper (which imports `re` first).
    script = Path(sys.executable).with_name("hookgate")
    assert script.read_text().startswith("#!") and "import re" not in script.read_text()
    event = json.dumps(load_case("claude", "pretooluse-bash-rm-rf.json"))
    proc = subprocess.run(
        [str(script), "run", "--server", server.url],
        input=event,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"},
        check=False,
    )
    assert proc.returncode == 2, proc.stderr

    def imports(stderr: str) -> set[str]:
        return {
            line.split("|")[-1].strip()
            for line in stderr.splitlines()
            if line.startswith("import time:") and line.split("|")[0][12:].strip().isdigit()
        }

    # what the interpreter imports before any code of ours (site, a distribution's sitecustomize hooks)
    bare = subprocess.run([sys.executable, "-X", "importtime", "-c", "pass"], capture_output=True, text=True)
    imported = imports(proc.stderr) - imports(bare.stderr)
    assert {"gateway", "gateway.cli", "gateway.client", "gateway.errors"} <= imported
    assert not imported & set(HEAVY), imported & set(HEAVY)
    if not any(m.startswith("__editable__") for m in imported):  # an editable install's finder imports re itself
        assert "re" not in imported


# ---------------------------------------------------------------------------- server down


def test_unreachable_server_falls_back_to_in_process_dispatch() -> None:
    event = load_case("claude", "pretooluse-bash-rm-rf.json")
    local = run_hookgate(["run", "--config", GUARDS], event)
    remote = run_hookgate(["run", "--config", GUARDS, "--server", f"http://127.0.0.1:{closed_port()}"], event)
    assert outcome(remote) == outcome(local) and remote.returncode == 2


def test_unreachable_server_fails_open_or_closed_when_asked() -> None:
    event = load_case("claude", "pretooluse-bash-safe.json")
    url = f"http://127.0.0.1:{closed_port()}"
    opened = run_hookgate(["run", "--server", url, "--on-server-down", "open"], event)
    assert (opened.returncode, opened.stdout) == (0, "") and "failing open" in opened.stderr
    closed = run_hookgate(["run", "--server", url], event, env={"HOOKGATE_ON_SERVER_DOWN": "closed"})
    assert (closed.returncode, closed.stdout) == (2, "")
    assert closed.stderr.startswith(f"hookgate: server {url} unavailable: cannot connect to 127.0.0.1:")
    assert closed.stderr.rstrip().endswith("; failing closed") and closed.stderr.count("\n") == 1


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf", "1e300", "soon"])
def test_a_bad_server_timeout_is_the_default_and_still_fails_closed(value: str) -> None:
    """HOOKGATE_SERVER_TIMEOUT=-1 once made the client exit 1 ("internal error"), which a host takes as
    non-blocking: with HOOKGATE_ON_SERVER_DOWN=closed a destructive call went ahead."""
    event = load_case("claude", "pretooluse-bash-rm-rf.json")
    env = {"HOOKGATE_SERVER_TIMEOUT": value, "HOOKGATE_ON_SERVER_DOWN": "closed"}
    proc = run_hookgate(["run", "--server", f"http://127.0.0.1:{closed_port()}"], event, env=env)
    assert proc.returncode == 2 and "internal error" not in proc.stderr, proc.stderr


def test_wrong_token_is_a_misconfiguration_and_says_so(tmp_path: Path) -> None:
    event = load_case("claude", "pretooluse-bash-rm-rf.json")
    with ServeProcess(GUARDS, env={"HOOKGATE_TOKEN": "right"}) as served:
        good = run_hookgate(["run", "--server", served.url], event, env={"HOOKGATE_TOKEN": "right"})
        assert good.returncode == 2 and "Destructive" in good.stderr
        bad = run_hookgate(
            ["run", "--server", served.url, "--on-server-down=open"], event, env={"HOOKGATE_TOKEN": "wrong"}
        )
        assert (bad.returncode, bad.stdout) == (0, "")
        assert bad.stderr == (
            f"hookgate: server {served.url} misconfigured: 401 unauthorized (check HOOKGATE_TOKEN: "
            "it does not match the server's); failing open\n"
        )
        local = run_hookgate(["run", "--config", GUARDS], event)
        fallback = run_hookgate(["run", "--server", served.url, "--config", GUARDS], event)  # no token at all
        first, rest = fallback.stderr.split("\n", 1)
        assert first == (
            f"hookgate: server {served.url} misconfigured: 401 unauthorized (check HOOKGATE_TOKEN: the "
            "server wants one and none is set here); deciding in-process"
        )
        assert (fallback.returncode, fallback.stdout, rest) == outcome(local)


def test_server_timeout_is_server_down(tmp_path: Path) -> None:
    script = tmp_path / "slow.sh"
    script.write_text("#!/bin/sh\nsleep 3\n")
    script.chmod(0o755)
    config = tmp_path / "hookgate.yaml"
    config.write_text(f"hooks:\n  PreToolUse:\n    - hooks: [{{type: command, command: '{script}'}}]\n")
    with ServeProcess(config) as served:
        proc = run_hookgate(
            ["run", "--server", served.url, "--on-server-down", "closed"],
            load_case("claude", "pretooluse-bash-safe.json"),
            env={"HOOKGATE_SERVER_TIMEOUT": "0.5"},
        )
    assert proc.returncode == 2 and "no answer from 127.0.0.1" in proc.stderr


def test_unusual_arguments_still_work_through_argparse(server: ServeProcess) -> None:
    event = load_case("claude", "pretooluse-bash-rm-rf.json")
    proc = run_hookgate(["run", f"--server={server.url}", "-c", GUARDS, "--dialect=claude"], event)
    # a deny from the policy, not argparse's usage error (which also exits 2)
    assert proc.returncode == 2 and "usage:" not in proc.stderr
    assert "Destructive command blocked by hook" in proc.stderr
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    helped = run_hookgate(["run", "--help"], "", env={"HOOKGATE_SERVER": server.url})
    assert helped.returncode == 0 and "--on-server-down" in helped.stdout


def test_bad_server_url_is_a_misconfiguration() -> None:
    proc = run_hookgate(
        ["run", "--server", "unix:///tmp/x", "--on-server-down", "closed"],
        load_case("claude", "pretooluse-bash-safe.json"),
        env={**os.environ},
    )
    assert proc.returncode == 2
    assert proc.stderr == (
        "hookgate: server unix:///tmp/x misconfigured: the server URL must start with http:// or "
        "https://, got 'unix:///tmp/x'; failing closed\n"
    )
    masked = run_hookgate(
        ["run", "--server", "http://me:pw@127.0.0.1:1", "--on-server-down", "open"], load_case("claude", "stop.json")
    )
    assert masked.returncode == 0 and "pw" not in masked.stderr and "http://***@127.0.0.1:1" in masked.stderr


def test_wrong_path_is_a_misconfiguration_and_fallback_says_so(server: ServeProcess) -> None:
    event = load_case("claude", "pretooluse-bash-rm-rf.json")
    local = run_hookgate(["run", "--config", GUARDS], event)
    wrong = f"{server.url}/hooks"  # the client adds /hooks/{dialect} itself
    proc = run_hookgate(["run", "--server", wrong, "--config", GUARDS], event)
    first, rest = proc.stderr.split("\n", 1)
    assert first == (
        f"hookgate: server {wrong} misconfigured: 404 not found: no route POST /hooks/hooks/auto "
        "(hookgate serve answers POST /hooks, POST /hooks/{dialect}, GET /healthz, GET /metrics, GET /ui); "
        "the URL must be the server's base URL, e.g. http://127.0.0.1:8787; deciding in-process"
    )
    assert (proc.returncode, proc.stdout, rest) == outcome(local)


def test_an_answer_that_is_not_hookgate_is_a_misconfiguration() -> None:
    from tests.fakes.webhooks import Receiver

    with Receiver() as other:  # some other HTTP server on the port
        proc = run_hookgate(
            ["run", "--server", other.url(""), "--on-server-down", "open"], load_case("claude", "stop.json")
        )
    assert proc.returncode == 0 and " misconfigured: " in proc.stderr and proc.stderr.count("\n") == 1


@pytest.mark.parametrize("code", ["256", "512", "-1"])
def test_an_exit_code_that_is_not_a_byte_is_a_misconfiguration(code: str) -> None:
    """An exit status is one byte: 256 would reach the host as 0 (an allow). Such an answer is not
    hookgate's: the client falls back (here: decides in-process, and the guard denies)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Liar(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["content-length"]))
            self.send_response(200)
            self.send_header("hookgate-exit-code", code)
            self.send_header("hookgate-stdout-length", "0")
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Liar)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}"
        proc = run_hookgate(
            ["run", "--server", url, "--config", GUARDS], load_case("claude", "pretooluse-bash-rm-rf.json")
        )
    finally:
        httpd.shutdown()
    assert proc.returncode == 2, proc.stderr
    assert f"exit code {code} is not 0-255" in proc.stderr and "deciding in-process" in proc.stderr


_JSON_400 = b'{"error":"invalid request."}'
FOREIGN_ANSWERS = {
    "a-400-from-another-server": b"HTTP/1.1 400 Bad Request\r\nContent-Length: %d\r\n\r\n%s"
    % (len(_JSON_400), _JSON_400),
    "superscript-exit-code": "HTTP/1.1 200 OK\r\nhookgate-exit-code: \u00b2\r\nhookgate-stdout-length: 0\r\n"
    "Content-Length: 0\r\n\r\n".encode("latin-1"),
    "superscript-stdout-length": "HTTP/1.1 200 OK\r\nhookgate-exit-code: 0\r\nhookgate-stdout-length: \u00b9\r\n"
    "Content-Length: 2\r\n\r\n{}".encode("latin-1"),
    "superscript-content-length": "HTTP/1.1 200 OK\r\nhookgate-exit-code: 0\r\nhookgate-stdout-length: 0\r\n"
    "Content-Length: \u00b2\r\n\r\n{}".encode("latin-1"),
    "superscript-status": "HTTP/1.1 \u00b200 OK\r\nContent-Length: 0\r\n\r\n".encode("latin-1"),
}


@pytest.mark.parametrize("answer", FOREIGN_ANSWERS.values(), ids=FOREIGN_ANSWERS.keys())
def test_an_answer_from_another_server_never_lets_a_closed_client_through(answer: bytes) -> None:
    """A 400 that hookgate serve did not mark as its own (``hookgate-exit-code: 1``), or digits that
    ``str.isdigit`` takes and ``int`` refuses (``\u00b2``), used to end in exit 1 (the host goes ahead) or
    an internal error; the standalone script printed a traceback. Each is "not hookgate serve": with
    ``closed`` the call is blocked, in both forms, in one line."""
    event = load_case("claude", "pretooluse-bash-rm-rf.json")
    with ClosingServer(answer) as liar:
        proc = run_hookgate(["run", "--server", liar.url, "--on-server-down", "closed"], event)
        script = subprocess.run(
            [sys.executable, "-I", "-S", str(ROOT / "gateway" / "client.py"), liar.url],
            input=json.dumps(event),
            capture_output=True,
            text=True,
            env={**os.environ, "HOOKGATE_ON_SERVER_DOWN": "closed"},
            timeout=30,
            check=False,
        )
    for result in (proc, script):
        assert result.returncode == 2, result.stderr
        assert " misconfigured: " in result.stderr and result.stderr.count("\n") == 1, result.stderr
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr


def test_the_server_timeout_is_a_total_not_a_pause_between_bytes() -> None:
    """A server that trickles its answer (a byte every 0.2 s, for ever) is given up at the deadline:
    a per-read timeout would wait on until the host's own timeout, which fails open."""
    import threading
    import time

    stop = threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))

    def trickle() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\n")
            while not stop.is_set():
                try:
                    conn.sendall(b"X")
                except OSError:
                    return
                time.sleep(0.2)

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    try:  # (without a total deadline the client would read on until run_hookgate's own 60 s timeout)
        proc = run_hookgate(
            ["run", "--server", f"http://127.0.0.1:{listener.getsockname()[1]}", "--on-server-down", "closed"],
            load_case("claude", "pretooluse-bash-safe.json"),
            env={**os.environ, "HOOKGATE_SERVER_TIMEOUT": "1.5"},
        )
    finally:
        stop.set()
        listener.close()
    assert proc.returncode == 2 and "within 1.5 s" in proc.stderr, proc.stderr


# ---------------------------------------------------------------------------- --on-server-down closed, per event


STOP = load_case("claude", "stop.json")


def claude_event(name: str) -> dict[str, object]:
    return {**STOP, "hook_event_name": name, "tool_name": "Bash", "tool_input": {"command": "ls"}}


CLOSED_CASES = [  # (dialect, event, exit code under --on-server-down closed)
    ("auto", claude_event("PreToolUse"), 2),
    ("auto", claude_event("PermissionRequest"), 2),
    ("auto", claude_event("UserPromptSubmit"), 2),
    ("auto", claude_event("ConfigChange"), 2),
    ("auto", claude_event("Stop"), 1),
    ("auto", claude_event("SubagentStop"), 1),
    ("auto", claude_event("PostToolUse"), 1),
    ("auto", claude_event("PostToolUseFailure"), 1),
    ("auto", claude_event("PostToolBatch"), 1),
    ("auto", claude_event("TeammateIdle"), 1),
    ("auto", claude_event("TaskCompleted"), 1),
    ("auto", claude_event("SessionStart"), 1),
    ("auto", claude_event("PermissionDenied"), 1),
    ("auto", claude_event("NoSuchEvent"), 2),
    ("kiro", load_case("kiro", "pretooluse-execute-bash-rm.json"), 2),
    ("kiro", {"hook_event_name": "stop"}, 1),
    ("gemini", {"hook_event_name": "AfterAgent", "timestamp": "t", "prompt_response": "done"}, 1),
    (
        "gemini",
        {
            "hook_event_name": "BeforeTool",
            "timestamp": "t",
            "tool_name": "run_shell_command",
            "tool_input": {"command": "ls"},
        },
        2,
    ),
]


@pytest.mark.parametrize(
    ("dialect", "event", "code"), CLOSED_CASES, ids=[f"{d}-{e['hook_event_name']}" for d, e, _ in CLOSED_CASES]
)
def test_closed_blocks_only_where_a_block_holds_an_action_back(
    dialect: str, event: dict[str, object], code: int
) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    proc = run_hookgate(["run", "--server", url, "--dialect", dialect, "--on-server-down", "closed"], event)
    assert (proc.returncode, proc.stdout) == (code, "")
    assert proc.stderr.startswith(f"hookgate: server {url} unavailable: ") and proc.stderr.count("\n") == 1
    if code == 1:
        assert proc.stderr.endswith(
            f"; failing closed, but not blocking {event['hook_event_name']} (a block there holds no action back)\n"
        )
    script = str(ROOT / "gateway" / "client.py")  # standalone: the same answers from its own copy of the rule
    alone = subprocess.run(
        [sys.executable, "-I", "-S", script, url, dialect],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        env={"HOOKGATE_ON_SERVER_DOWN": "closed"},
        check=False,
    )
    assert (alone.returncode, alone.stdout, alone.stderr) == (proc.returncode, proc.stdout, proc.stderr)


def test_closed_passes_a_passed_through_event_and_blocks_an_unreadable_one() -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    model = {"hook_event_name": "BeforeModel", "timestamp": "t", "llm_request": {}}
    proc = run_hookgate(["run", "--server", url, "--dialect", "gemini", "--on-server-down", "closed"], model)
    assert (proc.returncode, proc.stdout) == (0, "") and "not blocking BeforeModel" in proc.stderr
    garbage = run_hookgate(["run", "--server", url, "--on-server-down", "closed"], "{oops")
    assert garbage.returncode == 2 and garbage.stderr.endswith("; failing closed\n")


def test_standalone_copy_of_the_closed_rule_matches_the_package() -> None:
    from gateway import client
    from gateway.dialects import DIALECTS, gemini, get_dialect
    from gateway.events import EVENTS

    expected = {name for name in EVENTS if not client.closed_blocks(name)}
    for dialect in DIALECTS:
        table: dict[str, str] = get_dialect(dialect).EVENT_NAMES
        expected |= {host for host, canonical in table.items() if not client.closed_blocks(canonical)}
    expected |= gemini.MODEL_EVENTS  # passed through: "no objection"
    assert set(client._CLOSED_PASSES) == expected
    assert not client.closed_blocks("Stop") and client.closed_blocks("PreToolUse")
    assert client.closed_blocks("PermissionRequest") and client.closed_blocks("NoSuchEvent")


# ---------------------------------------------------------------------------- the caller's CLAUDE_PROJECT_DIR


def test_the_callers_project_dir_reaches_command_handlers(tmp_path: Path) -> None:
    config = tmp_path / "hookgate.yaml"
    config.write_text(
        "hooks:\n  PreToolUse:\n    - hooks: [{type: command, "
        'command: \'printf "%s" "$CLAUDE_PROJECT_DIR" >&2; exit 2\'}]\n'
    )
    mine = tmp_path / "my proj" / "été"
    mine.mkdir(parents=True)
    event = load_case("claude", "pretooluse-bash-safe.json")
    token = {"HOOKGATE_TOKEN": "s3cret"}  # the header is honoured only with a token
    caller = {"CLAUDE_PROJECT_DIR": str(mine), **token}
    with ServeProcess(config, env={"CLAUDE_PROJECT_DIR": "/the/server/own", **token}) as served:
        remote = run_hookgate(["run", "--server", served.url], event, env=caller)
        local = run_hookgate(["run", "--config", str(config)], event, env=caller)
        assert remote.returncode == 2 and remote.stderr == f"{mine}\n"
        assert outcome(remote) == outcome(local)
        unset = run_hookgate(["run", "--server", served.url], event, env=token)
        assert (unset.returncode, unset.stderr) == (2, "/the/server/own\n")
        script = str(ROOT / "gateway" / "client.py")
        alone = subprocess.run(
            [sys.executable, "-I", "-S", script, served.url],
            input=json.dumps(event),
            capture_output=True,
            text=True,
            env=caller,
            check=False,
        )
        assert (alone.returncode, alone.stderr) == (2, f"{mine}\n")


def test_without_a_token_the_callers_project_dir_is_ignored(tmp_path: Path) -> None:
    config = tmp_path / "hookgate.yaml"
    config.write_text(
        "hooks:\n  PreToolUse:\n    - hooks: [{type: command, "
        'command: \'printf "%s" "$CLAUDE_PROJECT_DIR" >&2; exit 2\'}]\n'
    )
    event = load_case("claude", "pretooluse-bash-safe.json")
    server_env = {"CLAUDE_PROJECT_DIR": "/the/server/own", "HOOKGATE_TOKEN": ""}
    with ServeProcess(config, env=server_env) as served:
        for _ in range(2):
            remote = run_hookgate(
                ["run", "--server", served.url], event, env={"CLAUDE_PROJECT_DIR": str(tmp_path), "HOOKGATE_TOKEN": ""}
            )
            assert (remote.returncode, remote.stderr) == (2, "/the/server/own\n")  # still answers
        served.wait_log("ignoring X-Hookgate-Project-Dir")
        served.stop()
    assert sum("ignoring X-Hookgate-Project-Dir" in line for line in served.lines) == 1
