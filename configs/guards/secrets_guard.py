"""hookgate default policy: block writes to secrets files (PreToolUse).

Denies writes to ``.env`` / ``.envrc`` files, private keys, certificate stores, SSH and GnuPG
directories and credential stores, with a reason the user understands. Path matching is
case-insensitive. Templates stay writable: a name ending in ``.example``, ``.sample``, ``.template``,
``.tmpl``, ``.tpl``, ``.dist`` or ``.default(s)``, and an ``.env.*`` file with one of those words
among its parts (``.env.local.example``, ``.env.example.bak``). Reading is never blocked.

Two ways to run it (standard library only: json, re, os):

- in-process: ``check_event(event) -> dict | None`` (hookgate's ``python`` handler); it never raises.
- as a command hook: ``python -I -S secrets_guard.py`` reads the event on stdin and prints the answer.

Which tools are checked (``check_event`` accepts any ``tool_name``):

- file writers (Claude ``Write``/``Edit``/``MultiEdit``/``NotebookEdit``, Kiro ``fs_write``, Gemini
  ``write_file``/``replace``, Codex ``apply_patch``, or any other name): every path found in
  ``tool_input`` under ``file_path``, ``notebook_path``, ``path``, ``file_paths``, ``paths``,
  ``destination``, ``target``, ``filename`` (...), also inside lists such as Kiro's
  ``operations: [{"mode": ..., "path": ...}]``, plus the files an ``apply_patch`` text names.
- MCP tools ``mcp__<server>__<tool>``: only when a word of the tool's name suggests writing (write,
  edit, create, append, move, copy, rename, put, save, upload, update, replace, insert, patch, push,
  delete, remove, modify, overwrite, set... and their ``-s`` forms; ``writeFile`` and ``write_file`` alike).
- read-only tools (``Read``, ``Grep``, ``Glob``, ``LS``...) and shells (``Bash``) are skipped here;
  ``shell_guard`` checks shell commands that write to secrets files (``write_reason`` below).
"""

from __future__ import annotations

import json
import re
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # no typing import at run time (a command hook starts in milliseconds)
    from typing import Any

_TEMPLATE_WORDS = frozenset({"example", "examples", "sample", "samples", "template", "templates", "tmpl", "tpl",
                             "dist", "default", "defaults"})
_TEMPLATE_SUFFIX = re.compile(r"\.(?:examples?|samples?|templates?|tmpl|tpl|dist|defaults?)$", re.IGNORECASE)

# Directories whose every file is sensitive (a template name does not exempt these).
_SECRET_DIRS = [
    (re.compile(r"(?:^|/)\.ssh(?:/|$)", re.IGNORECASE), "SSH configuration or keys"),
    (re.compile(r"(?:^|/)\.gnupg(?:/|$)", re.IGNORECASE), "a GnuPG keyring"),
    (re.compile(r"(?:^|/)\.aws/(?:credentials|config)$", re.IGNORECASE), "AWS credentials"),
    (re.compile(r"(?:^|/)\.docker/config\.json$", re.IGNORECASE), "Docker registry credentials"),
    (re.compile(r"(?:^|/)\.kube/config$", re.IGNORECASE), "Kubernetes credentials"),
]
# File names (a template name exempts these).
_SECRET_FILES = [
    (re.compile(r"(?:^|/)\.env(?:\.[^/]*)?$", re.IGNORECASE), "an environment file that holds secrets"),
    (re.compile(r"(?:^|/)\.envrc$", re.IGNORECASE), "a direnv file that holds secrets"),
    (re.compile(r"\.(?:pem|key|p12|pfx|jks|keystore|ppk)$", re.IGNORECASE), "a private key or certificate store"),
    (re.compile(r"(?:^|/)id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?$", re.IGNORECASE), "an SSH private key"),
    (re.compile(r"(?:^|/)(?:\.netrc|_netrc|\.pgpass|\.git-credentials|\.npmrc|\.pypirc)$", re.IGNORECASE),
     "a credentials file"),
]

_PATH_KEYS = frozenset({"file_path", "filepath", "filePath", "notebook_path", "path", "file", "filename", "fileName",
                        "file_name", "destination", "dest", "target", "target_path", "targetPath", "new_path",
                        "newPath", "destination_path", "destinationPath", "absolute_path", "file_paths", "paths",
                        "files"})
_READ_ONLY_TOOLS = frozenset({"Read", "Glob", "Grep", "LS", "WebFetch", "WebSearch", "TodoWrite", "Task", "Agent",
                              "fs_read", "read_file", "read_many_files", "glob", "grep", "grep_search",
                              "search_file_content", "list_directory", "web_fetch", "web_search", "google_web_search"})
_SHELL_TOOLS = frozenset({"Bash", "execute_bash", "execute_cmd", "run_shell_command", "exec_command", "shell",
                          "shell_command", "local_shell"})
