"""What the benchmarks share: throwaway venvs, interleaved timing of processes, ratio lines, JSON results.

- ``bench_venvs()``: two throwaway virtual environments under ``$TMPDIR/hookgate-bench/``, built with
  this interpreter: ``hookgate`` (this checkout installed the way users install it, ``pip install .``,
  not editable: an editable install's import hook costs a few ms per process) and ``cchooks`` (only the
  ``cchooks`` library, for the single-purpose hook the gateway is compared with). Each is reused while
  its inputs are unchanged (the hookgate venv is keyed by a hash of the installed sources), so only the
  first run after a change pays the install (~15 s). ``--here`` on the benches skips them and uses this
  interpreter (for a quick look while editing; numbers then include the editable install's cost).
- ``interleaved()``: median wall times of several commands run round-robin, so that load from other
  processes on the machine (a shared 2-core VM) hits baseline and subject alike; ``interleaved_times()``
  also gives their median CPU times (user + system), which that load disturbs far less.
- ``Results``: the ratios a bench measured, printed as ``target`` lines and written as JSON
  (``--json FILE``) for ``tests/bench/readme_table.py``, with the machine's load while it ran.
- Serving benches: ``Proc`` (a server subprocess on a free port), the baseline servers (``run_echo``: a bare
  Starlette JSON echo; ``run_receiver``: the webhook the ``http`` handlers call; started as
  ``python tests/bench/common.py --serve-echo PORT``), and one load generator for baseline and subject alike
  (``alternate``: keep-alive connections with one request in flight each, in alternating windows, ratios as
  the median over rounds of adjacent windows).
"""

from __future__ import annotations

import asyncio
import hashlib
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CCHOOKS_REQUIREMENT = "cchooks>=0.1.5,<0.2"
SOURCES = ("pyproject.toml", "README.md", "gateway", "handlers", "configs")

# A single-purpose PreToolUse hook written with cchooks: one rm -rf check, deny or say nothing.
CCHOOKS_HOOK = """\
import re

from cchooks import PreToolUseContext, create_context

RM_RF = re.compile(r"\\brm\\s+(-[a-zA-Z]*r[a-zA-Z]*f|-[a-zA-Z]*f[a-zA-Z]*r|-r\\s+-f|-f\\s+-r)")

c = create_context()
if isinstance(c, PreToolUseContext) and c.tool_name == "Bash" and RM_RF.search(c.tool_input.get("command", "")):
    c.output.deny("rm -rf is blocked")
"""


@dataclass(frozen=True)
class Venvs:
    """Interpreters and scripts of the throwaway venvs (or of this interpreter with ``--here``)."""

    python: str
    """The hookgate venv's interpreter."""
    hookgate: str
    """Its ``hookgate`` console script."""
    cchooks_python: str
    """An interpreter that can import ``cchooks``."""
    cchooks_hook: str
    """The single-purpose cchooks hook script."""
    install: str
    """How hookgate is installed there (for the report)."""


