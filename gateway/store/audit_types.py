"""Plain types the store's audit methods take and return (shared by every ``Store`` backend), and the
chain link every backend computes in its own transaction (``link_hash``; the design is in
``gateway.audit.chain``).

``AuditEntry``: a record ready to append: ``id`` (unique, chosen by the writer: appending the same id
twice stores it once), ``ts`` (epoch seconds of the record's ``time``), ``body`` (the record's
canonical JSON text, already redacted) and the columns derived from it for filtering.

``AuditRow``: a stored record: the entry plus ``n`` (the store's global insertion number, for
``tail --follow`` cursors), ``chain`` (the writer chain it belongs to), ``seq`` (1, 2, ... within that
chain), ``prev_hash`` and ``hash`` (see ``gateway.audit.chain``).

``ChainHead``: per chain, the last ``seq``/``hash`` appended and the ``base_seq``/``base_hash``
retention left behind (records up to ``base_seq`` were pruned; ``base_hash`` is the hash of record
``base_seq``; 0 and the genesis hash when nothing was pruned).

``Voucher``: ``(chain, first_seq, last_seq, last_hash, cutoff) -> AuditEntry``: the retention record
``audit_prune`` appends to a chain it pruned, in the same transaction (``gateway.audit.retention``).

``AuditFilter``: what ``query``/``tail``/the console ask for; every field optional, all must fit.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gateway.plain import utf8_text
from gateway.store.audit_link import GENESIS, link_hash

__all__ = [
    "COLUMNS",
    "GENESIS",
    "AuditEntry",
    "AuditFilter",
    "AuditRow",
    "ChainHead",
    "Voucher",
    "column_value",
    "derived",
    "is_int",
    "link_hash",
    "parse_time",
    "where_clause",
]


COLUMNS = "id, chain, seq, prev_hash, hash, ts, size, body, event, session_id, tool_name, decision, handler_ids"
"""The ``audit_records`` columns every backend inserts, in the order of ``AuditEntry.row``."""


def parse_time(text: str) -> float:
    """Epoch seconds of a record ``time`` (ISO 8601, ``Z`` or an offset). Raises ValueError."""
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


@dataclass(slots=True)
class AuditEntry:
    id: str
    ts: float
    body: str
    event: str
    session_id: str | None
    tool_name: str | None
    decision: str
    handler_ids: str
    """Handler ids joined as ``,a,b,`` (so a filter is ``LIKE '%,a,%'``)."""

    @classmethod
    def from_body(cls, entry_id: str, body: str) -> AuditEntry:
        """Derive the filter columns from the record text. Raises ValueError on a malformed record."""
        record = json.loads(body)
        if not isinstance(record, dict):
            raise ValueError("record is not an object")
        return cls.from_record(entry_id, body, record)

    @classmethod
    def from_record(cls, entry_id: str, body: str, record: dict[str, Any]) -> AuditEntry:
        """Like ``from_body`` when the record is at hand (``body`` must be its canonical text)."""
        return cls(id=entry_id, ts=parse_time(str(record["time"])), body=body, **derived(record))

    @property
    def size(self) -> int:
        return len(self.body.encode("utf-8"))

    def row(self, chain: str, seq: int, prev: str, digest: str) -> tuple[Any, ...]:
        """The values of ``COLUMNS`` for this entry linked at ``seq`` of ``chain`` after ``prev``."""
        return (
            self.id,
            chain,
            seq,
            prev,
            digest,
            self.ts,
            self.size,
            self.body,
            self.event,
            self.session_id,
            self.tool_name,
            self.decision,
            self.handler_ids,
        )


def _text(value: Any) -> Any:
    """A column's text as a store can hold it: a lone surrogate (an event's ``session_id`` can hold one;
    the body's JSON escapes it) as its escape, ``\\ud800``: neither SQLite nor PostgreSQL takes it as
    text, and one such record would fail its whole batch, and jam the spool that ``hookgate run``
    records go through, for every record after it."""
    return utf8_text(value) if isinstance(value, str) else value


def derived(record: dict[str, Any]) -> dict[str, Any]:
    """The filter columns of a record (``AuditEntry`` fields besides id, ts, body)."""
    handlers = record.get("handlers") or []
    ids = [str(h.get("id")) for h in handlers if isinstance(h, dict)]
    return {
        "event": _text(str(record.get("event") or "")),
        "session_id": _text(record.get("session_id")),
        "tool_name": _text(record.get("tool_name")),
        "decision": _text(str(record.get("decision") or "none")),
        "handler_ids": _text("," + ",".join(i.replace(",", "_") for i in ids) + ",") if ids else "",
    }


Voucher = Callable[[str, int, int, str, float], AuditEntry]


@dataclass(slots=True)
class AuditRow:
    n: int
    id: str
    chain: str
    seq: int
    prev_hash: str
    hash: str
    ts: float
    body: str
    event: str
    session_id: str | None
    tool_name: str | None
    decision: str
    handler_ids: str

    @property
    def record(self) -> dict[str, Any]:
        """The stored record (keys sorted; ``gateway.audit.record.ordered`` puts them in documented order). A
        body that is not a JSON object (a row edited or cut in the database) gives the row's own columns and
        ``unreadable`` saying so, so that one bad row cannot stop a query or an export; ``hookgate audit
        verify`` reports it as tampering."""
        why = "its stored body is not a JSON object"
        try:
            value = json.loads(self.body)
        except (ValueError, TypeError) as exc:  # TypeError: a number where the text was
            value, why = None, f"its stored body is not JSON ({str(exc)[:100]})"
        if isinstance(value, dict):
            return value
        return {
            "time": _column_time(self.ts),
            "event": column_value(self.event),
            "session_id": column_value(self.session_id),
            "tool_name": column_value(self.tool_name),
            "decision": column_value(self.decision),
            "unreadable": f"{why}: run hookgate audit verify",
        }

    def chain_info(self) -> dict[str, Any]:
        """``{id, n, chain, seq, prev_hash, hash}``, JSON-ready (a column edited into another type shows as
        ``column_value`` gives it)."""
        return {
            "id": column_value(self.id),
            "n": self.n,
            "chain": column_value(self.chain),
            "seq": column_value(self.seq),
            "prev_hash": column_value(self.prev_hash),
            "hash": column_value(self.hash),
        }


def _column_time(ts: Any) -> str | int | float | None:
    """The ``ts`` column as an ISO time (seconds), or as ``column_value`` when it is no time."""
    import time

    try:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))
    except (TypeError, ValueError, OverflowError, OSError):
        return column_value(ts)


def column_value(value: Any) -> str | int | float | None:
    """A stored column as JSON can carry it: text, a finite number and None as they are; anything else (a
    blob that SQLite keeps in a column edited by hand, an infinite number) as its ``repr`` (``b'\\x01'``)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return value
    return repr(value)


