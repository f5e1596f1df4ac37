"""Pins the parsing of handler answers (Claude Code hooks reference, section 5): every field of the
hook output schema, the legacy top-level ``decision`` values, PermissionRequest answers, output
rewrites, the ``{`` rule, the caps and the one-line error messages."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gateway.answers import MAX_TEXT, first_line, parse_text, truncate, verdict_from_json
from gateway.decision import Verdict
from gateway.errors import HandlerError
from gateway.events import HookEvent


def _event(name: str = "PreToolUse", **extra: Any) -> HookEvent:
    payload: dict[str, Any] = {"hook_event_name": name, **extra}
    if name in ("PreToolUse", "PostToolUse", "PermissionRequest", "PostToolUseFailure"):
        payload.setdefault("tool_name", "Bash")
        payload.setdefault("tool_input", {"command": "ls"})
    return HookEvent(payload)


def _specific(event: str, **fields: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": event, **fields}}


# --- legacy top-level decision -------------------------------------------------------------------


@pytest.mark.parametrize("word", ["block", "deny"])
def test_legacy_block_or_deny_on_pre_tool_use_denies_with_the_reason(word: str) -> None:
    v = verdict_from_json({"decision": word, "reason": "nope"}, _event())
    assert v == Verdict(permission="deny", permission_reason="nope")


@pytest.mark.parametrize("word", ["approve", "allow"])
def test_legacy_approve_or_allow_on_pre_tool_use_allows_with_the_reason(word: str) -> None:
    v = verdict_from_json({"decision": word, "reason": "fine"}, _event())
    assert v == Verdict(permission="allow", permission_reason="fine")


@pytest.mark.parametrize("event", ["Stop", "PostToolUse", "UserPromptSubmit", "SubagentStop"])
def test_legacy_block_elsewhere_blocks(event: str) -> None:
    v = verdict_from_json({"decision": "block", "reason": "r"}, _event(event))
    assert v == Verdict(block=True, reason="r")
    v = verdict_from_json({"decision": "deny"}, _event(event))
    assert v == Verdict(block=True)


@pytest.mark.parametrize("event", ["Stop", "PostToolUse", "PermissionRequest"])
def test_legacy_approve_elsewhere_says_nothing(event: str) -> None:
    assert verdict_from_json({"decision": "approve", "reason": "r"}, _event(event)) == Verdict()


def test_top_level_fields() -> None:
    v = verdict_from_json(
        {"continue": False, "stopReason": "halt", "systemMessage": "hi", "suppressOutput": True}, _event("Stop")
    )
    assert v == Verdict(continue_=False, stop_reason="halt", system_message="hi")
    assert verdict_from_json({}, _event("Stop")) == Verdict()
    assert verdict_from_json({"continue": True}, _event("Stop")).continue_ is True


def test_texts_are_capped() -> None:
    long = "y" * (MAX_TEXT + 7)
    capped = truncate(long)
    v = verdict_from_json(
        {"decision": "block", "reason": long, "stopReason": long, "systemMessage": long}, _event("Stop")
    )
    assert v.reason == capped and v.stop_reason == capped and v.system_message == capped
    v = verdict_from_json(
        _specific("PreToolUse", permissionDecision="deny", permissionDecisionReason=long, additionalContext=long),
        _event(),
    )
    assert v.permission_reason == capped and v.additional_context == capped
    v = verdict_from_json({"decision": "deny", "reason": long}, _event())
    assert v.permission_reason == capped
    v = verdict_from_json({"decision": "allow", "reason": long}, _event())
    assert v.permission_reason == capped


def test_empty_strings_stay_empty() -> None:
    v = verdict_from_json({"systemMessage": "", "stopReason": ""}, _event("Stop"))
    assert v.system_message == "" and v.stop_reason == ""


# --- hookSpecificOutput --------------------------------------------------------------------------


@pytest.mark.parametrize("permission", ["allow", "deny", "ask", "defer"])
def test_permission_decision_and_reason(permission: str) -> None:
    v = verdict_from_json(
        _specific("PreToolUse", permissionDecision=permission, permissionDecisionReason="because"), _event()
    )
    assert (v.permission, v.permission_reason) == (permission, "because")


def test_specific_permission_overrides_legacy_decision() -> None:
    v = verdict_from_json(
        {
            "decision": "approve",
            "reason": "legacy",
            **_specific("PreToolUse", permissionDecision="deny", permissionDecisionReason="new"),
        },
        _event(),
    )
    assert (v.permission, v.permission_reason) == ("deny", "new")


def test_updated_input_only_on_tool_events() -> None:
    v = verdict_from_json(
        _specific("PreToolUse", permissionDecision="allow", updatedInput={"command": "ls -a"}), _event()
    )
    assert v.updated_input == {"command": "ls -a"} and v.permission == "allow"
    v = verdict_from_json(_specific("UserPromptSubmit", updatedInput={"x": 1}), _event("UserPromptSubmit"))
    assert v.updated_input is None


def test_additional_context() -> None:
    v = verdict_from_json(_specific("UserPromptSubmit", additionalContext="ctx"), _event("UserPromptSubmit"))
    assert v == Verdict(additional_context="ctx")
    v = verdict_from_json(_specific("UserPromptSubmit", additionalContext=""), _event("UserPromptSubmit"))
    assert v.additional_context is None


def test_updated_tool_output_and_mcp_output() -> None:
    v = verdict_from_json(_specific("PostToolUse", updatedToolOutput={"stdout": "cut"}), _event("PostToolUse"))
    assert v == Verdict(updated_output={"stdout": "cut"})
    v = verdict_from_json(
        _specific("PostToolUse", updatedMCPToolOutput=[{"type": "text", "text": "t"}]), _event("PostToolUse")
    )
    assert v.updated_output == [{"type": "text", "text": "t"}]
    v = verdict_from_json(
        _specific("PostToolUse", updatedToolOutput="a", updatedMCPToolOutput="b"), _event("PostToolUse")
    )
    assert v.updated_output == "a"
    v = verdict_from_json(_specific("PostToolUse", updatedToolOutput=""), _event("PostToolUse"))
    assert v.updated_output == ""


def test_permission_request_allow_with_updated_input_and_permissions() -> None:
    v = verdict_from_json(
        _specific(
            "PermissionRequest",
            decision={
                "behavior": "allow",
                "updatedInput": {"command": "ls -l"},
                "updatedPermissions": [{"type": "addRules"}],
                "message": "ok",
            },
        ),
        _event("PermissionRequest"),
    )
    assert v == Verdict(
        permission="allow",
        permission_reason="ok",
        updated_input={"command": "ls -l"},
        extra={"updatedPermissions": [{"type": "addRules"}]},
    )


def test_permission_request_deny_with_interrupt() -> None:
    v = verdict_from_json(
        _specific("PermissionRequest", decision={"behavior": "deny", "message": "no", "interrupt": True}),
        _event("PermissionRequest"),
    )
    assert v == Verdict(permission="deny", permission_reason="no", extra={"interrupt": True})
    v = verdict_from_json(
        _specific("PermissionRequest", decision={"behavior": "deny", "interrupt": False, "updatedPermissions": []}),
        _event("PermissionRequest"),
    )
    assert v == Verdict(permission="deny")


def test_unknown_specific_fields_are_kept_in_extra_known_ones_not() -> None:
    v = verdict_from_json(
        _specific("SessionStart", sessionTitle="t", watchPaths=["a"], additionalContext="c"), _event("SessionStart")
    )
    assert v.extra == {"sessionTitle": "t", "watchPaths": ["a"]}
    assert v.additional_context == "c"


# --- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize("obj,kind", [([1], "list"), ("s", "str"), (3, "int"), (None, "NoneType")])
def test_not_an_object(obj: Any, kind: str) -> None:
    with pytest.raises(HandlerError) as err:
        verdict_from_json(obj, _event())
    assert str(err.value) == f"hook output must be a JSON object, got {kind}"


def test_schema_error_names_the_field() -> None:
    with pytest.raises(HandlerError) as err:
        verdict_from_json(_specific("PreToolUse", permissionDecision="maybe"), _event())
    message = str(err.value)
    assert message.startswith("invalid hook output at hookSpecificOutput.permissionDecision: ")
    assert "\n" not in message
    with pytest.raises(HandlerError) as err:
        verdict_from_json({"continue": "perhaps"}, _event())
    assert str(err.value).startswith("invalid hook output at continue: ")


def test_wrong_event_name() -> None:
    with pytest.raises(HandlerError) as err:
        verdict_from_json(_specific("Stop"), _event())
    assert str(err.value) == "hookSpecificOutput.hookEventName is 'Stop' but the event is 'PreToolUse'"


def test_bad_json_message() -> None:
    with pytest.raises(HandlerError) as err:
        parse_text('{"a": }', _event())
    assert str(err.value).startswith("hook output starts with '{' but is not valid JSON: Expecting value ")
    assert "(line 1 column 7)" in str(err.value)


# --- the { rule and plain text -------------------------------------------------------------------


def test_json_after_whitespace_and_plain_text_per_event() -> None:
    assert parse_text('\n  {"decision": "block", "reason": "x"}\n', _event("Stop")) == Verdict(block=True, reason="x")
    for event in ("SessionStart", "UserPromptSubmit"):
        assert parse_text("  hello \n", _event(event)) == Verdict(additional_context="hello")
    assert parse_text("hello", _event("PreToolUse")) == Verdict()
    assert parse_text("hello", _event("Stop")) == Verdict()
    assert parse_text("   \n", _event("UserPromptSubmit")) == Verdict()


def test_plain_text_context_is_capped() -> None:
    v = parse_text("z" * (MAX_TEXT + 3), _event("UserPromptSubmit"))
    assert v.additional_context == truncate("z" * (MAX_TEXT + 3))


def test_truncate_marker_and_limits() -> None:
    assert truncate("abc", 3) == "abc"
    assert truncate("abcd", 3) == "abc\n[... truncated by hookgate: 1 more characters]"
    assert truncate("x" * MAX_TEXT) == "x" * MAX_TEXT
    assert truncate("x" * (MAX_TEXT + 1)).endswith("[... truncated by hookgate: 1 more characters]")


def test_first_line() -> None:
    assert first_line("\n  \n  second  \nthird") == "second"
    assert first_line("") == ""
    assert first_line("   \n\t\n") == ""
    assert first_line("a" * 600) == "a" * 500


def test_schema_error_message_is_pydantic_first_error() -> None:
    with pytest.raises(HandlerError) as err:
        verdict_from_json({"continue": "perhaps"}, _event())
    assert str(err.value) == (
        "invalid hook output at continue: Input should be a valid boolean, unable to interpret input"
    )


# --- side_effects --------------------------------------------------------------------------------


def test_side_effects_are_kept_capped_in_count_and_length() -> None:
    from gateway.answers import MAX_SIDE_EFFECT, MAX_SIDE_EFFECTS

    long = "n" * (MAX_SIDE_EFFECT + 5)
    effects = [long, *(f"posted {i}" for i in range(MAX_SIDE_EFFECTS + 20))]
    v = parse_text(json.dumps({"decision": "block", "reason": "r", "side_effects": effects}), _event("Stop"))
    assert (v.block, v.reason) == (True, "r")
    assert len(v.side_effects) == MAX_SIDE_EFFECTS
    assert v.side_effects[0] == "n" * MAX_SIDE_EFFECT + "\n[... truncated by hookgate: 5 more characters]"
    assert v.side_effects[1:] == [f"posted {i}" for i in range(MAX_SIDE_EFFECTS - 1)]
    assert verdict_from_json({"side_effects": []}, _event("Stop")) == Verdict()


_DENY = _specific("PreToolUse", permissionDecision="deny", permissionDecisionReason="no")


@pytest.mark.parametrize(
    ("effects", "kept"),
    [
        ([{"a": 1}], ['{"a": 1}']),
        ("one", ["one"]),
        ([1], ["1"]),
        (["ok", 2, None, True, ["x"]], ["ok", "2", "null", "true", '["x"]']),
        ({"a": "b"}, ['{"a": "b"}']),
        (7, ["7"]),
        (None, []),
    ],
)
def test_a_malformed_side_effects_is_kept_as_text_and_never_voids_the_deny(effects: Any, kept: list[str]) -> None:
    v = parse_text(json.dumps({**_DENY, "side_effects": effects}), _event())
    assert (v.permission, v.permission_reason) == ("deny", "no")
    assert v.side_effects == kept


def test_a_side_effects_entry_that_cannot_be_text_is_dropped_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    mixed_keys = {1: "a", "b": 2}  # (sort_keys cannot order them: a python handler's answer)
    with caplog.at_level("WARNING", logger="hookgate.answers"):
        v = verdict_from_json({**_DENY, "side_effects": ["kept", mixed_keys]}, _event())
    assert (v.permission, v.side_effects) == ("deny", ["kept"])
    assert "dropped a side_effects entry" in caplog.text


@pytest.mark.parametrize("lead", ["\ufeff", "\ufeff\n", " \ufeff", "\ufeff\ufeff  "])
def test_json_after_a_byte_order_mark_is_json(lead: str) -> None:
    # Claude Code (Node) reads stdout after trim(), which removes U+FEFF; Python's strip() does not
    v = parse_text(lead + json.dumps(_DENY) + "\n\ufeff", _event())
    assert (v.permission, v.permission_reason) == ("deny", "no")


def test_plain_text_loses_its_byte_order_mark_too() -> None:
    assert parse_text("\ufeffhello\n", _event("SessionStart")) == Verdict(additional_context="hello")


@pytest.mark.parametrize("permission", ["allow", "ask", "defer"])
@pytest.mark.parametrize("word", ["block", "deny"])
def test_specific_permission_cannot_loosen_a_legacy_block(word: str, permission: str) -> None:
    # found by a tester: {"decision": "block", ... "permissionDecision": "allow"} allowed the call
    v = verdict_from_json(
        {"decision": word, "reason": "bad", **_specific("PreToolUse", permissionDecision=permission)}, _event()
    )
    assert (v.permission, v.permission_reason) == ("deny", "bad")
    v = verdict_from_json(
        {"decision": word, **_specific("PreToolUse", permissionDecision=permission, permissionDecisionReason="r")},
        _event(),
    )
    assert (v.permission, v.permission_reason) == ("deny", "r")


def test_permission_request_allow_cannot_loosen_a_legacy_block() -> None:
    # found by a tester: {"decision": "block"} beside decision.behavior allow rendered an allow
    answer = {
        "decision": "block",
        "reason": "bad",
        **_specific("PermissionRequest", decision={"behavior": "allow", "updatedInput": {"command": "rm -rf /"}}),
    }
    v = verdict_from_json(answer, _event("PermissionRequest"))
    assert (v.permission, v.permission_reason, v.updated_input) == ("deny", "bad", None)
