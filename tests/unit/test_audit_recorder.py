"""The recorder: one-shot (spool) and background (batched thread) writes end in the same chained store."""

from __future__ import annotations

import json
from pathlib import Path

from gateway.audit.recorder import Recorder
from gateway.audit.report import verify_store
from gateway.decision import HandlerResult, Verdict, merge
from gateway.dialects import parse_event
from gateway.store.audit_types import AuditFilter
from gateway.store.sqlite import SQLiteStore

KEY = "ghp_" + "k" * 36


def event(i: int) -> object:
    return parse_event(
        {
            "hook_event_name": "PreToolUse",
            "session_id": "s",
            "tool_name": "Bash",
            "cwd": "/tmp",
            "tool_input": {"command": f"echo {i} {KEY}"},
            "tool_use_id": f"t{i}",
        },
        "claude",
    )


def decision(i: int) -> object:
    results = [
        HandlerResult(
            id="g",
            type="python",
            duration_ms=0.5,
            verdict=Verdict(
                permission="deny" if i % 2 else None, permission_reason="odd", side_effects=[f"looked at {i}"]
            ),
            meta={"approval": {"id": f"a{i}", "decided_by": "alice", "status": "approved"}},
        )
    ]
    return merge("PreToolUse", results, tool_input={"command": f"echo {i}"})


def recorder(tmp_path: Path, *, background: bool) -> Recorder:
    return Recorder(
        {"record": "handled", "sinks": ["store"], "keep_days": None, "max_mb": None},
        state_dir=str(tmp_path),
        store_factory=lambda: SQLiteStore(str(tmp_path)),
        config_hash="c0ffee",
        version="9.9",
        background=background,
    )


def test_background_and_one_shot_writers_share_the_chain(tmp_path: Path) -> None:
    loud = recorder(tmp_path, background=True)
    for i in range(300):
        loud.submit(event(i), decision(i))  # type: ignore[arg-type]
    once = recorder(tmp_path, background=False)
    once.submit(event(300), decision(300))  # type: ignore[arg-type]  # into the spool
    loud.flush()  # the writer drains the spool as it stops
    loud.close()
    once.close()
    store = SQLiteStore(str(tmp_path))
    rows = store.audit_records(AuditFilter())
    assert len(rows) == 301
    assert [r.problem for r in verify_store(store)] == [None]
    record = json.loads(rows[-1].body)
    assert record["approval"] == {"id": "a0", "decided_by": "alice"}
    assert record["handlers"][0]["side_effects"] == ["looked at 0"]
    assert record["version"] == "9.9" and record["config_hash"] == "c0ffee"
    assert all(KEY not in r.body for r in rows)
    assert {r.decision for r in rows} == {"deny", "none"}


def test_a_secret_in_a_handler_reason_or_side_effect_is_redacted_and_a_handler_id_is_kept(tmp_path: Path) -> None:
    results = [
        HandlerResult(
            id="secret-scan",  # hookgate's own name: not outside text, kept as it is
            type="python",
            duration_ms=0.5,
            verdict=Verdict(permission="deny", permission_reason=f"found {KEY}", side_effects=[f"sent {KEY}"]),
        )
    ]
    plain = merge("PreToolUse", results, tool_input={"command": "ls"})
    once = recorder(tmp_path, background=False)
    _, _, record, body, _, _ = once._prepare(event(0), plain, 1.0, None)  # type: ignore[arg-type]
    assert KEY not in body and record["handlers"][0]["id"] == "secret-scan"
    assert record["handlers"][0]["reason"].startswith("found [REDACTED:")
    assert record["handlers"][0]["side_effects"][0].startswith("sent [REDACTED:")


def test_one_append_of_more_rows_than_one_insert_holds(tmp_path: Path) -> None:
    from gateway.store.audit_types import AuditEntry
    from gateway.store.sqlite_audit import ROWS_PER_INSERT

    store = SQLiteStore(str(tmp_path))
    body = '{"decision":"none","event":"PreToolUse","handlers":[],"time":"2026-12-01T00:00:00.000Z"}'
    count = 2 * ROWS_PER_INSERT + 7
    entries = [AuditEntry.from_body(f"r{i}", body) for i in range(count)]
    assert store.audit_append("c", entries) == count
    assert store.audit_append("c", entries[:3]) == 0  # ids it has are skipped
    assert [r.problem for r in verify_store(store)] == [None]
    assert store.audit_size()[0] == count
