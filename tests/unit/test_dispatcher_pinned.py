"""The one runner, pinned where a wrong answer would reach the user: why ``hookgate explain`` says a group
or handler runs (or not), what each kind of failure turns into, what the verdict cache keys on, what the
record step hands the audit trail, what an internal crash becomes, and that both executors give the
same results in the same order.

Handlers are real ``python`` handlers calling ``tests/unit/dispatch_callables.py`` in-process."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any, ClassVar

import pytest

from gateway import verdict_cache
from gateway.config import GroupSpec
from gateway.context import RunContext
from gateway.decision import Decision, Verdict
from gateway.dialects import parse_event
from gateway.dispatcher import (
    ASYNCIO,
    INLINE,
    Dispatcher,
    Trace,
    group_matches,
    if_matches,
    internal_failure,
    loop_running,
    run_inline,
)
from gateway.events import HookEvent
from handlers.base import Handler, register_handler
from tests.unit import dispatch_callables
from tests.unit.test_dispatcher import AlwaysBlocks, bash, config, handler

assert AlwaysBlocks.type == "test_judge_blocks"  # registered by that module: a judgment handler type


@register_handler
class JudgeAllows(Handler):
    """An LLM-style check (``judgment``) that always answers allow."""

    type: ClassVar[str] = "test_judge_allows"
    judgment: ClassVar[bool] = True

    def can_run_sync(self) -> bool:
        return True

    def run_sync(self, event: HookEvent, ctx: RunContext) -> Verdict:
        return Verdict(permission="allow", permission_reason="looks fine", updated_input={"command": "true"})

    async def run(self, event: HookEvent, ctx: RunContext) -> Verdict:
        return self.run_sync(event, ctx)


@register_handler
class CountsRuns(Handler):
    """Counts its runs in the run context's state store."""

    type: ClassVar[str] = "test_counts_runs"

    def can_run_sync(self) -> bool:
        return False

    def run_sync(self, event: HookEvent, ctx: RunContext) -> Verdict:
        ctx.state.counter_add("test", "runs")
        return Verdict()

    async def run(self, event: HookEvent, ctx: RunContext) -> Verdict:
        return self.run_sync(event, ctx)


@register_handler
class CountsRunsInline(CountsRuns):
    """The same, answering synchronously (the inline executor runs it)."""

    type: ClassVar[str] = "test_counts_runs_inline"

    def can_run_sync(self) -> bool:
        return True


GEMINI = {"session_id": "s", "transcript_path": "/t", "cwd": "/p", "timestamp": "2026-11-29T12:00:00.000Z"}
CODEX = {"session_id": "s", "turn_id": "t", "transcript_path": "/h/sessions/rollout-1.jsonl", "cwd": "/p"}
KIRO_BASH = {"hook_event_name": "preToolUse", "tool_name": "execute_bash", "cwd": "/p", "tool_input": {"command": "ls"}}
CALLABLE = "python tests.unit.dispatch_callables"


@pytest.fixture(autouse=True)
def _calls() -> None:
    dispatch_callables.CALLS.clear()


def group(matcher: str | None, dialect: str = "claude", agent: str | None = None) -> GroupSpec:
    return GroupSpec(matcher=matcher, handlers=[], where="w", dialect=dialect, agent=agent)


def event(name: str, **fields: Any) -> HookEvent:
    parsed = parse_event({"hook_event_name": name, "session_id": "s1", "cwd": "/tmp", **fields})
    assert isinstance(parsed, HookEvent)
    return parsed


def run(cfg: Any, ev: HookEvent, ctx: RunContext | None = None) -> Decision:
    return Dispatcher(cfg).decide(ev, ctx or RunContext(cfg, mode="run"))


# ---------------------------------------------------------------------------- explain: why a group fits


@pytest.mark.parametrize("matcher", [None, "", "*"])
def test_a_group_without_a_matcher_fits_every_event(matcher: str | None) -> None:
    assert group_matches(group(matcher), bash()) == (True, "no matcher (matches every event)")


def test_an_event_without_a_matcher_field_ignores_the_groups_matcher() -> None:
    prompt = event("UserPromptSubmit", prompt="hi")
    assert group_matches(group("Bash"), prompt) == (True, "UserPromptSubmit ignores matchers")
    assert group_matches(group("*"), prompt) == (True, "no matcher (matches every event)")


def test_an_agent_group_fits_only_events_of_that_agent() -> None:
    researcher, writer = bash(agent_id="researcher"), bash(agent_id="writer")
    scoped = group("Bash", agent="researcher")
    assert group_matches(scoped, researcher) == (True, "matcher 'Bash' matches tool_name='Bash'")
    assert group_matches(scoped, writer) == (
        False,
        "agents.researcher runs only for agent_id 'researcher' (got 'writer')",
    )
    assert group_matches(group(None, agent="researcher"), bash()) == (
        False,
        "agents.researcher runs only for agent_id 'researcher' (got None)",
    )
    assert group_matches(group("Bash"), writer)[0]  # a group of no agent fits every agent


def test_claude_matcher_reasons_name_the_field_and_value() -> None:
    assert group_matches(group("Bash"), bash()) == (True, "matcher 'Bash' matches tool_name='Bash'")
    assert group_matches(group("Write|Edit"), bash()) == (False, "matcher 'Write|Edit' does not match tool_name='Bash'")
    start = event("SessionStart", source="resume")
    assert group_matches(group("startup"), start) == (False, "matcher 'startup' does not match source='resume'")


def test_a_matcher_in_the_hosts_own_tool_name_still_fits_and_says_so() -> None:
    patch = parse_event({**CODEX, "hook_event_name": "PreToolUse", "tool_name": "apply_patch", "tool_input": {}})
    assert isinstance(patch, HookEvent) and patch.tool_name == "Edit"
    assert group_matches(group("apply_patch"), patch) == (
        True,
        "matcher 'apply_patch' matches the host's tool name 'apply_patch' (tool_name='Edit')",
    )
    assert group_matches(group("Write"), patch) == (False, "matcher 'Write' does not match tool_name='Edit'")
    assert group_matches(group("Edit"), patch) == (True, "matcher 'Edit' matches tool_name='Edit'")


def test_stop_failure_matchers_keep_claude_codes_narrower_exact_name_rule() -> None:
    failure = event("StopFailure", error="rate_limit")
    assert group_matches(group("rate_limit|server_error"), failure)[0]
    # a comma is not a list separator on StopFailure: the matcher is a regex there, and misses
    assert not group_matches(group("rate_limit,server_error"), failure)[0]
    assert group_matches(group("Bash,Write"), bash())[0]  # on tool events it is a list


