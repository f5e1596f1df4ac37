"""Gemini CLI: ``DIR/.gemini/settings.json`` (``--project``) or ``~/.gemini/settings.json``; matcher groups
of named command entries with millisecond timeouts."""

from __future__ import annotations

import os
from typing import Any

from gateway.install.edit import Edit, edit_grouped
from gateway.install.files import Plan, hooks_of
from gateway.install.options import HOOK_TIMEOUT_S, Options, _home


def default_events() -> list[str]:
    from gateway.dialects.gemini import EVENT_NAMES

    return list(EVENT_NAMES)


def all_events() -> dict[str, str]:
    from gateway.dialects.gemini import EVENT_NAMES

    return dict(EVENT_NAMES)


def target_file(opts: Options) -> str:
    return os.path.join(opts.project, ".gemini", "settings.json") if opts.project else _home(".gemini", "settings.json")


def handler_entry(opts: Options, event: str, command: str) -> dict[str, Any]:
    return {
        "name": "hookgate",
        "type": "command",
        "command": command,
        "timeout": HOOK_TIMEOUT_S * 1000,
        "description": "hookgate: one hook policy for every agent",
    }


def hooks_disabled(path: str, doc: dict[str, Any]) -> list[str]:
    """Gemini's switches that stop the hooks install writes: ``hooksConfig.enabled: false`` (no hook
    runs) and ``hookgate`` in ``hooksConfig.disabled`` (the hooks named so are skipped)."""
    config = doc.get("hooksConfig")
    if not isinstance(config, dict):
        return []
    if config.get("enabled", True) is False:
        return [
            f"{path}: hooksConfig.enabled is false: Gemini runs none of the hooks while it is, hookgate's "
            "included (set it to true for the policy to apply)"
        ]
    names = config.get("disabled")
    if isinstance(names, list) and "hookgate" in names:
        return [
            f"{path}: hooksConfig.disabled lists 'hookgate': Gemini skips every hook install writes "
            "(they are named hookgate); remove it from that list for the policy to apply"
        ]
    return []


def edit(
    opts: Options, result: Plan, path: str, before: str | None, doc: dict[str, Any], wanted: dict[str, dict[str, Any]]
) -> Edit:
    """Make install's entries in ``doc`` (the file at ``path``, ``before`` its text) exactly ``wanted``."""
    return edit_grouped(hooks_of(path, doc), wanted, opts.host, result.keep_empty)
