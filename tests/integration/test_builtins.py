"""The built-ins (readOnly, truncateOutput, rateLimit) through ``hookgate run`` and ``hookgate serve``,
as real subprocesses sharing one state store (``XDG_STATE_HOME`` from the autouse fixture)."""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.conftest import HOOKGATE, load_case, run_hookgate
from tests.integration.serve_helpers import ServeProcess
from tests.pg_server import PASSWORD

WRITE = {
    "hook_event_name": "PreToolUse",
    "session_id": "s1",
    "cwd": "/tmp",
    "tool_name": "Write",
    "tool_input": {"file_path": "/tmp/x.txt", "content": "hi"},
    "tool_use_id": "toolu_1",
}


def bash(command: str, session: str = "s1") -> dict[str, Any]:
    return {
        "hook_event_name": "PreToolUse",
        "session_id": session,
        "cwd": "/tmp",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": "toolu_2",
    }


def config(tmp_path: Path, event: str, *handlers: dict[str, Any], name: str = "hookgate.json", **settings: Any) -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"hooks": {event: [{"hooks": list(handlers)}]}, "settings": settings}))
    return str(path)


def permission(stdout: str) -> str | None:
    return json.loads(stdout)["hookSpecificOutput"].get("permissionDecision") if stdout.strip() else None


def store_shown() -> str:
    """How ``hookgate mode`` names the store the test's environment selects (never with its password)."""
    import os

    from gateway.store.url import redact

    url = os.environ.get("HOOKGATE_STORE_URL")
    if url:
        return f"{redact(url)} (postgresql)"
    return f"{os.path.join(os.environ['XDG_STATE_HOME'], 'hookgate', 'state.sqlite3')} (sqlite)"


def post(url: str, body: dict[str, Any]) -> httpx2.Response:
    return httpx2.post(
        f"{url}/hooks", content=json.dumps(body).encode(), headers={"content-type": "application/json"}, timeout=30
    )


# ---------------------------------------------------------------------------- readOnly


@pytest.mark.usefixtures("store_backend")
def test_read_only_is_switched_from_the_cli_for_run_and_serve(tmp_path: Path) -> None:
    cfg = config(tmp_path, "PreToolUse", {"type": "builtin", "name": "readOnly"})
    status = run_hookgate(["mode", "read-only", "status", "-c", cfg]).stdout.splitlines()
    assert status[0] == "read-only: off" and status[1] == f"store: {store_shown()}" and len(status) == 2
    assert PASSWORD not in status[1]
    off = run_hookgate(["run", "-c", cfg], WRITE)
    assert (off.returncode, off.stdout) == (0, "")
    with ServeProcess(cfg) as server:
        assert post(server.url, WRITE).json() == {}
        switched = run_hookgate(["mode", "read-only", "on", "-c", cfg])  # another process flips the store flag
        assert (switched.returncode, switched.stdout.splitlines()[0]) == (
            0,
            "read-only: on (hookgate mode read-only on)",
        )
        on = run_hookgate(["run", "-c", cfg], WRITE)
        assert on.returncode == 2 and permission(on.stdout) == "deny"
        assert "read-only mode is on (hookgate mode read-only on): Write changes files" in on.stderr
        served = post(server.url, WRITE).json()["hookSpecificOutput"]
        assert served["permissionDecision"] == "deny" and "Write changes files" in served["permissionDecisionReason"]
        for command, denied in [
            ("ls -la | grep src", False),
            ("git status && git diff", False),
            ("rm -rf build", True),
            ("echo x > notes.txt", True),
            ("npm install", True),
            ("git -c core.pager='touch /tmp/pwned' log", True),
            ("git diff --output=/tmp/patch.txt", True),
            ("less '+!touch /tmp/pwned' README.md", True),
        ]:
            answer = run_hookgate(["run", "-c", cfg], bash(command))
            assert (answer.returncode == 2) is denied, (command, answer.stdout, answer.stderr)
        mcp = {**WRITE, "tool_name": "mcp__db__query", "tool_input": {"sql": "UPDATE t SET a = 1"}}
        assert "sql is SQL UPDATE, not a SELECT" in run_hookgate(["run", "-c", cfg], mcp).stderr
        mcp["tool_input"] = {"sql": "SELECT a FROM t"}
        assert run_hookgate(["run", "-c", cfg], mcp).returncode == 0
        run_sql = {**WRITE, "tool_name": "run_sql", "tool_input": {"sql": "SELECT 1"}}  # README's example tool
        assert run_hookgate(["run", "-c", cfg], run_sql).returncode == 0
        run_sql["tool_input"] = {"sql": "DROP TABLE people"}
        assert run_hookgate(["run", "-c", cfg], run_sql).returncode == 2
        assert run_hookgate(["mode", "read-only", "off", "-c", cfg]).stdout.splitlines()[0] == "read-only: off"
        assert run_hookgate(["run", "-c", cfg], WRITE).returncode == 0
        assert post(server.url, WRITE).json() == {}


