"""Benchmark: the same shell call as Claude Code, Gemini CLI and Codex CLI send it, through `hookgate run`.

Run: `.venv/bin/python tests/bench/bench_hosts.py [--runs N]`. For each host dialect it prints the
median wall time of `hookgate run --dialect HOST` (default config) and the in-process cost of
parse + render, each as a ratio to the Claude Code dialect measured in the same run (the target is
~1.0: a host's dialect must not make a hook slower). Never asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.common import median_ms

BIN = Path(sys.executable).parent / "hookgate"
GEMINI = {"session_id": "b", "transcript_path": "/t", "cwd": "/tmp", "timestamp": "2026-11-29T12:00:00.000Z"}
CODEX = {
    "session_id": "b",
    "turn_id": "t",
    "transcript_path": "/h/sessions/rollout-b.jsonl",
    "cwd": "/tmp",
    "model": "gpt-5.5",
    "permission_mode": "bypassPermissions",
    "tool_use_id": "call_1",
}


def events(command: str) -> dict[str, dict[str, Any]]:
    return {
        "claude": {
            "hook_event_name": "PreToolUse",
            "session_id": "b",
            "cwd": "/tmp",
            "tool_name": "Bash",
            "tool_input": {"command": command},
        },
        "gemini": {
            **GEMINI,
            "hook_event_name": "BeforeTool",
            "tool_name": "run_shell_command",
            "tool_input": {"command": command},
        },
        "codex": {**CODEX, "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command}},
        "kiro": {
            "hook_event_name": "preToolUse",
            "cwd": "/tmp",
            "tool_name": "execute_bash",
            "tool_input": {"command": command},
        },
    }


def in_process_us(dialect: str, event: dict[str, Any], loops: int) -> float:
    from gateway.decision import Decision
    from gateway.dialects import get_dialect, parse_event

    module = get_dialect(dialect)
    decision = Decision(event="PreToolUse", permission="deny", permission_reason="no")
    start = time.perf_counter()
    for _ in range(loops):
        parse_event(dict(event), dialect)
        module.render(decision)
    return (time.perf_counter() - start) / loops * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    env = {**os.environ, "HOOKGATE_CACHE_DIR": tempfile.mkdtemp(prefix="hookgate-bench-")}
    env.pop("HOOKGATE_CONFIG", None)
    for label, command in (
        ("`ls -la` (no handler runs)", "ls -la"),
        ("`rm -rf /srv/app/src` (guard runs, deny)", "rm -rf /srv/app/src"),
    ):
        timings = {}
        for dialect, event in events(command).items():
            stdin = json.dumps(event).encode()
            argv = [str(BIN), "run", "--dialect", dialect]
            subprocess.run(argv, input=stdin, capture_output=True, env=env, check=False)  # warm the config cache
            timings[dialect] = median_ms(argv, stdin, runs, env)
        base = timings["claude"]
        print(
            f"hookgate run, {label}, median of {runs}: "
            + ", ".join(f"{d} {ms:.1f} ms (x{ms / base:.2f})" for d, ms in timings.items())
        )
    loops = 20000
    costs = {d: in_process_us(d, e, loops) for d, e in events("ls -la").items()}
    print(
        "parse + render in process: "
        + ", ".join(f"{d} {us:.1f} us (x{us / costs['claude']:.2f})" for d, us in costs.items())
    )


if __name__ == "__main__":
    main()
