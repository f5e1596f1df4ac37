"""The mcp_tool handler's pure parts: ${path} substitution, load-time placeholder checks, reading a tool result
as a hook answer, and the input-schema check of validate --check-servers."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.types import CallToolResult, TextContent

from gateway.errors import HandlerError
from gateway.events import HookEvent
from handlers.mcp_tool import compile_template, input_problems, placeholder_problems, substitute, verdict_from_result

EVENT = HookEvent(
    {
        "hook_event_name": "PreToolUse",
        "tool_name": "MultiEdit",
        "cwd": "/repo",
        "session_id": "s",
        "tool_input": {
            "file_path": "/repo/a.py",
            "edits": [{"old_string": "a", "new_string": "b"}],
            "replace_all": False,
            "count": 2,
            "meta": None,
        },
    }
)


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("${tool_input.file_path}", "/repo/a.py"),
        ("${tool_input}", EVENT.payload["tool_input"]),
        ("${tool_input.count}", 2),
        ("${tool_input.replace_all}", False),
        ("${tool_input.meta}", None),
        ("${tool_input.edits.0.new_string}", "b"),
        ("${ tool_name }", "MultiEdit"),
        ("${tool_name} on ${tool_input.file_path}", "MultiEdit on /repo/a.py"),
        ("n=${tool_input.count} all=${tool_input.replace_all} meta=[${tool_input.meta}]", "n=2 all=false meta=[]"),
        ("edits: ${tool_input.edits}", 'edits: [{"old_string": "a", "new_string": "b"}]'),
        ("literal $${tool_name} and ${tool_name}", "literal ${tool_name} and MultiEdit"),
        ("no placeholder $HOME {x}", "no placeholder $HOME {x}"),
    ],
)
def test_substitution(template: str, expected: Any) -> None:
    assert substitute(template, EVENT) == expected


def test_substitution_walks_objects_and_lists_but_not_keys() -> None:
    value = {"${tool_name}": ["${tool_input.count}", {"p": "${cwd}/x"}], "n": 5, "flag": True}
    assert substitute(value, EVENT) == {"${tool_name}": [2, {"p": "/repo/x"}], "n": 5, "flag": True}


def test_a_compiled_input_is_reused_across_events_and_builds_fresh_values() -> None:
    template = compile_template({"path": "${tool_input.file_path}", "all": ["${tool_name}", "x=${tool_input.count}"]})
    first, second = template(EVENT), template(EVENT)
    assert first == second == {"path": "/repo/a.py", "all": ["MultiEdit", "x=2"]}
    assert first is not second and first["all"] is not second["all"]  # a caller may change its copy
    other = HookEvent({**EVENT.payload, "tool_name": "Write", "tool_input": {"file_path": "/b", "count": 0}})
    assert template(other) == {"path": "/b", "all": ["Write", "x=0"]}
    with pytest.raises(HandlerError, match=r"^input\.all\[1\]: \$\{tool_input\.count\} is not in this"):
        template(HookEvent({**EVENT.payload, "tool_input": {"file_path": "/c"}}))


def test_claude_project_dir_comes_from_the_environment_else_the_event(monkeypatch: pytest.MonkeyPatch) -> None:
    assert substitute("${CLAUDE_PROJECT_DIR}", EVENT) == "/repo"
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", "/elsewhere")
    assert substitute("${CLAUDE_PROJECT_DIR}", EVENT) == "/elsewhere"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            {"p": "${tool_input.path}"},
            "input.p: ${tool_input.path} is not in this PreToolUse event: tool_input has no "
            "'path' (it has: count, edits, file_path, meta, replace_all)",
        ),
        (
            {"e": ["${tool_input.edits.3.new_string}"]},
            "input.e[0]: ${tool_input.edits.3.new_string} is not in this PreToolUse event: tool_input.edits has 1 item(s)",
        ),
        (
            {"x": "a ${tool_input.file_path.name}"},
            "input.x: ${tool_input.file_path.name} is not in this PreToolUse event: tool_input.file_path is str, "
            "not an object",
        ),
        (
            {"x": "${prompt}"},
            "input.x: ${prompt} is not in this PreToolUse event: the event has no 'prompt' (it has: "
            "cwd, hook_event_name, session_id, tool_input, tool_name)",
        ),
    ],
)
def test_missing_paths_are_clear_errors(value: dict[str, Any], message: str) -> None:
    with pytest.raises(HandlerError) as err:
        substitute(value, EVENT)
    assert str(err.value) == message


def test_placeholder_problems_are_found_at_load_time() -> None:
    assert placeholder_problems({"a": "${tool_input.file_path}", "b": ["$${x}", 3], "c": {"d": "${tool_name}"}}) == []
    problems = placeholder_problems({"a": "${tool input}", "b": ["x ${unclosed"], "c": "${}", "d": "${a.${b}}"})
    assert problems[0].startswith("input.a: ${tool input} is not a path into the event")
    assert problems[1] == "input.b[0]: unclosed or nested '${' in 'x ${unclosed' (write $${ for a literal ${)"
    assert problems[2].startswith("input.c: ${} is not a path")
    assert problems[3].startswith("input.d: unclosed or nested")


# ---------------------------------------------------------------------------- the answer


def _result(text: str = "", structured: Any = None, is_error: bool = False) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)] if text else [], structured_content=structured, is_error=is_error
    )


DENY = {
    "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "structured",
    }
}


def test_structured_content_wins_over_text() -> None:
    meta: dict[str, Any] = {}
    verdict = verdict_from_result(_result('{"decision": "approve"}', DENY), EVENT, meta, label="s/t")
    assert (verdict.permission, verdict.permission_reason, meta["answer"]) == ("deny", "structured", "structured")


def test_text_follows_the_brace_rule() -> None:
    meta: dict[str, Any] = {}
    verdict = verdict_from_result(_result(' {"decision": "block", "reason": "r"}'), EVENT, meta, label="s/t")
    assert (verdict.permission, meta["answer"]) == ("deny", "text")
    assert verdict_from_result(_result("all good"), EVENT, {}, label="s/t").is_empty()
    with pytest.raises(HandlerError, match="not valid JSON"):
        verdict_from_result(_result("{oops"), EVENT, {}, label="s/t")


def test_sdk_result_wrapping_is_undone() -> None:
    assert verdict_from_result(_result("", {"result": DENY}), EVENT, {}, label="s/t").permission == "deny"
    text = '{"decision": "block", "reason": "in a wrapped string"}'
    assert verdict_from_result(_result(text, {"result": text}), EVENT, {}, label="s/t").permission == "deny"


def test_is_error_and_bad_schema_are_handler_errors() -> None:
    meta: dict[str, Any] = {}
    with pytest.raises(HandlerError, match=r"tool s/t returned an error \(isError\): boom"):
        verdict_from_result(_result("boom\ntrace", is_error=True), EVENT, meta, label="s/t")
    assert meta["is_error"] is True
    with pytest.raises(HandlerError, match="permissionDecision"):
        verdict_from_result(
            _result("", {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "maybe"}}),
            EVENT,
            {},
            label="s/t",
        )


# ---------------------------------------------------------------------------- input vs the tool's schema

SCHEMA = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "pattern": "^[a-z]"},
        "count": {"type": "integer"},
        "opts": {"type": "object"},
    },
    "required": ["command"],
    "additionalProperties": False,
}


def test_input_problems() -> None:
    assert input_problems({"command": "ls", "count": 1}, SCHEMA) == []
    assert (
        input_problems({"command": "${tool_input.command}", "count": "${tool_input.n}", "opts": "${x}"}, SCHEMA) == []
    )  # whole placeholders: known at run time
    assert input_problems({"command": "Run ${tool_name}"}, SCHEMA) == []  # pattern: known at run time
    assert input_problems({"count": 2, "extra": 1}, SCHEMA) == [
        "input: 'command' is a required property (the tool's input schema)",
        "input: Additional properties are not allowed ('extra' was unexpected) (the tool's input schema)",
    ]
    assert input_problems({"command": "ls", "count": "n=${tool_input.n}"}, SCHEMA) == [
        "input.count: 'n=${tool_input.n}' is not of type 'integer' (the tool's input schema)"
    ]
