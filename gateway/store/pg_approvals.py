"""The approval operations of ``PostgresStore`` (``gateway.store.base.Store.approval_*``), one statement
each (``create``: two only when it lost a race to a request committed meanwhile), as ``pg_conn``
operations: the same table and rules as the SQLite store's migration 3.

Each transition is ``UPDATE ... WHERE id = %s AND status = 'pending' RETURNING ...``: of two answers
racing on any replicas, exactly one gets the row. ``approvals_open_key`` (a partial unique index over
``key`` for pending and not-yet-consumed answers) keeps one open request per key; a second create is
``ON CONFLICT DO NOTHING`` and reads the one that won. Times are the caller's ``time.time()`` seconds,
as in the records the approval handler builds.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from gateway.store.pg_conn import Op, Q

if TYPE_CHECKING:
    from gateway.approvals.record import ApprovalRecord

_COLUMNS = (
    "id, key, fingerprint, status, created_at, expires_at, session_id, tool_use_id, tool_name, channel, "
    "decided_at, decided_by, reason, consumed_at, payload, ref"
)
_SELECT = f"SELECT {_COLUMNS} FROM approvals"
_OPEN = "consumed_at IS NULL AND status IN ('pending', 'approved', 'rejected')"


def _records(rows: list[tuple[Any, ...]]) -> list[ApprovalRecord]:
    from gateway.approvals.record import COLUMNS, ApprovalRecord

    return [ApprovalRecord.from_row(dict(zip(COLUMNS, row, strict=True))) for row in rows]


def _one(rows: list[tuple[Any, ...]]) -> ApprovalRecord | None:
    found = _records(rows[:1])
    return found[0] if found else None


def create(record: ApprovalRecord) -> Op[ApprovalRecord]:
    from gateway.approvals.record import COLUMNS

    row = record.to_row()
    # one statement: the insert, or (it conflicted) the open request that was there first, read from the
    # statement's snapshot; only when that request committed after the snapshot is a second read needed
    rows = yield Q(
        f"WITH ins AS (INSERT INTO approvals ({_COLUMNS}) VALUES ({', '.join(['%s'] * len(COLUMNS))}) "
        f"ON CONFLICT DO NOTHING RETURNING {_COLUMNS}) SELECT {_COLUMNS} FROM ins UNION ALL "
        f"({_SELECT} WHERE key = %s AND {_OPEN} AND NOT EXISTS (SELECT 1 FROM ins) LIMIT 1)",
        (*(row[c] for c in COLUMNS), record.key),
    )
    if not rows:
        rows = yield Q(f"{_SELECT} WHERE key = %s AND {_OPEN}", (record.key,))
    return _one(rows) or record


def get(approval_id: str) -> Op[ApprovalRecord | None]:
    rows = yield Q(f"{_SELECT} WHERE id = %s", (approval_id,))
    return _one(rows)


def find(key: str, fingerprint: str) -> Op[ApprovalRecord | None]:
    rows = yield Q(
        f"({_SELECT} WHERE key = %s AND {_OPEN} LIMIT 1) UNION ALL "
        f"({_SELECT} WHERE fingerprint = %s AND {_OPEN} ORDER BY created_at DESC LIMIT 1)",
        (key, fingerprint),
    )
    return _one(rows)


def lookup(key: str, fingerprint: str, now: float, by: str) -> Op[tuple[list[ApprovalRecord], ApprovalRecord | None]]:
    # one statement: the expiry sweep (a data-modifying CTE) and the find, which reads the snapshot from
    # before the sweep and so leaves out what the sweep expired
    fresh = "id NOT IN (SELECT id FROM expired)"
    from gateway.store.approval_expiry import expiry_params, expiry_sql

    rows = yield Q(
        f"WITH expired AS ({expiry_sql('%s')} RETURNING {_COLUMNS}), "
        f"found AS (({_SELECT} WHERE key = %s AND {_OPEN} AND {fresh} LIMIT 1) UNION ALL "
        f"({_SELECT} WHERE fingerprint = %s AND {_OPEN} AND {fresh} ORDER BY created_at DESC LIMIT 1)) "
        f"SELECT true, {_COLUMNS} FROM expired UNION ALL (SELECT false, {_COLUMNS} FROM found LIMIT 1)",
        (*expiry_params(now, by), key, fingerprint),
    )
    expired = _records([r[1:] for r in rows if r[0]])
    return expired, _one([r[1:] for r in rows if not r[0]])


def listing(statuses: list[str] | None, limit: int) -> Op[list[ApprovalRecord]]:
    if statuses:
        rows = yield Q(f"{_SELECT} WHERE status = ANY(%s) ORDER BY created_at DESC LIMIT %s", (list(statuses), limit))
    else:
        rows = yield Q(f"{_SELECT} ORDER BY created_at DESC LIMIT %s", (limit,))
    return _records(rows)


def decide(approval_id: str, status: str, by: str, reason: str | None, at: float) -> Op[ApprovalRecord | None]:
    rows = yield Q(
        f"UPDATE approvals SET status = %s, decided_by = %s, reason = %s, decided_at = %s "
        f"WHERE id = %s AND status = 'pending' RETURNING {_COLUMNS}",
        (status, by, reason, at, approval_id),
    )
    return _one(rows)


def consume(approval_id: str, at: float) -> Op[bool]:
    rows = yield Q(
        "UPDATE approvals SET consumed_at = %s WHERE id = %s AND consumed_at IS NULL "
        "AND status IN ('approved', 'rejected') RETURNING id",
        (at, approval_id),
    )
    return bool(rows)


def expire_due(now: float, by: str) -> Op[list[ApprovalRecord]]:
    from gateway.store.approval_expiry import expiry_params, expiry_sql

    rows = yield Q(f"{expiry_sql('%s')} RETURNING {_COLUMNS}", expiry_params(now, by))
    return _records(rows)


def set_ref(approval_id: str, ref: dict[str, Any]) -> Op[None]:
    yield Q("UPDATE approvals SET ref = %s WHERE id = %s", (json.dumps(ref), approval_id))
