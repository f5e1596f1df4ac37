"""Codex CLI dialect (``@openai/codex`` 0.171.0 command hooks in ``hooks.json``).

Codex already speaks Claude Code's vocabulary: the same event names (SessionStart,
UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse, PreCompact, PostCompact,
SubagentStart, SubagentStop, Stop, SessionEnd), ``tool_name: "Bash"`` with ``tool_input.command``
for its ``exec_command`` tool, plus ``turn_id`` and ``model``. Differences handled here:

- ``apply_patch`` (``tool_input.command`` = the whole patch) becomes ``Write`` when the patch only
  adds files, else ``Edit``, so ``matcher: "Write|Edit"`` and ``if: "Edit(...)"`` rules apply. The
  canonical ``tool_input`` keeps ``command`` and adds ``file_path`` (the first file), ``file_paths``
  (every file the patch adds, updates, deletes or moves to; absolute) and, for a patch adding one
  file, its ``content``. These added fields are dropped again from an ``updatedInput`` sent back.
- ``Interrupt`` (no Claude Code counterpart) is passed through untouched (``parse`` returns ``PassedThrough``).
- Codex fails open on everything except a JSON deny that has ``hookEventName`` and a non-empty
  reason, a legacy ``decision: "block"``, or exit code 2 with text on stderr; it rejects ``allow``,
  ``ask``, ``continue: false`` and ``updatedInput`` without ``allow`` as "unsupported". So a
  deny/block (a ``failClosed`` failure included) is rendered as the JSON deny **and** exit 2 with the
  reason on stderr; ``ask``/``defer`` and ``continue: false`` on PreToolUse become a deny with a
  reason; a rewrite is ``permissionDecision: "allow"`` + ``updatedInput``; a bare ``allow`` is
  rendered as nothing (no objection). A rewritten PostToolUse output is a ``decision: "block"``
  whose reason is the new output (Codex replaces the output with the reason).
"""

from __future__ import annotations

import json
import os
import re

from gateway.errors import EventError
from gateway.events import EVENTS, HookEvent, PassedThrough, dumps
from gateway.tool_names import to_canonical, to_host

TYPE_CHECKING = False  # importing typing costs a hook process ~2 ms
if TYPE_CHECKING:
    from typing import Any

    from gateway.decision import Decision

NAME = "codex"
CODEX_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PreCompact",
    "PostCompact",
    "SubagentStart",
    "SubagentStop",
    "Stop",
    "SessionEnd",
)
"""The hook events Codex 0.171.0 knows that have a Claude Code counterpart (same names)."""
PASS_THROUGH = frozenset({"Interrupt"})
EVENT_NAMES = {name: name for name in CODEX_EVENTS}
PATCH_TOOL = "apply_patch"
PATCH_FIELDS = ("file_path", "file_paths", "content")
"""Fields hookgate adds to an ``apply_patch`` call's canonical ``tool_input``."""

# Codex's parser trims each hunk header line before it reads it (codex-rs apply-patch, parse_one_hunk; Rust's
# trim: any Unicode whitespace): an indented "  *** Add File: .env" adds .env too
_PATCH_LINE = re.compile(
    r"^[^\S\n]*\*\*\* (Add|Update|Delete) File: (.+?)\s*$|^[^\S\n]*\*\*\* Move to: (.+?)\s*$", re.M
)


def detects(data: dict[str, Any]) -> bool:
    """True for a Codex payload: a ``turn_id`` (not Claude Code's MessageDisplay) or a Codex rollout
    transcript (``.../sessions/YYYY/MM/DD/rollout-*.jsonl``), or Codex's own ``Interrupt`` event."""
    name = data.get("hook_event_name")
    if name in PASS_THROUGH:
        return True
    if name not in EVENTS or name == "MessageDisplay":
        return False
    if "turn_id" in data:
        return True
    transcript = data.get("transcript_path")
    return isinstance(transcript, str) and os.path.basename(transcript).startswith("rollout-")


def patch_files(patch: str) -> list[tuple[str, str]]:
    """``(operation, path)`` for each file an apply_patch text touches: Add, Update, Delete, Move."""
    found: list[tuple[str, str]] = []
    for m in _PATCH_LINE.finditer(patch):
        if m.group(1):
            found.append((m.group(1), m.group(2)))
        else:
            found.append(("Move", m.group(3)))
    return found


def _added_content(patch: str) -> str:
    lines = []
    in_add = False
    for line in patch.splitlines():
        header = line.lstrip()  # (Unicode whitespace too, as Rust's trim)
        if header.startswith("*** "):
            in_add = header.startswith("*** Add File:")
            continue
        if in_add and line.startswith("+"):
            lines.append(line[1:])
    return "\n".join(lines) + ("\n" if lines else "")


