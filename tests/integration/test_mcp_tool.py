"""The mcp_tool handler against real MCP servers made with the mcp SDK: over stdio (a subprocess) and over
streamable HTTP and SSE (uvicorn on 127.0.0.1 in a thread), through a serve-mode Gateway that keeps the
sessions warm, plus slow starts and `hookgate run` (a session per run)."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from gateway.api import Gateway
from gateway.decision import Decision, HandlerResult
from gateway.dialects import render
from handlers.mcp_sessions import RESOURCE
from tests.fakes.mcp_helpers import alive, event, stdio_server

pytestmark = pytest.mark.asyncio(loop_scope="module")


# ---------------------------------------------------------------------------- helpers


def one(decision: Decision) -> HandlerResult:
    assert len(decision.results) == 1, decision.results
    return decision.results[0]


def groups(prefix: str, server: str) -> list[dict[str, Any]]:
    """One matcher group per scenario; the event's tool_name picks the scenario (e.g. "WebDeny")."""

    def group(name: str, tool: str, **fields: Any) -> dict[str, Any]:
        return {
            "matcher": f"{prefix}{name}",
            "hooks": [
                {"type": "mcp_tool", "server": server, "tool": tool, "id": f"{prefix or 'stdio'}-{name}", **fields}
            ],
        }

    return [
        group("Deny", "deny", input={"reason": "no ${tool_input.command}"}),
        group("Allow", "allow"),
        group("Nothing", "nothing"),
        group("Text", "text_answer", input={"text": "${tool_input.text}"}),
        group("Wrapped", "wrapped_text", input={"text": "${tool_input.text}"}),
        group("Echo", "echo", input={"value": "${tool_input}", "label": "${tool_name} n=${tool_input.n}"}),
        group("Missing", "echo", input={"value": "${tool_input.nope}"}),
        group("Fail", "fail"),
        group("FailClosed", "fail", failClosed=True),
        group("Hang", "hang", timeout=0.5),
        group("NoTool", "no_such_tool"),
        group("Who", "whoami"),
        group("Barrier", "barrier", input={"n": 4}),
        group("Crash", "crash"),
        group(
            "Split",
            "split_answer",
            input={"structured": "${tool_input.structured}", "text": "${tool_input.text}"},
            failClosed=True,
        ),
    ]


