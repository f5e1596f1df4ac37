"""prompt and agent handlers against local fake LLM servers, through the official SDKs (base_url).

Anthropic Messages (streaming and not) is ``tests.fakes.anthropic_api.FakeAnthropic``; OpenAI Chat
Completions is ``tests.fakes.openai_chat_api.FakeOpenAIChat``. Both serve 127.0.0.1 only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.api import Gateway
from gateway.config import load_config
from gateway.decision import Decision
from gateway.dialects import render
from tests.conftest import run_hookgate
from tests.fakes import openai_chat_api as oa
from tests.fakes.anthropic_api import FakeAnthropic, error, text, tool_results, tool_use, verdict
from tests.fakes.serving import listening_socket


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-anthropic")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai")
    for var in ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def claude() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(sock=listening_socket()) as fake:
        yield fake


@pytest.fixture
def gpt() -> Iterator[oa.FakeOpenAIChat]:
    with oa.FakeOpenAIChat() as fake:
        yield fake


def anthropic_llm(fake: FakeAnthropic, **extra: Any) -> dict[str, Any]:
    return {"default": "fake", "providers": {"fake": {"type": "anthropic", "baseUrl": fake.base_url, **extra}}}


def openai_llm(fake: oa.FakeOpenAIChat, **extra: Any) -> dict[str, Any]:
    return {
        "default": "local",
        "providers": {"local": {"type": "openai", "model": "fake-model", "baseUrl": fake.base_url, **extra}},
    }


def write_config(tmp_path: Path, hooks: dict[str, Any], llm: dict[str, Any], **settings: Any) -> str:
    path = tmp_path / "hookgate.json"
    path.write_text(
        json.dumps({"hooks": hooks, "llm": llm, "settings": {"stateDir": str(tmp_path / "state"), **settings}})
    )
    return str(path)


def gateway(tmp_path: Path, hooks: dict[str, Any], llm: dict[str, Any], **settings: Any) -> Gateway:
    return Gateway(load_config([write_config(tmp_path, hooks, llm, **settings)], use_cache=False))


def on(event: str, *handlers: dict[str, Any], matcher: str | None = None) -> dict[str, Any]:
    group: dict[str, Any] = {"hooks": list(handlers)}
    if matcher:
        group["matcher"] = matcher
    return {event: [group]}


def prompt(text_: str = "Did the assistant run the tests? $ARGUMENTS", **kw: Any) -> dict[str, Any]:
    return {"type": "prompt", "prompt": text_, "id": "check", **kw}


def agent(text_: str = "Verify the work. $ARGUMENTS", **kw: Any) -> dict[str, Any]:
    return {"type": "agent", "prompt": text_, "id": "verifier", **kw}


def stop_event(tmp_path: Path, session: str = "s1", **extra: Any) -> dict[str, Any]:
    return {
        "hook_event_name": "Stop",
        "session_id": session,
        "cwd": str(tmp_path),
        "stop_hook_active": False,
        "last_assistant_message": "All done.",
        **extra,
    }


def pre_event(tmp_path: Path, command: str = "rm -rf build") -> dict[str, Any]:
    return {
        "hook_event_name": "PreToolUse",
        "session_id": "s1",
        "cwd": str(tmp_path),
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "d"},
        "tool_use_id": "toolu_1",
    }


async def dispatch(gw: Gateway, event: dict[str, Any]) -> Decision:
    async with gw:
        return await gw.dispatch(event)


# ------------------------------------------------------------------------------------ prompt


async def test_anthropic_forced_tool_call_ok_then_not_ok(tmp_path: Path, claude: FakeAnthropic) -> None:
    claude.script(
        tool_use("submit_verdict", {"ok": True, "reason": "tests ran"}),
        tool_use("submit_verdict", {"ok": False, "reason": "run the tests first"}),
    )
    gw = gateway(tmp_path, on("Stop", prompt()), anthropic_llm(claude))
    async with gw:
        passed = await gw.dispatch(stop_event(tmp_path))
        blocked = await gw.dispatch(stop_event(tmp_path))
    assert passed.is_empty and passed.results[0].status == "ok"
    meta = passed.results[0].meta
    assert meta["model"] == "claude-haiku-4-5" and meta["tokens_in"] > 0 and meta["tokens_out"] > 0
    assert meta["latency_ms"] > 0 and meta["ok"] is True
    assert blocked.block and blocked.reason == "run the tests first"
    body = claude.message_requests[0].body
    assert body["tool_choice"] == {"type": "tool", "name": "submit_verdict"}
    assert body["model"] == "claude-haiku-4-5" and "temperature" not in body and body.get("stream") is not True
    assert claude.message_requests[0].api_key == "sk-test-anthropic"


async def test_two_contradicting_verdicts_in_one_answer_block(tmp_path: Path, claude: FakeAnthropic) -> None:
    """One answer, two submit_verdict calls, ok then not ok: the model's own false is not dropped."""
    from tests.fakes.anthropic_api import Reply, ToolUseBlock

    calls = (ToolUseBlock("submit_verdict", {"ok": True, "reason": "a"}, None),)
    calls += (ToolUseBlock("submit_verdict", {"ok": False, "reason": "b: not done"}, None),)
    claude.script(Reply(content=calls))
    decision = await dispatch(gateway(tmp_path, on("Stop", prompt()), anthropic_llm(claude)), stop_event(tmp_path))
    assert decision.block and decision.reason == "b: not done"


