"""Bash ``if`` rules: split a shell command into the simple commands it runs and match each one.

Semantics follow Claude Code's permission rules (permissions reference, hooks reference §2.3):
compound commands are split on ``&&``, ``||``, ``;``, ``|``, ``|&``, ``&`` and newlines; commands
inside ``$()``, backticks and process substitutions are checked too; leading ``VAR=value``
assignments are stripped. A pattern naming more than the command (``git push *``) matches anyway
when the command holds ``$()``, backticks or ``$VAR``, and a command the parser cannot read fails
open: the rule matches, so the hook runs. Parsing uses ``bashlex`` (imported only when a command
could possibly match, see ``_cannot_match``). The default policy's shell guard has its own lexer
(``configs/guards/destructive/lexer.py``): a rule match may fail open, a guard may not, and it must run with
the standard library alone (``python -I -S``) and keep every substitution bash would run.
"""

from __future__ import annotations

import re
from functools import lru_cache

TYPE_CHECKING = False  # importing typing costs a hook process ~2 ms
if TYPE_CHECKING:
    from typing import Any

_DYNAMIC = re.compile(r"\$\(|`|\$[A-Za-z_{]")
_OPAQUE = re.compile(r"[\\'\"$`*?\[{~]")
_STRUCTURE = re.compile(r"[;&|()<>$`\n'\"\\{}#]")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


@lru_cache(maxsize=4096)
def _compile(pattern: str) -> re.Pattern[str]:
    """Permission-rule wildcard: ``*`` is any text; a trailing `` *`` or ``:*`` is a word boundary."""
    stripped = pattern.strip()
    for suffix in (" *", ":*"):
        if stripped.endswith(suffix):
            head = stripped[: -len(suffix)]
            body = ".*".join(re.escape(p) for p in head.split("*"))
            return re.compile(f"{body}(?:[ \\t].*)?", re.S)
    return re.compile(".*".join(re.escape(p) for p in stripped.split("*")), re.S)


@lru_cache(maxsize=4096)
def _first_word(pattern: str) -> str:
    return re.split(r"[\s*:]", pattern.strip(), maxsplit=1)[0]


def _cannot_match(pattern: str, command: str) -> bool:
    """Cheap, sound pre-check: a literal command name absent from a plain command cannot match."""
    word = _first_word(pattern)
    return bool(word) and word not in command and not _OPAQUE.search(command)


def command_matches(pattern: str, command: str) -> bool:
    """True when ``pattern`` (e.g. ``rm *``) matches any simple command inside ``command``."""
    if _cannot_match(pattern, command):
        return False
    compiled = _compile(pattern)
    if " " in pattern.strip().rstrip("*").strip() and _DYNAMIC.search(command):
        return True  # the arguments are not knowable statically: the hook runs
    commands = split_commands(command)
    if commands is None:
        return True  # unparseable: fail open, the hook runs
    return any(compiled.fullmatch(c) for c in commands)


def _simple(command: str) -> list[str] | None:
    """Fast path: a command with no quoting, expansion or operator is one simple command."""
    if _STRUCTURE.search(command):
        return None
    words = command.split()
    while words and _ASSIGNMENT.match(words[0]):
        words.pop(0)
    return [" ".join(words)] if words else []


def split_commands(command: str) -> list[str] | None:
    """The simple commands in ``command`` (assignments stripped), or None when it cannot be parsed."""
    simple = _simple(command)
    if simple is not None:
        return simple
    import bashlex

    try:
        trees = bashlex.parse(command)
    except Exception:  # bashlex raises its own ParsingError and, on odd input, plain errors
        return None
    found: list[str] = []
    for tree in trees:
        _walk(tree, command, found)
    return found


def _walk(node: Any, source: str, found: list[str]) -> None:
    kind = getattr(node, "kind", None)
    if kind == "command":
        words = [p for p in node.parts if p.kind == "word"]
        if words:
            start, end = words[0].pos[0], node.parts[-1].pos[1]
            found.append(" ".join(source[start:end].split()))
    for child in _children(node):
        _walk(child, source, found)


def _children(node: Any) -> list[Any]:
    out: list[Any] = []
    for attr in ("parts", "list"):
        out.extend(getattr(node, attr, None) or [])
    for attr in ("command", "output"):  # a substitution, a redirect's target
        child = getattr(node, attr, None)
        if child is not None and hasattr(child, "kind"):
            out.append(child)
    return out
