"""The Python API: ``Gateway.from_file(path)``, ``await gateway.dispatch(event_dict) -> Decision``.

Example::

    gateway = Gateway.from_file("hookgate.yaml")
    decision = await gateway.dispatch({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                                       "tool_input": {"command": "rm -rf /"}, "cwd": "/repo"})
    exit_code, stdout, stderr = decision.to_claude()
    await gateway.aclose()

Handlers are looked up by ``type`` in a registry; ``gateway.register_handler(cls)`` adds an
in-process handler class (a subclass of ``handlers.base.Handler``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gateway.config import RuntimeConfig, find_config_paths, load_config
from gateway.context import RunContext
from gateway.decision import Decision
from gateway.dialects import parse_event
from gateway.dispatcher import Dispatcher, Trace
from gateway.events import HookEvent

if TYPE_CHECKING:
    from gateway.context import Mode


class Gateway:
    """A loaded config plus the shared handler context. Reuse one instance across events."""

    def __init__(self, config: RuntimeConfig, *, mode: Mode = "api") -> None:
        self.config = config
        self.dispatcher = Dispatcher(config)
        self.context = RunContext(config, mode=mode)

    @classmethod
    def from_file(cls, *paths: str, mode: Mode = "api") -> Gateway:
        """Load config files (none given: the usual lookup). Raises ConfigError."""
        return cls(load_config(find_config_paths(list(paths) or None)), mode=mode)

    def parse(self, event: dict[str, Any] | HookEvent, dialect: str = "auto") -> HookEvent:
        """A ``HookEvent`` from a host's event dict. Raises EventError."""
        return event if isinstance(event, HookEvent) else parse_event(event, dialect)

    async def dispatch(self, event: dict[str, Any] | HookEvent, *, dialect: str = "auto",
                       trace: Trace | None = None) -> Decision:
        """Run every configured handler that fits ``event``; return the merged Decision.

        Raises EventError for a malformed event; handler failures are inside ``Decision.results``.
        """
        return await self.dispatcher.dispatch(self.parse(event, dialect), self.context, trace)

    async def aclose(self) -> None:
        """Wait for background handlers and close shared resources (HTTP pool, MCP sessions, ...)."""
        await self.context.drain(timeout=5.0)
        await self.context.aclose()

    async def __aenter__(self) -> Gateway:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
