"""e2e policy guard (PreToolUse, Bash): recursive ``rm`` is denied; a plain ``rm FILE...`` becomes a
move into ``<cwd>/.trash/`` (an ``updatedInput`` rewrite); anything else gets no answer.

Standard library only (runs as ``python -I -S``). A command it cannot parse makes it exit 1, and the
policy marks it ``failClosed``, so hookgate denies the call.
"""

from __future__ import annotations

import json
import os
import shlex
import sys

OPERATORS = set(";&|()")


def simple_commands(command: str) -> list[list[str]]:
    lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    commands: list[list[str]] = [[]]
    for token in lexer:
        if set(token) <= OPERATORS:
            commands.append([])
        else:
            commands[-1].append(token)
    return [c for c in commands if c]


def is_recursive(words: list[str]) -> bool:
    for word in words[1:]:
        if word == "--recursive" or (word.startswith("-") and not word.startswith("--") and set(word[1:]) & {"r", "R"}):
            return True
    return False


def main() -> int:
    event = json.load(sys.stdin)
    command = (event.get("tool_input") or {}).get("command") or ""
    commands = simple_commands(command)
    rms = [c for c in commands if os.path.basename(c[0]) == "rm"]
    for words in rms:
        if is_recursive(words):
            reason = (
                f"`{shlex.join(words)}` deletes a whole directory tree with no undo, so the team policy "
                "blocks it. Move what you want gone into .trash/ instead."
            )
            print(
                json.dumps(
                    {
                        "hookSpecificOutput": {
                            "hookEventName": "PreToolUse",
                            "permissionDecision": "deny",
                            "permissionDecisionReason": reason,
                        }
                    }
                )
            )
            return 0
    if len(commands) == 1 and rms and all(not w.startswith("-") for w in rms[0][1:]) and len(rms[0]) > 1:
        trash = os.path.join(event.get("cwd") or os.getcwd(), ".trash")
        safer = f"mkdir -p {shlex.quote(trash)} && mv -- {shlex.join(rms[0][1:])} {shlex.quote(trash)}/"
        print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": safer}}}))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ValueError as exc:  # unbalanced quotes and the like
        print(f"safe_rm: cannot parse the command ({exc})", file=sys.stderr)
        sys.exit(1)
