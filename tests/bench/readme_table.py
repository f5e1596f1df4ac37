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
README = ROOT / "README.md"
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"
ORDER = (
    "run_allow",
    "run_deny",
    "thin",
    "serve_nomatch",
    "serve_default",
    "serve_http",
    "serve_mcp",
    "serve_if1000",
    "fanout",
)


def figure(value: float, unit: str) -> str:
    return f"{value:,.0f} {unit}" if unit == "req/s" else f"{value:,.1f} {unit}"


def table(data: dict[str, Any]) -> str:
    rows = {row["key"]: row for bench in data.values() for row in bench["rows"]}
    meta = next(iter(data.values()))
    lines = [
        f"Measured {meta['when']} on {meta['cpus']} shared vCPUs (Python {meta['python']}), hookgate "
        "installed with `pip install .` in a throwaway venv; every baseline ran in the same run, "
        "alternating with what it is compared to. For serve the figures are the median load windows and "
        "the ratio is the median over rounds of two adjacent windows. Other jobs (test suites of other "
        "branches) shared the machine, so every figure is noisy, serve's most; the ratios are what the "
        "targets are about.",
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
            f"{figure(row['base'], row['unit'])} | {row['ratio']:.2f} | {row['target']} ({status}) |"
        )
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
