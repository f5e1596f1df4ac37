"""Approval transitions as audit records (``record_approval``), through the same recorder, redaction,
sinks and hash chain as decision records."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gateway.config import RuntimeConfig

_OUTCOME = {"approved": "allow", "rejected": "deny"}


def record_approval(config: RuntimeConfig, approval: dict[str, Any], transition: str) -> None:
    """Write one audit record for an approval transition (``created``, ``approved``, ``rejected``,
    ``expired``, ``cancelled``, ``consumed``), called by ``gateway.approvals.trail`` wherever it happens
    (the waiting hook, ``hookgate approvals``, a channel callback, the console, the sweeper).

    approval: ``ApprovalRecord.to_dict()``. The record has the documented fields with ``event``
    ``"ApprovalTransition"``, ``host`` ``"hookgate"``, no handlers, ``decision`` allow (approved) | deny
    (rejected) | the request's ``onTimeout`` (expired, cancelled) | none (created, consumed), ``reason``
    the answer's reason, and ``approval`` ``{id, decided_by, status, transition}``. It goes through the
    same redaction, sinks and hash chain as decision records; nothing when ``audit.record`` is ``off``."""
    import os
    import time

    from gateway.audit.record import iso_time
    from gateway.audit.recorder import Recorder
    from gateway.store import default_state_dir, open_store
    from gateway.wire import VERSION

    audit = config.audit or {}
    if audit.get("record", "handled") == "off":
        return
    status = str(approval.get("status") or "")
    decision = _OUTCOME.get(status) or (
        str(approval.get("on_timeout") or "deny") if status in ("expired", "cancelled") else "none"
    )
    if transition in ("created", "consumed"):
        decision = "none"
    record: dict[str, Any] = {
        "time": iso_time(time.time()),
        "host": "hookgate",
        "event": "ApprovalTransition",
        "session_id": approval.get("session_id"),
        "tool_use_id": approval.get("tool_use_id"),
        "prompt_id": None,
        "tool_name": approval.get("tool_name"),
        "tool_input": approval.get("tool_input"),
        "updated_input": None,
        "handlers": [],
        "decision": decision,
        "reason": approval.get("reason"),
        "approval": {
            "id": approval.get("id"),
            "decided_by": approval.get("decided_by"),
            "status": status,
            "transition": transition,
        },
        "version": VERSION,
        "config_hash": config.config_hash,
    }
    state_dir = os.path.expanduser(config.settings.get("state_dir") or default_state_dir())
    recorder = Recorder(
        audit,
        state_dir=state_dir,
        store_factory=lambda: open_store(config),
        config_hash=config.config_hash,
        version=VERSION,
    )
    try:
        recorder.submit_record(record)
    finally:
        recorder.close()
