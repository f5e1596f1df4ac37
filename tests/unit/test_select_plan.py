"""``Dispatcher.select`` remembers, per kind of event, which groups fit (``Plan``): it must choose what a
full walk chooses for every event, whatever came before it, and hand out fresh ``Selected`` objects."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gateway.config import load_config
from gateway.dispatcher import Dispatcher, Trace
from gateway.events import HookEvent
from gateway.selection import PLANS


def dispatcher(tmp_path: Path, config: dict[str, Any]) -> Dispatcher:
    path = tmp_path / "c.json"
    path.write_text(json.dumps(config))
    return Dispatcher(load_config([str(path)], use_cache=False))


def pre(tool: str, command: str = "ls", **extra: Any) -> HookEvent:
    return HookEvent({"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": {"command": command}, **extra})


def ids(selected: list[Any]) -> list[str]:
    return [s.spec.id for s in selected]


CONFIG = {
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo a", "id": "bash"}]},
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo r", "id": "rm", "if": "Bash(rm *)"}]},
            {"matcher": "Edit|Bash", "hooks": [{"type": "command", "command": "echo a", "id": "dup"}]},
            {"hooks": [{"type": "command", "command": "echo all", "id": "all", "priority": 5}]},
        ]
    },
    "agents": {
        "researcher": {"hooks": [{"type": "command", "command": "echo r", "id": "agent", "event": "PreToolUse"}]}
    },
}


def test_a_remembered_plan_still_tests_if_rules_per_event(tmp_path: Path) -> None:
    d = dispatcher(tmp_path, CONFIG)
    for _ in range(2):  # the second round runs on the remembered plans
        assert ids(d.select(pre("Bash", "ls"))) == ["all", "bash"]  # "dup" runs "echo a" again: once
        assert ids(d.select(pre("Bash", "rm -rf x"))) == ["all", "bash", "rm"]
        assert ids(d.select(pre("Edit"))) == ["all", "dup"]
        assert ids(d.select(pre("Read"))) == ["all"]


def test_the_plan_key_holds_agent_id(tmp_path: Path) -> None:
    d = dispatcher(tmp_path, CONFIG)
    assert "agent" not in ids(d.select(pre("Read")))
    assert "agent" in ids(d.select(pre("Read", agent_id="researcher")))
    assert "agent" not in ids(d.select(pre("Read", agent_id="other")))
    assert "agent" not in ids(d.select(pre("Read")))


def test_selected_objects_are_fresh_per_event(tmp_path: Path) -> None:
    d = dispatcher(tmp_path, CONFIG)
    first = d.select(pre("Edit"))
    first[0].order = 99  # what an executor may do with its own list
    first.clear()
    again = d.select(pre("Edit"))
    assert [(s.spec.id, s.order) for s in again] == [("all", 0), ("dup", 1)]
    assert [(s.spec.id, s.order) for s in again] == [(s.spec.id, s.order) for s in d.select(pre("Edit"), Trace())]


def test_past_the_plan_limit_select_walks(tmp_path: Path) -> None:
    d = dispatcher(tmp_path, CONFIG)
    for n in range(PLANS + 10):
        event = pre(f"mcp__s__tool{n}")
        assert ids(d.select(event)) == ["all"]
    assert len(d._plans) == PLANS
    assert ids(d.select(pre("Bash", "rm x"))) == ["all", "bash", "rm"]  # not remembered, still right
