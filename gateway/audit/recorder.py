"""The recorder the dispatcher calls after merge: ``Recorder.submit(event, decision, started_ns)``.

It builds the record (``gateway.audit.record``), redacts and truncates it (``gateway.audit.redact``)
before any sink sees it, and hands the canonical text to the configured sinks:

- ``store``: the state store (``Store.audit_append``, hash-chained). A one-shot process
  (``hookgate run``, ``background=False``) appends to the store's spool instead (``gateway.audit.spool``:
  about 0.1 ms, where opening SQLite costs 3-5 ms) and drains it into the store when it has grown;
  a long-lived one (``hookgate serve``, the Python API; ``background=True``) only appends
  ``(event, decision, time)`` to a deque on the request path (well under a microsecond: no copy, no
  lock, no wake-up); a writer thread wakes every ``FLUSH_SECONDS``, takes everything queued, and
  builds, redacts, hashes and appends it as one batch per sink (one store transaction per batch), and
  drains the spool of the ``hookgate run`` processes beside it every second. The event and the
  decision are not changed after they are answered, so building the record later gives the same
  record. Under ``hookgate serve`` (``process``) the request path takes the record's parts at once
  (``record_parts``: plain values) and keeps them pickled (a few us: a queue of the requests' own
  objects would keep a quarter second of them alive, which costs more), and the thread only sends
  each batch to a writer process (``gateway.audit.writer``), which builds, redacts, hashes and writes
  the records and looks after the spool and retention: the server's interpreter spends a few
  microseconds per record instead of tens (each record gets its id in the thread, with its batch:
  ``gateway.audit.spool.new_ids``). If that process cannot be started or dies, the thread
  writes the records itself from then on (one log
  line), starting with the batches it never acknowledged (``gateway.audit.pipe``);
- ``jsonl:PATH``: one line per record appended to PATH, hash-chained like the store
  (``gateway.audit.jsonl``; ``hookgate audit verify --jsonl PATH`` walks it);
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
from collections import deque

from gateway.audit.record import build_record, canonical, record_of, record_parts, redacted
from gateway.audit.redact import Redactor

TYPE_CHECKING = False  # typing costs ~2 ms to import; `hookgate run` loads this module on every record
if TYPE_CHECKING:
    import threading
    from collections.abc import Callable
    from typing import Any

    from gateway.audit.pipe import WriterProcess
    from gateway.decision import Decision
    from gateway.events import HookEvent

    Built = tuple[str, float, int | None, tuple[Any, ...] | list[Any]]
    """A record to build: its id, epoch seconds, span start, its parts (``gateway.audit.record.record_parts``)."""

    Packed = tuple[str, bytes]
    """A record as it travels to the writer process: its id and its pickled ``(epoch seconds, span start,
    parts)`` (``Recorder._pack``)."""

    Item = tuple[str, float, dict[str, Any], str, int | None, Decision | None]
    """A prepared record: id, epoch seconds (ms), redacted record, its canonical text, span start, decision."""

FLUSH_SECONDS = 0.25
"""The writer thread appends what is queued at least this often."""
BATCH = 500
"""At most this many records per store transaction."""
MAX_LAG = 8
"""Batches the writer process may have unwritten before this process writes the next ones itself (the
writer runs at idle priority: on a machine with no CPU to spare it waits; ``gateway.audit.writer``)."""
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
    config_hash, version: copied into every record. background: batch in a writer thread.
    process: with ``background``, the config's ``settings`` (which store to open): the thread hands
    the records to a writer process that opens that store (not when spans are wanted: they are sent
    from this process). When spans are wanted but the OpenTelemetry SDK is missing, one line says so
    and records still go out.
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
        process: dict[str, Any] | None = None,
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
        self.process = process if background and self.telemetry is None else None
        self._child: WriterProcess | None = None
        self._flush_timeout = 5.0
        self._store: Any = None
        self._pending: deque[tuple[HookEvent, Decision, float, int | None]] | None = None
        self._wake: threading.Event | None = None
        self._thread: threading.Thread | None = None
        self._packed: deque[bytes] = deque()  # ``_pack``ed records, not given ids yet
        self._behind = False  # the writer process is MAX_LAG batches behind
        self.written_here = 0
        """Records this process wrote itself while its writer process was behind."""
        self._stopping = False
        self._last_error = {False: -60.0, True: -60.0}  # per kind of line: a failure, records kept
        self._atexit = False
        if background:
            self._pending = deque()

    # ------------------------------------------------------------------ the one entry point

    def submit(self, event: HookEvent, decision: Decision, started_ns: int | None = None) -> None:
        """Record ``event`` answered with ``decision``; ``started_ns``: ``time.time_ns()`` when its
        dispatch began (span start). Never raises. In background mode this only queues (with a writer
        process: the record, built and pickled)."""
        if self.process is not None:  # built and packed now: nothing of the request is kept alive
            try:
                self._packed.append(self._pack(event, decision, time.time(), started_ns))
            except Exception as exc:
                self._report(exc)
            if self._thread is None:
                self._start()
            return
        pending = self._pending
        if pending is not None:
            pending.append((event, decision, time.time(), started_ns))
            if self._thread is None:
                self._start()
            return
        try:
            self._write([self._prepare(event, decision, time.time(), started_ns)])
        except Exception as exc:  # recording must never change the hook's answer
            self._report(exc)

    def submit_record(self, record: dict[str, Any]) -> None:
        """Write an already built record (an approval transition: ``gateway.audit.record_approval``),
        redacted like every other, to the same sinks and chains, in this thread. Never raises."""
        from gateway.audit.spool import new_id

        try:
            record_id = new_id()
            clean = self.redactor.apply({**record, "id": record_id})
            self._write_records([(record_id, time.time(), clean, canonical(clean), None, None)])
        except Exception as exc:  # recording must never undo what it records
            self._report(exc)

    # ------------------------------------------------------------------ building

    def _pack(self, event: HookEvent, decision: Decision, now: float, started_ns: int | None) -> bytes:
        """What the record of ``event`` takes from the request (``record_parts``), pickled for the writer
        process, which builds, redacts and writes the record: a bytes object, which holds no reference to
        the request's objects (a queue of those would keep a quarter second of requests alive and cost
        the server more than this does). The record's id is given later, with its batch (``_batch``)."""
        import pickle  # here: a one-shot `hookgate run` that loads this module never pickles

        parts = record_parts(event, decision)
        try:
            return pickle.dumps((now, started_ns, parts), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # a value pickle cannot carry (a Python handler's object): as its stored JSON
            import json

            plain = json.loads(canonical(parts))
            return pickle.dumps((now, started_ns, plain), protocol=pickle.HIGHEST_PROTOCOL)

    def _prepare(self, event: HookEvent, decision: Decision, now: float, started_ns: int | None) -> Item:
        from gateway.audit.spool import new_id

        record_id = new_id()
        record = build_record(
            event, decision, record_id=record_id, config_hash=self.config_hash, version=self.version, now=now
        )
        return self._finish(record_id, record, now, started_ns, decision)

    def _finish(
        self, record_id: str, record: dict[str, Any], now: float, started_ns: int | None, decision: Decision | None
    ) -> Item:
        """A built record redacted and in its canonical text (``gateway.audit.record.redacted``)."""
        record, body = redacted(record, self.redactor)
        return record_id, round(now * 1000) / 1000, record, body, started_ns, decision

    def write_packed(self, packed: list[Packed]) -> None:
        """``write_built`` of records packed by ``_pack`` and given ids by ``_batch``: each is unpacked on
        its own, so one that cannot be (reported, one line) costs only itself, never its batch."""
        import pickle

        batch: list[Built] = []
        for record_id, blob in packed:
            try:
                now, started_ns, parts = pickle.loads(blob)
                batch.append((record_id, now, started_ns, parts))
            except Exception as exc:
                self._report(exc)
        self.write_built(batch)

    def write_built(self, batch: list[Built]) -> None:
        """Build, redact and write records packed elsewhere (``_pack``: in the server, for its writer
        process, ``gateway.audit.writer``), in this thread, as one batch per sink."""
        items: list[Item] = []
        for record_id, now, started_ns, parts in batch:
            try:
                record = record_of(
                    parts, record_id=record_id, config_hash=self.config_hash, version=self.version, now=now
                )
                items.append(self._finish(record_id, record, now, started_ns, None))
            except Exception as exc:
                self._report(exc)
        self._write(items)

    def _write(self, items: list[Item]) -> None:
        self._write_records(items)
        if self.telemetry is not None:
            for _, now, record, _, started_ns, decision in items:
                if decision is not None:  # the span ends when the answer was decided (``now``), not here
                    self.telemetry.emit(record, decision, started_ns, round(now * 1e9))

    def _write_records(self, items: list[Item]) -> None:
        for sink in self.sinks:
            try:
                if sink == "store":
                    self._to_store(items)
                elif sink.startswith("jsonl:"):
                    from gateway.audit.jsonl import append

                    append(sink[len("jsonl:") :], self.chain, [(rid, body) for rid, _, _, body, _, _ in items])
            except Exception as exc:  # one sink failing does not keep the records from the others
                self._report(exc)

    def _to_store(self, items: list[Item]) -> None:
        if not self.background:
            from gateway.audit.spool import DRAIN_BYTES, append, drain_after_append

            size = 0
            for record_id, _, _, body, _, _ in items:
                size = append(self.state_dir, record_id, body)
            if size >= DRAIN_BYTES:
                drain_after_append(self.drain, self.state_dir)
            return
        from gateway.errors import StoreError
        from gateway.store.audit_types import AuditEntry, derived

        entries = [AuditEntry(record_id, ts, body, **derived(record)) for record_id, ts, record, body, _, _ in items]
        try:
            self.store().audit_append(self.chain, entries)
        except StoreError as exc:
            # the store cannot take them now (a shared database restarting, unreachable): the records
            # wait in this machine's spool, which this thread moves into the store once it answers
            from gateway.audit.spool import append

            for entry in entries:
                append(self.state_dir, entry.id, entry.body)
            self._report(exc, kept=True)

    # ------------------------------------------------------------------ store upkeep

    def store(self) -> Any:
        if self._store is None:
            self._store = self.store_factory()
        return self._store

    def drain(self, *, prune: bool = True) -> int:
        """Move the spool into the store, then (``prune``, when any moved) apply retention. Returns records
        moved."""
        from gateway.audit.spool import drain

        moved = drain(self.state_dir, self.store(), self.chain)
        if moved and prune:
            self.prune()
        return moved

    def prune(self) -> int:
        """Apply ``keepDays``/``maxMB`` to the store; each pruned chain gets its retention record
        (``gateway.audit.retention``). Returns records removed."""
        keep_days, max_mb = self.audit.get("keep_days"), self.audit.get("max_mb")
        if keep_days is None and max_mb is None:
            return 0
        before = time.time() - keep_days * 86400 if keep_days is not None else None
        # any finite maxMB validates; past what a store's 64-bit integer holds it means "no limit" in practice
        max_bytes = int(min(max_mb * 1024 * 1024, 2**63 - 1)) if max_mb is not None else None
        from gateway.audit.retention import voucher

        vouch = voucher(self.audit, version=self.version, config_hash=self.config_hash)
        removed: int = self.store().audit_prune(before=before, max_bytes=max_bytes, voucher=vouch)
        return removed

    # ------------------------------------------------------------------ the writer thread

    def _start(self) -> None:
        import atexit
        import threading

        self._wake = threading.Event()
        self._stopping = False
        self._thread = threading.Thread(target=self._loop, name="hookgate-audit", daemon=True)
        self._thread.start()
        if not self._atexit:  # a Python API user who never calls aclose() still gets the records written
            atexit.register(self.flush)
            self._atexit = True

    def upkeep_clock(self) -> Callable[[float, bool], None]:
        """``upkeep(now, stopping)``: drain the spool every ``DRAIN_SECONDS`` (and when stopping) and
        apply retention every ``PRUNE_SECONDS`` (``now``: ``time.monotonic()``)."""
        last_drain = last_prune = 0.0

        def upkeep(now: float, stopping: bool) -> None:
            nonlocal last_drain, last_prune
            from gateway.errors import StoreError

            if "store" in self.sinks and (stopping or now - last_drain >= DRAIN_SECONDS):
                last_drain = now
                from gateway.audit.spool import drain

                try:
                    drain(self.state_dir, self.store(), self.chain)
                except StoreError as exc:  # not lost: the records stay in the spool for the next drain
                    self._report(exc, kept=True)
            if "store" in self.sinks and now - last_prune >= PRUNE_SECONDS:
                last_prune = now
                try:
                    self.prune()
                except StoreError as exc:  # nothing is lost: retention runs again at the next round
                    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                    say(self.background, f"audit: retention not applied now ({text}); it runs again in ten minutes")

        return upkeep

    def _loop(self) -> None:
        assert self._wake is not None
        wake = self._wake
        upkeep = self.upkeep_clock()
        while True:
            wake.wait(FLUSH_SECONDS)
            wake.clear()
            stopping = self._stopping
            try:
                self._write_pending()
                if self._child is None:  # else the writer process looks after the spool and retention
                    upkeep(time.monotonic(), stopping)
            except Exception as exc:
                self._report(exc)
            if stopping:
                break
        self._stop_child(self._flush_timeout)
        if self._store is not None and hasattr(self._store, "close"):
            self._store.close()
            self._store = None

    def _write_pending(self) -> None:
        """Build and write (or hand to the writer process) everything queued, ``BATCH`` records at a time."""

        packed = self._packed
        while packed:
            batch = self._batch(min(len(packed), BATCH))
            if self._writer_behind():  # this thread writes the batch (the store chains both writers')
                self.written_here += len(batch)
                self.write_packed(batch)
            elif not self._to_child(batch):
                self.write_packed(batch)
        pending = self._pending
        assert pending is not None
        while pending:
            items: list[Item] = []
            while pending and len(items) < BATCH:
                event, decision, now, started_ns = pending.popleft()
                try:
                    items.append(self._prepare(event, decision, now, started_ns))
                except Exception as exc:
                    self._report(exc)
            self._write(items)

    def _batch(self, n: int) -> list[Packed]:
        """The next ``n`` packed records, each with its id (``new_ids``: from here on a record keeps its
        id, so one written twice, by a writer process that died before acknowledging it and then by
        this thread, is stored once)."""
        from gateway.audit.spool import new_ids

        packed = self._packed
        return list(zip(new_ids(n), [packed.popleft() for _ in range(n)], strict=True))

    def _writer_behind(self) -> bool:
        """True while the writer process has ``MAX_LAG`` batches or more unwritten (it runs at idle
        priority, so on a machine with no CPU to spare it waits); said once per such spell."""
        child = self._child
        if child is None:
            return False
        lag = child.lag()
        if lag >= MAX_LAG:
            if not self._behind:
                self._behind = True
                say(
                    True,
                    f"audit: the writer process is {lag} batches behind (no idle CPU); this process "
                    "writes the records itself until it catches up",
                )
            return True
        self._behind = False
        return False

    def _to_child(self, batch: list[Packed]) -> bool:
        """Send ``batch`` (``_batch``) to the writer process (started on first use); False when there is
        none (it cannot be started or has died: then this thread writes, and ``submit`` queues for it,
        from here on)."""
        if self.process is None:
            return False
        child = self._child
        if child is None:
            from gateway.audit.pipe import WriterProcess

            setup = {
                "audit": self.audit,
                "state_dir": self.state_dir,
                "settings": self.process,
                "config_hash": self.config_hash,
                "version": self.version,
            }
            try:
                child = self._child = WriterProcess(setup)
            except OSError as exc:
                self.process = None
                say(True, f"audit: no writer process ({exc}); this process writes the records itself")
                return False
        try:
            child.send(batch)
        except OSError as exc:  # the child is gone: from now on this thread writes, starting with what it left
            self.process, self._child = None, None
            say(True, f"audit: the writer process ended ({exc}); this process writes the records itself")
            child.stop(1.0)
            self._write_left(child)
        return True

    def _write_left(self, child: WriterProcess) -> None:
        """Write here what an ended writer process never acknowledged (the store skips ids it has)."""
        left = child.unwritten()
        if left:
            self.write_packed(left)

    def _stop_child(self, timeout: float) -> None:
        """Close the writer process's pipe; wait (up to ``timeout`` s) while it writes what it has."""
        child, self._child = self._child, None
        if child is None:
            return
        if child.stop(timeout):
            self._write_left(child)  # nothing, unless it died on the way
        else:
            say(True, "audit: the writer process did not finish in time; it goes on writing on its own")

    def flush(self, timeout: float = 5.0) -> None:
        """Background mode: wait until everything submitted so far is written (the thread stops and
        starts again on the next ``submit``)."""
        thread, wake = self._thread, self._wake
        if thread is not None and wake is not None:
            self._stopping = True
            self._flush_timeout = timeout
            wake.set()
            thread.join(timeout)
            self._thread = self._wake = None
            if self._pending or self._packed:  # queued while the thread was stopping
                try:
                    self._write_pending()
                except Exception as exc:
                    self._report(exc)
                self._stop_child(timeout)

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
        return self.config_hash == config_hash and (self.audit is audit or self.audit == (audit or {}))

    def _report(self, exc: BaseException, *, kept: bool = False) -> None:
        """One line, at most once a minute; ``kept``: the records wait in the spool instead (counted apart:
        a failure of the upkeep, such as retention on a store that just went away, must not hide that
        the records now wait in the spool)."""
        now = time.monotonic()
        if now - self._last_error[kept] < 60:
            return
        self._last_error[kept] = now
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if kept:
            say(
                self.background,
                f"audit: the store cannot take records now ({text}); they wait in the spool "
                f"under {self.state_dir} until it does",
            )
            return
        say(self.background, f"audit: cannot record: {text}")
