"""The state stores: the ``Store`` contract on both backends (SQLite and a real PostgreSQL), atomic
capped counters and flags across processes, versioned schema, and PostgreSQL mirroring SQLite's."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.config import RuntimeConfig
from gateway.errors import StoreError
from gateway.store import open_store
from gateway.store.base import Store
from gateway.store.sqlite import MIGRATIONS, SQLiteStore, migrate
from tests.conftest import ROOT, run_hookgate


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    s: Store
    if request.param == "sqlite":
        s = SQLiteStore(str(tmp_path / "state"))
    else:
        from gateway.store.postgres import PostgresStore

        s = PostgresStore(request.getfixturevalue("pg_url"))
        s.migrate()
    yield s
    s.close()


def test_cache_expires(store: Store) -> None:
    store.cache_put("k", {"a": [1, 2]}, ttl=60)
    assert store.cache_get("k") == {"a": [1, 2]}
    store.cache_put("k", "replaced", ttl=-1)  # already expired
    assert store.cache_get("k") is None
    assert store.cache_get("never") is None


def test_counters(store: Store) -> None:
    assert store.counter_get("s", "k") == 0
    assert store.counter_add("s", "k") == 1
    assert store.counter_add("s", "k", 4) == 5
    assert store.counter_get("s", "other") == 0
    assert store.counter_get("t", "k") == 0  # scopes are separate
    store.counter_reset("s", "k")
    assert store.counter_get("s", "k") == 0


def test_counter_add_capped_stops_at_the_limit(store: Store) -> None:
    assert [store.counter_add_capped("rate", "m1", 3) for _ in range(5)] == [1, 2, 3, None, None]
    assert store.counter_get("rate", "m1") == 3  # a refused add changes nothing
    assert store.counter_add_capped("rate", "m2", 3) == 1  # another key (time bucket) starts afresh
    assert store.counter_add_capped("rate", "zero", 0) is None
    assert store.counter_get("rate", "zero") == 0
    store.counter_add("rate", "over", 10)  # already past the limit: refused, not decremented
    assert store.counter_add_capped("rate", "over", 3) is None
    assert store.counter_get("rate", "over") == 10


def _open(where: str) -> Store:
    if where.startswith("postgresql://"):
        from gateway.store.postgres import PostgresStore

        return PostgresStore(where)
    return SQLiteStore(where)


def _hammer(where: str, n: int) -> None:
    s = _open(where)
    for _ in range(n):
        s.counter_add_capped("rate", "shared", 50)
        s.counter_add("stop", "session")
    s.close()


def test_counter_add_capped_is_atomic_across_processes(store: Store, tmp_path: Path) -> None:
    where = getattr(store, "url", None) or str(tmp_path / "state")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_hammer, args=(where, 40)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    s = _open(where)
    assert s.counter_get("rate", "shared") == 50  # 160 attempts, exactly the limit got through
    assert s.counter_get("stop", "session") == 160  # no lost update
    s.close()


def test_schema_status(store: Store) -> None:
    assert store.schema_version() == store.required_version
    assert store.migrate() == [] or store.kind == "sqlite"
    store.counter_add("s", "k")
    counts = store.table_counts()
    assert {"cache", "counters", "flags"} <= set(counts) and counts["counters"] == 1


def test_postgresql_mirrors_every_sqlite_migration(tmp_path: Path, pg_url: str) -> None:
    """Every SQLite schema step has its PostgreSQL twin (same number) creating the same tables."""
    from gateway.store import pg_schema
    from gateway.store.postgres import PostgresStore

    assert [m.version for m in pg_schema.MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))
    lite = SQLiteStore(str(tmp_path / "state"))
    pg = PostgresStore(pg_url)
    pg.migrate()
    assert list(pg.table_counts()) == list(lite.table_counts())
    lite.close()
    pg.close()


def test_flags(store: Store) -> None:
    assert store.flag_get("readOnly") is None
    store.flag_set("readOnly", {"on": True, "by": "ops"})
    assert store.flag_get("readOnly") == {"on": True, "by": "ops"}
    store.flag_set("readOnly", False)  # a JSON false is a value, not a delete
    assert store.flag_get("readOnly") is False
    store.flag_set("readOnly", None)
    assert store.flag_get("readOnly") is None


def test_values_survive_reopening(tmp_path: Path) -> None:
    first = SQLiteStore(str(tmp_path))
    first.flag_set("f", [1])
    first.counter_add("s", "k", 2)
    first.close()
    again = SQLiteStore(str(tmp_path))
    assert again.flag_get("f") == [1]
    assert again.counter_get("s", "k") == 2
    assert again.version == len(MIGRATIONS)
    again.close()


def test_migrations_run_once_and_in_order(tmp_path: Path) -> None:
    db = sqlite3.connect(str(tmp_path / "m.sqlite3"), isolation_level=None)
    assert migrate(db, ["CREATE TABLE a (x INTEGER)"]) == 1
    assert migrate(db, ["CREATE TABLE a (x INTEGER)"]) == 1  # not run twice (it would fail)
    assert migrate(db, ["CREATE TABLE a (x INTEGER)", "CREATE TABLE b (y TEXT); INSERT INTO b VALUES ('v')"]) == 2
    assert db.execute("SELECT y FROM b").fetchall() == [("v",)]
    assert db.execute("SELECT version FROM schema_version").fetchall() == [(2,)]
    db.close()


def test_a_failed_migration_changes_nothing(tmp_path: Path) -> None:
    db = sqlite3.connect(str(tmp_path / "m.sqlite3"), isolation_level=None)
    migrate(db, ["CREATE TABLE a (x INTEGER)"])
    with pytest.raises(sqlite3.Error):
        migrate(db, ["CREATE TABLE a (x INTEGER)", "CREATE TABLE b (y TEXT); NOT SQL"])
    assert db.execute("SELECT version FROM schema_version").fetchall() == [(1,)]
    assert db.execute("SELECT name FROM sqlite_master WHERE name = 'b'").fetchall() == []
    db.close()


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    SQLiteStore(str(tmp_path)).close()
    db = sqlite3.connect(str(tmp_path / "state.sqlite3"), isolation_level=None)
    db.execute("UPDATE schema_version SET version = ?", (len(MIGRATIONS) + 5,))
    db.close()
    with pytest.raises(StoreError, match="schema version"):
        SQLiteStore(str(tmp_path))


def test_an_unopenable_store_is_a_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreError, match="state store"):
        SQLiteStore(str(blocker / "state"))


def test_open_store_uses_state_dir(tmp_path: Path) -> None:
    config = RuntimeConfig(hooks={}, sources=[], settings={"state_dir": str(tmp_path / "here")})
    store = open_store(config)
    assert isinstance(store, Store)
    assert isinstance(store, SQLiteStore)
    assert store.path == str(tmp_path / "here" / "state.sqlite3")
    store.close()


def test_a_new_file_another_connection_is_writing_opens_once_that_write_ends(tmp_path: Path) -> None:
    """A brand-new file is in rollback-journal mode: while another connection writes it, SQLite fails
    the switch to WAL at once with "database is locked", busy timeout or not (two approval tests once
    failed so in CI: `hookgate run` and a polling `approvals list` creating one state dir). The store
    retries the switch until the other write ends."""
    import threading
    import time

    other = sqlite3.connect(tmp_path / "state.sqlite3", isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    other.execute("CREATE TABLE elsewhere (a)")
    threading.Timer(0.3, other.execute, ("COMMIT",)).start()
    started = time.monotonic()
    store = SQLiteStore(str(tmp_path))
    try:
        assert time.monotonic() - started >= 0.25  # it waited for the other write, and then opened
        assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store.schema_version() == len(MIGRATIONS)
        store.flag_set("opened", True)
        assert store.flag_get("opened") is True
    finally:
        store.close()
        other.close()


def test_cache_flag_and_counter_rows_edited_by_hand_give_a_miss_or_a_store_error(tmp_path: Path) -> None:
    """SQLite keeps whatever an edit puts in a column: a cache value that is not JSON (or an ``expires``
    that is text), a flag that is not JSON, a counter that is text once raised JSONDecodeError, TypeError
    or ValueError (``hookgate mode read-only status``: an internal error). A damaged cache entry is a
    miss; a damaged flag or counter is a StoreError naming it, and setting it again repairs it."""
    store = SQLiteStore(str(tmp_path / "state"))
    try:
        store.cache_put("a", 1, ttl=60)
        store.cache_put("b", 2, ttl=60)
        store.flag_set("readOnly", True)
        store.counter_add("stop", "s1")
        with sqlite3.connect(store.path) as conn:
            conn.execute("UPDATE cache SET value = '{cut' WHERE key = 'a'")
            conn.execute("UPDATE cache SET expires = 'soon' WHERE key = 'b'")
            conn.execute("UPDATE flags SET value = '{cut'")
            conn.execute("UPDATE counters SET value = 'many'")
        conn.close()
        assert store.cache_get("a") is None and store.cache_get("b") is None
        store.cache_put("a", 3, ttl=60)
        assert store.cache_get("a") == 3
        with pytest.raises(StoreError, match=r"flag 'readOnly' holds '\{cut', not JSON"):
            store.flag_get("readOnly")
        config = tmp_path / "hookgate.json"
        config.write_text(json.dumps({"settings": {"stateDir": str(tmp_path / "state")}}))
        status = run_hookgate(["mode", "read-only", "status", "--config", str(config)], cwd=ROOT)
        assert status.returncode == 1 and "internal error" not in status.stderr, status.stderr
        assert len(status.stderr.splitlines()) == 1 and "flag 'readOnly' holds" in status.stderr
        assert status.stderr.count("state store") == 1, status.stderr  # once, not "state store: state store ..."
        with pytest.raises(StoreError, match=r"counter stop/s1 holds 'many', not an integer"):
            store.counter_get("stop", "s1")
        store.flag_set("readOnly", False)
        assert store.flag_get("readOnly") is False
    finally:
        store.close()
