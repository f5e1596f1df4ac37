"""Benchmark what the audit record costs, against the same setup with ``audit.record: off`` measured
in the same run.

Run: ``.venv/bin/python tests/bench/bench_audit.py [--runs 40] [--seconds 6] [--rounds 6]
[--concurrency 16] [--here] [--json FILE]``

(a) ``hookgate run`` on an allow (PreToolUse Bash ``npm test``, the built-in default policy: its shell
    guard runs in-process, so the event is recorded), round-robin with the same event under
    ``audit.record: off``: the medians, their difference (target: at most 1 ms) and their ratio. Also
    the record step alone, timed inside fresh processes (imports included: what a hook call pays),
    median over ``--runs`` processes.
(b) ``hookgate serve`` throughput on the same event, recording versus ``audit.record: off``, in
    alternating windows (``tests.bench.common.alternate``): target ratio >= 0.95 (no measurable
    cost: records are written in batches by a background thread). The recorded count is checked.

Every process is hookgate from the throwaway venv of ``tests.bench.common.bench_venvs`` (a regular
install) unless ``--here``. Prints numbers; asserts nothing. Timings on a shared machine are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EVENT = {
    "hook_event_name": "PreToolUse",
    "session_id": "bench",
    "transcript_path": "/tmp/t.jsonl",
    "cwd": "/tmp",
    "permission_mode": "default",
    "tool_name": "Bash",
    "tool_input": {"command": "npm test", "description": "run the tests"},
    "tool_use_id": "toolu_bench",
}
RECORD_STEP = """
import json, sys, time
from gateway.cli.run import _load, decide
from gateway.context import RunContext
from gateway.dialects import parse_event
from gateway.dispatcher import Dispatcher
config = _load(sys.argv[1:])
event = parse_event(json.loads(sys.stdin.read()), "auto")
decision = decide(config, event, record=False)
started = time.perf_counter()
ctx = RunContext(config, mode="run")
Dispatcher(config).record(event, decision, ctx)
ctx.close_recorder()
print((time.perf_counter() - started) * 1000)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40, help="runs per hookgate run command")
    parser.add_argument("--seconds", type=float, default=6.0, help="measured seconds per server")
    parser.add_argument("--rounds", type=int, default=6, help="alternating windows")
    parser.add_argument("--concurrency", type=int, default=16, help="keep-alive connections")
    parser.add_argument("--here", action="store_true", help="use this interpreter's hookgate, no throwaway venv")
    parser.add_argument("--json", metavar="FILE", help="add the results to this JSON file")
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT))
    from tests.bench.common import Proc, Results, alternate, bench_venvs, interleaved

    venvs = bench_venvs(args.here)
    work = Path(tempfile.mkdtemp(prefix="hookgate-bench-audit-"))
    env = {**os.environ, "HOOKGATE_CACHE_DIR": str(work / "cache"), "XDG_STATE_HOME": str(work / "state")}
    for name in ("HOOKGATE_SERVER", "HOOKGATE_CONFIG", "HOOKGATE_TOKEN", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE"):
        env.pop(name, None)
    env = {k: v for k, v in env.items() if not k.startswith("OTEL_")}
    off = work / "audit-off.yaml"
    off.write_text('audit: {record: "off"}\n')
    on = work / "audit-on.yaml"
    on.write_text("audit: {record: handled}\n")
    results = Results("audit", notes={"install": venvs.install, "runs": args.runs})
    print(
        f"audit benchmark: {os.cpu_count()} CPU(s), Python {sys.version.split()[0]}, hookgate: {venvs.install}",
        flush=True,
    )
    stdin = json.dumps(EVENT).encode()

    print("\n(a) hookgate run, PreToolUse Bash `npm test` (built-in default policy: the guard runs, no decision)")
    base_cmd = [venvs.hookgate, "run", "--config", "builtin:default", "--config", str(off)]
    rec_cmd = [venvs.hookgate, "run", "--config", "builtin:default", "--config", str(on)]
    medians = interleaved({"off": (base_cmd, stdin), "on": (rec_cmd, stdin)}, args.runs, env)
    delta = medians["on"] - medians["off"]
    print(
        f"  audit off {medians['off']:.1f} ms, recording {medians['on']:.1f} ms: +{delta:.2f} ms (wall, median of "
        f"{args.runs}, round-robin)",
        flush=True,
    )
    results.ratio(
        "run_record",
        "hookgate run allow, recording / audit off",
        medians["on"],
        medians["off"],
        "audit.record: off",
        "ms",
        1.0 + 1.0 / medians["off"],
        higher_is_better=False,
    )
    steps = []
    for _ in range(args.runs):
        done = subprocess.run(
            [venvs.python, "-c", RECORD_STEP, "builtin:default", str(on)],
            input=stdin,
            capture_output=True,
            env=env,
            cwd=str(work),
            check=False,
        )
        if done.returncode == 0:
            steps.append(float(done.stdout.decode().split()[-1]))
    if steps:
        step = statistics.median(steps)
        print(
            f"  the record step alone, in a fresh process (imports, build, redact, spool write): median "
            f"{step:.2f} ms, p90 {sorted(steps)[int(len(steps) * 0.9)]:.2f} ms over {len(steps)} processes "
            f"(target <= 1 ms)",
            flush=True,
        )
        results.notes["record_step_ms"] = step

    print("\n(b) hookgate serve, POST /hooks with the same event (the guard runs, every event is recorded)")
    serve = [
        venvs.hookgate,
        "serve",
        "--log-level",
        "warning",
        "--reload-interval",
        "0",
        "--config",
        "builtin:default",
        "--config",
    ]
    quiet = Proc([*serve, str(off)], env, cwd=str(work))
    loud_env = {**env, "XDG_STATE_HOME": str(work / "state-serve")}
    loud = Proc([*serve, str(on)], loud_env, cwd=str(work))
    try:
        base, result = alternate(
            (quiet.port, "/hooks"), (loud.port, "/hooks"), EVENT, args.seconds, args.rounds, args.concurrency
        )
    finally:
        quiet.stop()
        loud.stop()
    print(
        f"  audit off {base['rps']:,.0f} req/s (p50 {base['p50']:.2f} ms); recording {result['rps']:,.0f} req/s "
        f"(p50 {result['p50']:.2f} ms, p99 {result['p99']:.2f} ms)",
        flush=True,
    )
    results.ratio(
        "serve_record",
        "hookgate serve, recording / audit off",
        result["rps"],
        base["rps"],
        "audit.record: off",
        "req/s",
        0.95,
        higher_is_better=True,
    )
    count = subprocess.run(
        [venvs.hookgate, "audit", "stats", "--json", "--config", "builtin:default", "--config", str(on)],
        capture_output=True,
        env=loud_env,
        cwd=str(work),
        check=False,
    )
    stats = json.loads(count.stdout or b"[]")
    calls = sum(s["calls"] for s in stats)
    print(f"  records written by the recording server: {calls:,} handler calls in the store", flush=True)
    results.notes["serve_recorded_calls"] = calls
    results.save(args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
