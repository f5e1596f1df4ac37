"""The ``agents:`` section: hooks declared per agent (FIM One's per-agent hook lists).

::

    agents:
      researcher:                     # runs only for events whose agent_id is "researcher"
        description: reads the warehouse
        hooks:
          - {type: python, hook: "mypkg.hooks:CapRows"}            # event from the class: PreToolUse
          - {type: builtin, name: truncateOutput, maxChars: 4000}  # event from the built-in: PostToolUse
          - {type: command, command: ./audit.sh, event: PostToolUse, matcher: "run_sql"}

Each entry is a handler entry as in ``hooks:`` plus ``event`` (optional for class hooks and built-ins,
whose event is implied; required for other types) and ``matcher`` (optional). An entry compiles into
its own matcher group under ``hooks[event]`` marked with the agent's name (``GroupSpec.agent``), so
the dispatcher treats it like any other group: same validation, same run path, same merge. The agent
id is the event's ``agent_id`` (the Python host's ``agent_id=``, or Claude Code's subagent id).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from gateway.events import EVENTS

if TYPE_CHECKING:
    from gateway.config.schema import Compilation


class Agent(BaseModel):
    """One ``agents.<name>`` entry."""

    model_config = ConfigDict(extra="allow", strict=True)
    description: str | None = None
    hooks: list[dict[str, Any]] = Field(default_factory=list)


def implied_event(entry: dict[str, Any]) -> tuple[str | None, str | None]:
    """``(event, problem)`` for an entry without ``event``: a class hook's point, a built-in's first event
    (``Handler.implied_event`` of the entry's type)."""
    from gateway.errors import ConfigError
    from handlers.base import handler_class

    kind = entry.get("type")
    try:
        event = handler_class(kind).implied_event(entry) if isinstance(kind, str) else None
    except ConfigError as exc:
        return None, str(exc)
    if event is None:
        return None, "event: required for this entry (e.g. event: PreToolUse); only class hooks and built-ins imply it"
    return event, None


def compile_agents(compiler: Compilation, path: str, base_dir: str, raw: Any) -> None:
    """Validate ``agents`` and add each entry as an agent-scoped group (see module docstring)."""
    where = f"{path}: agents"
    if not isinstance(raw, dict):
        compiler.issues.append(f"{where}: expected an object keyed by agent id, got {type(raw).__name__}")
        return
    for name, body in raw.items():
        agent = compiler.validated(Agent, body, f"{where}.{name}", unknown="agent field")
        if agent is None:
            continue
        for i, entry in enumerate(agent.hooks):
            at = f"{where}.{name}.hooks[{i}]"
            handler = dict(entry)
            event = handler.pop("event", None)
            matcher = handler.pop("matcher", None)
            if event is None:
                event, problem = implied_event(handler)
                if problem is not None:
                    compiler.issues.append(f"{at}: {problem}")
                    continue
            if event not in EVENTS:
                compiler.issues.append(f"{at}.event: unknown event {event!r}")
                continue
            before = len(compiler.hooks.get(event, []))
            compiler.add_group(event, at, base_dir, {"matcher": matcher, "hooks": [handler]}, "claude")
            groups = compiler.hooks.get(event, [])
            if len(groups) > before:
                groups[-1]["agent"] = str(name)
