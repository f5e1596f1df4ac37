"""hookgate's policy validator: an MCP server (stdio) whose tools answer hook events in Claude Code's format.

Tools (each answers ``{}`` to let the call through, or Claude Code hook output with a reason: on PreToolUse
``hookSpecificOutput.permissionDecision: deny``; on PermissionRequest ``decision.behavior: deny``; on other
events ``decision: block``). Answers are structured content (and the same JSON as text, for hosts that read
only text):

- ``check_command(command, cwd, project_dir, hook_event_name)``: a Bash command that is destructive (``rm -rf``,
  force-push, ``git reset --hard``, ``git clean -f``, ``dd`` onto a device, ``mkfs``, a fork bomb, also inside
  ``sh -c``, ``$(...)`` and after ``sudo``/``env``/``xargs``...), pipes a download into a shell or interpreter
  (``curl ... | sh``), or writes outside the project (redirections, ``tee``, ``cp``/``mv``/``ln``/``install``
  destinations, ``touch``/``mkdir``/``rm``/``chmod``/``truncate`` targets, ``sed -i``, ``dd of=``) -- the
  temp dir and ``/dev/null`` excepted. The destructive and download rules are those of hookgate's default
  guard (``configs/guards/shell_guard.py``).
- ``scan_secrets(tool_input, tool_name, hook_event_name)``: the text a Write, Edit, MultiEdit or NotebookEdit
  would put in a file holds a secret: a private key block, a cloud or SaaS API key or token (AWS, GitHub,
  GitLab, Slack, Anthropic, OpenAI, Google, Stripe, npm, PyPI), a JWT, a password in a URL, or a
  ``password = "..."``-style assignment of a random-looking value. Documentation placeholders
  (``AKIAIOSFODNN7EXAMPLE``, ``your-api-key``, ``${TOKEN}``, ``xxxx``) pass. A reason never repeats the secret.

Run it as ``python -m configs.validators.policy`` or ``python path/to/policy.py``; wire it up as in
``configs/examples/mcp-policy.yaml``. The rules are plain functions (``command_problem``, ``secret_problem``)
that tests call directly.
"""

from __future__ import annotations

import math
import os
import re
import shlex
import sys
from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict

if __package__ in (None, ""):  # run by path: make ``configs`` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from configs.guards.shell_guard import check_command as destructive_problem

# ---------------------------------------------------------------------------- answers in Claude Code's schema


class PermissionDecision(TypedDict):
    behavior: Literal["allow", "deny"]
    message: NotRequired[str]


class HookSpecificOutput(TypedDict):
    hookEventName: str
    permissionDecision: NotRequired[Literal["allow", "deny", "ask", "defer"]]
    permissionDecisionReason: NotRequired[str]
    decision: NotRequired[PermissionDecision]


class HookAnswer(TypedDict, total=False):
    """Claude Code hook output (the subset this validator uses); ``{}`` means no objection."""

    hookSpecificOutput: HookSpecificOutput
    decision: Literal["block"]
    reason: str


