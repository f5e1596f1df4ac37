"""Benchmark ``hookgate serve`` and the thin client against baselines measured in the same run.

Run: ``.venv/bin/python tests/bench/bench_serve.py [--seconds 4] [--concurrency 16] [--runs 30]``

(a) Serve: throughput and p50/p99 latency of ``POST /hooks`` with a PreToolUse event, under a fixed
    number of keep-alive connections, for (1) a config with no matching hooks and (2) one ``http``
    handler to a local receiver (a Starlette app answering 200 with an empty body), each as a ratio
    against a bare Starlette endpoint that echoes the JSON body, run under the same uvicorn settings and
    the same load right before it. Targets: >= 0.6 and >= 0.4 of the echo throughput.
(b) Thin client: median wall time of ``hookgate run --server URL`` (the console script) and of the
    standalone ``python -I -S gateway/client.py URL``, against ``python -S -c pass`` (target <= 3x)
    and against the in-process ``hookgate run`` with the same config.

Every server is a subprocess on 127.0.0.1; the load generator is this process (asyncio streams, one
request in flight per connection). Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
HOOKGATE_SCRIPT = str(Path(PYTHON).with_name("hookgate"))
EVENT = {"hook_event_name": "PreToolUse", "session_id": "bench", "transcript_path": "/tmp/t.jsonl",
         "cwd": "/tmp", "permission_mode": "default", "tool_name": "Bash",
         "tool_input": {"command": "npm test", "description": "run the tests"}, "tool_use_id": "toolu_bench"}
UVICORN_SETTINGS = {"log_level": "warning", "access_log": False, "loop": "asyncio", "server_header": False}


# ---------------------------------------------------------------------------- helper servers


def run_echo(port: int) -> None:
    """The baseline: a bare Starlette endpoint that parses and echoes the JSON body."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    async def echo(request: Request) -> Response:
        body = json.loads(await request.body())
        return Response(json.dumps(body).encode(), media_type="application/json")

    app = Starlette(routes=[Route("/echo", echo, methods=["POST"])])
    uvicorn.run(app, host="127.0.0.1", port=port, **UVICORN_SETTINGS)  # type: ignore[arg-type]


