"""Codex CLI dialect: payloads as the real CLI 0.171.0 sends them (tests/e2e/HOSTS.md), answers Codex honours."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gateway.decision import Decision, HandlerResult, Verdict, merge
from gateway.dialects import codex, detect, host_payload, parse_event
from gateway.events import PassedThrough

TURN = {
    "session_id": "01a22740",
    "turn_id": "01a22740-bd6b",
    "cwd": "/p",
    "model": "gpt-5.5",
    "permission_mode": "bypassPermissions",
    "transcript_path": "/h/sessions/2026/11/29/rollout-2026-11-29T12-21-23-01a22740.jsonl",
}
PATCH = (
    "*** Begin Patch\n*** Update File: src/a.py\n@@\n-x\n+y\n*** Add File: .env\n+SECRET=1\n"
    "*** Delete File: old.txt\n*** Update File: b.py\n*** Move to: c.py\n@@\n-1\n+2\n*** End Patch\n"
)


def pre(tool_name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {
        **TURN,
        "hook_event_name": "PreToolUse",
        "tool_name": tool_name,
        "tool_input": tool_input,
        "tool_use_id": "call_b3c2",
    }


def test_bash_is_already_canonical() -> None:
    data = pre("Bash", {"command": "rm -r /p/victim"})
    assert detect(data) == "codex"
    event = parse_event(data)
    assert (event.name, event.dialect, event.tool_name, event.host_tool_name) == ("PreToolUse", "codex", "Bash", "Bash")
    assert event.tool_input == {"command": "rm -r /p/victim"} and event.get("turn_id") == TURN["turn_id"]


def test_apply_patch_becomes_edit_with_every_file() -> None:
    event = parse_event(pre("apply_patch", {"command": PATCH}))
    assert (event.tool_name, event.host_tool_name) == ("Edit", "apply_patch")
    assert event.tool_input is not None
    assert event.tool_input["command"] == PATCH and event.tool_input["file_path"] == "/p/src/a.py"
    assert event.tool_input["file_paths"] == ["/p/src/a.py", "/p/.env", "/p/old.txt", "/p/b.py", "/p/c.py"]
    assert "content" not in event.tool_input
    assert event.raw["tool_input"] == {"command": PATCH}  # the host's own payload is untouched


def test_apply_patch_that_only_adds_one_file_is_a_write() -> None:
    patch = "*** Begin Patch\n*** Add File: new.txt\n+hello\n+world\n*** End Patch\n"
    event = parse_event(pre("apply_patch", {"command": patch}))
    assert event.tool_name == "Write"
    assert event.tool_input == {
        "command": patch,
        "file_path": "/p/new.txt",
        "file_paths": ["/p/new.txt"],
        "content": "hello\nworld\n",
    }


def test_an_indented_hunk_header_names_its_file_as_codex_reads_it() -> None:
    """Codex trims each hunk header line before it matches ``*** Add File: `` (codex-rs apply-patch)."""
    patch = "*** Begin Patch\n  *** Add File: .env\n+SECRET=1\n\t*** Delete File: .codex/hooks.json\n*** End Patch\n"
    event = parse_event(pre("apply_patch", {"command": patch}))
    assert event.tool_input is not None and event.tool_input["file_paths"] == ["/p/.env", "/p/.codex/hooks.json"]
    one = parse_event(pre("apply_patch", {"command": "*** Begin Patch\n *** Add File: .env\n+K=V\n*** End Patch\n"}))
    assert one.tool_name == "Write" and one.tool_input is not None and one.tool_input["content"] == "K=V\n"


def test_detection() -> None:
    assert detect({**TURN, "hook_event_name": "Stop", "stop_hook_active": False}) == "codex"
    session_end = {
        "session_id": "s",
        "transcript_path": TURN["transcript_path"],
        "cwd": "/p",
        "hook_event_name": "SessionEnd",
        "reason": "other",
    }
    assert detect(session_end) == "codex"  # no turn_id, but a Codex rollout transcript
    assert detect({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}}) == "claude"
    assert detect({"hook_event_name": "MessageDisplay", "turn_id": "t"}) == "claude"  # Claude Code's own turn_id
    passed = parse_event({**TURN, "hook_event_name": "Interrupt"})
    assert isinstance(passed, PassedThrough) and (passed.name, passed.answer) == ("Interrupt", (0, "", ""))


def render(event: str, **fields: Any) -> tuple[int, dict[str, Any], str]:
    code, out, err = codex.render(Decision(event=event, **fields))
    return code, (json.loads(out) if out else {}), err


def deny_body(reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


def test_deny_is_json_and_exit_2_with_stderr() -> None:
    assert render("PreToolUse", permission="deny", permission_reason="no") == (2, deny_body("no"), "no\n")
    code, body, err = render("PreToolUse", permission="deny")  # never an empty reason: Codex would fail open
    assert code == 2 and body == deny_body("Blocked by hookgate") and err.strip()


def test_fail_closed_failure_blocks_on_codex() -> None:
    failed = HandlerResult(id="guard", type="command", status="error", message="exit code 1", fail_closed=True)
    decision = merge("PreToolUse", [failed], tool_input={"command": "rm -r x"}, blocks=True)
    code, out, err = codex.render(decision)
    body = json.loads(out)["hookSpecificOutput"]
    assert code == 2 and body["permissionDecision"] == "deny" and "guard" in body["permissionDecisionReason"]
    assert "guard" in err


@pytest.mark.parametrize(
    "fields",
    [
        {"permission": "ask", "permission_reason": "sure?"},
        {"permission": "defer"},
        {"continue_": False, "stop_reason": "halt"},
    ],
)
def test_unsupported_answers_on_pre_tool_use_become_a_deny(fields: dict[str, Any]) -> None:
    code, body, err = render("PreToolUse", **fields)
    assert code == 2 and body["hookSpecificOutput"]["permissionDecision"] == "deny" and err.strip()
    assert "continue" not in body  # Codex rejects continue:false on PreToolUse as unsupported


def test_rewrite_allow_and_context() -> None:
    assert render("PreToolUse", updated_input={"command": "echo ok"}) == (
        0,
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "updatedInput": {"command": "echo ok"},
            }
        },
        "",
    )
    assert render("PreToolUse", permission="allow") == (0, {}, "")  # a bare allow is "unsupported": say nothing
    assert render("UserPromptSubmit", additional_context=["c"]) == (
        0,
        {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "c"}},
        "",
    )


def test_rewrite_of_a_patch_drops_the_fields_hookgate_added() -> None:
    event = parse_event(pre("apply_patch", {"command": PATCH}))
    ok = HandlerResult(id="r", type="command", verdict=Verdict(updated_input={"command": PATCH.replace("+y", "+z")}))
    decision = merge("PreToolUse", [ok], tool_input=event.tool_input, blocks=True)
    body = json.loads(codex.render(decision)[1])
    assert body["hookSpecificOutput"]["updatedInput"] == {"command": PATCH.replace("+y", "+z")}


def test_stop_block_and_post_tool_use_output() -> None:
    assert render("Stop", block=True, reason="run the tests") == (
        2,
        {"decision": "block", "reason": "run the tests"},
        "run the tests\n",
    )
    assert render("PostToolUse", updated_output="[redacted]") == (0, {"decision": "block", "reason": "[redacted]"}, "")
    assert render("SessionStart", block=True) == (0, {}, "")  # cannot block: nothing to say
    assert render("PostToolUse", continue_=False, stop_reason="s") == (0, {"continue": False, "stopReason": "s"}, "")


def test_host_payload_strips_added_patch_fields() -> None:
    event = parse_event(pre("apply_patch", {"command": PATCH}))
    assert host_payload(event, "codex") is event.raw
    payload = codex.host_payload(event)
    assert payload["tool_name"] == "apply_patch" and payload["tool_input"] == {"command": PATCH}
