"""The Python API: ``Gateway.from_file(path)``, ``await gateway.dispatch(event_dict) -> Decision``.

Example::

    gateway = Gateway.from_file("hookgate.yaml")
    decision = await gateway.dispatch({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                                       "tool_input": {"command": "rm -rf /"}, "cwd": "/repo"})
    exit_code, stdout, stderr = gateway.render(decision)          # Claude Code's form; or "kiro", ...
    await gateway.aclose()

Handlers are looked up by ``type`` in a registry; ``gateway.register_handler(cls)`` adds an
in-process handler class (a subclass of ``handlers.base.Handler``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from gateway.config import GroupSpec, HandlerSpec, RuntimeConfig, find_config_paths, load_config
from gateway.context import RunContext
from gateway.decision import Decision
from gateway.dialects import parse_event, render
from gateway.dispatcher import Dispatcher, Trace
from gateway.errors import ConfigError
from gateway.events import HookEvent, PassedThrough, check_event_value
from gateway.host import AgentHost

if TYPE_CHECKING:
    from gateway.context import Mode


class Gateway(AgentHost):
    """A loaded config plus the shared handler context. Reuse one instance across events.

    The Python agent host's calls (``tool_call``, ``session_start``, ``stop``, ...) come from
    ``gateway.host.AgentHost``. ``strict`` (default: in ``api`` mode) refuses a config with a handler
    that cannot be built (an unimportable class hook or callable, a missing executable): a Python
    agent whose hooks cannot be built does not run (ConfigError listing each problem). ``hookgate
    run``/``serve`` are not strict: there a broken handler fails closed on its own event only.
    """

    def __init__(self, config: RuntimeConfig, *, mode: Mode = "api", strict: bool | None = None) -> None:
        if mode not in ("api", "serve", "run"):
            raise ValueError(f"Gateway: mode must be 'api', 'serve' or 'run', not {mode!r}")
        if (mode == "api" if strict is None else strict) and config.broken:
            raise ConfigError(
                f"{len(config.broken)} hook(s) cannot be built; first: {config.broken[0]}", list(config.broken)
            )
        self.config = config
        self.dispatcher = Dispatcher(config)
        self.context = RunContext(config, mode=mode)

    @classmethod
    def from_file(cls, *paths: str | os.PathLike[str], mode: Mode = "api", strict: bool | None = None) -> Gateway:
        """Load config files (none given: the usual lookup). Raises ConfigError (also, when strict,
        for handlers that cannot be built), TypeError for a path that is not a str or os.PathLike."""
        files = [_path(path) for path in paths]
        return cls(load_config(find_config_paths(files or None)), mode=mode, strict=strict)

    def register_hook(self, hook: Any, *, agent: str | None = None, matcher: str | None = None) -> HandlerSpec:
        """Add a class hook instance (``PreToolUseHook``, ``PostToolUseHook``, ``SessionStartHook``) to
        its event, after the configured hooks in config order and in its ``priority`` among the chained
        ones. agent: run it only for that ``agent_id``. matcher: a Claude Code matcher on the tool name
        (SessionStart: on ``source``), checked by the config loader's rules (the hook's ``tool_filter``
        applies as well). Returns its ``HandlerSpec``. Raises ConfigError when ``hook`` is not a usable
        class hook or ``matcher`` is not a valid matcher (a bad regex, a permission rule such as
        ``Bash(git *)``), TypeError when ``matcher`` or ``agent`` is neither a str nor None."""
        from gateway.hooks import check_hook

        where = f"register_hook({_hook_label(hook)})"
        hook = check_hook(hook, where)
        matcher = _checked_matcher(matcher, hook.hook_point, where)
        if agent is not None and not isinstance(agent, str):
            raise TypeError(f"{where}: agent must be a str (an agent_id) or None, not {type(agent).__name__}")
        cls = type(hook)
        spec = HandlerSpec(
            type="python",
            id=f"hook:{hook.hook_name}",
            timeout=10.0,
            where=where,
            fail_closed=hook.fail_closed,
            priority=-hook.priority,
            options={"hook": f"{cls.__module__}:{cls.__qualname__}", "instance": hook},
        )
        self.config.hooks.setdefault(hook.hook_point, []).append(
            GroupSpec(matcher=matcher, handlers=[spec], where=where, agent=agent)
        )
        self.dispatcher.forget(hook.hook_point)  # its remembered selections and if-rule table are stale
        return spec

    def parse(self, event: dict[str, Any] | HookEvent, dialect: str = "auto") -> HookEvent | PassedThrough:
        """A ``HookEvent`` from a host's event dict (``PassedThrough`` for a host event hookgate leaves
        alone, such as Gemini's BeforeModel). Raises EventError."""
        if isinstance(event, HookEvent):
            return event
        if isinstance(event, dict):
            check_event_value(event)  # what a JSON body could not hold never reaches a hook (NaN, a tuple key)
        return parse_event(event, dialect)

    async def dispatch(
        self, event: dict[str, Any] | HookEvent, *, dialect: str = "auto", trace: Trace | None = None
    ) -> Decision:
        """Run every configured handler that fits ``event``; return the merged Decision (an empty one,
        nothing to tell the host, for an event hookgate passes through).

        Raises EventError for a malformed event; handler failures are inside ``Decision.results``.
        """
        parsed = self.parse(event, dialect)
        if isinstance(parsed, PassedThrough):
            return Decision(event=parsed.name)
        return await self.dispatcher.dispatch(parsed, self.context, trace)

    def render(self, decision: Decision, dialect: str = "claude") -> tuple[int, str, str]:
        """``(exit_code, stdout, stderr)`` for ``decision`` in ``dialect``'s form (``gateway.dialects.render``:
        what ``hookgate run`` prints). Raises EventError for an unknown dialect, TypeError when ``decision``
        is not a Decision."""
        if not isinstance(decision, Decision):
            raise TypeError(
                f"Gateway.render: decision must be a Decision (what dispatch returns), not {type(decision).__name__}"
            )
        if not isinstance(dialect, str):
            raise TypeError(f"Gateway.render: dialect must be a str such as 'claude', not {type(dialect).__name__}")
        return render(decision, dialect)

    async def aclose(self) -> None:
        """Wait for background handlers and close shared resources (HTTP pool, MCP sessions, ...)."""
        await self.context.drain(timeout=5.0)
        await self.context.aclose()

    async def __aenter__(self) -> Gateway:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _hook_label(hook: object) -> str:
    """How ``register_hook`` names ``hook`` in its errors: a class by its name (its ``hook_name`` is a
    property there, not a name), an instance by its ``hook_name`` or its type's name."""
    if isinstance(hook, type):
        return hook.__name__
    name = getattr(hook, "hook_name", None)
    return name if isinstance(name, str) and name else type(hook).__name__


