"""``hookgate demo``: run the sample events shipped in ``configs/demo/`` through a config (the built-in
default unless ``--config`` is given) and print one table row per event."""

from __future__ import annotations

import glob
import json
import os
import textwrap

from gateway.config import default_config_path, find_config_paths, load_config
from gateway.dialects import parse_event
from gateway.events import PassedThrough


def _summary(payload: dict[str, object]) -> str:
    tool_input = payload.get("tool_input")
    if isinstance(tool_input, dict):
        value = tool_input.get("command") or tool_input.get("file_path") or ""
        return f"{payload.get('tool_name')}: {value}"
    return str(payload.get("prompt") or payload.get("hook_event_name"))


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def run_demo(config_paths: list[str] | None = None) -> int:
    """Print the demo table. Returns the exit code (0, or 1 when the config is invalid)."""
    from gateway.context import RunContext
    from gateway.dispatcher import Dispatcher
    from gateway.errors import ConfigError

    paths = find_config_paths(config_paths) if config_paths else [default_config_path()]
    try:
        config = load_config(paths)
    except ConfigError as exc:
        print(f"hookgate: invalid config: {exc.issues[0]}")
        return 1
    folder = os.path.join(os.path.dirname(default_config_path()), "demo")
    if not glob.glob(os.path.join(folder, "*.json")):
        print(f"hookgate: no sample events in {folder} (a broken install?)")
        return 1
    dispatcher, ctx = Dispatcher(config), RunContext(config, mode="run")
    print(f"config: {', '.join(paths)}")
    print(f"{'event':<24} {'tool call':<52} decision")
    print("-" * 100)
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        with open(path, encoding="utf-8") as fh:
            payload = json.load(fh)
        event = parse_event(payload)
        if isinstance(event, PassedThrough):
            continue  # the samples are Claude Code events; none is passed through
        decision = dispatcher.decide(event, ctx, record=False)  # samples, not the user's agent
        verdict: str = decision.permission or ("block" if decision.block else "none")
        if decision.updated_input is not None:
            verdict += "+rewrite"
        reason = decision.permission_reason or decision.reason or ""
        name = os.path.splitext(os.path.basename(path))[0]
        print(f"{name:<24} {_clip(_summary(payload), 52):<52} {verdict}")
        for line in textwrap.wrap(reason, 96):  # the reason in full: it is what the agent and the user read
            print(f"    {line}")
    return 0
