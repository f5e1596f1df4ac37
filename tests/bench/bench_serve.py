"""Benchmark ``hookgate serve`` and the thin client against baselines measured in the same run.

Run: ``.venv/bin/python tests/bench/bench_serve.py [--seconds 6] [--rounds 6] [--concurrency 16] [--runs 40]
[--here] [--json FILE] [--only NAME ...]``

(a) Serve throughput: ``POST /hooks`` with a PreToolUse Bash event (``npm test``) under a fixed number
    of keep-alive connections (one request in flight on each), against a bare Starlette endpoint that
    parses and echoes the JSON body (same uvicorn settings). Baseline and subject run side by side, and
    the load alternates between them in ``--rounds`` windows (order flipped every round), so drift from
    other processes on the machine hits both alike; the ratio is the median over rounds of the two
    adjacent windows' throughputs (the figures shown are the median windows).
    Scenarios and targets (issue 15): no matching hook >= 0.85; the built-in default policy (the
    in-process shell guard runs) >= 0.8; one ``http`` handler to a local receiver (a Starlette app
    answering 200 with an empty body) >= 0.45; one warm ``mcp_tool`` (configs/examples/mcp-policy.yaml,
    the policy validator over stdio) >= 0.35; and, with ``hookgate serve`` on one ``if``-rule group as
    the baseline, 1,000 such groups (``matcher: Bash``, ``if: Bash(rm -r /srv/N/*)``, none fits) >= 0.5.
    The default policy, ``http`` and ``mcp_tool`` scenarios record every event (``audit.record: handled``,
    the default); ``noaudit`` measures them again with ``audit.record: off``, to show what the record costs.
    For the ``http`` and ``mcp_tool`` rows the same work is also measured without hookgate, as the floor
    these libraries set on this machine: a bare Starlette endpoint (same uvicorn settings) that passes each
    event on, with one pooled aiohttp session to the receiver (``--serve-forwarder``), or with one warm MCP
    SDK ``Client`` to the validator's ``check_command`` (``--serve-mcp-forwarder``); it runs against the
    echo and against hookgate, each in alternating windows, and both ratios are printed and saved.
(b) Fan-out: one event through ``hookgate serve`` to 64 ``http`` handlers whose receiver answers after
    200 ms: median latency within 1.1x of 200 ms. Measured in alternation with the same 64 POSTs made at
    once by a bare aiohttp session of this process (what any client pays on this machine now), so the
    figure can be read against what the machine allows at the time.
(c) Thin client: median wall time of ``hookgate run --server URL`` (the console script of a regular
    install) against ``python -S -c pass``, round-robin: target <= 2.0. Also shown: the standalone
    ``python -I -S gateway/client.py`` and the in-process ``hookgate run`` with the same config.

Every server is a subprocess on 127.0.0.1 (hookgate from the throwaway venv of
``tests.bench.common.bench_venvs``, unless ``--here``); the load generator is this process (asyncio
streams). Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
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

from tests.bench.common import Proc, Results, alternate, bench_venvs, interleaved, loadgen, window  # noqa: E402

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
UVICORN_SETTINGS = {"log_level": "warning", "access_log": False, "loop": "asyncio", "server_header": False}
FANOUT, FANOUT_DELAY = 64, 0.2


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
    """The webhook the http handlers call: reads the body, answers 200 with no decision (``/slow/N``
    after 200 ms)."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    async def hook(request: Request) -> Response:
        await request.body()
        return Response(b"")

    async def slow(request: Request) -> Response:
        await request.body()
        await asyncio.sleep(FANOUT_DELAY)
        return Response(b"")

    app = Starlette(routes=[Route("/hook", hook, methods=["POST"]), Route("/slow/{n}", slow, methods=["POST"])])
    uvicorn.run(app, host="127.0.0.1", port=port, **UVICORN_SETTINGS)  # type: ignore[arg-type]