async def test_a_not_ok_written_beside_an_ok_call_blocks(tmp_path: Path, claude: FakeAnthropic) -> None:
    """found by a tester: a submit_verdict ok call beside a not-ok verdict in the text passed (text ignored)."""
    claude.script(
        tool_use("submit_verdict", {"ok": True, "reason": "a"}, preamble='{"ok": false, "reason": "not done"}')
    )
    decision = await dispatch(gateway(tmp_path, on("Stop", prompt()), anthropic_llm(claude)), stop_event(tmp_path))
    assert decision.block and decision.reason == "not done"


@pytest.mark.parametrize("where", ["call", "text"])
async def test_agent_two_verdicts_in_one_turn_the_not_ok_stands(
    tmp_path: Path, claude: FakeAnthropic, where: str
) -> None:
    """found by a tester: the agent took the first submit_verdict of a turn (ok) and dropped a later not-ok
    call, or a not-ok verdict in the turn's text."""
    from tests.fakes.anthropic_api import Reply, TextBlock, ToolUseBlock

    blocks: tuple[Any, ...] = (ToolUseBlock("submit_verdict", {"ok": True, "reason": "a"}, None),)
    if where == "call":
        blocks += (ToolUseBlock("submit_verdict", {"ok": False, "reason": "not done"}, None),)
    else:
        blocks = (TextBlock('{"ok": false, "reason": "not done"}'), *blocks)
    claude.script(Reply(content=blocks))
    decision = await dispatch(gateway(tmp_path, on("Stop", agent()), anthropic_llm(claude)), stop_event(tmp_path))
    assert decision.block and decision.reason == "not done"


async def test_anthropic_streaming_json_schema_and_code_fence(tmp_path: Path, claude: FakeAnthropic) -> None:
    claude.script(text('Here is my verdict:\n```json\n{"ok": false, "reason": "no test run in the transcript"}\n```'))
    llm = anthropic_llm(claude, stream=True, structuredOutput="json_schema")
    decision = await dispatch(gateway(tmp_path, on("Stop", prompt()), llm), stop_event(tmp_path))
    assert decision.block and decision.reason == "no test run in the transcript"
    request = claude.message_requests[0]
    assert request.stream
    assert request.body["output_config"]["format"]["type"] == "json_schema"
    assert request.body["output_config"]["format"]["schema"]["required"] == ["ok", "reason"]
    assert "tools" not in request.body


