"""`hookgate audit tail --follow` on the shared PostgreSQL store (a real server) misses no record that
another machine commits late: one machine's transaction takes its row number first and commits after
a second machine's row is already visible."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from gateway.audit.record import canonical, iso_time
from gateway.store.audit_types import AuditEntry, AuditFilter
from tests.conftest import ROOT
from tests.integration.test_audit_run import write_config

GATE = 4242
"""The advisory lock a trigger makes machine A's transaction wait on, after its row is inserted."""
SLOW_TRIGGER = f"""
CREATE FUNCTION hold_machine_a() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.chain = 'machine-a' THEN PERFORM pg_advisory_xact_lock_shared({GATE}); END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER hold_machine_a AFTER INSERT ON audit_records FOR EACH ROW EXECUTE FUNCTION hold_machine_a();
"""


def entry(command: str) -> AuditEntry:
    record = {
        "time": iso_time(time.time()),
        "host": "claude",
        "event": "PreToolUse",
        "session_id": "s",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "handlers": [],
        "decision": "none",
    }
    return AuditEntry.from_body(f"id-{command}", canonical(record))


def test_follow_prints_a_row_that_commits_after_a_later_one(tmp_path: Path, pg_url: str) -> None:
    import psycopg

    from gateway.store.postgres import PostgresStore

    store = PostgresStore(pg_url)
    store.migrate()
    store.audit_append("machine-a", [entry("seed")])
    gate = psycopg.connect(pg_url, autocommit=True)
    gate.execute(SLOW_TRIGGER)
    config = write_config(tmp_path)
    follower = subprocess.Popen(
        [sys.executable, "-m", "gateway", "audit", "tail", "-n", "5", "--follow", "--json", "--config", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "HOOKGATE_STORE_URL": pg_url},
    )
    assert follower.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(follower.stdout, selectors.EVENT_READ)

    def next_command(timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if selector.select(timeout=0.2):
                line = follower.stdout.readline()  # type: ignore[union-attr]
                if line:
                    value: dict[str, Any] = json.loads(line)
                    return str(value["tool_input"]["command"])
        raise AssertionError("tail --follow printed nothing new")

    slow_store = PostgresStore(pg_url)
    try:
        assert next_command() == "seed"
        gate.execute("SELECT pg_advisory_lock(%s)", (GATE,))
        slow = threading.Thread(target=slow_store.audit_append, args=("machine-a", [entry("slow")]))
        slow.start()
        deadline = time.monotonic() + 20
        waiting = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
        # machine A has inserted its row (so it has its number) and now waits inside its transaction
        while gate.execute(waiting).fetchone() == (0,):
            assert time.monotonic() < deadline and slow.is_alive()
            time.sleep(0.02)
        store.audit_append("machine-b", [entry("fast")])  # a later number, committed first
        assert next_command() == "fast"
        time.sleep(1.2)  # the follower has polled past machine B's row at least twice
        gate.execute("SELECT pg_advisory_unlock(%s)", (GATE,))
        slow.join(20)
        assert next_command() == "slow"
        numbers = {row.id: row.n for row in store.audit_records(AuditFilter())}
        assert numbers["id-slow"] < numbers["id-fast"]  # it really committed out of number order
    finally:
        follower.terminate()
        follower.wait(10)
        gate.close()
        slow_store.close()
        store.close()


def test_follow_keeps_following_through_a_database_restart(tmp_path: Path, pg_server: Any, pg_url: str) -> None:
    """The shared database restarts under `tail --follow`: it says so once on stderr, goes on, says when
    the store is back, and prints the records committed afterwards (it does not exit)."""
    from gateway.store.postgres import PostgresStore
    from tests.pg_server import PASSWORD

    store = PostgresStore(pg_url)
    store.migrate()
    store.audit_append("machine-a", [entry("before")])
    store.close()
    config = write_config(tmp_path)
    follower = subprocess.Popen(
        [sys.executable, "-m", "gateway", "audit", "tail", "-n", "5", "--follow", "--json", "--config", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "HOOKGATE_STORE_URL": pg_url},
        text=True,
    )
    assert follower.stdout is not None and follower.stderr is not None
    try:
        assert json.loads(follower.stdout.readline())["tool_input"]["command"] == "before"
        pg_server.stop()
        time.sleep(2.5)  # the follower polls (every second) while it is down
        assert follower.poll() is None, follower.stderr.read()
        pg_server.start()
        after = PostgresStore(pg_url)
        after.audit_append("machine-a", [entry("after")])
        after.close()
        assert json.loads(follower.stdout.readline())["tool_input"]["command"] == "after"
    finally:
        if not pg_server.is_running():
            pg_server.start()
        follower.terminate()
        follower.wait(10)
    err = follower.stderr.read()
    lines = err.splitlines()
    assert len(lines) == 2 and "still following" in lines[0] and "reachable again" in lines[1], err
    assert PASSWORD not in err and "Traceback" not in err
