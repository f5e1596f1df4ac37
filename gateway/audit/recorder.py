"""The recorder the dispatcher calls after merge: ``Recorder.submit(event, decision, started_ns)``.

It builds the record (``gateway.audit.record``), redacts and truncates it (``gateway.audit.redact``)
before any sink sees it, and hands the canonical text to the configured sinks:

- ``store``: the state store (``Store.audit_append``, hash-chained). A one-shot process
  (``hookgate run``, ``background=False``) appends to the store's spool instead (``gateway.audit.spool``:
  about 0.1 ms, where opening SQLite costs 3-5 ms) and drains it into the store when it has grown;
  a long-lived one (``hookgate serve``, the Python API; ``background=True``) builds the record on the
  spot (tens of microseconds) and queues it; a writer thread appends them in batches, off the request
  path (SQLite and PostgreSQL release the GIL while they write, so the event loop is not held up), and
  drains the spool of the ``hookgate run`` processes beside it every second;
- ``jsonl:PATH``: one record per line appended to PATH (``O_APPEND``; plain records, for log
  pipelines; the chain lives in the store);
- OpenTelemetry (``gateway.audit.otel``) when ``audit.otel`` is set or ``OTEL_EXPORTER_OTLP_ENDPOINT``
  is in the environment: a span per dispatch and one per handler, from the redacted record.

Retention (``keepDays``, ``maxMB``) runs after each drain of the spool and every ten minutes in the
writer thread. A batch the store cannot take (a shared database that is down) goes to the spool, and
the next drain after the store answers again moves it in: nothing is lost. Recording never fails a
hook: an error becomes one line on stderr (``hookgate run``) or in the log (``hookgate.audit``), and
the event's answer is unchanged.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gateway.audit.record import build_record, canonical
from gateway.audit.redact import Redactor

if TYPE_CHECKING:
    import threading
    from queue import SimpleQueue

    from gateway.decision import Decision
    from gateway.events import HookEvent

FLUSH_SECONDS = 0.25
"""The writer thread appends what it has at least this often."""
BATCH = 500
DRAIN_SECONDS = 1.0
PRUNE_SECONDS = 600.0


def otel_wanted(audit: dict[str, Any]) -> bool:
    """True when spans should be exported (``audit.otel`` set, or ``OTEL_EXPORTER_OTLP_ENDPOINT``)."""
    return bool(audit.get("otel")) or bool(os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"))


def default_chain() -> str:
    """This machine's chain name: its host name."""
    return os.uname().nodename or "local"


def say(background: bool, message: str) -> None:
    if background:
        import logging

        logging.getLogger("hookgate.audit").error("%s", message)
    else:
        sys.stderr.write(f"hookgate: {message}\n")


