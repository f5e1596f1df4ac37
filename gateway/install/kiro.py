"""Kiro CLI: the agent file ``DIR/.kiro/agents/AGENT.json`` (``--project``) or ``~/.kiro/agents/AGENT.json``
(``--agent``, else the only agent there, else a new ``hookgate`` agent); flat ``hooks`` lists."""

from __future__ import annotations

import os
from typing import Any

from gateway.install.edit import Edit, edit_flat
from gateway.install.files import Plan, hooks_of
from gateway.install.options import HOOK_TIMEOUT_S, InstallError, Options, _home, check_agent_name


def default_events() -> list[str]:
    from gateway.dialects.kiro import EVENT_NAMES

    return list(EVENT_NAMES)


def all_events() -> dict[str, str]:
    from gateway.dialects.kiro import EVENT_NAMES

    return dict(EVENT_NAMES)


def target_file(opts: Options) -> str:
    folder = os.path.join(opts.project, ".kiro", "agents") if opts.project else _home(".kiro", "agents")
    return os.path.join(folder, f"{_agent(folder, opts)}.json")


def _agent(folder: str, opts: Options) -> str:
    if opts.agent:  # `--agent foo.json` names the agent foo (its file is foo.json), not foo.json.json
        return check_agent_name(opts.agent.removesuffix(".json") or opts.agent)
    try:
        names = sorted(n[:-5] for n in os.listdir(folder) if n.endswith(".json"))
    except OSError:
        names = []
    if len(names) == 1:
        return names[0]
    if len(names) > 1:
        raise InstallError(f"{folder} holds several Kiro agents ({', '.join(names)}); choose one with --agent NAME")
    return "hookgate"


def handler_entry(opts: Options, event: str, command: str) -> dict[str, Any]:
    return {"command": command, "timeout_ms": HOOK_TIMEOUT_S * 1000}


def edit(
    opts: Options, result: Plan, path: str, before: str | None, doc: dict[str, Any], wanted: dict[str, dict[str, Any]]
) -> Edit:
    """Make install's entries in ``doc`` (the file at ``path``, ``before`` its text) exactly ``wanted``."""
    if before is None:  # a new agent file
        doc.update(
            {
                "name": os.path.basename(path)[:-5],
                "tools": ["*"],
                "description": "Kiro's tools, every hook event through hookgate",
            }
        )
        result.notes.append(
            f"created the Kiro agent {doc['name']!r} ({path}); use this agent in Kiro for the hooks to run"
        )
    return edit_flat(hooks_of(path, doc), wanted, opts.host, result.keep_empty)
