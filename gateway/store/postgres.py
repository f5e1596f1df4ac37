"""``PostgresStore``: the shared state store on PostgreSQL (``settings.store: postgresql://...``).

Every replica of ``hookgate serve`` and every ``hookgate run`` process pointed at one database sees
one state. Each method is one SQL statement (one round trip) unless its docstring says otherwise, and
every read-modify-write is done by the database in that statement (``INSERT ... ON CONFLICT DO UPDATE
... RETURNING``, conditional ``UPDATE``), so concurrent writers on many machines never race.

Two ways to run the same operations (``gateway.store.pg_conn``): the sync methods of the ``Store``
interface use one connection (``hookgate run``, CLI); the ``a``-prefixed coroutines use an async pool
when the store was opened for ``serve`` (and the sync connection otherwise). Values are JSON (``jsonb``);
expiry uses the database's clock. Errors: ``StoreUnavailable`` (unreachable; nothing is retried
behind the caller's back, so a counter is never added twice), ``StoreSchemaError``, ``StoreError``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import gateway.store.pg_approvals as pg_approvals
from gateway.store.base import Store
from gateway.store.pg_audit import PostgresAuditMixin
from gateway.store.pg_conn import AsyncDB, Op, Q, SyncDB, T
from gateway.store.pg_schema import NOW, SCHEMA_VERSION, counts_op, migrate_op, version_op
from gateway.store.url import redact

if TYPE_CHECKING:
    from gateway.approvals.record import ApprovalRecord

Mode = Literal["run", "serve", "api", "admin"]


class PostgresStore(PostgresAuditMixin, Store):
    """The ``Store`` interface on PostgreSQL. ``url``: a libpq URL (secret; shown only redacted).
    ``mode``: ``serve`` adds the async pool; the others use one sync connection. ``op_timeout``: seconds
    after which an operation on the sync connection is cancelled (``hookgate run``'s handlers:
    ``gateway.store.RUN_OP_TIMEOUT``); None: unbounded (CLI commands, the audit writer)."""

    kind = "postgresql"

    @property
    def required_version(self) -> int:  # type: ignore[override]
        return SCHEMA_VERSION

    def __init__(self, url: str, *, mode: Mode = "run", op_timeout: float | None = None) -> None:
        self.url = url
        self.mode = mode
        self._sync = SyncDB(url, f"hookgate-{mode}", op_timeout=op_timeout)
        self._async = AsyncDB(url) if mode == "serve" else None

    @property
    def display(self) -> str:
        """The store's URL without secrets."""
        return redact(self.url)

    @property
    def round_trips(self) -> int:
        """Statements (and BEGIN/COMMIT) sent so far, sync and async together."""
        return self._sync.round_trips + (self._async.round_trips if self._async else 0)

    def _run(self, op: Op[T], *, tx: bool = False) -> T:
        return self._sync.run(op, tx=tx)

    async def _arun(self, make: Callable[[], Op[T]], *, tx: bool = False, read: bool = False) -> T:
        """Run ``make()`` on the async pool (serve) or the sync connection; ``read``: may run twice."""
        if self._async is None:
            return self._sync.run(make(), tx=tx)
        return await self._async.run(make, tx=tx, read=read)

    # -- schema ---------------------------------------------------------------------------------------

    def schema_version(self) -> int:
        """The database's schema version (0: never migrated). Two round trips."""
        return self._run(version_op())

    def migrate(self) -> list[int]:
        """Apply the pending migrations; the versions applied (none when up to date)."""
        return [m.version for m in self._run(migrate_op(), tx=True)]

    def table_counts(self) -> dict[str, int]:
        """Rows per table of the current schema."""
        return self._run(counts_op(self.schema_version()))

    # -- cache ----------------------------------------------------------------------------------------

    def cache_get(self, key: str) -> Any | None:
        """The JSON value stored under ``key``, or None when absent or expired."""
        return self._run(_cache_get(key))

    async def acache_get(self, key: str) -> Any | None:
        return await self._arun(lambda: _cache_get(key), read=True)

    def cache_put(self, key: str, value: Any, ttl: float) -> None:
        """Store ``value`` (JSON-serialisable) under ``key`` for ``ttl`` seconds."""
        self._run(_cache_put(key, value, ttl))

    async def acache_put(self, key: str, value: Any, ttl: float) -> None:
        await self._arun(lambda: _cache_put(key, value, ttl))

    # -- counters -------------------------------------------------------------------------------------

    def counter_get(self, scope: str, key: str) -> int:
        """The counter's value (0 when absent)."""
        return self._run(_counter_get(scope, key))

    async def acounter_get(self, scope: str, key: str) -> int:
        return await self._arun(lambda: _counter_get(scope, key), read=True)

    def counter_add(self, scope: str, key: str, delta: int = 1) -> int:
        """Add ``delta`` atomically; the new value."""
        return self._run(_counter_add(scope, key, delta))

    async def acounter_add(self, scope: str, key: str, delta: int = 1) -> int:
        return await self._arun(lambda: _counter_add(scope, key, delta))

    def counter_reset(self, scope: str, key: str) -> None:
        """Delete the counter (it reads 0 again)."""
        self._run(_counter_reset(scope, key))

    async def acounter_reset(self, scope: str, key: str) -> None:
        await self._arun(lambda: _counter_reset(scope, key))

    def counter_add_capped(self, scope: str, key: str, limit: int) -> int | None:
        """+1 only while the value is below ``limit``: the new value, or None when it was already reached.
        Atomic across writers (the row is locked by the upsert)."""
        return self._run(_counter_add_capped(scope, key, limit))

    async def acounter_add_capped(self, scope: str, key: str, limit: int) -> int | None:
        return await self._arun(lambda: _counter_add_capped(scope, key, limit))

    def counter_reserve(self, scope: str, key: str, limit: int, inflight: tuple[str, str]) -> tuple[int | None, int]:
        """The capped +1 and, when it added, the in-flight +1: one statement (two data-modifying CTEs)."""
        return self._run(_counter_reserve(scope, key, limit, inflight))

    async def acounter_reserve(
        self, scope: str, key: str, limit: int, inflight: tuple[str, str]
    ) -> tuple[int | None, int]:
        return await self._arun(lambda: _counter_reserve(scope, key, limit, inflight))

    def counter_settle(
        self,
        scope: str,
        key: str,
        action: str,
        *,
        inflight: tuple[str, str] | None = None,
        busy: tuple[tuple[str, str], ...] = (),
    ) -> None:
        """The settling step and the in-flight -1 in one statement (none for ``keep`` without ``inflight``)."""
        self._run(_counter_settle(scope, key, action, inflight, busy))

    async def acounter_settle(
        self,
        scope: str,
        key: str,
        action: str,
        *,
        inflight: tuple[str, str] | None = None,
        busy: tuple[tuple[str, str], ...] = (),
    ) -> None:
        await self._arun(lambda: _counter_settle(scope, key, action, inflight, busy))

    # -- flags ----------------------------------------------------------------------------------------

    def flag_get(self, name: str) -> Any | None:
        """The flag's JSON value, or None when unset."""
        return self._run(_flag_get(name))

    async def aflag_get(self, name: str) -> Any | None:
        return await self._arun(lambda: _flag_get(name), read=True)

    def flag_set(self, name: str, value: Any) -> None:
        """Set the flag to ``value`` (JSON); ``None`` deletes it."""
        self._run(_flag_set(name, value))

    async def aflag_set(self, name: str, value: Any) -> None:
        await self._arun(lambda: _flag_set(name, value))

    # -- approval requests (gateway.store.pg_approvals) -----------------------------------------------

    def approval_create(self, record: ApprovalRecord) -> ApprovalRecord:
        """Store a new pending request unless one is open for its key; the open one. One statement (two when
        the open one committed while it ran)."""
        return self._run(pg_approvals.create(record))

    def approval_get(self, approval_id: str) -> ApprovalRecord | None:
        return self._run(pg_approvals.get(approval_id))

    def approval_find(self, key: str, fingerprint: str) -> ApprovalRecord | None:
        return self._run(pg_approvals.find(key, fingerprint))

    def approval_lookup(
        self, key: str, fingerprint: str, now: float, by: str
    ) -> tuple[list[ApprovalRecord], ApprovalRecord | None]:
        """The expiry sweep and the find in one statement."""
        return self._run(pg_approvals.lookup(key, fingerprint, now, by))

    def approval_list(self, statuses: list[str] | None = None, limit: int = 100) -> list[ApprovalRecord]:
        return self._run(pg_approvals.listing(statuses, limit))

    def approval_decide(
        self, approval_id: str, status: str, by: str, reason: str | None, at: float
    ) -> ApprovalRecord | None:
        return self._run(pg_approvals.decide(approval_id, status, by, reason, at))

    def approval_consume(self, approval_id: str, at: float) -> bool:
        return self._run(pg_approvals.consume(approval_id, at))

    def approval_expire_due(self, now: float, by: str) -> list[ApprovalRecord]:
        return self._run(pg_approvals.expire_due(now, by))

    def approval_set_ref(self, approval_id: str, ref: dict[str, Any]) -> None:
        self._run(pg_approvals.set_ref(approval_id, ref))

    # -- lifecycle ------------------------------------------------------------------------------------

    def close(self) -> None:
        self._sync.close()

    async def aclose(self) -> None:
        self._sync.close()
        if self._async is not None:
            await self._async.close()


