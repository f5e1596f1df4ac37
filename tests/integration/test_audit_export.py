"""`hookgate audit export`: what it writes for a spreadsheet (CSV cells that would be formulas) and how much
(``--limit``) (real `hookgate run` and `hookgate audit` subprocesses on a real SQLite state dir)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from tests.conftest import ROOT, run_hookgate
from tests.integration.test_audit_run import audit, bash, run, write_config

FORMULAS = ["=1+1", "+1+1", "-1+1", "@SUM(1)", "\t=1+1", "\r=1+1"]


def test_csv_cells_that_a_spreadsheet_would_run_as_formulas_begin_with_a_quote(tmp_path: Path) -> None:
    """A session id, tool input or reason beginning with = + - @, a tab or a CR was written as is: opened in
    Excel or LibreOffice the cell ran as a formula (CSV injection). Such a cell now begins with ``'``. A CR
    inside a value was written unquoted (LF line ends), so every reader split the row there."""
    config = write_config(tmp_path)
    sessions = [*FORMULAS, "a=b", "x\ry"]
    for session in sessions:
        assert run(config, bash("rm -rf x", session=session)).returncode == 2
    exported = audit(config, "export", "--format", "csv")
    assert exported.returncode == 0, exported.stderr
    table = list(csv.DictReader(io.StringIO(exported.stdout, newline="")))
    assert [row["session_id"] for row in table] == [*("'" + s for s in FORMULAS), "a=b", "x\ry"]
    assert {row["reason"] for row in table} == {"no rm -rf here"}  # other cells unchanged
    assert all(row["tool_input"].startswith("{") and row["seq"].isdigit() for row in table)
    assert exported.stdout.endswith("\r\n") and ",=" not in exported.stdout and ",+" not in exported.stdout


def test_export_limit_writes_the_newest_n_oldest_first(tmp_path: Path) -> None:
    """`export` had no `--limit` (`query` has): the newest N of the records that fit, oldest first."""
    config = write_config(tmp_path)
    for i in range(5):
        assert run(config, bash(f"echo {i}", session="odd" if i % 2 else "even")).returncode == 0
    lines = audit(config, "export", "--limit", "2").stdout.splitlines()
    assert [json.loads(line)["_chain"]["seq"] for line in lines] == [4, 5]
    table = list(csv.DictReader(io.StringIO(audit(config, "export", "--format", "csv", "--limit", "3").stdout)))
    assert [row["seq"] for row in table] == ["3", "4", "5"]
    even = audit(config, "export", "--session", "even", "--limit", "2").stdout.splitlines()
    assert [json.loads(line)["tool_input"]["command"] for line in even] == ["echo 2", "echo 4"]
    assert len(audit(config, "export", "--limit", "99").stdout.splitlines()) == 5
    sink = tmp_path / "newest.jsonl"
    assert audit(config, "export", "--limit", "2", "--output", str(sink)).returncode == 0
    checked = run_hookgate(["audit", "verify", "--jsonl", str(sink), "--continued"], cwd=ROOT)
    assert checked.returncode == 0 and "seq 4-5 ok" in checked.stdout, checked.stderr
    for bad in ("0", "-1", "x"):
        refused = audit(config, "export", "--limit", bad)
        assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
        assert "--limit" in refused.stderr and "Traceback" not in refused.stderr


def test_output_on_a_full_disk_is_one_line_naming_where(tmp_path: Path) -> None:
    """Writing the output to a full disk (``/dev/full``: ENOSPC) said ``[Errno 28] No space left on device``
    naming no file (``export -o FILE``, or stdout under ``> FILE``), and ``verify --jsonl`` ended in an
    internal error. Now each is one line naming the file or stdout, exit 1; a device is never removed."""
    import stat
    import subprocess
    import sys

    config = write_config(tmp_path, audit={"sink": ["store", f"jsonl:{tmp_path / 'a.jsonl'}"]})
    assert run(config, bash("ls")).returncode == 0
    exported = audit(config, "export", "--format", "csv", "--output", "/dev/full")
    assert exported.returncode == 1 and exported.stderr.count("\n") == 1, exported.stderr
    assert "No space left on device (the export is not written): '/dev/full'" in exported.stderr
    assert stat.S_ISCHR(Path("/dev/full").stat().st_mode)
    for args in (
        ["tail"],
        ["query", "--json"],
        ["stats"],
        ["verify"],
        ["verify", "--jsonl", str(tmp_path / "a.jsonl")],
    ):
        command = [sys.executable, "-m", "gateway", "audit", *args, "--config", str(config)]
        with open("/dev/full", "w") as full:
            proc = subprocess.run(command, stdout=full, stderr=subprocess.PIPE, text=True, cwd=ROOT, check=False)
        assert proc.returncode == 1 and proc.stderr.count("\n") == 1, (args, proc.stderr)
        assert proc.stderr.endswith("No space left on device: '<stdout>'\n"), (args, proc.stderr)
