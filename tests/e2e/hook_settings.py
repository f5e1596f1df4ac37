"""Claude Code settings dicts for hooks: native test hooks, and hookgate (command or http).

Every builder returns a plain settings dict (``{"hooks": {event: [matcher groups]}}``) to pass
as ``settings`` to ``run_claude``; ``merge_settings`` combines several.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Settings = dict[str, Any]

# Events whose matcher groups filter on the tool name.
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest"})


def hook_group(event: str, hook: Mapping[str, Any], matcher: str = "*") -> dict[str, Any]:
    group: dict[str, Any] = {"hooks": [dict(hook)]}
    if event in TOOL_EVENTS:
        group["matcher"] = matcher
    return group


def hooks_settings(hook: Mapping[str, Any], events: Iterable[str], matcher: str = "*") -> Settings:
    """The same hook registered for each event."""
    return {"hooks": {event: [hook_group(event, hook, matcher)] for event in events}}


def merge_settings(*parts: Mapping[str, Any]) -> Settings:
    """Hook lists are concatenated per event; other top-level keys: later parts win."""
    merged: Settings = {"hooks": {}}
    for part in parts:
        for key, value in part.items():
            if key != "hooks":
                merged[key] = value
        for event, groups in part.get("hooks", {}).items():
            merged["hooks"].setdefault(event, []).extend(groups)
    return merged


def command_hook_settings(
    command: str,
    *,
    events: Sequence[str] = ("PreToolUse",),
    matcher: str = "Bash",
    timeout: int | None = None,
) -> Settings:
    hook: dict[str, Any] = {"type": "command", "command": command}
    if timeout is not None:
        hook["timeout"] = timeout
    return hooks_settings(hook, events, matcher)


def http_hook_settings(
    url: str,
    *,
    events: Sequence[str] = ("PreToolUse",),
    matcher: str = "*",
    headers: Mapping[str, str] | None = None,
    timeout: int = 10,
) -> Settings:
    hook: dict[str, Any] = {"type": "http", "url": url, "timeout": timeout}
    if headers:
        hook["headers"] = dict(headers)
    return hooks_settings(hook, events, matcher)


# --------------------------------------------------------------------------- native test hooks


@dataclass(frozen=True)
class ShellHook:
    """A shell-script hook written by a test; it appends every event it receives to ``log``."""

    script: Path
    log: Path

    @property
    def command(self) -> str:
        return shlex.quote(str(self.script))

    def calls(self) -> list[dict[str, Any]]:
        return read_json_stream(self.log)


def read_json_stream(path: Path) -> list[dict[str, Any]]:
    """Concatenated JSON objects (one per hook call, whatever their newlines)."""
    if not path.exists():
        return []
    text, decoder, found, pos = path.read_text(), json.JSONDecoder(), [], 0
    while (pos := _skip_space(text, pos)) < len(text):
        value, pos = decoder.raw_decode(text, pos)
        found.append(value)
    return found


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def write_shell_hook(directory: Path, name: str, answer: Mapping[str, Any] | None = None) -> ShellHook:
    """A POSIX sh hook that logs stdin and prints ``answer`` as JSON (nothing when None)."""
    directory.mkdir(parents=True, exist_ok=True)
    script, log = directory / f"{name}.sh", directory / f"{name}.jsonl"
    lines = ["#!/bin/sh", f"cat >> {shlex.quote(str(log))}", f"echo >> {shlex.quote(str(log))}"]
    if answer is not None:
        lines.append(f"printf '%s\\n' {shlex.quote(json.dumps(answer))}")
    script.write_text("\n".join(lines) + "\n")
    script.chmod(0o755)
    return ShellHook(script, log)


def pretooluse_deny(reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


def write_deny_hook(directory: Path, reason: str = "blocked by test hook") -> ShellHook:
    return write_shell_hook(directory, "pretool_deny", pretooluse_deny(reason))


# --------------------------------------------------------------------------- hookgate
# HOOKGATE: the two ways Claude Code reaches the gateway. Scenarios take the resulting dict.


def hookgate_executable() -> Path:
    """The ``hookgate`` console script of the venv running the tests (may not exist yet)."""
    return Path(sys.prefix) / "bin" / "hookgate"


DEFAULT_HOOKGATE_EVENTS = ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop")


def hookgate_command_settings(
    config: Path,
    *,
    events: Sequence[str] = DEFAULT_HOOKGATE_EVENTS,
    matcher: str = "*",
    executable: Path | None = None,
    timeout: int | None = 30,
) -> Settings:
    """``<venv>/bin/hookgate run --config <file>`` as a command hook for each event."""
    argv = [str(executable or hookgate_executable()), "run", "--config", str(config)]
    return command_hook_settings(shlex.join(argv), events=events, matcher=matcher, timeout=timeout)


def hookgate_http_settings(
    port: int,
    *,
    events: Sequence[str] = DEFAULT_HOOKGATE_EVENTS,
    matcher: str = "*",
    path: str = "/hooks",
    headers: Mapping[str, str] | None = None,
    timeout: int = 10,
) -> Settings:
    """Claude Code ``type: "http"`` hooks posting to ``hookgate serve`` on 127.0.0.1:port.

    Start ``hookgate serve`` inside the sandbox (``sandbox.wrap(argv)`` or a socket from
    ``sandbox.bind_loopback()``), or the CLI can't reach it.
    """
    url = f"http://127.0.0.1:{port}{path}"
    return http_hook_settings(url, events=events, matcher=matcher, headers=headers, timeout=timeout)