def test_a_kiro_group_matches_kiro_tool_names() -> None:
    kiro = parse_event(KIRO_BASH)
    assert group_matches(group("execute_bash", "kiro"), kiro) == (
        True,
        "Kiro matcher 'execute_bash' matches 'execute_bash'",
    )
    assert group_matches(group("fs_write", "kiro"), kiro) == (
        False,
        "Kiro matcher 'fs_write' does not match 'execute_bash'",
    )
    # a Claude Code event is seen under Kiro's name for its tool
    assert group_matches(group("execute_bash", "kiro"), bash()) == (
        True,
        "Kiro matcher 'execute_bash' matches 'execute_bash'",
    )
    # a Kiro event keeps the name Kiro sent (execute_cmd is Bash too, but not execute_bash)
    cmd = parse_event({**KIRO_BASH, "tool_name": "execute_cmd"})
    assert group_matches(group("execute_cmd", "kiro"), cmd)[0]
    assert not group_matches(group("execute_bash", "kiro"), cmd)[0]
    # another host's event is seen under Kiro's name, not under the name that host sent
    gemini = parse_event(
        {**GEMINI, "hook_event_name": "BeforeTool", "tool_name": "run_shell_command", "tool_input": {}}
    )
    assert group_matches(group("execute_bash", "kiro"), gemini)[0]


def test_a_gemini_group_matches_gemini_tool_names_with_gemini_rules() -> None:
    shell = parse_event({**GEMINI, "hook_event_name": "BeforeTool", "tool_name": "run_shell_command", "tool_input": {}})
    assert group_matches(group("run_shell.*", "gemini"), shell) == (
        True,
        "Gemini matcher 'run_shell.*' matches 'run_shell_command'",
    )
    assert group_matches(group("write_file", "gemini"), shell) == (
        False,
        "Gemini matcher 'write_file' does not match 'run_shell_command'",
    )


# ---------------------------------------------------------------------------- explain: why a handler runs


def test_explain_says_why_each_handler_runs_or_not(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        {
            "PreToolUse": [
                {"matcher": "Write", "hooks": [handler("deny", id="writes")]},
                {
                    "matcher": "Bash",
                    "hooks": [
                        handler("deny", id="rm", **{"if": "Bash(rm *)"}),
                        handler("allow", id="ls-or-git", **{"if": ["Bash(git *)", "Bash(ls *)"]}),
                        handler("nothing", id="always"),
                        handler("nothing", id="again"),
                    ],
                },
            ]
        },
    )
    first, second = (g.where for g in cfg.hooks["PreToolUse"])
    trace = Trace()
    selected = Dispatcher(cfg).select(bash("ls -la"), trace)
    assert [s.spec.id for s in selected] == ["ls-or-git", "always"]
    assert trace.lines == [
        f"group {first}: skipped: matcher 'Write' does not match tool_name='Bash'",
        f"group {second}: FITS: matcher 'Bash' matches tool_name='Bash'",
        f"  handler rm ({CALLABLE}:deny): skipped: if 'Bash(rm *)' does not match",
        f"  handler ls-or-git ({CALLABLE}:allow): runs: if 'Bash(ls *)' matches",
        f"  handler always ({CALLABLE}:nothing): runs",
        f"  handler again ({CALLABLE}:nothing): skipped: identical to a handler already selected (runs once)",
    ]
    assert [s.spec.id for s in Dispatcher(cfg).select(bash("ls -la"))] == ["ls-or-git", "always"]  # same without trace
    assert [s.spec.id for s in Dispatcher(cfg).select(bash("ls -la"), trace)] == ["ls-or-git", "always"]


def test_an_if_rule_never_fits_a_non_tool_event() -> None:
    from gateway.config.specs import HandlerSpec

    spec = HandlerSpec(id="h", type="python", timeout=1, where="w", if_rule="Bash(rm *)")
    assert if_matches(spec, event("UserPromptSubmit", prompt="rm -rf /")) == (
        False,
        "if 'Bash(rm *)': not a tool event, never runs",
    )
    assert if_matches(spec, bash("rm -rf /")) == (True, "if 'Bash(rm *)' matches")
    assert if_matches(
        HandlerSpec(id="h", type="python", timeout=1, where="w"), event("UserPromptSubmit", prompt="x")
    ) == (True, "")
    either = HandlerSpec(id="h", type="python", timeout=1, where="w", if_rule=["Bash(git *)", "Bash(ls *)"])
    assert if_matches(either, bash("pwd")) == (False, "if ['Bash(git *)', 'Bash(ls *)'] does not match")


def test_a_handler_that_cannot_run_is_selected_and_explain_says_it_fails_closed(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        {
            "PreToolUse": [
                {"hooks": [handler("nothing", id="plain"), handler("allow", id="ruled", **{"if": "Bash(ls*)"})]}
            ]
        },
    )
    for spec in cfg.hooks["PreToolUse"][0].handlers:
        spec.problem = "callable vanished"
    trace = Trace()
    assert [s.spec.id for s in Dispatcher(cfg).select(bash("ls"), trace)] == ["plain", "ruled"]
    assert trace.lines[1:] == [
        f"  handler plain ({CALLABLE}:nothing): runs: but it cannot run (callable vanished): fails closed",
        f"  handler ruled ({CALLABLE}:allow): runs: if 'Bash(ls*)' matches; but it cannot run (callable vanished): "
        "fails closed",
    ]


def test_priority_orders_the_merge_and_positions_are_renumbered(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        {
            "PreToolUse": [
                {"hooks": [handler("nothing", id="a"), handler("allow", id="b", priority=-1)]},
                {"hooks": [handler("deny", id="c", priority=3), handler("with_effects", id="d")]},
            ]
        },
    )
    selected = Dispatcher(cfg).select(bash())
    assert [(s.spec.id, s.order, s.group) for s in selected] == [("c", 0, 1), ("a", 1, 0), ("d", 2, 1), ("b", 3, 0)]
    decision = run(cfg, bash())
    assert [(r.id, r.order) for r in decision.results] == [("c", 0), ("a", 1), ("d", 2), ("b", 3)]
    assert [r.side_effects for r in decision.results] == [[], [], ["wrote audit line"], []]  # a list, even empty


def test_equal_priorities_keep_config_order_across_groups_of_any_size(tmp_path: Path) -> None:
    sizes = [3, 1, 2, 1]
    ids = [[f"g{g}h{h}" for h in range(n)] for g, n in enumerate(sizes)]
    groups = [{"hooks": [{"type": "command", "command": f"true {i}", "id": i} for i in group]} for group in ids]
    selected = Dispatcher(config(tmp_path, {"PreToolUse": groups})).select(bash())
    assert [(s.spec.id, s.order) for s in selected] == [(i, n) for n, i in enumerate(i for group in ids for i in group)]