class _HeaderLog:
    """ASGI middleware keeping the headers of every request (to check header interpolation)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[dict[str, str]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.seen.append({k.decode(): v.decode() for k, v in scope["headers"]})
        await self.app(scope, receive, send)


@pytest.fixture(scope="module")
def web_servers() -> Iterator[dict[str, Any]]:
    """The fake validator over streamable HTTP and over SSE, each a uvicorn server on 127.0.0.1."""
    import uvicorn

    from tests.fakes.mcp_server import build_server

    http_app = _HeaderLog(build_server().streamable_http_app())
    sse_app = build_server().sse_app()
    servers, threads, ports = [], [], []
    for app in (http_app, sse_app):
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        servers.append(server)
        threads.append(thread)
        ports.append(server.servers[0].sockets[0].getsockname()[1])
    yield {
        "http": f"http://127.0.0.1:{ports[0]}/mcp",
        "sse": f"http://127.0.0.1:{ports[1]}/sse",
        "headers": http_app.seen,
    }
    for server in servers:
        server.should_exit = True
    for thread in threads:
        thread.join(5)


@pytest.fixture(scope="module")
def config_path(tmp_path_factory: pytest.TempPathFactory, web_servers: dict[str, Any]) -> Path:
    folder = tmp_path_factory.mktemp("mcp-config")
    os.environ["HOOKGATE_TEST_TOKEN"] = "s3cret"
    doc = {
        "mcpServers": {
            "fake": stdio_server(FAKE_MCP_GREETING="hello"),
            "web": {
                "type": "http",
                "url": web_servers["http"],
                "allowedEnvVars": ["HOOKGATE_TEST_TOKEN"],
                "headers": {"Authorization": "Bearer ${HOOKGATE_TEST_TOKEN}", "X-Other": "[$HOME]"},
            },
            "events": {"type": "sse", "url": web_servers["sse"]},
            "down": {"type": "http", "url": "http://127.0.0.1:9/mcp", "startTimeout": 5},
            "slow": stdio_server(FAKE_MCP_START_DELAY="1.5", FAKE_MCP_PID_FILE=str(folder / "slow.pid")),
        },
        "hooks": {
            "PreToolUse": [
                *groups("", "fake"),
                *groups("Web", "web"),
                *groups("Sse", "events")[:4],
                {"matcher": "Down", "hooks": [{"type": "mcp_tool", "server": "down", "tool": "deny", "timeout": 5}]},
                {
                    "matcher": "SlowFast",
                    "hooks": [{"type": "mcp_tool", "server": "slow", "tool": "whoami", "timeout": 0.3}],
                },
                {
                    "matcher": "SlowPatient",
                    "hooks": [{"type": "mcp_tool", "server": "slow", "tool": "whoami", "timeout": 20}],
                },
            ]
        },
    }
    path = folder / "hookgate.json"
    path.write_text(json.dumps(doc))
    return path


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def gateway(config_path: Path) -> AsyncIterator[Gateway]:
    gw = Gateway.from_file(str(config_path), mode="serve")
    yield gw
    await gw.aclose()


async def who(gateway: Gateway, prefix: str = "") -> str:
    result = one(await gateway.dispatch(event(f"{prefix}Who")))
    assert result.status == "ok", result.message
    assert result.verdict is not None and result.verdict.additional_context
    return result.verdict.additional_context.split()[0]


# ---------------------------------------------------------------------------- answers (stdio, http, sse)


@pytest.mark.parametrize("prefix", ["", "Web", "Sse"])
async def test_structured_deny_with_substituted_reason(gateway: Gateway, prefix: str) -> None:
    decision = await gateway.dispatch(event(f"{prefix}Deny", command="rm -rf /"))
    assert decision.permission == "deny"
    assert decision.permission_reason == "no rm -rf /"
    assert one(decision).meta["answer"] == "structured"
    code, out, _ = render(decision, "claude")
    assert code == 2 and json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"


@pytest.mark.parametrize("prefix", ["", "Web", "Sse"])
async def test_structured_allow(gateway: Gateway, prefix: str) -> None:
    decision = await gateway.dispatch(event(f"{prefix}Allow"))
    assert decision.permission == "allow" and one(decision).status == "ok"


@pytest.mark.parametrize("prefix", ["", "Web"])
async def test_empty_answer_is_no_decision(gateway: Gateway, prefix: str) -> None:
    decision = await gateway.dispatch(event(f"{prefix}Nothing"))
    assert one(decision).status == "ok" and decision.is_empty


@pytest.mark.parametrize("prefix", ["", "Web", "Sse"])
async def test_text_content_is_read_like_command_stdout(gateway: Gateway, prefix: str) -> None:
    deny = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "said in text",
        }
    }
    decision = await gateway.dispatch(event(f"{prefix}Text", text=json.dumps(deny)))
    assert decision.permission == "deny" and decision.permission_reason == "said in text"
    assert one(decision).meta["answer"] == "text"
    plain = await gateway.dispatch(event(f"{prefix}Text", text="looks fine to me"))  # not JSON: no decision
    assert one(plain).status == "ok" and plain.is_empty
    broken = one(await gateway.dispatch(event(f"{prefix}Text", text="{not json")))
    assert broken.status == "error" and "not valid JSON" in (broken.message or "")


async def test_sdk_wrapped_string_result_is_unwrapped(gateway: Gateway) -> None:
    text = json.dumps({"decision": "block", "reason": "wrapped"})
    decision = await gateway.dispatch(event("Wrapped", text=text))
    assert decision.permission == "deny" and decision.permission_reason == "wrapped"


@pytest.mark.parametrize("prefix", ["", "Web"])
async def test_is_error_is_a_non_blocking_failure_unless_fail_closed(gateway: Gateway, prefix: str) -> None:
    decision = await gateway.dispatch(event(f"{prefix}Fail"))
    result = one(decision)
    assert result.status == "error" and "isError" in (result.message or "")
    assert result.meta.get("is_error") is True
    assert decision.permission is None and not decision.block
    closed = await gateway.dispatch(event(f"{prefix}FailClosed"))
    assert closed.permission == "deny" and "FailClosed" in (closed.permission_reason or "")


@pytest.mark.parametrize("prefix", ["", "Web"])
async def test_structured_content_and_text_that_disagree_the_tighter_stands(gateway: Gateway, prefix: str) -> None:
    # found by a tester: structuredContent {} beside a text deny was read as no objection
    deny = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"}}
    decision = await gateway.dispatch(event(f"{prefix}Split", structured={}, text=json.dumps(deny)))
    result = one(decision)
    assert result.status == "ok" and result.meta["answer"] == "text"
    assert decision.permission == "deny"  # the text's deny, never the structured silence
    same = await gateway.dispatch(event(f"{prefix}Split", structured=deny, text=json.dumps(deny, indent=2)))
    assert one(same).status == "ok" and same.permission == "deny"
    summary = await gateway.dispatch(event(f"{prefix}Split", structured={}, text="no objection"))
    assert one(summary).status == "ok" and summary.is_empty


@pytest.mark.parametrize("prefix", ["", "Web"])
async def test_missing_tool_is_a_clear_error(gateway: Gateway, prefix: str) -> None:
    result = one(await gateway.dispatch(event(f"{prefix}NoTool")))
    assert result.status == "error" and "no_such_tool" in (result.message or "")


# ---------------------------------------------------------------------------- ${path} substitution


async def test_substitution_keeps_json_types_and_embeds_text(gateway: Gateway) -> None:
    decision = await gateway.dispatch(event("Echo", n=3, nested={"a": [1, True, None]}))
    sent = json.loads(decision.additional_context[0])
    assert sent["value"] == {"n": 3, "nested": {"a": [1, True, None]}}  # an object stays an object
    assert sent["label"] == "Echo n=3"


async def test_missing_path_names_what_the_event_has(gateway: Gateway) -> None:
    result = one(await gateway.dispatch(event("Missing", command="ls")))
    assert result.status == "error"
    assert result.message == (
        "input.value: ${tool_input.nope} is not in this PreToolUse event: tool_input has no 'nope' (it has: command)"
    )


# ---------------------------------------------------------------------------- sessions


async def test_session_is_kept_warm_and_shared(gateway: Gateway) -> None:
    first = await who(gateway)
    again = one(await gateway.dispatch(event("Who")))
    assert await who(gateway) == first
    assert again.meta["session"] == "warm"
    assert "hello" in (again.verdict.additional_context or "")  # the configured env reached the server


@pytest.mark.parametrize("prefix", ["", "Web"])
async def test_concurrent_calls_run_at_once_on_one_session(gateway: Gateway, prefix: str) -> None:
    await who(gateway, prefix)
    manager = gateway.context.get_resource(RESOURCE, lambda: None)
    starts = manager.starts
    decisions = await asyncio.gather(*(gateway.dispatch(event(f"{prefix}Barrier")) for _ in range(4)))
    assert [d.additional_context for d in decisions] == [["met 4"]] * 4  # all four were in flight together
    assert manager.starts == starts


async def test_hanging_tool_times_out_and_the_session_is_replaced(gateway: Gateway) -> None:
    # a server stuck in a tool may answer nothing more (a single-threaded one cannot): a session with a call
    # past its deadline is given up, and the next call starts the server again and is answered
    before = await who(gateway)
    result = one(await gateway.dispatch(event("Hang")))
    assert result.status == "timeout"
    restarted = one(await gateway.dispatch(event("Who")))
    assert restarted.status == "ok" and restarted.meta["session"] == "restarted"
    assert await who(gateway) != before


async def test_crash_mid_call_fails_that_call_and_the_next_call_restarts(gateway: Gateway) -> None:
    before = await who(gateway)
    crashed = one(await gateway.dispatch(event("Crash")))
    assert crashed.status == "error"
    assert "closed the connection during the call" in (crashed.message or "")
    assert "fatal: crash requested" in (crashed.message or "")  # the server's last stderr line
    restarted = one(await gateway.dispatch(event("Who")))
    assert restarted.status == "ok" and restarted.meta["session"] == "restarted"
    assert await who(gateway) != before


async def test_headers_interpolate_only_allowed_env_vars(gateway: Gateway, web_servers: dict[str, Any]) -> None:
    await who(gateway, "Web")
    posts = [h for h in web_servers["headers"] if "authorization" in h]
    assert posts and posts[-1]["authorization"] == "Bearer s3cret"
    assert posts[-1]["x-other"] == "[]"  # $HOME is not in allowedEnvVars: empty


async def test_unreachable_server_fails_fast_after_backoff(gateway: Gateway) -> None:
    first = one(await gateway.dispatch(event("Down")))
    assert first.status == "error" and "did not start" in (first.message or "")
    assert "ConnectError" in (first.message or "") or "connect" in (first.message or "").lower()
    again = one(await gateway.dispatch(event("Down")))
    assert again.status == "error" and "not retried for" in (again.message or "")


async def test_slow_start_never_exceeds_the_deadline_and_keeps_starting(gateway: Gateway, config_path: Path) -> None:
    quick = one(await gateway.dispatch(event("SlowFast")))
    assert quick.status == "timeout"
    patient = one(await gateway.dispatch(event("SlowPatient")))
    assert patient.status == "ok"
    assert patient.meta["session"] in ("starting", "warm")  # the start begun by the timed-out call went on


async def test_aclose_stops_a_server_that_is_still_starting(config_path: Path) -> None:
    pid_file = config_path.parent / "slow.pid"
    pid_file.unlink(missing_ok=True)
    gw = Gateway.from_file(str(config_path), mode="serve")
    result = one(await gw.dispatch(event("SlowFast")))
    assert result.status == "timeout"
    pid = int(pid_file.read_text())
    assert alive(pid)
    await gw.aclose()
    assert not alive(pid)
