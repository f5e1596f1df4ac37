"""What ``hookgate validate`` checks about approvals beyond the schema (environment-dependent, so not
part of the cached config): each approval handler's ``timeout`` against the host timeouts it can see,
and each channel's secrets.

Host timeouts seen: the Claude Code settings files (``.claude/settings.json`` and
``.claude/settings.local.json`` of ``$CLAUDE_PROJECT_DIR`` or the current folder, ``~/.claude/
settings.json``): every hook on the same event that runs hookgate (a command naming ``hookgate``, an
``http`` hook whose URL ends in ``/hooks``), with its ``timeout`` or Claude Code's default of 600 s; and
``$HOOKGATE_SERVER_TIMEOUT``, the thin client's wait for ``hookgate serve``. A wait that is not
``HEADROOM`` seconds below one of them would be cut off by the host, and a killed hook is an allow.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gateway.config import RuntimeConfig

HEADROOM = 2.0
"""Seconds an approval wait must stay below a host timeout (hookgate's own start and answer)."""
CLAUDE_DEFAULT_TIMEOUT = 600.0
CLAUDE_EVENT_TIMEOUTS = {"UserPromptSubmit": 30.0}


def _settings_files() -> list[str]:
    project = os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    return [
        os.path.join(project, ".claude", "settings.json"),
        os.path.join(project, ".claude", "settings.local.json"),
        os.path.join(os.path.expanduser("~"), ".claude", "settings.json"),
    ]


def host_timeouts(event: str) -> list[tuple[float, str]]:
    """``(seconds, where)`` of every host timeout that bounds a hookgate hook on ``event``."""
    found: list[tuple[float, str]] = []
    default = CLAUDE_EVENT_TIMEOUTS.get(event, CLAUDE_DEFAULT_TIMEOUT)
    for path in _settings_files():
        try:
            with open(path, encoding="utf-8") as fh:
                doc = json.load(fh)
        except (OSError, ValueError):
            continue
        groups = (doc.get("hooks") or {}).get(event) if isinstance(doc, dict) else None
        for gi, group in enumerate(groups if isinstance(groups, list) else []):
            hooks = group.get("hooks") if isinstance(group, dict) else None
            for hi, hook in enumerate(hooks if isinstance(hooks, list) else []):
                if not isinstance(hook, dict) or not _runs_hookgate(hook):
                    continue
                timeout = hook.get("timeout")
                seconds = float(timeout) if isinstance(timeout, int | float) and timeout > 0 else default
                found.append(
                    (
                        seconds,
                        f"{path}: hooks.{event}[{gi}].hooks[{hi}]{'.timeout' if timeout else ' (Claude Code default)'}",
                    )
                )
    if os.environ.get("HOOKGATE_SERVER_TIMEOUT"):
        from gateway.client import env_timeout  # the wait the thin client takes (a bad value: its default)

        found.append((env_timeout(), "HOOKGATE_SERVER_TIMEOUT (the thin client's wait for hookgate serve)"))
    return found


def _runs_hookgate(hook: dict[str, Any]) -> bool:
    if hook.get("type") == "http":
        return str(hook.get("url", "")).rstrip("/").endswith("/hooks")
    return "hookgate" in str(hook.get("command", ""))


def approval_warnings(config: RuntimeConfig) -> list[str]:
    """One line per approval wait a host would cut off, and per channel secret that is not set."""
    from gateway.approvals.config import SECRET_FIELDS

    lines: list[str] = []
    for event, groups in config.hooks.items():
        bounds = None
        for group in groups:
            for spec in group.handlers:
                if spec.type != "approval":
                    continue
                if bounds is None:
                    default = CLAUDE_EVENT_TIMEOUTS.get(event, CLAUDE_DEFAULT_TIMEOUT)
                    bounds = host_timeouts(event) or [(default, "Claude Code's default hook timeout")]
                for seconds, where in bounds:
                    if spec.timeout > seconds - HEADROOM:
                        lines.append(
                            f"{spec.where}.timeout: {spec.timeout:g} s is not below the host's timeout of "
                            f"{seconds:g} s ({where}): the host would kill the hook mid-wait, and a killed "
                            f"hook lets the call through; use at most {max(seconds - HEADROOM, 1):g}"
                        )
    for name, spec in config.channels.items():
        for field_name in SECRET_FIELDS[spec["type"]]:
            if not os.environ.get(spec[field_name]):
                lines.append(
                    f"channels.{name}: environment variable {spec[field_name]} is not set here; "
                    "the channel cannot post requests without it"
                )
    return lines
