"""The ``approval_*`` store methods for SQLite (mixed into ``SQLiteStore``) and their migration step.

Each transition is one ``UPDATE ... WHERE id = ? AND status = 'pending' RETURNING *``: of two answers
racing, exactly one gets a row back. One open request per key: a partial unique index over ``key`` for
pending and not-yet-consumed answers, so two processes creating the same request end with one row.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from gateway.approvals.record import COLUMNS, ApprovalRecord

MIGRATION = """
CREATE TABLE IF NOT EXISTS approvals (
    id TEXT PRIMARY KEY, key TEXT NOT NULL, fingerprint TEXT NOT NULL, status TEXT NOT NULL,
    created_at REAL NOT NULL, expires_at REAL NOT NULL, session_id TEXT, tool_use_id TEXT, tool_name TEXT,
    channel TEXT, decided_at REAL, decided_by TEXT, reason TEXT, consumed_at REAL,
    payload TEXT NOT NULL, ref TEXT NOT NULL DEFAULT '{}');
CREATE UNIQUE INDEX IF NOT EXISTS approvals_open_key ON approvals (key)
    WHERE consumed_at IS NULL AND status IN ('pending', 'approved', 'rejected');
CREATE INDEX IF NOT EXISTS approvals_fingerprint ON approvals (fingerprint, status);
CREATE INDEX IF NOT EXISTS approvals_pending ON approvals (status, expires_at)
"""
"""Schema step: the ``approvals`` table (see ``ApprovalRecord`` for the columns)."""

_SELECT = f"SELECT {', '.join(COLUMNS)} FROM approvals"
_RETURNING = f"RETURNING {', '.join(COLUMNS)}"
_OPEN = "consumed_at IS NULL AND status IN ('pending', 'approved', 'rejected')"


class SQLiteApprovals:
    """The approval methods of ``Store`` over ``self._run(sql, params) -> sqlite3.Cursor``."""

    def _run(self, sql: str, params: tuple[Any, ...]) -> sqlite3.Cursor:  # provided by SQLiteStore
        raise NotImplementedError

    @staticmethod
    def _record(row: Any) -> ApprovalRecord | None:
        return None if row is None else ApprovalRecord.from_row(dict(zip(COLUMNS, row, strict=True)))

    def approval_create(self, record: ApprovalRecord) -> ApprovalRecord:
        row = record.to_row()
        self._run(f"INSERT OR IGNORE INTO approvals ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
                  tuple(row[c] for c in COLUMNS))
        found = self._record(self._run(f"{_SELECT} WHERE key = ? AND {_OPEN}", (record.key,)).fetchone())
        return found if found is not None else record

    def approval_get(self, approval_id: str) -> ApprovalRecord | None:
        return self._record(self._run(f"{_SELECT} WHERE id = ?", (approval_id,)).fetchone())

    def approval_find(self, key: str, fingerprint: str) -> ApprovalRecord | None:
        row = self._run(f"{_SELECT} WHERE key = ? AND {_OPEN}", (key,)).fetchone()
        if row is None:
            row = self._run(f"{_SELECT} WHERE fingerprint = ? AND {_OPEN} ORDER BY created_at DESC LIMIT 1",
                            (fingerprint,)).fetchone()
        return self._record(row)

    def approval_list(self, statuses: list[str] | None = None, limit: int = 100) -> list[ApprovalRecord]:
        if statuses:
            marks = ", ".join("?" * len(statuses))
            cursor = self._run(f"{_SELECT} WHERE status IN ({marks}) ORDER BY created_at DESC LIMIT ?",
                               (*statuses, limit))
        else:
            cursor = self._run(f"{_SELECT} ORDER BY created_at DESC LIMIT ?", (limit,))
        return [r for r in (self._record(row) for row in cursor.fetchall()) if r is not None]

    def approval_decide(self, approval_id: str, status: str, by: str, reason: str | None,
                        at: float) -> ApprovalRecord | None:
        return self._record(self._run(
            f"UPDATE approvals SET status = ?, decided_by = ?, reason = ?, decided_at = ? "
            f"WHERE id = ? AND status = 'pending' {_RETURNING}", (status, by, reason, at, approval_id)).fetchone())

    def approval_consume(self, approval_id: str, at: float) -> bool:
        cursor = self._run("UPDATE approvals SET consumed_at = ? WHERE id = ? AND consumed_at IS NULL "
                           "AND status IN ('approved', 'rejected')", (at, approval_id))
        return cursor.rowcount == 1

    def approval_expire_due(self, now: float, by: str) -> list[ApprovalRecord]:
        rows = self._run(f"UPDATE approvals SET status = 'expired', decided_by = ?, decided_at = ?, "
                         f"reason = 'no answer before it expired' WHERE status = 'pending' AND expires_at <= ? "
                         f"{_RETURNING}", (by, now, now)).fetchall()
        return [r for r in (self._record(row) for row in rows) if r is not None]

    def approval_set_ref(self, approval_id: str, ref: dict[str, Any]) -> None:
        import json

        self._run("UPDATE approvals SET ref = ? WHERE id = ?", (json.dumps(ref), approval_id))
