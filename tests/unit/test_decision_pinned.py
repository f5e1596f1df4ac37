"""Pins the decision model exactly: the ``to_dict`` shapes that logs, the audit record and the API
use, the fail-closed and soft-check rules, and every merge field (mutation testing showed the
looser tests in test_decision.py let inverted or dropped fields through)."""

from __future__ import annotations

from typing import Any

from gateway.decision import Decision, HandlerResult, Verdict, failure_verdict, merge
from handlers.base import is_judgment_type

ORIGINAL = {"command": "npm test", "description": "Run tests"}


def _r(order: int, verdict: Verdict | None = None, **kw: Any) -> HandlerResult:
    kw.setdefault("type", "command")
    kw.setdefault("judgment", is_judgment_type(kw["type"]))  # as the dispatcher sets it, from the handler class
    return HandlerResult(id=f"h{order}", verdict=verdict, order=order, **kw)


# --- to_dict shapes ------------------------------------------------------------------------------


def test_empty_verdict_dict_is_empty_and_is_empty_is_true() -> None:
    assert Verdict().to_dict() == {}
    assert Verdict().is_empty()
    assert not Verdict(block=True).is_empty()
    assert not Verdict(continue_=False).is_empty()


def test_full_verdict_dict_names_every_field() -> None:
    v = Verdict(
        permission="deny",
        permission_reason="pr",
        block=True,
        reason="r",
        updated_input={"a": 1},
        updated_output="out",
        additional_context="ctx",
        system_message="sys",
        continue_=False,
        stop_reason="sr",
        extra={"sessionTitle": "t"},
        side_effects=["did x"],
    )
    assert v.to_dict() == {
        "permission": "deny",
        "permission_reason": "pr",
        "block": True,
        "reason": "r",
        "updated_input": {"a": 1},
        "updated_output": "out",
        "additional_context": "ctx",
        "system_message": "sys",
        "continue": False,
        "stop_reason": "sr",
        "extra": {"sessionTitle": "t"},
        "side_effects": ["did x"],
    }


def test_verdict_dict_keeps_falsy_but_meaningful_values() -> None:
    # an empty-string or zero output is an answer; False, None and {} are "not said"
    assert Verdict(updated_input={}).to_dict() == {}
    assert Verdict(updated_output="").to_dict() == {"updated_output": ""}
    assert Verdict(updated_output=0).to_dict() == {"updated_output": 0}
    assert Verdict(continue_=True).to_dict() == {}


def test_verdict_dict_side_effects_is_a_copy() -> None:
    v = Verdict(side_effects=["a"])
    d = v.to_dict()
    d["side_effects"].append("b")
    assert v.side_effects == ["a"]


def test_handler_result_dict_minimal_and_full() -> None:
    assert HandlerResult(id="x", type="http").to_dict() == {
        "id": "x",
        "type": "http",
        "status": "ok",
        "duration_ms": 0.0,
    }
    r = HandlerResult(
        id="x",
        type="command",
        status="error",
        duration_ms=12.345,
        message="boom",
        verdict=Verdict(permission="deny"),
        meta={"exit_code": 3},
        side_effects=["s"],
    )
    assert r.to_dict() == {
        "id": "x",
        "type": "command",
        "status": "error",
        "duration_ms": 12.3,
        "verdict": {"permission": "deny"},
        "message": "boom",
        "meta": {"exit_code": 3},
        "side_effects": ["s"],
    }


def test_handler_result_dict_drops_an_empty_verdict() -> None:
    assert "verdict" not in HandlerResult(id="x", type="command", verdict=Verdict()).to_dict()


def test_handler_result_failed_and_judgment() -> None:
    for status, failed in (("ok", False), ("error", True), ("timeout", True), ("skipped", False), ("cached", False)):
        assert HandlerResult(id="x", type="command", status=status).failed is failed  # type: ignore[arg-type]
    # one source of truth: the handler class (``Handler.judgment``); the dispatcher copies it into the result
    assert not HandlerResult(id="x", type="prompt").judgment
    assert HandlerResult(id="x", type="python", judgment=True).judgment
    assert is_judgment_type("prompt") and is_judgment_type("agent")
    assert not is_judgment_type("http") and not is_judgment_type("command") and not is_judgment_type("no-such-type")


