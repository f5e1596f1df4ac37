"""``SQLiteStore``: the embedded ``Store`` backend, one SQLite file ``<state_dir>/state.sqlite3``.

Safe for concurrent hook processes: WAL journal, a 5 s busy timeout, and single-statement upserts (each
call is its own short transaction). A brand-new file is still in rollback-journal mode, where SQLite
answers a connection that switches it to WAL while another one writes with "database is locked" at once,
without the busy timeout (its deadlock rule): ``enter_wal`` retries that switch. Values are JSON text;
times are ``time.time()`` seconds.

Schema: ``MIGRATIONS`` is the ordered list of schema steps; ``schema_version`` holds how many have run.
Opening a store runs the missing ones (each in one transaction, so concurrent openers do not apply a
step twice). A feature that needs tables appends a step; never edit a step that has shipped.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import urllib.parse
from typing import TYPE_CHECKING, Any

from gateway.errors import StoreBusy, StoreError, StoreNotFound
from gateway.store.base import Store
from gateway.store.sqlite_audit import AUDIT_MIGRATION, SQLiteAuditMixin, is_busy

if TYPE_CHECKING:
    from gateway.approvals.record import ApprovalRecord

MIGRATIONS: list[str] = [
    # 1: caches and counters
    """
    CREATE TABLE IF NOT EXISTS cache (key TEXT PRIMARY KEY, value TEXT NOT NULL, expires REAL NOT NULL);
    CREATE TABLE IF NOT EXISTS counters (scope TEXT NOT NULL, key TEXT NOT NULL, value INTEGER NOT NULL,
                                         updated REAL NOT NULL, PRIMARY KEY (scope, key));
    """,
    # 2: named JSON flags (the read-only mode, ...)
    """
    CREATE TABLE IF NOT EXISTS flags (name TEXT PRIMARY KEY, value TEXT NOT NULL, updated REAL NOT NULL);
    """,
    # 3: approval requests (gateway.approvals.record.ApprovalRecord; one open request per key)
    """
    CREATE TABLE IF NOT EXISTS approvals (
        id TEXT PRIMARY KEY, key TEXT NOT NULL, fingerprint TEXT NOT NULL, status TEXT NOT NULL,
        created_at REAL NOT NULL, expires_at REAL NOT NULL, session_id TEXT, tool_use_id TEXT, tool_name TEXT,
        channel TEXT, decided_at REAL, decided_by TEXT, reason TEXT, consumed_at REAL,
        payload TEXT NOT NULL, ref TEXT NOT NULL DEFAULT '{}');
    CREATE UNIQUE INDEX IF NOT EXISTS approvals_open_key ON approvals (key)
        WHERE consumed_at IS NULL AND status IN ('pending', 'approved', 'rejected');
    CREATE INDEX IF NOT EXISTS approvals_fingerprint ON approvals (fingerprint, status);
    CREATE INDEX IF NOT EXISTS approvals_pending ON approvals (status, expires_at)
    """,
    # 4: audit records and their writer chains (gateway.store.sqlite_audit)
    AUDIT_MIGRATION,
]


_APPROVAL_COLUMNS = (
    "id, key, fingerprint, status, created_at, expires_at, session_id, tool_use_id, tool_name, "
    "channel, decided_at, decided_by, reason, consumed_at, payload, ref"
)
"""``gateway.approvals.record.COLUMNS``, in table order (spelled out: the hot path does not import approvals)."""
_APPROVAL_SELECT = f"SELECT {_APPROVAL_COLUMNS} FROM approvals"
_APPROVAL_RETURNING = f"RETURNING {_APPROVAL_COLUMNS}"
_APPROVAL_OPEN = "consumed_at IS NULL AND status IN ('pending', 'approved', 'rejected')"


BUSY_TIMEOUT = 5.0  # seconds a connection waits for another process's write lock before "database is locked"


def enter_wal(db: sqlite3.Connection) -> None:
    """Switch ``db`` to the WAL journal (a no-op once the file is in WAL). On a new file another opener
    may hold the write lock; SQLite then fails the switch at once (``SQLITE_BUSY``, no busy handler),
    so it is retried with tenacity for up to ``BUSY_TIMEOUT`` seconds. Raises sqlite3.Error."""
    try:
        db.execute("PRAGMA journal_mode=WAL")
        return
    except sqlite3.OperationalError as exc:
        if exc.sqlite_errorcode != sqlite3.SQLITE_BUSY:
            raise
    from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_random_exponential

    def busy(exc: BaseException) -> bool:
        return isinstance(exc, sqlite3.OperationalError) and exc.sqlite_errorcode == sqlite3.SQLITE_BUSY

    for attempt in Retrying(
        retry=retry_if_exception(busy),
        stop=stop_after_delay(BUSY_TIMEOUT),
        wait=wait_random_exponential(multiplier=0.005, max=0.1),
        reraise=True,
    ):
        with attempt:
            db.execute("PRAGMA journal_mode=WAL")


def migrate(db: sqlite3.Connection, migrations: list[str] = MIGRATIONS) -> int:
    """Run the steps of ``migrations`` that ``db`` has not run yet; returns the schema version reached."""
    db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    db.execute("BEGIN IMMEDIATE")  # one writer at a time: a concurrent opener waits, then sees the new version
    try:
        row = db.execute("SELECT version FROM schema_version").fetchone()
        version = int(row[0]) if row else 0
        for step in migrations[version:]:
            for statement in (s.strip() for s in step.split(";")):
                if statement:
                    db.execute(statement)
        if row is None:
            db.execute("INSERT INTO schema_version (version) VALUES (?)", (len(migrations),))
        elif version < len(migrations):
            db.execute("UPDATE schema_version SET version = ?", (len(migrations),))
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return max(version, len(migrations))


def _version(db: sqlite3.Connection) -> int:
    """The schema version of ``db`` before migrating (0 for a new file)."""
    if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'schema_version'").fetchone() is None:
        return 0
    row = db.execute("SELECT version FROM schema_version").fetchone()
    return int(row[0]) if row else 0


def _make_private(db: sqlite3.Connection, path: str) -> None:
    """Give the database file mode 0600 (the store holds approval requests with tool inputs, cached
    verdicts and audit records, for this user only); SQLite then creates its ``-wal`` and ``-shm``
    files with the same mode. Done with ``chmod`` on the file SQLite opened, never by opening the file
    ourselves: closing any other descriptor of a database file drops the process's SQLite locks on it."""
    import stat

    db.execute("PRAGMA schema_version")  # the file exists from here on
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if mode & 0o077:
        os.chmod(path, mode & 0o600)


