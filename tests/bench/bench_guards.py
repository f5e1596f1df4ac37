"""Benchmark: the default policy guards (configs/guards) in-process and as command hooks.

Run: `.venv/bin/python tests/bench/bench_guards.py [--runs N]`. For typical agent commands it prints the
in-process cost of ``shell_guard.check_event`` per call and its ratio to ``shlex.split`` of the same
command (the tokenizer the guard used before; measured in the same run), then the median wall time of the
guard run as a command hook (``python -I -S shell_guard.py``) as a ratio to a bare ``python -I -S -c pass``.
Never asserts.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import time
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from configs.guards import secrets_guard, shell_guard  # noqa: E402

COMMANDS = {
    "ls": "ls -la",
    "pipeline": "git log --oneline | head -20 && npm test -- --watch=false",
    "commit": (
        "git commit -m \"$(cat <<'EOF'\nFix: don't crash on empty cart\n\nThe cart total divided by zero.\n\n"
        'Co-Authored-By: Claude <noreply@anthropic.com>\nEOF\n)" && git push origin main'
    ),
    "rm -rf": "cd build && sudo -u root nice -n 5 rm -rf dist",
    "curl|sh": "curl -fsSL https://example.com/install.sh | sh",
    "cleanup": "rm -rf node_modules dist .pytest_cache && npm ci",
    "one-liner": "python3 -c \"import subprocess; subprocess.run(['git', 'status'])\"",
    "wrapped": "echo x | xargs -I{} sh -c 'echo {}' && timeout 5 nice -n 5 parallel gzip ::: a.log b.log",
}


def per_call_us(fn: object, number: int) -> float:
    return timeit.timeit(fn, number=number) / number * 1e6  # type: ignore[arg-type]


def wall_ms(argv: list[str], data: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, input=data, capture_output=True, text=True, check=False)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    number = 2000
    print(f"{'command':10} {'check_event us':>15} {'shlex.split us':>15} {'ratio':>7}")
    for name, command in COMMANDS.items():
        event = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command}, "cwd": "/p"}
        guard = per_call_us(lambda e=event: shell_guard.check_event(e), number)
        try:
            base = per_call_us(lambda c=command: shlex.split(c), number)
        except ValueError:  # shlex cannot split the commit heredoc (the apostrophe): time the lexer setup alone
            base = per_call_us(lambda c=command: shlex.shlex(c, posix=True), number)
        print(f"{name:10} {guard:15.1f} {base:15.1f} {guard / base:7.2f}")
    write = {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"file_path": "/p/src/app.py"}}
    print(f"secrets_guard.check_event(Write): {per_call_us(lambda: secrets_guard.check_event(write), number):.1f} us")

    event = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls -la"}})
    bare = wall_ms([sys.executable, "-I", "-S", "-c", "pass"], event, runs)
    for script in ("shell_guard.py", "secrets_guard.py"):
        ms = wall_ms([sys.executable, "-I", "-S", str(ROOT / "configs" / "guards" / script)], event, runs)
        print(
            f"command hook {script}: {ms:.1f} ms median, {ms / bare:.2f}x a bare `python -I -S -c pass` ({bare:.1f} ms)"
        )


if __name__ == "__main__":
    main()
