"""Benchmark: wall time of `hookgate run` on PreToolUse events vs `python -c "import pydantic"`.

Run: `.venv/bin/python tests/bench/bench_run.py [--runs N]`. Prints medians (ms) and ratios against
the baseline measured in the same run (target for the common case: <= 1.5). Never asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent / "hookgate"
EVENTS = {
    "PreToolUse Bash `ls -la` (default config: the shell guard runs in-process, no decision)": {
        "tool_name": "Bash", "tool_input": {"command": "ls -la"}},
    "PreToolUse Bash `rm -rf src` (default config: the shell guard denies)": {
        "tool_name": "Bash", "tool_input": {"command": "rm -rf src"}},
    "PreToolUse Edit src/app.ts (default config: the secrets guard runs in-process, no decision)": {
        "tool_name": "Edit", "tool_input": {"file_path": "/tmp/p/src/app.ts", "old_string": "a", "new_string": "b"}},
}


def median_ms(argv: list[str], stdin: bytes, runs: int, env: dict[str, str]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, input=stdin, capture_output=True, env=env, check=False)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=25)
    runs = parser.parse_args().runs
    env = {**os.environ, "HOOKGATE_CACHE_DIR": tempfile.mkdtemp(prefix="hookgate-bench-")}
    env.pop("HOOKGATE_CONFIG", None)
    base = median_ms([sys.executable, "-c", "import pydantic"], b"", runs, env)
    print(f"baseline `python -c \"import pydantic\"`: {base:.1f} ms (median of {runs})")
    for label, extra in EVENTS.items():
        event = {"hook_event_name": "PreToolUse", "session_id": "bench", "cwd": "/tmp", **extra}
        stdin = json.dumps(event).encode()
        subprocess.run([str(BIN), "run"], input=stdin, capture_output=True, env=env, check=False)  # warm cache
        ms = median_ms([str(BIN), "run"], stdin, runs, env)
        print(f"{label}: {ms:.1f} ms, ratio {ms / base:.2f}")


if __name__ == "__main__":
    main()