class Recorder:
    """Records events for one config (see module docstring).

    audit: the normalized ``audit`` section. state_dir: ``settings.stateDir`` (the spool lives in
    ``<state_dir>/audit``). store_factory: opens the state store (called lazily, once per thread).
    config_hash, version: copied into every record. background: batch in a writer thread. When
    spans are wanted but the OpenTelemetry SDK is missing, one line says so and records still go out.
    """

    def __init__(
        self,
        audit: dict[str, Any],
        *,
        state_dir: str,
        store_factory: Callable[[], Any],
        config_hash: str | None,
        version: str,
        background: bool = False,
    ) -> None:
        self.audit = audit or {}
        audit = self.audit
        self.state_dir = state_dir
        self.store_factory = store_factory
        self.config_hash = config_hash
        self.version = version
        self.background = background
        self.chain = audit.get("chain") or default_chain()
        self.sinks: list[str] = list(audit.get("sinks", ["store"]))
        self.redactor = Redactor(audit.get("redact") or (), audit.get("max_value") or 4096)
        self.telemetry: Any = None
        if otel_wanted(audit):
            from gateway.audit.otel import Telemetry
            from gateway.errors import HookgateError

            try:
                self.telemetry = Telemetry(audit.get("otel") or {}, batch=background, version=version)
            except HookgateError as exc:  # records still go to the sinks; spans cannot
                say(background, f"audit: no spans: {exc}")
        self._store: Any = None
        self._queue: SimpleQueue[Any] | None = None
        self._thread: threading.Thread | None = None
        self._last_error = 0.0
        self._atexit = False

    # ------------------------------------------------------------------ the one entry point

    def submit(self, event: HookEvent, decision: Decision, started_ns: int | None = None) -> None:
        """Record ``event`` answered with ``decision``; ``started_ns``: ``time.time_ns()`` when its
        dispatch began (span start). Never raises."""
        now = time.time()
        if not self.background:
            try:
                self._write([self._prepare(event, decision, now, started_ns)])
            except Exception as exc:  # recording must never change the hook's answer
                self._report(exc)
            return
        if self._queue is None:
            self._start()
        assert self._queue is not None
        try:  # built here (tens of microseconds); the thread only writes, which frees the GIL while it waits
            self._queue.put(self._prepare(event, decision, now, started_ns))
        except Exception as exc:
            self._report(exc)

    def submit_record(self, record: dict[str, Any]) -> None:
        """Write an already built record (an approval transition: ``gateway.audit.record_approval``),
        redacted like every other, to the same sinks and chain, in this thread. Never raises."""
        from gateway.audit.spool import new_id

        try:
            clean = self.redactor.apply(record)
            body = canonical(clean)
            self._write_records([(new_id(), clean, body, None, None)])
        except Exception as exc:  # recording must never undo what it records
            self._report(exc)

    # ------------------------------------------------------------------ building

    def _prepare(
        self, event: HookEvent, decision: Decision, now: float, started_ns: int | None
    ) -> tuple[str, dict[str, Any], str, int | None, Decision]:
        from gateway.audit.spool import new_id

        record = build_record(event, decision, config_hash=self.config_hash, version=self.version, now=now)
        body = canonical(record)
        if not self.redactor.clean(body):  # the common case skips the walk: nothing that could be a secret
            record = self.redactor.apply(record)
            body = canonical(record)
        return new_id(), record, body, started_ns, decision

    def _write(self, items: list[tuple[str, dict[str, Any], str, int | None, Decision]]) -> None:
        self._write_records(items)
        if self.telemetry is not None:
            for _, record, _, started_ns, decision in items:
                self.telemetry.emit(record, decision, started_ns)

    def _write_records(self, items: list[Any]) -> None:
        for sink in self.sinks:
            if sink == "store":
                self._to_store(items)
            elif sink.startswith("jsonl:"):
                _append_lines(sink[len("jsonl:") :], [body for _, _, body, _, _ in items])

    def _to_store(self, items: list[tuple[str, dict[str, Any], str, int | None, Decision]]) -> None:
        if not self.background:
            from gateway.audit.spool import DRAIN_BYTES, append

            size = 0
            for record_id, _, body, _, _ in items:
                size = append(self.state_dir, record_id, body)
            if size >= DRAIN_BYTES:
                self.drain()
            return
        from gateway.errors import StoreError
        from gateway.store.audit_types import AuditEntry

        entries = [AuditEntry.from_record(record_id, body, record) for record_id, record, body, _, _ in items]
        try:
            self.store().audit_append(self.chain, entries)
        except StoreError as exc:
            # the store cannot take them now (a shared database restarting, unreachable): the records
            # wait in this machine's spool, which this thread moves into the store once it answers
            from gateway.audit.spool import append

            for record_id, _, body, _, _ in items:
                append(self.state_dir, record_id, body)
            self._report(exc, kept=True)

    # ------------------------------------------------------------------ store upkeep

    def store(self) -> Any:
        if self._store is None:
            self._store = self.store_factory()
        return self._store

    def drain(self) -> int:
        """Move the spool into the store, then apply retention. Returns records moved."""
        from gateway.audit.spool import drain

        moved = drain(self.state_dir, self.store(), self.chain)
        if moved:
            self.prune()
        return moved

    def prune(self) -> int:
        """Apply ``keepDays``/``maxMB`` to the store; returns records removed."""
        keep_days, max_mb = self.audit.get("keep_days"), self.audit.get("max_mb")
        if keep_days is None and max_mb is None:
            return 0
        before = time.time() - keep_days * 86400 if keep_days is not None else None
        max_bytes = int(max_mb * 1024 * 1024) if max_mb is not None else None
        removed: int = self.store().audit_prune(before=before, max_bytes=max_bytes)
        return removed

    # ------------------------------------------------------------------ the writer thread

    def _start(self) -> None:
        import atexit
        import threading
        from queue import SimpleQueue

        self._queue = SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="hookgate-audit", daemon=True)
        self._thread.start()
        if not self._atexit:  # a Python API user who never calls aclose() still gets the records written
            atexit.register(self.flush)
            self._atexit = True

    def _loop(self) -> None:
        from queue import Empty

        assert self._queue is not None
        queue = self._queue
        last_drain = last_prune = 0.0
        stopping = False
        while not stopping:
            batch: list[Any] = []
            try:
                batch.append(queue.get(timeout=FLUSH_SECONDS))
                while len(batch) < BATCH:
                    batch.append(queue.get_nowait())
            except Empty:
                pass
            if batch and batch[-1] is None:
                stopping = True
                batch.pop()
            try:
                if batch:
                    self._write([item for item in batch if item is not None])
                now = time.monotonic()
                if "store" in self.sinks and (stopping or now - last_drain >= DRAIN_SECONDS):
                    last_drain = now
                    from gateway.audit.spool import drain

                    drain(self.state_dir, self.store(), self.chain)
                if "store" in self.sinks and now - last_prune >= PRUNE_SECONDS:
                    last_prune = now
                    self.prune()
            except Exception as exc:
                self._report(exc)
        if self._store is not None and hasattr(self._store, "close"):
            self._store.close()
            self._store = None

    def flush(self, timeout: float = 5.0) -> None:
        """Background mode: wait until everything submitted so far is written (the thread stops and
        starts again on the next ``submit``)."""
        if self._thread is not None and self._queue is not None:
            self._queue.put(None)
            self._thread.join(timeout)
            self._thread, self._queue = None, None

    def close(self) -> None:
        """Write what is queued, flush spans, close the store."""
        self.flush()
        if self.telemetry is not None:
            self.telemetry.close()
        if self._store is not None and hasattr(self._store, "close"):
            self._store.close()
            self._store = None

    def matches(self, audit: dict[str, Any], config_hash: str | None) -> bool:
        """True when this recorder was made for ``audit`` and ``config_hash`` (else a reload changed them)."""
        return self.config_hash == config_hash and self.audit == (audit or {})

    def _report(self, exc: BaseException, *, kept: bool = False) -> None:
        """One line, at most once a minute; ``kept``: the records wait in the spool instead."""
        now = time.monotonic()
        if now - self._last_error < 60:
            return
        self._last_error = now
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if kept:
            say(
                self.background,
                f"audit: the store cannot take records now ({text}); they wait in the spool "
                f"under {self.state_dir} until it does",
            )
            return
        say(self.background, f"audit: cannot record: {text}")


def _append_lines(path: str, bodies: list[str]) -> None:
    """Append one line per record to ``path`` (one ``write`` call, ``O_APPEND``). Raises OSError."""
    data = "".join(body + "\n" for body in bodies).encode("utf-8", "surrogatepass")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
