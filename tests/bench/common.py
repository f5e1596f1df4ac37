"""What the benchmarks share: throwaway venvs, interleaved timing of processes, ratio lines, JSON results.

- ``bench_venvs()``: two throwaway virtual environments under ``$TMPDIR/hookgate-bench/``, built with
  this interpreter: ``hookgate`` (this checkout installed the way users install it, ``pip install .``,
  not editable: an editable install's import hook costs a few ms per process) and ``cchooks`` (only the
  ``cchooks`` library, for the single-purpose hook the gateway is compared with). Each is reused while
  its inputs are unchanged (the hookgate venv is keyed by a hash of the installed sources), so only the
  first run after a change pays the install (~15 s). ``--here`` on the benches skips them and uses this
  interpreter (for a quick look while editing; numbers then include the editable install's cost).
- ``interleaved()``: median wall times of several commands run round-robin, so that load from other
  processes on the machine (a shared 2-core VM) hits baseline and subject alike.
- ``Results``: the ratios a bench measured, printed as ``target`` lines and written as JSON
  (``--json FILE``) for ``tests/bench/readme_table.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
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
    started = time.perf_counter()
    subprocess.run(argv, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return (time.perf_counter() - started) * 1000


def interleaved(
    commands: dict[str, tuple[list[str], bytes]], runs: int, env: dict[str, str] | None = None, warmup: int = 2
) -> dict[str, float]:
    """Median wall time (ms) of each ``name: (argv, stdin)``, run round-robin ``runs`` times."""
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for argv, stdin in commands.values():  # page cache, .pyc files, the config cache
        for _ in range(warmup):
            wall_ms(argv, stdin, env)
    for _ in range(runs):
        for name, (argv, stdin) in commands.items():
            samples[name].append(wall_ms(argv, stdin, env))
    return {name: statistics.median(values) for name, values in samples.items()}


def median_ms(argv: list[str], stdin: bytes, runs: int, env: dict[str, str]) -> float:
    """Median wall time (ms) of ``runs`` runs of one command."""
    return statistics.median(wall_ms(argv, stdin, env) for _ in range(runs))


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
            f"  TARGET {label}: {value:,.1f} {unit} vs {baseline} {base:,.1f} {unit} = {ratio:.2f} "
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
            "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        }
        out.write_text(json.dumps(data, indent=1))