def _checked_matcher(matcher: object, event: str, where: str) -> str | None:
    """``matcher`` when the config loader would take it on ``event``'s group (``matching.matcher_problem``
    with the event's exact-name characters). Raises TypeError (not a str or None), ConfigError (invalid)."""
    from gateway.events import EVENTS
    from gateway.matching import matcher_problem

    if matcher is None:
        return None
    if not isinstance(matcher, str):
        raise TypeError(
            f"{where}: matcher must be a str (a Claude Code matcher such as 'Bash|Edit' or 'mcp__.*') or None, "
            f"not {type(matcher).__name__}"
        )
    problem = None if matcher in ("", "*") else matcher_problem(matcher, EVENTS[event].exact_chars)
    if problem is not None:
        raise ConfigError(f"{where}: matcher: {problem}")
    return matcher


def _path(path: object) -> str:
    """A config path given to ``Gateway.from_file`` as a str; TypeError naming what is expected."""
    if isinstance(path, str):
        return path
    if isinstance(path, os.PathLike):
        text = os.fspath(path)
        if isinstance(text, str):
            return text
    raise TypeError(
        f"Gateway.from_file: each path must be a str or os.PathLike naming a config file, not {type(path).__name__}"
        + (" (pass several paths as separate arguments: from_file(*paths))" if isinstance(path, list | tuple) else "")
    )