def _cache_get(key: str) -> Op[Any | None]:
    rows = yield Q(f"SELECT value::text FROM cache WHERE key = %s AND expires >= {NOW}", (key,))
    return json.loads(rows[0][0]) if rows else None


def _cache_put(key: str, value: Any, ttl: float) -> Op[None]:
    yield Q(
        f"INSERT INTO cache (key, value, expires) VALUES (%s, %s::jsonb, {NOW} + %s) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires = excluded.expires",
        (key, json.dumps(value), float(ttl)),
    )


def _counter_get(scope: str, key: str) -> Op[int]:
    rows = yield Q("SELECT value FROM counters WHERE scope = %s AND key = %s", (scope, key))
    return int(rows[0][0]) if rows else 0


def _counter_add(scope: str, key: str, delta: int) -> Op[int]:
    rows = yield Q(
        f"INSERT INTO counters (scope, key, value, updated) VALUES (%s, %s, %s, {NOW}) "
        "ON CONFLICT (scope, key) DO UPDATE SET value = counters.value + excluded.value, "
        "updated = excluded.updated RETURNING value",
        (scope, key, int(delta)),
    )
    return int(rows[0][0])


def _counter_reset(scope: str, key: str) -> Op[None]:
    yield Q("DELETE FROM counters WHERE scope = %s AND key = %s", (scope, key))


