"""The decision core's one runner, driven directly: ``Dispatcher.select``, ``dispatch`` and ``decide``,
both executors, and ``attempt`` (timing, cache, fail-closed, failures as values).

Handlers are real ``python`` handlers calling ``tests/unit/dispatch_callables.py`` in-process, plus
registered ``Handler`` classes where a test needs a judgment handler."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, ClassVar

import pytest

from gateway.config import RuntimeConfig, load_config
from gateway.context import RunContext
from gateway.decision import Verdict
from gateway.dialects import parse_event
from gateway.dispatcher import ASYNCIO, INLINE, Dispatcher, Trace, run_inline
from gateway.events import HookEvent
from handlers.base import Handler, register_handler
from tests.unit import dispatch_callables

ROOT = Path(__file__).resolve().parents[2]
CALLABLES = "tests.unit.dispatch_callables"


def handler(name: str, **fields: Any) -> dict[str, Any]:
    return {"type": "python", "callable": f"{CALLABLES}:{name}", "id": fields.pop("id", name), **fields}


def config(tmp_path: Path, hooks: dict[str, Any], **sections: Any) -> RuntimeConfig:
    path = tmp_path / "hookgate.json"
    path.write_text(json.dumps({"hooks": hooks, **sections}))
    return load_config([str(path)], use_cache=False)


def bash(command: str = "ls", **extra: Any) -> HookEvent:
    return parse_event(
        {
            "hook_event_name": "PreToolUse",
            "session_id": "s1",
            "cwd": "/tmp",
            "tool_name": "Bash",
            "tool_input": {"command": command, "description": "d"},
            **extra,
        }
    )


@pytest.fixture(autouse=True)
def _calls() -> None:
    dispatch_callables.CALLS.clear()


# ---------------------------------------------------------------------------- select


def test_select_follows_matchers_if_rules_priority_and_runs_identical_handlers_once(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        {
            "PreToolUse": [
                {"matcher": "Write", "hooks": [handler("deny", id="write-only")]},
                {
                    "matcher": "Bash",
                    "hooks": [
                        handler("allow", id="first"),
                        handler("deny", id="late", priority=5),
                        handler("nothing", id="rm-only", **{"if": "Bash(rm *)"}),
                        handler("allow", id="same-as-first"),
                    ],
                },
            ]
        },
    )
    trace = Trace()
    selected = Dispatcher(cfg).select(bash("ls -la"), trace)
    assert [(s.spec.id, s.order) for s in selected] == [("late", 0), ("first", 1)]
    text = "\n".join(trace.lines)
    assert "group" in text and "skipped" in text
    assert "identical to a handler already selected (runs once)" in text
    assert [s.spec.id for s in Dispatcher(cfg).select(bash("rm -rf x"))] == ["late", "first", "rm-only"]


# ---------------------------------------------------------------------------- one path, two executors


def test_inline_executor_is_chosen_only_for_synchronous_handlers_without_a_loop(tmp_path: Path) -> None:
    sync = config(tmp_path, {"PreToolUse": [{"hooks": [handler("allow"), handler("deny")]}]})
    mixed = config(tmp_path, {"PreToolUse": [{"hooks": [handler("allow"), handler("async_deny")]}]})
    assert Dispatcher(sync).executor_for(Dispatcher(sync).select(bash())) is INLINE
    assert Dispatcher(mixed).executor_for(Dispatcher(mixed).select(bash())) is ASYNCIO

    async def inside_a_loop() -> object:
        return Dispatcher(sync).executor_for(Dispatcher(sync).select(bash()))

    import asyncio

    assert asyncio.run(inside_a_loop()) is ASYNCIO


@pytest.mark.parametrize("hooks", [["allow", "deny"], ["allow", "async_deny"]], ids=["inline", "asyncio"])
def test_decide_and_dispatch_give_the_same_decision(tmp_path: Path, hooks: list[str]) -> None:
    cfg = config(tmp_path, {"PreToolUse": [{"matcher": "Bash", "hooks": [handler(h) for h in hooks]}]})
    ran_sync = Dispatcher(cfg).decide(bash(), RunContext(cfg, mode="run"))

    import asyncio

    async def in_loop() -> Any:
        ctx = RunContext(cfg, mode="api")
        try:
            return await Dispatcher(cfg).dispatch(bash(), ctx)
        finally:
            await ctx.aclose()

    ran_async = asyncio.run(in_loop())
    for decision in (ran_sync, ran_async):
        assert decision.permission == "deny" and decision.permission_reason == "no"
        assert [(r.id, r.status) for r in decision.results] == [(hooks[0], "ok"), (hooks[1], "ok")]
        assert all(r.verdict is not None for r in decision.results)  # every handler has its result


def test_hookgate_run_path_never_imports_asyncio_for_synchronous_handlers(tmp_path: Path) -> None:
    cfg_path = tmp_path / "hookgate.json"
    cfg_path.write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": [handler("deny")]}]}}))
    load_config([str(cfg_path)])  # warms the config cache, as a hook call finds it
    script = textwrap.dedent(f"""
        import sys
        from gateway.config import load_config
        from gateway.context import RunContext
        from gateway.dialects import parse_event
        from gateway.dispatcher import Dispatcher
        config = load_config([{str(cfg_path)!r}])
        event = parse_event({{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {{"command": "ls"}}}})
        decision = Dispatcher(config).decide(event, RunContext(config, mode="run"))
        print(decision.permission, "asyncio" in sys.modules)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["deny", "False"]


