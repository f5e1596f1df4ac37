"""serve's audit writer process (``gateway.audit.writer``): a real child process redacts, chains and
writes what the server's recorder hands it; the server writes itself when the child is gone."""

from __future__ import annotations

import datetime
import json
import logging
import os
import pickle
import signal
import time
from pathlib import Path

import pytest

from gateway.audit.recorder import Recorder
from gateway.audit.report import verify_store
from gateway.decision import HandlerResult, Verdict, merge
from gateway.dialects import parse_event
from gateway.store.audit_types import AuditFilter
from gateway.store.sqlite import SQLiteStore

KEY = "ghp_" + "w" * 36
AUDIT = {"record": "handled", "sinks": ["store"], "redact": [], "keep_days": None, "max_mb": None}


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
    verdict = Verdict(permission="deny" if i % 2 else None, permission_reason=f"saw {KEY}")
    results = [HandlerResult(id="g", type="python", duration_ms=0.5, verdict=verdict)]
    return merge("PreToolUse", results, tool_input={"command": f"echo {i}"})


def serve_recorder(tmp_path: Path, audit: dict[str, object] | None = None) -> Recorder:
    """A recorder as ``hookgate serve`` makes it (RunContext mode ``serve``)."""
    return Recorder(
        audit or AUDIT,
        state_dir=str(tmp_path),
        store_factory=lambda: SQLiteStore(str(tmp_path)),
        config_hash="c0ffee",
        version="9.9",
        background=True,
        process={"state_dir": str(tmp_path), "store": None},
    )


