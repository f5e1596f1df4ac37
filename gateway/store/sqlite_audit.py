"""The audit methods of the SQLite store (mixed into ``SQLiteStore``; contracts in ``Store``).

Tables (created by the store's migration ``AUDIT_MIGRATION``)::

    audit_records  n INTEGER PRIMARY KEY (insertion order), id TEXT UNIQUE, chain, seq, prev_hash, hash,
                   ts REAL, size INTEGER, body TEXT, event, session_id, tool_name, decision, handler_ids
                   UNIQUE (chain, seq); indexes on ts, session_id, tool_name, decision
    audit_heads    chain TEXT PRIMARY KEY, seq, hash, base_seq, base_hash

``audit_append`` runs in one ``BEGIN IMMEDIATE`` transaction (SQLite's write lock), so concurrent
writers on one machine serialize there and a chain never forks (see ``gateway.audit.chain``).
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from gateway.errors import StoreBusy, StoreError
from gateway.store.audit_types import (
    COLUMNS,
    GENESIS,
    AuditEntry,
    AuditFilter,
    AuditRow,
    ChainHead,
    Voucher,
    is_int,
    link_hash,
    old_prefix_sql,
    order_sql,
    size_cutoff_sql,
    where_clause,
)

AUDIT_MIGRATION = """
CREATE TABLE IF NOT EXISTS audit_records (
    n INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, chain TEXT NOT NULL, seq INTEGER NOT NULL,
    prev_hash TEXT NOT NULL, hash TEXT NOT NULL, ts REAL NOT NULL, size INTEGER NOT NULL, body TEXT NOT NULL,
    event TEXT NOT NULL, session_id TEXT, tool_name TEXT, decision TEXT NOT NULL, handler_ids TEXT NOT NULL,
    UNIQUE (chain, seq));
CREATE INDEX IF NOT EXISTS audit_records_ts ON audit_records (ts);
CREATE INDEX IF NOT EXISTS audit_records_session ON audit_records (session_id);
CREATE INDEX IF NOT EXISTS audit_records_tool ON audit_records (tool_name);
CREATE INDEX IF NOT EXISTS audit_records_decision ON audit_records (decision);
CREATE TABLE IF NOT EXISTS audit_heads (
    chain TEXT PRIMARY KEY, seq INTEGER NOT NULL, hash TEXT NOT NULL,
    base_seq INTEGER NOT NULL, base_hash TEXT NOT NULL);
"""

_COLUMNS = "n, id, chain, seq, prev_hash, hash, ts, body, event, session_id, tool_name, decision, handler_ids"


F = TypeVar("F", bound=Callable[..., Any])


def is_busy(exc: BaseException) -> bool:
    """True when ``exc`` is SQLite's "database is locked" (another connection holds the lock)."""
    return getattr(exc, "sqlite_errorcode", None) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def _mapped(method: F) -> F:
    """``sqlite3.Error`` -> ``StoreError`` (``StoreBusy`` for a lock held past the wait; one line, naming the file)."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            error = StoreBusy if is_busy(exc) else StoreError
            raise error(f"state store {getattr(self, 'path', '?')}: {exc}") from None

    return wrapper  # type: ignore[return-value]


_INSERT = f"INSERT INTO audit_records ({COLUMNS}) VALUES "
_WIDTH = COLUMNS.count(",") + 1
_ROW = "(" + ",".join("?" * _WIDTH) + ")"
_OLD_PREFIX = old_prefix_sql("?")
"""``old_prefix_sql``; the bytes counted are the bodies' own."""
_SIZE_CUTOFF = size_cutoff_sql("length(CAST(body AS BLOB))", "?")


ROWS_PER_INSERT = 500
"""Rows per multi-row ``INSERT`` (within SQLite's bound-parameter limit, read from the connection)."""