def patch_input(tool_input: dict[str, Any], cwd: str | None) -> tuple[str, dict[str, Any]]:
    """The canonical tool name (Write or Edit) and ``tool_input`` for an apply_patch call."""
    patch = tool_input.get("command")
    if not isinstance(patch, str):
        return "Edit", tool_input
    files = patch_files(patch)
    paths: list[str] = []
    for _, path in files:
        full = os.path.normpath(os.path.join(cwd, path)) if cwd and not os.path.isabs(path) else path
        if full not in paths:
            paths.append(full)
    canonical = dict(tool_input)
    if paths:
        canonical.setdefault("file_path", paths[0])
        canonical.setdefault("file_paths", paths)
    adds_only = bool(files) and all(op == "Add" for op, _ in files)
    if adds_only and len(files) == 1:
        canonical.setdefault("content", _added_content(patch))
    return ("Write" if adds_only else "Edit"), canonical


def parse(data: dict[str, Any]) -> HookEvent | PassedThrough:
    """Map a Codex CLI hook input to the canonical event (``PassedThrough`` for ``Interrupt``).

    Raises EventError for an event name Claude Code does not know.
    """
    name = data.get("hook_event_name")
    if name in PASS_THROUGH:
        return PassedThrough(str(name), NAME, f"Codex {name} has no hookgate counterpart; passed through untouched")
    if not isinstance(name, str) or name not in EVENTS:
        raise EventError(
            f"unknown Codex event {name!r} in hook_event_name (expected one of: {', '.join(CODEX_EVENTS)})"
        )
    payload = dict(data)
    host_tool = data.get("tool_name") if isinstance(data.get("tool_name"), str) else None
    if host_tool is not None:
        tool_input = data.get("tool_input")
        if host_tool == PATCH_TOOL and isinstance(tool_input, dict):
            cwd = data.get("cwd") if isinstance(data.get("cwd"), str) else None
            payload["tool_name"], payload["tool_input"] = patch_input(tool_input, cwd)
        else:
            payload["tool_name"] = to_canonical(NAME, host_tool)
    return HookEvent(payload, dialect=NAME, raw=data, host_tool_name=host_tool)


def host_payload(event: HookEvent) -> dict[str, Any]:
    """The event as a hook from a Codex hooks.json expects it: Claude Code's shape, Codex tool names."""
    payload = dict(event.payload)
    if event.tool_name:
        host = to_host(NAME, event.tool_name)
        payload["tool_name"] = host
        tool_input = payload.get("tool_input")
        if host == PATCH_TOOL and isinstance(tool_input, dict) and _is_patch(tool_input.get("command")):
            payload["tool_input"] = {k: v for k, v in tool_input.items() if k not in PATCH_FIELDS}
    return payload


def _is_patch(command: Any) -> bool:
    return isinstance(command, str) and command.lstrip().startswith("*** Begin Patch")


def _host_input(updated: dict[str, Any]) -> dict[str, Any]:
    """An ``updatedInput`` in Codex's own fields (the fields hookgate added to a patch dropped)."""
    if _is_patch(updated.get("command")):
        return {k: v for k, v in updated.items() if k not in PATCH_FIELDS}
    return updated


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def render(decision: Decision) -> tuple[int, str, str]:
    """``(exit_code, stdout, stderr)`` for Codex CLI (see module docstring)."""
    from gateway.dialects.claude import _permission_request

    name = decision.event
    spec = EVENTS[name]
    out: dict[str, Any] = {}
    specific: dict[str, Any] = {}
    code, err = 0, ""
    denied = decision.block or decision.permission == "deny"
    reason = (decision.permission_reason if decision.permission is not None else None) or decision.reason
    if name == "PreToolUse":
        if not denied and decision.permission in ("ask", "defer"):
            why = decision.permission_reason or "a hook asked for the user's confirmation"
            denied, reason = (
                True,
                (
                    "hookgate: this call needs the user's confirmation, which a Codex hook "
                    f"cannot ask for, so it is refused: {why}"
                ),
            )
        if not denied and not decision.continue_:
            denied = True
            reason = f"hookgate stopped the agent: {decision.stop_reason or 'a hook said continue: false'}"
        if denied:
            reason = reason or "Blocked by hookgate"
            specific.update(permissionDecision="deny", permissionDecisionReason=reason)
            code, err = 2, reason + "\n"
        elif decision.updated_input is not None:
            specific.update(permissionDecision="allow", updatedInput=_host_input(decision.updated_input))
        if decision.additional_context:
            specific["additionalContext"] = "\n\n".join(decision.additional_context)
    else:
        if name == "PermissionRequest" and decision.permission in ("allow", "deny"):
            specific["decision"] = _permission_request(decision)
        elif denied and spec.blocks:
            reason = reason or "Blocked by hookgate"
            out.update(decision="block", reason=reason)
            code, err = 2, reason + "\n"
        elif name == "PostToolUse" and decision.updated_output is not None:
            out.update(decision="block", reason=_text(decision.updated_output))  # Codex swaps in the reason
        if decision.additional_context:
            specific["additionalContext"] = "\n\n".join(decision.additional_context)
        if not decision.continue_:
            out["continue"] = False
            if decision.stop_reason:
                out["stopReason"] = decision.stop_reason
    if decision.system_message:
        out["systemMessage"] = decision.system_message
    if specific:
        out["hookSpecificOutput"] = {"hookEventName": name, **specific}
    return code, (dumps(out) + "\n") if out else "", err
