"""Recognising a command hook that runs ``hookgate`` itself (``hookgate run ...``, ``python -m gateway run``,
with ``VAR=value`` prefixes), and the words it passes to hookgate. ``hookgate validate`` parses those words with
hookgate's own argparse parser (``gateway.cli.validate.hookgate_usage``), so it names a typo in an installed
hook command; ``handlers.command`` warns about a policy hook that runs ``hookgate run``
again."""

from __future__ import annotations

import os
import shlex
from typing import Any

_OPERATOR_CHARS = frozenset("();<>|&")


def hookgate_arguments(options: dict[str, Any]) -> list[str] | None:
    """The arguments a command handler's ``options`` (``command``, optional exec-form ``args``) pass to
    hookgate, or None when it does not run hookgate (or its shell words cannot be read: an unclosed quote).

    The shell form is split with ``shlex`` (POSIX rules, shell operators as their own tokens) and read up
    to the first operator (``;``, ``&&``, ``||``, ``|``, a redirection), as the shell runs it."""
    command = options.get("command")
    if not isinstance(command, str):
        return None
    args = options.get("args")
    if isinstance(args, list):
        words = [command, *map(str, args)]
    else:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            tokens = list(lexer)
        except ValueError:
            return None
        words = []
        for token in tokens:
            if token and set(token) <= _OPERATOR_CHARS:
                if token[0] in "<>" and words and words[-1].isdigit():
                    words.pop()  # `2>/dev/null`: the descriptor belongs to the redirection
                break
            words.append(token)
    while words and "=" in words[0] and not words[0].startswith(("=", "/", ".")):
        words = words[1:]  # VAR=value prefixes
    if words and os.path.basename(words[0]) == "hookgate":
        return words[1:]
    if len(words) >= 3 and os.path.basename(words[0]).startswith("python") and words[1:3] == ["-m", "gateway"]:
        return words[3:]
    return None
