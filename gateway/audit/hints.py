"""The redaction precheck's search for hints (``gateway.audit.redact``): whether a text holds any of a set of
literal substrings, as fast as a process that checks many texts can have it. Standard library only."""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing costs ~2 ms to import; `hookgate run` loads this module on every record
if TYPE_CHECKING:
    from typing import Any

PATTERN_AFTER = 64
"""Calls a ``HintSearch`` answers with one ``in`` test per hint before it builds ``hint_pattern``."""


def hint_pattern(hints: tuple[str, ...] | list[str]) -> str:
    """A regular expression that finds any of ``hints`` (literal strings): the hints that contain no
    other hint, as a trie (``(?:a(?:uth|ws)|b...)``), so ``re`` tests one character per branch at each
    position instead of every hint in turn. Raises ValueError on an empty hint."""
    if not all(hints):
        raise ValueError("hint_pattern: empty hint")
    unique = sorted(set(hints))
    words = [h for h in unique if not any(o != h and o in h for o in unique)]  # "auth" covers "auth="
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}  # no word of ``words`` is a prefix of another: this node has no other entry

    def branch(node: dict[str, Any]) -> str:
        alternatives = [re.escape(char) + branch(child) for char, child in sorted(node.items()) if char]
        if not alternatives:
            return ""
        return alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"

    return branch(trie)


class HintSearch:
    """``search(lower) -> bool``: whether ``lower`` (lower-cased text) contains one of ``hints``. The first
    ``PATTERN_AFTER`` calls test each hint with ``in`` (a one-shot ``hookgate run`` checks one record, and
    building the pattern costs about 4 ms); later calls search ``hint_pattern``, compiled once (2 to 2.5
    times as fast on a record's text: serve's audit writer checks every record)."""

    __slots__ = ("calls", "hints", "pattern")

    def __init__(self, hints: tuple[str, ...]) -> None:
        self.hints = hints
        self.calls = 0
        self.pattern: Any = None

    def __call__(self, lower: str) -> bool:
        pattern = self.pattern
        if pattern is not None:
            return pattern(lower) is not None
        self.calls += 1
        if self.calls > PATTERN_AFTER:
            self.pattern = re.compile(hint_pattern(self.hints)).search
        return any(map(lower.__contains__, self.hints))  # map: no Python frame per hint