# ---------------------------------------------------------------------------- attempt: each outcome


def test_an_ok_result_carries_the_handlers_identity_and_timing(tmp_path: Path) -> None:
    cfg = config(tmp_path, {"PreToolUse": [{"hooks": [handler("nothing", id="n"), handler("deny", failClosed=True)]}]})
    first, second = run(cfg, bash()).results
    assert (first.id, first.type, first.status, first.order, first.fail_closed, first.judgment) == (
        "n",
        "python",
        "ok",
        0,
        False,
        False,
    )
    assert (second.id, second.order, second.fail_closed) == ("deny", 1, True)
    assert first.duration_ms > 0 and second.duration_ms > 0
    assert first.message is None and first.meta == {}


def test_a_failure_without_a_message_is_named_by_its_type(tmp_path: Path) -> None:
    cfg = config(tmp_path, {"PreToolUse": [{"hooks": [handler("silent_crash", failClosed=True)]}]})
    decision = run(cfg, bash())
    assert (decision.results[0].status, decision.results[0].message) == ("error", "RuntimeError")
    assert decision.permission_reason == (
        "hookgate: handler 'silent_crash' failed (error: RuntimeError) and is failClosed"
    )


def test_a_fail_closed_failure_blocks_where_the_event_can_block_and_only_informs_elsewhere(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        {
            "Stop": [{"hooks": [handler("crash", failClosed=True)]}],
            "SessionStart": [{"hooks": [handler("crash", id="crash-at-start", failClosed=True)]}],
        },
    )
    stop = run(cfg, event("Stop", stop_hook_active=False))
    assert stop.block and stop.permission is None
    assert stop.reason == "hookgate: handler 'crash' failed (error: boom) and is failClosed"
    start = run(cfg, event("SessionStart", source="startup"))
    assert not start.block and start.permission is None
    assert start.system_message == "hookgate: handler 'crash-at-start' failed (error: boom) and is failClosed"


def test_a_handler_errors_details_reach_the_result(tmp_path: Path) -> None:
    cfg = config(tmp_path, {"PreToolUse": [{"hooks": [handler("crash_with_details")]}]})
    result = run(cfg, bash()).results[0]
    assert (result.status, result.message, result.meta) == ("error", "exit 3: bad input", {"exit_code": 3})


def test_an_answers_hookgate_details_become_meta_not_output(tmp_path: Path) -> None:
    cfg = config(tmp_path, {"PreToolUse": [{"hooks": [handler("with_details")]}]})
    decision = run(cfg, bash())
    assert decision.permission == "ask"
    assert decision.results[0].meta == {"rule": "no-force-push"}
    assert "hookgate" not in decision.extra


def test_a_check_without_its_state_goes_through_and_says_so(tmp_path: Path) -> None:
    cfg = config(tmp_path, {"PreToolUse": [{"hooks": [handler("store_down")]}]})
    decision = run(cfg, bash())
    assert decision.permission is None and not decision.block
    assert decision.system_message == (
        "hookgate: check 'store_down' let this through without its state: state store unreachable: connection refused"
    )
    assert decision.results[0].meta == {"store_error": True}


def test_a_fail_closed_check_without_its_state_denies(tmp_path: Path) -> None:
    cfg = config(tmp_path, {"PreToolUse": [{"hooks": [handler("store_down", failClosed=True)]}]})
    decision = run(cfg, bash())
    assert decision.permission == "deny"
    assert decision.permission_reason == (
        "hookgate: handler 'store_down' failed (error: state store unreachable: connection refused) and is failClosed"
    )
    assert decision.system_message is None and decision.results[0].meta == {}


@pytest.mark.parametrize("executor", ["inline", "asyncio"])
def test_a_handler_that_cannot_run_never_runs_under_either_executor(tmp_path: Path, executor: str) -> None:
    other = "nothing" if executor == "inline" else "async_deny"
    cfg = config(tmp_path, {"PreToolUse": [{"hooks": [handler("allow", id="broken"), handler(other)]}]})
    cfg.hooks["PreToolUse"][0].handlers[0].problem = "callable vanished"
    dispatcher = Dispatcher(cfg)
    assert dispatcher.executor_for(dispatcher.select(bash())) is (INLINE if executor == "inline" else ASYNCIO)
    decision = dispatcher.decide(bash(), RunContext(cfg, mode="run"))
    broken = decision.results[0]
    assert (broken.status, broken.message, broken.fail_closed, broken.verdict) == (
        "error",
        "cannot run: callable vanished",
        True,
        None,
    )
    assert "allow" not in dispatch_callables.CALLS
    assert decision.permission == "deny"


# ---------------------------------------------------------------------------- the verdict cache


def cached_config(tmp_path: Path, event_name: str, *names: str, ttl: float = 60) -> Any:
    return config(
        tmp_path,
        {event_name: [{"hooks": [handler(name, cacheTtl=ttl) for name in names]}]},
        settings={"stateDir": str(tmp_path / "state")},
    )


def statuses(cfg: Any, events: list[HookEvent]) -> list[str]:
    dispatcher, ctx = Dispatcher(cfg), RunContext(cfg, mode="run")
    return [dispatcher.decide(ev, ctx).results[0].status for ev in events]


def test_the_cache_returns_the_same_verdict_without_its_side_effects(tmp_path: Path) -> None:
    cfg = cached_config(tmp_path, "PreToolUse", "with_effects")
    dispatcher, ctx = Dispatcher(cfg), RunContext(cfg, mode="run")
    dispatcher.decide(bash(), ctx)
    again = dispatcher.decide(bash(), ctx).results[0]
    assert again.status == "cached" and again.duration_ms == 0
    assert again.verdict == Verdict(additional_context="noted")


def test_prompts_are_cached_by_prompt_and_folder_not_by_session(tmp_path: Path) -> None:
    cfg = cached_config(tmp_path, "UserPromptSubmit", "nothing")

    def prompt(session: str, text: str, cwd: str = "/tmp") -> HookEvent:
        return event("UserPromptSubmit", session_id=session, cwd=cwd, prompt=text, permission_mode="default")

    asked = [prompt("a", "hi"), prompt("b", "hi"), prompt("b", "hi", cwd="/srv"), prompt("a", "other")]
    assert statuses(cfg, asked) == ["ok", "cached", "ok", "ok"]


