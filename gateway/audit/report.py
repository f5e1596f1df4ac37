"""What ``hookgate audit`` and the console show: time filters, one-line rows, CSV, per-handler stats,
and the chain walk of ``verify``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import time
from collections.abc import Iterable, Iterator
from datetime import UTC
from typing import Any

from gateway.approvals.record import printable
from gateway.audit.chain import ChainReport, verify_chain
from gateway.audit.record import FIELDS, ordered
from gateway.store.audit_types import AuditRow

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def event_name(text: str) -> str:
    """The canonical event name (or ``AuditRetention``) ``text`` names, in any case, for a filter: records
    hold canonical names only, so ``pretooluse`` or a typo would list nothing, as if no such event had been
    recorded. Raises ValueError naming ``text`` and the name it seems to mean."""
    from gateway.audit.retention import EVENT
    from gateway.config.schema import suggest
    from gateway.events import EVENTS

    names = [*EVENTS, EVENT]
    for name in names:
        if name.lower() == text.strip().lower():
            return name
    raise ValueError(f"{text[:60]!r} is no event name{suggest(text, names)}")


def parse_since(text: str, now: float | None = None) -> float:
    """Epoch seconds for ``--since``: a duration back from now (``90s``, ``15m``, ``1h``, ``2d``, ``1w``)
    or an ISO 8601 time (``2026-12-01``, ``2026-12-01T07:00``, ``...Z``/``+02:00``; no zone = UTC).
    Raises ValueError with a one-line message (a negative duration, ``-1h``, is refused as such: the
    duration already counts back)."""
    text = text.strip()
    if text.startswith("-") and _DURATION.match(text[1:].strip()):
        raise ValueError(f"--since {text!r}: a negative duration is not accepted (1h means the last hour)")
    match = _DURATION.match(text)
    if match:
        return (time.time() if now is None else now) - float(match.group(1)) * _UNIT[match.group(2)]
    from datetime import datetime

    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"--since {text!r}: expected a duration (30m, 1h, 2d) or an ISO 8601 time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def handlers_of(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The record's ``handlers`` entries that are objects (an edited row may hold anything there)."""
    handlers = record.get("handlers")
    return [h for h in handlers if isinstance(h, dict)] if isinstance(handlers, list) else []


