"""The merge rules (DESIGN.md) and the one output parser."""

from __future__ import annotations

import pytest

from gateway.answers import MAX_TEXT, parse_text, verdict_from_json
from gateway.decision import HandlerResult, Verdict, merge
from gateway.errors import HandlerError
from gateway.events import HookEvent
from handlers.base import is_judgment_type

ORIGINAL = {"command": "npm test", "description": "Run tests"}


def _r(
    order: int, verdict: Verdict | None = None, *, type: str = "command", status: str = "ok", fail_closed: bool = False
) -> HandlerResult:
    return HandlerResult(
        id=f"h{order}",
        type=type,
        status=status,
        verdict=verdict,
        order=order,  # type: ignore[arg-type]
        fail_closed=fail_closed,
        message="boom" if status != "ok" else None,
        judgment=is_judgment_type(type),
    )  # as the dispatcher sets it, from the handler class


def _merge(*results: HandlerResult, event: str = "PreToolUse") -> object:
    return merge(event, list(results), tool_input=ORIGINAL, blocks=event in ("PreToolUse", "Stop"))


def test_most_restrictive_permission_wins_regardless_of_finish_order() -> None:
    results = [
        _r(0, Verdict(permission="allow", permission_reason="fine")),
        _r(1, Verdict(permission="ask", permission_reason="check")),
        _r(2, Verdict(permission="deny", permission_reason="no")),
        _r(3, Verdict(permission="defer")),
    ]
    for perm in (results, list(reversed(results))):
        d = _merge(*perm)
        assert (d.permission, d.permission_reason) == ("deny", "no")  # type: ignore[attr-defined]


def test_reasons_of_the_winning_level_join_in_config_order() -> None:
    d = _merge(
        _r(1, Verdict(permission="deny", permission_reason="second")),
        _r(0, Verdict(permission="deny", permission_reason="first")),
    )
    assert d.permission_reason == "first\nsecond"  # type: ignore[attr-defined]


def test_partial_rewrites_merge_over_the_original_in_config_order() -> None:
    d = _merge(
        _r(1, Verdict(updated_input={"command": "b", "timeout": 5})),
        _r(0, Verdict(permission="allow", updated_input={"command": "a"})),
    )
    assert d.updated_input == {"command": "b", "description": "Run tests", "timeout": 5}  # type: ignore[attr-defined]


def test_deny_drops_rewrites() -> None:
    d = _merge(_r(0, Verdict(updated_input={"command": "a"})), _r(1, Verdict(permission="deny")))
    assert d.updated_input is None  # type: ignore[attr-defined]


def test_context_kept_block_any_continue_false_wins() -> None:
    d = _merge(
        _r(0, Verdict(additional_context="one", block=True, reason="r1")),
        _r(1, Verdict(additional_context="two", continue_=False, stop_reason="halt")),
        _r(2, Verdict(block=True, reason="r2")),
        event="Stop",
    )
    assert d.additional_context == ["one", "two"]  # type: ignore[attr-defined]
    assert d.block and d.reason == "r1\nr2" and not d.continue_ and d.stop_reason == "halt"  # type: ignore[attr-defined]


def test_failures_fail_open_unless_fail_closed() -> None:
    assert _merge(_r(0, status="error"), _r(1, status="timeout")).permission is None  # type: ignore[attr-defined]
    d = _merge(_r(0, status="timeout", fail_closed=True))
    assert d.permission == "deny" and "'h0'" in d.permission_reason  # type: ignore[attr-defined]
    d = _merge(_r(0, status="error", fail_closed=True), event="Stop")
    assert d.block and "failClosed" in d.reason  # type: ignore[attr-defined]


def test_llm_allow_never_loosens_and_llm_failure_never_decides() -> None:
    d = _merge(_r(0, Verdict(permission="allow"), type="prompt"), _r(1, Verdict(permission="ask")))
    assert d.permission == "ask"  # type: ignore[attr-defined]
    d = _merge(_r(0, Verdict(permission="allow"), type="agent"))
    assert d.permission is None  # type: ignore[attr-defined]
    d = _merge(_r(0, status="error", type="prompt", fail_closed=True), event="Stop")
    assert not d.block and "could not run" in d.system_message  # type: ignore[attr-defined]


def _event(name: str = "PreToolUse") -> HookEvent:
    return HookEvent({"hook_event_name": name, "tool_name": "Bash", "tool_input": {}})


def test_parse_text_json_only_when_it_starts_with_a_brace() -> None:
    assert parse_text('  {"decision": "block", "reason": "x"}', _event("Stop")).block
    assert (
        parse_text('["not", "json object"]', _event("UserPromptSubmit")).additional_context == '["not", "json object"]'
    )
    assert parse_text("plain text", _event("PreToolUse")).is_empty()
    with pytest.raises(HandlerError, match="not valid JSON"):
        parse_text("{oops", _event())


def test_legacy_decisions_and_schema_errors() -> None:
    assert verdict_from_json({"decision": "approve", "reason": "ok"}, _event()).permission == "allow"
    assert verdict_from_json({"decision": "block", "reason": "no"}, _event()).permission == "deny"
    with pytest.raises(HandlerError, match=r"hookSpecificOutput\.permissionDecision"):
        verdict_from_json(
            {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "maybe"}}, _event()
        )
    with pytest.raises(HandlerError, match="hookEventName is 'Stop'"):
        verdict_from_json({"hookSpecificOutput": {"hookEventName": "Stop"}}, _event())


def test_permission_request_and_extras() -> None:
    v = verdict_from_json(
        {
            "hookSpecificOutput": {
                "hookEventName": "PermissionRequest",
                "decision": {"behavior": "deny", "message": "nope", "interrupt": True},
            }
        },
        _event("PermissionRequest"),
    )
    assert (v.permission, v.permission_reason, v.extra) == ("deny", "nope", {"interrupt": True})
    v = verdict_from_json(
        {"hookSpecificOutput": {"hookEventName": "SessionStart", "sessionTitle": "t"}},
        HookEvent({"hook_event_name": "SessionStart"}),
    )
    assert v.extra == {"sessionTitle": "t"}


def test_long_text_is_truncated_with_a_marker() -> None:
    v = parse_text("x" * (MAX_TEXT + 50), _event("UserPromptSubmit"))
    assert v.additional_context is not None and "truncated by hookgate: 50 more characters" in v.additional_context


def test_fail_closed_on_post_tool_use_blocks_rather_than_denies() -> None:
    d = merge("PostToolUse", [_r(0, status="error", fail_closed=True)], tool_input=ORIGINAL, blocks=True)
    assert d.block and d.permission is None


def test_side_effects_are_carried_to_results_but_never_decide() -> None:
    notify = HandlerResult(id="notify", type="python", order=0, verdict=Verdict(side_effects=["posted to #sec"]))
    judge = HandlerResult(
        id="judge",
        type="prompt",
        order=1,
        judgment=True,
        verdict=Verdict(permission="allow", side_effects=["asked claude-haiku"]),
    )
    decision = merge("PreToolUse", [judge, notify])
    assert [r.side_effects for r in decision.results] == [["posted to #sec"], ["asked claude-haiku"]]
    assert decision.permission is None  # the judgment allow is dropped; its side effect is still recorded
    assert decision.to_dict()["results"][0]["side_effects"] == ["posted to #sec"]
    assert Verdict(side_effects=["x"]).to_dict() == {"side_effects": ["x"]}
    assert "side_effects" not in Verdict().to_dict()
    assert "side_effects" not in HandlerResult(id="a", type="command").to_dict()
    assert Verdict().side_effects == [] and HandlerResult(id="a", type="command").side_effects == []
