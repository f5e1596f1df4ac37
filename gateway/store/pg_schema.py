"""The PostgreSQL store's schema: an ordered list of versioned migrations, and the runner.

Each ``Migration`` has a ``version`` (1, 2, ... in order, the same numbers as the SQLite store's list,
so ``hookgate store status`` means the same on both), a ``name``, the SQL that moves the schema from
``version - 1`` to ``version``, and the tables it creates. Applied versions are rows of
``hookgate_schema`` (version, name, applied_at). ``migrate_op`` runs in one transaction under a
transaction-scoped advisory lock, so several replicas starting ``hookgate store migrate`` at once apply
each migration exactly once; a failed migration rolls back whole. Migrations only add (tables,
columns, indexes): an older hookgate keeps working on a newer schema, a newer hookgate refuses an older
one (``StoreSchemaError`` naming ``hookgate store migrate``).

Timestamps are the server's clock (``extract(epoch from clock_timestamp())``, seconds), so replicas on
machines whose clocks differ still agree on expiry.
"""

from __future__ import annotations

from dataclasses import dataclass

from gateway.store.pg_audit import AUDIT_MIGRATION_SQL, AUDIT_TABLES
from gateway.store.pg_conn import Op, Q

VERSION_TABLE = "hookgate_schema"
LOCK_KEY = 0x686F6F6B67617465 & 0x7FFFFFFFFFFFFFFF  # "hookgate", the advisory lock held while migrating
NOW = "extract(epoch from clock_timestamp())"


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step: ``sql`` (one or more statements) takes the schema to ``version``."""

    version: int
    name: str
    sql: str
    tables: tuple[str, ...] = ()


MIGRATIONS: list[Migration] = [
    Migration(
        1,
        "caches and counters",
        """
        CREATE TABLE cache (key text PRIMARY KEY, value jsonb NOT NULL, expires double precision NOT NULL);
        CREATE INDEX cache_expires ON cache (expires);
        CREATE TABLE counters (scope text NOT NULL, key text NOT NULL, value bigint NOT NULL,
                               updated double precision NOT NULL, PRIMARY KEY (scope, key));
        CREATE INDEX counters_updated ON counters (updated);
    """,
        ("cache", "counters"),
    ),
    Migration(
        2,
        "named JSON flags",
        """
        CREATE TABLE flags (name text PRIMARY KEY, value jsonb NOT NULL, updated double precision NOT NULL);
    """,
        ("flags",),
    ),
    Migration(
        3,
        "approval requests",
        """
        CREATE TABLE approvals (
            id text PRIMARY KEY, key text NOT NULL, fingerprint text NOT NULL, status text NOT NULL,
            created_at double precision NOT NULL, expires_at double precision NOT NULL, session_id text,
            tool_use_id text, tool_name text, channel text, decided_at double precision, decided_by text,
            reason text, consumed_at double precision, payload text NOT NULL, ref text NOT NULL DEFAULT '{}');
        CREATE UNIQUE INDEX approvals_open_key ON approvals (key)
            WHERE consumed_at IS NULL AND status IN ('pending', 'approved', 'rejected');
        CREATE INDEX approvals_fingerprint ON approvals (fingerprint, status);
        CREATE INDEX approvals_pending ON approvals (status, expires_at);
    """,
        ("approvals",),
    ),
    Migration(4, "audit records and their writer chains", AUDIT_MIGRATION_SQL, AUDIT_TABLES),
]

SCHEMA_VERSION = MIGRATIONS[-1].version
"""The version this hookgate needs (and ``migrate_op`` brings the database to)."""


def tables(version: int) -> list[str]:
    """The tables that exist at schema ``version``, in creation order."""
    return [t for m in MIGRATIONS if m.version <= version for t in m.tables]


def version_op() -> Op[int]:
    """The schema version in the database (0 when hookgate never migrated it)."""
    rows = yield Q(f"SELECT to_regclass('{VERSION_TABLE}') IS NOT NULL")
    if not rows[0][0]:
        return 0
    rows = yield Q(f"SELECT coalesce(max(version), 0) FROM {VERSION_TABLE}")
    return int(rows[0][0])


def migrate_op() -> Op[list[Migration]]:
    """Apply every migration newer than the database's version (run with ``tx=True``); the applied ones."""
    yield Q("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
    current = yield from version_op()
    if current >= SCHEMA_VERSION:  # nothing to create: a role without CREATE rights (a replica's) may run it
        return []
    yield Q(
        f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE} (version integer PRIMARY KEY, name text NOT NULL, "
        "applied_at timestamptz NOT NULL DEFAULT now())"
    )
    applied: list[Migration] = []
    for migration in MIGRATIONS:
        if migration.version <= current:
            continue
        yield Q(migration.sql)
        yield Q(f"INSERT INTO {VERSION_TABLE} (version, name) VALUES (%s, %s)", (migration.version, migration.name))
        applied.append(migration)
    return applied


def counts_op(version: int) -> Op[dict[str, int]]:
    """Rows per table at schema ``version`` (one statement)."""
    names = tables(version)
    if not names:
        return {}
    rows = yield Q("SELECT " + ", ".join(f"(SELECT count(*) FROM {t})" for t in names))
    return {t: int(n) for t, n in zip(names, rows[0], strict=True)}
