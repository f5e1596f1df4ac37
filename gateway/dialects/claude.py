"""Claude Code dialect: the canonical form. Rendering follows Claude Code's hooks reference §5.

- deny (PreToolUse) and block (events where exit 2 blocks): JSON on stdout *and* exit code 2 with
  the reason on stderr, so the call is stopped even by a host that cannot read the JSON.
- PermissionRequest: ``hookSpecificOutput.decision.behavior``; ask/defer render as no decision.
- everything else: JSON on stdout (``hookSpecificOutput.hookEventName`` set), exit 0.
- WorktreeCreate: the path as the last stdout line (command hooks cannot answer JSON there).
- no decision: nothing printed, exit 0.
"""

from __future__ import annotations

from gateway.events import EVENTS, HookEvent, dumps

TYPE_CHECKING = False  # importing typing costs a hook process ~2 ms
if TYPE_CHECKING:
    from typing import Any

    from gateway.decision import Decision

NAME = "claude"
EVENT_NAMES = {name: name for name in EVENTS}
_NOT_SPECIFIC = frozenset({"updatedPermissions", "interrupt"})


def parse(data: dict[str, Any]) -> HookEvent:
    """A Claude Code hook input is already canonical. Raises EventError on a malformed envelope."""
    return HookEvent(data, dialect=NAME)


def host_payload(event: HookEvent) -> dict[str, Any]:
    return event.payload


def _permission_request(decision: Decision) -> dict[str, Any]:
    """PermissionRequest's ``decision`` object: ``behavior`` plus the fields that go with it."""
    verdict: dict[str, Any] = {"behavior": decision.permission}
    if decision.permission == "allow":
        if decision.updated_input is not None:
            verdict["updatedInput"] = decision.updated_input
        if decision.extra.get("updatedPermissions"):
            verdict["updatedPermissions"] = decision.extra["updatedPermissions"]
        return verdict
    if decision.permission_reason:
        verdict["message"] = decision.permission_reason
    if decision.extra.get("interrupt"):
        verdict["interrupt"] = True
    return verdict


def to_json(decision: Decision) -> dict[str, Any]:
    """The Claude Code JSON answer for ``decision`` ({} when there is nothing to say)."""
    name = decision.event
    out: dict[str, Any] = {}
    specific: dict[str, Any] = {}
    if not decision.continue_:
        out["continue"] = False
    if not decision.continue_ and decision.stop_reason:
        out["stopReason"] = decision.stop_reason
    if decision.system_message:
        out["systemMessage"] = decision.system_message
    if name == "PreToolUse":
        if decision.permission is not None:
            specific["permissionDecision"] = decision.permission
            if decision.permission_reason:
                specific["permissionDecisionReason"] = decision.permission_reason
        if decision.updated_input is not None:
            specific["updatedInput"] = decision.updated_input
    elif name == "PermissionRequest" and decision.permission in ("allow", "deny"):
        specific["decision"] = _permission_request(decision)
    if decision.block:
        out["decision"] = "block"
        out["reason"] = decision.reason or "Blocked by hookgate"
    if decision.additional_context:
        specific["additionalContext"] = "\n\n".join(decision.additional_context)
    if decision.updated_output is not None:
        specific["updatedToolOutput"] = decision.updated_output
    specific.update({k: v for k, v in decision.extra.items() if k not in _NOT_SPECIFIC})
    if specific:
        out["hookSpecificOutput"] = {"hookEventName": name, **specific}
    return out


def render(decision: Decision) -> tuple[int, str, str]:
    """``(exit_code, stdout, stderr)`` for Claude Code (see module docstring)."""
    spec = EVENTS[decision.event]
    if decision.event == "WorktreeCreate":
        if decision.block:
            return 1, "", (decision.reason or "worktree creation refused") + "\n"
        path = decision.extra.get("worktreePath")
        return 0, (f"{path}\n" if path else ""), ""
    body = to_json(decision)
    stdout = dumps(body) + "\n" if body else ""
    if decision.event == "PreToolUse" and decision.permission == "deny":
        return 2, stdout, (decision.permission_reason or "Denied by hookgate") + "\n"
    if decision.block and spec.blocks:
        return 2, stdout, (decision.reason or "Blocked by hookgate") + "\n"
    return 0, stdout, ""
