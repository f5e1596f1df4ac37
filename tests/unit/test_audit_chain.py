"""The audit store's hash chain on both backends (SQLite, a real PostgreSQL): append, filters, retention,
and what verify catches (edited, deleted, reordered)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.audit.report import verify_store
from gateway.audit.retention import voucher
from gateway.store.audit_types import GENESIS, AuditEntry, AuditFilter, link_hash
from gateway.store.pg_conn import Q
from gateway.store.sqlite import SQLiteStore


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """The audit methods on each store: the SQLite file, then a fresh migrated PostgreSQL database."""
    if request.param == "sqlite":
        store: Any = SQLiteStore(str(tmp_path))
    else:
        from gateway.store.postgres import PostgresStore

        store = PostgresStore(request.getfixturevalue("pg_url"))
        store.migrate()
    yield store
    store.close()


def entry(i: int, *, decision: str = "allow", tool: str = "Bash", session: str = "s1", ts: float = 1e9) -> AuditEntry:
    record = {
        "time": f"2001-09-09T01:46:{i % 60:02d}.000Z",
        "event": "PreToolUse",
        "tool_name": tool,
        "session_id": session,
        "decision": decision,
        "handlers": [{"id": f"h{i % 2}", "status": "ok"}],
        "n": i,
    }
    body = json.dumps(record, sort_keys=True, separators=(",", ":"))
    return AuditEntry.from_body(f"id-{i}", body)


VOUCH = voucher({"keep_days": 30, "max_mb": None}, version="test", config_hash=None)


def problem(store: object) -> str | None:
    reports = verify_store(store)
    bad = [r.problem for r in reports if r.problem is not None]
    return str(bad[0]) if bad else None


def test_append_assigns_seq_and_links(backend: Any) -> None:
    store = backend
    assert store.audit_append("m1", [entry(1), entry(2)]) == 2
    assert store.audit_append("m1", [entry(2), entry(3)]) == 1  # id-2 is already there
    rows = store.audit_chain("m1")
    assert [r.seq for r in rows] == [1, 2, 3]
    assert rows[0].prev_hash == GENESIS and rows[1].prev_hash == rows[0].hash
    assert rows[2].hash == link_hash(rows[1].hash, "m1", 3, rows[2].body)
    assert problem(store) is None


def test_newest_means_by_time_unless_the_store_order_is_asked_for(backend: Any) -> None:
    """A ``hookgate run`` record waits in the spool and reaches the store after a later ``serve`` record:
    ``tail``/``query``/the console list by the record's time; an export (which must verify) by insertion."""
    store = backend
    store.audit_append("serve", [entry(20)])  # 01:46:20, stored first
    store.audit_append("serve", [entry(10)])  # 01:46:10, spooled by `hookgate run`, moved in later
    store.audit_append("other", [entry(15)])
    assert [r.id for r in store.audit_records(AuditFilter())] == ["id-20", "id-15", "id-10"]
    assert [r.id for r in store.audit_records(AuditFilter(limit=1))] == ["id-20"]
    assert [r.id for r in store.audit_records(AuditFilter(order="insertion"))] == ["id-15", "id-10", "id-20"]
    with pytest.raises(ValueError, match="audit order 'random'"):
        store.audit_records(AuditFilter(order="random"))


def test_two_chains_verify_independently(backend: Any) -> None:
    store = backend
    store.audit_append("a", [entry(1)])
    store.audit_append("b", [entry(2), entry(3)])
    store.audit_append("a", [entry(4)])
    heads = {h.chain: h.seq for h in store.audit_heads()}
    assert heads == {"a": 2, "b": 2}
    assert problem(store) is None


def raw(store: Any, sql: str, *args: object) -> None:
    """Tamper with the tables behind the store's back."""
    if store.kind == "sqlite":
        store._db.execute(sql, args)
        return
    from gateway.store.pg_conn import Q

    def op() -> Any:
        yield Q(sql.replace("?", "%s"), args)

    store._run(op())


