"""Control scenarios for the real Codex CLI (``codex exec``; no hookgate involved yet).

The fake Responses API asks for ``exec_command`` to delete ``proj/victim`` (``rm -r``: Codex
itself refuses ``rm -f``/``rm -rf``). We check what the host really does with native command
hooks: files on disk and the hooks' own stdin logs are the evidence, never the CLI's wording.
HOSTS.md records the payloads these tests pin down.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.hosts import Workspace, run_codex
from tests.fakes.openai_responses_api import CustomToolCall, ToolCall, last_user_text, tool_outputs

pytest_plugins = ["tests.e2e.fixtures_hosts"]
pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("codex_cli")]

BASE_FIELDS = {"session_id", "transcript_path", "cwd", "hook_event_name"}
TURN_FIELDS = BASE_FIELDS | {"turn_id", "model", "permission_mode"}


def shell(cmd: str) -> ToolCall:
    return ToolCall("exec_command", {"cmd": cmd})


def group(command: str, *, matcher: str | None = None, timeout: int = 10) -> dict[str, Any]:
    entry: dict[str, Any] = {"hooks": [{"type": "command", "command": command, "timeout": timeout}]}
    if matcher is not None:
        entry["matcher"] = matcher
    return entry


def deny_json(reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


def commands_run(events: list[dict[str, Any]]) -> list[str]:
    return [
        e["item"]["command"]
        for e in events
        if e.get("type") == "item.completed" and e.get("item", {}).get("type") == "command_execution"
    ]


def test_control_without_hooks_the_shell_tool_deletes_the_victim(host_ws: Workspace) -> None:
    run = run_codex(host_ws.project, None, [shell(f"rm -r {host_ws.victim}"), "done"], "clean up")

    assert not host_ws.victim.exists(), run.describe()
    assert run.returncode == 0, run.describe()
    assert len(run.main_requests) == 2 and run.exhausted == 0, run.describe()
    [output] = tool_outputs(run.main_requests[1].json)
    assert output["type"] == "function_call_output"
    assert len(commands_run(run.events)) == 1


def test_native_pre_tool_use_deny_keeps_the_victim(host_ws: Workspace) -> None:
    deny = host_ws.hook("deny", stdout=deny_json("blocked by test hook"))
    command = f"rm -r {host_ws.victim}"

    run = run_codex(
        host_ws.project, {"PreToolUse": [group(deny, matcher="Bash")]}, [shell(command), "done"], "clean up"
    )

    assert host_ws.victim_alive, run.describe()
    [payload] = host_ws.payloads("deny")
    assert TURN_FIELDS | {"tool_name", "tool_input", "tool_use_id"} <= payload.keys()
    assert payload["hook_event_name"] == "PreToolUse"
    assert payload["tool_name"] == "Bash"  # exec_command is reported Claude-style
    assert payload["tool_input"] == {"command": command}
    assert payload["permission_mode"] == "bypassPermissions"
    assert payload["cwd"] == str(host_ws.project)
    [output] = tool_outputs(run.main_requests[1].json)
    assert output["call_id"] == payload["tool_use_id"]
    assert "blocked by test hook" in output["output"]
    assert commands_run(run.events) == []  # a blocked call is not a command_execution item


@pytest.mark.parametrize(
    ("answer", "blocks"),
    [
        pytest.param({"stderr": "blocked via exit 2", "exit_code": 2}, True, id="exit2-with-stderr"),
        pytest.param({"exit_code": 2}, False, id="exit2-silent-fails-open"),
        pytest.param({"stdout": {"decision": "block", "reason": "legacy"}}, True, id="legacy-block"),
        pytest.param({"stdout": {"decision": "deny", "reason": "gemini"}}, False, id="gemini-style-ignored"),
        pytest.param(
            {"stdout": {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"}}},
            False,
            id="deny-without-reason-fails-open",
        ),
        pytest.param(
            {"stdout": {"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "x"}}},
            False,
            id="deny-without-hookEventName-fails-open",
        ),
        pytest.param(
            {"stdout": {"decision": "block", "reason": "both", **deny_json("both")}},
            True,
            id="legacy-plus-hookSpecificOutput",
        ),
        pytest.param({"stdout": deny_json("x"), "exit_code": 1}, False, id="exit1-fails-open"),
    ],
)
def test_pre_tool_use_answers(host_ws: Workspace, answer: dict[str, Any], blocks: bool) -> None:
    hook = host_ws.hook("pre", **answer)
    run = run_codex(
        host_ws.project,
        {"PreToolUse": [group(hook, matcher="Bash")]},
        [shell(f"rm -r {host_ws.victim}"), "done"],
        "clean up",
    )
    assert len(host_ws.payloads("pre")) == 1, run.describe()
    assert host_ws.victim_alive is blocks, run.describe()


def test_pre_tool_use_rewrites_the_tool_input(host_ws: Workspace) -> None:
    marker = host_ws.project / "rewritten.txt"
    hook = host_ws.hook(
        "rewrite",
        stdout={
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "updatedInput": {"command": f"echo rewritten > {marker}"},
            }
        },
    )
    run = run_codex(
        host_ws.project,
        {"PreToolUse": [group(hook, matcher="Bash")]},
        [shell(f"rm -r {host_ws.victim}"), "done"],
        "clean up",
    )
    assert host_ws.victim_alive, run.describe()
    assert marker.read_text().strip() == "rewritten"


@pytest.mark.parametrize(
    ("trust", "scope", "blocks"),
    [
        pytest.param("none", "user", False, id="untrusted-hooks-are-silently-skipped"),
        pytest.param("bypass", "user", True, id="bypass-flag"),
        pytest.param("hash", "project", True, id="project-hooks-json-trusted-by-hash"),
    ],
)
def test_hook_trust(host_ws: Workspace, trust: Any, scope: Any, blocks: bool) -> None:
    deny = host_ws.hook("deny", stdout=deny_json("blocked by test hook"))
    run = run_codex(
        host_ws.project,
        {"PreToolUse": [group(deny, matcher="Bash")]},
        [shell(f"rm -r {host_ws.victim}"), "done"],
        "clean up",
        trust=trust,
        scope=scope,
    )
    assert host_ws.victim_alive is blocks, run.describe()
    assert len(host_ws.payloads("deny")) == (1 if blocks else 0)


def test_apply_patch_is_seen_by_pre_tool_use_and_denied(host_ws: Workspace) -> None:
    target = host_ws.project / "target.txt"
    target.write_text("original\n")
    deny = host_ws.hook("deny", stdout=deny_json("no edits"))
    patch = "*** Begin Patch\n*** Update File: target.txt\n@@\n-original\n+patched\n*** End Patch\n"
    run = run_codex(
        host_ws.project,
        {"PreToolUse": [group(deny, matcher="Edit|Write")]},  # apply_patch also answers to Edit/Write
        [CustomToolCall("apply_patch", patch), "done"],
        "edit",
    )
    assert target.read_text() == "original\n", run.describe()
    [payload] = host_ws.payloads("deny")
    assert payload["tool_name"] == "apply_patch"
    assert payload["tool_input"] == {"command": patch}
    [output] = tool_outputs(run.main_requests[1].json)
    assert output["type"] == "custom_tool_call_output" and "no edits" in output["output"]


def test_user_prompt_submit_block_stops_before_the_model(host_ws: Workspace) -> None:
    hook = host_ws.hook("prompt", stdout={"decision": "block", "reason": "prompt rejected"})
    run = run_codex(
        host_ws.project,
        {"UserPromptSubmit": [group(hook)]},
        [shell(f"rm -r {host_ws.victim}"), "done"],
        "clean up",
    )
    assert host_ws.victim_alive, run.describe()
    assert run.main_requests == []
    [payload] = host_ws.payloads("prompt")
    assert payload["prompt"] == "clean up"


def test_additional_context_becomes_a_developer_message(host_ws: Workspace) -> None:
    def ctx(event: str) -> dict[str, Any]:
        return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": f"CTX-{event}"}}

    hooks = {
        ev: [group(host_ws.hook(ev, stdout=ctx(ev)), matcher="Bash" if "Tool" in ev else None)]
        for ev in ("SessionStart", "UserPromptSubmit", "PostToolUse")
    }
    run = run_codex(host_ws.project, hooks, [shell("true"), "done"], "go")

    def developer_texts(body: dict[str, Any]) -> list[str]:
        return [
            part.get("text", "")
            for item in body.get("input") or []
            if item.get("role") == "developer"
            for part in item.get("content") or []
        ]

    first, second = (developer_texts(r.json) for r in run.main_requests)
    assert "CTX-SessionStart" in first and "CTX-UserPromptSubmit" in first, run.describe()
    assert "CTX-PostToolUse" in second


CONTINUE_ONCE = (
    'if [ "$(wc -l < "$log")" -gt 1 ]; then echo \'{}\'; else\n'
    '  echo \'{"decision":"block","reason":"CONTINUE: create the marker"}\'; fi'
)


@pytest.mark.parametrize(
    ("continuation", "stop_hook_active"),
    [
        pytest.param(["second answer"], [False, True], id="text-only"),
        pytest.param(["TOOL", "second answer"], [False, True], id="with-tool-call"),
    ],
)
def test_stop_block_makes_the_agent_continue_once(
    host_ws: Workspace, continuation: list[str], stop_hook_active: list[bool]
) -> None:
    stop = host_ws.hook("stop", body=CONTINUE_ONCE)
    marker = host_ws.project / "continued.txt"
    steps: list[Any] = [shell(f"touch {marker}") if s == "TOOL" else s for s in continuation]
    run = run_codex(host_ws.project, {"Stop": [group(stop)]}, ["first answer", *steps], "do the work")

    payloads = host_ws.payloads("stop")
    assert [p["stop_hook_active"] for p in payloads] == stop_hook_active, run.describe()
    assert [p["last_assistant_message"] for p in payloads] == ["first answer", "second answer"]
    assert all(p.keys() >= TURN_FIELDS and p["hook_event_name"] == "Stop" for p in payloads)
    assert len(run.main_requests) == 1 + len(continuation) and run.exhausted == 0, run.describe()
    # The block reason comes back as a user message wrapped in <hook_prompt ...>.
    feedback = last_user_text(run.main_requests[1].json)
    assert "CONTINUE: create the marker" in feedback and feedback.startswith("<hook_prompt")
    assert marker.exists() is ("TOOL" in continuation)


EVENT_FIELDS = {
    "SessionStart": BASE_FIELDS | {"model", "permission_mode", "source"},
    "UserPromptSubmit": TURN_FIELDS | {"prompt"},
    "PreToolUse": TURN_FIELDS | {"tool_name", "tool_input", "tool_use_id"},
    "PostToolUse": TURN_FIELDS | {"tool_name", "tool_input", "tool_response", "tool_use_id"},
    "Stop": TURN_FIELDS | {"stop_hook_active", "last_assistant_message"},
    "SessionEnd": BASE_FIELDS | {"reason"},
}


def test_every_event_reaches_a_recording_hook(host_ws: Workspace) -> None:
    rec = host_ws.hook("rec", stdout="{}")
    hooks = {ev: [group(rec, timeout=2 if ev == "SessionEnd" else 10)] for ev in EVENT_FIELDS}
    run = run_codex(host_ws.project, hooks, [shell("echo hi"), "done"], "record everything")

    payloads = host_ws.payloads("rec")
    fired = [p["hook_event_name"] for p in payloads]
    assert fired == list(EVENT_FIELDS), run.describe()
    for payload in payloads:
        assert EVENT_FIELDS[payload["hook_event_name"]] <= payload.keys(), payload
        assert payload["cwd"] == str(host_ws.project)
    assert len({p["session_id"] for p in payloads}) == 1
    post = payloads[3]
    assert post["tool_input"] == {"command": "echo hi"}
    assert isinstance(post["tool_response"], str) and "hi" in post["tool_response"]
    assert payloads[0]["source"] == "startup" and payloads[-1]["reason"] == "other"
    assert Path(payloads[0]["transcript_path"]).is_relative_to(run.home)