def _sources_hash() -> str:
    digest = hashlib.sha256()
    for name in SOURCES:
        path = ROOT / name
        files = (
            [path]
            if path.is_file()
            else sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        )
        for file in files:
            digest.update(str(file.relative_to(ROOT)).encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


def _venv(where: Path, packages: list[str]) -> Path:
    """A venv at ``where`` holding ``packages`` (pip arguments); reused when its marker is there."""
    marker = where / ".bench-ready"
    if not marker.exists():
        print(f"(building throwaway venv {where} ...)", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(where)], check=True)
        done = subprocess.run(
            [str(where / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", *packages],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode:
            raise SystemExit(f"pip install {' '.join(packages)} failed:\n{done.stderr[-3000:]}")
        marker.write_text(" ".join(packages))
    return where


def bench_venvs(here: bool = False) -> Venvs:
    """The venvs the process benches run in (see module docstring)."""
    base = Path(tempfile.gettempdir()) / "hookgate-bench"
    base.mkdir(exist_ok=True)
    hook = base / "cchooks_hook.py"
    hook.write_text(CCHOOKS_HOOK)
    cchooks = _venv(base / "cchooks", [CCHOOKS_REQUIREMENT])
    if here:
        return Venvs(
            sys.executable,
            str(Path(sys.executable).with_name("hookgate")),
            str(cchooks / "bin" / "python"),
            str(hook),
            "this interpreter's install (--here)",
        )
    for old in base.glob("hookgate-*"):  # keep only the venv of the current sources
        if old.name != f"hookgate-{_sources_hash()}":
            subprocess.run(["rm", "-rf", str(old)], check=False)
    where = base / f"hookgate-{_sources_hash()}"
    if not (where / ".bench-ready").exists():  # install from a clean copy: a stale build/ would leak old files
        import shutil

        copy = Path(tempfile.mkdtemp(prefix="hookgate-src-"))
        for name in SOURCES:
            if (ROOT / name).is_file():
                shutil.copy2(ROOT / name, copy / name)
            else:
                shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
        _venv(where, [str(copy)])
        shutil.rmtree(copy, ignore_errors=True)
    venv = where
    return Venvs(
        str(venv / "bin" / "python"),
        str(venv / "bin" / "hookgate"),
        str(cchooks / "bin" / "python"),
        str(hook),
        "regular install (pip install ., not editable) in a throwaway venv",
    )


def wall_ms(argv: list[str], stdin: bytes, env: dict[str, str] | None = None) -> float:
    """Wall time (ms) of one run of ``argv`` with ``stdin``."""
    return timed(argv, stdin, env)[0]


def timed(argv: list[str], stdin: bytes, env: dict[str, str] | None = None) -> tuple[float, float]:
    """``(wall ms, CPU ms)`` of one run of ``argv`` with ``stdin``: CPU is the process's user + system time
    (``os.wait4``), which other jobs on the machine disturb far less than the wall time."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin is not None
    try:
        proc.stdin.write(stdin)
        proc.stdin.close()
    except BrokenPipeError:  # it answered without reading all of stdin
        pass
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
    wall = (time.perf_counter() - started) * 1000
    return wall, (usage.ru_utime + usage.ru_stime) * 1000


def interleaved_times(
    commands: dict[str, tuple[list[str], bytes]], runs: int, env: dict[str, str] | None = None, warmup: int = 2
) -> tuple[dict[str, float], dict[str, float]]:
    """Median wall and median CPU time (ms) of each ``name: (argv, stdin)``, run round-robin ``runs`` times."""
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    for argv, stdin in commands.values():  # page cache, .pyc files, the config cache
        for _ in range(warmup):
            timed(argv, stdin, env)
    for _ in range(runs):
        for name, (argv, stdin) in commands.items():
            wall, cpu = timed(argv, stdin, env)
            walls[name].append(wall)
            cpus[name].append(cpu)
    return (
        {name: statistics.median(values) for name, values in walls.items()},
        {name: statistics.median(values) for name, values in cpus.items()},
    )


def interleaved(
    commands: dict[str, tuple[list[str], bytes]], runs: int, env: dict[str, str] | None = None, warmup: int = 2
) -> dict[str, float]:
    """Median wall time (ms) of each ``name: (argv, stdin)``, run round-robin ``runs`` times."""
    return interleaved_times(commands, runs, env, warmup)[0]


def median_ms(argv: list[str], stdin: bytes, runs: int, env: dict[str, str]) -> float:
    """Median wall time (ms) of ``runs`` runs of one command."""
    return statistics.median(wall_ms(argv, stdin, env) for _ in range(runs))


def shown_ratio(ratio: float, target: float) -> str:
    """``ratio`` with two decimals, or more when two would print the target itself (0.8496 is not 0.85)."""
    for digits in (2, 3, 4, 5):
        text = f"{ratio:.{digits}f}"
        if float(text) != target or ratio == target:
            break
    return text


@dataclass
class Results:
    """Target ratios measured by one bench: printed as they come, saved with ``save``."""

    bench: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    notes: dict[str, Any] = field(default_factory=dict)

    def ratio(
        self,
        key: str,
        label: str,
        value: float,
        base: float,
        baseline: str,
        unit: str,
        target: float,
        higher_is_better: bool,
        ratio: float | None = None,
    ) -> float:
        """Record ``value / base`` (or ``ratio``, when the bench computed it otherwise) against ``target``
        (``>=`` when higher is better, else ``<=``); print it."""
        ratio = value / base if ratio is None else ratio
        ok = ratio >= target if higher_is_better else ratio <= target
        op = ">=" if higher_is_better else "<="
        self.rows.append(
            {
                "key": key,
                "label": label,
                "value": value,
                "baseline": baseline,
                "base": base,
                "unit": unit,
                "ratio": ratio,
                "target": f"{op} {target:g}",
                "ok": ok,
            }
        )
        print(
            f"  TARGET {label}: {value:,.1f} {unit} vs {baseline} {base:,.1f} {unit} = {shown_ratio(ratio, target)} "
            f"(target {op} {target:g}) {'ok' if ok else 'MISSED'}",
            flush=True,
        )
        return ratio

    def save(self, path: str | None) -> None:
        if not path:
            return
        out = Path(path)
        data = json.loads(out.read_text()) if out.exists() else {}
        data[self.bench] = {
            "rows": self.rows,
            "notes": self.notes,
            "python": sys.version.split()[0],
            "cpus": os.cpu_count(),
            "load": [round(x, 1) for x in os.getloadavg()],  # 1, 5, 15 minutes, when the bench ended
            "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        }
        out.write_text(json.dumps(data, indent=1))


# ---------------------------------------------------------------------------- serving benches

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
"""The event every serving bench POSTs (a PreToolUse Bash call the default policy lets through)."""
UVICORN_SETTINGS = {"log_level": "warning", "access_log": False, "loop": "asyncio", "server_header": False}
"""What the baseline servers run with (``hookgate serve`` runs uvicorn the same way)."""
FANOUT_DELAY = 0.2
"""Seconds the receiver's ``/slow/N`` waits before answering."""


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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(
                f"server exited ({proc.returncode}): {proc.stderr.read().decode()[-2000:] if proc.stderr else ''}"
            )
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listening on {port}")


class Proc:
    """A server subprocess on a free port, stopped with SIGTERM."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: str | None = None) -> None:
        self.port = free_port()
        self.proc = subprocess.Popen(
            [*argv, str(self.port)] if argv[-1].startswith("--serve-") else [*argv, "--port", str(self.port)],
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        wait_port(self.port, self.proc)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# ---------------------------------------------------------------------------- load generator


def _request(port: int, path: str, body: bytes) -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


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


async def window(port: int, path: str, seconds: float, concurrency: int, latencies: list[float]) -> float:
    request = _request(port, path, json.dumps(EVENT).encode())
    started = time.perf_counter()
    counts = await asyncio.gather(
        *(_connection(port, request, started + seconds, latencies) for _ in range(concurrency))
    )
    return sum(counts) / (time.perf_counter() - started)


def alternate(
    base: tuple[int, str], subject: tuple[int, str], seconds: float, rounds: int, concurrency: int
) -> tuple[dict[str, float], dict[str, float]]:
    """Throughput (median of windows) and latency of ``base`` and ``subject``, loaded in alternation."""
    span = seconds / rounds
    stats: dict[int, tuple[list[float], list[float]]] = {0: ([], []), 1: ([], [])}

    async def go() -> None:
        for port, path in (base, subject):  # warm up: connections, caches, MCP sessions
            await window(port, path, 0.5, concurrency, [])
        for i in range(rounds):
            for side in (0, 1) if i % 2 == 0 else (1, 0):
                port, path = (base, subject)[side]
                stats[side][0].append(await window(port, path, span, concurrency, stats[side][1]))

    asyncio.run(go())

    def summary(side: int) -> dict[str, float]:
        rps, latencies = stats[side]
        latencies.sort()
        return {
            "rps": statistics.median(rps),
            "p50": latencies[len(latencies) // 2] * 1000,
            "p99": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000,
        }

    measured = summary(1)
    # the ratio: median over rounds of subject / baseline within the round (adjacent windows), which
    # cancels drift and shrugs off a window another process disturbed
    measured["ratio"] = statistics.median(s / b for b, s in zip(stats[0][0], stats[1][0], strict=True))
    return summary(0), measured


def helper_server(kind: str, python: str, env: dict[str, str]) -> Proc:
    """A baseline server (``echo`` or ``receiver``) run by ``python`` (this file as a script)."""
    return Proc([python, __file__, f"--serve-{kind}"], env)


if __name__ == "__main__":  # python tests/bench/common.py --serve-echo PORT | --serve-receiver PORT
    kind, port = sys.argv[1], int(sys.argv[2])
    {"--serve-echo": run_echo, "--serve-receiver": run_receiver}[kind](port)