def test_stops_are_cached_by_their_content_not_by_session(tmp_path: Path) -> None:
    cfg = cached_config(tmp_path, "Stop", "nothing")

    def stop(session: str, text: str, cwd: str = "/tmp") -> HookEvent:
        return event("Stop", session_id=session, cwd=cwd, last_assistant_message=text, stop_hook_active=False)

    stops = [stop("a", "done"), stop("b", "done"), stop("b", "done", cwd="/srv"), stop("a", "not done")]
    assert statuses(cfg, stops) == ["ok", "cached", "ok", "ok"]


def test_other_events_are_cached_by_their_content_less_the_session(tmp_path: Path) -> None:
    cfg = cached_config(tmp_path, "SessionStart", "nothing")

    def start(session: str, source: str, cwd: str = "/tmp") -> HookEvent:
        return event(
            "SessionStart",
            session_id=session,
            cwd=cwd,
            source=source,
            transcript_path=f"/t/{session}",
            prompt_id=f"p-{session}",
        )

    started = [start("a", "startup"), start("b", "startup"), start("a", "resume"), start("a", "startup", cwd="/srv")]
    assert statuses(cfg, started) == ["ok", "cached", "ok", "ok"]


def test_tool_calls_are_cached_by_tool_and_input_not_by_session(tmp_path: Path) -> None:
    cfg = cached_config(tmp_path, "PreToolUse", "nothing")
    write = bash("ls").with_fields(tool_name="Write")  # the same input, another tool
    again = bash("ls", session_id="other", tool_use_id="toolu_2", transcript_path="/t/other")
    assert statuses(cfg, [bash("ls", tool_use_id="toolu_1"), again, write, bash("ls -a")]) == [
        "ok",
        "cached",
        "ok",
        "ok",
    ]


def test_tool_calls_in_another_folder_are_another_call(tmp_path: Path) -> None:
    # a check of realpath(cwd/file_path) must not get the allow it gave for another cwd
    cfg = cached_config(tmp_path, "PreToolUse", "nothing")
    assert statuses(cfg, [bash("cat a"), bash("cat a", cwd="/etc"), bash("cat a", cwd="/etc")]) == [
        "ok",
        "ok",
        "cached",
    ]


def test_tool_results_are_cached_by_their_response_too(tmp_path: Path) -> None:
    # a PostToolUse check that blocks on a private key in the response must see each new response
    cfg = cached_config(tmp_path, "PostToolUse", "nothing")

    def ran(response: Any) -> HookEvent:
        return event("PostToolUse", tool_name="Bash", tool_input={"command": "cat k"}, tool_response=response)

    assert statuses(cfg, [ran({"stdout": "ok"}), ran({"stdout": "-----BEGIN"}), ran({"stdout": "ok"})]) == [
        "ok",
        "ok",
        "cached",
    ]


def test_the_host_format_and_the_hosts_tool_name_are_part_of_the_key(tmp_path: Path) -> None:
    cfg = cached_config(tmp_path, "PreToolUse", "nothing")
    payload = {"hook_event_name": "PreToolUse", "cwd": "/tmp", "tool_name": "Bash", "tool_input": {"command": "ls"}}
    kiro = HookEvent(dict(payload), dialect="kiro", host_tool_name="execute_bash")
    other = HookEvent(dict(payload), dialect="kiro", host_tool_name="shell")
    assert statuses(cfg, [HookEvent(dict(payload)), kiro, other, kiro]) == ["ok", "ok", "ok", "cached"]


def test_the_event_name_and_permission_mode_are_part_of_the_key(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        {name: [{"hooks": [handler("nothing", cacheTtl=60)]}] for name in ("PreToolUse", "PermissionRequest")},
        settings={"stateDir": str(tmp_path / "state")},
    )
    asked = bash("ls").with_fields(hook_event_name="PermissionRequest")
    planned = bash("ls", permission_mode="plan")
    assert statuses(cfg, [bash("ls"), asked, planned, bash("ls")]) == ["ok", "ok", "ok", "cached"]


def test_the_same_input_in_another_key_order_is_the_same_call(tmp_path: Path) -> None:
    cfg = cached_config(tmp_path, "PreToolUse", "nothing")
    reordered = event("PreToolUse", tool_name="Bash", tool_input={"description": "d", "command": "ls"})
    assert statuses(cfg, [bash("ls"), reordered]) == ["ok", "cached"]


def test_a_python_agents_input_need_not_be_json_to_be_cached(tmp_path: Path) -> None:
    cfg = cached_config(tmp_path, "PreToolUse", "nothing")
    with_path = HookEvent(
        {"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": Path("/tmp/a")}}
    )
    assert statuses(cfg, [with_path, with_path]) == ["ok", "cached"]


def test_each_handler_has_its_own_cache_entries(tmp_path: Path) -> None:
    cfg = cached_config(tmp_path, "PreToolUse", "with_effects", "nothing")
    dispatcher, ctx = Dispatcher(cfg), RunContext(cfg, mode="run")
    assert [r.status for r in dispatcher.decide(bash(), ctx).results] == ["ok", "ok"]
    assert [r.status for r in dispatcher.decide(bash(), ctx).results] == ["cached", "cached"]


SECRETS = [
    "sk-ant-api03-" + "a1B2c3D4e5F6g7H8i9J0" * 4,
    "AKIA" + "ABCDEFGHIJKLMNOP",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq8x0n3\n-----END RSA PRIVATE KEY-----",
    "ACME-424242",  # the config's own audit.redact pattern
]


def _state_bytes(state: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(state.iterdir()) if p.name.startswith("state.sqlite3"))


@pytest.mark.parametrize("secret", SECRETS, ids=["anthropic", "aws", "pem", "custom"])
def test_a_verdict_holding_a_secret_is_not_cached_and_never_written(tmp_path: Path, secret: str) -> None:
    cfg = config(
        tmp_path,
        {"PreToolUse": [{"hooks": [handler("echo_secret", cacheTtl=60), handler("nothing", cacheTtl=60)]}]},
        settings={"stateDir": str(tmp_path / "state")},
        audit={"redact": ["ACME-[0-9]{6}"]},
    )
    dispatcher, ctx = Dispatcher(cfg), RunContext(cfg, mode="run")
    call = bash().with_fields(tool_input={"command": "ls", "secret": secret})
    first = dispatcher.decide(call, ctx)
    second = dispatcher.decide(call, ctx)
    assert [r.status for r in first.results] == ["ok", "ok"]
    assert [r.status for r in second.results] == ["ok", "cached"]  # the clean verdict is still cached
    assert first.permission == second.permission == "deny" and secret in (second.permission_reason or "")
    written = _state_bytes(tmp_path / "state")
    assert written  # the cache was written (the clean verdict)
    for part in secret.split("\n"):
        assert part.encode() not in written