def line(row: AuditRow) -> str:
    """One row for ``tail``/``query``: time, event, tool, decision, handlers (id=verdict/status), reason.
    A newline in the reason is `` | ``; every other character that is not printable, in every field (ESC,
    CR, BEL, U+2028, the bidirectional overrides such as U+202E, zero-width ones), is written as its
    ``\\xNN`` / ``\\uNNNN`` escape (``gateway.approvals.record.printable``), so an agent's text cannot
    redraw the terminal, add a fake row, or reorder the columns."""
    record = row.record
    handlers = " ".join(
        f"{h.get('id')}={h.get('verdict') if h.get('status') in ('ok', 'cached') else h.get('status')}"
        for h in handlers_of(record)
    )
    reason = str(record.get("reason") or record.get("unreadable") or "").replace("\n", " | ")
    if len(reason) > 120:
        reason = reason[:117] + "..."
    parts = [
        record.get("time", ""),
        record.get("event", ""),
        record.get("tool_name") or "-",
        record.get("decision", ""),
        handlers or "-",
    ]
    if reason:
        parts.append(reason)
    return "  ".join(printable(str(p), keep="") for p in parts)


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What a CSV cell may not begin with as is: a spreadsheet (Excel, LibreOffice Calc) reads such a cell as a
formula (OWASP's CSV injection list)."""


def csv_cell(value: Any) -> str | int | float:
    """One CSV cell: objects and lists as JSON text, ``None`` as ``""``, a number as is; a string that begins
    with a ``FORMULA_START`` character gets a ``'`` before it (OWASP's CSV injection mitigation: the
    spreadsheet shows the text instead of running it as a formula). The ``'`` is in the file: a program
    that reads the CSV drops one leading ``'`` before such a character to get the stored value."""
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    if value is None:
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    text = str(value)
    return "'" + text if text.startswith(FORMULA_START) else text


def csv_text(rows: list[AuditRow], *, header: bool = True) -> str:
    """CSV with one column per record field (objects and lists as JSON text) plus the chain columns
    ``id``, ``chain``, ``seq``, ``hash``; each cell through ``csv_cell`` (a cell that would be a
    spreadsheet formula begins with ``'``). Rows end in CRLF (RFC 4180), which also makes the writer quote
    a value holding a lone CR: with LF line ends it wrote one as is, and every reader split the row there."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    fields = [name for name in FIELDS if name != "id"]  # the id is the chain column (verify: the same)
    if header:
        writer.writerow([*fields, "id", "chain", "seq", "hash"])
    for row in rows:
        record = row.record
        writer.writerow(
            [
                csv_cell(value)
                for value in (*(record.get(name) for name in fields), row.id, row.chain, row.seq, row.hash)
            ]
        )
    return out.getvalue()


def export_line(row: AuditRow) -> str:
    """One JSON line for ``export --format jsonl``: the record plus ``"_chain": {id, n, chain, seq,
    prev_hash, hash}``."""
    return json.dumps({**ordered(row.record), "_chain": row.chain_info()}, ensure_ascii=False)


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` by the nearest-rank method; 0.0 when empty."""
    if not values:
        return 0.0
    ranked = sorted(values)
    rank = max(1, math.ceil(q * len(ranked)))
    return ranked[min(rank, len(ranked)) - 1]


def stats(rows: list[AuditRow]) -> list[dict[str, Any]]:
    """``handler_stats`` of ``rows`` (newest first, as ``Store.audit_records`` gives them)."""
    return handler_stats(handlers_of(row.record) for row in reversed(rows))


def handler_stats(handler_lists: Iterable[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Per handler (by id, first seen order), over records' ``handlers`` lists given oldest first (an iterator:
    ``Store.audit_handler_lists`` streams them, so a large trail is never held whole): ``calls``, ``denies``
    (deny or block verdicts), ``errors``, ``timeouts``, ``p50_ms``, ``p95_ms`` (over runs that were not
    skipped or cached), and its ``type``."""
    table: dict[str, dict[str, Any]] = {}
    durations: dict[str, list[float]] = {}
    for handlers in handler_lists:
        for handler in handlers:
            hid = str(handler.get("id"))
            entry = table.setdefault(
                hid,
                {
                    "id": hid,
                    "type": handler.get("type"),
                    "calls": 0,
                    "denies": 0,
                    "errors": 0,
                    "timeouts": 0,
                    "p50_ms": 0.0,
                    "p95_ms": 0.0,
                },
            )
            entry["calls"] += 1
            status = handler.get("status")
            if handler.get("verdict") in ("deny", "block"):
                entry["denies"] += 1
            if status == "error":
                entry["errors"] += 1
            elif status == "timeout":
                entry["timeouts"] += 1
            if status in ("ok", "error", "timeout"):
                duration = handler.get("duration_ms")
                if isinstance(duration, (int, float)) and not isinstance(duration, bool):
                    durations.setdefault(hid, []).append(float(duration))
    for hid, entry in table.items():
        values = durations.get(hid, [])
        entry["p50_ms"] = round(percentile(values, 0.50), 3)
        entry["p95_ms"] = round(percentile(values, 0.95), 3)
    return list(table.values())


def stats_table(entries: list[dict[str, Any]]) -> str:
    head = ["handler", "type", "calls", "denies", "errors", "timeouts", "p50_ms", "p95_ms"]
    body = [
        [
            e["id"],
            e["type"] or "",
            e["calls"],
            e["denies"],
            e["errors"],
            e["timeouts"],
            f"{e['p50_ms']:.1f}",
            f"{e['p95_ms']:.1f}",
        ]
        for e in entries
    ]
    body = [[printable(str(c), keep="") for c in r] for r in body]  # handler ids from records: as ``line``
    widths = [max(len(str(r[i])) for r in [head, *body]) for i in range(len(head))]
    return "\n".join("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [head, *body])


def walk(store: Any, chain: str, page: int = 1000) -> Iterator[AuditRow]:
    """Every record of ``chain`` in seq order, read in pages."""
    after = -1
    while True:
        rows = store.audit_chain(chain, after, page)
        yield from rows
        if len(rows) < page:
            return
        after = rows[-1].seq


def verify_store(store: Any) -> list[ChainReport]:
    """``verify_chain`` for every chain in the store (``Store.audit_heads``), all read in one
    ``Store.audit_snapshot``: records that other processes append or prune meanwhile are not half seen
    (a head read before a concurrent append would otherwise look shorter than its chain)."""
    with store.audit_snapshot():
        return [verify_chain(head, walk(store, head.chain)) for head in store.audit_heads()]