def test_decision_dict_minimal_and_full() -> None:
    assert Decision(event="Stop").to_dict() == {"event": "Stop", "results": []}
    d = Decision(
        event="PreToolUse",
        permission="ask",
        permission_reason="pr",
        block=True,
        reason="r",
        updated_input={"a": 1},
        updated_output="o",
        additional_context=["c1", "c2"],
        system_message="s",
        continue_=False,
        stop_reason="sr",
        extra={"k": "v"},
        results=[HandlerResult(id="h", type="command")],
    )
    assert d.to_dict() == {
        "event": "PreToolUse",
        "permission": "ask",
        "permission_reason": "pr",
        "reason": "r",
        "updated_input": {"a": 1},
        "updated_output": "o",
        "system_message": "s",
        "stop_reason": "sr",
        "block": True,
        "additional_context": ["c1", "c2"],
        "continue": False,
        "extra": {"k": "v"},
        "results": [{"id": "h", "type": "command", "status": "ok", "duration_ms": 0.0}],
    }


def test_decision_denied_and_is_empty() -> None:
    assert Decision(event="PreToolUse", permission="deny").denied
    assert Decision(event="Stop", block=True).denied
    assert not Decision(event="PreToolUse", permission="ask").denied
    assert Decision(event="Stop").is_empty
    for field, value in (
        ("permission", "allow"),
        ("block", True),
        ("updated_input", {}),
        ("updated_output", "x"),
        ("additional_context", ["c"]),
        ("system_message", "m"),
        ("continue_", False),
        ("extra", {"k": 1}),
    ):
        assert not Decision(event="Stop", **{field: value}).is_empty, field


# --- fail-closed and soft checks -----------------------------------------------------------------


def test_failure_verdict_per_event_kind_names_the_handler_and_detail() -> None:
    r = HandlerResult(id="guard", type="command", status="timeout", message="no answer within 5 s")
    why = "hookgate: handler 'guard' failed (timeout: no answer within 5 s) and is failClosed"
    assert failure_verdict(r, tool_event=True, blocks=True) == Verdict(permission="deny", permission_reason=why)
    assert failure_verdict(r, tool_event=False, blocks=True) == Verdict(block=True, reason=why)
    assert failure_verdict(r, tool_event=False, blocks=False) == Verdict(system_message=why)


def test_failure_verdict_cannot_run_and_no_detail() -> None:
    r = HandlerResult(id="g", type="command", status="error", message="cannot run: no such file")
    assert (
        failure_verdict(r, tool_event=True, blocks=True).permission_reason
        == "hookgate: handler 'g' cannot run: no such file"
    )
    r = HandlerResult(id="g", type="command", status="error")
    assert (
        failure_verdict(r, tool_event=True, blocks=True).permission_reason
        == "hookgate: handler 'g' failed (error: no detail) and is failClosed"
    )


def test_fail_closed_failure_denies_pre_tool_use_and_blocks_stop() -> None:
    failed = _r(0, None, status="error", message="boom", fail_closed=True)
    d = merge("PreToolUse", [failed], tool_input=ORIGINAL, blocks=True)
    assert d.permission == "deny" and not d.block
    assert d.permission_reason == "hookgate: handler 'h0' failed (error: boom) and is failClosed"
    d = merge("PermissionRequest", [failed], blocks=True)
    assert d.permission == "deny"
    d = merge("Stop", [failed], blocks=True)
    assert d.block and d.permission is None and d.reason is not None and "'h0'" in d.reason
    d = merge("SessionStart", [failed], blocks=False)
    assert not d.block and d.permission is None and d.system_message is not None
    assert "'h0'" in d.system_message


def test_fail_open_failure_takes_no_part() -> None:
    failed = _r(0, Verdict(permission="deny"), status="error", message="boom")
    d = merge("PreToolUse", [failed], tool_input=ORIGINAL, blocks=True)
    assert d.permission is None and not d.block and d.system_message is None
    assert d.results == [failed]


def test_judgment_failure_only_adds_a_message_even_when_fail_closed() -> None:
    failed = _r(0, None, type="prompt", status="timeout", message="slow", fail_closed=True)
    d = merge("Stop", [failed], blocks=True)
    assert not d.block and d.permission is None
    assert d.system_message == ("hookgate: check 'h0' could not run (timeout: slow); it neither blocked nor allowed")
    d = merge("Stop", [_r(0, None, type="agent", status="error")], blocks=True)
    assert d.system_message is not None and "(error: no detail)" in d.system_message


