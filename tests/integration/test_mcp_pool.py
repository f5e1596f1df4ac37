"""A pool of warm sessions to one MCP server (``sessions: N`` in ``mcpServers``) under a serve-mode Gateway:
the pool grows when every session is busy, calls go to the least busy session, a session that dies mid-call
fails that call (closed, with ``failClosed``) while the others keep serving, and it is replaced on demand.
Real stdio servers (tests/fakes/mcp_server.py); also the ``auto`` protocol setting."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from gateway.api import Gateway
from gateway.decision import Decision, HandlerResult
from handlers.mcp_sessions import RESOURCE, McpSessions
from tests.fakes.mcp_helpers import alive, event, stdio_server

pytestmark = pytest.mark.asyncio(loop_scope="module")


def one(decision: Decision) -> HandlerResult:
    assert len(decision.results) == 1, decision.results
    return decision.results[0]


def hook(matcher: str, server: str, tool: str, **fields: Any) -> dict[str, Any]:
    return {"matcher": matcher, "hooks": [{"type": "mcp_tool", "server": server, "tool": tool, **fields}]}


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def gateway(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Gateway]:
    folder = tmp_path_factory.mktemp("mcp-pool")
    doc = {
        "mcpServers": {
            "pooled": {**stdio_server(), "sessions": 2},
            "modern": {**stdio_server(), "protocol": "auto"},
        },
        "hooks": {
            "PreToolUse": [
                hook("Pause", "pooled", "pause", input={"seconds": "${tool_input.seconds}"}, timeout=10),
                hook("Who", "pooled", "whoami"),
                hook("Crash", "pooled", "crash", failClosed=True),
                hook("Modern", "modern", "whoami"),
            ]
        },
    }
    path = folder / "hookgate.json"
    path.write_text(json.dumps(doc))
    gw = Gateway.from_file(str(path), mode="serve")
    yield gw
    await gw.aclose()


def manager(gateway: Gateway) -> McpSessions:
    found = gateway.context.get_resource(RESOURCE, lambda: None)
    assert isinstance(found, McpSessions)
    return found


def pid_of(result: HandlerResult) -> int:
    assert result.status == "ok", result.message
    assert result.verdict is not None and result.verdict.additional_context
    return int(result.verdict.additional_context.split()[0].removeprefix("pid="))


async def pause(gateway: Gateway, seconds: float) -> HandlerResult:
    return one(await gateway.dispatch(event("Pause", seconds=seconds)))


async def who(gateway: Gateway) -> HandlerResult:
    return one(await gateway.dispatch(event("Who")))


async def two_ready(gateway: Gateway) -> None:
    """Keep one call in flight until the pool has grown to two ready sessions."""
    deadline = time.monotonic() + 30
    while True:
        ready = [s for s in manager(gateway).sessions("pooled") if s.ready.done() and not s.ready.exception()]
        if len(ready) == 2:
            return
        assert time.monotonic() < deadline, "the pool did not grow to 2 sessions"
        busy = asyncio.ensure_future(pause(gateway, 0.3))
        await asyncio.sleep(0.05)
        await who(gateway)  # every ready session is busy: one more starts in the background
        await busy


async def test_one_session_while_calls_come_one_at_a_time(gateway: Gateway) -> None:
    pids = {pid_of(await who(gateway)) for _ in range(5)}
    assert len(pids) == 1
    assert len(manager(gateway).sessions("pooled")) == 1


async def test_pool_grows_when_busy_and_sends_calls_to_the_idle_session(gateway: Gateway) -> None:
    await two_ready(gateway)
    starts = manager(gateway).starts
    busy = asyncio.ensure_future(pause(gateway, 1.0))
    await asyncio.sleep(0.1)
    idle = await who(gateway)  # the other session answers at once
    assert idle.meta["session"] == "warm"
    busy_pid, idle_pid = pid_of(await busy), pid_of(idle)
    assert busy_pid != idle_pid and alive(busy_pid) and alive(idle_pid)
    many = await asyncio.gather(*(pause(gateway, 0.2) for _ in range(6)))
    assert {pid_of(r) for r in many} == {busy_pid, idle_pid}  # spread over both
    assert manager(gateway).starts == starts  # never more than `sessions`
    assert len(manager(gateway).sessions("pooled")) == 2


async def test_a_session_dying_mid_call_fails_closed_and_is_replaced(gateway: Gateway) -> None:
    await two_ready(gateway)
    busy = asyncio.ensure_future(pause(gateway, 1.0))
    await asyncio.sleep(0.1)
    crashed = await gateway.dispatch(event("Crash"))  # lands on the idle session, which exits mid-call
    result = one(crashed)
    assert result.status == "error" and "closed the connection during the call" in (result.message or "")
    assert crashed.permission == "deny"  # failClosed: a dead validator never allows
    survivor = pid_of(await busy)  # the other session's call was not disturbed
    assert [pid_of(await who(gateway)) for _ in range(3)] == [survivor] * 3
    starts = manager(gateway).starts
    await two_ready(gateway)  # under load again, the pool is refilled
    assert manager(gateway).starts == starts + 1
    busy = asyncio.ensure_future(pause(gateway, 1.0))
    await asyncio.sleep(0.1)
    fresh = pid_of(await who(gateway))
    assert fresh != survivor and pid_of(await busy) == survivor  # the older session comes first when both idle


async def test_auto_protocol_setting_reaches_the_server(gateway: Gateway) -> None:
    result = one(await gateway.dispatch(event("Modern")))
    assert result.status == "ok", result.message
    assert pid_of(result) > 0


async def test_hookgate_run_keeps_one_session_per_server() -> None:
    servers = {"pooled": {**stdio_server(), "sessions": 4}}
    assert McpSessions(servers, mode="run").pool_size("pooled") == 1
    assert McpSessions(servers, mode="serve").pool_size("pooled") == 4
