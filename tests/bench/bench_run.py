"""Benchmark: ``hookgate run`` (built-in default policy) against a single-purpose hook written with cchooks.

Run: ``.venv/bin/python tests/bench/bench_run.py [--runs N] [--here] [--json FILE]``.

Both run from throwaway venvs (``tests.bench.common.bench_venvs``): hookgate installed with
``pip install .`` (not editable), and the cchooks hook (``common.CCHOOKS_HOOK``: parse the event with
``cchooks.create_context``, one rm -rf regex, deny or say nothing) in a venv of its own. Every command
gets the same full Claude Code PreToolUse event on stdin and runs round-robin with the others, so the
ratios are measured in the same run under the same load. Targets (issue 15):

- allow: ``hookgate run --dialect claude`` (the hook command ``hookgate install --host claude`` writes) on ``ls -la`` (the default policy's guards run in-process, no decision)
  <= 1.2x the cchooks hook on the same event;
- deny: ``hookgate run`` on ``rm -rf /srv/app/src`` (the shell guard denies) <= 1.15x the allow.

Each command's CPU time (user + system, from ``os.wait4``) is measured too and the allow ratio is also
given on it: other jobs on a shared machine stretch wall times (the bigger process more), CPU times far less.

Also printed: an Edit (the secrets guard runs), ``python -S -c pass`` and ``python -c pass`` of the same
interpreter. Never asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.common import Results, bench_venvs, interleaved_times, median_ms

__all__ = ["main", "median_ms"]

BASE_EVENT = {
    "hook_event_name": "PreToolUse",
    "session_id": "bench",
    "transcript_path": "/tmp/bench.jsonl",
    "cwd": "/tmp",
    "permission_mode": "default",
    "tool_use_id": "toolu_bench",
}


def event(tool: str, tool_input: dict[str, str]) -> bytes:
    return json.dumps({**BASE_EVENT, "tool_name": tool, "tool_input": tool_input}).encode()


ALLOW = event("Bash", {"command": "ls -la", "description": "list files"})
DENY = event("Bash", {"command": "rm -rf /srv/app/src", "description": "clean"})
EDIT = event("Edit", {"file_path": "/tmp/p/src/app.ts", "old_string": "a", "new_string": "b"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40, help="runs per command (round-robin)")
    parser.add_argument("--here", action="store_true", help="use this interpreter's hookgate, no throwaway venv")
    parser.add_argument("--json", metavar="FILE", help="add the results to this JSON file")
    args = parser.parse_args()
    venvs = bench_venvs(args.here)
    env = {**os.environ, "HOOKGATE_CACHE_DIR": tempfile.mkdtemp(prefix="hookgate-bench-")}
    for name in ("HOOKGATE_CONFIG", "HOOKGATE_SERVER", "PYTHONPATH"):
        env.pop(name, None)
    hookgate = [venvs.hookgate, "run", "--dialect", "claude"]  # the command `hookgate install --host claude` writes
    cchooks = [venvs.cchooks_python, venvs.cchooks_hook]
    commands = {
        "python -S -c pass": ([venvs.python, "-S", "-c", "pass"], b""),
        "python -c pass": ([venvs.python, "-c", "pass"], b""),
        "cchooks hook, allow (ls -la)": (cchooks, ALLOW),
        "cchooks hook, deny (rm -rf /srv/app/src)": (cchooks, DENY),
        "hookgate run, allow (ls -la)": (hookgate, ALLOW),
        "hookgate run, deny (rm -rf /srv/app/src)": (hookgate, DENY),
        "hookgate run, Edit (secrets guard)": (hookgate, EDIT),
        "hookgate run, allow, no --dialect (auto)": ([venvs.hookgate, "run"], ALLOW),
    }
    print(
        f"hookgate run vs a cchooks hook: {os.cpu_count()} CPU(s), Python {sys.version.split()[0]}, "
        f"hookgate: {venvs.install}; {args.runs} round-robin runs per command (medians)"
    )
    times, cpu = interleaved_times(commands, args.runs, env)
    bare = times["python -S -c pass"]
    print(f"  {'':<40} {'wall':>10}   {'':<22}  {'CPU (user+sys)':>14}")
    for name, ms in times.items():
        print(f"  {name:<40} {ms:7.1f} ms   {ms / bare:5.2f}x python -S -c pass  {cpu[name]:9.1f} ms")
    results = Results("run", notes={"runs": args.runs, "install": venvs.install, "python -S -c pass ms": bare})
    allow = times["hookgate run, allow (ls -la)"]
    results.ratio(
        "run_allow",
        "hookgate run allow / cchooks hook",
        allow,
        times["cchooks hook, allow (ls -la)"],
        "cchooks hook",
        "ms",
        1.2,
        higher_is_better=False,
    )
    results.ratio(
        "run_allow_cpu",
        "hookgate run allow / cchooks hook, CPU time",
        cpu["hookgate run, allow (ls -la)"],
        cpu["cchooks hook, allow (ls -la)"],
        "cchooks hook",
        "ms",
        1.2,
        higher_is_better=False,
    )
    results.ratio(
        "run_deny",
        "hookgate run deny / hookgate run allow",
        times["hookgate run, deny (rm -rf /srv/app/src)"],
        allow,
        "hookgate run allow",
        "ms",
        1.15,
        higher_is_better=False,
    )
    results.save(args.json)


if __name__ == "__main__":
    main()
