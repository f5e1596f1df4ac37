"""The hash chain over stored audit records, and ``verify``.

Design (README "Audit", "The hash chain"): records are chained **per writer chain**, not globally.
A chain is named by ``audit.chain`` (default: this machine's host name), so every machine that writes
to a shared store (the PostgreSQL store) extends its own chain and never waits on another machine's
writes; the processes of one machine (``hookgate run`` processes, ``hookgate serve``) share their
machine's chain. Inside a chain, the store assigns ``seq`` (1, 2, ...) and the hashes **in its own
transaction** (``Store.audit_append``): it locks the chain's head row (SQLite: ``BEGIN IMMEDIATE``;
PostgreSQL: ``SELECT ... FOR UPDATE`` on ``audit_heads``), reads the last ``seq``/``hash``, appends,
and moves the head, so two writers can never fork a chain or reuse a ``seq``.

Each record's link::

    hash = SHA-256( prev_hash "\\n" chain "\\n" seq "\\n" body )     lower-case hex

where ``body`` is the record's canonical JSON text (``gateway.audit.record.canonical``) and
``prev_hash`` is the previous record's ``hash`` in the same chain (``GENESIS`` for seq 1). The body
holds the record's ``id``, so the hash covers it; the row's ``id`` column (the one ``verify`` names a
record by, and the store's key) is checked against it like the filter columns. A record written by a
hookgate from before the id was in the body has none there: its ``id`` column is not covered, and
such records still verify.

``verify_chain`` walks one chain in ``seq`` order and reports the first bad record:

- an edited record (its body, chain or seq changed): its hash no longer matches;
- a deleted record: a gap in ``seq`` (or, for the newest ones, the head naming a later ``seq``);
- a reordered record (rows swapped, or seq numbers swapped): ``prev_hash`` no longer names the
  record before it, or the hash (which covers ``seq``) no longer matches;
- a filter column that disagrees with the body (e.g. ``decision`` edited to hide a deny), and an ``id``
  column that disagrees with the body's ``id`` (so an id quoted in a ticket cannot be moved to another
  record).

Retention prunes the oldest records of a chain as a prefix, keeps the hash of the last pruned record
in the head (``base_seq``/``base_hash``), so the rest still verifies, and appends, in the same
transaction, an ``AuditRetention`` record naming the pruned range and that hash
(``gateway.audit.retention``). A base is accepted only when the newest such record in the chain names
exactly it: records deleted from the start of a chain with the base moved by hand are reported.

What an unkeyed chain cannot show: someone with write access who rewrites a chain consistently (every
hash after the change recomputed, the head moved to match; also a forged retention record with the
chain after it rehashed), and the newest records deleted together with the head row moved back.
``hookgate audit verify`` prints each chain's head hash; keep it elsewhere (a log pipeline via the
JSON-lines sink, a ticket) to anchor it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gateway.audit.retention import vouched
from gateway.store.audit_types import derived, is_int, link_hash, parse_time

if TYPE_CHECKING:
    from gateway.store.audit_types import AuditRow, ChainHead


@dataclass(slots=True)
class Problem:
    """The first bad record of a chain: ``chain``, ``seq`` (as stored, or expected; None for a damaged head
    row), ``id`` (None when the record is missing), ``what`` (one line)."""

    chain: str
    seq: int | None
    """None: the problem is the chain's head row, not a record."""
    id: str | None
    what: str

    def __str__(self) -> str:
        if self.seq is None:
            return f"chain {self.chain!r}: {self.what}"
        from gateway.approvals.record import printable  # (an id column edited by hand may hold anything)

        where = f" (record {printable(str(self.id), keep='')})" if self.id else ""  # no id: a missing record
        return f"chain {self.chain!r} seq {self.seq}{where}: {self.what}"


@dataclass(slots=True)
class ChainReport:
    chain: str
    checked: int
    head_seq: int
    head_hash: str
    base_seq: int
    problem: Problem | None
    voucher_seq: int = 0
    """The seq of the retention record that vouches for ``base_seq`` (0: nothing was pruned)."""


