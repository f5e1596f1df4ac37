"""The audit spool: concurrent writers and drains lose nothing and store nothing twice."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path

from gateway.audit import spool
from gateway.audit.report import verify_store
from gateway.store.sqlite import SQLiteStore


def body(i: int, writer: int) -> str:
    return json.dumps(
        {
            "time": "2030-01-01T00:00:00.000Z",
            "event": "PreToolUse",
            "decision": "allow",
            "handlers": [],
            "i": i,
            "w": writer,
        },
        sort_keys=True,
        separators=(",", ":"),
    )


def _writer(state_dir: str, writer: int, count: int) -> None:
    for i in range(count):
        spool.append(state_dir, f"w{writer}-{i}", body(i, writer))


def _drainer(state_dir: str, rounds: int) -> None:
    store = SQLiteStore(state_dir)
    for _ in range(rounds):
        spool.drain(state_dir, store, "m")
    store.close()


def test_append_then_drain(tmp_path: Path) -> None:
    state = str(tmp_path)
    size = spool.append(state, "a", body(1, 0))
    assert size == os.path.getsize(tmp_path / "audit" / "spool.jsonl") > 0
    spool.append(state, "b", body(2, 0))
    store = SQLiteStore(str(tmp_path))
    assert spool.drain(state, store, "m") == 2
    assert spool.drain(state, store, "m") == 0
    assert [r.id for r in store.audit_chain("m")] == ["a", "b"]
    assert os.listdir(tmp_path / "audit") == []


def test_a_line_that_is_not_utf8_is_skipped_and_the_others_are_stored(tmp_path: Path) -> None:
    state = str(tmp_path)
    spool.append(state, "a", body(1, 0))
    with open(tmp_path / "audit" / "spool.jsonl", "ab") as f:
        f.write(b'18ed0000-6-abc\t{"a": "\xff\xfe"}\n')
    spool.append(state, "b", body(2, 0))
    store = SQLiteStore(state)
    assert spool.drain(state, store, "m") == 2
    assert [r.id for r in store.audit_chain("m")] == ["a", "b"] and os.listdir(tmp_path / "audit") == []


def test_a_leftover_file_is_drained_once(tmp_path: Path) -> None:
    state = str(tmp_path)
    spool.append(state, "a", body(1, 0))
    os.rename(tmp_path / "audit" / "spool.jsonl", tmp_path / "audit" / "spool.jsonl.0.1")  # a crashed drain
    (tmp_path / "audit" / "spool.jsonl.0.1").open("a").write("torn line without a tab")
    store = SQLiteStore(str(tmp_path))
    store.audit_append("m", [])
    assert spool.drain(state, store, "m") == 1
    assert spool.drain(state, store, "m") == 0


def test_concurrent_writers_and_drains(tmp_path: Path) -> None:
    state = str(tmp_path)
    SQLiteStore(state).close()
    ctx = multiprocessing.get_context("fork")
    writers = [ctx.Process(target=_writer, args=(state, w, 150)) for w in range(4)]
    drainers = [ctx.Process(target=_drainer, args=(state, 40)) for _ in range(2)]
    for p in writers + drainers:
        p.start()
    for p in writers + drainers:
        p.join(60)
        assert p.exitcode == 0
    store = SQLiteStore(state)
    spool.drain(state, store, "m")
    rows = store.audit_chain("m", 0, 10_000)
    assert sorted(r.id for r in rows) == sorted(f"w{w}-{i}" for w in range(4) for i in range(150))
    assert [r.seq for r in rows] == list(range(1, 601))
    assert all(r.problem is None for r in verify_store(store))


def test_record_ids_are_unique_in_a_process_and_across_a_fork() -> None:
    import re

    from gateway.audit.spool import new_id, new_ids

    ids = [new_id() for _ in range(5_000)] + new_ids(3_000) + [new_id() for _ in range(2_000)] + new_ids(1)
    ids += new_ids(0)
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"[0-9a-f]+-[0-9a-f]+-[0-9a-f]{8}", i) for i in ids)
    assert len({i.rsplit("-", 1)[1] for i in ids}) == len(ids)  # the counter alone never repeats here
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its own pid (and a fresh counter start) in its ids
        os.write(write, new_id().encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    child = os.read(read, 100).decode()
    os.close(read)
    assert child.split("-")[1] == f"{pid:x}" and child not in ids
