"""Retention that leaves evidence: each pruned chain gets an in-chain ``AuditRetention`` record that
vouches for the chain's new base, and ``verify`` accepts a base only when such a record does.

``audit_prune`` (``gateway.store``) deletes a prefix of a chain, moves the chain head's ``base_seq`` /
``base_hash`` to the last deleted record and, **in the same transaction**, appends the record
``voucher(...)`` builds::

    {"event": "AuditRetention", "host": "hookgate", "decision": "none", "handlers": [],
     "reason": "retention pruned seq 1-5 (records older than 2026-11-01T07:12:03.418Z)",
     "retention": {"first_seq": 1, "last_seq": 5, "last_hash": "<hash of seq 5>",
                   "before": "2026-11-01T07:12:03.418Z", "keep_days": 30, "max_mb": null}, ...}

Being a chained record, it cannot be changed or removed without breaking the chain after it (or
the head). ``vouched(record)`` reads the claim back; ``gateway.audit.chain.verify_chain`` checks that the
newest such record in a chain names exactly the head's base, so deleting the oldest records and moving
the base by hand is reported, as is a base nobody vouches for.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gateway.store.audit_types import AuditEntry, Voucher

EVENT = "AuditRetention"


def voucher(audit: dict[str, Any], *, version: str, config_hash: str | None) -> Voucher:
    """The ``Voucher`` for ``audit_prune`` under the ``audit`` section ``audit`` (its ``keep_days`` and
    ``max_mb`` are named in the record)."""
    from gateway.audit.record import canonical, iso_time
    from gateway.audit.spool import new_id
    from gateway.store.audit_types import AuditEntry

    def build(chain: str, first_seq: int, last_seq: int, last_hash: str, cutoff: float) -> AuditEntry:
        before = iso_time(cutoff)
        record_id = new_id()
        record: dict[str, Any] = {
            "id": record_id,
            "time": iso_time(time.time()),
            "host": "hookgate",
            "event": EVENT,
            "session_id": None,
            "tool_use_id": None,
            "prompt_id": None,
            "tool_name": None,
            "tool_input": None,
            "updated_input": None,
            "handlers": [],
            "decision": "none",
            "reason": f"retention pruned seq {first_seq}-{last_seq} (records older than {before})",
            "approval": None,
            "retention": {
                "first_seq": first_seq,
                "last_seq": last_seq,
                "last_hash": last_hash,
                "before": before,
                "keep_days": audit.get("keep_days"),
                "max_mb": audit.get("max_mb"),
            },
            "version": version,
            "config_hash": config_hash,
        }
        return AuditEntry.from_record(record_id, canonical(record), record)

    return build


def vouched(record: Any) -> tuple[int, str] | None:
    """``(last_seq, last_hash)`` a retention record vouches for, or None when ``record`` is none."""
    if not isinstance(record, dict) or record.get("event") != EVENT or record.get("host") != "hookgate":
        return None
    claim = record.get("retention")
    if not isinstance(claim, dict):
        return None
    last_seq, last_hash = claim.get("last_seq"), claim.get("last_hash")
    if not isinstance(last_seq, int) or not isinstance(last_hash, str):
        return None
    return last_seq, last_hash
