"""Approval transitions into the audit trail: ``audit_trail(config)`` is the ``Desk`` hook that hands each
transition (created, approved, rejected, expired, cancelled, consumed) to ``gateway.audit``.

The audit package owns the record format and the sinks; this module only adapts: it calls
``gateway.audit.record_approval(config, record_dict, transition)`` when the audit package offers it
(and returns None, recording nothing, when it does not or when auditing is off). The decision record
of the tool call itself carries ``meta["approval"]`` from the handler's result.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gateway.approvals.record import ApprovalRecord
    from gateway.config import RuntimeConfig

log = logging.getLogger("hookgate.approvals")


def audit_trail(config: RuntimeConfig) -> Callable[[ApprovalRecord, str], None] | None:
    """The transition hook for ``config``, or None when there is no audit trail to write to."""
    try:
        audit = importlib.import_module("gateway.audit")
    except ImportError:
        return None
    record_approval: Any = getattr(audit, "record_approval", None)
    if record_approval is None:
        return None

    def trail(record: ApprovalRecord, transition: str) -> None:
        try:
            record_approval(config, record.to_dict(), transition)
        except Exception as exc:  # the audit trail never undoes a transition
            log.warning(
                "approval %s: could not write the %s transition to the audit trail: %s", record.id, transition, exc
            )

    return trail
