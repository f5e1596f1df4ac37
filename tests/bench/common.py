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
  (``--json FILE``) for ``tests/bench/readme_table.py``, with the machine's load average while it ran.
- ``Proc``: a server subprocess on a free port; ``load()``: keep-alive connections posting one event for
  some seconds from this process (asyncio streams; the store bench's load generator, which checks every
  answer); ``alternate()``: two servers loaded in alternating windows, so drift hits both alike, by
  ``wrk`` (Debian's package: one thread, 16 keep-alive connections) when it is installed, else by
  ``load()``'s generator (``HOOKGATE_BENCH_LOADGEN=python`` forces it). A load generator in Python takes
  about as much CPU per request as the echo it measures, so on a 2-core machine it holds most of the
  second core, which the subject's own other processes (the audit writer, an MCP validator, a webhook
  receiver) need: wrk takes a tenth of that, so what the ratios measure is the gateway, not its
  competition with the load generator. ``loadgen()`` names the one in use (the benches print it).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
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


# ---------------------------------------------------------------------------- servers and load


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
    """A server subprocess on a free port (``--port N`` appended, or the port alone after a
    ``--serve-...`` flag), stopped with SIGTERM."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: str | Path | None = None) -> None:
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


def _request(port: int, path: str, body: bytes) -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


async def _connection(
    port: int, request: bytes, stop_at: float, latencies: list[float], refuse: bytes | None = None
) -> int:
    """One keep-alive connection posting ``request`` until ``stop_at``: the answers it got (each a 200;
    with ``refuse``, none whose body contains it)."""
    import asyncio

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
            body = await reader.readexactly(int(match.group(1)))
            if refuse is not None and refuse in body:
                raise RuntimeError(f"unexpected answer to the bench event: {body[:300]!r}")
            latencies.append(time.perf_counter() - started)
            done += 1
    finally:
        writer.close()
    return done


async def window(
    port: int,
    path: str,
    event: dict[str, Any],
    seconds: float,
    concurrency: int,
    latencies: list[float],
    refuse: bytes | None = None,
) -> tuple[int, float]:
    """``concurrency`` connections posting ``event`` to ``path`` for ``seconds``: (answers, elapsed s)."""
    import asyncio

    request = _request(port, path, json.dumps(event).encode())
    started = time.perf_counter()
    counts = await asyncio.gather(
        *(_connection(port, request, started + seconds, latencies, refuse) for _ in range(concurrency))
    )
    return sum(counts), time.perf_counter() - started


def load(
    port: int, path: str, event: dict[str, Any], seconds: float, concurrency: int, refuse: bytes | None = None
) -> tuple[int, float, list[float]]:
    """``window`` from synchronous code: (answers, elapsed s, latencies in s)."""
    import asyncio

    latencies: list[float] = []
    done, elapsed = asyncio.run(window(port, path, event, seconds, concurrency, latencies, refuse))
    return done, elapsed, latencies


WRK = shutil.which("wrk") if os.environ.get("HOOKGATE_BENCH_LOADGEN", "wrk") == "wrk" else None


def loadgen() -> str:
    """The load generator ``alternate`` uses, in words."""
    return "wrk (1 thread)" if WRK else "asyncio streams in the bench process"


_WRK_SCRIPTS: dict[str, str] = {}
_TIME = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}


async def wrk_window(
    port: int, path: str, event: dict[str, Any], seconds: int, concurrency: int
) -> tuple[int, float, float, float]:
    """``concurrency`` keep-alive connections of ``wrk`` posting ``event`` to ``path`` for ``seconds``
    (whole seconds: wrk's unit): (answers, elapsed s, p50 ms, p99 ms). Raises RuntimeError when any
    answer was not a 2xx or 3xx, or a connection failed."""
    import asyncio

    body = json.dumps(event)
    script = _WRK_SCRIPTS.get(body)
    if script is None:
        assert "]==]" not in body
        fd, script = tempfile.mkstemp(prefix="hookgate-bench-", suffix=".lua")
        with os.fdopen(fd, "w") as fh:
            fh.write(
                f'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = [==[{body}]==]\n'
            )
        _WRK_SCRIPTS[body] = script
    assert WRK is not None
    proc = await asyncio.create_subprocess_exec(
        WRK, "-t1", f"-c{concurrency}", f"-d{seconds}s", "--latency", "-s", script,
        f"http://127.0.0.1:{port}{path}",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out = (await proc.communicate())[0].decode()
    done = re.search(r"(\d+) requests in ([\d.]+)(us|ms|s|m)", out)
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    broken = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if proc.returncode != 0 or done is None or bad is not None or (broken and any(int(g) for g in broken.groups())):
        raise RuntimeError(f"wrk against {path}: {out[-1500:]}")
    latency = {q: float(v) * _TIME[u] * 1000 for q, v, u in re.findall(r"\s(50|99)%\s+([\d.]+)(us|ms|s)", out)}
    return int(done.group(1)), float(done.group(2)) * _TIME[done.group(3)], latency["50"], latency["99"]


def percentile_ms(latencies: list[float], q: float) -> float:
    values = sorted(latencies)
    return values[min(len(values) - 1, int(len(values) * q))] * 1000 if values else float("nan")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds used so far by process ``pid`` (all its threads) and its live children
    (a writer process, an MCP server): from ``/proc``; 0.0 where it cannot be read."""
    return sum(cpu_split(pid))


def cpu_split(pid: int) -> tuple[float, float]:
    """``cpu_seconds`` in two: process ``pid``'s own (all its threads), and its live children's."""
    own = _ticks([pid])
    children: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                children.extend(int(child) for child in fh.read().split())
    except OSError:
        pass
    return own, _ticks(children)


def _ticks(pids: list[int]) -> float:
    """User + system CPU seconds of ``pids`` so far (0.0 for one that cannot be read)."""
    ticks = 0
    for each in pids:
        try:
            with open(f"/proc/{each}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])  # utime, stime
        except (OSError, IndexError, ValueError):
            pass
    return ticks / os.sysconf("SC_CLK_TCK")


def alternate(
    base: tuple[int, str],
    subject: tuple[int, str],
    event: dict[str, Any],
    seconds: float,
    rounds: int,
    concurrency: int,
    pids: tuple[int, int] | None = None,
) -> tuple[dict[str, float], dict[str, float]]:
    """Throughput (median of windows, req/s) and p50/p99 latency (ms) of the servers ``base`` and
    ``subject`` (port, path), loaded with ``event`` in alternation; the subject's ``ratio`` is the median
    over rounds of subject / base within the round (adjacent windows), which cancels drift and shrugs
    off a window another process disturbed. With ``pids`` (the two servers' processes) each side also
    gets ``cpu_us``: the server's CPU time (its threads and child processes, ``cpu_seconds``; of which
    ``cpu_children_us`` in the child processes) per
    answered request over its windows, which other load on the machine disturbs far less than
    throughput."""
    import asyncio

    per_window = seconds / rounds
    stats: dict[int, tuple[list[float], list[float]]] = {0: ([], []), 1: ([], [])}
    percentiles: dict[int, list[tuple[float, float]]] = {0: [], 1: []}  # wrk's, per window
    cpu = {0: [0.0, 0, 0.0], 1: [0.0, 0, 0.0]}  # CPU seconds, answers, of which child processes' seconds

    async def one(side: int, seconds: float, latencies: list[float]) -> int:
        port, path = (base, subject)[side]
        if WRK is None:
            done, elapsed = await window(port, path, event, seconds, concurrency, latencies)
        else:
            done, elapsed, p50, p99 = await wrk_window(port, path, event, max(1, round(seconds)), concurrency)
            percentiles[side].append((p50, p99))
        stats[side][0].append(done / elapsed)
        return done

    async def go() -> None:
        for side in (0, 1):  # warm up: connections, caches, MCP sessions (and check the answer is a 200)
            port, path = (base, subject)[side]
            await window(port, path, event, 0.001, 1, [])
            await one(side, 0.5, [])
            stats[side][0].clear()
            percentiles[side].clear()
        for i in range(rounds):
            for side in (0, 1) if i % 2 == 0 else (1, 0):
                own, children = cpu_split(pids[side]) if pids else (0.0, 0.0)
                done = await one(side, per_window, stats[side][1])
                if pids:
                    await asyncio.sleep(0.3)  # the work a window queued (an audit batch) is done
                    own_after, children_after = cpu_split(pids[side])
                    cpu[side][0] += own_after - own + children_after - children
                    cpu[side][2] += children_after - children
                    cpu[side][1] += done

    asyncio.run(go())

    def summary(side: int) -> dict[str, float]:
        rps, latencies = stats[side]
        if percentiles[side]:
            p50 = statistics.median(p for p, _ in percentiles[side])
            p99 = statistics.median(p for _, p in percentiles[side])
        else:
            p50, p99 = percentile_ms(latencies, 0.5), percentile_ms(latencies, 0.99)
        out = {"rps": statistics.median(rps), "p50": p50, "p99": p99}
        if pids and cpu[side][1]:
            out["cpu_us"] = cpu[side][0] / cpu[side][1] * 1e6
            out["cpu_children_us"] = cpu[side][2] / cpu[side][1] * 1e6
        return out

    measured = summary(1)
    measured["ratio"] = statistics.median(s / b for b, s in zip(stats[0][0], stats[1][0], strict=True))
    return summary(0), measured