def _insert(db: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
    """Insert ``rows`` with one multi-row ``INSERT`` per ``ROWS_PER_INSERT``: one statement step, so
    the writer thread releases and takes the GIL once per chunk (``executemany`` does it per row, and
    each time it takes the GIL back it may wait for the event loop's switch interval)."""
    per = max(1, min(ROWS_PER_INSERT, db.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // _WIDTH))
    for start in range(0, len(rows), per):
        chunk = rows[start : start + per]
        db.execute(_INSERT + ",".join([_ROW] * len(chunk)), [value for row in chunk for value in row])


def _row(values: tuple[Any, ...]) -> AuditRow:
    return AuditRow(*values)


class SQLiteAuditMixin:
    """``Store`` audit methods over ``self._db`` (an autocommit ``sqlite3.Connection``)."""

    _db: sqlite3.Connection

    @_mapped
    def audit_append(self, chain: str, entries: list[AuditEntry]) -> int:
        """Append ``entries`` (in order) to ``chain`` in one transaction; entries whose ``id`` is already
        stored are skipped. Returns how many were stored."""
        if not entries:
            return 0
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            head = db.execute("SELECT seq, hash FROM audit_heads WHERE chain = ?", (chain,)).fetchone()
            if head is None:
                seq, prev = 0, GENESIS
                db.execute(
                    "INSERT INTO audit_heads (chain, seq, hash, base_seq, base_hash) VALUES (?, 0, ?, 0, ?)",
                    (chain, GENESIS, GENESIS),
                )
            else:
                seq, prev = self._head_link(chain, head[0], head[1])
            ids = [e.id for e in entries]
            known: set[str] = set()
            for start in range(0, len(ids), ROWS_PER_INSERT):  # a long spool: within the parameter limit
                chunk = ids[start : start + ROWS_PER_INSERT]
                sql = f"SELECT id FROM audit_records WHERE id IN ({','.join('?' * len(chunk))})"
                known.update(r[0] for r in db.execute(sql, chunk))
            rows = []
            for entry in entries:
                if entry.id in known:
                    continue
                known.add(entry.id)
                seq += 1
                digest = link_hash(prev, chain, seq, entry.body)
                rows.append(entry.row(chain, seq, prev, digest))
                prev = digest
            _insert(db, rows)
            stored = len(rows)
            db.execute("UPDATE audit_heads SET seq = ?, hash = ? WHERE chain = ?", (seq, prev, chain))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return stored

    @_mapped
    def audit_records(self, flt: AuditFilter) -> list[AuditRow]:
        """Records that fit ``flt``, newest first (by insertion ``n``), at most ``flt.limit``."""
        where, params = where_clause(flt)
        limit = f" LIMIT {int(flt.limit)}" if flt.limit is not None else ""
        rows = self._db.execute(f"SELECT {_COLUMNS} FROM audit_records{where}{order_sql(flt)}{limit}", params)
        return [_row(r) for r in rows]

    def audit_handler_lists(self, flt: AuditFilter) -> Iterator[list[dict[str, Any]]]:
        """``Store.audit_handler_lists``, streamed: SQLite takes each record's ``handlers`` out of its body
        (a body that is not JSON gives none), so neither the records nor the whole trail are held."""
        import json

        where, params = where_clause(flt)
        sql = (
            "SELECT CASE WHEN json_valid(body) THEN json_extract(body, '$.handlers') END "
            f"FROM audit_records{where} ORDER BY ts, n"
        )
        try:
            cursor = self._db.execute(sql, params)
            while batch := cursor.fetchmany(1000):
                for (text,) in batch:
                    try:
                        handlers = json.loads(text) if isinstance(text, str) else None
                    except ValueError:
                        handlers = None
                    yield [h for h in handlers if isinstance(h, dict)] if isinstance(handlers, list) else []
        except sqlite3.Error as exc:
            error = StoreBusy if is_busy(exc) else StoreError
            raise error(f"state store {getattr(self, 'path', '?')}: {exc}") from None

    @_mapped
    def audit_record(self, record_id: str) -> AuditRow | None:
        """One record by its id, or None."""
        row = self._db.execute(f"SELECT {_COLUMNS} FROM audit_records WHERE id = ?", (record_id,)).fetchone()
        return _row(row) if row else None

    @_mapped
    def audit_chain(self, chain: str, after_seq: int = 0, limit: int = 1000) -> list[AuditRow]:
        """Up to ``limit`` records of ``chain`` with ``seq > after_seq``, in ``seq`` order."""
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM audit_records WHERE chain = ? AND seq > ? ORDER BY seq LIMIT ?",
            (chain, after_seq, limit),
        )
        return [_row(r) for r in rows]

    @_mapped
    def audit_heads(self) -> list[ChainHead]:
        """Every chain's head, by chain name; a chain that has records but no head row comes back with
        ``seq`` -1 (``verify`` reports it)."""
        rows = self._db.execute(
            "SELECT chain, seq, hash, base_seq, base_hash FROM audit_heads UNION ALL "
            "SELECT DISTINCT chain, -1, '', 0, ? FROM audit_records WHERE chain NOT IN (SELECT chain FROM audit_heads) "
            "ORDER BY 1",
            (GENESIS,),
        )
        return [ChainHead(*r) for r in rows]

    @contextlib.contextmanager
    def audit_snapshot(self) -> Iterator[None]:
        """One read transaction (WAL: the snapshot is taken at its first read and kept to the end)."""
        self._snapshot_sql("BEGIN")
        try:
            yield
        except BaseException:
            with contextlib.suppress(StoreError):  # the error inside is the one to see
                self._snapshot_sql("ROLLBACK")
            raise
        self._snapshot_sql("COMMIT")

    @_mapped
    def _snapshot_sql(self, sql: str) -> None:
        self._db.execute(sql)

    @_mapped
    def audit_prune(
        self, *, before: float | None = None, max_bytes: int | None = None, voucher: Voucher | None = None
    ) -> int:
        """Retention: delete records older than ``before`` (epoch seconds) and then the oldest ones
        until the bodies total at most ``max_bytes``. Deletes a prefix of each chain, records the last
        deleted link in the chain's head (``base_seq``/``base_hash``) and appends ``voucher``'s record
        to the chain, all in one transaction. Returns how many went."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            cutoff = before
            if max_bytes is not None:
                row = db.execute(_SIZE_CUTOFF, (max_bytes, max_bytes)).fetchone()
                if row is not None and not isinstance(row[0], (int, float)):
                    raise StoreError(
                        f"state store {self._where()}: a record's ts column is damaged ({row[0]!r}): nothing is "
                        "pruned; run hookgate audit verify"
                    )
                if row is not None:
                    # everything at or before this record's time goes (nudged: ts < cutoff)
                    cutoff = max(cutoff or 0.0, float(row[0]) + 1e-6)
            removed = 0
            if cutoff is not None:
                chains = db.execute(_OLD_PREFIX, (cutoff, cutoff)).fetchall()
                for chain, first, last in chains:
                    if not (is_int(first) and is_int(last)):
                        raise StoreError(
                            f"state store {self._where()}: chain {chain!r}: a record's seq column is damaged "
                            f"({first!r}..{last!r}): nothing is pruned; run hookgate audit verify"
                        )
                    if last < first:  # its oldest record is not old (a backdated one further on ends no prefix)
                        continue
                    link = db.execute(
                        "SELECT hash FROM audit_records WHERE chain = ? AND seq = ?", (chain, last)
                    ).fetchone()
                    head = db.execute(
                        "SELECT seq, hash, base_seq FROM audit_heads WHERE chain = ?", (chain,)
                    ).fetchone()
                    removed += db.execute(
                        "DELETE FROM audit_records WHERE chain = ? AND seq <= ?", (chain, last)
                    ).rowcount
                    db.execute(
                        "UPDATE audit_heads SET base_seq = ?, base_hash = ? WHERE chain = ?", (last, link[0], chain)
                    )
                    if voucher is not None and head is not None:
                        seq, prev = self._head_link(chain, head[0], head[1], head[2])
                        entry = voucher(chain, head[2] + 1, last, str(link[0]), cutoff)
                        self._append_voucher(chain, seq, prev, entry)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return removed

    def _where(self) -> str:
        return str(getattr(self, "path", "?"))

    def _head_link(self, chain: str, seq: Any, digest: Any, base_seq: Any = 0) -> tuple[int, str]:
        """A head row's ``(seq, hash)``; StoreError when it (``base_seq`` too) was edited into other types
        (SQLite keeps text in an INTEGER column): nothing is appended to or pruned from such a chain."""
        damage = ChainHead(chain, seq, digest, base_seq, GENESIS).damage()
        if damage is None:
            return seq, digest
        raise StoreError(
            f"state store {self._where()}: chain {chain!r}: {damage}: nothing is written to it; "
            "run hookgate audit verify"
        )

    def _append_voucher(self, chain: str, seq: int, prev: str, entry: AuditEntry) -> None:
        """Append ``entry`` after the head (``seq``, ``prev``) inside the caller's transaction."""
        seq += 1
        digest = link_hash(prev, chain, seq, entry.body)
        self._db.execute(_INSERT + _ROW, entry.row(chain, seq, prev, digest))
        self._db.execute("UPDATE audit_heads SET seq = ?, hash = ? WHERE chain = ?", (seq, digest, chain))

    @_mapped
    def audit_size(self) -> tuple[int, int]:
        """``(records, bytes of their bodies)``."""
        row = self._db.execute("SELECT COUNT(*), COALESCE(SUM(size), 0) FROM audit_records").fetchone()
        return int(row[0]), int(row[1])