def is_int(value: Any) -> bool:
    """True for an ``int`` that is not a ``bool`` (a ``seq`` column as written; SQLite keeps whatever an
    edit put there)."""
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(slots=True)
class ChainHead:
    chain: str
    seq: int
    hash: str
    base_seq: int
    base_hash: str

    def damage(self) -> str | None:
        """Why this head row cannot be a chain's head (a column edited by hand into another type: SQLite
        keeps text in an ``INTEGER`` column), or None. ``verify`` reports it; appending refuses it."""
        for name in ("seq", "base_seq"):
            if not is_int(getattr(self, name)):
                return f"its head row is damaged: {name} {getattr(self, name)!r} is not an integer"
        for name in ("hash", "base_hash"):
            if not isinstance(getattr(self, name), str):
                return f"its head row is damaged: {name} {getattr(self, name)!r} is not text"
        return None


@dataclass(slots=True)
class AuditFilter:
    """since/until: epoch seconds (inclusive/exclusive). session, tool, decision, handler, event: exact
    values (handler: a handler id the record lists). after: only rows with ``n`` greater than this.
    limit: at most this many, newest first (None: all). order: what "newest" means: ``"time"``, the
    record's ``ts`` (then ``n``): a ``hookgate run`` record that waited in the spool is placed when it
    happened, not when it reached the store; ``"insertion"``, ``n`` (each chain in ``seq`` order: what an
    export that must verify needs)."""

    since: float | None = None
    until: float | None = None
    session: str | None = None
    tool: str | None = None
    decision: str | None = None
    handler: str | None = None
    event: str | None = None
    after: int | None = None
    limit: int | None = None
    order: str = "time"