def test_verify_catches_an_edited_record(backend: Any) -> None:
    store = backend
    store.audit_append("m", [entry(i) for i in range(1, 6)])
    body = store.audit_chain("m")[2].body.replace('"allow"', '"deny"')
    raw(store, "UPDATE audit_records SET body = ? WHERE seq = 3", body)
    assert problem(store) == "chain 'm' seq 3 (record id-3): hash mismatch: the record was edited"


def test_verify_catches_an_edited_filter_column(backend: Any) -> None:
    store = backend
    store.audit_append("m", [entry(1, decision="deny")])
    raw(store, "UPDATE audit_records SET decision = 'allow'")
    assert "column decision ('allow') disagrees with the record ('deny')" in (problem(store) or "")


def test_verify_catches_an_edited_id_column_of_a_record_whose_body_has_its_id(backend: Any) -> None:
    store = backend
    record = {**json.loads(entry(1).body), "id": "rec-1"}
    store.audit_append("m", [AuditEntry.from_body("rec-1", json.dumps(record, sort_keys=True))])
    assert problem(store) is None
    raw(store, "UPDATE audit_records SET id = 'forged'")
    assert problem(store) == "chain 'm' seq 1 (record forged): column id ('forged') disagrees with the record ('rec-1')"


def test_an_id_column_edited_into_terminal_controls_is_named_escaped(backend: Any) -> None:
    store = backend
    record = {**json.loads(entry(1).body), "id": "rec-1"}
    store.audit_append("m", [AuditEntry.from_body("rec-1", json.dumps(record, sort_keys=True))])
    raw(store, "UPDATE audit_records SET id = ?", "x\x1b[2J\u202e")
    said = problem(store) or ""
    assert said.startswith("chain 'm' seq 1 (record x\\x1b[2J\\u202e): column id") and said.isprintable(), said


def test_a_record_from_before_the_id_was_in_its_body_still_verifies(backend: Any) -> None:
    """Such a record's id column is not covered (README "The hash chain"): editing it passes, as before."""
    store = backend
    store.audit_append("m", [entry(1), entry(2)])
    raw(store, "UPDATE audit_records SET id = 'renamed' WHERE seq = 2")
    assert problem(store) is None


def test_verify_catches_a_deleted_record(backend: Any) -> None:
    store = backend
    store.audit_append("m", [entry(i) for i in range(1, 6)])
    raw(store, "DELETE FROM audit_records WHERE seq = 2")
    assert problem(store) == "chain 'm' seq 2: missing (deleted?): the chain jumps from seq 1 to 3"


def test_verify_catches_deleted_newest_records(backend: Any) -> None:
    store = backend
    store.audit_append("m", [entry(i) for i in range(1, 6)])
    raw(store, "DELETE FROM audit_records WHERE seq >= 4")
    assert "the chain ends at seq 3 but its head says 5" in (problem(store) or "")


def test_verify_catches_a_deleted_head(backend: Any) -> None:
    store = backend
    store.audit_append("m", [entry(1)])
    raw(store, "DELETE FROM audit_heads")
    assert "no head" in (problem(store) or "")


def test_verify_catches_reordered_records(backend: Any) -> None:
    store = backend
    store.audit_append("m", [entry(i) for i in range(1, 6)])
    # swap the seq numbers of records 2 and 3 (what "reordering" a chained table means)
    raw(store, "UPDATE audit_records SET seq = -1 WHERE seq = 2")
    raw(store, "UPDATE audit_records SET seq = 2 WHERE seq = 3")
    raw(store, "UPDATE audit_records SET seq = 3 WHERE seq = -1")
    assert problem(store) == (
        "chain 'm' seq 2 (record id-3): does not follow the record before it (reordered, or the one before was changed)"
    )


