"""The approval state machine in the store, on both backends (SQLite and a real PostgreSQL): one open
request per key, each transition once, also when processes race."""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.approvals.record import ApprovalRecord, fingerprint, new_id, request_key
from gateway.store.base import Store
from gateway.store.sqlite import MIGRATIONS, SQLiteStore


def open_backend(kind: str) -> Store:
    if kind.startswith("postgresql"):
        from gateway.store.postgres import PostgresStore

        return PostgresStore(kind)
    return SQLiteStore(kind)


@pytest.fixture(params=["sqlite", "postgresql"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store location: an SQLite folder, or a fresh migrated PostgreSQL database's URL."""
    if request.param == "sqlite":
        return str(tmp_path / "state")
    url: str = request.getfixturevalue("pg_url")
    store = open_backend(url)
    store.migrate()
    store.close()
    return url


@pytest.fixture
def store(where: str) -> Iterator[Store]:
    s = open_backend(where)
    yield s
    s.close()


def record(tool_use_id: str | None = "toolu_1", command: str = "git push", ttl: float = 60) -> ApprovalRecord:
    now = time.time()
    print_ = fingerprint("s1", "Bash", {"command": command})
    return ApprovalRecord(
        id=new_id(),
        key=request_key("s1", tool_use_id, print_),
        fingerprint=print_,
        status="pending",
        created_at=now,
        expires_at=now + ttl,
        session_id="s1",
        tool_use_id=tool_use_id,
        tool_name="Bash",
        tool_input={"command": command},
        message="Run git push?",
        approvers=["U1"],
    )


def test_schema_has_the_approvals_step(store: Store) -> None:
    assert store.schema_version() == len(MIGRATIONS) and any("approvals" in step for step in MIGRATIONS)
    assert store.table_counts()["approvals"] == 0


def test_create_keeps_one_open_request_per_key_and_round_trips_fields(store: Store) -> None:
    first = record()
    stored = store.approval_create(first)
    assert stored == first
    again = store.approval_create(record())  # same key, another id: the first one stays
    assert again.id == first.id
    assert store.approval_get(first.id) == first
    assert store.approval_find(first.key, "other") == first
    assert store.approval_find("tool:s1:other", first.fingerprint) == first  # a retry with a new tool_use_id
    assert store.approval_find("tool:s1:other", "other") is None


def test_each_transition_happens_once(store: Store) -> None:
    request = store.approval_create(record())
    decided = store.approval_decide(request.id, "approved", "cli:alice", "ok", 123.0)
    assert decided is not None and decided.status == "approved" and decided.decided_by == "cli:alice"
    assert decided.decided_at == 123.0 and decided.reason == "ok"
    assert store.approval_decide(request.id, "rejected", "cli:bob", None, 124.0) is None
    assert store.approval_get(request.id).decided_by == "cli:alice"  # type: ignore[union-attr]
    assert store.approval_consume(request.id, 125.0) is True
    assert store.approval_consume(request.id, 126.0) is False
    # consumed: no longer open, so the same call may ask again
    assert store.approval_find(request.key, request.fingerprint) is None
    assert store.approval_create(record()).id != request.id


def test_expire_due_and_list(store: Store) -> None:
    old = store.approval_create(record("t1", ttl=-1))
    fresh = store.approval_create(record("t2", ttl=60))
    expired = store.approval_expire_due(time.time(), "hookgate:sweeper")
    assert [r.id for r in expired] == [old.id] and expired[0].status == "expired"
    assert store.approval_expire_due(time.time(), "hookgate:sweeper") == []
    assert store.approval_consume(old.id, time.time()) is False  # an expiry is not an answer to deliver
    assert {r.id for r in store.approval_list()} == {old.id, fresh.id}
    assert [r.id for r in store.approval_list(["pending"])] == [fresh.id]
    store.approval_set_ref(fresh.id, {"channel": "C1", "ts": "1.2"})
    assert store.approval_get(fresh.id).ref == {"channel": "C1", "ts": "1.2"}  # type: ignore[union-attr]


def _answer(where: str, approval_id: str, who: str, results: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    store = open_backend(where)
    results.put((who, store.approval_decide(approval_id, "approved", who, None, time.time()) is not None))


def test_racing_answers_from_processes_take_exactly_one(where: str, store: Store) -> None:
    request = store.approval_create(record())
    results: multiprocessing.Queue = multiprocessing.Queue()  # type: ignore[type-arg]
    procs = [multiprocessing.Process(target=_answer, args=(where, request.id, f"p{i}", results)) for i in range(6)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(30)
    outcomes = [results.get(timeout=5) for _ in procs]
    winners = [who for who, won in outcomes if won]
    assert len(winners) == 1
    assert store.approval_get(request.id).decided_by == winners[0]  # type: ignore[union-attr]


def test_request_key_binds_the_input() -> None:
    from gateway.approvals.record import fingerprint, request_key

    a, b = fingerprint("s", "Bash", {"command": "a"}), fingerprint("s", "Bash", {"command": "b"})
    assert request_key("s", "toolu_1", a) != request_key("s", "toolu_1", b)
    assert request_key("s", "toolu_1", a) == request_key("s", "toolu_1", a)
    assert request_key("s", None, a) == f"input:{a}"


def test_lookup_expires_what_is_due_and_never_finds_it(store: Store) -> None:
    """``approval_lookup``: the sweep and the find as one step; the request it expired is not found."""
    due = store.approval_create(record("toolu_due", ttl=-1))
    expired, found = store.approval_lookup(due.key, due.fingerprint, time.time(), "hookgate:sweeper")
    assert [r.id for r in expired] == [due.id] and expired[0].status == "expired" and found is None
    assert (got := store.approval_get(due.id)) is not None and got.decided_by == "hookgate:sweeper"
    live = store.approval_create(record("toolu_live"))
    expired, found = store.approval_lookup(live.key, live.fingerprint, time.time(), "hookgate:sweeper")
    assert expired == [] and found is not None and found.id == live.id
    # by fingerprint when the key differs (a retried call with a new tool_use_id)
    _, again = store.approval_lookup("other-key", live.fingerprint, time.time(), "hookgate:sweeper")
    assert again is not None and again.id == live.id


def test_stop_guard_steps_reserve_and_settle(store: Store) -> None:
    """``counter_reserve`` / ``counter_settle`` (the Stop-loop guard's two steps), on both backends."""
    flight = ("inflight", "s@1")
    assert [store.counter_reserve("g", "s", 2, flight) for _ in range(3)] == [(1, 1), (2, 2), (None, 2)]
    assert store.counter_get(*flight) == 2
    store.counter_settle("g", "s", "keep", inflight=flight)
    assert store.counter_get("g", "s") == 2 and store.counter_get(*flight) == 1
    store.counter_settle("g", "s", "reset_if_idle", busy=(flight, ("inflight", "s@0")))
    assert store.counter_get("g", "s") == 2  # a reserved check still runs: no reset
    store.counter_settle("g", "s", "release", inflight=flight)
    assert store.counter_get("g", "s") == 1 and store.counter_get(*flight) == 0
    store.counter_settle("g", "s", "reset_if_idle", busy=(flight,))
    assert store.counter_get("g", "s") == 0
    assert store.counter_reserve("g", "s", 2, flight) == (1, 1)
    store.counter_settle("g", "s", "reset", inflight=flight)
    assert store.counter_get("g", "s") == 0 and store.counter_get(*flight) == 0
    assert store.counter_reserve("g", "t", 0, flight) == (None, 0)


def test_an_approval_no_call_took_expires_after_it_was_kept(store: Store) -> None:
    """An approved request that no call consumed stays usable for ``ANSWER_KEEP_SECONDS`` (a retry gets it);
    after that the sweep expires it, keeping who approved it, so it cannot release the call much later."""
    from gateway.approvals.record import ANSWER_KEEP_SECONDS, UNUSED_REASON

    request = store.approval_create(record("toolu_kept", ttl=-1))
    decided = time.time()
    assert store.approval_decide(request.id, "approved", "cli:alice", "ok", decided) is not None
    expired, found = store.approval_lookup(request.key, request.fingerprint, decided + 5, "hookgate:sweeper")
    assert expired == [] and found is not None and found.id == request.id  # within the keep: the retry's
    later = decided + ANSWER_KEEP_SECONDS + 1
    expired, found = store.approval_lookup(request.key, request.fingerprint, later, "hookgate:sweeper")
    assert [r.id for r in expired] == [request.id] and found is None
    got = store.approval_get(request.id)
    assert got is not None and got.status == "expired" and got.decided_by == "cli:alice"
    assert got.reason == UNUSED_REASON and store.approval_consume(request.id, later) is False
    taken = store.approval_create(record("toolu_taken", ttl=-1, command="git push --tags"))
    store.approval_decide(taken.id, "approved", "cli:alice", None, decided)
    assert store.approval_consume(taken.id, decided + 1)
    rejected = store.approval_create(record("toolu_no", ttl=-1, command="git push -f"))
    store.approval_decide(rejected.id, "rejected", "cli:alice", None, decided)
    assert store.approval_expire_due(later, "hookgate:sweeper") == []  # delivered, or a rejection: kept as is
