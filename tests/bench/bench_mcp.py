"""Benchmark: a warm ``mcp_tool`` call (session kept open by ``hookgate serve``) against a fresh MCP session per
call (what ``hookgate run`` pays on every event), both against the shipped policy validator over stdio.

Run: ``.venv/bin/python tests/bench/bench_mcp.py [--warm N] [--fresh N] [--cli N]``. Measured in this run:

- serve (HTTP): ``hookgate serve --config configs/examples/mcp-policy.yaml`` as a subprocess on 127.0.0.1;
  one PreToolUse Bash event POSTed to ``/hooks`` per sample (HTTP + dispatch + the warm MCP call).
- serve (in-process): ``Gateway(mode="serve")``: ``dispatch`` only (the handler path on a warm session).
- fresh session: a new ``Gateway(mode="run")`` per sample: dispatch + ``aclose`` (spawn the validator, MCP
  handshake, one call, stop it), in this process (so ``import mcp`` is already paid).
- ``hookgate run`` end to end (``--cli`` samples; interpreter start and imports included).
- tight loop (``--loop N`` calls, ``--concurrency C`` in flight, ``--sessions S``): ``McpSessions.call_tool``
  straight to the validator, as serve's handler makes it: calls per second and CPU microseconds per call, on
  hookgate's side (this process) and the validator's (its processes, from ``/proc``). CPU per call is the
  figure to compare across runs on a shared machine: calls per second move with the other jobs' load.

Prints p50 / p90 (ms) and the ratio warm / fresh (target: <= 1/50). Never asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from gateway.api import Gateway  # noqa: E402
from gateway.config import load_config  # noqa: E402

CONFIG = str(ROOT / "configs" / "examples" / "mcp-policy.yaml")
EVENT = {
    "hook_event_name": "PreToolUse",
    "session_id": "bench",
    "cwd": str(ROOT),
    "tool_name": "Bash",
    "tool_input": {"command": "git status && ls -la > /tmp/listing.txt"},
    "tool_use_id": "toolu_1",
    "transcript_path": "/dev/null",
    "permission_mode": "default",
}


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def show(label: str, samples: list[float]) -> float:
    p50 = statistics.median(samples)
    print(f"{label:<44} p50 {p50 * 1000:9.2f} ms   p90 {pct(samples, 0.9) * 1000:9.2f} ms   (n={len(samples)})")
    return p50


async def in_process(warm_runs: int, fresh_runs: int) -> tuple[list[float], list[float]]:
    config = load_config([CONFIG])
    warm: list[float] = []
    async with Gateway(config, mode="serve") as gateway:
        first = await gateway.dispatch(EVENT)
        assert first.results[0].status == "ok", first.results[0].message
        for _ in range(warm_runs):
            started = time.perf_counter()
            decision = await gateway.dispatch(EVENT)
            warm.append(time.perf_counter() - started)
            assert decision.results[0].meta.get("session") == "warm"
    fresh: list[float] = []
    for _ in range(fresh_runs):
        started = time.perf_counter()
        gateway = Gateway(config, mode="run")
        decision = await gateway.dispatch(EVENT)
        await gateway.aclose()
        fresh.append(time.perf_counter() - started)
        assert decision.results[0].meta.get("session") == "new", decision.results[0].message
    return warm, fresh


def through_serve(runs: int) -> list[float] | None:
    env = {**os.environ, "HOOKGATE_NO_CACHE": "1"}
    env.pop("HOOKGATE_TOKEN", None)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gateway",
            "serve",
            "--config",
            CONFIG,
            "--port",
            "0",
            "--host",
            "127.0.0.1",
            "--log-level",
            "warning",
        ],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        env=env,
        cwd=ROOT,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline().decode()
        if " on http" not in line:
            print(f"hookgate serve did not start: {line.strip() or proc.wait(10)}")
            return None
        url = line.rsplit(" on ", 1)[1].strip() + "/hooks"
        body = json.dumps(EVENT).encode()

        def post() -> None:
            request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=30) as response:
                response.read()

        post()  # starts the validator
        samples = []
        for _ in range(runs):
            started = time.perf_counter()
            post()
            samples.append(time.perf_counter() - started)
        return samples
    finally:
        proc.terminate()
        proc.wait(10)


def through_cli(runs: int) -> list[float]:
    body = json.dumps(EVENT).encode()
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "gateway", "run", "--config", CONFIG],
            input=body,
            cwd=ROOT,
            capture_output=True,
            check=False,
        )
        samples.append(time.perf_counter() - started)
    return samples


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (``/proc/PID/stat``), 0 when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _children() -> list[int]:
    """This process's child processes (the validators the sessions started)."""
    try:
        with open(f"/proc/{os.getpid()}/task/{os.getpid()}/children", encoding="ascii") as fh:
            return [int(pid) for pid in fh.read().split()]
    except OSError:
        return []