def test_failures_are_never_cached(tmp_path: Path) -> None:
    cfg = cached_config(tmp_path, "PreToolUse", "crash")
    assert statuses(cfg, [bash(), bash()]) == ["error", "error"]
    assert dispatch_callables.CALLS == ["crash", "crash"]


def test_a_cached_verdict_expires_after_its_ttl(tmp_path: Path) -> None:
    import time

    cfg = cached_config(tmp_path, "PreToolUse", "nothing", ttl=0.3)
    dispatcher, ctx = Dispatcher(cfg), RunContext(cfg, mode="run")
    assert [dispatcher.decide(bash(), ctx).results[0].status for _ in range(2)] == ["ok", "cached"]
    time.sleep(0.5)
    assert dispatcher.decide(bash(), ctx).results[0].status == "ok"


def test_a_store_that_cannot_cache_only_costs_a_rerun_and_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    not_a_dir = tmp_path / "state"
    not_a_dir.write_text("a file where the state folder should be")
    cfg = config(
        tmp_path,
        {"PreToolUse": [{"hooks": [handler("deny", cacheTtl=60)]}]},
        settings={"stateDir": str(not_a_dir)},
    )
    verdict_cache.warned.clear()
    dispatcher, ctx = Dispatcher(cfg), RunContext(cfg, mode="run")
    with caplog.at_level(logging.WARNING, logger="hookgate.store"):
        decisions = [dispatcher.decide(bash(), ctx) for _ in range(2)]
    assert [d.permission for d in decisions] == ["deny", "deny"]
    assert [d.results[0].status for d in decisions] == ["ok", "ok"]
    assert dispatch_callables.CALLS == ["deny", "deny"]
    warnings = [r.getMessage() for r in caplog.records if r.name == "hookgate.store"]
    assert warnings == [
        f"state store {not_a_dir}/state.sqlite3: [Errno 17] File exists: '{not_a_dir}' (cacheTtl handlers run uncached)"
    ]


def test_a_handler_without_cache_ttl_never_opens_the_state_store(tmp_path: Path) -> None:
    state = tmp_path / "state"
    cfg = config(tmp_path, {"PreToolUse": [{"hooks": [handler("deny")]}]}, settings={"stateDir": str(state)})
    dispatcher, ctx = Dispatcher(cfg), RunContext(cfg, mode="run")
    assert [dispatcher.decide(bash(), ctx, record=False).results[0].status for _ in range(2)] == ["ok", "ok"]
    assert not state.exists()  # nothing to look up, nothing stored: no store was opened


def test_a_cache_that_cannot_be_written_warns_with_the_stores_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from gateway.store.sqlite import SQLiteStore

    cfg = cached_config(tmp_path, "PreToolUse", "deny")
    SQLiteStore(str(tmp_path / "state")).close()  # the file exists; this run may only read it
    verdict_cache.warned.clear()
    dispatcher, ctx = Dispatcher(cfg), RunContext(cfg, mode="run")
    store = ctx.get_resource("state", lambda: SQLiteStore(str(tmp_path / "state"), readonly=True))
    with caplog.at_level(logging.WARNING, logger="hookgate.store"):
        decisions = [dispatcher.decide(bash(), ctx) for _ in range(2)]
    store.close()
    assert [(d.permission, d.results[0].status) for d in decisions] == [("deny", "ok")] * 2  # reads miss
    warnings = [r.getMessage() for r in caplog.records if r.name == "hookgate.store"]
    assert warnings == [
        f"state store {tmp_path}/state/state.sqlite3: attempt to write a readonly database "
        "(cacheTtl handlers run uncached)"
    ]


# ---------------------------------------------------------------------------- chains


def test_a_chain_stops_at_a_block_and_skipped_results_keep_their_identity(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        {
            "PostToolUse": [
                {
                    "sequential": True,
                    "hooks": [handler("block"), handler("nothing", id="after", failClosed=True)],
                }
            ]
        },
    )
    post = event("PostToolUse", tool_name="Bash", tool_input={"command": "ls"}, tool_response="x")
    decision = run(cfg, post)
    skipped = decision.results[1]
    assert (skipped.id, skipped.type, skipped.status, skipped.order, skipped.fail_closed) == (
        "after",
        "python",
        "skipped",
        1,
        True,
    )
    assert skipped.message == "stopped at 'block' (runs one after another)"
    assert decision.block and decision.reason == "not yet"
    assert dispatch_callables.CALLS == ["block"]


def test_sequential_groups_are_separate_chains(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        {
            "PreToolUse": [
                {"sequential": True, "hooks": [handler("deny"), handler("allow")]},
                {"sequential": True, "hooks": [handler("seen")]},
            ]
        },
    )
    decision = run(cfg, bash())
    assert [(r.id, r.status) for r in decision.results] == [("deny", "ok"), ("allow", "skipped"), ("seen", "ok")]


def test_the_chained_handlers_of_an_event_are_one_chain_across_groups(tmp_path: Path) -> None:
    def hook(name: str) -> dict[str, Any]:
        return {"type": "python", "hook": f"{dispatch_callables.__name__}:{name}", "id": name}

    cfg = config(
        tmp_path, {"PreToolUse": [{"hooks": [hook("RefuseUnsafe")]}, {"hooks": [hook("Flag"), handler("seen")]}]}
    )
    decision = run(cfg, bash("make"))
    assert [c for c in dispatch_callables.CALLS if c != "seen"] == ["Flag", "RefuseUnsafe"]  # priority 10, then 20
    assert decision.permission is None  # RefuseUnsafe saw Flag's rewrite
    assert decision.updated_input == {"command": "make --safe", "description": "d"}
    assert decision.additional_context == ["saw make"]  # a handler outside the chain sees the original


def test_a_chain_stops_at_a_fail_closed_failure_but_not_at_a_fail_open_one(tmp_path: Path) -> None:
    def chain(fail_closed: bool) -> list[tuple[str, str]]:
        cfg = config(
            tmp_path,
            {
                "PreToolUse": [
                    {"sequential": True, "hooks": [handler("crash", failClosed=fail_closed), handler("allow")]}
                ]
            },
        )
        return [(r.id, r.status) for r in run(cfg, bash()).results]

    assert chain(True) == [("crash", "error"), ("allow", "skipped")]
    assert chain(False) == [("crash", "error"), ("allow", "ok")]


