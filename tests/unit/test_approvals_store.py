"""The approval state machine in ``SQLiteStore``: one open request per key, each transition once."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

from gateway.approvals.record import ApprovalRecord, fingerprint, new_id, request_key
from gateway.store.sqlite import MIGRATIONS, SQLiteStore


def record(tool_use_id: str | None = "toolu_1", command: str = "git push", ttl: float = 60) -> ApprovalRecord:
    now = time.time()
    print_ = fingerprint("s1", "Bash", {"command": command})
    return ApprovalRecord(id=new_id(), key=request_key("s1", tool_use_id, print_), fingerprint=print_,
                          status="pending", created_at=now, expires_at=now + ttl, session_id="s1",
                          tool_use_id=tool_use_id, tool_name="Bash", tool_input={"command": command},
                          message="Run git push?", approvers=["U1"])


def test_schema_has_the_approvals_step(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path))
    assert store.version == len(MIGRATIONS) and any("approvals" in step for step in MIGRATIONS)


def test_create_keeps_one_open_request_per_key_and_round_trips_fields(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path))
    first = record()
    stored = store.approval_create(first)
    assert stored == first
    again = store.approval_create(record())  # same key, another id: the first one stays
    assert again.id == first.id
    assert store.approval_get(first.id) == first
    assert store.approval_find(first.key, "other") == first
    assert store.approval_find("tool:s1:other", first.fingerprint) == first  # a retry with a new tool_use_id
    assert store.approval_find("tool:s1:other", "other") is None


def test_each_transition_happens_once(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path))
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


def test_expire_due_and_list(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path))
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


def _answer(path: str, approval_id: str, who: str, results: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    store = SQLiteStore(path)
    results.put((who, store.approval_decide(approval_id, "approved", who, None, time.time()) is not None))


def test_racing_answers_from_processes_take_exactly_one(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path))
    request = store.approval_create(record())
    results: multiprocessing.Queue = multiprocessing.Queue()  # type: ignore[type-arg]
    procs = [multiprocessing.Process(target=_answer, args=(str(tmp_path), request.id, f"p{i}", results))
             for i in range(6)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(30)
    outcomes = [results.get(timeout=5) for _ in procs]
    winners = [who for who, won in outcomes if won]
    assert len(winners) == 1
    assert store.approval_get(request.id).decided_by == winners[0]  # type: ignore[union-attr]
