"""Gemini CLI dialect: payloads as the real CLI 0.61.0 sends them (tests/e2e/HOSTS.md), answers as it reads them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gateway.decision import Decision, HandlerResult, Verdict, merge
from gateway.dialects import detect, gemini, host_payload, parse_event
from gateway.errors import EventError
from gateway.events import PassedThrough

BASE = {
    "session_id": "0e2d831a",
    "transcript_path": "/h/.gemini/tmp/proj/chats/session-1.jsonl",
    "cwd": "/p",
    "timestamp": "2026-11-29T12:21:21.409Z",
}


def ev(name: str, **fields: Any) -> dict[str, Any]:
    return {**BASE, "hook_event_name": name, **fields}


@pytest.mark.parametrize(
    ("host", "canonical", "fields"),
    [
        ("BeforeTool", "PreToolUse", {"tool_name": "run_shell_command", "tool_input": {"command": "rm -rf /p/victim"}}),
        (
            "AfterTool",
            "PostToolUse",
            {
                "tool_name": "write_file",
                "tool_input": {"file_path": "/p/a", "content": "hi"},
                "tool_response": {"llmContent": "ok", "returnDisplay": ""},
            },
        ),
        ("BeforeAgent", "UserPromptSubmit", {"prompt": "clean up"}),
        ("AfterAgent", "Stop", {"prompt": "clean up", "prompt_response": "done", "stop_hook_active": False}),
        ("SessionStart", "SessionStart", {"source": "startup"}),
        ("SessionEnd", "SessionEnd", {"reason": "exit"}),
        ("PreCompress", "PreCompact", {"trigger": "auto"}),
        ("Notification", "Notification", {"notification_type": "ToolPermission", "message": "m", "details": {}}),
    ],
)
def test_events_map_to_canonical_and_keep_the_raw_payload(host: str, canonical: str, fields: dict[str, Any]) -> None:
    data = ev(host, **fields)
    assert detect(data) == "gemini"
    event = parse_event(data)
    assert (event.name, event.dialect) == (canonical, "gemini")
    assert event.raw is data and event.raw["hook_event_name"] == host
    assert host_payload(event, "gemini") is data


def test_tool_names_and_inputs() -> None:
    event = gemini.parse(ev("BeforeTool", tool_name="run_shell_command", tool_input={"command": "ls"}))
    assert (event.tool_name, event.host_tool_name, event.tool_input) == ("Bash", "run_shell_command", {"command": "ls"})
    assert gemini.parse(ev("BeforeTool", tool_name="replace", tool_input={})).tool_name == "Edit"
    assert gemini.parse(ev("BeforeTool", tool_name="write_file", tool_input={})).tool_name == "Write"
    mcp = gemini.parse(
        ev(
            "BeforeTool",
            tool_name="mcp_my_git_status",
            tool_input={},
            mcp_context={"server_name": "my_git", "tool_name": "status"},
        )
    )
    assert mcp.tool_name == "mcp__my_git__status"  # the server name makes the split exact


def test_after_agent_and_failed_tool() -> None:
    stop = gemini.parse(ev("AfterAgent", prompt="p", prompt_response="first\nsecond", stop_hook_active=True))
    assert stop.get("last_assistant_message") == "first\nsecond" and stop.stop_hook_active
    failed = gemini.parse(
        ev(
            "AfterTool",
            tool_name="run_shell_command",
            tool_input={"command": "false"},
            tool_response={
                "llmContent": "x",
                "returnDisplay": "",
                "error": {"type": "execution_failed", "message": "exit 1"},
            },
        )
    )
    assert (failed.name, failed.get("error")) == ("PostToolUseFailure", "exit 1")


@pytest.mark.parametrize("name", ["BeforeModel", "AfterModel", "BeforeToolSelection"])
def test_model_level_events_pass_through(name: str) -> None:
    data = ev(name, llm_request={"model": "gemini-2.5-flash", "messages": []})
    assert detect(data) == "gemini"
    passed = parse_event(data)
    assert isinstance(passed, PassedThrough)
    assert (passed.name, passed.dialect, passed.answer) == (name, "gemini", (0, "", ""))
    assert "passes it through" in passed.reason


def test_unknown_event_is_an_error() -> None:
    with pytest.raises(EventError, match="unknown Gemini event 'AfterEverything'"):
        gemini.parse(ev("AfterEverything"))


def test_detection_leaves_claude_and_codex_alone() -> None:
    assert detect({"hook_event_name": "SessionStart", "source": "startup"}) == "claude"
    assert detect(ev("SessionStart", source="startup")) == "gemini"  # Gemini's timestamp


def render(event: str, **fields: Any) -> tuple[int, dict[str, Any]]:
    code, out, err = gemini.render(Decision(event=event, **fields))
    assert err == ""
    return code, (json.loads(out) if out else {})


def test_render_deny_block_ask_allow() -> None:
    assert render("PreToolUse", permission="deny", permission_reason="no") == (0, {"decision": "deny", "reason": "no"})
    _code, body = render("PreToolUse", permission="ask", permission_reason="sure?")
    assert body["decision"] == "deny" and "confirmation" in body["reason"] and "sure?" in body["reason"]
    assert render("PreToolUse", permission="defer")[1]["decision"] == "deny"
    assert render("PreToolUse", permission="allow") == (0, {"decision": "allow"})
    assert render("Stop", block=True, reason="run the tests") == (0, {"decision": "deny", "reason": "run the tests"})
    assert render("UserPromptSubmit", block=True)[1] == {"decision": "deny", "reason": "Blocked by hookgate"}
    assert render("PostToolUse", permission="deny", permission_reason="hide")[1]["decision"] == "deny"
    assert render("SessionEnd", block=True, reason="x") == (0, {})  # Gemini cannot block it


def test_render_rewrite_context_continue_and_nothing() -> None:
    _code, body = render("PreToolUse", updated_input={"command": "echo safe"})
    assert body == {"hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": {"command": "echo safe"}}}
    for event, host in (
        ("SessionStart", "SessionStart"),
        ("UserPromptSubmit", "BeforeAgent"),
        ("PostToolUse", "AfterTool"),
    ):
        body = render(event, additional_context=["a", "b"])[1]
        assert body == {"hookSpecificOutput": {"hookEventName": host, "additionalContext": "a\n\nb"}}
    body = render("PreToolUse", continue_=False, stop_reason="halt", system_message="hi")[1]
    assert body == {"continue": False, "stopReason": "halt", "systemMessage": "hi"}
    assert render("PostToolUse", updated_output="redacted")[1] == {"decision": "deny", "reason": "redacted"}
    assert gemini.render(Decision(event="PreToolUse")) == (0, "", "")


def test_fail_closed_failure_renders_as_a_deny_gemini_honours() -> None:
    failed = HandlerResult(id="guard", type="command", status="timeout", message="no answer", fail_closed=True)
    decision = merge("PreToolUse", [failed], tool_input={"command": "rm -rf /"}, blocks=True)
    code, out, _ = gemini.render(decision)
    body = json.loads(out)
    assert code == 0 and body["decision"] == "deny" and "guard" in body["reason"]


def test_rewrite_is_the_complete_merged_input() -> None:
    ok = HandlerResult(id="r", type="command", verdict=Verdict(updated_input={"command": "echo safe"}))
    decision = merge("PreToolUse", [ok], tool_input={"command": "rm x", "is_background": False})
    body = json.loads(gemini.render(decision)[1])
    assert body["hookSpecificOutput"]["tool_input"] == {"command": "echo safe", "is_background": False}


def test_host_payload_for_a_gemini_format_hook() -> None:
    from gateway.events import HookEvent

    claude = HookEvent(
        {
            "hook_event_name": "PreToolUse",
            "session_id": "s",
            "cwd": "/p",
            "tool_name": "Bash",
            "tool_input": {"command": "ls"},
        }
    )
    payload = host_payload(claude, "gemini")
    assert payload["hook_event_name"] == "BeforeTool" and payload["tool_name"] == "run_shell_command"
    assert payload["timestamp"].endswith("Z")
    stop = host_payload(HookEvent({"hook_event_name": "Stop", "last_assistant_message": "done"}), "gemini")
    assert (stop["hook_event_name"], stop["prompt_response"]) == ("AfterAgent", "done")


@pytest.mark.parametrize(
    ("code", "stdout", "stderr", "expected"),
    [
        (
            0,
            '{"decision": "deny", "reason": "nope"}',
            "",
            (
                0,
                {
                    "hookSpecificOutput": {
                        "hookEventName": "PreToolUse",
                        "permissionDecision": "deny",
                        "permissionDecisionReason": "nope",
                    }
                },
            ),
        ),
        (
            1,
            '{"decision": "block"}',
            "",
            (
                0,
                {
                    "hookSpecificOutput": {  # JSON wins over the exit code
                        "hookEventName": "PreToolUse",
                        "permissionDecision": "deny",
                        "permissionDecisionReason": "No reason provided",
                    }
                },
            ),
        ),
        (
            0,
            '{"hookSpecificOutput": {"tool_input": {"command": "ls"}}}',
            "",
            (0, {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": "ls"}}}),
        ),
        (0, "just text", "", (0, {"systemMessage": "just text"})),
        (  # a byte order mark before the JSON (PowerShell hooks print one): still the JSON's deny
            0,
            '\ufeff{"decision": "deny", "reason": "no"}\r\n',
            "",
            (
                0,
                {
                    "hookSpecificOutput": {
                        "hookEventName": "PreToolUse",
                        "permissionDecision": "deny",
                        "permissionDecisionReason": "no",
                    }
                },
            ),
        ),
        (0, "", "", (0, {})),
        (2, "", "blocked via stderr", (2, "blocked via stderr")),
        (127, "", "bash: x: not found", (2, "bash: x: not found")),  # Gemini fails closed on text
        (1, "", "warn", (1, "warn")),
        (2, "", "", (1, "exit code 2 with no output")),  # Gemini fails open: an error, not a deny
    ],
)
def test_gemini_format_answers_read_as_gemini_reads_them(
    code: int, stdout: str, stderr: str, expected: tuple[int, Any]
) -> None:
    event = gemini.parse(ev("BeforeTool", tool_name="run_shell_command", tool_input={"command": "rm x"}))
    new_code, out, err = gemini.answer_to_claude(event, code, stdout, stderr)
    want_code, want = expected
    assert new_code == want_code
    if isinstance(want, dict):
        assert (json.loads(out) if out else {}) == want
    else:
        assert want in err


def test_gemini_format_stop_answer_becomes_a_block() -> None:
    event = gemini.parse(ev("AfterAgent", prompt="p", prompt_response="r", stop_hook_active=False))
    _code, out, _ = gemini.answer_to_claude(event, 0, '{"decision": "deny", "reason": "again"}', "")
    assert json.loads(out) == {"decision": "block", "reason": "again"}
