"""The ``if``-rule prefilter (``gateway.selection``) never changes what ``Dispatcher.select`` chooses.

``select`` with a trace walks every group and handler (nothing is pruned); without one it skips what the
prefilter rules out. Over random configs and events both must choose the same handlers in the same order.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from gateway.config import load_config
from gateway.dispatcher import Dispatcher, Trace
from gateway.events import HookEvent
from gateway.selection import Prefilter

MATCHERS = [None, "Bash", "Bash|Edit", "", "*", "Ed.*", "Write", "PowerShell"]
RULES: list[Any] = [
    None,
    "Bash(rm *)",
    "Bash(git push *)",
    "Bash(npm test)",
    "Edit(src/**)",
    "Bash",
    ["Bash(rm *)", "Bash(curl *)"],
    ["Bash(rm *)", "Edit(*.py)"],
    "PowerShell(Remove-Item *)",
    "Bash(*)",
    "Bash(rm -r /srv/1/*)",
    "Bash(  gh pr *)",
    "Read",
]
COMMANDS: list[Any] = [
    "npm test",
    "rm -rf build",
    "echo $(rm x)",
    "git push origin main",
    "ls 'rm'",
    "cd a && rm b",
    "FOO=1 gh pr list",
    "curl x | sh",
    "Remove-Item x",
    "make",
    42,
    None,
]


def random_config(rng: random.Random, tmp_path: Path, n: int) -> Dispatcher:
    groups = []
    for _ in range(rng.randint(1, 12)):
        handlers = []
        for _ in range(rng.randint(1, 3)):
            handler: dict[str, Any] = {"type": "command", "command": f"echo {rng.randint(0, 5)}"}
            rule = rng.choice(RULES)
            if rule is not None:
                handler["if"] = rule
            handlers.append(handler)
        group: dict[str, Any] = {"hooks": handlers}
        matcher = rng.choice(MATCHERS)
        if matcher is not None:
            group["matcher"] = matcher
        groups.append(group)
    path = tmp_path / f"c{n}.json"
    path.write_text(json.dumps({"hooks": {"PreToolUse": groups}}))
    return Dispatcher(load_config([str(path)], use_cache=False))


def random_event(rng: random.Random) -> HookEvent:
    tool = rng.choice(["Bash", "Bash", "Edit", "PowerShell", "Read"])
    if tool in ("Edit", "Read"):
        tool_input: dict[str, Any] = {"file_path": rng.choice(["/p/src/a.py", "/p/docs/b.md"])}
    else:
        tool_input = {} if (command := rng.choice(COMMANDS)) is None else {"command": command}
    if rng.random() < 0.1:
        return HookEvent({"hook_event_name": "UserPromptSubmit", "prompt": "hi", "cwd": "/p"})
    return HookEvent({"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input, "cwd": "/p"})


def chosen(dispatcher: Dispatcher, event: HookEvent, trace: Trace | None) -> list[tuple[int, int]]:
    return [(id(s.spec), s.order) for s in dispatcher.select(event, trace)]


def test_pruned_selection_matches_the_full_walk(tmp_path: Path) -> None:
    rng = random.Random(15)
    pruned_any = 0
    for n in range(60):
        dispatcher = random_config(rng, tmp_path, n)
        for _ in range(25):
            event = random_event(rng)
            assert chosen(dispatcher, event, None) == chosen(dispatcher, event, Trace()), event
            pruned_any += bool(dispatcher._prefilter(event.name).pruned(event).handlers)
    assert pruned_any > 200  # the prefilter did rule things out


def test_a_thousand_rm_rules_are_pruned_by_one_gate(tmp_path: Path) -> None:
    path = tmp_path / "many.json"
    path.write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [
                        {
                            "matcher": "Bash",
                            "hooks": [{"type": "command", "if": f"Bash(rm -r /srv/{n}/*)", "command": "true"}],
                        }
                        for n in range(1000)
                    ]
                }
            }
        )
    )
    config = load_config([str(path)], use_cache=False)
    prefilter = Prefilter(config.hooks["PreToolUse"])
    assert prefilter.all_gates == {("Bash", "rm")}
    event = HookEvent({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "npm test"}})
    assert prefilter.pruned(event).survivors == ()
    for command in ("rm -r /srv/7/x", "echo $HOME"):  # names it, or may hide it: nothing is ruled out
        event = HookEvent({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command}})
        assert prefilter.pruned(event).survivors is None
    assert [
        s.spec.if_rule
        for s in Dispatcher(config).select(
            HookEvent(
                {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "rm -r /srv/7/x"}}
            )
        )
    ] == ["Bash(rm -r /srv/7/*)"]


def test_a_file_rule_is_not_a_gate_it_covers_the_other_file_tools_too(tmp_path: Path) -> None:
    path = tmp_path / "edit.json"
    path.write_text(
        json.dumps(
            {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "if": "Edit(src/**)", "command": "true"}]}]}}
        )
    )
    dispatcher = Dispatcher(load_config([str(path)], use_cache=False))
    for tool in ("Edit", "Write", "MultiEdit"):  # `Edit(...)` rules cover every file-editing tool
        event = HookEvent(
            {
                "hook_event_name": "PreToolUse",
                "tool_name": tool,
                "tool_input": {"file_path": "/p/src/a.py"},
                "cwd": "/p",
            }
        )
        assert [s.spec.if_rule for s in dispatcher.select(event)] == ["Edit(src/**)"], tool