def run_receiver(port: int) -> None:
    """The webhook the http handler calls: reads the body, answers 200 with no decision."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    async def hook(request: Request) -> Response:
        await request.body()
        return Response(b"")

    app = Starlette(routes=[Route("/hook", hook, methods=["POST"])])
    uvicorn.run(app, host="127.0.0.1", port=port, **UVICORN_SETTINGS)  # type: ignore[arg-type]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_port(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listening on {port}")


class Proc:
    """A server subprocess, stopped with SIGTERM."""

    def __init__(self, argv: list[str], env: dict[str, str], port: int) -> None:
        self.proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        self.port = port
        wait_port(port)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def start_helper(kind: str, env: dict[str, str]) -> Proc:
    port = free_port()
    return Proc([PYTHON, __file__, f"--serve-{kind}", str(port)], env, port)


def start_hookgate(config: Path, env: dict[str, str]) -> Proc:
    port = free_port()
    return Proc([PYTHON, "-m", "gateway", "serve", "--config", str(config), "--port", str(port),
                 "--log-level", "warning", "--reload-interval", "0"], env, port)


# ---------------------------------------------------------------------------- load generator


async def _connection(port: int, request: bytes, stop_at: float, latencies: list[float]) -> int:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    done = 0
    try:
        while time.perf_counter() < stop_at:
            started = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            match = re.search(rb"(?i)content-length:\s*(\d+)", head)
            if not head.startswith(b"HTTP/1.1 200") or match is None:
                raise RuntimeError(f"unexpected answer: {head[:200]!r}")
            await reader.readexactly(int(match.group(1)))
            latencies.append(time.perf_counter() - started)
            done += 1
    finally:
        writer.close()
    return done


async def _load(port: int, path: str, seconds: float, concurrency: int) -> tuple[float, list[float]]:
    body = json.dumps(EVENT).encode()
    request = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    warm: list[float] = []
    await asyncio.gather(*(_connection(port, request, time.perf_counter() + 0.5, warm) for _ in range(concurrency)))
    latencies: list[float] = []
    started = time.perf_counter()
    counts = await asyncio.gather(*(_connection(port, request, started + seconds, latencies)
                                    for _ in range(concurrency)))
    return sum(counts) / (time.perf_counter() - started), latencies


def load(port: int, path: str, seconds: float, concurrency: int) -> dict[str, float]:
    rps, latencies = asyncio.run(_load(port, path, seconds, concurrency))
    latencies.sort()
    return {"rps": rps, "p50": latencies[len(latencies) // 2] * 1000,
            "p99": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000}


# ---------------------------------------------------------------------------- thin client


def wall(argv: list[str], stdin: bytes, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, input=stdin, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def thin_client(commands: dict[str, list[str]], env: dict[str, str], runs: int) -> dict[str, float]:
    stdin = json.dumps(EVENT).encode()
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for argv in commands.values():  # warm the page cache, .pyc files and the config cache
        for _ in range(2):
            wall(argv, stdin, env)
    for _ in range(runs):  # round-robin so drift hits every command alike
        for name, argv in commands.items():
            samples[name].append(wall(argv, stdin, env))
    return {name: statistics.median(values) * 1000 for name, values in samples.items()}


# ---------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="measured seconds per load scenario")
    parser.add_argument("--concurrency", type=int, default=16, help="keep-alive connections")
    parser.add_argument("--runs", type=int, default=30, help="runs per thin-client command")
    parser.add_argument("--serve-echo", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--serve-receiver", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_echo:
        run_echo(args.serve_echo)
        return 0
    if args.serve_receiver:
        run_receiver(args.serve_receiver)
        return 0

    work = Path(tempfile.mkdtemp(prefix="hookgate-bench-"))
    env = {**os.environ, "HOOKGATE_CACHE_DIR": str(work / "cache"), "XDG_STATE_HOME": str(work / "state"),
           "PYTHONPATH": str(ROOT)}
    env.pop("HOOKGATE_SERVER", None)
    receiver = start_helper("receiver", env)
    nomatch = work / "nomatch.json"
    nomatch.write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "true"}]}]}}))
    http = work / "http.json"
    http.write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "http", "url": f"http://127.0.0.1:{receiver.port}/hook"}]}]}}))
    print(f"hookgate serve benchmark: {os.cpu_count()} CPU(s), Python {sys.version.split()[0]}, "
          f"{args.concurrency} connections, {args.seconds:g} s per scenario")

    rows: list[tuple[str, dict[str, float], dict[str, float]]] = []
    try:
        for label, config in (("no matching hooks", nomatch), ("one http handler", http)):
            echo = start_helper("echo", env)
            try:
                base = load(echo.port, "/echo", args.seconds, args.concurrency)
            finally:
                echo.stop()
            served = start_hookgate(config, env)
            try:
                result = load(served.port, "/hooks", args.seconds, args.concurrency)
            finally:
                served.stop()
            rows.append((label, base, result))

        print("\n(a) serve: POST /hooks, PreToolUse")
        print(f"  {'scenario':<22} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8}   {'echo req/s':>10} {'p50':>6} "
              f"{'p99':>6}   {'ratio':>6}  target")
        for (label, base, result), target in zip(rows, (0.6, 0.4), strict=True):
            ratio = result["rps"] / base["rps"]
            print(f"  {label:<22} {result['rps']:8.0f} {result['p50']:8.2f} {result['p99']:8.2f}   "
                  f"{base['rps']:10.0f} {base['p50']:6.2f} {base['p99']:6.2f}   {ratio:6.2f}  >= {target} "
                  f"{'ok' if ratio >= target else 'MISSED'}")

        served = start_hookgate(nomatch, env)
        try:
            url = f"http://127.0.0.1:{served.port}"
            commands = {
                "python -S -c pass": [PYTHON, "-S", "-c", "pass"],
                "python -c pass": [PYTHON, "-c", "pass"],
                "hookgate run --server (console script)": [HOOKGATE_SCRIPT, "run", "--server", url],
                "python -I -S gateway/client.py": [PYTHON, "-I", "-S", str(ROOT / "gateway" / "client.py"), url],
                "hookgate run (in-process, no match)": [HOOKGATE_SCRIPT, "run", "--config", str(nomatch)],
                "hookgate run (in-process, http handler)": [HOOKGATE_SCRIPT, "run", "--config", str(http)],
            }
            times = thin_client(commands, env, args.runs)
        finally:
            served.stop()
    finally:
        receiver.stop()

    base = times["python -S -c pass"]
    inproc = times["hookgate run (in-process, no match)"]
    print(f"\n(b) thin client: median wall time of {args.runs} runs each (same PreToolUse event on stdin)")
    print(f"  {'command':<42} {'ms':>7} {'x python -S':>12} {'x in-process':>13}")
    for name, ms in times.items():
        print(f"  {name:<42} {ms:7.1f} {ms / base:12.2f} {ms / inproc:13.2f}")
    for name in ("hookgate run --server (console script)", "python -I -S gateway/client.py"):
        ratio = times[name] / base
        print(f"  {name}: {ratio:.2f}x python -S -c pass (target <= 3): {'ok' if ratio <= 3 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
