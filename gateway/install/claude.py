"""Claude Code: ``DIR/.claude/settings.json`` (``--project``) or ``$CLAUDE_CONFIG_DIR`` (``~/.claude``)
``/settings.json``; matcher groups of ``{type: command, command, timeout}`` entries."""

from __future__ import annotations

import os
from typing import Any

from gateway.install.edit import Edit, edit_grouped
from gateway.install.files import Plan, hooks_of
from gateway.install.options import HOOK_TIMEOUT_S, Options, _home

# Claude Code events not wired by default: a WorktreeCreate/Remove hook replaces Claude Code's own git
# worktree handling, MessageDisplay fires for every displayed message, FileChanged needs file names.
CLAUDE_SKIPPED = frozenset({"WorktreeCreate", "WorktreeRemove", "MessageDisplay", "FileChanged"})


def default_events() -> list[str]:
    """The events ``install`` wires by default (every Claude Code event but ``CLAUDE_SKIPPED``)."""
    from gateway.events import EVENTS

    return [name for name in EVENTS if name not in CLAUDE_SKIPPED]


def all_events() -> dict[str, str]:
    """Every event name ``--events`` accepts: host name -> canonical name."""
    from gateway.events import EVENTS

    return {name: name for name in EVENTS}


def target_file(opts: Options) -> str:
    root = (
        os.path.join(opts.project, ".claude")
        if opts.project
        else os.path.expanduser(os.environ.get("CLAUDE_CONFIG_DIR") or _home(".claude"))
    )
    return os.path.join(root, "settings.json")


def handler_entry(opts: Options, event: str, command: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "command", "command": command}
    if event != "SessionEnd":  # SessionEnd hooks share Claude Code's short shutdown budget
        entry["timeout"] = HOOK_TIMEOUT_S
    return entry


def hooks_disabled(path: str, doc: dict[str, Any]) -> list[str]:
    """``"disableAllHooks": true`` in the file: Claude Code then runs none of its hooks (user, project,
    local and plugin hooks alike; hookgate's with them), one warning line."""
    if doc.get("disableAllHooks") is not True:
        return []
    return [
        f'{path}: "disableAllHooks": true: Claude Code runs none of the hooks while it is set, hookgate\'s '
        "included (remove the key or set it to false for the policy to apply)"
    ]


def edit(
    opts: Options, result: Plan, path: str, before: str | None, doc: dict[str, Any], wanted: dict[str, dict[str, Any]]
) -> Edit:
    """Make install's entries in ``doc`` (the file at ``path``, ``before`` its text) exactly ``wanted``."""
    return edit_grouped(hooks_of(path, doc), wanted, opts.host, result.keep_empty)
