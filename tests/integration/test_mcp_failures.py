"""How ``mcp_tool`` calls fail against real stdio servers (tests/fakes/mcp_raw_server.py), and what is said
about it: a stdout line that is not JSON-RPC and the SDK's own log records are one redacted line on
``hookgate run``'s stderr (which Claude Code hands the model on exit 2), never a multi-line dump holding
the server's secret; a server's JSON-RPC error -32000 is its error, not a closed connection, and its
session is kept; a call that hangs is cancelled (``notifications/cancelled``) and its session replaced."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gateway.api import Gateway
from gateway.config import load_config
from gateway.errors import HandlerError
from handlers.mcp_sessions import McpSessions
from tests.conftest import run_hookgate
from tests.fakes.mcp_helpers import ROOT, alive, event

RAW = str(ROOT / "tests" / "fakes" / "mcp_raw_server.py")
SECRET = "sk-live-abc123"


def config(tmp_path: Path, do: str, env: dict[str, str] | None = None, **args: Any) -> Path:
    """A config whose PreToolUse/Bash hook calls the raw server's ``act`` with ``do`` (failClosed)."""
    hook = {"type": "mcp_tool", "id": "mt", "server": "raw", "tool": "act", "input": {"do": do, **args}}
    doc = {
        "mcpServers": {"raw": {"command": sys.executable, "args": [RAW], "env": env or {}}},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{**hook, "timeout": 20, "failClosed": True}]}]},
    }
    path = tmp_path / "hookgate.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_startup_banner_on_stdout_is_one_redacted_line_on_stderr(tmp_path: Path) -> None:
    path = config(tmp_path, "ok", {"FAKE_RAW_BANNER": f"starting; api_key={SECRET}"})
    proc = run_hookgate(["run", "--config", str(path)], event("Bash", command="ls"))
    assert proc.returncode == 0, proc.stderr  # the banner is ignored, the call is answered
    assert SECRET not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert "MCP server 'raw' wrote a line that is not a JSON-RPC message" in lines[0]
    assert "api_key=[REDACTED" in lines[0]
    assert "validation error" not in proc.stderr and "pydantic" not in proc.stderr


def test_the_sdks_own_log_records_are_one_redacted_line_each(tmp_path: Path) -> None:
    # an invalid notification: the SDK logs "Failed to validate notification" with its traceback and
    # pydantic's dump of the input, which holds what the server sent
    path = config(tmp_path, "bad_notification", data=f"token={SECRET}")
    proc = run_hookgate(["run", "--config", str(path)], event("Bash", command="ls"))
    assert proc.returncode == 0, proc.stderr
    assert SECRET not in proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("hookgate: client: ") and "Failed to validate notification" in lines[0]


def manager(tmp_path: Path, **env: str) -> McpSessions:
    doc = {"mcpServers": {"raw": {"command": sys.executable, "args": [RAW], "env": env}}}
    path = tmp_path / "servers.json"
    path.write_text(json.dumps(doc))
    return McpSessions(load_config([str(path)]).mcp_servers, mode="serve")


async def pid_of(sessions: McpSessions) -> int:
    result, _ = await sessions.call_tool("raw", "act", {"do": "pid"})
    return int(getattr(result.content[0], "text", ""))


@pytest.mark.parametrize("code", [-32000, -32001])
async def test_a_servers_json_rpc_error_is_reported_as_its_own_and_the_session_is_kept(
    tmp_path: Path, code: int
) -> None:
    # -32000 is also the SDK's code for a closed connection: the transport, which did not end, tells them apart
    sessions = manager(tmp_path)
    try:
        pid = await pid_of(sessions)
        with pytest.raises(HandlerError) as caught:
            await sessions.call_tool("raw", "act", {"do": "rpc_error", "code": code, "message": "db down"})
        assert str(caught.value) == f"MCP error {code} from raw/act: db down"
        assert caught.value.meta["mcp_error"] == code
        assert await pid_of(sessions) == pid  # the same warm session, the same server process
        assert sessions.starts == 1
    finally:
        await sessions.aclose()


def test_a_minus_32000_error_through_hookgate_run_names_the_servers_message(tmp_path: Path) -> None:
    path = config(tmp_path, "rpc_error", code=-32000, message="db down")
    proc = run_hookgate(["run", "--config", str(path)], event("Bash", command="ls"))
    assert proc.returncode == 2  # failClosed
    reason = json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "MCP error -32000 from raw/act: db down" in reason
    assert "closed the connection" not in reason + proc.stderr


def starts(log: Path) -> list[int]:
    return [int(line.split()[1]) for line in log.read_text().splitlines() if line.startswith("start ")]


