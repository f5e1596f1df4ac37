"""The loaded config as plain data: ``RuntimeConfig`` (hooks by event, the gateway's own sections), its
matcher groups (``GroupSpec``) and handler entries (``HandlerSpec``). Built from the compiler's
normalized dict (or the load cache); read by the dispatcher and every handler. Imports nothing of
hookgate's, so handlers and the core may depend on it freely.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class HandlerSpec:
    """One validated handler entry (plain data; built from the normalized config).

    type: handler type. id: stable name for logs and reasons. timeout: seconds (float > 0).
    fail_closed: failures deny/block (deterministic types only). priority: higher runs earlier in
    merge order (default 0; ties keep config order). if_rule: the ``if`` permission rule (or a list
    of rules, any of which fits: a hookgate extension) or None.
    async_: run in the background, cannot decide. cache_ttl: seconds a successful verdict is reused.
    options: type-specific fields, snake_case. dialect: format of the config it came from.
    where: ``file: hooks.Event[i].hooks[j]`` for messages. problem: why the handler cannot run (its
    load-time check failed: a missing executable or script, an unimportable callable, ...). ``hookgate
    validate`` reports it as an error; at run time the handler fails closed on its own event only, so a
    broken notification hook does not block tool calls and a broken guard does not open the gate.
    """

    type: str
    id: str
    timeout: float
    where: str
    fail_closed: bool = False
    priority: int = 0
    if_rule: str | list[str] | None = None
    async_: bool = False
    cache_ttl: float | None = None
    status_message: str | None = None
    dialect: str = "claude"
    base_dir: str = "."
    options: dict[str, Any] = field(default_factory=dict)
    problem: str | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HandlerSpec:
        return cls(**data)


@dataclass(slots=True)
class GroupSpec:
    """One matcher group: ``matcher`` (None = all), ``sequential``, its handlers, source ``dialect``;
    ``agent``: the group comes from ``agents.<name>`` and fits only events whose ``agent_id`` is that
    name (None: every agent)."""

    matcher: str | None
    handlers: list[HandlerSpec]
    where: str
    sequential: bool = False
    dialect: str = "claude"
    agent: str | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GroupSpec:
        data = dict(data)
        data["handlers"] = [HandlerSpec.from_dict(h) for h in data["handlers"]]
        return cls(**data)


@dataclass(slots=True)
class RuntimeConfig:
    """The loaded config: ``hooks`` by canonical event name, plus the gateway's own sections."""

    hooks: dict[str, list[GroupSpec]]
    sources: list[str]
    mcp_servers: dict[str, Any] = field(default_factory=dict)
    llm: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    guards: dict[str, Any] = field(default_factory=dict)
    channels: dict[str, Any] = field(default_factory=dict)
    audit: dict[str, Any] = field(default_factory=dict)
    """The normalized ``audit`` section (``gateway.audit.config``); empty: the defaults."""
    config_hash: str | None = None
    """SHA-256 (16 hex) of the normalized config (``gateway.config.compiler.config_hash``)."""
    warnings: list[str] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RuntimeConfig:
        hooks = {event: [GroupSpec.from_dict(g) for g in groups] for event, groups in data["hooks"].items()}
        return cls(hooks=hooks, sources=data["sources"], mcp_servers=data.get("mcp_servers", {}),
                   llm=data.get("llm", {}), settings=data.get("settings", {}), guards=data.get("guards", {}),
                   channels=data.get("channels", {}), audit=data.get("audit", {}),
                   config_hash=data.get("config_hash"), warnings=data.get("warnings", []),
                   broken=data.get("broken", []))

    def handler_count(self) -> int:
        return sum(len(g.handlers) for groups in self.hooks.values() for g in groups)