def wait_child(recorder: Recorder, timeout: float = 20.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        child = recorder._child
        if child is not None:
            return child.proc.pid
        time.sleep(0.02)
    raise AssertionError("no writer process started")


def first_record_written(recorder: Recorder, state_dir: Path) -> int:
    """Submit record 0 and wait until the writer process has stored it; the writer's pid."""
    recorder.submit(event(0), decision(0))  # type: ignore[arg-type]
    pid = wait_child(recorder)
    deadline = time.monotonic() + 20
    while not SQLiteStore(str(state_dir)).audit_records(AuditFilter()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return pid


def test_records_go_through_a_writer_process_redacted_and_chained(tmp_path: Path) -> None:
    rec = serve_recorder(tmp_path)
    for i in range(700):  # more than one batch
        rec.submit(event(i), decision(i))  # type: ignore[arg-type]
    pid = wait_child(rec)
    assert pid != os.getpid()
    assert "gateway.audit.writer" in Path(f"/proc/{pid}/cmdline").read_text()
    rec.close()
    with pytest.raises(ProcessLookupError):  # it wrote everything and ended when its pipe closed
        os.kill(pid, 0)
    store = SQLiteStore(str(tmp_path))
    rows = store.audit_records(AuditFilter())
    assert len(rows) == 700
    assert [r.problem for r in verify_store(store)] == [None]
    assert {r.decision for r in rows} == {"deny", "none"}
    record = json.loads(rows[0].body)
    assert record["version"] == "9.9" and record["config_hash"] == "c0ffee"
    assert record["handlers"][0]["reason"].startswith("saw [REDACTED:")
    for name in os.listdir(tmp_path):  # never on disk unredacted: database, WAL, spool
        path = tmp_path / name
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), name


def test_the_writer_process_ignores_sigint_and_sigterm_and_finishes_its_records(tmp_path: Path) -> None:
    rec = serve_recorder(tmp_path)
    rec.submit(event(0), decision(0))  # type: ignore[arg-type]
    pid = wait_child(rec)
    time.sleep(0.5)  # the child has set its signal handlers up
    os.kill(pid, signal.SIGINT)  # a Ctrl-C reaches the whole process group
    os.kill(pid, signal.SIGTERM)
    for i in range(1, 50):
        rec.submit(event(i), decision(i))  # type: ignore[arg-type]
    rec.close()
    assert len(SQLiteStore(str(tmp_path)).audit_records(AuditFilter())) == 50


def test_when_the_writer_process_dies_the_server_writes_the_records_itself(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rec = serve_recorder(tmp_path)
    pid = first_record_written(rec, tmp_path)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    with caplog.at_level(logging.ERROR, logger="hookgate.audit"):
        for i in range(1, 40):
            rec.submit(event(i), decision(i))  # type: ignore[arg-type]
            time.sleep(0.01)
        rec.close()
    assert "the writer process ended" in caplog.text
    store = SQLiteStore(str(tmp_path))
    rows = store.audit_records(AuditFilter())
    # the one the child wrote before it died, then the rest from the server's own thread (with what was
    # sent into the dead pipe, which the child never acknowledged), in the same chain, none twice
    assert sorted(json.loads(r.body)["tool_use_id"] for r in rows) == sorted(f"t{i}" for i in range(40))
    assert [r.problem for r in verify_store(store)] == [None]
    assert all(KEY not in r.body for r in rows)


def test_a_batch_the_dead_writer_wrote_but_never_acknowledged_is_not_stored_twice(tmp_path: Path) -> None:
    from gateway.audit.pipe import WriterProcess

    rec = serve_recorder(tmp_path)
    for i in range(5):
        rec._packed.append(rec._pack(event(i), decision(i), time.time(), None))  # type: ignore[arg-type]
    blobs = rec._batch(5)  # each with its id from here on
    child = WriterProcess(
        {"audit": AUDIT, "state_dir": str(tmp_path), "settings": rec.process, "config_hash": "c", "version": "v"}
    )
    child.send(blobs)
    deadline = time.monotonic() + 20
    while len(SQLiteStore(str(tmp_path)).audit_records(AuditFilter())) < 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    child._unacked.append((99, blobs))  # as if its acknowledgement had been lost with it
    os.kill(child.proc.pid, signal.SIGKILL)
    assert child.stop(10)
    left = child.unwritten()
    assert len(left) == 5
    assert left == blobs  # the same ids: the store keeps the ones it has
    rec.write_packed(left)
    rec.close()
    assert len(SQLiteStore(str(tmp_path)).audit_records(AuditFilter())) == 5


def test_a_value_pickle_cannot_carry_is_stored_as_its_json_text(tmp_path: Path) -> None:
    class Opaque:
        def __reduce__(self) -> object:
            raise TypeError("not picklable")

        def __str__(self) -> str:
            return "opaque-value"

    rec = serve_recorder(tmp_path)
    plain = decision(0)
    plain.updated_input = {"when": datetime.date(2026, 12, 1), "thing": Opaque()}  # type: ignore[attr-defined]
    rec.submit(event(0), plain)  # type: ignore[arg-type]
    rec.close()
    (row,) = SQLiteStore(str(tmp_path)).audit_records(AuditFilter())
    assert json.loads(row.body)["updated_input"] == {"when": "2026-12-01", "thing": "opaque-value"}


class TwoArgs(Exception):
    """Pickles, but cannot be unpickled (its ``__init__`` wants two arguments; pickle passes its args)."""

    def __init__(self, a: str, b: str) -> None:
        super().__init__(f"{a}/{b}")


def test_an_object_that_pickles_but_cannot_be_unpickled_costs_no_other_record(tmp_path: Path) -> None:
    rec = serve_recorder(tmp_path)
    for i in range(10):
        rec.submit(event(i), decision(i))  # type: ignore[arg-type]
    odd = decision(10)
    odd.updated_input = {"command": TwoArgs("x", "y")}  # type: ignore[attr-defined]
    rec.submit(event(10), odd)  # type: ignore[arg-type]
    for i in range(11, 20):
        rec.submit(event(i), decision(i))  # type: ignore[arg-type]
    rec.close()
    rows = SQLiteStore(str(tmp_path)).audit_records(AuditFilter())
    assert sorted(json.loads(r.body)["tool_use_id"] for r in rows) == sorted(f"t{i}" for i in range(20))
    (odd_row,) = [r for r in rows if json.loads(r.body)["tool_use_id"] == "t10"]
    assert json.loads(odd_row.body)["updated_input"] == {"command": "x/y"}
    rec.write_packed([("odd-id", pickle.dumps(TwoArgs("a", "b")))])  # cannot be unpacked: reported, skipped


def test_the_writer_process_drains_the_spool_of_run_processes(tmp_path: Path) -> None:
    once = Recorder(
        AUDIT,
        state_dir=str(tmp_path),
        store_factory=lambda: SQLiteStore(str(tmp_path)),
        config_hash="c0ffee",
        version="9.9",
    )
    once.submit(event(1), decision(1))  # type: ignore[arg-type]  # a `hookgate run` record: into the spool
    once.close()
    rec = serve_recorder(tmp_path)
    rec.submit(event(2), decision(2))  # type: ignore[arg-type]
    rec.close()
    store = SQLiteStore(str(tmp_path))
    assert sorted(json.loads(r.body)["tool_use_id"] for r in store.audit_records(AuditFilter())) == ["t1", "t2"]
    assert [r.problem for r in verify_store(store)] == [None]


def test_a_failed_upkeep_does_not_hide_that_records_wait_in_the_spool(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from gateway.errors import StoreError

    rec = serve_recorder(tmp_path)
    with caplog.at_level(logging.ERROR, logger="hookgate.audit"):
        rec._report(StoreError("retention failed: the store went away"))  # the upkeep's failure first
        rec._report(StoreError("the store went away"), kept=True)  # then a batch goes to the spool
        rec._report(StoreError("again"))  # within the minute: not repeated
        rec._report(StoreError("again"), kept=True)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2
    assert lines[0].startswith("audit: cannot record: retention failed")
    assert "they wait in the spool" in lines[1]


def test_the_writer_runs_at_idle_priority_and_a_stalled_writer_is_written_around(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The writer takes only idle CPU (SCHED_IDLE). When it falls MAX_LAG batches behind (here: stopped
    with SIGSTOP, as a machine with no idle CPU would hold it), the server writes the next batches
    itself; when it runs again it writes what it had: every record once, one valid chain."""

    rec = serve_recorder(tmp_path)
    pid = first_record_written(rec, tmp_path)
    if hasattr(os, "SCHED_IDLE"):
        assert os.sched_getscheduler(pid) == os.SCHED_IDLE
    os.kill(pid, signal.SIGSTOP)
    try:
        with caplog.at_level(logging.ERROR, logger="hookgate.audit"):
            n = 1
            deadline = time.monotonic() + 30
            while rec.written_here == 0 and time.monotonic() < deadline:  # a batch per flush, until behind
                rec.submit(event(n), decision(n))  # type: ignore[arg-type]
                n += 1
                time.sleep(0.05)
        assert rec.written_here > 0, "the server never wrote around the stalled writer"
        assert "batches behind" in caplog.text
        written = {json.loads(r.body)["tool_use_id"] for r in SQLiteStore(str(tmp_path)).audit_records(AuditFilter())}
        assert len(written) < n  # the stalled writer's batches (at least MAX_LAG of them) are still waiting
    finally:
        os.kill(pid, signal.SIGCONT)
    rec.close()
    store = SQLiteStore(str(tmp_path))
    rows = store.audit_records(AuditFilter())
    assert sorted(json.loads(r.body)["tool_use_id"] for r in rows) == sorted(f"t{i}" for i in range(n))
    assert [r.problem for r in verify_store(store)] == [None]


def test_the_recorder_a_reload_replaces_is_closed_off_the_event_path(tmp_path: Path) -> None:
    """Serve's first event after a reload that changed the config gets a new recorder; closing the old
    one (its last batch, its writer process's exit: seconds under load, here a stopped writer that
    would hold it for the 5 s stop timeout) happens in a thread of its own, and its records still land."""
    import threading

    from gateway.config import load_config
    from gateway.context import RunContext

    def config(command: str) -> object:
        path = tmp_path / f"{command}.json"
        hooks = {"PreToolUse": [{"hooks": [{"type": "command", "command": command}]}]}
        path.write_text(json.dumps({"settings": {"stateDir": str(tmp_path)}, "hooks": hooks}))
        return load_config([str(path)], use_cache=False)

    ctx = RunContext(config("true"), mode="serve")  # type: ignore[arg-type]
    old = ctx.recorder()
    assert isinstance(old, Recorder)
    old.submit(event(0), decision(0))  # type: ignore[arg-type]
    pid = wait_child(old)
    os.kill(pid, signal.SIGSTOP)
    try:
        for i in range(1, 6):
            old.submit(event(i), decision(i))  # type: ignore[arg-type]
        ctx.config = config("exit 0")  # type: ignore[assignment]  # a reload: another config hash
        replaced = threading.Event()
        threading.Thread(target=lambda: (ctx.recorder(), replaced.set()), daemon=True).start()
        assert replaced.wait(4.0), "the event path waited for the old recorder to close"
        assert ctx.recorder() is not old
    finally:
        os.kill(pid, signal.SIGCONT)
    for thread in threading.enumerate():
        if thread.name == "hookgate-audit-close":
            thread.join(30)
    ctx.close_recorder()
    rows = SQLiteStore(str(tmp_path)).audit_records(AuditFilter())
    assert sorted(json.loads(r.body)["tool_use_id"] for r in rows) == [f"t{i}" for i in range(6)]
