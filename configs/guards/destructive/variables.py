"""Shell variables a command sets and then runs: ``x='rm -rf ~'; eval "$x"``, ``c=rm; $c -rf ~``, ``export
CMD='git push -f'; bash -c "$CMD"``.

``remember(words, variables)`` keeps the ``NAME=value`` words of a command that runs nothing but its
assignments (and those given to ``export``, ``declare``, ``local``, ``readonly``, ``typeset``): every value a
name is given in the command's text, since a branch may set one or the other. ``substituted(words,
variables)`` gives the command line back as shell text with the known variables in place, one text per
combination of their values (at most ``MAX_TEXTS``), or ``[]`` when no word uses one; a text longer than
``MAX_TEXT`` raises ``Unanalysable``. A quoted word stays
one word (in double quotes: the other expansions in it stay expansions); an unquoted one is split into
words as the shell splits it (a word with a glob character still globs), or, when it holds other
expansions too, pasted in as written and read again, operators included (strict: the shell would only
split it). The command line itself is checked as before too (a variable may also come from the
environment, when the branch that sets it does not run).

The positional parameters a ``set -- ARGS`` gives are kept the same way (``set_positionals``) and put in place of
``$1``, ``$@``, ``$*`` (``with_positionals``: ``set -- rm -rf ~; "$@"``).

Followed: ``$NAME`` and ``${NAME}`` outside single quotes, with string values written in the command.
Not followed: arrays, ``+=``, ``${NAME/a/b}`` and the other expansion operators, and values that come from
outside the command's text (the environment, ``read``, a command's output): those stay unknown, as before.
"""

from __future__ import annotations

import re

from .lexer import Unanalysable, Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_VALUES = 4
"""Values kept per name (the last ones given)."""
MAX_TEXTS = 16
"""Combinations of values checked for one command line."""
MAX_TEXT = 100_000
"""Longest command line (characters) the variables may expand into: a longer one is unanalysable (denied),
since each ``A=$A$A`` doubles what ``A`` holds."""

_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)\Z", re.DOTALL)
_GLOB = re.compile(r"[*?\[]")
_REF = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def remember(words: list[Word], variables: dict[str, list[str]]) -> None:
    """Record the plain ``NAME=value`` words among ``words`` in ``variables`` (name -> values, oldest first)."""
    for word in words:
        match = _ASSIGN.match(word.text)
        if match is None:
            continue
        name, value = match.groups()
        if not word.literal and any((m.group(1) or m.group(2)) == name for m in _REF.finditer(value)):
            continue  # x="$x:more": the old value, which may be anything
        values = variables.setdefault(name, [])
        if value in values:
            values.remove(value)
        values.append(value)
        del values[:-MAX_VALUES]


def substituted(words: list[Word], variables: dict[str, list[str]]) -> list[str]:
    """The command line ``words`` as shell text with the variables of ``variables`` in place: one text per
    combination of their values, at most ``MAX_TEXTS`` (the latest values first); ``[]`` when no word
    outside single quotes uses a known variable."""
    used = sorted(
        {
            name
            for w in words
            if not w.literal
            for m in _REF.finditer(w.text)
            if (name := m.group(1) or m.group(2)) in variables
        }
    )
    if not used:
        return []
    # each combination as a chain (name, value, rest): extending one costs the same however many names
    # it holds (a copied dict per name made 40,000 names take seconds)
    chains: list[Any] = [None]  # (name, value, rest) or None
    for name in used:
        chains = [(name, v, c) for c in chains for v in reversed(variables[name])][:MAX_TEXTS]
    import shlex

    texts = []
    for chain in chains:
        values: dict[str, str] = {}
        while chain is not None:
            values[chain[0]] = chain[1]
            chain = chain[2]

        def put(m: re.Match[str], values: dict[str, str] = values) -> str:
            return values.get(m.group(1) or m.group(2), m.group(0))

        parts = []
        for w in words:
            if w.literal:
                parts.append(shlex.quote(w.text))
                continue
            text = _REF.sub(put, w.text)
            if w.quoted:
                parts.append(_double_quoted(text))
            elif "$" in text or "`" in text:
                parts.append(text)  # other expansions in it: read again as written
            else:  # split into words as the shell does; a glob in one still globs
                parts.extend(part if _GLOB.search(part) else shlex.quote(part) for part in text.split())
        text = " ".join(parts)
        if len(text) > MAX_TEXT:
            raise Unanalysable(f"expands its variables into more than {MAX_TEXT:,} characters, too many")
        texts.append(text)
    return texts


def set_positionals(args: list[str], positionals: list[list[str]]) -> None:
    """Record what ``set [OPTIONS] [--] ARGS`` makes the positional parameters (the last ``MAX_VALUES`` sets
    kept: a branch may run either); ``"$@"`` among ARGS stands for the ones before (``set -- "$@" x``)."""
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--", "-"):
            i += 1
            break
        if a[:1] not in "-+" or len(a) < 2:
            break
        i += 1 + a[1:].count("o")  # set -eo pipefail: -o takes a value
    if i >= len(args) and "--" not in args[:i] and "-" not in args[:i]:
        return  # set -e, set -o pipefail: options only
    before = positionals[-1] if positionals else []
    values = [v for a in args[i:] for v in (before if a in ("$@", "${@}", "$*", "${*}") else [a])]
    positionals.append(values)
    del positionals[:-MAX_VALUES]


def shift_positionals(args: list[str], positionals: list[list[str]]) -> None:
    """``shift [N]``: each recorded set of positional parameters also without its first N."""
    n = int(args[0]) if args and args[0].isdigit() else 1
    positionals.extend([values[n:] for values in positionals if n <= len(values)])
    del positionals[:-MAX_VALUES]


def with_positionals(words: list[Word], positionals: list[list[str]]) -> list[str]:
    """The command line ``words`` as shell text with ``$1``, ``$@``, ``$*``... given each recorded set of
    positional parameters (``set -- rm -rf ~; "$@"``); ``[]`` when it uses none."""
    import shlex

    from .expand import bind_positionals

    script = " ".join(
        shlex.quote(w.text) if w.literal else _double_quoted(w.text) if w.quoted else w.text for w in words
    )
    texts = []
    for values in reversed(positionals):
        bound = bind_positionals(script, ["sh", *values])
        if bound is None:
            return []
        texts.append(bound)
    return texts


def _double_quoted(text: str) -> str:
    """``text`` as one double-quoted shell word (``$`` kept: its expansions are read again)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`") + '"'