def order_sql(flt: AuditFilter) -> str:
    """The ``ORDER BY`` clause of ``flt.order`` (newest first). Raises ValueError for another order."""
    if flt.order == "time":
        return " ORDER BY ts DESC, n DESC"
    if flt.order == "insertion":
        return " ORDER BY n DESC"
    raise ValueError(f"audit order {flt.order!r}: expected 'time' or 'insertion'")


RETENTION_RESERVE = 1024
"""Bytes a prune by size leaves free per chain for the retention record it appends (one is some 600 bytes).
Pruned to the limit exactly, the store is over it again once that record is in, and the next prune (each
``hookgate audit`` command, ``serve`` every ten minutes) deletes another record and appends another retention
record: merely reading the trail wore it down into retention records."""


def size_cutoff_sql(length: str, mark: str) -> str:
    """The ``ts`` of the newest record a prune by size must delete (none: nothing to delete), given the limit
    twice as parameters: only when the bodies' bytes (``length``: the driver's expression for one) pass the
    limit, down to the limit less ``RETENTION_RESERVE`` per chain; ``mark``: the driver's placeholder."""
    return (
        f"SELECT ts FROM (SELECT ts, SUM({length}) OVER (ORDER BY ts DESC, n DESC) AS total, SUM({length}) OVER () "
        f"AS whole FROM audit_records) AS sized WHERE whole > {mark} AND total > {mark} - {RETENTION_RESERVE} * "
        "(SELECT COUNT(*) FROM audit_heads) ORDER BY ts DESC LIMIT 1"
    )


def old_prefix_sql(mark: str) -> str:
    """Per chain: its first seq and the last seq of its old prefix (every record up to it older than the
    cutoff, given twice as parameters); ``mark``: the driver's placeholder. A record with a backdated
    ``ts`` among newer ones ends no prefix, so it cannot take the newer records before it along
    (``verify`` then reports its ``ts``); a retention record (which cannot be forged) ends none."""
    return (
        "SELECT r.chain, MIN(r.seq), COALESCE((SELECT MIN(k.seq) FROM audit_records k WHERE k.chain = r.chain "
        f"AND k.event != 'AuditRetention' AND k.ts >= {mark}) - 1, MAX(r.seq)) FROM audit_records r "
        f"WHERE r.ts < {mark} GROUP BY r.chain"
    )


def where_clause(flt: AuditFilter, mark: str = "?") -> tuple[str, list[Any]]:
    """SQL ``WHERE`` text (possibly empty) and its parameters for ``flt``; ``mark``: the driver's
    placeholder (``?`` for sqlite3, ``%s`` for psycopg)."""
    parts: list[str] = []
    params: list[Any] = []
    for column, value in (
        ("session_id", flt.session),
        ("tool_name", flt.tool),
        ("decision", flt.decision),
        ("event", flt.event),
    ):
        if value is not None:
            parts.append(f"{column} = {mark}")
            params.append(value)
    if flt.handler is not None:  # exact, case and all (SQLite's LIKE ignores ASCII case, PostgreSQL's does not)
        parts.append(f"{'instr(handler_ids, ?)' if mark == '?' else 'strpos(handler_ids, %s)'} > 0")
        params.append(f",{flt.handler.replace(',', '_')},")
    if flt.since is not None:
        parts.append(f"ts >= {mark}")
        params.append(flt.since)
    if flt.until is not None:
        parts.append(f"ts < {mark}")
        params.append(flt.until)
    if flt.after is not None:
        parts.append(f"n > {mark}")
        params.append(flt.after)
    return (" WHERE " + " AND ".join(parts)) if parts else "", params
