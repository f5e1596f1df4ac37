"""The audit methods of the PostgreSQL store (mixed into ``PostgresStore``; contracts in ``Store``).

Tables (``pg_schema`` migration 3, the same version as the SQLite store's audit step)::

    audit_records  n bigserial PRIMARY KEY, id text UNIQUE, chain, seq bigint, prev_hash, hash,
                   ts double precision, size integer, body text, event, session_id, tool_name, decision,
                   handler_ids; UNIQUE (chain, seq); indexes on ts, session_id, tool_name, decision
    audit_heads    chain text PRIMARY KEY, seq bigint, hash, base_seq bigint, base_hash

``body`` is ``text``, not ``jsonb``: the chain hashes the exact canonical text, which ``jsonb`` would
re-format. ``audit_append`` is one statement per batch (one round trip; two only when two writers start
a new chain at the same moment): it locks the chain's head row (``SELECT ... FOR UPDATE``), so writers
of one chain serialize there and writers of other chains (other machines) never wait for each other,
and the database computes each ``seq`` and SHA-256 link inside that statement (``_APPEND``), so a chain
can never fork. The database must be UTF-8 (as ``initdb`` makes it by default) for its hashes to be
the ones ``hookgate audit verify`` recomputes. ``n`` is a sequence: with several machines writing at
once a row with a smaller ``n`` may commit after one with a larger ``n``, which is why ``tail --follow``
follows each chain by ``seq`` instead (``gateway.audit.follow``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gateway.store.audit_types import (
    COLUMNS,
    GENESIS,
    AuditEntry,
    AuditFilter,
    AuditRow,
    ChainHead,
    Voucher,
    link_hash,
    old_prefix_sql,
    order_sql,
    size_cutoff_sql,
    where_clause,
)
from gateway.store.pg_conn import Op, Q

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from gateway.store.pg_conn import SyncDB, T

AUDIT_MIGRATION_SQL = """
    CREATE TABLE audit_records (
        n bigserial PRIMARY KEY, id text NOT NULL UNIQUE, chain text NOT NULL, seq bigint NOT NULL,
        prev_hash text NOT NULL, hash text NOT NULL, ts double precision NOT NULL, size integer NOT NULL,
        body text NOT NULL, event text NOT NULL, session_id text, tool_name text, decision text NOT NULL,
        handler_ids text NOT NULL, UNIQUE (chain, seq));
    CREATE INDEX audit_records_ts ON audit_records (ts);
    CREATE INDEX audit_records_session ON audit_records (session_id);
    CREATE INDEX audit_records_tool ON audit_records (tool_name);
    CREATE INDEX audit_records_decision ON audit_records (decision);
    CREATE TABLE audit_heads (chain text PRIMARY KEY, seq bigint NOT NULL, hash text NOT NULL,
                              base_seq bigint NOT NULL, base_hash text NOT NULL);
"""
AUDIT_TABLES = ("audit_records", "audit_heads")
_COLUMNS = "n, id, chain, seq, prev_hash, hash, ts, body, event, session_id, tool_name, decision, handler_ids"


def _row(values: tuple[Any, ...]) -> AuditRow:
    n, rid, chain, seq, prev, digest, ts, *rest = values
    return AuditRow(int(n), rid, chain, int(seq), prev, digest, float(ts), *rest)


_APPEND = """
WITH RECURSIVE
locked AS (SELECT seq, hash FROM audit_heads WHERE chain = %(chain)s FOR UPDATE),
head AS (
    SELECT seq, hash FROM locked
    UNION ALL SELECT 0::bigint, %(genesis)s::text WHERE NOT EXISTS (SELECT 1 FROM locked)),
given AS (
    SELECT * FROM unnest(%(ids)s::text[], %(ts)s::float8[], %(sizes)s::int[], %(bodies)s::text[],
                         %(events)s::text[], %(sessions)s::text[], %(tools)s::text[], %(decisions)s::text[],
                         %(handlers)s::text[])
        WITH ORDINALITY AS g (id, ts, size, body, event, session_id, tool_name, decision, handler_ids, ord)),
fresh AS (
    SELECT DISTINCT ON (id) * FROM given
    WHERE NOT EXISTS (SELECT 1 FROM audit_records r WHERE r.id = given.id) ORDER BY id, ord),