def test_verify_catches_swapped_bodies(backend: Any) -> None:
    store = backend
    store.audit_append("m", [entry(i) for i in range(1, 4)])
    rows = store.audit_chain("m")
    raw(store, "UPDATE audit_records SET body = ? WHERE seq = 1", rows[1].body)
    raw(store, "UPDATE audit_records SET body = ? WHERE seq = 2", rows[0].body)
    assert "seq 1" in (problem(store) or "")


def test_prune_by_age_keeps_the_chain_verifiable(backend: Any) -> None:
    store = backend
    store.audit_append("m", [entry(1), entry(2)])
    # entries 1-2 are from 2001; 3-4 are "now"
    now = [
        AuditEntry.from_body(
            f"new-{i}",
            json.dumps(
                {"time": "2099-01-01T00:00:00.000Z", "event": "Stop", "decision": "none", "handlers": []},
                sort_keys=True,
                separators=(",", ":"),
            ),
        )
        for i in range(2)
    ]
    store.audit_append("m", now)
    assert store.audit_prune(before=2e9, voucher=VOUCH) == 2
    head = store.audit_heads()[0]
    assert (head.base_seq, head.seq) == (2, 5)  # seq 5: the retention record, appended in the same transaction
    rows = store.audit_chain("m")
    assert [r.seq for r in rows] == [3, 4, 5]
    claim = rows[-1].record
    assert claim["event"] == "AuditRetention" and claim["retention"]["first_seq"] == 1
    assert (claim["retention"]["last_seq"], claim["retention"]["last_hash"]) == (2, head.base_hash)
    assert claim["retention"]["keep_days"] == 30 and claim["reason"].startswith("retention pruned seq 1-2")
    assert problem(store) is None
    [report] = verify_store(store)
    assert report.voucher_seq == 5 and report.checked == 3
    raw(store, "DELETE FROM audit_records WHERE seq = 3")
    assert "missing" in (problem(store) or "")


def test_a_second_prune_is_vouched_for_by_its_own_record(backend: Any) -> None:
    store = backend
    store.audit_append("m", [entry(1), entry(2)])
    store.audit_prune(before=2e9, voucher=VOUCH)  # base 2; the retention record is seq 3
    store.audit_append("m", [entry(4), entry(5)])  # from 2001 too: seq 4, 5
    assert store.audit_prune(before=1.5e9, voucher=VOUCH) == 3  # a prefix: seq 3 (the first voucher) to 5
    head = store.audit_heads()[0]
    rows = store.audit_chain("m")
    assert head.base_seq == 5 and [r.seq for r in rows] == [6]
    assert (rows[0].record["retention"]["first_seq"], rows[0].record["retention"]["last_seq"]) == (3, 5)
    assert problem(store) is None
    assert store.audit_prune(before=1.5e9, voucher=VOUCH) == 0  # nothing old left: no new record


def test_deleting_the_oldest_records_and_moving_the_base_is_caught(backend: Any) -> None:
    """The attack: delete seq 1-5 and set the head's base_seq/base_hash to match; nothing vouches for it."""
    store = backend
    store.audit_append("m", [entry(i) for i in range(1, 9)])
    fifth = store.audit_chain("m")[4]
    raw(store, "DELETE FROM audit_records WHERE seq <= 5")
    raw(store, f"UPDATE audit_heads SET base_seq = 5, base_hash = '{fifth.hash}'")
    found = problem(store) or ""
    assert "records 1-5 are gone but no retention record" in found, found


def test_moving_the_base_past_a_vouched_one_is_caught(backend: Any) -> None:
    store = backend
    store.audit_append("m", [entry(1), entry(2)])
    store.audit_prune(before=2e9, voucher=VOUCH)  # base 2, its retention record at seq 3
    store.audit_append("m", [entry(i) for i in range(4, 10)])
    fifth = next(r for r in store.audit_chain("m") if r.seq == 5)
    raw(store, "DELETE FROM audit_records WHERE seq <= 5")  # a prefix: the retention record goes too
    raw(store, f"UPDATE audit_heads SET base_seq = 5, base_hash = '{fifth.hash}'")
    found = problem(store) or ""
    assert "records 1-5 are gone but no retention record" in found, found


