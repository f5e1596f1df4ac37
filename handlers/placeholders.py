"""The ``${...}`` names a command hook and a stdio MCP server's launch may always use, and their values:
``PLACEHOLDERS``, ``values``, and ``infer_project_dir`` (which folder ``${CLAUDE_PROJECT_DIR}`` is when the
host did not say). Standard library only: the config checks load it without a handler's machinery."""

from __future__ import annotations

import os
import sys

PLACEHOLDERS = (
    "CLAUDE_PROJECT_DIR",
    "CLAUDE_PLUGIN_ROOT",
    "CLAUDE_PLUGIN_DATA",
    "HOOKGATE_CONFIG_DIR",
    "HOOKGATE_PYTHON",
)
"""``${...}`` names always available in a command's text, and in a stdio server's command, args, env and cwd."""

PROJECT_CONFIG_DIRS = (".claude", ".kiro", ".gemini", ".codex")


def infer_project_dir(base_dir: str, fallback: str | None = None) -> str:
    """``CLAUDE_PROJECT_DIR`` if set; else the project a config folder belongs to (the parent of
    ``.claude``, ``.kiro``, ``.gemini``, ``.codex``); else ``fallback`` (at run time: the event's cwd),
    else ``base_dir``. ``hookgate validate`` and ``hookgate run`` resolve paths the same way."""
    env = os.environ.get("CLAUDE_PROJECT_DIR")
    if env:
        return env
    if os.path.basename(base_dir) in PROJECT_CONFIG_DIRS:
        return os.path.dirname(base_dir)
    return fallback or base_dir


def values(base_dir: str, project_dir: str) -> dict[str, str]:
    """The values of ``PLACEHOLDERS`` for a hook or server defined in a config file in ``base_dir``:
    ``CLAUDE_PROJECT_DIR`` is ``project_dir``, ``HOOKGATE_CONFIG_DIR`` ``base_dir``, ``HOOKGATE_PYTHON``
    the interpreter running hookgate; the two plugin folders only when their variables are set (Claude
    Code sets them for a plugin's hooks)."""
    found = {"CLAUDE_PROJECT_DIR": project_dir, "HOOKGATE_CONFIG_DIR": base_dir, "HOOKGATE_PYTHON": sys.executable}
    for name in ("CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA"):
        if os.environ.get(name):
            found[name] = os.environ[name]
    return found
