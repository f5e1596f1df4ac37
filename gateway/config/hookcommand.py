"""Recognising a command hook that runs ``hookgate`` itself (``hookgate run ...``, ``python -m gateway run``,
with ``VAR=value`` prefixes), and the words it passes to hookgate. The compiler parses those words with
hookgate's own argparse parser (``usage_problems``), so ``hookgate validate .claude/settings.json`` names a
typo in an installed hook command; ``handlers.command`` warns about a policy hook that runs ``hookgate run``
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


def usage_problems(options: dict[str, Any]) -> tuple[list[str], list[str]]:
    """``(problems, warnings)`` of a command handler that runs hookgate (``hookgate_arguments``), its words
    parsed by ``gateway.cli.parser``: a usage error (an unknown subcommand or option, a bad value: the hook
    exits 2, a block, on every call) and ``--help``/``--version`` (it answers no event: exit 0, every call
    passes) are problems; a subcommand other than ``run`` is a warning. Each line starts with ``command:``."""
    words = hookgate_arguments(options)
    if words is None:
        return [], []
    import contextlib
    import io

    from gateway.cli.parser import build_parser
    from gateway.errors import UsageError

    shown = " ".join(["hookgate", *words])
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            args = build_parser().parse_args(words)
    except UsageError as exc:
        return [f"command: {shown!r}: {exc}; this hook exits 2 on every call (a block)"], []
    except SystemExit:  # --help, --version: printed, exit 0
        return [
            f"command: {shown!r} prints a help or version text and answers no event (exit 0: it checks nothing)"
        ], []
    if args.command != "run":
        return [], [
            f"command: {shown!r} runs 'hookgate {args.command}', which answers no hook event "
            "(did you mean 'hookgate run'?)"
        ]
    return [], []
