"""hookgate's stdio transport for MCP servers (handlers/mcp_stdio.py) against a server that breaks the protocol
on purpose (tests/fakes/mcp_raw_server.py): every way an answer can go wrong fails the call (closed with
``failClosed``), a dead or deaf server is replaced, and no server process (nor its process group) outlives
the session, even when the owner is cancelled during shutdown. Also the shipped policy validator on both
protocol eras (its own stdio streams: ``serve_loop`` for the handshake era, ``Server.run`` otherwise)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import handlers.mcp_stdio as mcp_stdio
from gateway.api import Gateway
from gateway.config import load_config
from gateway.errors import HandlerError
from handlers.mcp_sessions import McpSessions
from tests.fakes.mcp_helpers import ROOT, alive, event

RAW = str(ROOT / "tests" / "fakes" / "mcp_raw_server.py")
POLICY = str(ROOT / "configs" / "validators" / "policy.py")


def manager(tmp_path: Path, **env: str) -> McpSessions:
    doc = {"mcpServers": {"raw": {"command": sys.executable, "args": [RAW], "env": env}}}
    path = tmp_path / "hookgate.json"
    path.write_text(json.dumps(doc))
    return McpSessions(load_config([str(path)]).mcp_servers, mode="serve")


async def act(sessions: McpSessions, do: str, **args: Any) -> str:
    result, _ = await sessions.call_tool("raw", "act", {"do": do, **args})
    assert not result.is_error
    return str(getattr(result.content[0], "text", ""))


async def gone(pid: int, within: float = 15.0) -> bool:
    deadline = time.monotonic() + within  # a bound on a wait, not a timing assertion
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


async def test_a_line_that_is_not_json_rpc_is_dropped_and_the_call_runs_into_its_deadline(tmp_path: Path) -> None:
    sessions = manager(tmp_path)
    try:
        assert await act(sessions, "ok") == "{}"
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(act(sessions, "garbage"), 0.5)
        assert await act(sessions, "ok") == "{}"  # the session lives on, as with the SDK's stdio_client
        assert sessions.starts == 1
    finally:
        await sessions.aclose()


async def test_an_answer_that_is_not_a_tool_result_fails_the_call_and_the_session_is_replaced(tmp_path: Path) -> None:
    sessions = manager(tmp_path)
    try:
        with pytest.raises(HandlerError, match="MCP call raw/act failed: ValidationError"):
            await act(sessions, "bad_result")
        assert await act(sessions, "ok") == "{}"
        assert sessions.starts == 2
    finally:
        await sessions.aclose()


async def test_a_line_longer_than_max_line_closes_the_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mcp_stdio, "MAX_LINE", 4096)
    sessions = manager(tmp_path)
    try:
        assert len(await act(sessions, "huge", size=1000)) == 1000
        with pytest.raises(HandlerError, match="closed the connection"):
            await act(sessions, "huge", size=10_000)
        assert await act(sessions, "ok") == "{}"
        assert sessions.starts == 2
    finally:
        await sessions.aclose()


async def test_a_server_that_closes_its_stdout_is_replaced_and_stopped(tmp_path: Path) -> None:
    pid_file = tmp_path / "raw.pid"
    sessions = manager(tmp_path, FAKE_RAW_PID_FILE=str(pid_file))
    try:
        await act(sessions, "ok")
        pid = int(pid_file.read_text())
        with pytest.raises(HandlerError, match="closed the connection"):
            await act(sessions, "close_stdout")
        assert await act(sessions, "ok") == "{}"
        assert sessions.starts == 2
        assert await gone(pid)  # it outlived its stdin: its process group was terminated
    finally:
        await sessions.aclose()


async def test_a_server_that_closes_its_stdin_fails_the_next_call_and_is_replaced(tmp_path: Path) -> None:
    pid_file = tmp_path / "raw.pid"
    sessions = manager(tmp_path, FAKE_RAW_PID_FILE=str(pid_file))
    try:
        await act(sessions, "ok")  # the first call also lists the tools (the SDK fetches the output schemas)
        assert await act(sessions, "close_stdin") == "{}"  # answered after closing: the answer is still read
        pid = int(pid_file.read_text())
        # the request is refused (the pipe is known to be gone) or, written into the pipe before that was
        # known, fails when the session is given up (STDIN_GRACE later): either way it is not left waiting
        with pytest.raises(HandlerError, match="closed the connection"):
            await act(sessions, "ok")
        assert await act(sessions, "ok") == "{}"
        assert sessions.starts == 2
        assert await gone(pid)
    finally:
        await sessions.aclose()


async def test_aclose_terminates_the_process_group_of_a_server_that_outlives_its_stdin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mcp_stdio, "PROCESS_TERMINATION_TIMEOUT", 0.2)
    pid_file = tmp_path / "raw.pid"
    sessions = manager(tmp_path, FAKE_RAW_LINGER="1", FAKE_RAW_PID_FILE=str(pid_file))
    child = int(await act(sessions, "child"))
    pid = int(pid_file.read_text())
    assert alive(pid) and alive(child)
    await sessions.aclose()
    assert not alive(pid)
    assert await gone(child)  # a member of the server's process group: SIGTERM reached it too


async def test_shutdown_runs_to_its_end_when_the_owner_is_cancelled_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mcp_stdio, "PROCESS_TERMINATION_TIMEOUT", 0.3)
    pid_file = tmp_path / "raw.pid"
    sessions = manager(tmp_path, FAKE_RAW_LINGER="1", FAKE_RAW_PID_FILE=str(pid_file))
    await act(sessions, "ok")
    pid = int(pid_file.read_text())
    owners = list(sessions._owners)
    closing = asyncio.ensure_future(sessions.aclose())
    await asyncio.sleep(0.1)  # the owner waits for the server to exit
    closing.cancel()  # gather cancels the owners: shutdown goes on, then the cancellation is re-raised
    await asyncio.gather(*owners, return_exceptions=True)
    assert all(owner.cancelled() for owner in owners)
    assert not alive(pid)


async def test_broken_answers_fail_closed_through_the_gateway(tmp_path: Path) -> None:
    def hook(matcher: str, do: str) -> dict[str, Any]:
        fields = {"server": "raw", "tool": "act", "input": {"do": do}, "timeout": 0.5, "failClosed": True}
        return {"matcher": matcher, "hooks": [{"type": "mcp_tool", **fields}]}

    doc = {
        "mcpServers": {"raw": {"command": sys.executable, "args": [RAW]}},
        "hooks": {"PreToolUse": [hook("Garbage", "garbage"), hook("Bad", "bad_result"), hook("Ok", "ok")]},
    }
    path = tmp_path / "hookgate.json"
    path.write_text(json.dumps(doc))
    async with Gateway.from_file(str(path), mode="serve") as gateway:
        assert not (await gateway.dispatch(event("Ok"))).denied
        for tool, status in (("Garbage", "timeout"), ("Bad", "error")):
            decision = await gateway.dispatch(event(tool))
            assert decision.denied, decision
            assert decision.results[0].status == status


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
async def test_the_policy_validator_serves_both_protocol_eras(tmp_path: Path, protocol: str) -> None:
    doc = {"mcpServers": {"policy": {"command": sys.executable, "args": ["-I", POLICY], "protocol": protocol}}}
    path = tmp_path / "hookgate.json"
    path.write_text(json.dumps(doc))
    sessions = McpSessions(load_config([str(path)]).mcp_servers, mode="serve")
    where = {"cwd": str(tmp_path), "project_dir": str(tmp_path)}
    try:
        calls = [
            sessions.call_tool("policy", "check_command", {"command": command, **where})
            for command in ("rm -rf /", "ls -la", "echo hi > /etc/motd", "git status")
        ]
        answers = [result.structured_content for result, _ in await asyncio.gather(*calls)]
        client = sessions.sessions("policy")[0].ready.result()
        assert client.protocol_version == ("2025-11-25" if protocol == "legacy" else "2026-07-28")
    finally:
        await sessions.aclose()
    denied = [bool(a and a["hookSpecificOutput"]["permissionDecision"] == "deny") for a in answers]
    assert denied == [True, False, True, False]


FROZEN = """
import asyncio, gc, json, sys
sys.path.insert(0, sys.argv[1])
from gateway.config import load_config
from handlers.mcp_sessions import McpSessions

async def main():
    servers = load_config([sys.argv[2]]).mcp_servers
    sessions = McpSessions(servers, mode="serve")
    before = gc.get_freeze_count()
    await sessions.call_tool("raw", "act", {"do": "ok"})
    after = gc.get_freeze_count()
    await sessions.aclose()
    print(json.dumps([before, after, "mcp.types" in sys.modules]))

asyncio.run(main())
"""


def test_the_sdk_import_is_frozen_out_of_the_cyclic_collector(tmp_path: Path) -> None:
    doc = {"mcpServers": {"raw": {"command": sys.executable, "args": [RAW]}}}
    path = tmp_path / "hookgate.json"
    path.write_text(json.dumps(doc))
    done = subprocess.run(
        [sys.executable, "-c", FROZEN, str(ROOT), str(path)], capture_output=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    before, after, imported = json.loads(done.stdout)
    assert before == 0 and imported
    assert after > 40_000  # the SDK's modules and models: a full collection no longer walks them