numbered AS (SELECT *, row_number() OVER (ORDER BY ord) AS k FROM fresh),
links (k, seq, prev_hash, hash) AS (
    SELECT 0::bigint, seq, hash, hash FROM head
    UNION ALL
    SELECT n.k, l.seq + 1, l.hash,
           encode(sha256(convert_to(l.hash || E'\\n' || %(chain)s || E'\\n' || (l.seq + 1)::text || E'\\n' || n.body,
                                    'UTF8')), 'hex')
    FROM links l JOIN numbered n ON n.k = l.k + 1),
last AS (SELECT seq, hash FROM links ORDER BY k DESC LIMIT 1),
made AS (
    INSERT INTO audit_heads (chain, seq, hash, base_seq, base_hash)
    SELECT %(chain)s, seq, hash, 0, %(genesis)s FROM last WHERE NOT EXISTS (SELECT 1 FROM locked)
    ON CONFLICT (chain) DO NOTHING RETURNING 1),
moved AS (
    UPDATE audit_heads h SET seq = last.seq, hash = last.hash FROM last
    WHERE h.chain = %(chain)s AND EXISTS (SELECT 1 FROM locked)),
stored AS (
    INSERT INTO audit_records (id, chain, seq, prev_hash, hash, ts, size, body, event, session_id, tool_name,
                               decision, handler_ids)
    SELECT n.id, %(chain)s, l.seq, l.prev_hash, l.hash, n.ts, n.size, n.body, n.event, n.session_id, n.tool_name,
           n.decision, n.handler_ids
    FROM links l JOIN numbered n ON n.k = l.k
    WHERE EXISTS (SELECT 1 FROM locked) OR EXISTS (SELECT 1 FROM made)
    ORDER BY l.k
    RETURNING 1)