async def test_openai_json_schema_effects_on_pretooluse(tmp_path: Path, gpt: oa.FakeOpenAIChat) -> None:
    gpt.script(
        oa.verdict(False, "deletes the build"),
        oa.verdict(False, "deletes the build"),
        oa.verdict(False, "deletes the build"),
    )
    handlers = [
        prompt("Is this command safe?"),
        prompt("Safe? (continue)", id="cont", continueOnBlock=True),
        prompt("Safe? (ask)", id="asker", onReject="ask"),
    ]
    decisions = []
    for handler in handlers:
        decisions.append(
            await dispatch(
                gateway(tmp_path, on("PreToolUse", handler, matcher="Bash"), openai_llm(gpt)), pre_event(tmp_path)
            )
        )
    deny, deny_continue, ask = decisions
    assert deny.permission == "deny" and deny.permission_reason == "deletes the build" and not deny.continue_
    assert "'check'" in (deny.stop_reason or "")
    assert deny_continue.permission == "deny" and deny_continue.continue_
    assert ask.permission == "ask" and ask.continue_
    body = gpt.chat_requests[0].body
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"]["required"] == ["ok", "reason", "impossible"]
    assert body["messages"][0]["role"] == "system" and "max_tokens" in body
    user = body["messages"][1]["content"]
    assert "Is this command safe?" in user and '"command":"rm -rf build"' in user  # appended event JSON
    code, out, _ = render(deny, "claude")
    assert code == 2 and json.loads(out)["continue"] is False


async def test_openai_verdict_wrapped_in_prose(tmp_path: Path, gpt: oa.FakeOpenAIChat) -> None:
    gpt.script(oa.text('I checked it.\n{"ok": false, "reason": "prompt asks for secrets"}\nHope that helps!'))
    hooks = on("UserPromptSubmit", prompt("Does the prompt ask for secrets?"))
    event = {"hook_event_name": "UserPromptSubmit", "session_id": "s1", "cwd": str(tmp_path), "prompt": "cat .env"}
    decision = await dispatch(gateway(tmp_path, hooks, openai_llm(gpt)), event)
    assert decision.block and decision.reason == "prompt asks for secrets"


@pytest.mark.parametrize("answer", ["Looks fine to me.", '{"ok": "maybe", "reason": "x"}', '```json\n{"ok": tru\n```'])
async def test_malformed_answer_neither_blocks_nor_allows(tmp_path: Path, claude: FakeAnthropic, answer: str) -> None:
    claude.script(text(answer))
    decision = await dispatch(gateway(tmp_path, on("Stop", prompt()), anthropic_llm(claude)), stop_event(tmp_path))
    result = decision.results[0]
    assert result.status == "error" and "unparseable verdict" in (result.message or "")
    assert not decision.block and decision.permission is None
    assert "check 'check' could not run" in (decision.system_message or "")
    assert result.meta["model"] == "claude-haiku-4-5"


async def test_429_then_success_is_retried_by_hookgate(tmp_path: Path, claude: FakeAnthropic) -> None:
    claude.script(error(429, "rate_limit_error", "slow down"), verdict(False, "not yet"))
    decision = await dispatch(gateway(tmp_path, on("Stop", prompt()), anthropic_llm(claude)), stop_event(tmp_path))
    assert decision.block and decision.reason == "not yet"
    assert decision.results[0].meta["attempts"] == 2
    assert [r.status for r in claude.message_requests] == [429, 200]
    # the SDK did not retry on its own: exactly one request per hookgate attempt
    assert all(r.headers.get("x-stainless-retry-count", "0") == "0" for r in claude.message_requests)


async def test_persistent_5xx_fails_soft_after_max_retries(tmp_path: Path, gpt: oa.FakeOpenAIChat) -> None:
    gpt.script(*[oa.error(503, "overloaded")] * 5)
    llm = openai_llm(gpt, maxRetries=1)
    decision = await dispatch(gateway(tmp_path, on("Stop", prompt()), llm), stop_event(tmp_path))
    result = decision.results[0]
    assert result.status == "error" and "HTTP 503" in (result.message or "") and len(gpt.chat_requests) == 2
    assert not decision.block and "could not run" in (decision.system_message or "")


