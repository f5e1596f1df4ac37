"""``Store``: the one state-store interface. Everything that must outlive one process (verdict caches,
Stop-guard counts, rate-limit counts, the read-only flag, approval requests; audit records as they land)
goes through it, never a module's own file or dict, so that pointing ``settings.store`` at a shared
backend makes every feature correct across machines at once.

Backends: ``gateway.store.sqlite.SQLiteStore`` (embedded, the default) and
``gateway.store.postgres.PostgresStore`` (shared by many machines; ``settings.store: postgresql://...``).
A feature that needs more adds abstract methods here and implements them in every backend in the same
change, with a schema migration (``gateway.store.sqlite.MIGRATIONS``, mirrored by
``gateway.store.pg_schema.MIGRATIONS`` with the same version numbers).

Async forms: code running in an event loop (the dispatcher, handlers, ``serve`` routes) calls the
``a``-prefixed coroutines (``acache_get``, ``acounter_add_capped``, ...). Their defaults here call the
sync method (SQLite answers in microseconds); ``PostgresStore`` overrides them with an async connection
pool in ``serve``, so a database round trip never blocks the loop.

Contract for every method: safe for concurrent processes (each call is atomic on its own); values are
JSON-serializable (``Any`` below means a JSON value); times are ``time.time()`` seconds; a backend
failure raises ``gateway.errors.StoreError`` (``StoreUnavailable`` when a networked store cannot be
reached: callers that decide with state then follow their ``failClosed``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator
    from contextlib import AbstractContextManager

    from gateway.approvals.record import ApprovalRecord
    from gateway.store.audit_types import AuditEntry, AuditFilter, AuditRow, ChainHead, Voucher


class Store(ABC):
    """Key-value cache with expiry, integer counters (scope, key) and named JSON flags and approval requests.

    ``kind``: ``sqlite`` | ``postgresql``; ``display``: where it is, safe to print (no password);
    ``required_version``: the schema version this hookgate needs."""

    kind: str = "?"
    required_version: int = 0

    @property
    @abstractmethod
    def display(self) -> str:
        """Where the store is, safe for logs and errors (a file path, or a URL without its password)."""

    @abstractmethod
    def schema_version(self) -> int:
        """The schema version the store holds (0: never migrated)."""

    @abstractmethod
    def migrate(self) -> list[int]:
        """Apply pending schema migrations; the versions applied now (empty when already current)."""

    @abstractmethod
    def table_counts(self) -> dict[str, int]:
        """Rows per table, in schema order (``hookgate store status``)."""

    @abstractmethod
    def cache_get(self, key: str) -> Any | None:
        """The cached value of ``key``, or None when absent or expired."""

    @abstractmethod
    def cache_put(self, key: str, value: Any, ttl: float) -> None:
        """Cache ``value`` under ``key`` for ``ttl`` seconds (replacing any earlier value)."""

    @abstractmethod
    def counter_get(self, scope: str, key: str) -> int:
        """The counter's value (0 when it was never added to or was reset)."""

    @abstractmethod
    def counter_add(self, scope: str, key: str, delta: int = 1) -> int:
        """Add ``delta`` atomically and return the new value."""

    @abstractmethod
    def counter_add_capped(self, scope: str, key: str, limit: int) -> int | None:
        """Add 1 atomically only while the counter is below ``limit``: the new value, or None when the
        limit was already reached (nothing changed). Rate limits use it with a time-bucketed ``key``."""

    @abstractmethod
    def counter_reset(self, scope: str, key: str) -> None:
        """Set the counter back to 0 (remove it)."""

    @abstractmethod
    def flag_get(self, name: str) -> Any | None:
        """The JSON value of flag ``name``, or None when unset."""

    @abstractmethod
    def flag_set(self, name: str, value: Any | None) -> None:
        """Set flag ``name`` to the JSON ``value``; None deletes it."""

    # ---- compound counter steps (the Stop-loop guard, ``gateway.stopguard``): each is one atomic step,
    # one round trip on a networked store. The defaults here run the primitives above one after another
    # (each atomic on its own, enough for one machine's file); ``PostgresStore`` sends one statement.

    def counter_reserve(self, scope: str, key: str, limit: int, inflight: tuple[str, str]) -> tuple[int | None, int]:
        """``counter_add_capped(scope, key, limit)`` and, only when it added, +1 on the in-flight counter
        ``inflight`` (``(scope, key)``). Returns ``(the new value, or None when the limit was already
        reached, the counter's value)``."""
        added = self.counter_add_capped(scope, key, limit)
        if added is not None:
            self.counter_add(*inflight, 1)
            return added, added
        return None, self.counter_get(scope, key)

    def counter_settle(
        self,
        scope: str,
        key: str,
        action: str,
        *,
        inflight: tuple[str, str] | None = None,
        busy: tuple[tuple[str, str], ...] = (),
    ) -> None:
        """Settle counter ``(scope, key)`` after a reservation: ``action`` is ``keep`` (leave it),
        ``reset`` (back to 0), ``release`` (-1) or ``reset_if_idle`` (back to 0 unless one of the ``busy``
        counters is above 0); ``inflight``: a counter to take 1 off in the same step."""
        if action == "reset" or (action == "reset_if_idle" and all(self.counter_get(*b) <= 0 for b in busy)):
            self.counter_reset(scope, key)
        elif action == "release":
            self.counter_add(scope, key, -1)
        if inflight is not None:
            self.counter_add(*inflight, -1)

    # ---- approval requests (``gateway.approvals``): pending -> approved | rejected | expired | cancelled

    @abstractmethod
    def approval_create(self, record: ApprovalRecord) -> ApprovalRecord:
        """Store a new pending request, unless an open one (pending, or answered and not consumed) has the
        same ``key``: then nothing is stored. Returns the open request for the key (``record`` or the
        one that was there first), atomically."""

    @abstractmethod
    def approval_get(self, approval_id: str) -> ApprovalRecord | None:
        """The request ``approval_id``, or None."""

    @abstractmethod
    def approval_find(self, key: str, fingerprint: str) -> ApprovalRecord | None:
        """The open request with ``key``, else the newest open one with ``fingerprint``, else None."""

    @abstractmethod
    def approval_list(self, statuses: list[str] | None = None, limit: int = 100) -> list[ApprovalRecord]:
        """Requests (only those in ``statuses`` when given), newest first, at most ``limit``."""

    @abstractmethod
    def approval_decide(
        self, approval_id: str, status: str, by: str, reason: str | None, at: float
    ) -> ApprovalRecord | None:
        """Move a *pending* request to ``status`` (approved | rejected | expired | cancelled), recording
        ``by``, ``reason`` and ``at``, atomically: the updated request, or None when it was not pending
        (of two racing answers exactly one gets the record)."""

    @abstractmethod
    def approval_consume(self, approval_id: str, at: float) -> bool:
        """Mark an approved/rejected request as delivered to its tool call: True for the first caller only."""

    @abstractmethod
    def approval_expire_due(self, now: float, by: str) -> list[ApprovalRecord]:
        """Expire every pending request with ``expires_at <= now`` (decided_by ``by``); returns them."""

    def approval_lookup(
        self, key: str, fingerprint: str, now: float, by: str
    ) -> tuple[list[ApprovalRecord], ApprovalRecord | None]:
        """``approval_expire_due(now, by)`` then ``approval_find(key, fingerprint)`` as one step (the
        approval handler's lookup: one round trip on PostgreSQL): ``(the requests expired now, the open
        request found or None)``. A request expired by this step is never the one found."""
        expired = self.approval_expire_due(now, by)
        return expired, self.approval_find(key, fingerprint)

    @abstractmethod
    def approval_set_ref(self, approval_id: str, ref: dict[str, Any]) -> None:
        """Keep the channel's handle on the posted message (JSON object) with the request."""

    # ---- audit records (gateway.audit; types in gateway.store.audit_types, chain design in gateway.audit.chain)

    @abstractmethod
    def audit_append(self, chain: str, entries: list[AuditEntry]) -> int:
        """Append ``entries`` in order to writer chain ``chain`` in one transaction that holds the chain's
        head (so concurrent writers never fork it): each gets ``seq`` = head + 1, ``prev_hash`` = the
        head's hash, ``hash`` = ``link_hash(prev_hash, chain, seq, body)``; the head moves to the last.
        An entry whose ``id`` is already stored is skipped. Returns how many were stored."""

    @abstractmethod
    def audit_records(self, flt: AuditFilter) -> list[AuditRow]:
        """Records that fit ``flt``, newest first (by insertion number ``n``), at most ``flt.limit``."""

    def audit_handler_lists(self, flt: AuditFilter) -> Iterator[list[dict[str, Any]]]:
        """The ``handlers`` entries (objects only) of each record that fits ``flt`` (its limit aside), oldest
        first: what ``hookgate audit stats`` and the console's Handlers panel count. A store may stream them
        without building the records (SQLite does)."""
        from gateway.audit.report import handlers_of

        for row in reversed(self.audit_records(flt)):
            yield handlers_of(row.record)

    @abstractmethod
    def audit_record(self, record_id: str) -> AuditRow | None:
        """One record by id, or None."""

    @abstractmethod
    def audit_chain(self, chain: str, after_seq: int = 0, limit: int = 1000) -> list[AuditRow]:
        """Up to ``limit`` records of ``chain`` with ``seq > after_seq``, ``seq`` ascending."""

    @abstractmethod
    def audit_heads(self) -> list[ChainHead]:
        """Every chain's head by chain name; a chain with records but no head row has ``seq`` -1."""

    @abstractmethod
    def audit_snapshot(self) -> AbstractContextManager[None]:
        """A context in which this store's reads (``audit_heads``, ``audit_chain``, ...) all see one
        committed state, however many statements they take, while other processes append and prune
        (``hookgate audit verify`` walks the chains in one). A read-only transaction on the store's
        connection: nothing may be written inside it. Raises StoreError like any read."""

    @abstractmethod
    def audit_prune(
        self, *, before: float | None = None, max_bytes: int | None = None, voucher: Voucher | None = None
    ) -> int:
        """Retention: delete records older than ``before`` (seconds), then the oldest until the bodies
        total at most ``max_bytes``; only a prefix of each chain goes, and its head keeps the last
        deleted link (``base_seq``/``base_hash``). ``voucher(chain, first_seq, last_seq, last_hash,
        cutoff)`` builds, per pruned chain, the record that is appended to that chain **in the same
        transaction** to vouch for the new base (``gateway.audit.retention``). Returns how many records
        were deleted."""

    @abstractmethod
    def audit_size(self) -> tuple[int, int]:
        """``(number of records, total bytes of their bodies)``."""

    @abstractmethod
    def close(self) -> None:
        """Release the backend's connections (the store is not used afterwards)."""

    async def aclose(self) -> None:
        """``close`` for async owners (``RunContext.aclose``); backends with pools override it."""
        self.close()

    # -- async forms (see module docstring): the defaults call the sync methods ---------------------------

    async def acache_get(self, key: str) -> Any | None:
        return self.cache_get(key)

    async def acache_put(self, key: str, value: Any, ttl: float) -> None:
        self.cache_put(key, value, ttl)

    async def acounter_get(self, scope: str, key: str) -> int:
        return self.counter_get(scope, key)

    async def acounter_add(self, scope: str, key: str, delta: int = 1) -> int:
        return self.counter_add(scope, key, delta)

    async def acounter_add_capped(self, scope: str, key: str, limit: int) -> int | None:
        return self.counter_add_capped(scope, key, limit)

    async def acounter_reset(self, scope: str, key: str) -> None:
        self.counter_reset(scope, key)

    async def acounter_reserve(
        self, scope: str, key: str, limit: int, inflight: tuple[str, str]
    ) -> tuple[int | None, int]:
        return self.counter_reserve(scope, key, limit, inflight)

    async def acounter_settle(
        self,
        scope: str,
        key: str,
        action: str,
        *,
        inflight: tuple[str, str] | None = None,
        busy: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.counter_settle(scope, key, action, inflight=inflight, busy=busy)

    async def aflag_get(self, name: str) -> Any | None:
        return self.flag_get(name)

    async def aflag_set(self, name: str, value: Any | None) -> None:
        self.flag_set(name, value)
