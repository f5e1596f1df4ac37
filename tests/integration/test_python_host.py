"""The Python agent host (``gateway.host``) with FIM One-style class hooks (``gateway.hooks``).

The scripted agent loop of ``configs/examples/python_agent.py`` runs through the host API against
``configs/examples/python-agent.yaml``: class hooks in priority order (not config order), chained
rewrites, a deny, ``modified_result``, built-ins, and ``side_effects`` on the handler results.
Every handler type (command, http, mcp_tool, python callable, prompt, agent, builtin, class hook)
answers through the same host calls, against real subprocesses and loopback fakes.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from configs.examples import python_agent, python_hooks
from configs.examples.python_agent import EXAMPLE_CONFIG, ScriptedModel, demo_model, run_agent, run_sql
from gateway import ActionDenied, Gateway, ToolCallDenied
from gateway.errors import ConfigError
from gateway.hooks import HookContext, HookResult, PostToolUseHook, PreToolUseHook, SessionStartHook
from tests.conftest import ROOT
from tests.fakes.anthropic_api import FakeAnthropic, tool_use, verdict
from tests.fakes.serving import listening_socket
from tests.fakes.webhooks import Receiver

IDS = {"session_id": "s-host", "user_id": "ana", "agent_id": "researcher"}


def write(tmp_path: Path, doc: dict[str, Any], name: str = "hookgate.json") -> str:
    path = tmp_path / name
    doc.setdefault("settings", {}).setdefault("stateDir", str(tmp_path / "state"))
    path.write_text(json.dumps(doc))
    return str(path)


def results_by_id(decision: Any) -> dict[str, Any]:
    return {r.id: r for r in decision.results}


# ---------------------------------------------------------------------------- the example agent loop


async def test_scripted_loop_runs_class_hooks_in_priority_order_with_chained_rewrites() -> None:
    async with Gateway.from_file(EXAMPLE_CONFIG) as gw:
        out = await run_agent(gw, demo_model(), {"run_sql": run_sql}, "Who is on the ops team?", **IDS)
    # TagQuery is listed first in the config but has priority 20: it runs after CapRows (10) and sees its LIMIT
    assert out.tool_runs[0] == {
        "name": "run_sql",
        "args": {"sql": "SELECT name, email FROM people WHERE team = 'ops' LIMIT 100 /* user=ana */"},
    }
    # BlockDrop (priority 5) denied the DROP: the tool never ran, the model got the hook's error
    assert [r["args"]["sql"] for r in out.tool_runs] == [
        "SELECT name, email FROM people WHERE team = 'ops' LIMIT 100 /* user=ana */",
        "SELECT * FROM people LIMIT 100 /* user=ana */",
    ]
    assert out.denied == ["DROP statements are not allowed for this agent"]
    tools = [m["content"] for m in out.messages if m["role"] == "tool"]
    assert tools[1] == "blocked: DROP statements are not allowed for this agent"
    # RedactEmails' modified_result became the observation; truncateOutput (maxChars 400) cut the big one
    assert "@example.com" not in tools[0] and json.loads(tools[0])[0] == {"name": "person 0", "email": "[email]"}
    # the chain runs RedactEmails (priority -10) before truncateOutput (-1000): the cut copy is redacted too
    redacted = python_hooks._EMAIL.sub("[email]", json.dumps(python_agent.PEOPLE))
    kept, marker = tools[2].split("\n[... truncated by hookgate: ")
    assert kept == redacted[:400]
    assert marker == f"{len(redacted) - 400} of {len(redacted)} characters cut]"
    # SessionStart hook's context is the first message; the final answer went through output()
    assert out.messages[0] == {
        "role": "system",
        "content": "You are researcher, working for ana. Queries are capped at 100 rows.",
    }
    assert out.final == "The ops team has three people; I was not allowed to drop the table."


async def test_side_effects_of_every_class_hook_are_on_its_result() -> None:
    async with Gateway.from_file(EXAMPLE_CONFIG) as gw:
        async with gw.tool_call("run_sql", {"sql": "SELECT email FROM people"}, **IDS) as call:
            call.result = "a@b.io and c@d.io"
        assert call.args == {"sql": "SELECT email FROM people LIMIT 100 /* user=ana */"}
        assert call.result == "[email] and [email]"
        assert call.pre is not None and call.post is not None
        pre = [(r.id, r.side_effects) for r in call.pre.results if r.side_effects]
        assert pre == [
            ("python:configs.examples.python_hooks:CapRows", ["capped the query at 100 rows"]),
            ("python:configs.examples.python_hooks:TagQuery", ["tagged the query for ana"]),
        ]
        post = {r.id: r.side_effects for r in call.post.results}
        assert post["python:configs.examples.python_hooks:RedactEmails"] == ["redacted 2 e-mail address(es)"]
        with pytest.raises(ToolCallDenied) as denied:
            async with gw.tool_call("run_sql", {"sql": "drop table x"}, **IDS):
                raise AssertionError("a denied call must not run")
        assert denied.value.reason == "DROP statements are not allowed for this agent"
        assert denied.value.permission == "deny" and not denied.value.after
        results = results_by_id(denied.value.decision)
        assert results["python:configs.examples.python_hooks:BlockDrop"].side_effects == ["refused a DROP statement"]
        # the first allow=False stops the chain: the later hooks were skipped, never run
        assert results["python:configs.examples.python_hooks:CapRows"].status == "skipped"
        assert results["python:configs.examples.python_hooks:TagQuery"].status == "skipped"


def test_example_agent_runs_as_a_program(tmp_path: Path) -> None:
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-m", "configs.examples.python_agent"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
        env={**os.environ},
    )
    assert proc.returncode == 0, proc.stderr
    assert "[tool] blocked: DROP statements are not allowed for this agent" in proc.stdout
    assert "[final] The ops team has three people" in proc.stdout


# ---------------------------------------------------------------------------- registration


class Upper(PreToolUseHook):
    name = "upper"
    priority = 30

    def execute(self, ctx: HookContext) -> HookResult:
        return HookResult(modified_args={"text": str(ctx.tool_args["text"]).upper()}, side_effects=["uppercased"])


class Exclaim(PreToolUseHook):
    name = "exclaim"
    priority = 40

    async def execute(self, ctx: HookContext) -> HookResult:
        return HookResult(modified_args={"text": ctx.tool_args["text"] + "!"})


class Reverse(PostToolUseHook):
    name = "reverse"

    def execute(self, ctx: HookContext) -> HookResult:
        return HookResult(modified_result=str(ctx.tool_result)[::-1])


class Hello(SessionStartHook):
    name = "hello"

    def execute(self, ctx: HookContext) -> HookResult:
        return HookResult(additional_context=f"hello {ctx.user_id}")


class Refuse(SessionStartHook):
    def execute(self, ctx: HookContext) -> HookResult:
        return HookResult(allow=False, error="no sessions today")


class Crash(PreToolUseHook):
    def execute(self, ctx: HookContext) -> HookResult:
        raise RuntimeError("hook bug")


async def test_register_hook_from_code_orders_by_priority_and_scopes_by_agent(tmp_path: Path) -> None:
    async with Gateway.from_file(write(tmp_path, {"hooks": {}})) as gw:
        gw.register_hook(Exclaim())
        gw.register_hook(Upper())  # registered later, runs first (priority 30 < 40)
        gw.register_hook(Reverse(), agent="writer")
        gw.register_hook(Hello())
        assert await gw.session_start(session_id="s", user_id="bo") == "hello bo"
        async with gw.tool_call("echo", {"text": "hi"}, session_id="s", agent_id="writer") as call:
            call.result = call.args["text"]
        assert call.args == {"text": "HI!"} and call.result == "!IH"
        async with gw.tool_call("echo", {"text": "hi"}, session_id="s", agent_id="reader") as call:
            call.result = "kept"
        assert call.result == "kept"  # Reverse is the writer's hook only


async def test_a_hook_registered_after_events_runs_on_the_next_ones(tmp_path: Path) -> None:
    """Registering a hook after events of its kind were dispatched (and their selection remembered)
    takes effect at once, for a tool seen before and for one never seen."""
    async with Gateway.from_file(write(tmp_path, {"hooks": {}})) as gw:
        for tool in ("echo", "echo"):
            async with gw.tool_call(tool, {"text": "hi"}, session_id="s") as call:
                call.result = "ok"
            assert call.args == {"text": "hi"}
        gw.register_hook(Upper())
        async with gw.tool_call("echo", {"text": "hi"}, session_id="s") as call:
            call.result = "ok"
        assert call.args == {"text": "HI"}
        async with gw.tool_call("shout", {"text": "yo"}, session_id="s") as call:
            call.result = "ok"
        assert call.args == {"text": "YO"}
        gw.register_hook(Crash())
        with pytest.raises(ToolCallDenied, match="hook bug"):
            async with gw.tool_call("echo", {"text": "x"}, session_id="s"):
                pass


async def test_register_hook_refuses_what_is_not_a_class_hook(tmp_path: Path) -> None:
    gw = Gateway.from_file(write(tmp_path, {"hooks": {}}))
    with pytest.raises(ConfigError, match="is a class; pass an instance"):
        gw.register_hook(Upper)
    with pytest.raises(ConfigError, match="is not a PreToolUseHook"):
        gw.register_hook(object())


async def test_register_hook_names_a_class_by_its_name(tmp_path: Path) -> None:
    gw = Gateway.from_file(write(tmp_path, {"hooks": {}}))
    with pytest.raises(ConfigError) as refused:
        gw.register_hook(Upper)
    assert str(refused.value).startswith("register_hook(Upper): Upper is a class; pass an instance (e.g. Upper())")
    assert "property" not in str(refused.value)


@pytest.mark.parametrize(
    ("matcher", "error", "message"),
    [
        ("(", ConfigError, "register_hook(upper): matcher: matcher '(' is not a valid regular expression"),
        ("Bash(git push *)", ConfigError, "is a permission rule, not a matcher"),
        ("(?P<n>x)", ConfigError, "Python-only regex syntax"),
        (5, TypeError, "register_hook(upper): matcher must be a str"),
        (["Bash"], TypeError, "matcher must be a str (a Claude Code matcher such as 'Bash|Edit' or 'mcp__.*') or None"),
    ],
)
async def test_register_hook_checks_the_matcher_at_once(
    tmp_path: Path, matcher: Any, error: type[Exception], message: str
) -> None:
    """A matcher the config loader would refuse is refused by ``register_hook`` itself, and nothing is
    registered: later tool calls run as before instead of raising on every dispatch."""
    async with Gateway.from_file(write(tmp_path, {"hooks": {}})) as gw:
        with pytest.raises(error) as refused:
            gw.register_hook(Upper(), matcher=matcher)
        assert message in str(refused.value) and "\n" not in str(refused.value)
        async with gw.tool_call("echo", {"text": "hi"}, session_id="s") as call:
            call.result = "ok"
        assert call.args == {"text": "hi"}


async def test_register_hook_takes_the_matchers_the_config_takes(tmp_path: Path) -> None:
    async with Gateway.from_file(write(tmp_path, {"hooks": {}})) as gw:
        for matcher in ("echo|shout", "ec.*", "", "*"):
            gw.register_hook(Upper(), matcher=matcher)
        gw.register_hook(Exclaim(), matcher="^mcp__")
        async with gw.tool_call("echo", {"text": "hi"}, session_id="s") as call:
            call.result = "ok"
        assert call.args == {"text": "HI"}  # Upper (four times: idempotent); Exclaim's matcher does not fit
        with pytest.raises(TypeError, match=r"register_hook\(upper\): agent must be a str"):
            gw.register_hook(Upper(), agent=7)  # type: ignore[arg-type]


async def test_a_hook_that_raises_fails_closed_and_session_start_can_refuse(tmp_path: Path) -> None:
    async with Gateway.from_file(write(tmp_path, {"hooks": {}})) as gw:
        gw.register_hook(Crash())
        with pytest.raises(ToolCallDenied, match="hook bug"):
            async with gw.tool_call("echo", {"text": "x"}):
                pass
        gw.register_hook(Refuse())
        with pytest.raises(ActionDenied, match="no sessions today"):
            await gw.session_start(session_id="s")


ANSWERS: dict[str, Any] = {}
"""What ``Answers`` returns, by the key in ``tool_args["answer"]`` (tool arguments hold JSON values only)."""


class Answers(PreToolUseHook):
    """Answers ``ANSWERS[ctx.tool_args["answer"]]`` as it is (the malformed-result tests)."""

    name = "answers"

    def execute(self, ctx: HookContext) -> HookResult:
        answer: HookResult = ANSWERS[ctx.tool_args["answer"]]
        return answer


class LenientAnswers(Answers):
    name = "lenient"
    fail_closed = False


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        (HookResult(allow="no"), "HookResult.allow must be True or False, got str 'no'"),  # type: ignore[arg-type]
        (HookResult(allow=1), "HookResult.allow must be True or False, got int 1"),  # type: ignore[arg-type]
        (HookResult(allow=None), "HookResult.allow must be True or False, got NoneType None"),  # type: ignore[arg-type]
        (None, "returned NoneType; expected a HookResult (return HookResult() to let the call through)"),
        ({"allow": True}, "returned dict; expected a HookResult"),
        (
            HookResult(modified_args={"n": float("nan")}),
            "modified_args field 'n' holds nan, which JSON has no number for",
        ),
        (HookResult(modified_args={"f": open}), "modified_args field 'f' holds a builtin_function"),
    ],
)
async def test_a_malformed_class_hook_result_is_a_handler_failure(tmp_path: Path, answer: Any, problem: str) -> None:
    """``allow`` is not truth-tested (``allow="no"`` once allowed) and ``None`` is not an allow (it once
    was, while a dict denied): both are malformed results, denied while the hook is fail_closed, and a
    plain failure (the call runs, the failure is on the result) when it is not."""
    ANSWERS["malformed"] = answer
    async with Gateway.from_file(write(tmp_path, {"hooks": {}})) as gw:
        gw.register_hook(Answers(), matcher="strict")
        gw.register_hook(LenientAnswers(), matcher="lenient")
        with pytest.raises(ToolCallDenied) as denied:
            async with gw.tool_call("strict", {"answer": "malformed"}, session_id="s-m"):
                raise AssertionError("a malformed answer must not let the call through")
        assert problem in denied.value.reason and "failClosed" in denied.value.reason
        async with gw.tool_call("lenient", {"answer": "malformed"}, session_id="s-m") as call:
            call.result = "ran"
        (result,) = call.pre.results if call.pre is not None else []
        assert result.status == "error" and problem in (result.message or ""), (result.status, result.message)


async def test_a_well_formed_class_hook_result_still_decides(tmp_path: Path) -> None:
    async with Gateway.from_file(write(tmp_path, {"hooks": {}})) as gw:
        gw.register_hook(Answers())
        ANSWERS.update(allow=HookResult(allow=True), deny=HookResult(allow=False, error="plain no"))
        async with gw.tool_call("t", {"answer": "allow"}, session_id="s-m") as call:
            call.result = "ran"
        with pytest.raises(ToolCallDenied, match="plain no"):
            async with gw.tool_call("t", {"answer": "deny"}, session_id="s-m"):
                pass


# ---------------------------------------------------------------------------- config: fail closed at construction


def test_gateway_whose_hooks_cannot_be_built_raises_at_construction(tmp_path: Path) -> None:
    path = write(tmp_path, {"hooks": {"PreToolUse": [{"hooks": [{"type": "python", "hook": "no_such_pkg.mod:Hook"}]}]}})
    with pytest.raises(ConfigError, match="cannot import no_such_pkg"):
        Gateway.from_file(path)
    wrong = write(
        tmp_path,
        {"hooks": {"PostToolUse": [{"hooks": [{"type": "python", "hook": "configs.examples.python_hooks:CapRows"}]}]}},
        "wrong.json",
    )
    with pytest.raises(ConfigError, match="is a PreToolUse hook; it cannot run on PostToolUse"):
        Gateway.from_file(wrong)
    both = write(
        tmp_path,
        {"hooks": {"PreToolUse": [{"hooks": [{"type": "python", "hook": "a.b:C", "callable": "a.b:f"}]}]}},
        "both.json",
    )
    with pytest.raises(ConfigError, match=r"either callable .* or hook"):
        Gateway.from_file(both)
    agent = write(tmp_path, {"agents": {"x": {"hooks": [{"type": "command", "command": "true"}]}}}, "agent.json")
    with pytest.raises(ConfigError, match=r"agents\.x\.hooks\[0\]: event: required"):
        Gateway.from_file(agent)


# ---------------------------------------------------------------------------- every handler type


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as server:
        yield server


@pytest.fixture
def claude(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-anthropic")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with FakeAnthropic(sock=listening_socket()) as fake:
        yield fake


def deny_json(reason: str) -> str:
    return json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }
    )


async def test_every_handler_type_answers_through_the_host(
    tmp_path: Path, receiver: Receiver, claude: FakeAnthropic
) -> None:
    receiver.answers["deny"] = (200, deny_json("http says no").encode(), {"content-type": "application/json"})
    script = tmp_path / "deny.sh"
    script.write_text(f"#!/bin/sh\ncat >/dev/null\necho '{deny_json('command says no')}'\n")
    script.chmod(0o755)
    doc = {
        "mcpServers": {
            "policy": {"command": sys.executable, "args": ["-I", str(ROOT / "configs/validators/policy.py")]}
        },
        "llm": {"default": "fake", "providers": {"fake": {"type": "anthropic", "baseUrl": claude.base_url}}},
        "settings": {"readOnly": True, "stateDir": str(tmp_path / "state")},
        "hooks": {
            "PreToolUse": [
                {"matcher": "cmd_tool", "hooks": [{"type": "command", "command": str(script)}]},
                {"matcher": "http_tool", "hooks": [{"type": "http", "url": receiver.url("/answer/deny")}]},
                {
                    "matcher": "Bash",
                    "hooks": [
                        {
                            "type": "mcp_tool",
                            "server": "policy",
                            "tool": "check_command",
                            "input": {"command": "${tool_input.command}", "cwd": "${cwd}"},
                        }
                    ],
                },
                {
                    "matcher": "py_tool",
                    "hooks": [{"type": "python", "callable": "tests.integration.policy_funcs:deny_rm"}],
                },
                {"matcher": "llm_tool", "hooks": [{"type": "prompt", "prompt": "Is this safe? $ARGUMENTS"}]},
                {"matcher": "rows_insert", "hooks": [{"type": "builtin", "name": "readOnly"}]},
                {
                    "matcher": "run_sql",
                    "hooks": [{"type": "python", "hook": "configs.examples.python_hooks:BlockDrop"}],
                },
            ],
            "Stop": [{"hooks": [{"type": "agent", "prompt": "Did it finish? $ARGUMENTS"}]}],
        },
    }
    claude.script(verdict(False, "llm says no"), tool_use("submit_verdict", {"ok": False, "reason": "run the tests"}))
    calls = [
        ("cmd_tool", {"x": 1}, "command says no"),
        ("http_tool", {"x": 1}, "http says no"),
        ("Bash", {"command": "rm -rf /"}, None),
        ("py_tool", {"command": "rm x"}, "no rm"),
        ("llm_tool", {"x": 1}, "llm says no"),
        ("rows_insert", {"rows": []}, "read-only mode is on"),
        ("run_sql", {"sql": "DROP TABLE t"}, "DROP statements are not allowed"),
    ]
    async with Gateway.from_file(write(tmp_path, doc)) as gw:
        for tool, args, reason in calls:
            with pytest.raises(ToolCallDenied) as denied:
                async with gw.tool_call(tool, args, session_id="s-all"):
                    raise AssertionError(f"{tool} must be denied")
            assert denied.value.permission == "deny", (tool, denied.value.reason)
            if reason is not None:
                assert reason in denied.value.reason, (tool, denied.value.reason)
            (result,) = [r for r in denied.value.decision.results if r.status == "ok"]
            assert result.verdict.permission == "deny", tool
        answer = await gw.stop(session_id="s-all", last_assistant_message="done")
        assert answer and answer.go_on and answer.reason == "run the tests"


async def test_tool_exception_reaches_post_tool_use_failure_hooks(tmp_path: Path) -> None:
    seen = tmp_path / "failure.json"
    doc = {"hooks": {"PostToolUseFailure": [{"hooks": [{"type": "command", "command": f"cat > {seen}"}]}]}}
    async with Gateway.from_file(write(tmp_path, doc)) as gw:
        with pytest.raises(ZeroDivisionError):
            async with gw.tool_call("divide", {"a": 1, "b": 0}, session_id="s-f"):
                _ = 1 / 0
    event = json.loads(seen.read_text())
    assert event["hook_event_name"] == "PostToolUseFailure" and event["tool_name"] == "divide"
    assert event["error"].startswith("ZeroDivisionError") and event["session_id"] == "s-f"


async def test_a_block_without_a_result_still_fires_post_tool_use(tmp_path: Path) -> None:
    """The tool ran and raised nothing, but the block never set ``call.result`` (a fire-and-forget tool):
    PostToolUse hooks (audit, notify) still see the call, with ``tool_response: null``, as Claude Code
    fires PostToolUse for every tool that ran and succeeded."""
    log = tmp_path / "post.log"
    doc = {"hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": f"cat >> {log}; echo >> {log}"}]}]}}
    async with Gateway.from_file(write(tmp_path, doc)) as gw:
        async with gw.tool_call("send_email", {"to": "x@y"}, session_id="s-n") as call:
            pass
        assert call.post is not None and call.post.event == "PostToolUse" and call.result is None
        async with gw.tool_call("send_email", {"to": "x@y"}, session_id="s-n") as call:
            call.result = None
        assert call.post is not None
    events = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    assert [e["hook_event_name"] for e in events] == ["PostToolUse", "PostToolUse"]
    assert all("tool_response" in e and e["tool_response"] is None for e in events)
    assert events[0]["tool_name"] == "send_email" and events[0]["tool_input"] == {"to": "x@y"}


async def test_a_result_free_block_reaches_post_tool_use_class_hooks_and_their_block(tmp_path: Path) -> None:
    """A PostToolUse class hook runs on a block that set no result (``ctx.tool_result`` is None), and its
    block still withholds the (empty) result: ``ToolCallDenied(after=True)``."""
    seen: list[Any] = []

    class Notify(PostToolUseHook):
        def execute(self, ctx: HookContext) -> HookResult:
            seen.append((ctx.tool_name, ctx.tool_result))
            return HookResult(allow=ctx.tool_name != "forbidden", error="not after this tool")

    async with Gateway.from_file(write(tmp_path, {"hooks": {}})) as gw:
        gw.register_hook(Notify())
        async with gw.tool_call("fire", {}, session_id="s-n"):
            pass
        with pytest.raises(ToolCallDenied, match="not after this tool") as denied:
            async with gw.tool_call("forbidden", {}, session_id="s-n"):
                pass
        assert denied.value.after
        with pytest.raises(ActionDenied):  # a denial raised inside the block is not a tool that ran
            async with gw.tool_call("outer", {}, session_id="s-n"):
                raise ActionDenied("nested call refused", point="PreToolUse")
    assert seen == [("fire", None), ("forbidden", None)]


async def test_agents_section_scopes_hooks_to_the_agent() -> None:
    async with Gateway.from_file(EXAMPLE_CONFIG) as gw:
        async with gw.tool_call("run_sql", {"sql": "DROP TABLE x"}, session_id="s", agent_id="intern") as call:
            call.result = "ok"
        assert call.args == {"sql": "DROP TABLE x"}  # the researcher's hooks do not apply to another agent
        model = ScriptedModel([{"content": "done"}])
        out = await run_agent(gw, model, {}, "hi", session_id="s2", user_id="u", agent_id="intern")
        assert out.messages[0] == {"role": "user", "content": "hi"}  # no researcher briefing either


async def test_a_person_approves_or_rejects_a_python_agents_tool_call(tmp_path: Path) -> None:
    """An ``approval`` handler holds the host's tool call until ``hookgate approvals`` (another process)
    answers; approve lets it run, reject raises ToolCallDenied naming who rejected it."""
    import asyncio

    from tests.conftest import run_hookgate

    cfg = write(
        tmp_path,
        {
            "hooks": {
                "PreToolUse": [
                    {
                        "matcher": "deploy",
                        "hooks": [{"type": "approval", "timeout": 30, "message": "Deploy ${tool_input.service}?"}],
                    }
                ]
            }
        },
    )

    async def pending() -> str:
        for _ in range(200):
            listed = await asyncio.to_thread(run_hookgate, ["approvals", "list", "--json", "-c", cfg])
            waiting = [r for r in json.loads(listed.stdout or "[]") if r["status"] == "pending"]
            if waiting:
                return str(waiting[0]["id"])
            await asyncio.sleep(0.1)
        raise AssertionError("no pending approval request appeared")

    async with Gateway.from_file(cfg) as gw:

        async def deploy(tool_use_id: str) -> str:
            async with gw.tool_call("deploy", {"service": "web"}, session_id="s-appr", tool_use_id=tool_use_id) as call:
                call.result = f"deployed {call.args['service']}"
            return str(call.result)

        task = asyncio.create_task(deploy("toolu_a"))
        answer = await asyncio.to_thread(run_hookgate, ["approvals", "approve", await pending(), "-c", cfg])
        assert answer.returncode == 0, answer.stderr
        assert await asyncio.wait_for(task, 30) == "deployed web"

        task = asyncio.create_task(deploy("toolu_b"))
        answer = await asyncio.to_thread(
            run_hookgate, ["approvals", "reject", await pending(), "--reason", "not on a Friday", "-c", cfg]
        )
        assert answer.returncode == 0, answer.stderr
        with pytest.raises(ToolCallDenied) as denied:
            await asyncio.wait_for(task, 30)
        assert "not on a Friday" in denied.value.reason and denied.value.permission == "deny"


async def test_side_effects_reach_the_audit_record(tmp_path: Path) -> None:
    """The scripted loop's class hooks and built-ins report side effects; ``hookgate audit`` (another
    process) reads them back from the records the Python host wrote."""
    import yaml

    from tests.conftest import run_hookgate

    doc = yaml.safe_load(Path(EXAMPLE_CONFIG).read_text())
    cfg = write(tmp_path, doc, "agent.json")
    async with Gateway.from_file(cfg) as gw:
        await run_agent(
            gw, demo_model(), {"run_sql": run_sql}, "Who is on the ops team?", **{**IDS, "session_id": "s-aud"}
        )
    listed = run_hookgate(["audit", "query", "--json", "--session", "s-aud", "-c", cfg])
    assert listed.returncode == 0, listed.stderr
    records = json.loads(listed.stdout)

    def effects(event: str, nth: int = 0) -> dict[str, list[str]]:
        record = [r for r in records if r["event"] == event][nth]
        return {h["id"].rsplit(":", 1)[-1]: h["side_effects"] for h in record["handlers"] if h["side_effects"]}

    assert effects("SessionStart") == {"Briefing": ["briefed the agent"]}
    assert effects("PreToolUse", 0) == {
        "CapRows": ["capped the query at 100 rows"],
        "TagQuery": ["tagged the query for ana"],
    }
    assert effects("PreToolUse", 1) == {"BlockDrop": ["refused a DROP statement"]}
    drop = [r for r in records if r["event"] == "PreToolUse"][1]
    assert drop["decision"] == "deny" and drop["reason"] == "DROP statements are not allowed for this agent"
    big = effects("PostToolUse", 1)
    assert big["RedactEmails"] == ["redacted 40 e-mail address(es)"]
    assert (
        big["truncateOutput"][0].startswith("truncated tool output: ") and "characters cut" in big["truncateOutput"][0]
    )


async def test_a_tool_result_json_cannot_carry_reaches_post_tool_use_hooks_as_json(tmp_path: Path) -> None:
    """A tool's result may be any object (the arguments cannot: they are the model's): PostToolUse hooks get
    what JSON can carry of it, the agent keeps the object itself."""
    from tests.integration.policy_funcs import SEEN_RESPONSES

    class Report:
        def __str__(self) -> str:
            return "report: 3 files"

    hook = {"type": "python", "callable": "tests.integration.policy_funcs:seen_response"}
    async with Gateway.from_file(write(tmp_path, {"hooks": {"PostToolUse": [{"hooks": [hook]}]}})) as gw:
        report = Report()
        async with gw.tool_call("scan", {"path": "."}, session_id="s") as call:
            call.result = {"report": report, "ratio": float("nan"), (1, 2): "pair"}
        assert call.result["report"] is report
    assert SEEN_RESPONSES[-1] == {
        "report": "report: 3 files",
        "ratio": "NaN",
        "[unencodable: key of type tuple: (1, 2)]": "pair",
    }