async def test_slow_server_past_the_timeout(tmp_path: Path, gpt: oa.FakeOpenAIChat) -> None:
    gpt.script(oa.delayed(oa.verdict(False, "too late"), 3.0))
    hooks = on("Stop", prompt(timeout=0.5))
    decision = await dispatch(gateway(tmp_path, hooks, openai_llm(gpt)), stop_event(tmp_path))
    assert decision.results[0].status == "timeout"
    assert not decision.block and "could not run (timeout" in (decision.system_message or "")


async def test_refusal_is_a_failed_check(tmp_path: Path, gpt: oa.FakeOpenAIChat) -> None:
    gpt.script(oa.refusal("I can't help with that."))
    decision = await dispatch(gateway(tmp_path, on("Stop", prompt()), openai_llm(gpt)), stop_event(tmp_path))
    assert decision.results[0].status == "error" and "refused" in (decision.results[0].message or "")
    assert not decision.block


async def test_arguments_escape_and_transcript_on_stop(tmp_path: Path, claude: FakeAnthropic) -> None:
    transcript = tmp_path / "t.jsonl"
    lines = [
        {"type": "user", "message": {"role": "user", "content": "fix the cart total"}},
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest -q"}}],
            },
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "3 passed"}],
            },
        },
        {"type": "summary", "summary": "ignored"},
    ]
    transcript.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    claude.script(verdict(True, "pytest ran: 3 passed"))
    hooks = on("Stop", prompt(r"Costs \$5. Input: $ARGUMENTS. Literal: \$ARGUMENTS"))
    decision = await dispatch(
        gateway(tmp_path, hooks, anthropic_llm(claude)), stop_event(tmp_path, transcript_path=str(transcript))
    )
    assert decision.is_empty
    user = claude.message_requests[0].body["messages"][0]["content"]
    assert "Costs $5. Input: {" in user and "Literal: $ARGUMENTS" in user
    assert user.count('"hook_event_name":"Stop"') == 1
    assert "<transcript>" in user and "[tool call Bash]" in user and "3 passed" in user and "ignored" not in user


