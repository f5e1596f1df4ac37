"""hookgate default policy: stop destructive shell commands (PreToolUse on Bash, Claude Code's PowerShell tool
and the other hosts' shells).

The rules live in the ``destructive`` package next to this file (see its docstring and README's "The
built-in default policy"): recursive deletes outside build folders and temp directories, git commands that
destroy work or remote history, recursive mode changes and ``rsync --delete`` on protected roots, disk
overwrites, downloaded code run straight away, writes to secrets, to ``.git/config`` and to the agent's own hook
configuration, and the same commands hidden in substitutions, wrappers, ``sh -c``, environment variables git
runs, interpreter one-liners and schedulers. Each match names its rule (``rm.recursive``, ``git.stash-drop``...);
most deny, a few ask (``git branch -D``/``-d``, ``git stash drop``/``clear``, ``tar --remove-files``: the work
can still be brought back).

Two ways to run it (standard library only):

- in-process: ``check_event(event) -> dict | None`` (hookgate's ``python`` handler); it never raises.
- as a command hook: ``python -I -S shell_guard.py`` reads the event on stdin and prints the answer.

``check_command(command, cwd=None) -> str | None`` is the deny reason alone (also used by
``configs/validators/policy.py``); ``analyse`` gives the rule, decision and triggering part.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # no typing import at run time (a command hook starts in milliseconds)
    from typing import Any

try:
    from .destructive import Finding, analyse, analyse_powershell, check_command

    _IN_PACKAGE = True
except ImportError:  # run as a script (``python -I -S shell_guard.py``): load the sibling package
    _HERE = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, _HERE)
    try:
        from destructive import (  # type: ignore[no-redef]
            Finding,
            analyse,
            analyse_powershell,
            check_command,
            protected,
        )
    finally:
        sys.path.remove(_HERE)
    _IN_PACKAGE = False

__all__ = ["analyse", "answer", "check_command", "check_event", "main"]

_NOT_SHELL_TOOLS = frozenset(
    {
        "Write",
        "Edit",
        "MultiEdit",
        "NotebookEdit",
        "Read",
        "fs_write",
        "fs_read",
        "write_file",
        "replace",
        "read_file",
        "apply_patch",
    }
)


def _protected() -> Any:
    """``destructive.protected`` (it loads ``secrets_guard``), imported in-process by the first answer: a
    command that passes never needs it."""
    if _IN_PACKAGE:
        from .destructive import protected as module

        return module
    return protected


def answer(event: dict[str, Any], found: Finding) -> dict[str, Any] | None:
    """The hook output for ``found`` in the shape the event's ``hook_event_name`` expects; the reason ends
    with the rule's name, so the user knows what to tune, and ``hookgate`` carries the rule and the part of
    the command that triggered it (hookgate's ``python`` handler moves it into the result's meta; ``main``
    drops it). An ask on an event that cannot ask is None for a PermissionRequest (the user is being asked
    already) and a deny elsewhere."""
    reason = f"{found.reason} [rule {found.rule}]"
    name = event.get("hook_event_name") or "PreToolUse"
    meta = {"rule": found.rule, "decision": found.decision, "trigger": found.part}
    if found.decision == "ask":
        if name in ("PreToolUse", "preToolUse", "BeforeTool"):
            return {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "ask",
                    "permissionDecisionReason": reason,
                },
                "hookgate": meta,
            }
        if name == "PermissionRequest":
            return None
    return {**_protected().answer(event, reason), "hookgate": meta}


def check_event(event: dict[str, Any]) -> dict[str, Any] | None:
    """Claude Code hook output denying (or asking about) a destructive shell command, or None. Never raises:
    a failure of its own denies (``_failed``).

    ``event``: a PreToolUse event whose ``tool_input.command`` (or ``cmd``; a string, or an argv list) is
    the command (for ``tool_name`` ``PowerShell``, a PowerShell script, read as ``pwsh -c`` text is);
    ``cwd`` (and ``tool_input.workdir``/``directory``/``dir_path``) say where it runs."""
    try:
        if not isinstance(event, dict):
            return None
        tool_input = event.get("tool_input")
        if not isinstance(tool_input, dict) or event.get("tool_name") in _NOT_SHELL_TOOLS:
            return None
        command = tool_input.get("command", tool_input.get("cmd"))
        if isinstance(command, list) and command and all(isinstance(c, str) for c in command):
            import shlex

            command = shlex.join(command)
        if not isinstance(command, str) or not command.strip():
            return None
        cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
        workdir = next(
            (
                tool_input[k]
                for k in ("workdir", "directory", "dir_path")
                if isinstance(tool_input.get(k), str) and tool_input[k]
            ),
            None,
        )
        if workdir:
            cwd = os.path.normpath(os.path.join(cwd or "", workdir)) if cwd or os.path.isabs(workdir) else None
        if event.get("tool_name") == "PowerShell":  # Claude Code's PowerShell tool: the command is a script
            found = analyse_powershell(command, cwd or None)
        else:
            found = analyse(command, cwd or None)
        return answer(event, found) if found else None
    except Exception as exc:  # analyse never raises: a bug around it must not let the command through
        return _failed(event, exc)


check_event.hookgate_readonly = True  # type: ignore[attr-defined]  # never changes the event: no copy needed
check_event.hookgate_threadsafe = True  # type: ignore[attr-defined]  # a large input is checked in a worker thread


def _failed(event: dict[str, Any], exc: Exception) -> dict[str, Any] | None:
    """The guard's answer when it failed itself (a bug): a deny, as a failClosed check that cannot run
    gives (``parse.unanalysable``), in the event's own shape when that can be built."""
    reason = (
        f"hookgate's shell guard failed on this command (internal error {type(exc).__name__}), so it is "
        "blocked rather than let through unchecked"
    )
    try:
        return answer(event, Finding("parse.unanalysable", "deny", reason, ""))
    except Exception:
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": f"{reason} [rule parse.unanalysable]",
            }
        }


def _hook_output(event: dict[str, Any]) -> dict[str, Any] | None:
    out = check_event(event)
    if out is not None:
        out.pop("hookgate", None)  # hookgate's own details: not part of Claude Code's output schema
    return out


def main() -> int:
    code: int = _protected().hook_main(_hook_output, "shell_guard")
    return code


if __name__ == "__main__":
    sys.exit(main())
