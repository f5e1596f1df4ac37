"""The record step of ``hookgate run`` for the usual ``audit`` section (only the ``store`` sink, no spans):
``OneShotRecorder.submit(event, decision)`` builds the record (``gateway.audit.record``), redacts it when
its text holds anything a pattern could match (``gateway.audit.record.redacted``; else it is written as
it is, the common case) and appends it to the store's spool (``gateway.audit.spool``), all in this thread, before
the answer is printed.

It is ``gateway.audit.recorder.Recorder``'s one-shot path without its machinery (sinks, spans, the writer
thread, the store): a hook call imports this module, ``record``, ``redact`` and ``spool`` and nothing else
(``tests/integration/test_lazy_imports.py``). When the spool has grown past ``spool.DRAIN_BYTES`` the
``drain`` callable moves it into the store (``RunContext`` passes a full ``Recorder``'s ``drain``, which
also applies retention). ``RunContext.recorder`` picks this recorder when ``fits(audit)``; any other
section (a JSON-lines sink, OpenTelemetry) goes through ``Recorder``.

A record that cannot be written never changes the hook's answer: one line on stderr
(``hookgate: audit: cannot record: ...``), as ``Recorder`` says it.
"""

from __future__ import annotations

import os
import sys

from gateway.audit.record import build_record, redacted
from gateway.audit.redact import Redactor
from gateway.audit.spool import DRAIN_BYTES, append, drain_after_append, new_id

TYPE_CHECKING = False  # typing costs ~2 ms to import; `hookgate run` loads this module on every record
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from gateway.decision import Decision
    from gateway.events import HookEvent


def fits(audit: dict[str, Any]) -> bool:
    """True when ``audit`` (the normalized section) writes to the store alone and exports no spans (neither
    ``audit.otel`` nor ``OTEL_EXPORTER_OTLP_ENDPOINT``: ``gateway.audit.recorder.otel_wanted``)."""
    return (
        list(audit.get("sinks", ["store"])) == ["store"]
        and not audit.get("otel")
        and not os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    )


class OneShotRecorder:
    """Records the events of one ``hookgate run`` process into the spool (see module docstring).

    audit: the normalized ``audit`` section (``fits(audit)``). state_dir: ``settings.stateDir``.
    config_hash, version: copied into every record. drain: moves the spool into the store (called when
    it has grown past ``DRAIN_BYTES``); its errors are reported like a failed write.
    """

    def __init__(
        self,
        audit: dict[str, Any],
        *,
        state_dir: str,
        config_hash: str | None,
        version: str,
        drain: Callable[[], Any],
    ) -> None:
        self.audit = audit
        self.state_dir = state_dir
        self.config_hash = config_hash
        self.version = version
        self.drain = drain
        self.redactor = Redactor(audit.get("redact") or (), audit.get("max_value") or 4096)

    def submit(self, event: HookEvent, decision: Decision, started_ns: int | None = None) -> None:
        """Record ``event`` answered with ``decision`` (``started_ns`` is for spans: unused here). Never raises."""
        try:
            record_id = new_id()
            record = build_record(
                event, decision, record_id=record_id, config_hash=self.config_hash, version=self.version
            )
            size = append(self.state_dir, record_id, redacted(record, self.redactor)[1])
        except Exception as exc:  # recording must never change the hook's answer
            text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            sys.stderr.write(f"hookgate: audit: cannot record: {text}\n")
            return
        if size >= DRAIN_BYTES:  # the record is in: a drain that fails or is cut short loses nothing
            drain_after_append(self.drain, self.state_dir)

    def close(self) -> None:
        """Nothing is held open (the spool is closed after each write)."""

    def matches(self, audit: dict[str, Any], config_hash: str | None) -> bool:
        """True when this recorder was made for ``audit`` and ``config_hash``."""
        return self.config_hash == config_hash and (self.audit is audit or self.audit == (audit or {}))
