"""Benchmark the shared store: decisions per second through ``hookgate serve`` on PostgreSQL vs SQLite.

Run: ``.venv/bin/python tests/bench/bench_store.py [--seconds 3] [--rounds 3] [--concurrency 16] [--runs 15]``

Starts a throwaway PostgreSQL (Debian's package, as the tests do: ``tests/pg_server.py``, but with
PostgreSQL's durable defaults: fsync and synchronous commit on), migrates a database, then for each scenario (a config whose PreToolUse decision uses state):

(a) serve: one ``hookgate serve`` per store, loaded with ``--concurrency`` keep-alive connections posting
    the same Bash PreToolUse event for ``--seconds``, alternating SQLite and PostgreSQL for ``--rounds``
    rounds (so drift hits both alike); prints decisions/s and p50/p99 latency per store, the ratio, and
    the statements PostgreSQL ran per decision (``pg_stat_statements``, counted by the server: each is
    one round trip for hookgate's autocommit connections).
(b) run: the median wall time of one ``hookgate run`` process per event on each store (``--runs``),
    and the statements per event.

Scenarios: ``rateLimit`` (the builtin, a limit no event reaches: one atomic capped increment per event)
when the builtin exists; ``cache`` (a ``python`` handler with ``cacheTtl``: one cache read per event)
always. Prints numbers; asserts nothing. Numbers are noisy on a shared 2-core machine: compare ratios.
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
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.common import Proc, load, percentile_ms  # noqa: E402
from tests.pg_server import PgServer, start_server  # noqa: E402

PYTHON = sys.executable
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
DENIED = b"deny"
"""An answer containing this fails the bench: the event must pass, or the numbers mean nothing."""


def scenarios() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    try:
        from handlers.builtin import rate_limit  # noqa: F401

        found["rateLimit"] = {
            "type": "builtin",
            "name": "rateLimit",
            "limit": 10**9,
            "window": 3600,
            "per": ["session"],
            "id": "bench-rate",
        }
    except ImportError:
        pass
    found["cache"] = {
        "type": "python",
        "callable": "tests.integration.policy_funcs:deny_rm",
        "cacheTtl": 3600,
        "id": "bench-cache",
    }
    return found


def write_config(work: Path, name: str, handler: dict[str, Any]) -> Path:
    path = work / f"{name}.json"
    path.write_text(
        json.dumps(
            {
                "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [handler]}]},
                "settings": {"stateDir": str(work / f"state-{name}")},
            }
        )
    )
    return path


def bench_serve(pg: PgServer, db: str, config: Path, args: argparse.Namespace) -> dict[str, Any]:
    base_env = {**os.environ, "PYTHONPATH": str(ROOT)}
    envs = {
        "sqlite": {**base_env, "HOOKGATE_STORE_URL": "sqlite"},
        "postgresql": {**base_env, "HOOKGATE_STORE_URL": pg.url(db)},
    }
    totals = {name: [0, 0.0] for name in envs}
    latencies: dict[str, list[float]] = {name: [] for name in envs}
    statements = events = 0
    serve = [PYTHON, "-m", "gateway", "serve", "--config", str(config), "--log-level", "warning"]
    servers = {name: Proc([*serve, "--reload-interval", "0"], env, cwd=ROOT) for name, env in envs.items()}
    try:
        for server in servers.values():
            load(server.port, "/hooks", EVENT, 0.5, args.concurrency, DENIED)  # warm: config, pool, statements
        for _ in range(args.rounds):
            for name, server in servers.items():
                if name == "postgresql":
                    pg.statements_reset(db)
                done, elapsed, lat = load(server.port, "/hooks", EVENT, args.seconds, args.concurrency, DENIED)
                if name == "postgresql":
                    statements += pg.statements(db)
                    events += done
                totals[name][0] += done
                totals[name][1] += elapsed
                latencies[name] += lat
    finally:
        for server in servers.values():
            server.stop()
    out: dict[str, Any] = {}
    for name in envs:
        done, elapsed = totals[name]
        out[name] = {
            "rps": done / elapsed,
            "p50": percentile_ms(latencies[name], 0.5),
            "p99": percentile_ms(latencies[name], 0.99),
        }
    out["statements_per_event"] = statements / events if events else float("nan")
    return out


def bench_run(pg: PgServer, db: str, config: Path, runs: int) -> dict[str, Any]:
    stdin = json.dumps(EVENT).encode()
    base_env = {**os.environ, "PYTHONPATH": str(ROOT)}
    envs = {
        "sqlite": {**base_env, "HOOKGATE_STORE_URL": "sqlite"},
        "postgresql": {**base_env, "HOOKGATE_STORE_URL": pg.url(db)},
    }
    argv = [str(Path(PYTHON).with_name("hookgate")), "run", "--config", str(config)]
    samples: dict[str, list[float]] = {name: [] for name in envs}
    for env in envs.values():
        for _ in range(2):
            subprocess.run(argv, input=stdin, env=env, cwd=ROOT, capture_output=True, check=False)
    pg.statements_reset(db)
    for _ in range(runs):
        for name, env in envs.items():
            started = time.perf_counter()
            proc = subprocess.run(argv, input=stdin, env=env, cwd=ROOT, capture_output=True, check=False)
            samples[name].append(time.perf_counter() - started)
            if proc.returncode != 0:
                raise RuntimeError(f"hookgate run ({name}) exited {proc.returncode}: {proc.stderr.decode()[:300]}")
    out: dict[str, Any] = {name: statistics.median(v) * 1000 for name, v in samples.items()}
    out["statements_per_event"] = pg.statements(db) / runs
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="measured seconds per store per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=16, help="keep-alive connections")
    parser.add_argument("--runs", type=int, default=15, help="hookgate run processes per store")
    args = parser.parse_args()
    pg = start_server(durable=True)  # PostgreSQL's defaults: fsync and synchronous commit on
    try:
        with tempfile.TemporaryDirectory(prefix="hookgate-bench-store-") as tmp:
            work = Path(tmp)
            for name, handler in scenarios().items():
                db = pg.new_database()
                config = write_config(work, name, handler)
                subprocess.run(
                    [PYTHON, "-m", "gateway", "store", "migrate", "--config", str(config)],
                    cwd=ROOT,
                    env={**os.environ, "HOOKGATE_STORE_URL": pg.url(db)},
                    check=True,
                    capture_output=True,
                )
                served = bench_serve(pg, db, config, args)
                ran = bench_run(pg, db, config, args.runs)
                lite, shared = served["sqlite"], served["postgresql"]
                print(f"[{name}] serve, {args.concurrency} connections, {args.rounds}x{args.seconds:g} s per store:")
                print(
                    f"  sqlite      {lite['rps']:8.0f} decisions/s   p50 {lite['p50']:6.2f} ms   "
                    f"p99 {lite['p99']:6.2f} ms"
                )
                print(
                    f"  postgresql  {shared['rps']:8.0f} decisions/s   p50 {shared['p50']:6.2f} ms   "
                    f"p99 {shared['p99']:6.2f} ms"
                )
                print(
                    f"  ratio postgresql/sqlite: {shared['rps'] / lite['rps']:.2f}; "
                    f"PostgreSQL statements per decision: {served['statements_per_event']:.2f}"
                )
                print(
                    f"[{name}] hookgate run, median of {args.runs}: sqlite {ran['sqlite']:.1f} ms, "
                    f"postgresql {ran['postgresql']:.1f} ms (+{ran['postgresql'] - ran['sqlite']:.1f} ms); "
                    f"statements per event: {ran['statements_per_event']:.2f}"
                )
    finally:
        pg.destroy()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
