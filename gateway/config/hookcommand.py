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
    See ``hookgate_invocation``."""
    found = hookgate_invocation(options)
    return None if found is None else found[1]


def hookgate_invocation(options: dict[str, Any]) -> tuple[dict[str, str], list[str]] | None:
    """``(environment assignments, arguments)`` of the hookgate run a command handler's ``options`` start, or
    None when it starts none (or its shell words cannot be read: an unclosed quote).

    The shell form is split with ``shlex`` (POSIX rules, shell operators as their own tokens) into the
    commands between ``;``, ``&&``, ``||`` and ``&`` (redirections dropped; a pipeline's first command is
    read), and the first that runs hookgate counts: after ``VAR=value`` prefixes and the wrappers ``env``
    (its assignments too), ``exec``, ``command``, ``nohup``, ``nice [-n N]`` and ``time``, either
    ``hookgate ...``, ``python -m gateway ...``, or a shell's ``-c 'program'`` read the same way."""
    command = options.get("command")
    if not isinstance(command, str):
        return None
    args = options.get("args")
    if isinstance(args, list):
        return _invocation([command, *map(str, args)], 0)
    return _in_text(command, 0)


_SEPARATORS = frozenset({";", "&&", "||", "&"})
_WRAPPERS = frozenset({"exec", "command", "nohup", "time"})
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh"})


def _in_text(command: str, depth: int) -> tuple[dict[str, str], list[str]] | None:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        return None
    segment: list[str] = []
    skip_to_separator = False
    for token in [*tokens, ";"]:
        if token and set(token) <= _OPERATOR_CHARS:
            if token in _SEPARATORS:
                found = _invocation(segment, depth)
                if found is not None:
                    return found
                segment, skip_to_separator = [], False
            elif token[0] in "<>":
                if segment and segment[-1].isdigit():
                    segment.pop()  # `2>/dev/null`: the descriptor belongs to the redirection
                segment.append("\0redirect")  # its target is dropped next
            else:  # a pipe: the rest of the pipeline is another program
                skip_to_separator = True
            continue
        if skip_to_separator:
            continue
        if segment and segment[-1] == "\0redirect":
            segment.pop()
            continue
        segment.append(token)
    return None


def _invocation(words: list[str], depth: int) -> tuple[dict[str, str], list[str]] | None:
    env: dict[str, str] = {}
    words = [w for w in words if w != "\0redirect"]
    while words:
        first = words[0]
        if "=" in first and not first.startswith(("=", "/", ".", "-")):  # VAR=value
            name, _, value = first.partition("=")
            env[name] = value
            words = words[1:]
        elif first in _WRAPPERS or first == "env":
            words = words[1:]
        elif first == "nice":
            words = words[3:] if words[1:2] == ["-n"] else words[1:]
        else:
            break
    if not words:
        return None
    name = os.path.basename(words[0])
    if name == "hookgate":
        return env, words[1:]
    if len(words) >= 3 and name.startswith("python") and words[1:3] == ["-m", "gateway"]:
        return env, words[3:]
    if name in _SHELLS and len(words) >= 3 and words[1] == "-c" and depth < 4:
        found = _in_text(words[2], depth + 1)
        if found is not None:
            return {**env, **found[0]}, found[1]
    return None
