"""Regenerate README's Performance table from the benches (issue 15's targets, each with its baseline).

Run: ``.venv/bin/python tests/bench/readme_table.py [--from FILE] [--runs N] [--seconds S]``. Without
``--from`` it runs ``bench_run.py`` and ``bench_serve.py`` (throwaway venvs, interleaved baselines; a few
minutes) with ``--json`` into one file; with ``--from`` it reads such a file. Then it replaces the lines
between ``<!-- bench:begin -->`` and ``<!-- bench:end -->`` in README.md with one row per target:
what was measured, its figure, the baseline measured in the same run, the ratio and the target.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.common import shown_ratio  # noqa: E402

README = ROOT / "README.md"
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"
ORDER = (
    "run_allow",
    "run_allow_cpu",
    "run_deny",
    "thin",
    "serve_nomatch",
    "serve_default",
    "serve_default_noaudit",
    "serve_http",
    "serve_http_noaudit",
    "serve_mcp",
    "serve_mcp_noaudit",
    "serve_if1000",
    "fanout",
)


def _target(row: dict[str, Any]) -> float:
    return float(str(row["target"]).split()[-1])


def figure(value: float, unit: str) -> str:
    return f"{value:,.0f} {unit}" if unit == "req/s" else f"{value:,.1f} {unit}"


def _load(data: dict[str, Any]) -> str:
    """The machine's load average while the benches ran (1 minute, at the end of each), as text."""
    loads = [bench["load"][0] for bench in data.values() if bench.get("load")]
    if not loads:
        return "an unrecorded load"
    low, high = min(loads), max(loads)
    return f"a load average of {low:g}" if low == high else f"load averages of {low:g}-{high:g}"


def _loadgen(data: dict[str, Any]) -> str:
    """The serve benches' load generator (``tests.bench.common.loadgen``), as recorded."""
    found = {b["notes"]["loadgen"] for b in data.values() if b.get("notes", {}).get("loadgen")}
    return ", ".join(sorted(found)) or "asyncio streams in the bench process"


def table(data: dict[str, Any]) -> str:
    rows = {row["key"]: row for bench in data.values() for row in bench["rows"]}
    meta = next(iter(data.values()))
    lines = [
        f"Measured {meta['when']} on {meta['cpus']} shared vCPUs (Python {meta['python']}) at {_load(data)} "
        f"(other jobs on the machine), hookgate installed with `pip install .` in a throwaway venv; every "
        "baseline ran in the same run, alternating with what it is compared to. For serve the figures are "
        "the median load windows and the ratio is the median over rounds of two adjacent windows; the load "
        f"generator ({_loadgen(data)}) is the same for baseline and subject (`tests/bench/common.py`). With other jobs on the "
        "machine every figure is noisy, serve's most; the ratios are what the targets are about.",
        "",
        "| measured | figure | baseline (same run) | ratio | target |",
        "|---|---|---|---|---|",
    ]
    for key in ORDER:
        row = rows.get(key)
        if row is None:
            continue
        status = "met" if row["ok"] else "**not met**"
        lines.append(
            f"| {row['label']} | {figure(row['value'], row['unit'])} | {row['baseline']}: "
            f"{figure(row['base'], row['unit'])} | {shown_ratio(row['ratio'], _target(row))} | {row['target']} "
            f"({status}) |"
        )
    notes = {k: v for bench in data.values() for k, v in bench.get("notes", {}).items()}
    floors = {
        "serve_http": "a bare Starlette endpoint that POSTs each event on with one pooled aiohttp session",
        "serve_mcp": "a bare Starlette endpoint that calls the validator's tool with one warm MCP SDK `Client`",
    }
    for row_key, what in floors.items():
        alone, versus = notes.get(f"{row_key} floor/echo"), notes.get(f"{row_key} serve/floor")
        if row_key in rows and alone is not None and versus is not None:
            lines += [
                "",
                f"For the {rows[row_key]['label'].removeprefix('serve, ').removesuffix(' / echo')} row, the same work "
                f"without hookgate ({what}, same uvicorn settings; `tests/bench/bench_serve.py`) reached {alone:.2f} of "
                f"the echo in the same run, and hookgate {versus:.2f} of that bare server.",
            ]
    key = "fanout bare aiohttp ms"
    bare = next((b["notes"][key] for b in data.values() if key in b.get("notes", {})), None)
    if bare and "fanout" in rows:
        served = rows["fanout"]["value"]
        lines += [
            "",
            f"For the fan-out, the same 64 POSTs sent at once by a bare aiohttp session took {bare:,.1f} ms in the "
            f"same run (alternating with hookgate): hookgate's {served:,.1f} ms is {served / bare:.2f}x what the "
            "machine allowed at the time.",
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", metavar="FILE", help="results written by the benches' --json")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=6.0)
    args = parser.parse_args()
    source = args.source
    if source is None:
        source = str(Path(tempfile.mkdtemp(prefix="hookgate-bench-")) / "results.json")
        bench = ROOT / "tests" / "bench"
        subprocess.run(
            [sys.executable, str(bench / "bench_run.py"), "--runs", str(args.runs), "--json", source], check=True
        )
        subprocess.run(
            [
                sys.executable,
                str(bench / "bench_serve.py"),
                "--runs",
                str(args.runs),
                "--seconds",
                str(args.seconds),
                "--json",
                source,
            ],
            check=True,
        )
    text = README.read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"README.md has no {BEGIN} ... {END} block")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    README.write_text(f"{head}{BEGIN}\n{table(json.loads(Path(source).read_text()))}\n{END}{tail}")
    print(f"README.md: Performance table rewritten from {source}")


if __name__ == "__main__":
    main()
