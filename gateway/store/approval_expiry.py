"""The approvals expiry sweep both stores run (``SQLiteStore.approval_expire_due``, ``pg_approvals``): one
``UPDATE`` statement, written once, with the backend's placeholder."""

from __future__ import annotations

from typing import Any


def expiry_sql(mark: str) -> str:
    """The ``UPDATE approvals`` both stores run to expire what is due, with ``mark`` as the placeholder (``?`` SQLite,
    ``%s`` PostgreSQL); its parameters: ``expiry_params(now, by)``. Due: a pending request past its
    ``expires_at``, and an approved one that no call consumed for ``ANSWER_KEEP_SECONDS`` after its answer
    (and past its ``expires_at``): that one keeps who approved it, and its reason says it went unused."""
    return (
        f"UPDATE approvals SET reason = CASE WHEN status = 'pending' THEN 'no answer before it expired' "
        f"ELSE {mark} END, decided_by = CASE WHEN status = 'pending' THEN {mark} ELSE decided_by END, "
        f"decided_at = CASE WHEN status = 'pending' THEN {mark} ELSE decided_at END, status = 'expired' "
        f"WHERE (status = 'pending' AND expires_at <= {mark}) OR (status = 'approved' AND consumed_at IS NULL "
        f"AND decided_at <= {mark} AND expires_at <= {mark})"
    )


def expiry_params(now: float, by: str) -> tuple[Any, ...]:
    """The parameters of ``expiry_sql``."""
    from gateway.approvals.record import ANSWER_KEEP_SECONDS, UNUSED_REASON

    return (UNUSED_REASON, by, now, now, now - ANSWER_KEEP_SECONDS, now)
