"""The pydantic-free reading of plain hook answers (``gateway.answers._plain``) agrees with the model.

Every answer in a corpus of combinations (right and wrong types, unknown keys, non-string keys, subclasses
of str/bool/dict) is normalized both ways: when ``_plain`` takes it, pydantic must accept it and give the
same ``Verdict``; when pydantic rejects it, ``_plain`` must not have taken it.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from gateway.answers import _normalize, _plain, _schema, verdict_from_json
from gateway.errors import HandlerError
from gateway.events import HookEvent


class Text(str):
    pass


class Mapping(dict):  # type: ignore[type-arg]
    pass


MISSING = object()
TOP: dict[str, list[Any]] = {
    "continue": [MISSING, True, False, None, "false", 0],
    "decision": [MISSING, "block", "deny", "approve", "allow", "maybe", None, Text("block")],
    "reason": [MISSING, "why", None, 3],
    "systemMessage": [MISSING, "note", None, ["x"]],
}
SPECIFIC: dict[str, list[Any]] = {
    "hookEventName": [MISSING, "PreToolUse", "PostToolUse", 1],
    "permissionDecision": [MISSING, "deny", "ask", "allow", "defer", "nope", None],
    "permissionDecisionReason": [MISSING, "because", None, Text("because")],
    "updatedInput": [MISSING, {"command": "ls"}, None, "ls", {1: "x"}, Mapping(command="ls")],
    "additionalContext": [MISSING, "ctx", "", None],
}
EVENT = HookEvent({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}})


def combos(fields: dict[str, list[Any]]) -> list[dict[str, Any]]:
    names = list(fields)
    return [
        {n: v for n, v in zip(names, values, strict=True) if v is not MISSING}
        for values in itertools.product(*(fields[n] for n in names))
    ]


def outcome(read: Any) -> Any:
    try:
        return _normalize(read, EVENT)
    except HandlerError as exc:
        return f"HandlerError: {exc}"


def both_ways(obj: dict[Any, Any]) -> bool:
    """Check ``obj`` both ways; True when ``_plain`` took it."""
    plain = _plain(obj)
    try:
        model = _schema().validate_python(obj)
    except Exception:
        assert plain is None, obj
        return False
    if plain is not None:
        assert outcome(plain) == outcome(model), obj
    return plain is not None


def test_top_level_combinations_agree() -> None:
    taken = [both_ways(obj) for obj in combos(TOP)]
    assert 50 < sum(taken) < len(taken)


def test_hook_specific_output_combinations_agree() -> None:
    taken = [
        both_ways({**top, "hookSpecificOutput": specific})
        for specific in combos(SPECIFIC)
        for top in ({}, {"decision": "block", "reason": "r"}, {"continue": False, "stopReason": "s"})
    ]
    assert 500 < sum(taken) < len(taken)


@pytest.mark.parametrize(
    "obj",
    [
        {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "sessionTitle": "t"}},
        {"hookSpecificOutput": {"hookEventName": "PreToolUse", "decision": {"behavior": "deny"}}},
        {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": {"a": 1}}},
        {"continue_": False},
        {"decision": "block", "reason": "r", "side_effects": ["notified #sec"]},
        {"unknown": 1, "decision": "block"},
        {1: "x"},
        {"hookSpecificOutput": Mapping(hookEventName="PreToolUse")},
    ],
)
def test_anything_else_goes_through_the_model(obj: dict[Any, Any]) -> None:
    assert _plain(obj) is None
    both_ways(obj)


def test_the_default_guards_answer_is_plain() -> None:
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "no",
        }
    }
    assert _plain(answer) is not None
    verdict = verdict_from_json(answer, EVENT)
    assert (verdict.permission, verdict.permission_reason) == ("deny", "no")


def test_a_rewrite_with_string_keys_is_a_plain_answer() -> None:
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {"command": "ls -a"},
        }
    }
    assert _plain(answer) is not None  # the cheap path: no pydantic for the common rewrite
    assert verdict_from_json(answer, EVENT).updated_input == {"command": "ls -a"}