def test_a_chain_passes_a_rewritten_tool_output_along(tmp_path: Path) -> None:
    cfg = config(
        tmp_path, {"PostToolUse": [{"sequential": True, "hooks": [handler("redact_output"), handler("saw_output")]}]}
    )
    post = event("PostToolUse", tool_name="Bash", tool_input={"command": "cat .env"}, tool_response="SECRET=1")
    decision = run(cfg, post)
    assert decision.updated_output == "[redacted]"
    assert decision.additional_context == ["saw [redacted]"]  # the second handler saw the first one's output


def test_everything_after_the_stop_is_skipped_with_its_identity(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        {
            "PreToolUse": [
                {
                    "sequential": True,
                    "hooks": [handler("deny"), handler("allow"), {"type": "test_judge_blocks", "id": "judge"}],
                }
            ]
        },
    )
    decision = run(cfg, bash())
    assert [(r.id, r.status) for r in decision.results] == [("deny", "ok"), ("allow", "skipped"), ("judge", "skipped")]
    assert [r.judgment for r in decision.results] == [False, False, True]  # a skipped LLM check is still one
    assert [r.type for r in decision.results] == ["python", "python", "test_judge_blocks"]


def test_a_cached_handler_in_a_chain_is_cached_too(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        {"PreToolUse": [{"sequential": True, "hooks": [handler("add_flag", cacheTtl=60), handler("seen")]}]},
        settings={"stateDir": str(tmp_path / "state")},
    )
    dispatcher, ctx = Dispatcher(cfg), RunContext(cfg, mode="run")
    first, second = (dispatcher.decide(bash("make"), ctx) for _ in range(2))
    assert [r.status for r in second.results] == ["cached", "ok"]
    assert first.additional_context == second.additional_context == ["saw make --safe"]  # the cached rewrite applies


def test_a_background_handler_in_a_chain_does_not_stop_it(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        {"PreToolUse": [{"sequential": True, "hooks": [handler("nothing", **{"async": True}), handler("seen")]}]},
    )

    async def in_loop() -> Decision:
        ctx = RunContext(cfg, mode="api")
        decision = await Dispatcher(cfg).dispatch(bash("make"), ctx)
        await ctx.drain(5)
        return decision

    decision = asyncio.run(in_loop())
    assert [(r.id, r.status) for r in decision.results] == [("nothing", "skipped"), ("seen", "ok")]
    assert decision.additional_context == ["saw make"]


def test_a_chain_keeps_the_tool_output_when_nobody_rewrote_it(tmp_path: Path) -> None:
    cfg = config(
        tmp_path, {"PostToolUse": [{"sequential": True, "hooks": [handler("nothing"), handler("saw_output")]}]}
    )
    post = event("PostToolUse", tool_name="Bash", tool_input={"command": "cat a"}, tool_response="contents")
    decision = run(cfg, post)
    assert decision.additional_context == ["saw contents"] and decision.updated_output is None


def test_a_failed_handler_in_a_chain_rewrites_nothing(tmp_path: Path) -> None:
    cfg = config(tmp_path, {"PreToolUse": [{"sequential": True, "hooks": [handler("store_down"), handler("seen")]}]})
    decision = run(cfg, bash("make"))
    assert decision.additional_context == ["saw make"]
    assert decision.updated_input is None


# ---------------------------------------------------------------------------- executors


def test_the_asyncio_executor_keeps_job_order_whatever_finishes_first(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        {
            "PreToolUse": [
                {"hooks": [handler("slow", id="slow", timeout=0.3), handler("async_deny"), handler("allow")]},
                {"sequential": True, "hooks": [handler("add_flag"), handler("seen")]},
            ]
        },
    )
    decision = run(cfg, bash("make"))
    assert [(r.id, r.status) for r in decision.results] == [
        ("slow", "timeout"),
        ("async_deny", "ok"),
        ("allow", "ok"),
        ("add_flag", "ok"),
        ("seen", "ok"),
    ]
    assert decision.results[0].message == "no answer within 0.3 s"
    assert decision.permission == "deny"


def test_inside_a_running_loop_the_asyncio_executor_uses_it_and_leaves_the_context_open(tmp_path: Path) -> None:
    cfg = config(tmp_path, {"PreToolUse": [{"hooks": [handler("async_deny")]}]})
    closed: list[bool] = []

    class Watched(RunContext):
        async def aclose(self) -> None:
            closed.append(True)
            await super().aclose()

    async def in_loop() -> Decision:
        assert loop_running()
        return await Dispatcher(cfg).dispatch(bash(), Watched(cfg, mode="api"))

    assert asyncio.run(in_loop()).permission == "deny"
    assert closed == []  # the caller's loop owns the context's resources
    assert run(cfg, bash(), Watched(cfg, mode="run")).permission == "deny"
    assert closed == [True]  # the loop started for this event closed them before it ended


def test_the_inline_executor_answers_synchronously_without_a_loop(tmp_path: Path) -> None:
    cfg = config(tmp_path, {"PreToolUse": [{"hooks": [handler("deny"), handler("nothing")]}]})
    dispatcher = Dispatcher(cfg)
    assert not loop_running()
    selected = dispatcher.select(bash())
    results = run_inline(INLINE.run(dispatcher, bash(), selected, RunContext(cfg, mode="run")))
    assert [(r.id, r.status) for r in results] == [("deny", "ok"), ("nothing", "ok")]
    assert run_inline(_answer(42)) == 42


async def _answer(value: int) -> int:
    return value


def test_no_selected_handler_is_an_empty_decision(tmp_path: Path) -> None:
    cfg = config(tmp_path, {"PreToolUse": [{"matcher": "Write", "hooks": [handler("deny")]}]})
    decision = run(cfg, bash())
    assert decision.is_empty and decision.results == []
    assert decision.to_dict() == {"event": "PreToolUse", "results": []}


# ---------------------------------------------------------------------------- the record step


