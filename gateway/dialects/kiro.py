"""Kiro CLI 2.x dialect (agent-config hooks).

Events: agentSpawn, userPromptSubmit, preToolUse, postToolUse, stop. Kiro reads exit codes only:
0 goes on (stdout of agentSpawn / userPromptSubmit becomes context), 2 blocks a preToolUse (stderr
goes to the model), anything else is a warning. Kiro has no ``ask``: a decision that needs the
user's confirmation is rendered as a block whose reason says so. Tool names map to canonical ones
(``execute_bash`` -> ``Bash``, ``@git/status`` -> ``mcp__git__status``; see ``gateway.tool_names``).
"""

from __future__ import annotations

from gateway.errors import EventError
from gateway.events import HookEvent
from gateway.tool_names import to_canonical, to_host

TYPE_CHECKING = False  # importing typing costs a hook process ~2 ms
if TYPE_CHECKING:
    from typing import Any

    from gateway.decision import Decision

NAME = "kiro"
EVENT_NAMES = {
    "agentSpawn": "SessionStart",
    "userPromptSubmit": "UserPromptSubmit",
    "preToolUse": "PreToolUse",
    "postToolUse": "PostToolUse",
    "stop": "Stop",
}
_TO_KIRO = {canon: kiro for kiro, canon in EVENT_NAMES.items()}


def parse(data: dict[str, Any]) -> HookEvent:
    """Map a Kiro hook input to the canonical event. Raises EventError for a non-Kiro event name."""
    name = data.get("hook_event_name")
    if name not in EVENT_NAMES:
        raise EventError(f"unknown Kiro event {name!r} in hook_event_name (expected one of: {', '.join(EVENT_NAMES)})")
    payload = dict(data)
    payload["hook_event_name"] = EVENT_NAMES[str(name)]
    host_tool = data.get("tool_name")
    if isinstance(host_tool, str):
        payload["tool_name"] = to_canonical(NAME, host_tool)
    if payload["hook_event_name"] == "SessionStart":
        payload.setdefault("source", "startup")
    return HookEvent(payload, dialect=NAME, raw=data, host_tool_name=host_tool if isinstance(host_tool, str) else None)


def host_payload(event: HookEvent) -> dict[str, Any]:
    payload = dict(event.payload)
    payload["hook_event_name"] = _TO_KIRO.get(event.name, event.name)
    if event.tool_name:
        payload["tool_name"] = to_host(NAME, event.tool_name)
    return payload


def render(decision: Decision) -> tuple[int, str, str]:
    """``(exit_code, stdout, stderr)`` for Kiro CLI (see module docstring)."""
    if decision.event == "PreToolUse":
        if decision.permission == "deny" or decision.block:
            return 2, "", (decision.permission_reason or decision.reason or "Blocked by hookgate") + "\n"
        if decision.permission in ("ask", "defer"):
            why = decision.permission_reason or "a hook asked for confirmation"
            return 2, "", f"hookgate: this call needs the user's confirmation, which Kiro hooks cannot ask for: {why}\n"
    out = ""
    if decision.event in ("SessionStart", "UserPromptSubmit") and decision.additional_context:
        out = "\n\n".join(decision.additional_context) + "\n"
    err = (decision.system_message + "\n") if decision.system_message else ""
    return 0, out, err