def answer(event: str, reason: str | None) -> HookAnswer:
    """No objection (``{}``), or a denial of ``reason`` in the shape ``event`` expects."""
    if reason is None:
        return {}
    if event == "PreToolUse":
        return {
            "hookSpecificOutput": {
                "hookEventName": event,
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }
    if event == "PermissionRequest":
        return {"hookSpecificOutput": {"hookEventName": event, "decision": {"behavior": "deny", "message": reason}}}
    return {"decision": "block", "reason": reason}


# ---------------------------------------------------------------------------- commands

TEMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/private/tmp", "/private/var/folders")
DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero", "/dev/random", "/dev/urandom")
WRITERS_ALL = {"touch", "mkdir", "rm", "rmdir", "truncate", "chmod", "chown", "chgrp", "unlink", "shred"}
WRITERS_LAST = {"cp", "mv", "ln", "install", "rsync"}
WRAPPERS = {"sudo", "env", "nohup", "time", "nice", "command", "exec", "stdbuf", "doas", "timeout", "ionice"}
SHELLS = {"sh", "bash", "zsh", "dash", "ksh"}
_PUNCTUATION = set(";&|()<>")


def _words(command: str) -> list[list[str]]:
    """Simple commands as word lists. A redirection stays in its command as an operator word (``>``,
    ``>>``, ``&>``, ``>&``, ``<``...) followed by its target; ``;``, ``&&``, ``|``... split commands."""
    lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    out: list[list[str]] = [[]]
    for token in lexer:
        if token and set(token) <= _PUNCTUATION and not set(token) & set("<>"):
            out.append([])
        else:
            out[-1].append(token)
    return [w for w in out if w]


def _outside(path: str, cwd: str, project_dir: str) -> str | None:
    """The absolute path when ``path`` (as the shell would see it) lies outside the project, else None."""
    if not path or any(c in path for c in "$`*?[") or path.startswith("&"):
        return None  # known only when the shell runs it
    full = os.path.normpath(os.path.join(cwd or project_dir, os.path.expanduser(path)))
    if full in DEVICES or full.startswith("/dev/fd/"):
        return None
    tmp = os.environ.get("TMPDIR", "").rstrip("/")
    for base in (project_dir.rstrip("/") or "/", *TEMP_DIRS, *([tmp] if tmp else [])):
        if full == base or full.startswith(base.rstrip("/") + "/"):
            return None
    return full


def _targets(words: list[str]) -> list[str]:
    """Paths a simple command writes to (redirections included)."""
    targets: list[str] = []
    plain: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word and set(word) <= _PUNCTUATION:  # a redirection operator and its target
            target = words[i + 1] if i + 1 < len(words) else ""
            fd_copy = word.endswith("&") and (target.isdigit() or target == "-")
            if ">" in word and target and not fd_copy:
                targets.append(target)
            i += 2
            continue
        plain.append(word)
        i += 1
    while plain and (re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", plain[0]) or plain[0] in WRAPPERS):
        head = plain.pop(0)
        while plain and (plain[0].startswith("-") or (head == "timeout" and re.fullmatch(r"[\d.]+[smhd]?", plain[0]))):
            plain.pop(0)
    if not plain:
        return targets
    name, args = os.path.basename(plain[0]), plain[1:]
    operands = [a for a in args if not a.startswith("-")]
    if name in WRITERS_ALL:
        skip_first = name in ("chmod", "chown", "chgrp")  # the mode / owner
        targets.extend(operands[1:] if skip_first else operands)
    elif name in WRITERS_LAST:
        if "-t" in args and args.index("-t") + 1 < len(args):
            targets.append(args[args.index("-t") + 1])
        elif len(operands) >= 2:
            targets.append(operands[-1])
    elif name == "tee":
        targets.extend(operands)
    elif name == "dd":
        targets.extend(a[3:] for a in args if a.startswith("of="))
    elif name in ("sed", "perl") and any(a.startswith("-i") or a == "--in-place" for a in args):
        has_script_flag = any(a in ("-e", "--expression", "-f") for a in args)
        targets.extend(operands if has_script_flag or name == "perl" else operands[1:])
    return targets


def command_problem(command: str, cwd: str = "", project_dir: str = "") -> str | None:
    """Why ``command`` must not run, or None. ``cwd``: where it runs; ``project_dir``: the folder the agent
    may write in (default ``cwd``; with neither, writes are not checked)."""
    try:
        reason = destructive_problem(command)
        if reason:
            return reason.replace("hookgate's default policy", "hookgate's policy validator")
        words = _words(command)
    except ValueError as exc:
        return f"The command cannot be parsed ({exc}), so hookgate's policy validator cannot check it."
    project_dir = project_dir or cwd
    if not project_dir:
        return None
    for simple in words:
        if os.path.basename(simple[0]) in SHELLS and "-c" in simple[1:-1]:
            inner = command_problem(simple[simple.index("-c", 1) + 1], cwd, project_dir)
            if inner:
                return inner
        for target in _targets(simple):
            full = _outside(target, cwd, project_dir)
            if full:
                return (
                    f"`{' '.join(simple)[:200]}` writes to {full}, outside the project ({project_dir}). "
                    "hookgate's policy validator lets the agent write only inside the project and the temp "
                    "dir; ask the user to make this change."
                )
    return None


# ---------------------------------------------------------------------------- secrets

SECRET_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("a private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("an AWS access key id", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b")),
    (
        "an AWS secret access key",
        re.compile(r"(?i)aws_?secret_?access_?key\W{0,5}[:=]\s*['\"]?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"),
    ),
    ("a GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{40,255})\b")),
    ("a GitLab token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}\b")),
    ("a Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b")),
    ("a Slack webhook URL", re.compile(r"https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,}")),
    ("an Anthropic API key", re.compile(r"\bsk-ant-[a-z]{3,6}\d{2}-[A-Za-z0-9_-]{20,}")),
    ("an OpenAI API key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}T3BlbkFJ[A-Za-z0-9_-]{16,}")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])")),
    ("a Stripe secret key", re.compile(r"\b(?:sk|rk)_live_[0-9a-zA-Z]{24,}\b")),
    ("an npm token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    ("a PyPI token", re.compile(r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}")),
    ("a JSON Web Token", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")),
    ("a password in a URL", re.compile(r"\b[a-z][a-z0-9+.-]*://[^/\s:@'\"]+:([^/\s:@'\"]{6,})@[^\s'\"]+")),
]
ASSIGNMENT = re.compile(
    r"(?i)\b([a-z0-9_.-]*(?:api[_-]?key|secret|token|passw(?:or)?d|passwd|credential|private[_-]?key))"
    r"[\"']?\s*(?::=|=>|[:=])\s*[\"']([^\"'\s]{12,})[\"']"
)
PLACEHOLDER = re.compile(
    r"(?i)example|sample|dummy|placeholder|changeme|change[_-]me|your[_-]|redacted|"
    r"x{4,}|\*{3,}|<[^>]*>|\$\{|\{\{|%\(|test|fake|insert|replace|todo"
)
CONTENT_FIELDS = ("content", "new_string", "new_source")