_WRITE_WORD = re.compile(r"(?:write|writes|writing|written|edit|edits|editing|create|creates|append|appends|move|moves"
                         r"|copy|copies|rename|renames|put|puts|save|saves|upload|uploads|update|updates|upsert"
                         r"|replace|replaces|insert|inserts|patch|patches|push|delete|deletes|remove|removes"
                         r"|modify|modifies|overwrite|overwrites|set|mv|cp|rm|mkdir|touch|store)")
_PATCH_FILES = re.compile(r"^\*\*\* (?:(?:Add|Update|Delete) File|Move to): *(.+?) *$", re.MULTILINE)


def _is_template(base: str) -> bool:
    if _TEMPLATE_SUFFIX.search(base):
        return True
    parts = base.lower().split(".")
    return base.startswith(".") and parts[1] in ("env", "envrc") and any(p in _TEMPLATE_WORDS for p in parts[2:])


def secret_kind(path: str) -> str | None:
    """What kind of secrets file ``path`` is (``"an environment file that holds secrets"``...), or None.

    ``path`` may be absolute, relative, ``~/...`` or hold shell variables (``$HOME/.ssh/x``); ``\\`` counts
    as ``/``. Case-insensitive. Never raises for a string."""
    path = path.replace("\\", "/").strip()
    if not path:
        return None
    for pattern, kind in _SECRET_DIRS:
        if pattern.search(path):
            return kind
    base = path.rstrip("/").rsplit("/", 1)[-1]
    if _is_template(base):
        return None
    for pattern, kind in _SECRET_FILES:
        if pattern.search(path.rstrip("/")):
            return kind
    return None


def write_reason(path: str, what: str | None = None) -> str | None:
    """The reason a write to ``path`` is denied, or None when ``path`` is not a secrets file.

    ``what``: how the write happens, for the message (e.g. the shell command); default "Writing to PATH"."""
    kind = secret_kind(path)
    if kind is None:
        return None
    head = f"{what} writes to {path}" if what else f"Writing to {path}"
    return (f"{head}, which is {kind}; hookgate's default policy blocks writes to secrets files. Secrets must not "
            "pass through the agent: ask the user to edit this file.")


def _paths(value: Any, key: str | None, depth: int, out: list[str]) -> None:
    """Collect strings stored under path-like keys in ``value`` (dicts and lists, a few levels deep)."""
    if depth > 4 or len(out) > 1000:
        return
    if isinstance(value, str):
        if key in _PATH_KEYS:
            out.append(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            _paths(v, k if isinstance(k, str) else None, depth + 1, out)
    elif isinstance(value, list):
        for item in value:
            _paths(item, key, depth + 1, out)


def _writes_by_name(tool: str) -> bool:
    words = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", tool)
    return any(_WRITE_WORD.fullmatch(w.lower()) for w in words)


def tool_paths(tool_name: str | None, tool_input: dict[str, Any]) -> list[str]:
    """The paths a tool call writes to, as far as ``tool_input`` tells (see the module docstring)."""
    if tool_name in _READ_ONLY_TOOLS or tool_name in _SHELL_TOOLS:
        return []
    if isinstance(tool_name, str) and tool_name.startswith("mcp__"):
        tool = tool_name.split("__", 2)[-1]
        if not _writes_by_name(tool):
            return []
    paths: list[str] = []
    _paths(tool_input, None, 0, paths)
    patch = tool_input.get("command") if tool_name in ("apply_patch", "Edit", "Write") else None
    if isinstance(patch, str) and "*** Begin Patch" in patch:
        paths += _PATCH_FILES.findall(patch)
    return paths


def answer(event: dict[str, Any], reason: str) -> dict[str, Any]:
    """A denial of ``reason`` in Claude Code's hook output shape for the event's ``hook_event_name``."""
    name = event.get("hook_event_name") or "PreToolUse"
    if name == "PermissionRequest":
        return {"hookSpecificOutput": {"hookEventName": name, "decision": {"behavior": "deny", "message": reason}}}
    if name in ("PreToolUse", "preToolUse", "BeforeTool"):
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                       "permissionDecisionReason": reason}}
    return {"decision": "block", "reason": reason}


def check_event(event: dict[str, Any]) -> dict[str, Any] | None:
    """Claude Code hook output denying a write to a secrets file, or None. Never raises.

    ``event``: a PreToolUse event (``tool_name``, ``tool_input``); anything else is let through."""
    try:
        if not isinstance(event, dict):
            return None
        tool_input = event.get("tool_input")
        if not isinstance(tool_input, dict):
            return None
        tool_name = event.get("tool_name")
        for path in tool_paths(tool_name if isinstance(tool_name, str) else None, tool_input):
            reason = write_reason(path)
            if reason:
                return answer(event, reason)
        return None
    except Exception:  # a bug here must not turn into a handler failure (this guard is failClosed)
        return None


def main() -> int:
    """Command-hook entry point: event on stdin, answer (or nothing) on stdout. Exit 1 on unreadable input."""
    try:
        event = json.load(sys.stdin)
    except ValueError as exc:
        print(f"secrets_guard: the hook event is not JSON ({exc})", file=sys.stderr)
        return 1
    out = check_event(event)
    if out:
        json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
