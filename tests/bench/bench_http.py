"""Benchmark the ``http`` handler's delivery in-process, against a bare aiohttp POST measured in the same run.

Run: ``.venv/bin/python tests/bench/bench_http.py [--calls 3000] [--rounds 4]``

One receiver subprocess (``bench_serve.py --serve-receiver``: a Starlette app under uvicorn answering 200
with an empty body, as in the serve benchmark's ``http`` scenario) on 127.0.0.1; in this process, one
at a time and alternating in ``--rounds`` rounds (order flipped every round):

- ``bare``: ``aiohttp.ClientSession.post`` of the event's bytes with a ``Content-Type`` header, the answer
  read (the least any aiohttp client pays for one delivery);
- ``handler``: ``HttpHandler.run`` on the same event (host payload, webhook headers, SSRF checks, the
  pooled session, reading the answer into a Verdict);
- ``dispatch``: ``Gateway.dispatch`` of the event to a config holding that one handler, ``audit.record:
  off`` (adds selection, the attempt with its ``asyncio.timeout``, merge).

Prints CPU time per call (``time.process_time``: this process's, all threads) of each, the median over
rounds, and the handler's and the dispatch's overhead over ``bare``. Asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.bench_serve import EVENT  # noqa: E402
from tests.bench.common import Proc  # noqa: E402


async def cpu_per_call(call: Callable[[], Awaitable[object]], calls: int) -> float:
    """CPU microseconds per ``await call()`` over ``calls`` calls."""
    started = time.process_time()
    for _ in range(calls):
        await call()
    return (time.process_time() - started) / calls * 1e6


async def measure(port: int, calls: int, rounds: int, work: Path) -> dict[str, list[float]]:
    import aiohttp

    from gateway.api import Gateway
    from gateway.config import load_config
    from gateway.dialects import parse_event
    from gateway.events import HookEvent

    url = f"http://127.0.0.1:{port}/hook"
    config = work / "http.json"
    config.write_text(
        json.dumps(
            {
                "audit": {"record": "off"},
                "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "http", "url": url}]}]},
            }
        )
    )
    gateway = Gateway(load_config([str(config)], use_cache=False), mode="serve")
    event = parse_event(dict(EVENT), "claude")
    assert isinstance(event, HookEvent)
    handler = gateway.dispatcher.handler(gateway.config.hooks["PreToolUse"][0].handlers[0])
    body = json.dumps(EVENT, separators=(",", ":")).encode()
    headers = {"Content-Type": "application/json"}
    session = aiohttp.ClientSession()

    async def bare() -> None:
        async with session.post(url, data=body, headers=headers) as answer:
            await answer.read()

    async def deliver() -> None:
        await handler.run(event, gateway.context)

    async def dispatch() -> None:
        await gateway.dispatch(event)

    sides: dict[str, Callable[[], Awaitable[object]]] = {"bare": bare, "handler": deliver, "dispatch": dispatch}
    results: dict[str, list[float]] = {name: [] for name in sides}
    try:
        for call in sides.values():  # warm up: connections pooled, code paths imported
            await cpu_per_call(call, 300)
        for round_ in range(rounds):
            order = list(sides) if round_ % 2 == 0 else list(reversed(sides))
            for name in order:
                results[name].append(await cpu_per_call(sides[name], calls))
            print("  round", round_ + 1, "  ".join(f"{n} {results[n][-1]:.1f}" for n in sides), flush=True)
    finally:
        await session.close()
        await gateway.aclose()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000, help="calls per side per round")
    parser.add_argument("--rounds", type=int, default=4, help="alternating rounds")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="hookgate-bench-http-"))
    os.environ.setdefault("HOOKGATE_CACHE_DIR", str(work / "cache"))
    os.environ.setdefault("HOOKGATE_STATE_DIR", str(work / "state"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    receiver = Proc([sys.executable, __file__.replace("bench_http.py", "bench_serve.py"), "--serve-receiver"], env)
    try:
        print(f"http handler delivery, CPU us per call (one at a time, {args.calls} calls x {args.rounds} rounds)")
        results = asyncio.run(measure(receiver.port, args.calls, args.rounds, work))
    finally:
        receiver.stop()
    median = {name: statistics.median(values) for name, values in results.items()}
    print(
        f"bare aiohttp POST {median['bare']:.1f} us; handler {median['handler']:.1f} us "
        f"(+{median['handler'] - median['bare']:.1f}); dispatch, audit off {median['dispatch']:.1f} us "
        f"(+{median['dispatch'] - median['bare']:.1f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