def _counter_add_capped(scope: str, key: str, limit: int) -> Op[int | None]:
    if limit <= 0:
        return None
    rows = yield Q(
        f"INSERT INTO counters (scope, key, value, updated) VALUES (%s, %s, 1, {NOW}) "
        "ON CONFLICT (scope, key) DO UPDATE SET value = counters.value + 1, updated = excluded.updated "
        "WHERE counters.value < %s RETURNING value",
        (scope, key, int(limit)),
    )
    return int(rows[0][0]) if rows else None


def _counter_reserve(scope: str, key: str, limit: int, inflight: tuple[str, str]) -> Op[tuple[int | None, int]]:
    if limit <= 0:
        return None, (yield from _counter_get(scope, key))
    # Data-modifying CTEs run exactly once each, in one statement (one snapshot, one round trip): the
    # in-flight upsert inserts from ``r``, so it happens only when the capped upsert returned a row.
    # The last column reads the snapshot from before the statement (the count when nothing was added).
    rows = yield Q(
        f"WITH r AS (INSERT INTO counters (scope, key, value, updated) VALUES (%s, %s, 1, {NOW}) "
        "ON CONFLICT (scope, key) DO UPDATE SET value = counters.value + 1, updated = excluded.updated "
        "WHERE counters.value < %s RETURNING value), "
        f"f AS (INSERT INTO counters (scope, key, value, updated) SELECT %s, %s, 1, {NOW} FROM r "
        "ON CONFLICT (scope, key) DO UPDATE SET value = counters.value + 1, updated = excluded.updated) "
        "SELECT (SELECT value FROM r), (SELECT value FROM counters WHERE scope = %s AND key = %s)",
        (scope, key, int(limit), *inflight, scope, key),
    )
    added = rows[0][0]
    if added is not None:
        return int(added), int(added)
    return None, int(rows[0][1] or 0)


_SETTLE = {
    "keep": None,
    "reset": "DELETE FROM counters WHERE scope = %s AND key = %s",
    "release": f"UPDATE counters SET value = value - 1, updated = {NOW} WHERE scope = %s AND key = %s",
}


def _counter_settle(
    scope: str, key: str, action: str, inflight: tuple[str, str] | None, busy: tuple[tuple[str, str], ...]
) -> Op[None]:
    parts: list[tuple[str, tuple[Any, ...]]] = []
    if action == "reset_if_idle":
        idle = ""
        params: tuple[Any, ...] = (scope, key)
        if busy:
            pairs = ", ".join(["(%s, %s)"] * len(busy))
            idle = f" AND NOT EXISTS (SELECT 1 FROM counters WHERE (scope, key) IN ({pairs}) AND value > 0)"
            params += tuple(v for pair in busy for v in pair)
        parts.append(("DELETE FROM counters WHERE scope = %s AND key = %s" + idle, params))
    elif action not in _SETTLE:
        raise ValueError(f"counter_settle: unknown action {action!r}")
    elif _SETTLE[action] is not None:
        parts.append((str(_SETTLE[action]), (scope, key)))
    if inflight is not None:
        parts.append((_SETTLE["release"] or "", inflight))
    if not parts:
        return
    if len(parts) == 1:
        yield Q(*parts[0])
        return
    # one statement: each step a data-modifying CTE (they touch different rows)
    sql = "WITH " + ", ".join(f"s{i} AS ({text})" for i, (text, _) in enumerate(parts)) + " SELECT 1"
    yield Q(sql, tuple(v for _, p in parts for v in p))


def _flag_get(name: str) -> Op[Any | None]:
    rows = yield Q("SELECT value::text FROM flags WHERE name = %s", (name,))
    return json.loads(rows[0][0]) if rows else None


def _flag_set(name: str, value: Any) -> Op[None]:
    if value is None:
        yield Q("DELETE FROM flags WHERE name = %s", (name,))
        return
    yield Q(
        f"INSERT INTO flags (name, value, updated) VALUES (%s, %s::jsonb, {NOW}) "
        "ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated = excluded.updated",
        (name, json.dumps(value)),
    )