def test_judgment_allow_and_rewrite_are_dropped_but_deny_ask_block_kept() -> None:
    d = merge(
        "PreToolUse",
        [_r(0, Verdict(permission="allow", permission_reason="fine", updated_input={"command": "x"}), type="prompt")],
        tool_input=ORIGINAL,
        blocks=True,
    )
    assert d.permission is None and d.permission_reason is None and d.updated_input is None
    d = merge(
        "PreToolUse",
        [_r(0, Verdict(permission="ask", permission_reason="sure?", updated_input={"command": "x"}), type="agent")],
        tool_input=ORIGINAL,
        blocks=True,
    )
    assert d.permission == "ask" and d.permission_reason == "sure?" and d.updated_input is None
    d = merge(
        "PreToolUse",
        [_r(0, Verdict(permission="deny", permission_reason="no"), type="prompt")],
        tool_input=ORIGINAL,
        blocks=True,
    )
    assert (d.permission, d.permission_reason) == ("deny", "no")
    d = merge("Stop", [_r(0, Verdict(block=True, reason="not done"), type="prompt")], blocks=True)
    assert d.block and d.reason == "not done"


def test_judgment_allow_with_context_keeps_the_context() -> None:
    d = merge(
        "PreToolUse",
        [_r(0, Verdict(permission="allow", additional_context="note"), type="prompt")],
        tool_input=ORIGINAL,
        blocks=True,
    )
    assert d.permission is None and d.additional_context == ["note"]


def test_deterministic_allow_is_kept() -> None:
    d = merge(
        "PreToolUse", [_r(0, Verdict(permission="allow", permission_reason="ok"))], tool_input=ORIGINAL, blocks=True
    )
    assert (d.permission, d.permission_reason) == ("allow", "ok")


def test_skipped_result_verdict_still_counts_message() -> None:
    skipped = _r(0, Verdict(system_message="limit reached"), type="prompt", status="skipped")
    d = merge("Stop", [skipped], blocks=True)
    assert d.system_message == "limit reached" and not d.block


def test_cached_result_counts_like_ok() -> None:
    d = merge(
        "PreToolUse",
        [_r(0, Verdict(permission="deny", permission_reason="c"), status="cached")],
        tool_input=ORIGINAL,
        blocks=True,
    )
    assert (d.permission, d.permission_reason) == ("deny", "c")


# --- merge fields --------------------------------------------------------------------------------


def test_permission_ranks_pairwise() -> None:
    order = ["allow", "ask", "defer", "deny"]
    for i, low in enumerate(order):
        for high in order[i:]:
            for pair in ((low, high), (high, low)):
                d = merge(
                    "PreToolUse",
                    [
                        _r(n, Verdict(permission=p, permission_reason=p))  # type: ignore[arg-type]
                        for n, p in enumerate(pair)
                    ],
                    tool_input=ORIGINAL,
                    blocks=True,
                )
                assert d.permission == high, pair
                assert d.permission_reason == (f"{high}\n{high}" if low == high else high)


def test_reasonless_permission_joins_to_none_and_skips_blanks() -> None:
    d = merge(
        "PreToolUse",
        [_r(0, Verdict(permission="deny")), _r(1, Verdict(permission="deny", permission_reason="b"))],
        tool_input=ORIGINAL,
        blocks=True,
    )
    assert d.permission_reason == "b"
    d = merge("PreToolUse", [_r(0, Verdict(permission="deny"))], tool_input=ORIGINAL, blocks=True)
    assert d.permission == "deny" and d.permission_reason is None


def test_no_results_is_an_empty_decision() -> None:
    d = merge("PreToolUse", [], tool_input=ORIGINAL, blocks=True)
    assert d.is_empty and d.results == [] and d.reason is None and d.stop_reason is None


def test_results_sorted_by_order_in_the_decision() -> None:
    a, b = _r(1, Verdict()), _r(0, Verdict())
    assert merge("Stop", [a, b], blocks=True).results == [b, a]


def test_block_reasons_skip_blanks_and_none_when_all_blank() -> None:
    d = merge("Stop", [_r(0, Verdict(block=True)), _r(1, Verdict(block=True, reason="two"))], blocks=True)
    assert d.block and d.reason == "two"
    d = merge("Stop", [_r(0, Verdict(block=True))], blocks=True)
    assert d.block and d.reason is None


