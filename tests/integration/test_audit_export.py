"""`hookgate audit export`: what it writes for a spreadsheet (CSV cells that would be formulas) and how much
(``--limit``) (real `hookgate run` and `hookgate audit` subprocesses on a real SQLite state dir)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

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
