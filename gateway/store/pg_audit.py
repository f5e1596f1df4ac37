"""The audit methods of the PostgreSQL store (mixed into ``PostgresStore``; contracts in ``Store``).

Tables (``pg_schema`` migration 3, the same version as the SQLite store's audit step)::

    audit_records  n bigserial PRIMARY KEY, id text UNIQUE, chain, seq bigint, prev_hash, hash,
                   ts double precision, size integer, body text, event, session_id, tool_name, decision,
                   handler_ids; UNIQUE (chain, seq); indexes on ts, session_id, tool_name, decision
    audit_heads    chain text PRIMARY KEY, seq bigint, hash, base_seq bigint, base_hash

``body`` is ``text``, not ``jsonb``: the chain hashes the exact canonical text, which ``jsonb`` would
re-format. ``audit_append`` runs in one transaction that locks the chain's head row
(``SELECT ... FOR UPDATE``): writers of one chain serialize there, writers of other chains (other
machines) never wait for each other, and the ``seq``/hashes are assigned inside the transaction, so a
chain can never fork. One multi-row ``INSERT`` carries a whole batch (six round trips per batch with
``BEGIN``/``COMMIT``). ``n`` is a sequence: with several machines writing at once a row with a smaller
``n`` may commit after one with a larger ``n``, so ``tail --follow`` on a shared store can miss such a
row (``query`` and ``verify`` see everything).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gateway.store.audit_types import (
    GENESIS,
    AuditEntry,
    AuditFilter,
    AuditRow,
    ChainHead,
    Voucher,
    link_hash,
    where_clause,
)
from gateway.store.pg_conn import Op, Q

if TYPE_CHECKING:
    from gateway.store.pg_conn import T

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


def _append(chain: str, entries: list[AuditEntry]) -> Op[int]:
    yield Q(
        "INSERT INTO audit_heads (chain, seq, hash, base_seq, base_hash) VALUES (%s, 0, %s, 0, %s) "
        "ON CONFLICT (chain) DO NOTHING",
        (chain, GENESIS, GENESIS),
    )
    rows = yield Q("SELECT seq, hash FROM audit_heads WHERE chain = %s FOR UPDATE", (chain,))
    seq, prev = int(rows[0][0]), str(rows[0][1])
    found = yield Q("SELECT id FROM audit_records WHERE id = ANY(%s)", ([e.id for e in entries],))
    known = {r[0] for r in found}
    values: list[Any] = []
    for entry in entries:
        if entry.id in known:
            continue
        known.add(entry.id)
        seq += 1
        digest = link_hash(prev, chain, seq, entry.body)
        values += [
            entry.id,
            chain,
            seq,
            prev,
            digest,
            entry.ts,
            entry.size,
            entry.body,
            entry.event,
            entry.session_id,
            entry.tool_name,
            entry.decision,
            entry.handler_ids,
        ]
        prev = digest
    stored = len(values) // 13
    if stored:
        yield Q(
            "INSERT INTO audit_records (id, chain, seq, prev_hash, hash, ts, size, body, event, session_id, "
            "tool_name, decision, handler_ids) VALUES " + ", ".join(["(" + ", ".join(["%s"] * 13) + ")"] * stored),
            values,
        )
        yield Q("UPDATE audit_heads SET seq = %s, hash = %s WHERE chain = %s", (seq, prev, chain))
    return stored


def _records(flt: AuditFilter) -> Op[list[AuditRow]]:
    where, params = where_clause(flt, "%s")
    limit = f" LIMIT {int(flt.limit)}" if flt.limit is not None else ""
    rows = yield Q(f"SELECT {_COLUMNS} FROM audit_records{where} ORDER BY n DESC{limit}", params)
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


def _values(entry: AuditEntry, chain: str, seq: int, prev: str, digest: str) -> list[Any]:
    """The 13 ``INSERT INTO audit_records`` values of ``entry`` linked at ``seq``."""
    return [
        entry.id,
        chain,
        seq,
        prev,
        digest,
        entry.ts,
        entry.size,
        entry.body,
        entry.event,
        entry.session_id,
        entry.tool_name,
        entry.decision,
        entry.handler_ids,
    ]


def _prune(before: float | None, max_bytes: int | None, voucher: Voucher | None) -> Op[int]:
    cutoff = before
    if max_bytes is not None:
        rows = yield Q(
            "SELECT ts FROM (SELECT ts, SUM(size) OVER (ORDER BY ts DESC, n DESC) AS total "
            "FROM audit_records) AS sized WHERE total > %s ORDER BY ts DESC LIMIT 1",
            (max_bytes,),
        )
        if rows:
            cutoff = max(cutoff or 0.0, float(rows[0][0]) + 1e-6)
    if cutoff is None:
        return 0
    removed = 0
    chains = yield Q("SELECT chain, MAX(seq) FROM audit_records WHERE ts < %s GROUP BY chain", (cutoff,))
    for chain, last in chains:
        head = yield Q("SELECT seq, hash, base_seq FROM audit_heads WHERE chain = %s FOR UPDATE", (chain,))
        link = yield Q("SELECT hash FROM audit_records WHERE chain = %s AND seq = %s", (chain, last))
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
                "INSERT INTO audit_records (id, chain, seq, prev_hash, hash, ts, size, body, event, session_id, "
                "tool_name, decision, handler_ids) VALUES (" + ", ".join(["%s"] * 13) + ")",
                _values(entry, chain, seq, prev, digest),
            )
            yield Q("UPDATE audit_heads SET seq = %s, hash = %s WHERE chain = %s", (seq, digest, chain))
    return removed


def _size() -> Op[tuple[int, int]]:
    rows = yield Q("SELECT count(*), coalesce(sum(size), 0) FROM audit_records")
    return int(rows[0][0]), int(rows[0][1])


class PostgresAuditMixin:
    """``Store`` audit methods over ``self._run(op, tx=...)`` (``PostgresStore``)."""

    def _run(self, op: Op[T], *, tx: bool = False) -> T:
        raise NotImplementedError

    def audit_append(self, chain: str, entries: list[AuditEntry]) -> int:
        """Append ``entries`` to ``chain`` in one transaction holding the chain's head row."""
        if not entries:
            return 0
        return self._run(_append(chain, entries), tx=True)

    def audit_records(self, flt: AuditFilter) -> list[AuditRow]:
        return self._run(_records(flt))

    def audit_record(self, record_id: str) -> AuditRow | None:
        return self._run(_record(record_id))

    def audit_chain(self, chain: str, after_seq: int = 0, limit: int = 1000) -> list[AuditRow]:
        return self._run(_chain(chain, after_seq, limit))

    def audit_heads(self) -> list[ChainHead]:
        return self._run(_heads())

    def audit_prune(
        self, *, before: float | None = None, max_bytes: int | None = None, voucher: Voucher | None = None
    ) -> int:
        return self._run(_prune(before, max_bytes, voucher), tx=True)

    def audit_size(self) -> tuple[int, int]:
        return self._run(_size())
