"""Helpers shared by the MCP tests: hook events, stdio server entries for the fake validator, process checks."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
FAKE = str(ROOT / "tests" / "fakes" / "mcp_server.py")
"""The fake MCP validator (run over stdio by path)."""


def event(tool: str, **tool_input: Any) -> dict[str, Any]:
    """A Claude Code PreToolUse event for ``tool`` with ``tool_input``."""
    return {
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "cwd": str(ROOT),
        "session_id": "s-mcp",
        "transcript_path": "/dev/null",
        "permission_mode": "default",
    }


def stdio_server(**env: str) -> dict[str, Any]:
    """An ``mcpServers`` entry starting the fake validator over stdio, with ``env``."""
    return {"command": sys.executable, "args": [FAKE], "env": env}


def processes_with_env(name: str, value: str) -> list[int]:
    """The running processes (zombies excluded) whose environment holds ``name=value``."""
    wanted = f"{name}={value}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if wanted in environ.split(b"\0") and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for its reaper counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")