def test_prune_by_size(backend: Any) -> None:
    store = backend
    entries = []
    for i in range(10):
        body = json.dumps(
            {
                "time": f"2030-01-01T00:00:{i:02d}.000Z",
                "event": "Stop",
                "decision": "none",
                "handlers": [],
                "pad": "x" * 1000,
            },
            sort_keys=True,
            separators=(",", ":"),
        )
        entries.append(AuditEntry.from_body(f"e{i}", body))
    store.audit_append("m", entries)
    size = entries[0].size
    limit = size * 4 + 10
    removed = store.audit_prune(max_bytes=limit, voucher=VOUCH)
    assert removed == 7  # room is left for the retention record: the three newest stay
    count, total = store.audit_size()
    assert count == 4 and total <= limit  # the three newest and the retention record
    assert problem(store) is None
    # within the limit, retention record included: another prune (each audit command) deletes nothing; it
    # once deleted one more record each time and appended one more retention record, wearing the trail down
    for _ in range(3):
        assert store.audit_prune(max_bytes=limit, voucher=VOUCH) == 0
    assert store.audit_size() == (count, total)


def test_filters(backend: Any) -> None:
    store = backend
    store.audit_append(
        "m",
        [
            entry(1, decision="deny", tool="Bash", session="a"),
            entry(2, decision="allow", tool="Edit", session="b"),
            entry(3, decision="deny", tool="Edit", session="a"),
        ],
    )

    def ids(**kw: Any) -> list[str]:
        return [r.id for r in store.audit_records(AuditFilter(**kw))]

    assert ids() == ["id-3", "id-2", "id-1"]
    assert ids(decision="deny") == ["id-3", "id-1"]
    assert ids(tool="Edit", session="a") == ["id-3"]
    assert ids(handler="h0") == ["id-2"]
    assert ids(limit=1) == ["id-3"]
    assert ids(after=2) == ["id-3"]
    assert store.audit_record("id-2") is not None and store.audit_record("nope") is None


def test_handler_filter_is_not_a_pattern(backend: Any) -> None:
    store = backend
    body = json.dumps(
        {
            "time": "2030-01-01T00:00:00.000Z",
            "event": "Stop",
            "decision": "none",
            "handlers": [{"id": "a_b"}, {"id": "a%"}],
        },
        sort_keys=True,
    )
    store.audit_append("m", [AuditEntry.from_body("x", body)])
    assert len(store.audit_records(AuditFilter(handler="a_b"))) == 1
    assert store.audit_records(AuditFilter(handler="aXb")) == []
    assert len(store.audit_records(AuditFilter(handler="a%"))) == 1


def test_rejects_a_row_that_is_not_a_record() -> None:
    with pytest.raises(ValueError):
        AuditEntry.from_body("x", "[1]")
    with pytest.raises((ValueError, KeyError)):
        AuditEntry.from_body("x", "{}")
    assert sqlite3.sqlite_version_info >= (3, 25)  # window functions (prune by size)


def test_concurrent_writers_never_fork_a_chain(backend: Any, tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def writer(w: int) -> None:
        if backend.kind == "sqlite":
            store: Any = SQLiteStore(str(tmp_path))
        else:
            from gateway.store.postgres import PostgresStore

            store = PostgresStore(backend.url)
        try:
            for i in range(20):
                store.audit_append("shared" if i % 3 else f"own-{w}", [entry(1000 * w + i)])
        finally:
            store.close()

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(writer, range(4)))
    heads = {h.chain: h.seq for h in backend.audit_heads()}
    assert heads["shared"] == 4 * 13 and all(heads[f"own-{w}"] == 7 for w in range(4))
    assert problem(backend) is None


def _recent(n: int) -> list[AuditEntry]:
    """``n`` records from 2099 (never old)."""
    return [
        AuditEntry.from_body(
            f"new-{i}",
            json.dumps(
                {"time": "2099-01-01T00:00:00.000Z", "event": "Stop", "decision": "none", "handlers": [], "i": i},
                sort_keys=True,
                separators=(",", ":"),
            ),
        )
        for i in range(n)
    ]