class Recorded(RunContext):
    """A run context whose audit recorder keeps what it is handed (the seam the audit helper owns)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.submitted: list[tuple[HookEvent, Decision, int | None]] = []

    def recorder(self) -> Any:
        outer = self

        class Keep:
            def submit(self, event: HookEvent, decision: Decision, started_ns: int | None = None) -> None:
                outer.submitted.append((event, decision, started_ns))

        return Keep()


@pytest.mark.parametrize(
    ("mode", "handled", "unhandled"),
    [("handled", 1, 0), ("all", 1, 1), ("off", 0, 0)],
)
def test_the_record_step_follows_audit_record(tmp_path: Path, mode: str, handled: int, unhandled: int) -> None:
    import time

    cfg = config(tmp_path, {"PreToolUse": [{"matcher": "Bash", "hooks": [handler("deny")]}]}, audit={"record": mode})
    write = parse_event({"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {}})
    ctx = Recorded(cfg, mode="run")
    before = time.time_ns()
    decided = Dispatcher(cfg).decide(bash(), ctx)
    assert len(ctx.submitted) == handled
    if handled:
        ev, decision, started_ns = ctx.submitted[0]
        assert decision is decided and ev.tool_name == "Bash"  # the decision the host gets, as it gets it
        assert started_ns is not None and before <= started_ns <= time.time_ns()
    Dispatcher(cfg).decide(write, ctx)
    assert len(ctx.submitted) == handled + unhandled


def test_explain_and_demo_record_nothing(tmp_path: Path) -> None:
    cfg = config(tmp_path, {"PreToolUse": [{"hooks": [handler("deny")]}]}, audit={"record": "all"})
    ctx, trace = Recorded(cfg, mode="run"), Trace()
    assert Dispatcher(cfg).decide(bash(), ctx, trace, record=False).permission == "deny"
    assert ctx.submitted == []
    assert trace.lines[-1] == f"  handler deny ({CALLABLE}:deny): runs"  # explain still gets its trace


def test_the_default_is_to_record_handled_events(tmp_path: Path) -> None:
    cfg = config(tmp_path, {"PreToolUse": [{"matcher": "Bash", "hooks": [handler("nothing")]}]})
    ctx = Recorded(cfg, mode="run")
    Dispatcher(cfg).decide(bash(), ctx)
    Dispatcher(cfg).decide(parse_event({"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {}}), ctx)
    assert [d.results[0].id for _, d, _ in ctx.submitted] == ["nothing"]


def test_no_recorder_records_nothing_and_answers_all_the_same(tmp_path: Path) -> None:
    cfg = config(tmp_path, {"PreToolUse": [{"hooks": [handler("deny")]}]})

    class Unrecorded(RunContext):
        def recorder(self) -> None:
            return None

    assert Dispatcher(cfg).decide(bash(), Unrecorded(cfg, mode="run")).permission == "deny"


# ---------------------------------------------------------------------------- when hookgate itself fails


def test_an_internal_failure_denies_only_when_a_handler_of_the_event_is_fail_closed(tmp_path: Path) -> None:
    closed = config(
        tmp_path,
        {
            "PreToolUse": [{"hooks": [handler("nothing")]}, {"hooks": [handler("deny", failClosed=True)]}],
            "Stop": [{"hooks": [handler("nothing", failClosed=True)]}],
        },
    )
    decision = internal_failure(closed, bash(), "KeyError: 'x'")
    assert decision is not None
    assert (decision.permission, decision.block) == ("deny", False)
    assert decision.permission_reason == "hookgate: handler 'hookgate' failed (error: KeyError: 'x') and is failClosed"
    assert [(r.id, r.type, r.status, r.fail_closed) for r in decision.results] == [
        ("hookgate", "internal", "error", True)
    ]
    stop = internal_failure(closed, event("Stop", stop_hook_active=False), "boom")
    assert stop is not None and stop.block and stop.permission is None
    assert stop.reason == "hookgate: handler 'hookgate' failed (error: boom) and is failClosed"
    opened = config(tmp_path, {"PreToolUse": [{"hooks": [handler("nothing")]}]})
    assert internal_failure(opened, bash(), "boom") is None
    assert internal_failure(closed, event("UserPromptSubmit", prompt="x"), "boom") is None  # no handler there


# ---------------------------------------------------------------------------- the background job


def test_a_background_handler_sees_the_event_a_foreground_one_sees(tmp_path: Path) -> None:
    """A Gemini-format hook gets Gemini's own payload on stdin, in the foreground and in the detached
    background process alike (the job carries the payload, the raw event, its dialect and tool name)."""
    import time

    shell = parse_event(
        {**GEMINI, "hook_event_name": "BeforeTool", "tool_name": "run_shell_command", "tool_input": {"command": "ls"}}
    )
    assert isinstance(shell, HookEvent)
    cfg = config(
        tmp_path,
        {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": 'cat > "$MARK"'}]}]},
    )
    spec = cfg.hooks["PreToolUse"][0].handlers[0]
    front, back = tmp_path / "front.json", tmp_path / "back.json"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MARK", str(front))
        assert run(cfg, shell).results[0].status == "ok"
        mp.setenv("MARK", str(back))
        mp.chdir(Path(__file__).resolve().parents[2])
        spec.async_ = True
        assert run(cfg, shell).results[0].status == "skipped"
        deadline = time.monotonic() + 30
        while not (back.exists() and back.read_text().endswith("}")) and time.monotonic() < deadline:
            time.sleep(0.05)
    seen = json.loads(front.read_text())
    assert seen["hook_event_name"] == "BeforeTool" and seen["tool_name"] == "run_shell_command"
    assert json.loads(back.read_text()) == seen


# ---------------------------------------------------------------------------- the run context reaches every handler


def test_before_asyncio_is_imported_decide_runs_inline_and_imports_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``hookgate run``'s case, in-process (test_dispatcher.py checks it in a fresh interpreter): no
    asyncio for synchronous handlers, no Stop-loop guard for a tool event."""
    import sys

    cfg = config(tmp_path, {"PreToolUse": [{"hooks": [handler("deny")]}]})
    dispatcher = Dispatcher(cfg)
    monkeypatch.delitem(sys.modules, "asyncio")
    monkeypatch.delitem(sys.modules, "gateway.stopguard", raising=False)
    assert dispatcher.executor_for(dispatcher.select(bash())) is INLINE
    decision = dispatcher.decide(bash(), RunContext(cfg, mode="run"), record=False)
    assert decision.permission == "deny"
    assert "asyncio" not in sys.modules and "gateway.stopguard" not in sys.modules


@pytest.mark.parametrize("sync", [True, False], ids=["inline", "asyncio"])
def test_each_executor_hands_the_run_context_to_the_handler(tmp_path: Path, sync: bool) -> None:
    cfg = config(
        tmp_path,
        {"PreToolUse": [{"hooks": [{"type": "test_counts_runs_inline" if sync else "test_counts_runs"}]}]},
        settings={"stateDir": str(tmp_path / "state")},
    )
    dispatcher, ctx = Dispatcher(cfg), RunContext(cfg, mode="run")
    assert dispatcher.executor_for(dispatcher.select(bash())) is (INLINE if sync else ASYNCIO)
    results = [dispatcher.decide(bash(), ctx).results[0] for _ in range(2)]
    assert [(r.status, r.message) for r in results] == [("ok", None), ("ok", None)]
    assert RunContext(cfg, mode="run").state.counter_get("test", "runs") == 2