async def until(check: Any, within: float = 15.0) -> bool:
    deadline = time.monotonic() + within  # a bound on a wait, not a timing assertion
    while not check():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


async def test_a_call_that_hangs_is_cancelled_and_its_session_replaced_under_serve(tmp_path: Path) -> None:
    # a single-threaded server stuck in its tool answers nothing more: without the replacement every later
    # call would time out too, until serve restarts
    log = tmp_path / "raw.log"
    hook = {"type": "mcp_tool", "server": "raw", "tool": "act", "timeout": 1, "failClosed": True}
    hook["input"] = {"do": "${tool_input.command}", "seconds": 2}
    doc = {
        "mcpServers": {"raw": {"command": sys.executable, "args": [RAW], "env": {"FAKE_RAW_LOG": str(log)}}},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]},
    }
    path = tmp_path / "hookgate.json"
    path.write_text(json.dumps(doc))
    async with Gateway.from_file(str(path), mode="serve") as gateway:
        first = await gateway.dispatch(event("Bash", command="ok"))
        assert first.results[0].status == "ok" and not first.denied
        hung = await gateway.dispatch(event("Bash", command="hang"))
        assert hung.denied and hung.results[0].status == "timeout"
        after = await gateway.dispatch(event("Bash", command="ok"))
        assert after.results[0].status == "ok" and not after.denied, after.results[0].message
        again = await gateway.dispatch(event("Bash", command="ok"))
        assert again.results[0].status == "ok"
        old, new = starts(log)  # exactly one replacement
        assert await until(lambda: not alive(old))  # the stuck server was stopped
        assert alive(new)
    # the spec's cancellation went out: the stuck server read it once it woke up, before it was stopped
    assert "notifications/cancelled" in log.read_text().splitlines()


async def test_a_timed_out_call_through_call_tool_gives_the_session_up(tmp_path: Path) -> None:
    sessions = manager(tmp_path)
    try:
        pid = await pid_of(sessions)
        loop = asyncio.get_running_loop()
        with pytest.raises(TimeoutError):  # (without the deadline, the answer comes after 5 s)
            await sessions.call_tool("raw", "act", {"do": "hang", "seconds": 5}, deadline=loop.time() + 0.5)
        assert await pid_of(sessions) != pid
        assert sessions.starts == 2
        assert await until(lambda: not alive(pid))
    finally:
        await sessions.aclose()


def test_a_server_that_floods_stdout_is_given_up_within_the_deadline(tmp_path: Path) -> None:
    """`yes` as a server (a log written to stdout does the same): read for ever, it held a call 3-7 times
    past its timeout and wrote tens of MB to stderr; given up after MAX_IGNORED lines, the deny comes
    within the deadline and stderr stays a few lines."""
    import shutil

    from handlers.mcp_stdio import MAX_IGNORED

    yes = shutil.which("yes")
    assert yes is not None
    config = tmp_path / "hookgate.yaml"
    config.write_text(
        f"mcpServers:\n  y: {{command: {yes}, startTimeout: 3}}\nhooks:\n  PreToolUse:\n    - matcher: Bash\n"
        "      hooks:\n        - {type: mcp_tool, id: m, server: y, tool: x, timeout: 4, failClosed: true}\n"
    )
    bash = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": "/tmp"}
    started = time.monotonic()
    proc = run_hookgate(["run", "--config", str(config)], bash, timeout=60)
    assert time.monotonic() - started < 4 + 4  # the timeout, plus stopping the server
    assert proc.returncode == 2 and '"permissionDecision":"deny"' in proc.stdout
    assert len(proc.stderr) < 4000 and f"wrote {MAX_IGNORED} lines in a row" in proc.stderr, proc.stderr[:500]


def test_an_answer_over_the_line_cap_fails_the_call_and_one_under_it_is_read(tmp_path: Path) -> None:
    """A stdio answer is capped like a command hook's stdout (16 MiB): over it, the call fails (a deny with
    failClosed) instead of being held in memory whole."""
    from handlers.mcp_stdio import MAX_LINE

    over = run_hookgate(["run", "--config", str(config(tmp_path, "huge", size=MAX_LINE))], event("Bash", command="ls"))
    assert over.returncode == 2 and '"permissionDecision":"deny"' in over.stdout, over.stderr[-500:]
    assert f"longer than {MAX_LINE} bytes" in over.stderr
    under = run_hookgate(["run", "--config", str(config(tmp_path, "huge", size=1 << 20))], event("Bash", command="ls"))
    assert under.returncode == 0, under.stderr[-500:]