def test_a_backdated_ts_column_neither_prunes_the_records_before_it_nor_passes_verify(backend: Any) -> None:
    """The attack (fresh-eyes review): change only seq 4's ts column to 1970; retention used to delete seq 1-4
    with a genuine retention record, and verify passed. Now retention prunes only an old prefix and verify
    checks ts against the record."""
    store = backend
    store.audit_append("m", _recent(6))
    raw(store, "UPDATE audit_records SET ts = 0 WHERE seq = 4")
    assert store.audit_prune(before=2e9, voucher=VOUCH) == 0
    assert [r.seq for r in store.audit_chain("m")] == [1, 2, 3, 4, 5, 6]
    found = problem(store) or ""
    assert "seq 4" in found and "column ts" in found, found


def test_an_inflated_size_column_does_not_drive_retention(backend: Any) -> None:
    """Retention by size counts the bodies' own bytes, so a size column set to 300 MB prunes nothing."""
    store = backend
    store.audit_append("m", _recent(6))
    raw(store, "UPDATE audit_records SET size = 300000000 WHERE seq = 3")
    assert store.audit_prune(max_bytes=10_000_000, voucher=VOUCH) == 0
    assert [r.seq for r in store.audit_chain("m")] == [1, 2, 3, 4, 5, 6]


def test_verify_does_not_apply_retention_first(tmp_path: Path) -> None:
    """`hookgate audit verify` checks the records as they are: retention (which acts on the ts column) runs
    for the other audit commands, never before verify."""
    from tests.conftest import run_hookgate

    state = tmp_path / "state"
    config = tmp_path / "hookgate.json"
    config.write_text(json.dumps({"settings": {"stateDir": str(state)}, "audit": {"keepDays": 1}, "hooks": {}}))
    store = SQLiteStore(str(state))
    store.audit_append("m", [entry(1), entry(2)])  # from 2001: far past keepDays
    store.close()
    checked = run_hookgate(["audit", "verify", "--config", str(config)])
    assert checked.returncode == 0, checked.stderr
    store = SQLiteStore(str(state))
    assert [r.seq for r in store.audit_chain("m")] == [1, 2]  # still there
    store.close()
    from gateway.audit.spool import append

    append(str(state), "id-3", entry(3).body)  # a `hookgate run` record waiting in the spool: verify moves it
    checked = run_hookgate(["audit", "verify", "--config", str(config)])
    assert checked.returncode == 0 and "pruned" not in checked.stdout, checked.stdout + checked.stderr
    store = SQLiteStore(str(state))
    assert sum(len(store.audit_chain(h.chain)) for h in store.audit_heads()) == 3  # moved in, nothing pruned
    store.close()


def _other(backend: Any, tmp_path: Path) -> Any:
    """A second connection to the same store, as another process has."""
    if backend.kind == "sqlite":
        return SQLiteStore(str(tmp_path))
    from gateway.store.postgres import PostgresStore

    return PostgresStore(backend.url)


def test_reads_in_a_snapshot_hold_still_while_another_process_appends_and_prunes(backend: Any, tmp_path: Path) -> None:
    from gateway.audit.chain import verify_chain
    from gateway.audit.report import walk

    backend.audit_append("m1", [entry(i) for i in range(5)])
    other = _other(backend, tmp_path)
    try:
        with backend.audit_snapshot():
            (head,) = backend.audit_heads()
            other.audit_append("m1", [entry(i) for i in range(5, 9)])  # commits at once
            other.audit_prune(before=2e9, voucher=VOUCH)  # every record is older: all go, one voucher comes
            rows = list(walk(backend, "m1"))
            assert head.seq == 5 and [r.seq for r in rows] == [1, 2, 3, 4, 5]
            assert verify_chain(head, rows).problem is None
        (after,) = backend.audit_heads()  # outside the snapshot: the other connection's work is seen
        assert after.seq == 10 and after.base_seq == 9
        assert problem(backend) is None
    finally:
        other.close()


