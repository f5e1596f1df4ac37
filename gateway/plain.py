"""``plain(value)``: a copy of any Python value that JSON can always carry, keeping all it can, for what a
record stores (``gateway.audit.record.canonical``) and what the Python host API hands hooks on its own (a
tool's result: ``gateway.events.json_safe``). Standard library only; ``json`` and ``math`` are imported
when a value needs them."""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs ~2 ms to import; `hookgate run` may load this module on a record
if TYPE_CHECKING:
    from typing import Any

PLAIN_DEPTH = 100
"""Levels of lists and objects ``plain`` keeps; what is nested deeper becomes a placeholder."""
_REPR_CHARS = 200
"""Characters of a replaced key's or value's ``repr`` a placeholder keeps."""


def plain(value: Any) -> Any:
    """A copy of ``value`` that JSON can always carry (``canonical`` of it never fails), keeping all it
    can: dicts, lists (tuples as lists), strings, booleans, None and numbers as they are, any other
    object as its ``str`` (as ``canonical`` writes it), every key as text (``1`` as ``"1"``, ``True``
    as ``"true"``, as JSON writes them; `` #2``, ... added when two give the same text). What JSON
    cannot carry becomes a string ``[unencodable: WHY: TYPE ...]``:

    - a key that is no string, number, boolean or None (a tuple):
      ``[unencodable: key of type tuple: (1, 2)]`` (its ``repr``, cut to 200 characters), its value kept;
    - a list or object nested deeper than ``PLAIN_DEPTH`` levels:
      ``[unencodable: nested deeper than 100 levels: dict]``;
    - a list or object that contains itself: ``[unencodable: circular reference: list]``;
    - an integer of more digits than Python writes (``sys.get_int_max_str_digits``):
      ``[unencodable: integer too long: int of 16610 bits]``;
    - an object whose ``str`` raises: ``[unencodable: str() raised ValueError: Thing]``.

    A NaN or an infinity becomes ``"NaN"``, ``"Infinity"`` or ``"-Infinity"``."""
    return _plain(value, 0, set())


def utf8_text(text: str) -> str:
    """``text`` with every lone surrogate (a JSON ``"\\ud800"``, a model's output cut inside a surrogate
    pair) written as its escape, ``\\ud800``: text UTF-8 can carry, for what cannot take the character itself
    (a store's text column, an environment variable, a subprocess's argument). Other text is returned as is."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _unencodable(why: str, value: Any) -> str:
    return f"[unencodable: {why}: {type(value).__name__}]"


def _plain(value: Any, depth: int, path: set[int]) -> Any:
    """``plain`` of ``value`` found ``depth`` levels down; ``path``: ids of the containers it is in."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)):
        return _number(value)
    if not isinstance(value, (dict, list, tuple)):
        try:
            return str(value)
        except Exception as exc:
            return _unencodable(f"str() raised {type(exc).__name__}", value)
    if depth >= PLAIN_DEPTH:
        return _unencodable(f"nested deeper than {PLAIN_DEPTH} levels", value)
    if id(value) in path:
        return _unencodable("circular reference", value)
    path.add(id(value))
    try:
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for key, item in value.items():
                out[_free(_key(key), out)] = _plain(item, depth + 1, path)
            return out
        return [_plain(item, depth + 1, path) for item in value]
    finally:
        path.discard(id(value))


def _number(value: int | float) -> int | float | str:
    """An int or a float as JSON can carry it (see ``plain``)."""
    import math  # here: a shared library to load, and only a record that needs ``plain`` does

    if isinstance(value, float):
        if math.isfinite(value):
            return float(value)
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    try:
        int.__repr__(value)
    except ValueError:  # more digits than sys.get_int_max_str_digits() allows
        return f"[unencodable: integer too long: {type(value).__name__} of {value.bit_length()} bits]"
    return int(value)


def _key(key: Any) -> str:
    """A dict key as JSON writes it (see ``plain``)."""
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, bool):
        return _json_dumps(key)
    if isinstance(key, (int, float)):
        number = _number(key)
        return number if isinstance(number, str) else _json_dumps(number)
    try:
        shown = repr(key)
    except Exception as exc:
        shown = f"repr() raised {type(exc).__name__}"
    if len(shown) > _REPR_CHARS:
        shown = shown[:_REPR_CHARS] + "…"
    return f"[unencodable: key of type {type(key).__name__}: {shown}]"


def _free(key: str, taken: dict[str, Any]) -> str:
    """``key``, or ``key #2``, ``key #3``, ... when ``taken`` has it."""
    if key not in taken:
        return key
    n = 2
    while f"{key} #{n}" in taken:
        n += 1
    return f"{key} #{n}"


def _json_dumps(value: Any) -> str:
    import json

    return json.dumps(value)