async def test_unknown_key_at_event_time_is_a_soft_failure(
    tmp_path: Path, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    decision = await dispatch(gateway(tmp_path, on("Stop", prompt()), anthropic_llm(claude)), stop_event(tmp_path))
    assert decision.results[0].status == "error" and "$ANTHROPIC_API_KEY is not set" in (
        decision.results[0].message or ""
    )
    assert not decision.block and claude.message_requests == []


@pytest.mark.usefixtures("store_backend")
async def test_cache_ttl_reuses_a_verdict_for_the_same_content(tmp_path: Path, gpt: oa.FakeOpenAIChat) -> None:
    gpt.responder = lambda body: oa.verdict(False, "risky")
    hooks = on("PreToolUse", prompt("Safe?", cacheTtl=300, continueOnBlock=True), matcher="Bash")
    gw = gateway(tmp_path, hooks, openai_llm(gpt))
    async with gw:
        first = await gw.dispatch(pre_event(tmp_path, "rm -rf build"))
        second = await gw.dispatch(pre_event(tmp_path, "rm -rf build"))
        other = await gw.dispatch(pre_event(tmp_path, "rm -rf dist"))
    assert [d.results[0].status for d in (first, second, other)] == ["ok", "cached", "ok"]
    assert second.permission == "deny" and second.permission_reason == "risky"
    assert len(gpt.chat_requests) == 2


# ------------------------------------------------------------------------------------ soft-check policy


async def test_llm_allow_never_overrides_a_deterministic_deny(tmp_path: Path, claude: FakeAnthropic) -> None:
    script = tmp_path / "deny.sh"
    script.write_text("#!/bin/sh\necho 'no deletes' >&2\nexit 2\n")
    script.chmod(0o755)
    claude.responder = lambda body: tool_use("submit_verdict", {"ok": True, "reason": "looks safe"})
    hooks = on("PreToolUse", {"type": "command", "command": str(script)}, prompt("Safe?"), matcher="Bash")
    decision = await dispatch(gateway(tmp_path, hooks, anthropic_llm(claude)), pre_event(tmp_path))
    assert decision.permission == "deny" and decision.permission_reason == "no deletes"
    assert [r.status for r in decision.results] == ["ok", "ok"] and decision.results[1].meta["ok"] is True


@pytest.mark.usefixtures("store_backend")
async def test_stop_check_that_always_blocks_gives_way_after_the_limit(tmp_path: Path, claude: FakeAnthropic) -> None:
    claude.responder = lambda body: tool_use("submit_verdict", {"ok": False, "reason": "run the tests"})
    gw = gateway(tmp_path, on("Stop", prompt()), anthropic_llm(claude), stopBlockLimit=3)
    async with gw:
        decisions = [await gw.dispatch(stop_event(tmp_path, stop_hook_active=i > 0)) for i in range(5)]
        other_session = await gw.dispatch(stop_event(tmp_path, session="s2"))
    # 3 blocks in a row, then the stop goes through (skipped) and the count starts again: the next
    # turn's Stop is checked (and blocked) again.
    assert [d.block for d in decisions] == [True, True, True, False, True]
    assert decisions[3].results[0].status == "skipped" and decisions[4].results[0].status == "ok"
    assert "stopBlockLimit" in (decisions[3].system_message or "") and "goes through" in (
        decisions[3].system_message or ""
    )
    assert render(decisions[3], "claude")[0] == 0
    assert len(claude.message_requests) == 5  # 4 for s1, 1 for s2; the skipped check costs nothing
    assert other_session.block


@pytest.mark.usefixtures("store_backend")
async def test_stop_guard_counts_consecutive_blocks_only(tmp_path: Path, claude: FakeAnthropic) -> None:
    answers = iter([False, False, True, False, False, False, False])  # ok:true in between resets the count
    claude.responder = lambda body: tool_use("submit_verdict", {"ok": next(answers), "reason": "r"})
    gw = gateway(tmp_path, on("Stop", prompt()), anthropic_llm(claude), stopBlockLimit=3)
    async with gw:
        decisions = [await gw.dispatch(stop_event(tmp_path)) for _ in range(7)]
    assert [d.block for d in decisions] == [True, True, False, True, True, True, False]
    assert [d.results[0].status for d in decisions] == ["ok"] * 6 + ["skipped"]
    assert len(claude.message_requests) == 6


@pytest.mark.usefixtures("store_backend")
async def test_stop_guard_keeps_counting_while_a_command_still_blocks(tmp_path: Path, claude: FakeAnthropic) -> None:
    script = tmp_path / "block.sh"
    script.write_text("#!/bin/sh\necho 'not yet' >&2\nexit 2\n")
    script.chmod(0o755)
    claude.responder = lambda body: tool_use("submit_verdict", {"ok": False, "reason": "run the tests"})
    hooks = on("Stop", {"type": "command", "command": str(script), "id": "cmd"}, prompt())
    gw = gateway(tmp_path, hooks, anthropic_llm(claude), stopBlockLimit=1)
    async with gw:
        decisions = [await gw.dispatch(stop_event(tmp_path)) for _ in range(3)]
    assert all(d.block for d in decisions)  # the command check is never skipped
    # the skip did not let the stop through, so the LLM check stays off while the loop goes on
    assert [d.results[1].status for d in decisions] == ["ok", "skipped", "skipped"]
    assert len(claude.message_requests) == 1


@pytest.mark.usefixtures("store_backend")
async def test_subagent_stop_counts_per_subagent_and_resets(tmp_path: Path, claude: FakeAnthropic) -> None:
    claude.responder = lambda body: tool_use("submit_verdict", {"ok": False, "reason": "finish the task"})
    gw = gateway(tmp_path, on("SubagentStop", prompt()), anthropic_llm(claude), stopBlockLimit=1)

    def sub(agent_id: str) -> dict[str, Any]:
        return {
            **stop_event(tmp_path),
            "hook_event_name": "SubagentStop",
            "agent_id": agent_id,
            "agent_type": "general-purpose",
        }

    async with gw:
        statuses = [(await gw.dispatch(sub(a))).results[0].status for a in ("a1", "a1", "a2", "a1")]
    assert statuses == ["ok", "skipped", "ok", "ok"]  # a1's skip let it stop: its next stop is checked


@pytest.mark.usefixtures("store_backend")
async def test_stop_guard_state_is_shared_across_processes(tmp_path: Path, claude: FakeAnthropic) -> None:
    claude.responder = lambda body: tool_use("submit_verdict", {"ok": False, "reason": "run the tests"})
    config = write_config(tmp_path, on("Stop", prompt()), anthropic_llm(claude), stopBlockLimit=1)
    env = {"ANTHROPIC_API_KEY": "sk-test"}
    runs = [run_hookgate(["run", "--config", config], stop_event(tmp_path), env=env) for _ in range(3)]
    assert [r.returncode for r in runs] == [2, 0, 2]  # block, limit reached (goes through), next turn checked
    assert "stopBlockLimit" in json.loads(runs[1].stdout)["systemMessage"]


async def test_impossible_lets_the_stop_through_with_a_notice(tmp_path: Path, claude: FakeAnthropic) -> None:
    claude.script(tool_use("submit_verdict", {"ok": False, "reason": "there is no test suite", "impossible": True}))
    decision = await dispatch(gateway(tmp_path, on("Stop", prompt()), anthropic_llm(claude)), stop_event(tmp_path))
    assert not decision.block and "impossible" in (decision.system_message or "")


# ------------------------------------------------------------------------------------ agent


def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "src" / "cart.py").write_text("def total(items):\n    return sum(i.price for i in items)\n")
    (root / "tests" / "test_cart.py").write_text(
        "from src.cart import total\n\ndef test_total():\n    assert total([]) == 0\n"
    )
    return root


