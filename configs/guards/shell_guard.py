"""hookgate default policy: block destructive shell commands (a PreToolUse command hook).

Reads a Claude Code PreToolUse event on stdin and answers with a ``permissionDecision: deny`` and a
reason the user understands, or nothing. Standard library only (runs as ``python -I -S``).
Checks every simple command, including those inside ``sh -c '...'``, ``$(...)`` and after
``sudo``/``env``/``nohup``/``timeout``/``xargs`` wrappers. A command that cannot be parsed exits 1
(the config marks this guard ``failClosed``, so hookgate denies it).
"""

from __future__ import annotations

import json
import re
import shlex
import sys

CONTROL = {"&&", "||", ";", "|", "|&", "&", "(", ")", ";;", "\n"}
WRAPPERS = {"sudo", "env", "nohup", "time", "nice", "command", "builtin", "exec", "stdbuf", "doas", "xargs",
            "timeout", "ionice", "chronic"}
SHELLS = {"sh", "bash", "zsh", "dash", "ksh"}
FETCHERS = {"curl", "wget"}


def _segments(command: str) -> list[list[str]]:
    lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    segments: list[list[str]] = [[]]
    for token in lexer:
        if token in CONTROL or set(token) <= set(";&|()"):
            segments.append([token])  # keep the operator as a marker for pipe detection
            segments.append([])
        else:
            segments[-1].append(token)
    return [s for s in segments if s]


def _unwrap(words: list[str]) -> list[str]:
    while words and (re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]) or words[0] in WRAPPERS):
        head = words.pop(0)
        if head == "timeout" and words and re.fullmatch(r"[\d.]+[smhd]?", words[0]):
            words.pop(0)
        while words and words[0].startswith("-") and head in WRAPPERS:
            words.pop(0)
    return words


def _flags(words: list[str]) -> tuple[set[str], set[str]]:
    short, long = set(), set()
    for w in words[1:]:
        if w.startswith("--"):
            long.add(w.split("=", 1)[0])
        elif w.startswith("-") and len(w) > 1:
            short.update(w[1:])
    return short, long


def check_words(words: list[str]) -> str | None:
    words = _unwrap(list(words))
    if not words:
        return None
    name = words[0].rsplit("/", 1)[-1]
    short, long = _flags(words)
    if name == "rm" and (short & {"r", "R"} or "--recursive" in long) and ("f" in short or "--force" in long):
        targets = " ".join(w for w in words[1:] if not w.startswith("-")) or "(nothing)"
        return (f"`rm -rf {targets}` deletes a whole directory tree with no undo, so hookgate's default policy "
                "blocks it. Delete the specific files you need to, or ask the user to run it.")
    if name == "git" and len(words) > 1:
        sub = words[1]
        if sub == "push" and ("f" in short or "--force" in long or any(w.startswith("+") for w in words[2:])):
            return ("Force-pushing rewrites the remote branch's history and can destroy other people's commits, "
                    "so hookgate's default policy blocks it. Push normally, or ask the user to force-push.")
        if sub == "reset" and "--hard" in long:
            return ("`git reset --hard` throws away uncommitted work with no undo, so hookgate's default policy "
                    "blocks it. Use `git stash` to set changes aside, or ask the user.")
        if sub == "clean" and ("f" in short or "--force" in long) and not ("n" in short or "--dry-run" in long):
            return ("`git clean -f` permanently deletes untracked files, so hookgate's default policy blocks it. "
                    "Run `git clean -n` to see what it would delete, or ask the user.")
    if name == "dd" and any(w.startswith("of=/dev/") for w in words):
        return "`dd` onto a device overwrites a disk, so hookgate's default policy blocks it."
    if name.startswith("mkfs"):
        return "`mkfs` formats a file system and erases it, so hookgate's default policy blocks it."
    if name in SHELLS:
        for i, w in enumerate(words[1:-1], start=1):
            if w == "-c" or (w.startswith("-") and "c" in w[1:] and not w.startswith("--")):
                return check_command(words[i + 1])
    if name == "eval":
        return check_command(" ".join(words[1:]))
    return None


def check_command(command: str) -> str | None:
    """The reason ``command`` is destructive, or None. Raises ValueError when it cannot be parsed."""
    if re.search(r":\s*\(\s*\)\s*\{.*:\s*\|\s*:", command):
        return "This is a fork bomb; hookgate's default policy blocks it."
    for inner in re.findall(r"\$\(([^()]*)\)|`([^`]*)`", command):
        reason = check_command(inner[0] or inner[1])
        if reason:
            return reason
    segments = _segments(command)
    for i, words in enumerate(segments):
        reason = check_words(words)
        if reason:
            return reason
        if words[0].rsplit("/", 1)[-1] in FETCHERS and i + 2 < len(segments) and segments[i + 1] == ["|"]:
            target = _unwrap(list(segments[i + 2]))
            if target and target[0].rsplit("/", 1)[-1] in SHELLS | {"python", "python3", "perl", "ruby", "node"}:
                return ("Piping a downloaded script straight into a shell runs code nobody has read, so hookgate's "
                        "default policy blocks it. Download it, read it, then run it.")
    return None


def main() -> int:
    event = json.load(sys.stdin)
    command = (event.get("tool_input") or {}).get("command")
    if not isinstance(command, str):
        return 0
    try:
        reason = check_command(command)
    except ValueError as exc:
        print(f"cannot parse the command ({exc}); refusing it", file=sys.stderr)
        return 1
    if reason:
        json.dump({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                          "permissionDecisionReason": reason}}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