def test_asyncio_executor_starts_its_own_loop_under_decide(tmp_path: Path) -> None:
    cfg = config(tmp_path, {"PreToolUse": [{"hooks": [handler("async_deny")]}]})
    decision = Dispatcher(cfg).decide(bash(), RunContext(cfg, mode="run"))
    assert decision.permission == "deny"
    assert dispatch_callables.CALLS == ["async_deny"]


async def test_under_a_loop_plain_functions_answer_at_once_and_awaitables_are_still_awaited(tmp_path: Path) -> None:
    hooks = [handler("allow"), handler("async_deny"), handler("deny_via_partial"), handler("deny_later")]
    cfg = config(tmp_path, {"PreToolUse": [{"hooks": hooks}]})
    dispatcher = Dispatcher(cfg)
    ctx = RunContext(cfg, mode="serve")
    specs = [s.spec for s in dispatcher.select(bash())]
    started = [dispatcher.handler(s).start(bash(), ctx) for s in specs]
    assert [hasattr(x, "__await__") for x in started] == [False, True, True, True]
    for x in started[1:]:
        await x  # type: ignore[misc]
    dispatch_callables.CALLS.clear()
    try:
        decision = await dispatcher.dispatch(bash(), ctx, record=False)
    finally:
        await ctx.aclose()
    assert sorted(dispatch_callables.CALLS) == ["allow", "async_deny", "deny", "deny"]
    assert [r.status for r in decision.results] == ["ok"] * 4 and decision.permission == "deny"


async def test_a_builtin_starts_as_a_coroutine_that_awaits_the_store(tmp_path: Path) -> None:
    hook = {"type": "builtin", "name": "rateLimit", "limit": 3, "window": 60, "per": ["session"]}
    cfg = config(tmp_path, {"PreToolUse": [{"hooks": [hook]}]})
    dispatcher = Dispatcher(cfg)
    (spec,) = [s.spec for s in dispatcher.select(bash())]
    ctx = RunContext(cfg, mode="serve")
    try:
        started = dispatcher.handler(spec).start(bash(), ctx)
        assert dispatcher.handler(spec).can_run_sync() and hasattr(started, "__await__")
        await started  # type: ignore[misc]
    finally:
        await ctx.aclose()


def test_run_inline_refuses_a_coroutine_that_waits() -> None:
    import asyncio

    with pytest.raises(RuntimeError, match="event loop"):
        run_inline(asyncio.sleep(1))


# ---------------------------------------------------------------------------- attempt


def test_a_crash_is_a_failed_result_with_its_first_line_and_timing(tmp_path: Path) -> None:
    cfg = config(tmp_path, {"PreToolUse": [{"hooks": [handler("crash"), handler("nothing")]}]})
    decision = Dispatcher(cfg).decide(bash(), RunContext(cfg, mode="run"))
    crashed, fine = decision.results
    assert (crashed.status, crashed.message, crashed.verdict) == ("error", "boom", None)
    assert crashed.duration_ms > 0
    assert (fine.status, fine.verdict) == ("ok", Verdict())
    assert decision.permission is None  # fails open without failClosed


@pytest.mark.parametrize("name", ["crash", "slow"])
def test_fail_closed_failures_deny_and_name_the_handler(tmp_path: Path, name: str) -> None:
    cfg = config(tmp_path, {"PreToolUse": [{"hooks": [handler(name, failClosed=True, timeout=0.2)]}]})
    decision = Dispatcher(cfg).decide(bash(), RunContext(cfg, mode="run"))
    result = decision.results[0]
    assert result.status == ("error" if name == "crash" else "timeout")
    if name == "slow":
        assert result.message == "no answer within 0.2 s"
    assert decision.permission == "deny"
    assert f"handler {name!r}" in (decision.permission_reason or "")


def test_a_handler_that_cannot_run_fails_closed_without_running(tmp_path: Path) -> None:
    cfg = config(tmp_path, {"PreToolUse": [{"hooks": [handler("nothing")]}]})
    spec = cfg.hooks["PreToolUse"][0].handlers[0]
    spec.problem = "callable vanished"
    decision = Dispatcher(cfg).decide(bash(), RunContext(cfg, mode="run"))
    assert (decision.results[0].status, decision.results[0].message) == ("error", "cannot run: callable vanished")
    assert decision.permission == "deny" and dispatch_callables.CALLS == []