def test_verify_passes_while_other_processes_append(backend: Any, tmp_path: Path) -> None:
    """`hookgate audit verify` run beside busy writers: a head read before an append must not make the
    chain look longer than its head (the CI failure of test_store_multi that this guards)."""
    import threading

    backend.audit_append("busy", [entry(0)])
    stop = threading.Event()

    def writer(w: int) -> None:
        store = _other(backend, tmp_path)
        try:
            i = 1
            while not stop.is_set():
                store.audit_append("busy", [entry(10_000 * w + i)])
                i += 1
        finally:
            store.close()

    threads = [threading.Thread(target=writer, args=(w,)) for w in (1, 2)]
    for t in threads:
        t.start()
    try:
        import time

        deadline = time.monotonic() + 30  # the writers have opened their stores and are appending
        while backend.audit_heads()[0].seq < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        problems = [problem(backend) for _ in range(40)]
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert problems == [None] * 40
    assert backend.audit_heads()[0].seq > 1  # the writers really wrote meanwhile


def test_a_prune_that_loses_the_race_for_a_chains_head_skips_it(pg_url: str) -> None:
    """Two processes prune at once (`serve`'s writer, an `audit` command): both read the old prefix, one
    holds the head first and deletes it; the other, holding the head next, found its last record gone and
    raised IndexError (`audit verify` exited 1, an internal error). Driven step by step here."""
    import psycopg

    from gateway.store.pg_audit import _prune
    from gateway.store.postgres import PostgresStore

    store = PostgresStore(pg_url)
    store.migrate()
    try:
        store.audit_append("m1", [entry(i, ts=1e9 + i) for i in range(6)])
        with psycopg.connect(pg_url, autocommit=True) as conn, conn.transaction():
            op = _prune(2e9, None, VOUCH)
            q = next(op)  # the old prefix, read before any head is held
            rows = conn.execute(q.sql, q.params).fetchall()
            assert store.audit_prune(before=2e9, voucher=VOUCH) == 6  # the other process wins and commits
            q = op.send(rows)
            try:
                while True:
                    cur = conn.execute(q.sql, q.params)
                    q = op.send(cur.fetchall() if cur.description is not None else [])
            except StopIteration as stop:
                removed = stop.value
        assert removed == 0
        (head,) = store.audit_heads()
        assert head.base_seq == 6 and head.seq == 7 and problem(store) is None
    finally:
        store.close()


def test_an_error_inside_a_snapshot_comes_out_as_it_was_and_the_store_reads_on(backend: Any) -> None:
    backend.audit_append("m1", [entry(1)])
    with pytest.raises(KeyError, match="inside"), backend.audit_snapshot():
        backend.audit_heads()
        raise KeyError("inside")
    assert [h.seq for h in backend.audit_heads()] == [1]  # the read transaction was ended
    with backend.audit_snapshot():  # and a new one can begin
        assert [r.seq for r in backend.audit_chain("m1")] == [1]


def test_a_snapshot_whose_connection_broke_lets_the_error_inside_through(pg_url: str) -> None:
    """Ending the read transaction on a connection the server dropped fails too; that failure must not
    replace the error that was already on its way out of the block."""
    import psycopg

    from gateway.store.postgres import PostgresStore

    store = PostgresStore(pg_url)
    store.migrate()
    try:
        with pytest.raises(KeyError, match="inside"), store.audit_snapshot():
            (pid,) = store._run(_backend_pid())
            with psycopg.connect(pg_url, autocommit=True) as other:
                other.execute("SELECT pg_terminate_backend(%s)", (pid,))
            raise KeyError("inside")
        assert store.audit_heads() == []  # the next call connects again
    finally:
        store.close()


def _backend_pid() -> Any:
    rows = yield Q("SELECT pg_backend_pid()")
    return [int(rows[0][0])]
