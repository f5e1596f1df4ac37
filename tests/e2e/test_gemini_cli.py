"""Control scenarios for the real Gemini CLI (no hookgate involved yet).

The fake Gemini API asks for ``run_shell_command`` to delete ``proj/victim``. We check what the
host really does with native command hooks: files on disk and the hooks' own stdin logs are
the evidence, never the CLI's wording. HOSTS.md records the payloads these tests pin down.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.hosts import Workspace, run_gemini
from tests.fakes.gemini_api import ToolCall, function_responses, last_user_text

pytest_plugins = ["tests.e2e.fixtures_hosts"]
pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("gemini_cli")]

BASE_FIELDS = {"session_id", "transcript_path", "cwd", "hook_event_name", "timestamp"}


def shell(command: str) -> ToolCall:
    return ToolCall("run_shell_command", {"command": command})


def group(command: str, *, matcher: str | None = None, name: str = "test-hook") -> dict[str, Any]:
    entry: dict[str, Any] = {"hooks": [{"name": name, "type": "command", "command": command, "timeout": 10000}]}
    if matcher is not None:
        entry["matcher"] = matcher
    return entry


def test_control_without_hooks_the_shell_tool_deletes_the_victim(host_ws: Workspace) -> None:
    run = run_gemini(host_ws.project, None, [shell(f"rm -rf {host_ws.victim}"), "done"], "clean up")

    assert not host_ws.victim.exists(), run.describe()
    assert run.returncode == 0, run.describe()
    assert len(run.main_requests) == 2 and run.exhausted == 0, run.describe()
    [response] = function_responses(run.main_requests[1].json)
    assert response["name"] == "run_shell_command" and "output" in response["response"]
    assert [e["status"] for e in run.events_of("tool_result")] == ["success"]


def test_native_before_tool_deny_keeps_the_victim(host_ws: Workspace) -> None:
    deny = host_ws.hook("deny", stdout={"decision": "deny", "reason": "blocked by test hook"})
    command = f"rm -rf {host_ws.victim}"

    run = run_gemini(
        host_ws.project,
        {"BeforeTool": [group(deny, matcher="run_shell_command")]},
        [shell(command), "done"],
        "clean up",
    )

    assert host_ws.victim_alive, run.describe()
    [payload] = host_ws.payloads("deny")
    assert payload.keys() >= BASE_FIELDS
    assert payload["hook_event_name"] == "BeforeTool"
    assert payload["tool_name"] == "run_shell_command"
    assert payload["tool_input"] == {"command": command}
    assert payload["cwd"] == str(host_ws.project)
    # The reason reaches the model as the tool's error; the turn goes on.
    [response] = function_responses(run.main_requests[1].json)
    assert "blocked by test hook" in response["response"]["error"]
    assert [e["status"] for e in run.events_of("tool_result")] == ["error"]


@pytest.mark.parametrize(
    ("answer", "blocks"),
    [
        pytest.param({"stderr": "blocked via exit 2", "exit_code": 2}, True, id="exit2-with-stderr"),
        pytest.param({"exit_code": 2}, False, id="exit2-silent-fails-open"),
        pytest.param(
            {
                "stdout": {
                    "hookSpecificOutput": {
                        "hookEventName": "PreToolUse",
                        "permissionDecision": "deny",
                        "permissionDecisionReason": "claude-style",
                    }
                }
            },
            False,
            id="claude-style-deny-is-ignored",
        ),
        pytest.param({"stdout": {"decision": "block", "reason": "legacy block"}}, True, id="block-alias"),
    ],
)
def test_before_tool_answers(host_ws: Workspace, answer: dict[str, Any], blocks: bool) -> None:
    hook = host_ws.hook("before", **answer)
    run = run_gemini(
        host_ws.project,
        {"BeforeTool": [group(hook, matcher="run_shell_command")]},
        [shell(f"rm -rf {host_ws.victim}"), "done"],
        "clean up",
    )
    assert len(host_ws.payloads("before")) == 1, run.describe()
    assert host_ws.victim_alive is blocks, run.describe()


def test_before_tool_rewrites_the_tool_input(host_ws: Workspace) -> None:
    marker = host_ws.project / "rewritten.txt"
    hook = host_ws.hook(
        "rewrite", stdout={"hookSpecificOutput": {"tool_input": {"command": f"echo rewritten > {marker}"}}}
    )
    run = run_gemini(
        host_ws.project,
        {"BeforeTool": [group(hook, matcher="run_shell_command")]},
        [shell(f"rm -rf {host_ws.victim}"), "done"],
        "clean up",
    )
    assert host_ws.victim_alive, run.describe()
    assert marker.read_text().strip() == "rewritten"


def test_before_agent_deny_stops_before_the_model(host_ws: Workspace) -> None:
    hook = host_ws.hook("prompt", stdout={"decision": "deny", "reason": "prompt rejected"})
    run = run_gemini(
        host_ws.project,
        {"BeforeAgent": [group(hook)]},
        [shell(f"rm -rf {host_ws.victim}"), "done"],
        "clean up",
    )
    assert host_ws.victim_alive, run.describe()
    assert run.main_requests == []
    [payload] = host_ws.payloads("prompt")
    assert payload["prompt"] == "clean up"


def test_additional_context_is_wrapped_in_hook_context_tags(host_ws: Workspace) -> None:
    def ctx(event: str) -> dict[str, Any]:
        return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": f"CTX-{event}"}}

    hooks = {ev: [group(host_ws.hook(ev, stdout=ctx(ev)))] for ev in ("SessionStart", "BeforeAgent", "AfterTool")}
    run = run_gemini(host_ws.project, hooks, [shell("echo hi"), "done"], "go")

    first, second = (r.json for r in run.main_requests)
    prompt_parts = [p.get("text", "") for p in first["contents"][-1]["parts"]]
    # SessionStart: prepended to the prompt; BeforeAgent: one more text part after it.
    assert "<hook_context>CTX-SessionStart</hook_context>\n\ngo" in prompt_parts, prompt_parts
    assert "<hook_context>CTX-BeforeAgent</hook_context>" in prompt_parts, prompt_parts
    # AfterTool: appended to the tool's output.
    [response] = function_responses(second)
    assert response["response"]["output"].endswith("<hook_context>CTX-AfterTool</hook_context>")


# An end-of-turn hook that denies the first AfterAgent only (it counts its own calls: see below
# why ``stop_hook_active`` is not enough) and allows every later one.
CONTINUE_ONCE = (
    'if [ "$(wc -l < "$log")" -gt 1 ]; then echo \'{}\'; else\n'
    '  echo \'{"decision":"deny","reason":"CONTINUE: create the marker"}\'; fi'
)


@pytest.mark.parametrize(
    ("continuation", "stop_hook_active"),
    [
        # The continued turn only answers: the 2nd AfterAgent says stop_hook_active=true.
        pytest.param(["second answer"], [False, True], id="text-only"),
        # The continued turn calls a tool first: the 2nd AfterAgent says stop_hook_active=FALSE
        # again, so a hook relying on that flag alone would force a continuation again (and
        # again...). A gateway needs its own per-session block counter.
        pytest.param(["TOOL", "second answer"], [False, False], id="with-tool-call"),
    ],
)
def test_after_agent_deny_makes_the_agent_continue_once(
    host_ws: Workspace, continuation: list[str], stop_hook_active: list[bool]
) -> None:
    after = host_ws.hook("after_agent", body=CONTINUE_ONCE)
    marker = host_ws.project / "continued.txt"
    steps: list[Any] = [shell(f"touch {marker}") if s == "TOOL" else s for s in continuation]
    run = run_gemini(host_ws.project, {"AfterAgent": [group(after)]}, ["first answer", *steps], "do the work")

    payloads = host_ws.payloads("after_agent")
    assert [p["stop_hook_active"] for p in payloads] == stop_hook_active, run.describe()
    assert all(p["hook_event_name"] == "AfterAgent" and p["prompt"] == "do the work" for p in payloads)
    # prompt_response is cumulative over the continuation, joined with newlines.
    assert [p["prompt_response"] for p in payloads] == ["first answer", "first answer\nsecond answer"]
    assert len(run.main_requests) == 1 + len(continuation) and run.exhausted == 0, run.describe()
    # The deny reason is the next prompt.
    assert last_user_text(run.main_requests[1].json) == "CONTINUE: create the marker"
    assert marker.exists() is ("TOOL" in continuation)


EVENTS = [
    "SessionStart",
    "SessionEnd",
    "BeforeAgent",
    "AfterAgent",
    "BeforeModel",
    "AfterModel",
    "BeforeToolSelection",
    "BeforeTool",
    "AfterTool",
    "PreCompress",
    "Notification",
]

EVENT_FIELDS = {
    "SessionStart": {"source"},
    "BeforeAgent": {"prompt"},
    "BeforeModel": {"llm_request"},
    "BeforeToolSelection": {"llm_request"},
    "AfterModel": {"llm_request", "llm_response"},
    "BeforeTool": {"tool_name", "tool_input"},
    "AfterTool": {"tool_name", "tool_input", "tool_response"},
    "AfterAgent": {"prompt", "prompt_response", "stop_hook_active"},
    "PreCompress": {"trigger"},
    "SessionEnd": {"reason"},
}


def test_every_event_reaches_a_recording_hook(host_ws: Workspace) -> None:
    hooks = {ev: [group(host_ws.hook("rec", stdout="{}"), name=f"rec-{ev}")] for ev in EVENTS}
    note = host_ws.project / "note.txt"
    run = run_gemini(
        host_ws.project,
        hooks,
        [shell("true"), ToolCall("write_file", {"file_path": str(note), "content": "hi"}), "done"],
        "record everything",
        scope="user",  # user-level settings fire as well as project ones
    )
    payloads = host_ws.payloads("rec")
    fired = [p["hook_event_name"] for p in payloads]
    assert fired[:2] == ["SessionStart", "BeforeAgent"], fired
    assert "Notification" not in fired  # no notifications in headless -p mode
    assert set(fired) == set(EVENT_FIELDS), fired
    assert fired.index("BeforeTool") < fired.index("AfterTool") < fired.index("AfterAgent")
    for payload in payloads:
        name = payload["hook_event_name"]
        assert BASE_FIELDS | EVENT_FIELDS[name] <= payload.keys(), payload
        assert payload["cwd"] == str(host_ws.project)
    assert len({p["session_id"] for p in payloads}) == 1
    tools = [(p["tool_name"], p["tool_input"]) for p in payloads if p["hook_event_name"] == "BeforeTool"]
    assert tools == [
        ("run_shell_command", {"command": "true"}),
        ("write_file", {"file_path": str(note), "content": "hi"}),
    ]
    after_tool = [p for p in payloads if p["hook_event_name"] == "AfterTool"]
    assert all(isinstance(p["tool_response"], dict) and "llmContent" in p["tool_response"] for p in after_tool)
    assert Path(payloads[0]["transcript_path"]).is_relative_to(run.home)