def test_rewrites_chain_over_original_and_later_wins() -> None:
    d = merge(
        "PreToolUse",
        [_r(0, Verdict(updated_input={"command": "a", "x": 1})), _r(1, Verdict(updated_input={"command": "b"}))],
        tool_input=ORIGINAL,
        blocks=True,
    )
    assert d.updated_input == {"command": "b", "description": "Run tests", "x": 1}
    assert ORIGINAL == {"command": "npm test", "description": "Run tests"}  # never mutated


def test_rewrite_without_original_and_empty_rewrite() -> None:
    d = merge("PreToolUse", [_r(0, Verdict(updated_input={"a": 1}))], blocks=True)
    assert d.updated_input == {"a": 1}
    d = merge("PreToolUse", [_r(0, Verdict(updated_input={}))], tool_input=ORIGINAL, blocks=True)
    assert d.updated_input == ORIGINAL


def test_rewrite_kept_with_allow_and_ask_dropped_with_deny_defer_block() -> None:
    for permission, kept in (("allow", True), ("ask", True), ("deny", False), ("defer", False)):
        d = merge(
            "PreToolUse",
            [_r(0, Verdict(updated_input={"command": "a"})), _r(1, Verdict(permission=permission))],  # type: ignore[arg-type]
            tool_input=ORIGINAL,
            blocks=True,
        )
        assert (d.updated_input is not None) is kept, permission
    d = merge(
        "PreToolUse",
        [_r(0, Verdict(updated_input={"command": "a"})), _r(1, Verdict(block=True))],
        tool_input=ORIGINAL,
        blocks=True,
    )
    assert d.updated_input is None


def test_updated_output_last_one_wins_and_falsy_output_is_kept() -> None:
    d = merge(
        "PostToolUse", [_r(0, Verdict(updated_output="first")), _r(1, Verdict(updated_output="second"))], blocks=True
    )
    assert d.updated_output == "second"
    d = merge("PostToolUse", [_r(0, Verdict(updated_output=""))], blocks=True)
    assert d.updated_output == ""
    d = merge("PostToolUse", [_r(0, Verdict(updated_output={"stdout": "x"})), _r(1, Verdict())], blocks=True)
    assert d.updated_output == {"stdout": "x"}


def test_context_messages_stop_and_extra() -> None:
    d = merge(
        "UserPromptSubmit",
        [
            _r(0, Verdict(additional_context="c0", system_message="m0", extra={"a": 1, "b": 1})),
            _r(1, Verdict(additional_context="", system_message="", extra={"b": 2})),
            _r(2, Verdict(additional_context="c2", system_message="m2", continue_=False, stop_reason="halt")),
            _r(3, Verdict(continue_=False)),
        ],
        blocks=True,
    )
    assert d.additional_context == ["c0", "c2"]
    assert d.system_message == "m0\nm2"
    assert d.continue_ is False and d.stop_reason == "halt"
    assert d.extra == {"a": 1, "b": 2}
    assert d.permission is None and not d.block


def test_continue_true_everywhere_keeps_going() -> None:
    d = merge("Stop", [_r(0, Verdict(stop_reason="ignored"))], blocks=True)
    assert d.continue_ is True and d.stop_reason is None


def test_side_effects_copied_from_verdict_unless_result_has_its_own() -> None:
    r = _r(0, Verdict(permission="allow", side_effects=["posted card"]), type="prompt")
    d = merge("PreToolUse", [r], tool_input=ORIGINAL, blocks=True)
    assert d.results[0].side_effects == ["posted card"]  # kept although the allow is dropped
    own = _r(0, Verdict(side_effects=["from verdict"]), side_effects=["own"])
    merge("PreToolUse", [own], tool_input=ORIGINAL, blocks=True)
    assert own.side_effects == ["own"]
    none = _r(0, Verdict())
    merge("PreToolUse", [none], tool_input=ORIGINAL, blocks=True)
    assert none.side_effects == []


def test_merge_defaults_to_an_event_that_cannot_block() -> None:
    d = merge("Notification", [_r(0, None, status="error", message="boom", fail_closed=True)])
    assert not d.block and d.permission is None and d.system_message is not None


def test_a_fail_open_failure_does_not_hide_later_results() -> None:
    d = merge(
        "PreToolUse",
        [_r(0, None, status="error", message="boom"), _r(1, Verdict(permission="deny", permission_reason="later"))],
        tool_input=ORIGINAL,
        blocks=True,
    )
    assert (d.permission, d.permission_reason) == ("deny", "later")
