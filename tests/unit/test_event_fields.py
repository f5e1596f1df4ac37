"""The table of each event's input fields that placeholder warnings use covers every event hookgate knows."""

from __future__ import annotations

from gateway.event_fields import COMMON_FIELDS, EVENT_FIELDS, unknown_root
from gateway.events import EVENTS


def test_every_event_has_its_fields() -> None:
    assert set(EVENT_FIELDS) == set(EVENTS)
    assert {"tool_name", "tool_input", "tool_use_id"} <= EVENT_FIELDS["PreToolUse"]
    assert "tool_use_id" not in EVENT_FIELDS["PermissionRequest"]  # Claude Code sends none there


def test_a_root_is_judged_by_its_first_name_only() -> None:
    assert unknown_root("tool_input.anything.0.deep", "PreToolUse") is None
    assert unknown_root("CLAUDE_PROJECT_DIR", "SessionEnd") is None and "session_id" in COMMON_FIELDS
    assert unknown_root("prompt", "PreToolUse") == (
        "${prompt}: 'prompt' is not a field of a PreToolUse event as Claude Code sends it (did you mean 'prompt_id'?)"
    )