async def tight_loop(calls: int, concurrency: int, sessions: int) -> None:
    from handlers.mcp_sessions import McpSessions

    config = load_config([CONFIG])
    servers = {name: {**server, "sessions": sessions} for name, server in config.mcp_servers.items()}
    manager = McpSessions(servers, mode="serve")
    arguments = {"command": EVENT["tool_input"]["command"], "cwd": str(ROOT), "project_dir": str(ROOT)}
    arguments["hook_event_name"] = "PreToolUse"

    async def worker(n: int) -> None:
        for _ in range(n):
            result, _meta = await manager.call_tool("policy", "check_command", arguments)
            assert not result.is_error

    try:
        await worker(20)
        for _ in range(2):  # under load, so that a pool has grown before the measured window
            await asyncio.gather(*(worker(20) for _ in range(concurrency)))
            await asyncio.sleep(1.0)
        validators = _children()
        each = max(1, calls // concurrency)
        server_cpu, own_cpu, started = sum(map(_cpu_seconds, validators)), time.process_time(), time.perf_counter()
        await asyncio.gather(*(worker(each) for _ in range(concurrency)))
        elapsed, own_cpu = time.perf_counter() - started, time.process_time() - own_cpu
        server_cpu = sum(map(_cpu_seconds, validators)) - server_cpu
    finally:
        await manager.aclose()
    done = each * concurrency
    print(
        f"tight loop, {concurrency} in flight, {len(validators)} validator process(es): {done / elapsed:,.0f} calls/s; "
        f"CPU per call: hookgate {own_cpu / done * 1e6:.0f} us, validator {server_cpu / done * 1e6:.0f} us  (n={done})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm", type=int, default=300, help="warm samples (default 300)")
    parser.add_argument("--fresh", type=int, default=10, help="fresh-session samples (default 10)")
    parser.add_argument("--cli", type=int, default=5, help="'hookgate run' samples (default 5; 0 skips)")
    parser.add_argument("--loop", type=int, default=6000, help="tight-loop calls (default 6000; 0 skips)")
    parser.add_argument("--concurrency", type=int, default=16, help="tight-loop calls in flight (default 16)")
    parser.add_argument("--sessions", type=int, default=1, help="tight-loop pool size (default 1)")
    args = parser.parse_args()
    print(f"validator: configs/validators/policy.py over stdio; event: Bash {EVENT['tool_input']['command']!r}")
    if args.loop:
        asyncio.run(tight_loop(args.loop, 1, args.sessions))
        asyncio.run(tight_loop(args.loop, args.concurrency, args.sessions))
    warm, fresh = asyncio.run(in_process(args.warm, args.fresh))
    served = through_serve(args.warm)
    p_served = show("warm, through hookgate serve (HTTP)", served) if served else None
    p_warm = show("warm, serve-mode Gateway.dispatch", warm)
    p_fresh = show("fresh session per call (Gateway mode=run)", fresh)
    if args.cli:
        show("hookgate run, end to end (process)", through_cli(args.cli))
    if p_served:
        print(f"ratio warm (hookgate serve) / fresh session: 1/{p_fresh / p_served:.0f}   (target <= 1/50)")
    print(f"ratio warm (in-process) / fresh session:     1/{p_fresh / p_warm:.0f}   (target <= 1/50)")


if __name__ == "__main__":
    main()
