"""The audit trail: every decision recorded, redacted, hash-chained; OpenTelemetry spans; the console.

Modules (each one job)::

    record      the record's shape, built from the event, the Decision and its HandlerResults
    redact      secret redaction and truncation, applied before anything is written
    recorder    the one entry point the dispatcher calls after merge (``Recorder.submit``)
    spool       the store's write-ahead spool for ``hookgate run`` (1 ms budget)
    chain       the per-writer hash chain and ``verify``
    jsonl       the JSON-lines sink, chained like the store, and ``verify --jsonl``
    follow      ``tail --follow``: per-chain cursors, so a late commit is never missed
    report      time filters, lines, CSV, stats for ``hookgate audit`` and the console
    config      the ``audit`` config section (pydantic)
    otel        OpenTelemetry spans (optional extra ``hookgate[otel]``)
    console/    the browser console's static files (served by ``hookgate serve`` at ``/ui``)

Storage goes through the one store interface: ``Store.audit_*`` (``gateway.store.base``), with the
plain types in ``gateway.store.audit_types`` and the SQLite tables in ``gateway.store.sqlite_audit``.

This package imports nothing at import time: ``hookgate run`` loads only what an event needs.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs ~2 ms to import; `hookgate run` loads this package on every record
if TYPE_CHECKING:
    from typing import Any

    from gateway.config import RuntimeConfig


def record_approval(config: RuntimeConfig, approval: dict[str, Any], transition: str) -> None:
    """Write one audit record for an approval transition; see ``gateway.audit.approvals``."""
    from gateway.audit.approvals import record_approval as record

    record(config, approval, transition)