def run_forwarder(port: int, target: str) -> None:
    """The ``http`` row's floor: the least a server pays to pass an event on to a webhook with these
    libraries. A bare Starlette endpoint (same uvicorn settings as the echo) that parses the JSON body,
    POSTs it again with one pooled aiohttp session to ``target``, reads the answer and answers ``{}``: no
    hookgate code at all."""
    import aiohttp
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    sessions: list[aiohttp.ClientSession] = []

    async def forward(request: Request) -> Response:
        if not sessions:
            sessions.append(aiohttp.ClientSession())
        body = json.loads(await request.body())
        data = json.dumps(body).encode()
        async with sessions[0].post(target, data=data, headers={"Content-Type": "application/json"}) as answer:
            await answer.read()
        return Response(b"{}", media_type="application/json")

    app = Starlette(routes=[Route("/forward", forward, methods=["POST"])])
    uvicorn.run(app, host="127.0.0.1", port=port, **UVICORN_SETTINGS)  # type: ignore[arg-type]


def run_mcp_forwarder(port: int) -> None:
    """The ``mcp_tool`` row's floor: a bare Starlette endpoint (same uvicorn settings) that calls the shipped
    validator's ``check_command`` with one warm MCP SDK ``Client`` (the SDK's own stdio transport, the
    handshake era, as hookgate speaks it) and answers ``{}``: no hookgate code on the request path."""
    import uvicorn
    from mcp import Client, StdioServerParameters
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    validator = StdioServerParameters(
        command=sys.executable, args=["-I", str(ROOT / "configs" / "validators" / "policy.py")]
    )
    clients: list[Any] = []

    async def forward(request: Request) -> Response:
        body = json.loads(await request.body())
        if not clients:
            client = Client(validator, mode="legacy")
            await client.__aenter__()  # kept open for the server's life (the bench stops it with SIGTERM)
            clients.append(client)
        arguments = {
            "command": body["tool_input"]["command"],
            "cwd": body["cwd"],
            "project_dir": body["cwd"],
            "hook_event_name": body["hook_event_name"],
        }
        await clients[0].call_tool("check_command", arguments)
        return Response(b"{}", media_type="application/json")

    app = Starlette(routes=[Route("/forward", forward, methods=["POST"])])
    uvicorn.run(app, host="127.0.0.1", port=port, **UVICORN_SETTINGS)  # type: ignore[arg-type]


def fanout_latencies(port: int, receiver: int, runs: int) -> tuple[float, float]:
    """Median latency (ms) of one event through ``hookgate serve`` to the fan-out config, and of the same 64
    POSTs sent at once by a bare aiohttp session, measured one after the other ``runs`` times."""
    import aiohttp

    served: list[float] = []
    bare: list[float] = []
    body = json.dumps(EVENT).encode()

    async def go() -> None:
        connector = aiohttp.TCPConnector(limit=FANOUT * 2)
        async with aiohttp.ClientSession(connector=connector) as session:

            async def one(n: int) -> None:
                url = f"http://127.0.0.1:{receiver}/slow/{n}"
                async with session.post(url, data=body, headers={"Content-Type": "application/json"}) as answer:
                    await answer.read()

            async def fan_out() -> None:
                await asyncio.gather(*(one(n) for n in range(FANOUT)))

            for _ in range(2):  # warm up: both pools hold their 64 connections
                await window(port, "/hooks", EVENT, 0.001, 1, [])
                await fan_out()
            for i in range(runs):
                for side in ("served", "bare") if i % 2 == 0 else ("bare", "served"):
                    if side == "served":
                        await window(port, "/hooks", EVENT, 0.001, 1, served)
                    else:
                        started = time.perf_counter()
                        await fan_out()
                        bare.append(time.perf_counter() - started)

    asyncio.run(go())
    return statistics.median(served) * 1000, statistics.median(bare) * 1000


# ---------------------------------------------------------------------------- configs


