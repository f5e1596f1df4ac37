"""`hookgate audit stats` (and the console's Handlers panel, which asks for the same every 2 s) count a large
trail without holding it: the handlers lists are streamed out of the store (real `hookgate` subprocesses on
a real SQLite state dir)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from gateway.audit.record import canonical
from gateway.audit.report import percentile
from gateway.store.audit_types import AuditEntry
from gateway.store.sqlite import SQLiteStore
from tests.conftest import ROOT
from tests.integration.test_audit_run import write_config


def _record(i: int, pad: int) -> dict[str, object]:
    handler = {"id": "g", "type": "command", "status": "ok", "verdict": "deny" if i % 4 == 0 else "none"}
    return {
        "id": f"r{i}",
        "time": f"2030-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}.000Z",
        "event": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "x" * pad},
        "handlers": [{**handler, "duration_ms": float(i % 10), "reason": None, "side_effects": []}],
        "decision": "none",
    }


def test_stats_on_a_large_trail_are_counted_without_holding_it(tmp_path: Path) -> None:
    """`stats` loaded every record whole (a 40 MB trail: a peak of 80 MB, against 41 MB now), and the console's
    Handlers panel did so in the server every 2 s. Now the store hands over only each record's handlers."""
    config = write_config(tmp_path, audit={"keepDays": None, "maxMB": None})
    store = SQLiteStore(str(tmp_path / "state"))
    try:
        for start in range(0, 800, 100):
            records = [_record(i, 50_000) for i in range(start, start + 100)]
            store.audit_append("m", [AuditEntry.from_record(str(r["id"]), canonical(r), r) for r in records])
        store._db.execute("UPDATE audit_records SET body = 'not json' WHERE id = 'r1'")  # an unreadable row
    finally:
        store.close()
    command = [sys.executable, "-m", "gateway", "audit", "stats", "--json", "--config", str(config)]
    measure = (  # the peak memory of that one process, measured by a parent of its own
        "import json, resource, subprocess, sys; p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
        "print(json.dumps([p.returncode, p.stdout, p.stderr, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", measure, *command], capture_output=True, text=True, cwd=ROOT, timeout=120, check=True
    )
    code, out, err, peak_kb = json.loads(done.stdout)
    assert code == 0, err
    [entry] = json.loads(out)
    durations = [float(i % 10) for i in range(800) if i != 1]
    assert entry["id"] == "g" and entry["calls"] == 799 and entry["denies"] == 200
    assert (entry["p50_ms"], entry["p95_ms"]) == (percentile(durations, 0.5), percentile(durations, 0.95))
    assert peak_kb < 60_000, f"hookgate audit stats peaked at {peak_kb} KB for a 40 MB trail (whole: some 80,000)"
