"""Codex CLI hook trust: the ``[hooks.state."<key>"] trusted_hash`` entries of ``$CODEX_HOME/config.toml``.

Codex 0.171.0 runs a hook from a ``hooks.json`` only when config.toml holds a trust entry for it;
an untrusted hook is skipped silently (the tool runs as if no hook existed). An entry is keyed by
``<absolute hooks.json path>:<snake_case event>:<group index>:<handler index>`` and holds
``trusted_hash = "sha256:<hex>"``, the SHA-256 of the sorted-key compact JSON of
``{"event_name": <snake_case event>, "matcher"?: <group matcher>, "hooks": [<handler>]}``, where the
handler is ``{type, command, timeout (effective seconds), async, statusMessage?}``. The matcher is
left out for UserPromptSubmit and Stop (Codex ignores it there); the effective timeout is the
handler's (default 600), at least 1, and for SessionEnd and Interrupt 1 by default and at most 3.
Any change to the hook (command, timeout, matcher) or its position breaks the trust.
Source: the Codex TUI's ``/hooks`` review and ``codex app-server`` ``hooks/list`` (observed on
0.171.0; see tests/e2e/HOSTS.md and tests/e2e/test_codex_cli.py).

config.toml is edited as text (Python has no TOML writer in the standard library): hookgate removes
and appends whole ``[hooks.state."<key>"]`` tables and leaves every other byte alone, then parses the
result with ``tomllib`` and refuses to write unless exactly the intended entries changed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from gateway.errors import TomlEditError as TomlEditError

NO_MATCHER_EVENTS = frozenset({"UserPromptSubmit", "Stop"})
SHORT_TIMEOUT_EVENTS = frozenset({"SessionEnd", "Interrupt"})
DEFAULT_TIMEOUT = 600

_HEADER = re.compile(r"""^[ \t]*\[[ \t]*hooks[ \t]*\.[ \t]*state[ \t]*\.[ \t]*("(?:[^"\\]|\\.)*"|'[^']*')[ \t]*\]""")
_TABLE_START = re.compile(r"^[ \t]*\[")


def snake(event: str) -> str:
    """``PreToolUse`` -> ``pre_tool_use`` (Codex's event label in trust keys and hashes)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def effective_timeout(event: str, handler: Mapping[str, Any]) -> int:
    """The timeout Codex uses for ``handler`` (seconds), as it enters the trust hash."""
    raw = handler.get("timeout")
    if event in SHORT_TIMEOUT_EVENTS:
        return min(max(1, int(raw)), 3) if raw is not None else 1
    return max(1, int(raw if raw is not None else DEFAULT_TIMEOUT))


def trust_hash(event: str, matcher: str | None, handler: Mapping[str, Any]) -> str:
    """``sha256:<hex>`` Codex expects as ``trusted_hash`` for one handler (see module docstring)."""
    norm: dict[str, Any] = {
        "type": handler.get("type", "command"),
        "command": handler["command"],
        "timeout": effective_timeout(event, handler),
        "async": bool(handler.get("async", False)),
    }
    if handler.get("statusMessage") is not None:
        norm["statusMessage"] = handler["statusMessage"]
    ident: dict[str, Any] = {"event_name": snake(event), "hooks": [norm]}
    if matcher is not None and event not in NO_MATCHER_EVENTS:
        ident["matcher"] = matcher
    blob = json.dumps(ident, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(blob.encode()).hexdigest()


def trust_key(hooks_file: str, event: str, group: int, handler: int) -> str:
    return f"{hooks_file}:{snake(event)}:{group}:{handler}"


def state_entries(text: str) -> dict[str, dict[str, Any]]:
    """``hooks.state`` of a config.toml text (``{}`` when absent). Raises TomlEditError when not TOML."""
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TomlEditError(f"config.toml is not valid TOML ({exc})") from None
    hooks = data.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    return {k: v for k, v in state.items() if isinstance(v, dict)} if isinstance(state, dict) else {}


def _decode_key(token: str) -> str:
    if token.startswith("'"):
        return token[1:-1]
    value: str = json.loads(token)  # a TOML basic string without TOML-only escapes reads as JSON
    return value


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(str(value))


def _table(key: str, values: Mapping[str, Any]) -> str:
    lines = [f"[hooks.state.{json.dumps(key)}]"]
    lines += [
        f"{name} = {_toml_value(value)}"
        for name, value in values.items()
        if isinstance(value, str | bool | int | float)
    ]
    return "\n".join(lines) + "\n"


def edit_state(text: str, remove: set[str], put: Mapping[str, Mapping[str, Any]]) -> str:
    """config.toml text with the ``[hooks.state."<key>"]`` tables in ``remove`` (and ``put``) removed
    and those in ``put`` appended. Raises TomlEditError unless the parsed result differs from the
    original in exactly those entries."""
    import tomllib

    try:
        before = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TomlEditError(f"config.toml is not valid TOML ({exc})") from None
    drop = set(remove) | set(put)
    out: list[str] = []
    skipping = False
    for line in text.splitlines(keepends=True):
        m = _HEADER.match(line)
        if m:
            try:
                skipping = _decode_key(m.group(1)) in drop
            except ValueError:
                skipping = False
        elif _TABLE_START.match(line):
            skipping = False
        if not skipping:
            out.append(line)
    result = "".join(out)
    if len(out) != len(text.splitlines(keepends=True)):  # tables went: no blank lines left piling up
        result = re.sub(r"\n{3,}", "\n\n", result)
        result = result.rstrip("\n") + "\n" if result.strip() else ""
    if put:
        if result and not result.endswith("\n"):
            result += "\n"
        result += ("\n" if result.strip() else "") + "\n".join(_table(k, v) for k, v in put.items())
    try:
        after = tomllib.loads(result)
    except tomllib.TOMLDecodeError as exc:
        raise TomlEditError(f"editing config.toml would make it invalid ({exc})") from None
    if (
        _without(after, drop) != _without(before, drop)
        or any(state_entries(result).get(k) != dict(v) for k, v in put.items())
        or any(k in state_entries(result) for k in remove - set(put))
    ):
        raise TomlEditError(
            "config.toml defines hooks.state in a form hookgate does not edit (inline tables or dotted keys)"
        )
    return result


def _without(data: dict[str, Any], keys: set[str]) -> dict[str, Any]:
    """``data`` minus ``hooks.state[k]`` for ``k`` in ``keys`` (and an emptied state/hooks table)."""
    data = json.loads(json.dumps(data, default=str))
    hooks = data.get("hooks")
    if isinstance(hooks, dict) and isinstance(hooks.get("state"), dict):
        for key in keys:
            hooks["state"].pop(key, None)
        if not hooks["state"]:
            del hooks["state"]
        if not hooks:
            del data["hooks"]
    return data


def project_trusted(text: str, project: str) -> bool:
    """True when config.toml marks ``project`` ``trust_level = "trusted"`` (Codex loads project hooks
    only then)."""
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return False
    projects = data.get("projects")
    entry = projects.get(project) if isinstance(projects, dict) else None
    return isinstance(entry, dict) and entry.get("trust_level") == "trusted"