SELECT (SELECT count(*) FROM locked) + (SELECT count(*) FROM made), (SELECT count(*) FROM stored)
"""
"""One batch in one statement (autocommit: the statement is the transaction). ``locked`` locks the
chain's head row (``FOR UPDATE``: a second writer of the chain waits here, then reads the head as the
first left it, which READ COMMITTED re-reads after the wait); a new chain starts from the genesis link.
The batch arrives as arrays (``unnest``); ids already stored, or repeated in the batch, are left out.
``links`` computes each record's ``seq`` and SHA-256 link one after another from the head
(``link_hash``'s bytes: ``prev "\\n" chain "\\n" seq "\\n" body`` in UTF-8); ``moved`` puts the head on
the last one, or ``made`` creates a new chain's head row there. The sub-statements of one statement
cannot see each other's rows, so a new chain's head is inserted with its final values rather than
updated. When two writers start the same new chain at once, the later one's ``made`` waits for the
first and inserts nothing, its records are not stored either (``stored`` requires the head), and the
first column reads 0: ``_append`` then sends the statement again, which now finds the head."""


def _append(chain: str, entries: list[AuditEntry]) -> Op[int]:
    params = {
        "chain": chain,
        "genesis": GENESIS,
        "ids": [e.id for e in entries],
        "ts": [e.ts for e in entries],
        "sizes": [e.size for e in entries],
        "bodies": [e.body for e in entries],
        "events": [e.event for e in entries],
        "sessions": [e.session_id for e in entries],
        "tools": [e.tool_name for e in entries],
        "decisions": [e.decision for e in entries],
        "handlers": [e.handler_ids for e in entries],
    }
    rows = yield Q(_APPEND, params)
    if int(rows[0][0]) == 0:  # another writer made this new chain's head first (committed now): again
        rows = yield Q(_APPEND, params)
    return int(rows[0][1])


def _records(flt: AuditFilter) -> Op[list[AuditRow]]:
    where, params = where_clause(flt, "%s")
    limit = f" LIMIT {int(flt.limit)}" if flt.limit is not None else ""
    rows = yield Q(f"SELECT {_COLUMNS} FROM audit_records{where}{order_sql(flt)}{limit}", params)
    return [_row(r) for r in rows]


def _record(record_id: str) -> Op[AuditRow | None]:
    rows = yield Q(f"SELECT {_COLUMNS} FROM audit_records WHERE id = %s", (record_id,))
    return _row(rows[0]) if rows else None


def _chain(chain: str, after_seq: int, limit: int) -> Op[list[AuditRow]]:
    rows = yield Q(
        f"SELECT {_COLUMNS} FROM audit_records WHERE chain = %s AND seq > %s ORDER BY seq LIMIT %s",
        (chain, after_seq, limit),
    )
    return [_row(r) for r in rows]


def _heads() -> Op[list[ChainHead]]:
    rows = yield Q(
        "SELECT chain, seq, hash, base_seq, base_hash FROM audit_heads UNION ALL "
        "SELECT DISTINCT chain, -1, '', 0, %s FROM audit_records "
        "WHERE chain NOT IN (SELECT chain FROM audit_heads) ORDER BY 1",
        (GENESIS,),
    )
    return [ChainHead(r[0], int(r[1]), r[2], int(r[3]), r[4]) for r in rows]


_OLD_PREFIX = old_prefix_sql("%s")
"""``old_prefix_sql``; the bytes counted are the bodies' own."""
_SIZE_CUTOFF = size_cutoff_sql("octet_length(body)", "%s")


def _prune(before: float | None, max_bytes: int | None, voucher: Voucher | None) -> Op[int]:
    cutoff = before
    if max_bytes is not None:
        rows = yield Q(_SIZE_CUTOFF, (max_bytes, max_bytes))
        if rows:
            cutoff = max(cutoff or 0.0, float(rows[0][0]) + 1e-6)
    if cutoff is None:
        return 0
    removed = 0
    chains = yield Q(_OLD_PREFIX, (cutoff, cutoff))
    for chain, first, last in chains:
        if last < first:  # its oldest record is not old (a backdated one further on ends no prefix)
            continue
        head = yield Q("SELECT seq, hash, base_seq FROM audit_heads WHERE chain = %s FOR UPDATE", (chain,))
        if head and int(head[0][2]) >= last:
            continue  # another process pruned this prefix while we waited for the head (it held it first)
        link = yield Q("SELECT hash FROM audit_records WHERE chain = %s AND seq = %s", (chain, last))
        if not link:
            continue  # gone meanwhile (the prefix was read before the head was held)
        gone = yield Q(
            "WITH gone AS (DELETE FROM audit_records WHERE chain = %s AND seq <= %s RETURNING 1) "
            "SELECT count(*) FROM gone",
            (chain, last),
        )
        removed += int(gone[0][0])
        yield Q("UPDATE audit_heads SET base_seq = %s, base_hash = %s WHERE chain = %s", (last, link[0][0], chain))
        if voucher is not None and head:
            seq, prev = int(head[0][0]) + 1, str(head[0][1])
            entry = voucher(chain, int(head[0][2]) + 1, int(last), str(link[0][0]), cutoff)
            digest = link_hash(prev, chain, seq, entry.body)
            yield Q(
                f"INSERT INTO audit_records ({COLUMNS}) VALUES ({', '.join(['%s'] * (COLUMNS.count(',') + 1))})",
                entry.row(chain, seq, prev, digest),
            )
            yield Q("UPDATE audit_heads SET seq = %s, hash = %s WHERE chain = %s", (seq, digest, chain))
    return removed


def _size() -> Op[tuple[int, int]]:
    rows = yield Q("SELECT count(*), coalesce(sum(size), 0) FROM audit_records")
    return int(rows[0][0]), int(rows[0][1])


class PostgresAuditMixin:
    """``Store`` audit methods over ``self._run(op, tx=...)`` and ``self._sync`` (``PostgresStore``)."""

    _sync: SyncDB

    def _run(self, op: Op[T], *, tx: bool = False) -> T:
        raise NotImplementedError

    def audit_append(self, chain: str, entries: list[AuditEntry]) -> int:
        """Append ``entries`` to ``chain``: one statement holding the chain's head row (see ``_APPEND``)."""
        if not entries:
            return 0
        return self._run(_append(chain, entries))

    def audit_records(self, flt: AuditFilter) -> list[AuditRow]:
        return self._run(_records(flt))

    def audit_record(self, record_id: str) -> AuditRow | None:
        return self._run(_record(record_id))

    def audit_chain(self, chain: str, after_seq: int = 0, limit: int = 1000) -> list[AuditRow]:
        return self._run(_chain(chain, after_seq, limit))

    def audit_heads(self) -> list[ChainHead]:
        return self._run(_heads())

    def audit_snapshot(self) -> AbstractContextManager[None]:
        """``SyncDB.snapshot`` on the store's sync connection (a REPEATABLE READ, read-only transaction)."""
        return self._sync.snapshot()

    def audit_prune(
        self, *, before: float | None = None, max_bytes: int | None = None, voucher: Voucher | None = None
    ) -> int:
        return self._run(_prune(before, max_bytes, voucher), tx=True)

    def audit_size(self) -> tuple[int, int]:
        return self._run(_size())
