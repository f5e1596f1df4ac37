"""The loaded config as plain data: ``RuntimeConfig`` (hooks by event, the gateway's own sections), its
matcher groups (``GroupSpec``) and handler entries (``HandlerSpec``). Built from the compiler's
normalized dict (or the load cache); read by the dispatcher and every handler. Imports only
``gateway.records`` (their slotted base: not dataclasses, which cost every ``hookgate run`` ~8 ms), so
handlers and the core may depend on it freely.
"""

from __future__ import annotations

from gateway.records import Record

TYPE_CHECKING = False  # typing costs a hook process ~2 ms to import
if TYPE_CHECKING:
    from typing import Any


class HandlerSpec(Record):
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

    __slots__ = (  # noqa: RUF023  (in field order: the load cache and repr follow it)
        "type",
        "id",
        "timeout",
        "where",
        "fail_closed",
        "priority",
        "if_rule",
        "async_",
        "cache_ttl",
        "status_message",
        "dialect",
        "base_dir",
        "options",
        "problem",
    )

    def __init__(
        self,
        type: str,
        id: str,
        timeout: float,
        where: str,
        fail_closed: bool = False,
        priority: int = 0,
        if_rule: str | list[str] | None = None,
        async_: bool = False,
        cache_ttl: float | None = None,
        status_message: str | None = None,
        dialect: str = "claude",
        base_dir: str = ".",
        options: dict[str, Any] | None = None,
        problem: str | None = None,
    ) -> None:
        self.type = type
        self.id = id
        self.timeout = timeout
        self.where = where
        self.fail_closed = fail_closed
        self.priority = priority
        self.if_rule = if_rule
        self.async_ = async_
        self.cache_ttl = cache_ttl
        self.status_message = status_message
        self.dialect = dialect
        self.base_dir = base_dir
        self.options: dict[str, Any] = {} if options is None else options
        self.problem = problem

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict (``from_dict`` reads it back)."""
        return {name: getattr(self, name) for name in self.__slots__}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HandlerSpec:
        return cls(**data)


class GroupSpec(Record):
    """One matcher group: ``matcher`` (None = all), ``sequential``, its handlers, source ``dialect``;
    ``agent``: the group comes from ``agents.<name>`` and fits only events whose ``agent_id`` is that
    name (None: every agent)."""

    __slots__ = ("matcher", "handlers", "where", "sequential", "dialect", "agent")  # noqa: RUF023  (field order)

    def __init__(
        self,
        matcher: str | None,
        handlers: list[HandlerSpec],
        where: str,
        sequential: bool = False,
        dialect: str = "claude",
        agent: str | None = None,
    ) -> None:
        self.matcher = matcher
        self.handlers = handlers
        self.where = where
        self.sequential = sequential
        self.dialect = dialect
        self.agent = agent

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GroupSpec:
        data = dict(data)
        data["handlers"] = [HandlerSpec.from_dict(h) for h in data["handlers"]]
        return cls(**data)


class RuntimeConfig(Record):
    """The loaded config: ``hooks`` by canonical event name, plus the gateway's own sections."""

    __slots__ = (  # noqa: RUF023  (in field order)
        "hooks",
        "sources",
        "mcp_servers",
        "llm",
        "settings",
        "guards",
        "channels",
        "audit",
        "config_hash",
        "warnings",
        "broken",
        "depends",
    )

    def __init__(
        self,
        hooks: dict[str, list[GroupSpec]],
        sources: list[str],
        mcp_servers: dict[str, Any] | None = None,
        llm: dict[str, Any] | None = None,
        settings: dict[str, Any] | None = None,
        guards: dict[str, Any] | None = None,
        channels: dict[str, Any] | None = None,
        audit: dict[str, Any] | None = None,
        config_hash: str | None = None,
        warnings: list[str] | None = None,
        broken: list[str] | None = None,
        depends: list[str] | None = None,
    ) -> None:
        self.hooks = hooks
        self.sources = sources
        self.mcp_servers: dict[str, Any] = {} if mcp_servers is None else mcp_servers
        self.llm: dict[str, Any] = {} if llm is None else llm
        self.settings: dict[str, Any] = {} if settings is None else settings
        self.guards: dict[str, Any] = {} if guards is None else guards
        self.channels: dict[str, Any] = {} if channels is None else channels
        self.audit: dict[str, Any] = {} if audit is None else audit
        """The normalized ``audit`` section (``gateway.audit.config``); empty: the defaults."""
        self.config_hash = config_hash
        """SHA-256 (16 hex) of the normalized config (``gateway.config.compiler.config_hash``)."""
        self.warnings: list[str] = [] if warnings is None else warnings
        self.broken: list[str] = [] if broken is None else broken
        self.depends: list[str] = [] if depends is None else depends
        """The other files the config was compiled from (``mcpConfig`` files): ``hookgate serve`` watches them."""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RuntimeConfig:
        hooks = {event: [GroupSpec.from_dict(g) for g in groups] for event, groups in data["hooks"].items()}
        return cls(
            hooks=hooks,
            sources=data["sources"],
            mcp_servers=data.get("mcp_servers", {}),
            llm=data.get("llm", {}),
            settings=data.get("settings", {}),
            guards=data.get("guards", {}),
            channels=data.get("channels", {}),
            audit=data.get("audit", {}),
            config_hash=data.get("config_hash"),
            warnings=data.get("warnings", []),
            broken=data.get("broken", []),
            # the compiler's paths; the load cache keeps (path, stamp) pairs
            depends=[d[0] if isinstance(d, list | tuple) else d for d in data.get("depends", [])],
        )

    def handler_count(self) -> int:
        return sum(len(g.handlers) for groups in self.hooks.values() for g in groups)

    def python_modules(self) -> list[str]:
        """The modules of this config's ``python`` handlers (``callable``/``hook``, before the ``:``) that are
        not hookgate's own (``configs.``, ``gateway.``, ``handlers.``), sorted: code a reload does not re-import."""
        found = set()
        for groups in self.hooks.values():
            for group in groups:
                for spec in group.handlers:
                    if spec.type != "python":
                        continue
                    target = spec.options.get("callable") or spec.options.get("hook")
                    module = str(target).partition(":")[0] if target else ""
                    if module and not module.startswith(("configs.", "gateway.", "handlers.")):
                        found.add(module)
        return sorted(found)
