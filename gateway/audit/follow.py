"""``tail --follow``: new records in commit order, also on a store that several machines write.

Following the store's insertion number ``n`` misses rows on PostgreSQL: ``n`` comes from a sequence
when a row is inserted, so a slow transaction of one machine can commit row ``n = 5`` after another
machine's ``n = 6`` is visible, and a reader that moved its cursor to 6 never sees 5. Inside one
writer chain that cannot happen: ``seq`` is assigned while the transaction holds the chain's head
row (``gateway.audit.chain``), so the next transaction of that chain reads its head only after the
previous one committed, and the committed records of a chain are always ``1..k`` with no hole. So
``Follower`` keeps one cursor per chain (the last ``seq`` it returned) and asks, per chain whose
head moved past its cursor, for the records after it (``Store.audit_chain``). A chain that appears
later is followed from its first kept record. Nothing is missed, nothing repeats, and no grace
window or re-read is needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gateway.store.audit_types import is_int

if TYPE_CHECKING:
    from gateway.store.audit_types import AuditRow, ChainHead
    from gateway.store.base import Store

PAGE = 1000
"""Records asked for per ``audit_chain`` call."""


class Follower:
    """Per-chain cursors over ``store`` (see module docstring)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.cursors: dict[str, int] = {head.chain: head.seq for head in store.audit_heads() if _followed(head)}

    def seen(self, row: AuditRow) -> bool:
        """True when ``row`` was committed before the cursors were taken (``poll`` will not return it); a
        row whose ``seq`` column is not an integer (edited by hand) counts as seen: no cursor passes it."""
        return row.chain in self.cursors and (not is_int(row.seq) or row.seq <= self.cursors[row.chain])

    def poll(self) -> list[AuditRow]:
        """Records committed since the last call, oldest first (by time, then insertion number)."""
        new: list[AuditRow] = []
        for head in self.store.audit_heads():
            if not _followed(head):  # records without a head row, or a damaged one: `verify` reports those
                continue
            after = self.cursors.get(head.chain, head.base_seq)
            while head.seq > after:
                rows = self.store.audit_chain(head.chain, after, PAGE)
                if not rows:
                    break
                numbered = [row for row in rows if is_int(row.seq)]  # text sorts after every number in SQLite
                new.extend(numbered)
                if numbered:
                    after = numbered[-1].seq
                if len(numbered) < len(rows):  # a seq edited into text: past the chain's numbered rows
                    break
                if len(rows) < PAGE:
                    break
            self.cursors[head.chain] = after
        # a ts edited into text (SQLite keeps it) sorts by insertion number alone, after the others
        new.sort(key=lambda row: (row.ts, row.n) if isinstance(row.ts, (int, float)) else (float("inf"), row.n))
        return new


def _followed(head: ChainHead) -> bool:
    """A chain to follow: it has a head row, and one that was not damaged."""
    return head.damage() is None and head.seq >= 0