async def test_agent_reads_and_greps_before_its_verdict(tmp_path: Path, claude: FakeAnthropic) -> None:
    root = project(tmp_path)
    claude.script(
        tool_use("Read", {"path": "src/cart.py", "offset": 2, "limit": 1}),
        tool_use("Grep", {"pattern": r"def test_\w+", "glob": "*.py"}, preamble="Looking for tests."),
        tool_use("Glob", {"pattern": "**/*.py"}),
        tool_use("submit_verdict", {"ok": False, "reason": "test_total does not cover prices"}),
    )
    decision = await dispatch(gateway(tmp_path, on("Stop", agent()), anthropic_llm(claude)), stop_event(root))
    assert decision.block and decision.reason == "test_total does not cover prices"
    meta = decision.results[0].meta
    assert meta["turns"] == 4 and meta["tool_calls"] == 4 and meta["requests"] == 4
    results = tool_results(claude.message_requests[3].body)
    assert [r["is_error"] for r in results] == [False, False, False]
    assert results[0]["content"] == "     2\t    return sum(i.price for i in items)"
    assert "tests/test_cart.py:3: def test_total():" in results[1]["content"]
    assert results[2]["content"].splitlines() == ["src/cart.py", "tests/test_cart.py"]
    tools = [t["name"] for t in claude.message_requests[0].body["tools"]]
    assert tools == ["Read", "Grep", "Glob", "submit_verdict"]  # no transcript_path: no Transcript tool


async def test_agent_over_openai_reads_the_transcript(tmp_path: Path, gpt: oa.FakeOpenAIChat) -> None:
    root = project(tmp_path)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(
        json.dumps(
            {
                "type": "assistant",
                "message": {"role": "assistant", "content": [{"type": "text", "text": "I ran pytest: 1 passed"}]},
            }
        )
        + "\n"
    )
    gpt.script(
        oa.tool_calls([("Transcript", {}), ("Read", {"path": "tests/test_cart.py"})]),
        oa.tool_call("submit_verdict", {"ok": True, "reason": "pytest passed per transcript"}),
    )
    decision = await dispatch(
        gateway(tmp_path, on("Stop", agent()), openai_llm(gpt)), stop_event(root, transcript_path=str(transcript))
    )
    assert decision.is_empty and decision.results[0].meta["ok"] is True
    replies = oa.tool_messages(gpt.chat_requests[1].body)
    assert "I ran pytest: 1 passed" in replies[0]["content"] and "def test_total" in replies[1]["content"]