def write_configs(work: Path, receiver_port: int) -> dict[str, Path]:
    configs: dict[str, object] = {
        "nomatch": {
            "hooks": {"PreToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "true"}]}]}
        },
        "http": {
            "hooks": {
                "PreToolUse": [
                    {"matcher": "Bash", "hooks": [{"type": "http", "url": f"http://127.0.0.1:{receiver_port}/hook"}]}
                ]
            }
        },
        "fanout": {
            "hooks": {
                "PreToolUse": [
                    {
                        "matcher": "Bash",
                        "hooks": [
                            {"type": "http", "url": f"http://127.0.0.1:{receiver_port}/slow/{n}", "timeout": 10}
                            for n in range(FANOUT)
                        ],
                    }
                ]
            }
        },
    }
    for count in (1, 1000):
        configs[f"if{count}"] = {
            "hooks": {
                "PreToolUse": [
                    {
                        "matcher": "Bash",
                        "hooks": [{"type": "command", "if": f"Bash(rm -r /srv/{n}/*)", "command": "true"}],
                    }
                    for n in range(count)
                ]
            }
        }
    paths = {}
    for name, config in configs.items():
        paths[name] = work / f"{name}.json"
        paths[name].write_text(json.dumps(config))
    return paths


# ---------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0, help="measured seconds per server per scenario")
    parser.add_argument("--rounds", type=int, default=6, help="alternating windows per scenario")
    parser.add_argument("--concurrency", type=int, default=16, help="keep-alive connections")
    parser.add_argument("--runs", type=int, default=40, help="runs per thin-client command / fan-out events")
    parser.add_argument("--here", action="store_true", help="use this interpreter's hookgate, no throwaway venv")
    parser.add_argument("--json", metavar="FILE", help="add the results to this JSON file")
    parser.add_argument(
        "--only",
        nargs="*",
        help="scenarios: nomatch default http mcp noaudit (those three again, no audit) if fanout thin",
    )
    parser.add_argument("--serve-echo", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--serve-receiver", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--forward-to", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--serve-forwarder", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--serve-mcp-forwarder", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_echo:
        run_echo(args.serve_echo)
        return 0
    if args.serve_receiver:
        run_receiver(args.serve_receiver)
        return 0
    if args.serve_forwarder:
        run_forwarder(args.serve_forwarder, args.forward_to)
        return 0
    if args.serve_mcp_forwarder:
        run_mcp_forwarder(args.serve_mcp_forwarder)
        return 0

    venvs = bench_venvs(args.here)
    wanted = set(args.only or ("nomatch", "default", "http", "mcp", "noaudit", "if", "fanout", "thin"))
    work = Path(tempfile.mkdtemp(prefix="hookgate-bench-"))
    env = {**os.environ, "HOOKGATE_CACHE_DIR": str(work / "cache"), "XDG_STATE_HOME": str(work / "state")}
    for name in ("HOOKGATE_SERVER", "HOOKGATE_CONFIG", "HOOKGATE_TOKEN", "PYTHONPATH"):
        env.pop(name, None)
    helper = [venvs.python, __file__]
    hookgate_serve = [venvs.hookgate, "serve", "--log-level", "warning", "--reload-interval", "0", "--config"]
    results = Results(
        "serve",
        notes={
            "concurrency": args.concurrency,
            "seconds": args.seconds,
            "rounds": args.rounds,
            "install": venvs.install,
            "loadgen": loadgen(),
        },
    )
    print(
        f"hookgate serve benchmark: {os.cpu_count()} CPU(s), Python {sys.version.split()[0]}, hookgate: "
        f"{venvs.install}; {args.concurrency} connections, {args.seconds:g} s per server in {args.rounds} "
        f"alternating windows; load generator: {loadgen()}",
        flush=True,
    )

    receiver = Proc([*helper, "--serve-receiver"], env)
    echo = Proc([*helper, "--serve-echo"], env)
    configs = write_configs(work, receiver.port)
    mcp_config = str(ROOT / "configs" / "examples" / "mcp-policy.yaml")

    audit_off = work / "audit-off.json"
    audit_off.write_text(json.dumps({"audit": {"record": "off"}}))

    def versus_echo(
        key: str, label: str, config: str, target: float, *, record: bool = True, floor: list[str] | None = None
    ) -> None:
        """``config`` served against the echo; with ``floor`` (the argv of a bare forwarder server, no
        hookgate), that server is measured too, against the echo and against hookgate, in the same run."""
        extra = [] if record else ["--config", str(audit_off)]  # merged over the config: no audit records
        if not record:
            key, label = f"{key}_noaudit", f"{label}, audit.record off"
        served = Proc([*hookgate_serve, config, *extra], env, cwd=str(work))
        bare: Proc | None = None
        try:
            base, result = alternate(
                (echo.port, "/echo"),
                (served.port, "/hooks"),
                EVENT,
                args.seconds,
                args.rounds,
                args.concurrency,
                pids=(echo.proc.pid, served.proc.pid),
            )
            if floor is not None:
                bare = Proc(floor, env, cwd=str(work))
                _, alone = alternate(
                    (echo.port, "/echo"), (bare.port, "/forward"), EVENT, args.seconds, args.rounds, args.concurrency
                )
                _, versus = alternate(
                    (bare.port, "/forward"), (served.port, "/hooks"), EVENT, args.seconds, args.rounds, args.concurrency
                )
        except (OSError, RuntimeError, asyncio.IncompleteReadError) as exc:  # one scenario, not the whole run
            print(f"  {label}: not measured ({type(exc).__name__}: {exc})", flush=True)
            return
        finally:
            served.stop()
            if bare is not None:
                bare.stop()
        print(
            f"  {label}: {result['rps']:,.0f} req/s, p50 {result['p50']:.2f} ms, p99 {result['p99']:.2f} ms, "
            f"CPU {result.get('cpu_us', 0):.0f} us/req ({result.get('cpu_children_us', 0):.0f} of it in child "
            f"processes); echo {base['rps']:,.0f} req/s, p50 {base['p50']:.2f} ms, "
            f"CPU {base.get('cpu_us', 0):.0f} us/req",
            flush=True,
        )
        results.notes[f"{key} cpu us/req"] = round(result.get("cpu_us", 0), 1)
        results.notes[f"{key} child cpu us/req"] = round(result.get("cpu_children_us", 0), 1)
        results.notes[f"{key} echo cpu us/req"] = round(base.get("cpu_us", 0), 1)
        if floor is not None:
            print(
                f"  the same work without hookgate (a bare Starlette endpoint passing the event on): "
                f"{alone['ratio']:.2f} of the echo; hookgate {versus['ratio']:.2f} of that bare server",
                flush=True,
            )
            results.notes[f"{key} floor/echo"] = round(alone["ratio"], 3)
            results.notes[f"{key} serve/floor"] = round(versus["ratio"], 3)
        results.ratio(
            key,
            f"serve, {label} / echo",
            result["rps"],
            base["rps"],
            "Starlette JSON echo",
            "req/s",
            target,
            higher_is_better=True,
            ratio=result["ratio"],
        )

    try:
        print("\n(a) serve: POST /hooks, PreToolUse Bash")
        if "nomatch" in wanted:
            versus_echo("serve_nomatch", "no matching hook", str(configs["nomatch"]), 0.85)
        for record in (True, False) if "noaudit" in wanted else (True,):  # what the audit record costs, apart
            if "default" in wanted:
                versus_echo("serve_default", "default policy", "builtin:default", 0.8, record=record)
            if "http" in wanted:
                forwarder = [*helper, "--forward-to", f"http://127.0.0.1:{receiver.port}/hook", "--serve-forwarder"]
                versus_echo(
                    "serve_http",
                    "one http handler",
                    str(configs["http"]),
                    0.45,
                    record=record,
                    floor=forwarder if record else None,
                )
            if "mcp" in wanted:
                floor = [*helper, "--serve-mcp-forwarder"] if record else None
                versus_echo("serve_mcp", "one warm mcp_tool", mcp_config, 0.35, record=record, floor=floor)
        if "if" in wanted:
            one = Proc([*hookgate_serve, str(configs["if1"])], env, cwd=str(work))
            many = Proc([*hookgate_serve, str(configs["if1000"])], env, cwd=str(work))
            try:
                base, result = alternate(
                    (one.port, "/hooks"),
                    (many.port, "/hooks"),
                    EVENT,
                    args.seconds,
                    args.rounds,
                    args.concurrency,
                    pids=(one.proc.pid, many.proc.pid),
                )
            finally:
                one.stop()
                many.stop()
            print(
                f"  1,000 if-rule groups: {result['rps']:,.0f} req/s, p50 {result['p50']:.2f} ms, CPU "
                f"{result.get('cpu_us', 0):.0f} us/req; one group {base['rps']:,.0f} req/s, p50 {base['p50']:.2f} "
                f"ms, CPU {base.get('cpu_us', 0):.0f} us/req",
                flush=True,
            )
            results.ratio(
                "serve_if1000",
                "serve, 1,000 if-rule groups / one group",
                result["rps"],
                base["rps"],
                "one if-rule group",
                "req/s",
                0.5,
                higher_is_better=True,
                ratio=result["ratio"],
            )
        if "fanout" in wanted:
            print(f"\n(b) fan-out: {FANOUT} http handlers, each answered after {FANOUT_DELAY * 1000:.0f} ms")
            served = Proc([*hookgate_serve, str(configs["fanout"])], env, cwd=str(work))
            try:
                ms, bare = fanout_latencies(served.port, receiver.port, max(10, args.runs // 2))
            finally:
                served.stop()
            print(
                f"  hookgate serve: {ms:.1f} ms; the same {FANOUT} POSTs from a bare aiohttp session: {bare:.1f} ms "
                f"({ms / bare:.2f}x; medians, alternating)",
                flush=True,
            )
            results.notes["fanout bare aiohttp ms"] = bare
            results.ratio(
                "fanout",
                f"fan-out, {FANOUT} http handlers of 200 ms / 200 ms",
                ms,
                FANOUT_DELAY * 1000,
                "one handler's delay",
                "ms",
                1.1,
                higher_is_better=False,
            )
        if "thin" in wanted:
            served = Proc([*hookgate_serve, str(configs["nomatch"])], env, cwd=str(work))
            try:
                url = f"http://127.0.0.1:{served.port}"
                stdin = json.dumps(EVENT).encode()
                client = subprocess.run(
                    [venvs.python, "-c", "import gateway.client as c; print(c.__file__)"],
                    capture_output=True,
                    text=True,
                    env=env,
                    cwd=str(work),
                    check=True,
                )
                commands = {
                    "python -S -c pass": ([venvs.python, "-S", "-c", "pass"], b""),
                    "python -c pass": ([venvs.python, "-c", "pass"], b""),
                    "hookgate run --server URL": ([venvs.hookgate, "run", "--server", url], stdin),
                    "python -I -S .../gateway/client.py URL": (
                        [venvs.python, "-I", "-S", client.stdout.strip(), url],
                        stdin,
                    ),
                    "hookgate run (in-process, same config)": (
                        [venvs.hookgate, "run", "--config", str(configs["nomatch"])],
                        stdin,
                    ),
                }
                times = interleaved(commands, args.runs, env)
            finally:
                served.stop()
            print(f"\n(c) thin client: median wall time of {args.runs} round-robin runs each")
            bare = times["python -S -c pass"]
            for name, ms in times.items():
                print(f"  {name:<42} {ms:7.1f} ms  {ms / bare:5.2f}x python -S -c pass")
            results.ratio(
                "thin",
                "thin client (hookgate run --server) / python -S -c pass",
                times["hookgate run --server URL"],
                bare,
                "python -S -c pass",
                "ms",
                2.0,
                higher_is_better=False,
            )
    finally:
        echo.stop()
        receiver.stop()
    results.save(args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
