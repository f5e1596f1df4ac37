"""A state store whose rows were edited by hand (SQLite keeps text in an INTEGER column, a blob in a TEXT
one, anything in a JSON column): `hookgate audit verify` names the damage (exit 1, one line), `audit
tail/query/export/stats` show what they can and mark the damaged row, and no command ends in an
internal error (real `hookgate` subprocesses on a real SQLite state dir)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from gateway.audit.follow import Follower
from gateway.store.audit_types import AuditFilter
from gateway.store.sqlite import SQLiteStore
from tests.conftest import ROOT
from tests.integration.test_audit_run import audit, bash, run, write_config

READERS = (("tail",), ("query", "--json"), ("export",), ("export", "--format", "csv"), ("stats",))


def edit(db: Path, *statements: str) -> None:
    with sqlite3.connect(db) as conn:
        for sql in statements:
            conn.execute(sql)
    conn.close()


def clean(proc: object) -> bool:
    err = getattr(proc, "stderr", "")
    return "internal error" not in err and "Traceback" not in err


def test_a_head_row_edited_into_text_is_reported_and_the_trail_still_reads(tmp_path: Path) -> None:
    """`audit_heads.seq` edited into text once made every `hookgate audit` command an internal error (the
    spool's drain read it with int(), verify compared it); now verify names it, the others show the
    stored records, and the records waiting in the spool stay there until the head is repaired."""
    config = write_config(tmp_path)
    for i in range(3):
        run(config, bash(f"echo {i}"))
    assert audit(config, "verify").returncode == 0  # drains the spool into the store
    db = tmp_path / "state" / "state.sqlite3"
    edit(db, "UPDATE audit_heads SET seq = 'abc'")
    run(config, bash("echo spooled"))  # waits in the spool: the store takes nothing onto that chain
    verified = audit(config, "verify")
    assert verified.returncode == 1 and clean(verified), verified.stderr
    assert "its head row is damaged: seq 'abc' is not an integer" in verified.stderr
    assert "were not moved into the store" in verified.stderr
    for args in READERS:
        shown = audit(config, *args)
        assert shown.returncode == 0 and clean(shown), (args, shown.stderr)
        assert "its head row is damaged" in shown.stderr, (args, shown.stderr)
    queried = json.loads(audit(config, "query", "--json").stdout)
    assert [r["tool_input"]["command"] for r in queried] == ["echo 0", "echo 1", "echo 2"]
    assert os.listdir(tmp_path / "state" / "audit")  # the spooled record was kept
    edit(db, "UPDATE audit_heads SET seq = 3")  # repaired: the spooled record is moved and chained
    repaired = audit(config, "verify")
    assert repaired.returncode == 0 and "4 record(s) ok" in repaired.stdout, repaired.stderr
    for sql, what in (
        ("UPDATE audit_heads SET base_seq = 'x'", "base_seq 'x' is not an integer"),
        ("UPDATE audit_heads SET base_seq = 0, hash = X'01'", "hash b'\\x01' is not text"),
    ):
        edit(db, sql)
        damaged = audit(config, "verify")
        assert damaged.returncode == 1 and clean(damaged), damaged.stderr
        assert damaged.stderr.strip().splitlines()[-1].endswith(f"its head row is damaged: {what}"), damaged.stderr


def test_record_columns_edited_into_other_types_cannot_stop_reading_the_trail(tmp_path: Path) -> None:
    """A `ts` edited into text under a broken body, a blob where a session id or a hash was, a `seq` edited
    into text: `query --json`, `export` and `stats` once failed with an internal error on them (and
    `verify` on the last); now they show the row (its columns as stored, `unreadable` saying why) and
    `verify` names it."""
    config = write_config(tmp_path)
    for i in range(4):
        run(config, bash(f"echo {i}"))
    assert audit(config, "verify").returncode == 0
    db = tmp_path / "state" / "state.sqlite3"
    edit(
        db,
        "UPDATE audit_records SET body = '{cut', ts = 'x', session_id = X'01' WHERE seq = 2",
        "UPDATE audit_records SET hash = X'02' WHERE seq = 3",
    )
    for args in READERS:
        shown = audit(config, *args)
        assert shown.returncode == 0 and clean(shown), (args, shown.stderr)
    rows = json.loads(audit(config, "query", "--json").stdout)
    [broken] = [row for row in rows if "unreadable" in row]  # (its ts is text: SQLite sorts it after every time)
    assert broken["time"] == "x" and broken["session_id"] == "b'\\x01'" and "not JSON" in broken["unreadable"]
    chained = [json.loads(line)["_chain"] for line in audit(config, "export").stdout.splitlines()]
    assert chained[2]["hash"] == "b'\\x02'" and chained[3]["seq"] == 4
    verified = audit(config, "verify")
    assert verified.returncode == 1 and "seq 2" in verified.stderr and clean(verified), verified.stderr
    edit(db, "UPDATE audit_records SET body = '{}' WHERE seq = 2", "UPDATE audit_records SET seq = 'x' WHERE seq = 4")
    edit(db, "DELETE FROM audit_records WHERE seq IN (2, 3)")
    edit(db, "UPDATE audit_heads SET seq = 1, hash = (SELECT hash FROM audit_records WHERE seq = 1)")
    verified = audit(config, "verify")
    assert verified.returncode == 1 and clean(verified), verified.stderr
    assert "seq 2 (record " in verified.stderr and "its seq column ('x') is not an integer" in verified.stderr
    store = SQLiteStore(str(tmp_path / "state"))  # tail --follow's cursors pass the row by
    try:
        follower = Follower(store)
        assert follower.poll() == []
        assert [follower.seen(row) for row in store.audit_records(AuditFilter())] == [True, True]
    finally:
        store.close()


def test_a_torn_spool_line_costs_neither_the_next_record_nor_verify(tmp_path: Path) -> None:
    """A spool write cut short (a full disk's short write, a crash) leaves a piece without its newline, and
    the next `hookgate run` appends its record right after it. That record was stored under an id with the
    piece in front (`verify` then failed for good: "column id disagrees with the record") or, when the piece
    held a tab, was dropped as not JSON. Now both records are kept under their own ids and the chain verifies."""
    config = write_config(tmp_path)
    spool = tmp_path / "state" / "audit" / "spool.jsonl"
    run(config, bash("echo 0"))
    with spool.open("ab") as fh:
        fh.write(b'{"truncated": ')  # a piece of a line, no tab
    run(config, bash("echo 1"))
    with spool.open("ab") as fh:
        fh.write(b'18eeb95fe7353fcc-1c87-5ec18323\t{"approval":nu')  # a record cut inside its JSON
    run(config, bash("echo 2"))
    verified = audit(config, "verify")
    assert verified.returncode == 0 and "3 record(s) ok" in verified.stdout, verified.stderr
    queried = [r for r in json.loads(audit(config, "query", "--json").stdout) if r["tool_input"]]
    assert [r["tool_input"]["command"] for r in queried] == ["echo 0", "echo 1", "echo 2"]


def test_a_read_only_state_dir_is_said_as_such(tmp_path: Path) -> None:
    """SQLite cannot open a WAL-mode store whose folder it cannot write (its -wal and -shm files live
    there, also for reading): `hookgate audit tail` said only `unable to open database file`; now the line
    says the folder is not writable. Made read-only by a read-only bind mount (as root) or by chmod."""
    config = write_config(tmp_path)
    run(config, bash("echo 0"))
    assert audit(config, "tail").returncode == 0  # the store exists
    state = tmp_path / "state"
    command = [sys.executable, "-m", "gateway", "audit", "tail", "--config", str(config)]
    if os.geteuid() == 0:
        if shutil.which("unshare") is None:
            pytest.skip("needs unshare(1) to make a read-only mount as root")
        mount = f'mount --bind {state} {state} && mount -o remount,bind,ro {state} && exec "$@"'
        command = ["unshare", "-m", "sh", "-c", mount, "sh", *command]
    else:
        state.chmod(0o500)
    try:
        proc = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=60, check=False)
    finally:
        state.chmod(0o700)
    if "mount" in proc.stderr and "unable to open" not in proc.stderr:
        pytest.skip(f"cannot make a read-only mount here: {proc.stderr.strip()}")
    assert proc.returncode == 1 and clean(proc), proc.stderr
    assert f"(its folder {state} is not writable: SQLite keeps the store's -wal and -shm files" in proc.stderr
    assert len(proc.stderr.splitlines()) == 1