async def test_agent_refuses_paths_outside_the_project(tmp_path: Path, claude: FakeAnthropic) -> None:
    root = project(tmp_path)
    (tmp_path / "secret.txt").write_text("TOP SECRET")
    (root / "escape").symlink_to(tmp_path / "secret.txt")
    (root / "escape_dir").symlink_to(tmp_path)
    claude.script(
        tool_use("Read", {"path": "../../etc/passwd"}),
        tool_use("Read", {"path": "/etc/passwd"}),
        tool_use("Read", {"path": "escape"}),
        tool_use("Grep", {"pattern": "SECRET", "path": "escape_dir"}),
        tool_use("Grep", {"pattern": "SECRET"}),
        tool_use("Glob", {"pattern": "../*"}),
        tool_use("submit_verdict", {"ok": True, "reason": "fine"}),
    )
    decision = await dispatch(gateway(tmp_path, on("Stop", agent()), anthropic_llm(claude)), stop_event(root))
    assert decision.results[0].status == "ok"
    outputs = [(r["is_error"], r["content"]) for r in tool_results(claude.message_requests[-1].body)]
    assert outputs[0][0] and "refused" in outputs[0][1] and "'..'" in outputs[0][1]
    assert outputs[1][0] and "outside the project" in outputs[1][1]
    assert outputs[2][0] and "symlink" in outputs[2][1]
    assert outputs[3][0] and "symlink" in outputs[3][1]
    assert outputs[4] == (False, "(no matches)")  # the walk does not follow the escaping links
    assert outputs[5][0] and "'..'" in outputs[5][1]
    assert not any("root:" in body or "TOP SECRET" in body for _, body in outputs)


async def test_agent_that_never_submits_hits_the_turn_cap(tmp_path: Path, claude: FakeAnthropic) -> None:
    root = project(tmp_path)
    claude.responder = lambda body: tool_use("Glob", {"pattern": "*.py"})
    decision = await dispatch(gateway(tmp_path, on("Stop", agent(maxTurns=3)), anthropic_llm(claude)), stop_event(root))
    result = decision.results[0]
    assert result.status == "error" and "turn cap (3 turns)" in (result.message or "")
    assert result.meta["cap"] == "turns" and result.meta["turns"] == 3
    assert not decision.block and "could not run" in (decision.system_message or "")
    bodies = [r.body for r in claude.message_requests]
    assert len(bodies) == 3 and "tool_choice" not in bodies[0]
    assert bodies[2]["tool_choice"] == {"type": "tool", "name": "submit_verdict"}  # last turn forces a verdict


async def test_agent_that_stalls_hits_the_time_cap(tmp_path: Path, gpt: oa.FakeOpenAIChat) -> None:
    root = project(tmp_path)
    gpt.script(oa.tool_call("Read", {"path": "src/cart.py"}), oa.delayed(oa.verdict(True, "late"), 5.0))
    decision = await dispatch(gateway(tmp_path, on("Stop", agent(timeout=1)), openai_llm(gpt)), stop_event(root))
    result = decision.results[0]
    assert result.status == "error" and "time cap (1 s)" in (result.message or "")
    assert result.meta["cap"] == "time" and result.meta["turns"] == 2
    assert not decision.block


async def test_agent_text_answer_and_bad_tool_arguments(tmp_path: Path, gpt: oa.FakeOpenAIChat) -> None:
    root = project(tmp_path)
    gpt.script(
        oa.tool_call("Read", "{not json"),
        oa.tool_call("Delete", {"path": "x"}),
        oa.text("Thinking..."),
        oa.text('Verdict: {"ok": false, "reason": "cart has no tests for prices"}'),
    )
    decision = await dispatch(gateway(tmp_path, on("Stop", agent()), openai_llm(gpt)), stop_event(root))
    assert decision.block and decision.reason == "cart has no tests for prices"
    last = gpt.chat_requests[-1].body["messages"]
    tool_replies = [m["content"] for m in last if m["role"] == "tool"]
    assert tool_replies[0].startswith("Error: ") and "JSON object" in tool_replies[0]
    assert "unknown tool 'Delete'" in tool_replies[1]
    assert any(m["role"] == "user" and "submit_verdict" in (m["content"] or "") for m in last[2:])


