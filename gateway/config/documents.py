"""Reading a config document (JSON or YAML) into plain Python values, strictly: a mapping key written
twice is a ConfigError naming the key and both lines, never PyYAML's or ``json``'s silent last-wins (a
second ``PreToolUse:`` would drop the first event's groups, a second ``rm.recursive:`` the first decision).

YAML goes through ``StrictLoader`` (a PyYAML ``SafeLoader`` whose ``construct_mapping`` checks the keys);
JSON through the standard decoder with a pairs hook that knows where each value starts
(``_strict_json``), so the error names the line. Used for every config file hookgate reads: its own
configs, Claude Code ``settings.json`` / ``hooks.json``, Kiro and Gemini configs, ``mcpConfig`` files.
"""

from __future__ import annotations

import json
from typing import Any

from gateway.errors import ConfigError


def read_document(path: str) -> Any:
    """Read a JSON or YAML file. Raises ConfigError naming the file and the line (a syntax error, or a
    duplicate key: ``file:LINE: duplicate key 'k' (first at line N) ...``)."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: config is not valid UTF-8") from None
    try:
        return _parse(text, path)
    except RecursionError:
        raise ConfigError(f"{path}: config is nested too deeply to read") from None
    except ValueError as exc:  # not JSONDecodeError (handled in _parse): e.g. an integer of 5,000 digits
        raise ConfigError(f"{path}: config cannot be read: {str(exc).splitlines()[0]}") from None


def _parse(text: str, path: str) -> Any:
    if path.endswith(".json") or text.lstrip().startswith("{"):
        try:
            return _strict_json(text, path)
        except json.JSONDecodeError as exc:
            if path.endswith(".json"):
                raise ConfigError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    import yaml

    try:
        loader = _strict_loader()(text)  # the reader refuses control characters (a NUL, an ESC) right here
    except yaml.YAMLError as exc:
        raise ConfigError(yaml_error(path, exc)) from None
    loader.path = path
    try:
        return loader.get_single_data()
    except yaml.YAMLError as exc:
        raise ConfigError(yaml_error(path, exc)) from None
    finally:
        loader.dispose()


def duplicate_message(path: str, key: Any, line: int, first: int) -> str:
    """The one line for a key written twice in one mapping (lines 1-based)."""
    return (
        f"{path}:{line}: duplicate key {key!r} (first at line {first}): a parser would silently keep only "
        "the last one; merge the two or remove one"
    )


def _strict_json(text: str, path: str) -> Any:
    """``json.loads`` with duplicate keys and ``NaN``/``Infinity`` refused. The decoder's ``parse_object`` is
    wrapped so that the ``scan_once`` it is handed records where each member's value starts (it is called once
    per member, in order): the pairs check can then name the duplicate's line. Raises ConfigError or
    JSONDecodeError."""
    import json.decoder
    import json.scanner

    # CPython's pure-Python object parser and scanner (public names since 2.6, not in typeshed)
    json_object: Any = getattr(json.decoder, "JSONObject")  # noqa: B009
    make_scanner: Any = getattr(json.scanner, "py_make_scanner")  # noqa: B009

    def parse_object(s_and_end: Any, strict: bool, scan_once: Any, hook: Any, pairs_hook: Any, memo: Any) -> Any:
        starts: list[int] = []

        def scan(s: str, idx: int) -> Any:
            starts.append(idx)
            return scan_once(s, idx)

        pairs, end = json_object(s_and_end, strict, scan, None, list, memo)
        seen: dict[str, int] = {}
        for (key, _), at in zip(pairs, starts, strict=False):
            line = text.count("\n", 0, at) + 1
            if key in seen:
                raise ConfigError(duplicate_message(path, key, line, seen[key]))
            seen[key] = line
        return dict(pairs), end

    def no_constant(name: str) -> Any:
        raise ConfigError(
            f"{path}: {name} is not a JSON value (Python's json reads it; Claude Code's JSON.parse refuses the "
            "whole file): write a number or a string"
        )

    decoder: Any = json.JSONDecoder(parse_constant=no_constant)
    decoder.parse_object = parse_object
    decoder.scan_once = make_scanner(decoder)
    return decoder.decode(text)


_LOADER: list[Any] = []


def _strict_loader() -> Any:
    """The ``yaml.SafeLoader`` subclass that refuses duplicate keys (built on first use: PyYAML is
    imported only when a YAML config is validated)."""
    if _LOADER:
        return _LOADER[0]
    import yaml

    class StrictLoader(yaml.SafeLoader):
        path = "<config>"

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            if isinstance(node, yaml.MappingNode):
                seen: dict[Any, int] = {}
                for key_node, _ in node.value:
                    if key_node.tag == "tag:yaml.org,2002:merge":
                        continue  # `<<: *base`: overriding merged keys is what a merge is for
                    key = self.construct_object(key_node, deep=True)
                    try:
                        first = seen.get(key)
                    except TypeError:
                        continue  # an unhashable key: SafeLoader reports it
                    line = key_node.start_mark.line + 1
                    if first is not None:
                        raise ConfigError(duplicate_message(self.path, key, line, first))
                    seen[key] = line
            return super().construct_mapping(node, deep=deep)

    _LOADER.append(StrictLoader)
    return StrictLoader


def yaml_error(path: str, exc: Exception) -> str:
    """One line for a PyYAML error, at the place PyYAML names: ``file:LINE:COL: invalid YAML: ...``.

    PyYAML gives a ``problem_mark`` (where it gave up) and often a ``context_mark`` (where the construct
    it was reading starts: the unclosed quote, the mapping). The place shown first is the problem mark,
    except when PyYAML only found the end of the file (an unclosed quote or bracket): then it is where
    the unclosed construct starts, with the problem's line and column kept in the message."""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None)
    pmark = getattr(exc, "problem_mark", None)
    cmark = getattr(exc, "context_mark", None)
    if pmark is None:
        return f"{path}: invalid YAML: {problem}"
    at = f"line {pmark.line + 1}, column {pmark.column + 1}"
    if cmark is not None and context and cmark.line < pmark.line and "end of stream" in problem:
        return (
            f"{path}:{cmark.line + 1}:{cmark.column + 1}: invalid YAML: {context} (line {cmark.line + 1}, "
            f"column {cmark.column + 1}): {problem} at {at}"
        )
    lead = f"{context}: " if context else ""
    return f"{path}:{pmark.line + 1}:{pmark.column + 1}: invalid YAML: {lead}{problem} ({at})"