def test_a_background_handler_gets_the_run_context_too(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        {"PreToolUse": [{"hooks": [{"type": "test_counts_runs", "async": True}]}]},
        settings={"stateDir": str(tmp_path / "state")},
    )

    async def in_loop() -> Decision:
        ctx = RunContext(cfg, mode="api")
        decision = await Dispatcher(cfg).dispatch(bash(), ctx)
        await ctx.drain(5)
        await ctx.aclose()
        return decision

    assert asyncio.run(in_loop()).results[0].status == "skipped"
    assert RunContext(cfg, mode="run").state.counter_get("test", "runs") == 1


def test_an_llm_checks_allow_never_allows_through_the_dispatcher(tmp_path: Path) -> None:
    cfg = config(tmp_path, {"PreToolUse": [{"hooks": [{"type": "test_judge_allows", "id": "judge"}]}]})
    decision = run(cfg, bash("rm -rf /"))
    assert decision.permission is None and decision.updated_input is None
    assert decision.results[0].judgment is True
    assert decision.results[0].verdict == Verdict(
        permission="allow", permission_reason="looks fine", updated_input={"command": "true"}
    )  # kept as answered, for explain and the audit; only the merge ignores it


def test_judgment_blocks_on_tool_events_are_not_counted_as_stop_blocks(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        {"PreToolUse": [{"hooks": [{"type": "test_judge_blocks", "id": "judge"}]}]},
        settings={"stopBlockLimit": 1, "stateDir": str(tmp_path / "state")},
    )
    dispatcher, ctx = Dispatcher(cfg), RunContext(cfg, mode="run")
    outcomes = [dispatcher.decide(bash(), ctx) for _ in range(3)]
    assert [(d.block, d.results[0].status) for d in outcomes] == [(True, "ok")] * 3


# ---------------------------------------------------------------------------- dispatch from a running loop


def test_dispatch_records_and_traces_by_default_as_serve_and_the_api_call_it(tmp_path: Path) -> None:
    cfg = config(tmp_path, {"PreToolUse": [{"hooks": [handler("deny")]}]})
    ctx, trace = Recorded(cfg, mode="api"), Trace()

    async def in_loop() -> Decision:
        return await Dispatcher(cfg).dispatch(bash(), ctx, trace)

    decision = asyncio.run(in_loop())
    assert [d for _, d, _ in ctx.submitted] == [decision]
    assert trace.lines[-1] == f"  handler deny ({CALLABLE}:deny): runs"


def test_a_trace_appends_to_the_list_it_is_given() -> None:
    lines = ["explain: PreToolUse"]
    trace = Trace(lines)
    assert trace.lines is lines
    assert Trace().lines == [] and Trace().lines is not Trace().lines


def test_an_event_with_no_hooks_configured_is_an_empty_decision(tmp_path: Path) -> None:
    cfg = config(tmp_path, {"PreToolUse": [{"hooks": [handler("deny")]}]})
    decision = run(cfg, event("UserPromptSubmit", prompt="hi"))
    assert decision.is_empty and decision.results == []


def test_run_inline_names_the_problem_when_dispatch_would_wait() -> None:
    class Waits:
        def __await__(self) -> Any:
            yield "waiting"

    async def waiting() -> None:
        await Waits()

    with pytest.raises(RuntimeError, match=r"^dispatch waited on an event loop that is not running$"):
        run_inline(waiting())


def test_a_detached_background_handler_has_its_own_session_and_stays_out_of_the_answer(tmp_path: Path) -> None:
    import subprocess
    import sys
    import time

    mark = tmp_path / "probe.json"
    cfg_path = tmp_path / "hookgate.json"
    cfg_path.write_text(
        json.dumps({"hooks": {"PreToolUse": [{"hooks": [handler("background_probe", **{"async": True})]}]}})
    )
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": "/tmp"}
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [sys.executable, "-m", "gateway", "run", "--config", str(cfg_path)],
        input=json.dumps(payload),
        capture_output=True,  # also waits until every writer of these pipes is gone
        text=True,
        cwd=root,
        env={**__import__("os").environ, "HOOKGATE_TEST_MARK": str(mark)},
        timeout=60,
        check=False,
    )
    assert (proc.returncode, proc.stdout) == (0, "")
    assert "noise" not in proc.stderr
    deadline = time.monotonic() + 30
    while not mark.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    probe = json.loads(mark.read_text())
    assert probe["sid"] == probe["pid"]  # a session leader: the host's kill of the hook's group spares it


def test_the_detached_job_leaves_the_hooks_session_and_streams(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """In-process, so the job's own start is what is checked: the detached child must not share the
    hook's process group (the host kills it on timeout) nor write into the hook's stdout/stderr."""
    import os
    import time

    mark = tmp_path / "probe.json"
    cfg = config(tmp_path, {"PreToolUse": [{"hooks": [handler("background_probe", **{"async": True})]}]})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOOKGATE_TEST_MARK", str(mark))
        mp.chdir(Path(__file__).resolve().parents[2])  # the child imports tests.unit.dispatch_callables
        assert run(cfg, bash(), RunContext(cfg, mode="run")).results[0].status == "skipped"
        deadline = time.monotonic() + 30
        while not mark.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    probe = json.loads(mark.read_text())
    while os.waitpid(probe["pid"], os.WNOHANG) == (0, 0) and time.monotonic() < deadline:
        time.sleep(0.05)  # our own child: once reaped, everything it printed has been written
    assert probe["sid"] == probe["pid"] != os.getsid(0)
    out, err = capfd.readouterr()
    assert "noise" not in out + err


def test_duration_is_the_handlers_wall_time_in_milliseconds(tmp_path: Path) -> None:
    cfg = config(tmp_path, {"PreToolUse": [{"hooks": [handler("nap")]}]})
    duration = run(cfg, bash()).results[0].duration_ms
    assert 50 <= duration < 60_000  # it slept 50 ms; a loaded machine may add, never remove


def test_a_configs_guard_tuning_applies_to_its_own_events_only(tmp_path: Path) -> None:
    from gateway.config import default_config_path, load_config

    tuned_file = tmp_path / "tuned.json"
    tuned_file.write_text(json.dumps({"guards": {"allowCommands": ["git clean -fdx"]}}))
    plain = load_config([default_config_path()], use_cache=False)
    tuned = load_config([default_config_path(), str(tuned_file)], use_cache=False)
    clean = bash("git clean -fdx")
    before = run(plain, clean).permission
    assert before in ("deny", "ask")
    assert run(tuned, clean).permission is None  # this config allows it
    assert run(plain, clean).permission == before  # and that did not leak into the other config