@pytest.mark.usefixtures("store_backend")
def test_settings_read_only_keeps_it_on(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        "PreToolUse",
        {"type": "builtin", "name": "readOnly", "writeTools": ["*deploy*"], "readTools": ["mcp__github__create_*"]},
        readOnly=True,
    )
    answer = run_hookgate(["run", "-c", cfg], WRITE)
    assert answer.returncode == 2 and "(settings.readOnly)" in answer.stderr
    off = run_hookgate(["mode", "read-only", "off", "-c", cfg])
    assert off.stdout.splitlines() == [
        "read-only: on (settings.readOnly: true)",
        f"store: {store_shown()}",
        "note: settings.readOnly: true in the config keeps read-only mode on",
    ]
    assert run_hookgate(["run", "-c", cfg], {**WRITE, "tool_name": "mcp__ci__redeploy"}).returncode == 2
    assert run_hookgate(["run", "-c", cfg], {**WRITE, "tool_name": "mcp__github__create_issue"}).returncode == 0


# ---------------------------------------------------------------------------- rateLimit


@pytest.mark.usefixtures("store_backend")
def test_rate_limit_of_5_holds_exactly_across_20_parallel_processes(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        "PreToolUse",
        {"type": "builtin", "name": "rateLimit", "limit": 5, "window": 3600, "per": ["session", "tool"]},
    )
    assert run_hookgate(["validate", "-c", cfg]).returncode == 0  # validate and cache the config first
    data = json.dumps(bash("ls", session="burst")).encode()

    def one(_: int) -> int:
        proc = subprocess.run([*HOOKGATE, "run", "-c", cfg], input=data, capture_output=True, timeout=120, check=False)
        return proc.returncode

    with ThreadPoolExecutor(max_workers=20) as pool:
        codes = list(pool.map(one, range(20)))
    assert sorted(codes) == [0] * 5 + [2] * 15
    with ServeProcess(cfg) as server:  # serve shares the store: this session's window is used up there too
        denied = post(server.url, bash("ls", session="burst")).json()["hookSpecificOutput"]
        assert denied["permissionDecision"] == "deny"
        assert "5 calls per 3600 s reached for session=burst, tool=Bash" in denied["permissionDecisionReason"]
        other = [post(server.url, bash("ls", session="other")).json() for _ in range(6)]
        assert other[:5] == [{}] * 5 and other[5]["hookSpecificOutput"]["permissionDecision"] == "deny"


