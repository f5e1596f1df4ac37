"""Minimal edits of a JSON document's text: change only the values that differ, keep everything else
byte for byte (the user's indentation, line breaks, one-line arrays, key order, trailing newline).

``edit_text(text, new)`` parses ``text`` into a tree of spans (objects, arrays, scalars; strings and
numbers are read with the standard library's own ``json`` scanner), then rewrites it so that it decodes
to ``new``: an object member whose value changed is rewritten in place (recursively), a removed member
is cut out with its comma, a new member is added at the end of its object in the file's indentation; an
array whose length is unchanged is edited element by element, one that only grew gets the new elements
appended, any other array is written anew. Only rewritten values take the file's detected indentation.
``edit_text`` returns None when ``text`` is not one JSON value (the caller then writes the whole file).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

_WS = " \t\n\r"


@dataclass
class _Node:
    """One JSON value of the parsed text: ``text[start:end]`` decodes to ``value``."""

    value: Any
    start: int
    end: int
    members: list[tuple[str, int, _Node]] = field(default_factory=list)  # (key, key_start, value) of an object
    items: list[_Node] = field(default_factory=list)  # an array's elements


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.scan = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # set in __init__, untyped

    def ws(self, i: int) -> int:
        while i < len(self.text) and self.text[i] in _WS:
            i += 1
        return i

    def value(self, i: int) -> _Node:
        i = self.ws(i)
        if i >= len(self.text):
            raise ValueError("unexpected end")
        char = self.text[i]
        if char == "{":
            return self.obj(i)
        if char == "[":
            return self.arr(i)
        try:
            value, end = self.scan(self.text, i)
        except StopIteration:
            raise ValueError(f"no value at {i}") from None
        return _Node(value, i, end)

    def obj(self, start: int) -> _Node:
        node = _Node({}, start, start)
        i = self.ws(start + 1)
        if self.text.startswith("}", i):
            node.end = i + 1
            return node
        while True:
            i = self.ws(i)
            if not self.text.startswith('"', i):
                raise ValueError(f"expected a key at {i}")
            key, after = json.decoder.scanstring(self.text, i + 1)  # type: ignore[attr-defined]
            colon = self.ws(after)
            if not self.text.startswith(":", colon):
                raise ValueError(f"expected ':' at {colon}")
            child = self.value(colon + 1)
            node.members.append((key, i, child))
            node.value[key] = child.value
            i = self.ws(child.end)
            if self.text.startswith(",", i):
                i += 1
                continue
            if self.text.startswith("}", i):
                node.end = i + 1
                return node
            raise ValueError(f"expected ',' or '}}' at {i}")

    def arr(self, start: int) -> _Node:
        node = _Node([], start, start)
        i = self.ws(start + 1)
        if self.text.startswith("]", i):
            node.end = i + 1
            return node
        while True:
            child = self.value(i)
            node.items.append(child)
            node.value.append(child.value)
            i = self.ws(child.end)
            if self.text.startswith(",", i):
                i += 1
                continue
            if self.text.startswith("]", i):
                node.end = i + 1
                return node
            raise ValueError(f"expected ',' or ']' at {i}")


def detect_indent(text: str | None) -> str:
    """The indentation unit of ``text`` (the first indented line's leading whitespace), default 2 spaces."""
    if text:
        for line in text.splitlines()[1:]:
            stripped = line.lstrip(" \t")
            if stripped and stripped != line:
                lead = line[: len(line) - len(stripped)]
                return "\t" if lead.startswith("\t") else " " * len(lead)
    return "  "


def dumps_like(value: Any, unit: str, depth: int = 0) -> str:
    """``value`` as JSON indented by ``unit``, its lines after the first shifted ``depth`` levels."""
    text = json.dumps(value, indent=unit, ensure_ascii=False)
    return text.replace("\n", "\n" + unit * depth) if depth else text


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


class _Editor:
    def __init__(self, text: str, unit: str) -> None:
        self.text = text
        self.unit = unit

    def emit(self, node: _Node, new: Any, depth: int) -> str:
        if _same(node.value, new):
            return self.text[node.start : node.end]
        if isinstance(node.value, dict) and isinstance(new, dict):
            return self.emit_object(node, new, depth)
        if isinstance(node.value, list) and isinstance(new, list):
            return self.emit_array(node, new, depth)
        return dumps_like(new, self.unit, depth)

    def _pad(self, depth: int) -> str:
        return "\n" + self.unit * depth

    def emit_object(self, node: _Node, new: dict[str, Any], depth: int) -> str:
        kept = [(i, m) for i, m in enumerate(node.members) if m[0] in new]
        if [m[0] for _, m in kept] != [k for k in new if k in node.value]:
            return dumps_like(new, self.unit, depth)  # keys were reordered: write the object anew
        added = [k for k in new if k not in node.value]
        if not kept and not added:
            return "{}"
        if not node.members:
            inner = [f"{json.dumps(k, ensure_ascii=False)}: {dumps_like(new[k], self.unit, depth + 1)}" for k in added]
            return "{" + self._pad(depth + 1) + ("," + self._pad(depth + 1)).join(inner) + self._pad(depth) + "}"
        members = node.members
        opening = self.text[node.start : members[0][1]]
        closing = self.text[members[-1][2].end : node.end]
        separators = [self.text[members[i][2].end : members[i + 1][1]] for i in range(len(members) - 1)]
        default = separators[-1] if separators else "," + self._pad(depth + 1)
        out = opening
        for n, (index, (key, key_start, child)) in enumerate(kept):
            if n:
                out += separators[index - 1]
            out += self.text[key_start : child.start] + self.emit(child, new[key], depth + 1)
        for n, key in enumerate(added):
            if n or kept:
                out += default
            out += f"{json.dumps(key, ensure_ascii=False)}: {dumps_like(new[key], self.unit, depth + 1)}"
        return out + closing

    def emit_array(self, node: _Node, new: list[Any], depth: int) -> str:
        old = node.items
        if old and new and len(new) < len(old):
            kept = _subsequence(old, new)
            if kept is not None:  # elements were only removed: cut them out, keep the rest as written
                return self.emit_removed(node, kept)
        grows = len(new) > len(old) and all(_same(o.value, n) for o, n in zip(old, new, strict=False))
        if not old or not new or not (len(new) == len(old) or grows):
            return dumps_like(new, self.unit, depth)
        opening = self.text[node.start : old[0].start]
        closing = self.text[old[-1].end : node.end]
        separators = [self.text[old[i].end : old[i + 1].start] for i in range(len(old) - 1)]
        default = separators[-1] if separators else "," + self._pad(depth + 1)
        out = opening
        for i, n in enumerate(new):
            if i:
                out += separators[i - 1] if i - 1 < len(separators) else default
            out += self.emit(old[i], n, depth + 1) if i < len(old) else dumps_like(n, self.unit, depth + 1)
        return out + closing

    def emit_removed(self, node: _Node, kept: list[int]) -> str:
        old = node.items
        separators = [self.text[old[i].end : old[i + 1].start] for i in range(len(old) - 1)]
        out = self.text[node.start : old[0].start]
        for n, index in enumerate(kept):
            if n:
                out += separators[index - 1]
            out += self.text[old[index].start : old[index].end]
        return out + self.text[old[-1].end : node.end]


def _subsequence(old: list[_Node], new: list[Any]) -> list[int] | None:
    """The indexes of ``old`` whose values, in order, are ``new`` (greedy), or None."""
    kept: list[int] = []
    i = 0
    for value in new:
        while i < len(old) and not _same(old[i].value, value):
            i += 1
        if i == len(old):
            return None
        kept.append(i)
        i += 1
    return kept


def edit_text(text: str, new: Any, unit: str | None = None) -> str | None:
    """``text`` edited so that it decodes to ``new`` (see module docstring), or None when ``text`` is not
    exactly one JSON value. ``unit``: indentation for rewritten values (default: detected)."""
    parser = _Parser(text)
    try:
        root = parser.value(0)
    except (ValueError, IndexError):
        return None
    if parser.ws(root.end) != len(text):
        return None
    editor = _Editor(text, unit if unit is not None else detect_indent(text))
    out = text[: root.start] + editor.emit(root, new, 0) + text[root.end :]
    try:
        if json.loads(out) != new:
            return None
    except ValueError:
        return None
    return out