# ------------------------------------------------------------------------------------ config and CLI


def test_validate_reports_a_missing_api_key(tmp_path: Path, claude: FakeAnthropic) -> None:
    config = write_config(tmp_path, on("Stop", prompt()), {})
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    proc = run_hookgate(["validate", config], env={**env, "ANTHROPIC_API_KEY": ""})
    assert proc.returncode == 1 and "Traceback" not in proc.stdout + proc.stderr
    assert "hooks.Stop[0].hooks[0]: LLM provider 'anthropic' needs an API key in $ANTHROPIC_API_KEY" in proc.stdout
    assert run_hookgate(["validate", config], env={"ANTHROPIC_API_KEY": "sk-x"}).returncode == 0
    local = write_config(
        tmp_path,
        on("Stop", prompt()),
        {
            "default": "ollama",
            "providers": {
                "ollama": {
                    "type": "openai",
                    "model": "qwen3",
                    "baseUrl": "http://127.0.0.1:11434/v1",
                    "keyRequired": False,
                }
            },
        },
    )
    assert run_hookgate(["validate", local], env={"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": ""}).returncode == 0


def test_validate_reports_provider_mistakes(tmp_path: Path) -> None:
    bad = write_config(
        tmp_path,
        on("Stop", prompt(provider="nope"), agent(timeout=120, maxTurns=80)),
        {"providers": {"oai": {"type": "openai"}, "weird": {"baseUrl": "ftp://x"}}},
    )
    proc = run_hookgate(["validate", bad], env={"ANTHROPIC_API_KEY": "sk-x"})
    assert proc.returncode == 1
    assert "llm.providers.oai.model: required for an openai provider" in proc.stdout
    assert "llm.providers.weird.baseUrl" in proc.stdout
    assert "hooks.Stop[0].hooks[1].maxTurns" in proc.stdout
    proc = run_hookgate(
        ["validate", write_config(tmp_path, on("Stop", prompt(provider="nope"), agent(timeout=120)), {})],
        env={"ANTHROPIC_API_KEY": "sk-x"},
    )
    assert "hooks.Stop[0].hooks[0].provider: unknown LLM provider 'nope'" in proc.stdout
    assert "hooks.Stop[0].hooks[1]: timeout: an agent handler runs at most 60 s" in proc.stdout


def test_run_imports_an_sdk_only_when_its_handler_runs(tmp_path: Path, claude: FakeAnthropic) -> None:
    claude.script(verdict(False, "run the tests"))
    hooks = {**on("Stop", prompt()), **on("PreToolUse", prompt("Safe?", **{"if": "Bash(rm *)"}), matcher="Bash")}
    config = write_config(tmp_path, hooks, anthropic_llm(claude))
    probe = (
        "import sys, runpy; sys.argv = ['hookgate', 'run', '--config', sys.argv[1]]\n"
        "from gateway.cli import main\ncode = main()\n"
        "print('\\nMODULES', sorted(m for m in ('anthropic', 'openai', 'mcp', 'pydantic') if m in sys.modules),"
        " file=sys.stderr)\nraise SystemExit(code)"
    )
    env = {"ANTHROPIC_API_KEY": "sk-x"}
    import subprocess
    import sys

    def run(event: dict[str, Any]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", probe, config],
            input=json.dumps(event),
            text=True,
            capture_output=True,
            env={**os.environ, **env},
            timeout=60,
            check=False,
        )

    run(pre_event(tmp_path, "ls -la"))  # fills the config cache, as every later hook call finds it
    quiet = run(pre_event(tmp_path, "ls -la"))  # the prompt handler is selected, its `if` does not fit
    assert quiet.returncode == 0 and "MODULES []" in quiet.stderr
    stop = run(stop_event(tmp_path))
    assert stop.returncode == 2 and json.loads(stop.stdout) == {"decision": "block", "reason": "run the tests"}
    assert "MODULES ['anthropic'" in stop.stderr and "'openai'" not in stop.stderr