def _columns_match(row: AuditRow, record: Any) -> str | None:
    """Why ``row``'s columns (the filter columns, ``ts``, and ``id`` when the body has one) disagree with
    ``record`` (its parsed body), or None."""
    try:
        cols = derived(record)
    except (ValueError, TypeError, AttributeError):
        return "its body is not a JSON record"
    try:
        cols["ts"] = parse_time(str(record["time"]))
    except (KeyError, ValueError, TypeError):
        return "its body has no valid time"
    if "id" in record:  # (not in the body of a record written before the id was: not covered there)
        cols["id"] = record["id"]
    for name, value in cols.items():  # ts too: retention acts on it (by size it counts the bodies' bytes)
        if getattr(row, name) != value:
            return f"column {name} ({getattr(row, name)!r}) disagrees with the record ({value!r})"
    return None


def verify_chain(head: ChainHead, rows: Iterable[AuditRow]) -> ChainReport:
    """Walk ``rows`` (one chain, ``seq`` ascending) from the head's base; stop at the first problem."""
    if (damage := head.damage()) is not None:
        return ChainReport(head.chain, 0, head.seq, head.hash, head.base_seq, Problem(head.chain, None, None, damage))
    if head.seq < 0:
        return ChainReport(
            head.chain,
            0,
            head.seq,
            head.hash,
            head.base_seq,
            Problem(head.chain, 0, None, "the chain has records but no head (its head row was deleted)"),
        )
    expected_seq, expected_prev = head.base_seq + 1, head.base_hash
    checked = 0
    last_hash = head.base_hash
    voucher: tuple[int, int, str] | None = None  # the newest retention record: (its seq, last_seq, last_hash)
    for row in rows:
        problem = None
        if not is_int(row.seq):  # SQLite keeps text in the INTEGER column (sorted after every number)
            problem = Problem(
                head.chain,
                expected_seq,
                row.id,
                f"its seq column ({row.seq!r}) is not an integer",
            )
        elif row.seq < expected_seq:
            problem = Problem(
                head.chain, row.seq, row.id, f"seq {row.seq} appears again or out of order (expected {expected_seq})"
            )
        elif row.seq > expected_seq:
            problem = Problem(
                head.chain,
                expected_seq,
                None,
                f"missing (deleted?): the chain jumps from seq {expected_seq - 1} to {row.seq}",
            )
        elif row.prev_hash != expected_prev:
            problem = Problem(
                head.chain,
                row.seq,
                row.id,
                "does not follow the record before it (reordered, or the one before was changed)",
            )
        elif link_hash(row.prev_hash, row.chain, row.seq, row.body) != row.hash:
            problem = Problem(head.chain, row.seq, row.id, "hash mismatch: the record was edited")
        else:
            try:
                record = json.loads(row.body)
            except ValueError:
                record = None
            why = _columns_match(row, record)
            if why is not None:
                problem = Problem(head.chain, row.seq, row.id, why)
            elif (claim := vouched(record)) is not None:
                voucher = (row.seq, *claim)
        if problem is not None:
            return ChainReport(
                head.chain, checked, head.seq, head.hash, head.base_seq, problem, voucher[0] if voucher else 0
            )
        checked += 1
        expected_seq, expected_prev, last_hash = row.seq + 1, row.hash, row.hash
    if expected_seq - 1 != head.seq:
        problem = Problem(
            head.chain,
            expected_seq,
            None,
            f"missing (deleted?): the chain ends at seq {expected_seq - 1} but its head says {head.seq}",
        )
    elif last_hash != head.hash:
        problem = Problem(head.chain, head.seq, None, "the head's hash does not match the last record")
    else:
        problem = _base_problem(head, voucher)
    return ChainReport(head.chain, checked, head.seq, head.hash, head.base_seq, problem, voucher[0] if voucher else 0)


def _base_problem(head: ChainHead, voucher: tuple[int, int, str] | None) -> Problem | None:
    """Why the head's base (records up to ``base_seq`` pruned) is not what the newest retention record
    in the chain vouches for, or None."""
    if voucher is None:
        if head.base_seq == 0:
            return None
        return Problem(
            head.chain,
            head.base_seq,
            None,
            f"records 1-{head.base_seq} are gone but no retention record in the chain vouches for their "
            "pruning (deleted outside retention, with the chain's base moved?)",
        )
    seq, last_seq, last_hash = voucher
    if (last_seq, last_hash) != (head.base_seq, head.base_hash):
        return Problem(
            head.chain,
            head.base_seq,
            None,
            f"the chain's base (records up to seq {head.base_seq} pruned) is not the one its newest retention "
            f"record (seq {seq}) vouches for (up to seq {last_seq}): records deleted outside retention?",
        )
    return None