class SQLiteStore(SQLiteAuditMixin, Store):
    """The ``Store`` in ``<state_dir>/state.sqlite3`` (created with its folder on first use: folder 0700,
    files 0600). ``readonly``: open an existing file as it is, without creating, migrating or writing
    anything (``hookgate store status``); StoreNotFound when there is none.
    Raises StoreError when the file cannot be opened or its schema is newer than this hookgate's."""

    def __init__(self, state_dir: str, *, readonly: bool = False, busy_timeout: float = BUSY_TIMEOUT) -> None:
        self.path = os.path.join(state_dir, "state.sqlite3")
        try:
            if readonly:
                if not os.path.isfile(self.path):
                    raise StoreNotFound(f"state store {self.path} does not exist yet", self.path)
                uri = "file:" + urllib.parse.quote(os.path.abspath(self.path)) + "?mode=ro"
                self._db = sqlite3.connect(
                    uri, uri=True, timeout=busy_timeout, isolation_level=None, check_same_thread=False
                )
                self.opened_at = self.version = _version(self._db)
            else:
                os.makedirs(state_dir, mode=0o700, exist_ok=True)
                self._db = sqlite3.connect(
                    self.path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
                )
                _make_private(self._db, self.path)
                enter_wal(self._db)
                self.opened_at = _version(self._db)
                self.version = migrate(self._db)
        except (OSError, sqlite3.Error) as exc:
            if is_busy(exc):
                raise StoreBusy(f"state store {self.path}: {exc}") from None
            why = ""
            if os.path.isdir(state_dir) and not os.access(state_dir, os.W_OK):  # a read-only mount, another's dir
                why = (
                    f" (its folder {state_dir} is not writable: SQLite keeps the store's -wal and -shm files "
                    "there, also to read it)"
                )
            raise StoreError(f"state store {self.path}: {exc}{why}") from None
        if self.version > len(MIGRATIONS):
            raise StoreError(
                f"state store {self.path} has schema version {self.version}; this hookgate knows "
                f"{len(MIGRATIONS)} (a newer hookgate wrote it)"
            )

    kind = "sqlite"

    @property
    def required_version(self) -> int:  # type: ignore[override]  # a property: features append migrations
        return len(MIGRATIONS)

    @property
    def display(self) -> str:
        return self.path

    def schema_version(self) -> int:
        try:
            return _version(self._db)
        except sqlite3.Error as exc:
            raise StoreError(f"state store {self.path}: {exc}") from None

    def migrate(self) -> list[int]:
        """Opening already migrated (SQLite is one machine's file); the versions that opening applied."""
        return list(range(self.opened_at + 1, self.version + 1))

    def table_counts(self) -> dict[str, int]:
        names = [
            r[0]
            for r in self._run(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                "'sqlite_%' AND name != 'schema_version' ORDER BY rowid",
                (),
            ).fetchall()
        ]
        return {name: int(self._run(f'SELECT count(*) FROM "{name}"', ()).fetchone()[0]) for name in names}

    def _run(self, sql: str, params: tuple[Any, ...]) -> sqlite3.Cursor:
        try:
            return self._db.execute(sql, params)
        except sqlite3.Error as exc:
            raise StoreError(f"state store {self.path}: {exc}") from None

    def cache_get(self, key: str) -> Any | None:
        """The cached value, or None (also for an entry edited by hand into something that is not JSON, or
        whose ``expires`` is no number: a miss, replaced by the next ``cache_put``)."""
        row = self._run("SELECT value, expires FROM cache WHERE key = ?", (key,)).fetchone()
        if row is None or not isinstance(row[1], (int, float)) or row[1] < time.time():
            return None
        try:
            return json.loads(row[0])
        except (TypeError, ValueError):
            return None

    def cache_put(self, key: str, value: Any, ttl: float) -> None:
        self._run(
            "INSERT INTO cache (key, value, expires) VALUES (?, ?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value, expires = excluded.expires",
            (key, json.dumps(value), time.time() + ttl),
        )

    def counter_get(self, scope: str, key: str) -> int:
        row = self._run("SELECT value FROM counters WHERE scope = ? AND key = ?", (scope, key)).fetchone()
        if row is not None and (not isinstance(row[0], int) or isinstance(row[0], bool)):
            raise StoreError(f"state store {self.path}: counter {scope}/{key} holds {row[0]!r}, not an integer")
        return int(row[0]) if row else 0

    def counter_add(self, scope: str, key: str, delta: int = 1) -> int:
        row = self._run(
            "INSERT INTO counters (scope, key, value, updated) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(scope, key) DO UPDATE SET value = value + excluded.value, updated = excluded.updated "
            "RETURNING value",
            (scope, key, delta, time.time()),
        ).fetchone()
        return int(row[0])

    def counter_add_capped(self, scope: str, key: str, limit: int) -> int | None:
        # One statement: the insert (a new counter starts at 1) happens only when 1 <= limit; the update
        # only while value < limit. When neither happens RETURNING yields no row: the limit was reached.
        row = self._run(
            "INSERT INTO counters (scope, key, value, updated) SELECT ?, ?, 1, ? WHERE ? >= 1 "
            "ON CONFLICT(scope, key) DO UPDATE SET value = value + 1, updated = excluded.updated "
            "WHERE counters.value < ? RETURNING value",
            (scope, key, time.time(), limit, limit),
        ).fetchone()
        return int(row[0]) if row else None

    def counter_reset(self, scope: str, key: str) -> None:
        self._run("DELETE FROM counters WHERE scope = ? AND key = ?", (scope, key))

    def flag_get(self, name: str) -> Any | None:
        """The flag's JSON value, or None when unset. StoreError when the row was edited by hand into
        something that is not JSON (setting the flag again replaces it)."""
        row = self._run("SELECT value FROM flags WHERE name = ?", (name,)).fetchone()
        if row is None:
            return None
        try:
            return json.loads(row[0])
        except (TypeError, ValueError):
            raise StoreError(
                f"state store {self.path}: flag {name!r} holds {row[0]!r}, not JSON (set it again to replace it)"
            ) from None

    def flag_set(self, name: str, value: Any | None) -> None:
        if value is None:
            self._run("DELETE FROM flags WHERE name = ?", (name,))
        else:
            self._run(
                "INSERT INTO flags (name, value, updated) VALUES (?, ?, ?) ON CONFLICT(name) DO UPDATE "
                "SET value = excluded.value, updated = excluded.updated",
                (name, json.dumps(value), time.time()),
            )

    # ---- approvals: each transition is one UPDATE ... WHERE status = 'pending' RETURNING (exactly one
    # of two racing answers gets a row back); the partial unique index keeps one open request per key

    @staticmethod
    def _record(row: Any) -> ApprovalRecord | None:
        from gateway.approvals.record import COLUMNS, ApprovalRecord

        return None if row is None else ApprovalRecord.from_row(dict(zip(COLUMNS, row, strict=True)))

    def _records(self, rows: list[Any]) -> list[ApprovalRecord]:
        return [r for r in (self._record(row) for row in rows) if r is not None]

    def approval_create(self, record: ApprovalRecord) -> ApprovalRecord:
        from gateway.approvals.record import COLUMNS

        row = record.to_row()
        self._run(
            f"INSERT OR IGNORE INTO approvals ({_APPROVAL_COLUMNS}) VALUES ({', '.join('?' * len(COLUMNS))})",
            tuple(row[c] for c in COLUMNS),
        )
        found = self._record(
            self._run(f"{_APPROVAL_SELECT} WHERE key = ? AND {_APPROVAL_OPEN}", (record.key,)).fetchone()
        )
        return found if found is not None else record

    def approval_get(self, approval_id: str) -> ApprovalRecord | None:
        return self._record(self._run(f"{_APPROVAL_SELECT} WHERE id = ?", (approval_id,)).fetchone())

    def approval_find(self, key: str, fingerprint: str) -> ApprovalRecord | None:
        row = self._run(f"{_APPROVAL_SELECT} WHERE key = ? AND {_APPROVAL_OPEN}", (key,)).fetchone()
        if row is None:
            row = self._run(
                f"{_APPROVAL_SELECT} WHERE fingerprint = ? AND {_APPROVAL_OPEN} ORDER BY created_at DESC LIMIT 1",
                (fingerprint,),
            ).fetchone()
        return self._record(row)

    def approval_list(self, statuses: list[str] | None = None, limit: int = 100) -> list[ApprovalRecord]:
        if statuses:
            marks = ", ".join("?" * len(statuses))
            return self._records(
                self._run(
                    f"{_APPROVAL_SELECT} WHERE status IN ({marks}) ORDER BY created_at DESC LIMIT ?", (*statuses, limit)
                ).fetchall()
            )
        return self._records(self._run(f"{_APPROVAL_SELECT} ORDER BY created_at DESC LIMIT ?", (limit,)).fetchall())

    def approval_decide(
        self, approval_id: str, status: str, by: str, reason: str | None, at: float
    ) -> ApprovalRecord | None:
        return self._record(
            self._run(
                "UPDATE approvals SET status = ?, decided_by = ?, reason = ?, decided_at = ? "
                f"WHERE id = ? AND status = 'pending' {_APPROVAL_RETURNING}",
                (status, by, reason, at, approval_id),
            ).fetchone()
        )

    def approval_consume(self, approval_id: str, at: float) -> bool:
        cursor = self._run(
            "UPDATE approvals SET consumed_at = ? WHERE id = ? AND consumed_at IS NULL "
            "AND status IN ('approved', 'rejected')",
            (at, approval_id),
        )
        return cursor.rowcount == 1

    def approval_expire_due(self, now: float, by: str) -> list[ApprovalRecord]:
        from gateway.store.approval_expiry import expiry_params, expiry_sql

        return self._records(self._run(f"{expiry_sql('?')} {_APPROVAL_RETURNING}", expiry_params(now, by)).fetchall())

    def approval_set_ref(self, approval_id: str, ref: dict[str, Any]) -> None:
        self._run("UPDATE approvals SET ref = ? WHERE id = ?", (json.dumps(ref), approval_id))

    def close(self) -> None:
        self._db.close()
