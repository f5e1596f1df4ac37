"""The top-level input fields of each hook event as Claude Code sends them (hooks reference §4.1 and
§4.2, v2.1.240): what a ``${path}`` placeholder (an approval ``message``, an ``mcp_tool`` ``input``) may
start with. Read by ``hookgate validate`` only (``unknown_root``), never on the hook path.

A host may send more (another dialect's extra fields are kept in the payload), so a root outside
these is a warning, not an error: at run time the placeholder is looked up in the event as it is.
"""

from __future__ import annotations

COMMON_FIELDS = frozenset(
    {
        "session_id",
        "prompt_id",
        "transcript_path",
        "cwd",
        "permission_mode",
        "effort",
        "hook_event_name",
        "agent_id",
        "agent_type",
        "CLAUDE_PROJECT_DIR",  # not a field: the project folder (see handlers.mcp_tool)
    }
)
"""Fields any event may carry (``agent_id``/``agent_type`` inside a subagent, ``effort`` in tool-use
contexts), and ``${CLAUDE_PROJECT_DIR}``."""

_TOOL = ("tool_name", "tool_input")
_TASK = ("task_id", "task_subject", "task_description", "teammate_name", "team_name")
_STOPPING = ("stop_hook_active", "last_assistant_message", "background_tasks", "session_crons")

EVENT_FIELDS: dict[str, frozenset[str]] = {
    name: frozenset(fields)
    for name, fields in {
        "SessionStart": ("source", "model", "session_title"),
        "Setup": ("trigger",),
        "InstructionsLoaded": (
            "file_path",
            "memory_type",
            "load_reason",
            "globs",
            "trigger_file_path",
            "parent_file_path",
        ),
        "UserPromptSubmit": ("prompt",),
        "UserPromptExpansion": ("expansion_type", "command_name", "command_args", "command_source", "prompt"),
        "MessageDisplay": ("turn_id", "message_id", "index", "final", "delta"),
        "PreToolUse": (*_TOOL, "tool_use_id"),
        "PermissionRequest": (*_TOOL, "permission_suggestions"),
        "PermissionDenied": (*_TOOL, "tool_use_id", "reason"),
        "PostToolUse": (*_TOOL, "tool_use_id", "tool_response", "duration_ms"),
        "PostToolUseFailure": (*_TOOL, "tool_use_id", "error", "is_interrupt", "duration_ms"),
        "PostToolBatch": ("tool_calls",),
        "Notification": ("message", "title", "notification_type"),
        "SubagentStart": (),
        "SubagentStop": (*_STOPPING, "agent_transcript_path"),
        "TaskCreated": _TASK,
        "TaskCompleted": _TASK,
        "Stop": _STOPPING,
        "StopFailure": ("error", "error_details", "last_assistant_message"),
        "TeammateIdle": ("teammate_name", "team_name"),
        "ConfigChange": ("source", "file_path"),
        "CwdChanged": ("old_cwd", "new_cwd"),
        "DirectoryAdded": ("directory", "source"),
        "FileChanged": ("file_path", "event"),
        "WorktreeCreate": ("name",),
        "WorktreeRemove": ("worktree_path",),
        "PreCompact": ("trigger", "custom_instructions"),
        "PostCompact": ("trigger", "compact_summary"),
        "SessionEnd": ("reason",),
        "Elicitation": ("mcp_server_name", "message", "mode", "url", "elicitation_id", "requested_schema"),
        "ElicitationResult": ("mcp_server_name", "action", "mode", "elicitation_id", "content"),
    }.items()
}
"""Event name -> the fields it adds to ``COMMON_FIELDS`` (one entry per event of ``gateway.events.EVENTS``)."""


def event_fields(event: str) -> frozenset[str]:
    """Every top-level field ``event`` may carry (``COMMON_FIELDS`` included); an unknown event: the common ones."""
    return COMMON_FIELDS | EVENT_FIELDS.get(event, frozenset())


def unknown_root(path: str, event: str) -> str | None:
    """A warning when the first name of ``path`` (``tool_inptu`` of ``tool_inptu.command``) is not a field of
    ``event``, with a did-you-mean; None when it is one."""
    root = path.split(".", 1)[0]
    fields = event_fields(event)
    if root in fields:
        return None
    import difflib

    close = difflib.get_close_matches(root, sorted(fields), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"${{{path}}}: {root!r} is not a field of a {event} event as Claude Code sends it{hint}"