def test_cache_reuses_a_verdict_but_not_its_side_effects(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        {"PreToolUse": [{"hooks": [handler("with_effects", cacheTtl=60)]}]},
        settings={"stateDir": str(tmp_path / "state")},
    )
    dispatcher, ctx = Dispatcher(cfg), RunContext(cfg, mode="run")
    first = dispatcher.decide(bash(), ctx)
    second = dispatcher.decide(bash(), ctx)
    other = dispatcher.decide(bash("pwd"), ctx)
    assert [d.results[0].status for d in (first, second, other)] == ["ok", "cached", "ok"]
    assert dispatch_callables.CALLS == ["with_effects", "with_effects"]
    assert first.results[0].side_effects == ["wrote audit line"]
    assert second.results[0].side_effects == []  # a cached answer did nothing again
    assert second.additional_context == ["noted"]


def test_sequential_group_passes_rewrites_along_and_stops_at_a_deny(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        {
            "PreToolUse": [
                {"sequential": True, "hooks": [handler("add_flag"), handler("deny"), handler("allow", id="never")]}
            ]
        },
    )
    decision = Dispatcher(cfg).decide(bash("make"), RunContext(cfg, mode="run"))
    assert [(r.id, r.status) for r in decision.results] == [("add_flag", "ok"), ("deny", "ok"), ("never", "skipped")]
    assert decision.results[2].message == "stopped at 'deny' (runs one after another)"
    assert dispatch_callables.CALLS == ["add_flag", "deny"]
    rewrite = config(tmp_path, {"PreToolUse": [{"sequential": True, "hooks": [handler("add_flag"), handler("seen")]}]})
    done = Dispatcher(rewrite).decide(bash("make"), RunContext(rewrite, mode="run"))
    assert done.additional_context == ["saw make --safe"]  # the second handler saw the first one's rewrite
    assert done.updated_input == {"command": "make --safe", "description": "d"}  # complete: other fields kept


# ---------------------------------------------------------------------------- the Stop-loop guard


@register_handler
class AlwaysBlocks(Handler):
    """A judgment check that never lets the agent stop."""

    type: ClassVar[str] = "test_judge_blocks"
    judgment: ClassVar[bool] = True

    def can_run_sync(self) -> bool:
        return True

    def run_sync(self, event: HookEvent, ctx: RunContext) -> Verdict:
        return Verdict(block=True, reason="keep going")

    async def run(self, event: HookEvent, ctx: RunContext) -> Verdict:
        return self.run_sync(event, ctx)


def test_stop_guard_counts_blocks_and_skips_judgment_checks_past_the_limit(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        {"Stop": [{"hooks": [{"type": "test_judge_blocks", "id": "judge"}]}]},
        settings={"stopBlockLimit": 2, "stateDir": str(tmp_path / "state")},
    )
    stop = parse_event({"hook_event_name": "Stop", "session_id": "s9", "cwd": "/tmp", "stop_hook_active": False})
    dispatcher, ctx = Dispatcher(cfg), RunContext(cfg, mode="run")
    outcomes = [dispatcher.decide(stop, ctx) for _ in range(2)]
    assert [d.block for d in outcomes] == [True, True]
    assert ctx.state.counter_get("stop-guard", "s9") == 2
    third = dispatcher.decide(stop, ctx)
    assert not third.block
    assert third.results[0].status == "skipped" and third.results[0].judgment
    assert "stopBlockLimit" in (third.system_message or "")
    assert ctx.state.counter_get("stop-guard", "s9") == 0  # the stop went through: counting starts afresh


# ---------------------------------------------------------------------------- async: true


def test_an_async_handler_runs_in_the_background_through_the_same_attempt(tmp_path: Path) -> None:
    cfg = config(tmp_path, {"PreToolUse": [{"hooks": [handler("mark", **{"async": True}), handler("deny")]}]})

    import asyncio

    async def in_loop() -> Any:
        ctx = RunContext(cfg, mode="api")
        decision = await Dispatcher(cfg).dispatch(bash("make"), ctx)
        await ctx.drain(5)
        return decision

    mark = tmp_path / "mark"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOOKGATE_TEST_MARK", str(mark))
        decision = asyncio.run(in_loop())
    assert [(r.id, r.status) for r in decision.results] == [("mark", "skipped"), ("deny", "ok")]
    assert decision.results[0].message == "started in the background (async: cannot decide)"
    assert decision.permission == "deny" and mark.read_text() == "make"


def test_under_hookgate_run_an_async_handler_runs_in_a_detached_process(tmp_path: Path) -> None:
    import time

    cfg = config(tmp_path, {"PreToolUse": [{"hooks": [handler("mark", **{"async": True})]}]})
    mark = tmp_path / "mark"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOOKGATE_TEST_MARK", str(mark))
        mp.chdir(ROOT)  # the detached process imports tests.unit.dispatch_callables from here
        decision = Dispatcher(cfg).decide(bash("make"), RunContext(cfg, mode="run"))
        assert decision.results[0].status == "skipped"
        assert dispatch_callables.CALLS == []  # not in this process
        deadline = time.monotonic() + 30
        while not (mark.exists() and mark.read_text() == "make") and time.monotonic() < deadline:
            time.sleep(0.05)
    assert mark.read_text() == "make"
