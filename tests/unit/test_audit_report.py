"""Time filters, percentiles and per-handler stats of `hookgate audit` (gateway.audit.report)."""

from __future__ import annotations

import csv
import io
import json

import pytest

from gateway.audit.record import iso_time
from gateway.audit.report import csv_cell, csv_text, parse_since, percentile, stats
from gateway.store.audit_types import AuditRow


def test_parse_since() -> None:
    now = 1_000_000.0
    assert parse_since("90s", now) == now - 90
    assert parse_since("15m", now) == now - 900
    assert parse_since("1h", now) == now - 3600
    assert parse_since("2d", now) == now - 172800
    assert parse_since("1.5h", now) == now - 5400
    assert parse_since("1970-01-02") == 86400.0  # no zone: UTC
    assert parse_since("1970-01-01T01:00:00Z") == 3600.0
    assert parse_since("1970-01-01T02:00:00+01:00") == 3600.0
    with pytest.raises(ValueError, match="expected a duration"):
        parse_since("yesterday")


def test_iso_time() -> None:
    assert iso_time(0.5) == "1970-01-01T00:00:00.500Z"
    assert iso_time(86399.999) == "1970-01-01T23:59:59.999Z"


def test_percentile_nearest_rank() -> None:
    assert percentile([], 0.5) == 0.0
    assert percentile([3.0], 0.95) == 3.0
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.5) == 50.0
    assert percentile(values, 0.95) == 95.0


def row(n: int, handlers: list[dict[str, object]]) -> AuditRow:
    body = json.dumps(
        {"time": "2030-01-01T00:00:00.000Z", "event": "PreToolUse", "decision": "none", "handlers": handlers}
    )
    return AuditRow(n, f"id{n}", "m", n, "", "", 0.0, body, "PreToolUse", None, None, "none", "")


def test_stats_per_handler() -> None:
    rows = [
        row(3, [{"id": "g", "type": "command", "status": "timeout", "verdict": "none", "duration_ms": 1000}]),
        row(
            2,
            [
                {"id": "g", "type": "command", "status": "ok", "verdict": "deny", "duration_ms": 4},
                {"id": "p", "type": "prompt", "status": "cached", "verdict": "none", "duration_ms": 0},
            ],
        ),
        row(1, [{"id": "g", "type": "command", "status": "error", "verdict": "none", "duration_ms": 2}]),
    ]
    by_id = {s["id"]: s for s in stats(rows)}
    assert list(by_id) == ["g", "p"]  # first seen, oldest first
    assert by_id["g"] == {
        "id": "g",
        "type": "command",
        "calls": 3,
        "denies": 1,
        "errors": 1,
        "timeouts": 1,
        "p50_ms": 4.0,
        "p95_ms": 1000.0,
    }
    assert by_id["p"]["calls"] == 1 and by_id["p"]["p50_ms"] == 0.0  # cached runs take no part in latency


def test_csv_cell_quotes_what_a_spreadsheet_would_run_as_a_formula() -> None:
    for text in ("=1+1", "+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1"):
        assert csv_cell(text) == "'" + text
    for value, cell in (("a=b", "a=b"), ("", ""), (None, ""), (-5, -5), (2.5, 2.5), (True, "True")):
        assert csv_cell(value) == cell
    assert csv_cell({"command": "=1"}) == '{"command": "=1"}' and csv_cell(["-x"]) == '["-x"]'
    record = {"time": "2030-01-01T00:00:00.000Z", "event": "PreToolUse", "reason": '=HYPERLINK("http://x")'}
    text = csv_text([AuditRow(1, "=id", "-chain", 1, "", "+h", 0.0, json.dumps(record), "", None, None, "", "")])
    [line] = list(csv.DictReader(io.StringIO(text, newline="")))
    assert line["reason"] == '\'=HYPERLINK("http://x")' and line["id"] == "'=id" and line["chain"] == "'-chain"
    assert line["hash"] == "'+h" and line["event"] == "PreToolUse" and text.endswith("\r\n")