@pytest.mark.usefixtures("store_backend")
def test_rate_limit_can_ask_and_counts_per_user_and_server(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        "PreToolUse",
        {
            "type": "builtin",
            "name": "rateLimit",
            "limit": 1,
            "window": 600,
            "per": ["user", "server"],
            "onLimit": "ask",
        },
    )
    mcp = {**WRITE, "tool_name": "mcp__jira__search", "tool_input": {"q": "x"}, "user_id": "ana"}
    assert run_hookgate(["run", "-c", cfg], mcp).returncode == 0
    second = run_hookgate(["run", "-c", cfg], {**mcp, "tool_name": "mcp__jira__get", "session_id": "s2"})
    assert second.returncode == 0 and permission(second.stdout) == "ask"
    assert "for user=ana, server=jira" in json.loads(second.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert run_hookgate(["run", "-c", cfg], {**mcp, "user_id": "bo"}).stdout == ""  # another user's window


# ---------------------------------------------------------------------------- truncateOutput


def big_post_tool_use(chars: int) -> dict[str, Any]:
    event = load_case("claude", "posttooluse-bash.json")
    event["tool_response"] = {**event["tool_response"], "stdout": "x" * chars, "stderr": "e" * 10}
    return event


def test_truncate_output_through_run_and_serve(tmp_path: Path) -> None:
    cfg = config(tmp_path, "PostToolUse", {"type": "builtin", "name": "truncateOutput"})
    answer = run_hookgate(["run", "-c", cfg], big_post_tool_use(9000))
    assert answer.returncode == 0, answer.stderr
    output = json.loads(answer.stdout)["hookSpecificOutput"]["updatedToolOutput"]
    marker = "\n[... truncated by hookgate: 1010 of 9010 characters cut]"
    assert output == {**big_post_tool_use(9000)["tool_response"], "stdout": "x" * 8000 + marker, "stderr": ""}
    small = run_hookgate(["run", "-c", cfg], big_post_tool_use(100))
    assert (small.returncode, small.stdout) == (0, "")
    with ServeProcess(cfg) as server:
        served = post(server.url, big_post_tool_use(9000)).json()
        assert served["hookSpecificOutput"]["updatedToolOutput"] == output


def test_truncate_output_on_gemini_and_codex(tmp_path: Path) -> None:
    cfg = config(tmp_path, "PostToolUse", {"type": "builtin", "name": "truncateOutput", "maxChars": 50})
    gemini = {
        "session_id": "g",
        "cwd": "/tmp",
        "hook_event_name": "AfterTool",
        "tool_name": "run_shell_command",
        "tool_input": {"command": "cat big"},
        "tool_response": {"llmContent": "y" * 80, "returnDisplay": ""},
    }
    answer = json.loads(run_hookgate(["run", "--dialect", "gemini", "-c", cfg], gemini).stdout)
    assert answer == {"decision": "deny", "reason": "y" * 50 + "\n[... truncated by hookgate: 30 of 80 characters cut]"}
    codex = {
        "session_id": "c",
        "turn_id": "t",
        "cwd": "/tmp",
        "hook_event_name": "PostToolUse",
        "model": "m",
        "tool_name": "Bash",
        "tool_input": {"command": "cat big"},
        "tool_response": "z" * 60,
        "tool_use_id": "call_1",
    }
    answer = json.loads(run_hookgate(["run", "--dialect", "codex", "-c", cfg], codex).stdout)
    assert answer["decision"] == "block"
    assert answer["reason"] == "z" * 50 + "\n[... truncated by hookgate: 10 of 60 characters cut]"


# ---------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("event", "entry", "message"),
    [
        ("PreToolUse", {"type": "builtin", "name": "readonly"}, "name: Input should be 'readOnly'"),
        ("PreToolUse", {"type": "builtin", "name": "rateLimit", "limit": 5}, "builtin rateLimit needs window"),
        (
            "PreToolUse",
            {"type": "builtin", "name": "readOnly", "maxChars": 10},
            "maxChars: not a field of builtin readOnly",
        ),
        (
            "PreToolUse",
            {"type": "builtin", "name": "truncateOutput"},
            "builtin truncateOutput runs on PostToolUse, not on PreToolUse",
        ),
        (
            "PreToolUse",
            {"type": "builtin", "name": "rateLimit", "limit": 1, "window": 1, "per": ["host"]},
            "per[0]: Input should be",
        ),
        (
            "PostToolUse",
            {"type": "builtin", "name": "truncateOutput", "maxChars": 0},
            "maxChars: Input should be greater than 0",
        ),
    ],
)
def test_validate_reports_bad_builtin_entries(tmp_path: Path, event: str, entry: dict[str, Any], message: str) -> None:
    answer = run_hookgate(["validate", config(tmp_path, event, entry)])
    assert answer.returncode == 1
    assert message in answer.stdout, answer.stdout


def test_builtins_answer_on_the_loop_free_path(tmp_path: Path) -> None:
    """readOnly and rateLimit are synchronous in-process checks: ``hookgate run`` never imports asyncio."""
    cfg = config(
        tmp_path,
        "PreToolUse",
        {"type": "builtin", "name": "readOnly"},
        {"type": "builtin", "name": "rateLimit", "limit": 100, "window": 60},
        readOnly=True,
    )
    code = (
        f"import sys, io, json; sys.argv=['hookgate','run','--config',{cfg!r}]; "
        f"sys.stdin=io.TextIOWrapper(io.BytesIO(json.dumps({bash('rm -rf x')!r}).encode()));"
        "from gateway.cli import main; rc=main(); "
        "print('ASYNCIO' if 'asyncio' in sys.modules else 'NOASYNCIO', rc, file=sys.stderr)"
    )
    for _ in range(2):  # the first run validates and caches the config; the second is the hot path
        proc = subprocess.run([HOOKGATE[0], "-c", code], capture_output=True, text=True, check=False)
    assert "NOASYNCIO 2" in proc.stderr, proc.stderr


def test_a_store_that_cannot_be_opened_fails_closed_only_when_asked(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    limit = {"type": "builtin", "name": "rateLimit", "limit": 5, "window": 60}
    open_cfg = config(tmp_path, "PreToolUse", limit, name="open.json", stateDir=str(not_a_dir))
    answer = run_hookgate(["run", "-c", open_cfg], bash("ls"))
    assert answer.returncode == 0 and "handler builtin:rateLimit error" in answer.stderr, answer.stderr
    closed_cfg = config(
        tmp_path, "PreToolUse", {**limit, "failClosed": True}, name="closed.json", stateDir=str(not_a_dir)
    )
    answer = run_hookgate(["run", "-c", closed_cfg], bash("ls"))
    assert answer.returncode == 2 and permission(answer.stdout) == "deny", answer.stderr