def _entropy(text: str) -> float:
    counts = {c: text.count(c) for c in set(text)}
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def _redact(value: str) -> str:
    return f"{value[:4]}... ({len(value)} characters)"


def _texts(tool_input: dict[str, Any]) -> list[str]:
    texts = [tool_input[k] for k in CONTENT_FIELDS if isinstance(tool_input.get(k), str)]
    for edit in tool_input.get("edits") or []:
        if isinstance(edit, dict) and isinstance(edit.get("new_string"), str):
            texts.append(edit["new_string"])
    return texts


def find_secret(text: str) -> tuple[str, str, int] | None:
    """``(kind, redacted value, line number)`` of the first secret in ``text``, or None."""
    for kind, pattern in SECRET_PATTERNS:
        for match in pattern.finditer(text):
            value = match.group(match.lastindex or 0)
            if PLACEHOLDER.search(value) or (kind == "a password in a URL" and value.startswith("$")):
                continue
            shown = value if kind == "a private key" else _redact(value)  # the header line is not secret
            return kind, shown, text.count("\n", 0, match.start()) + 1
    for match in ASSIGNMENT.finditer(text):
        value = match.group(2)
        if PLACEHOLDER.search(value) or _entropy(value) < 3.5 or value.isalpha():
            continue
        return f"a hard-coded {match.group(1)}", _redact(value), text.count("\n", 0, match.start()) + 1
    return None


def secret_problem(tool_name: str, tool_input: dict[str, Any]) -> str | None:
    """Why writing ``tool_input`` (Write, Edit, MultiEdit, NotebookEdit) must not happen, or None."""
    path = next(
        (tool_input[k] for k in ("file_path", "notebook_path", "path") if isinstance(tool_input.get(k), str)),
        "the file",
    )
    for text in _texts(tool_input):
        found = find_secret(text)
        if found:
            kind, shown, line = found
            return (
                f"The {tool_name or 'write'} to {path} puts {kind} ({shown}) on line {line} of the new text. "
                "Secrets must not be written into files by the agent: read it from an environment variable "
                "or a secrets manager instead, or ask the user to add it."
            )
    return None


# ---------------------------------------------------------------------------- the MCP server


def build_server() -> Any:
    """The validator as an ``MCPServer`` (tools ``check_command`` and ``scan_secrets``)."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer(
        "hookgate-policy",
        instructions="Policy checks for coding-agent hook events. Each tool "
        "answers in Claude Code's hook output format: {} allows, a deny/block carries the reason.",
        log_level="WARNING",
    )

    # async tools: the checks take microseconds, so they run on the event loop instead of a worker thread each
    @server.tool()
    async def check_command(
        command: str, cwd: str = "", project_dir: str = "", hook_event_name: str = "PreToolUse"
    ) -> HookAnswer:
        """Deny a shell command that is destructive, pipes a download into a shell, or writes outside the
        project. cwd: where it runs; project_dir: the folder writes must stay in (default: cwd)."""
        return answer(hook_event_name, command_problem(command, cwd, project_dir))

    @server.tool()
    async def scan_secrets(
        tool_input: dict[str, Any], tool_name: str = "", hook_event_name: str = "PreToolUse"
    ) -> HookAnswer:
        """Deny a Write/Edit/MultiEdit/NotebookEdit whose new text holds an API key, token, private key or
        password. tool_input: the tool call's input object, as the hook event carries it."""
        return answer(hook_event_name, secret_problem(tool_name, tool_input))

    return server


def main() -> None:
    """Serve the validator over stdin/stdout (``configs.validators.stdio``: no worker-thread hop per message)."""
    import anyio

    from configs.validators.stdio import serve_stdio

    anyio.run(serve_stdio, build_server())


if __name__ == "__main__":
    main()
