"""The JSON-lines sink (``audit.sink: jsonl:PATH``), hash-chained like the store, and its verifier.

Each line is one record with its link in a ``_chain`` key (sorted first, so the line is the record's
canonical JSON with one more key)::

    {"_chain":{"chain":"build-7","hash":"…","id":"…","prev_hash":"…","seq":42},"approval":null,…}

The link is the store's (``gateway.audit.chain``): ``hash = SHA-256(prev_hash "\\n" chain "\\n" seq
"\\n" body)`` where ``body`` is the record's canonical JSON without ``_chain``; ``seq`` counts 1, 2, ...
per writer chain **within the file** (a line's ``seq`` is not the store's ``seq`` of the same record:
the file and the store are two independent chains over the same records). ``hookgate audit export
--format jsonl`` writes the same ``_chain`` key (with the store's ``seq`` and one more field, ``n``),
so ``verify_file`` checks an export too.

``append`` holds an exclusive ``flock`` on the file while it reads the last link of its chain from
the file's end (the last line, when one machine writes the file; further back when several chains
share it) and writes the batch in one ``write`` call, so concurrent ``hookgate run`` processes and
``hookgate serve`` extend one chain without forking it. A file whose last line lacks its newline (a
torn write) gets one first; that line stays, and ``verify`` reports it.

``verify_file`` walks the file from the start and returns the first problem: a line that is not a
chained JSON record, an edited record (hash mismatch), a deleted one (a gap in ``seq``), a reordered
or moved one (``prev_hash`` does not name the record before it in its chain, or the hash, which covers
``seq``, fails), a ``_chain.id`` that is not the record's own ``id`` (the body's, which the hash covers;
a record written before the id was in the body has none, and its ``_chain.id`` is not covered). A
chain must start at ``seq`` 1 with the genesis hash unless ``continued`` (a file that continues another
one after rotation, or an export after retention): then its first record is taken as the anchor and
reported. Whitespace-only lines at the end of the file (an editor's final
blank line) are ignored; one between records is reported. What a chain cannot show on its own is its
newest lines cut off: keep the last hash ``verify`` prints elsewhere.
"""

from __future__ import annotations

import os

from gateway.audit.record import canonical
from gateway.audit.spool import write_all
from gateway.store.audit_link import GENESIS, link_hash

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

BLOCK = 64 * 1024
"""Bytes read per step while looking back for the chain's last line."""
_PREFIX = b'{"_chain":'


def line_for(chain: str, seq: int, prev_hash: str, record_id: str, body: str) -> tuple[str, str]:
    """``(line without its newline, hash)`` for one record (``body``: its canonical JSON)."""
    digest = link_hash(prev_hash, chain, seq, body)
    head = canonical({"_chain": {"chain": chain, "hash": digest, "id": record_id, "prev_hash": prev_hash, "seq": seq}})
    return f"{head[:-1]},{body[1:]}" if body != "{}" else head, digest


def _link_of(raw: bytes, chain: str) -> tuple[int, str] | None:
    """``(seq, hash)`` when ``raw`` (one line) is a chained record of ``chain``; None otherwise. Only
    the ``_chain`` object at the line's start is decoded."""
    import json

    if not raw.startswith(_PREFIX):
        return None
    try:
        link, _ = json.JSONDecoder().raw_decode(raw.decode("utf-8", "surrogatepass"), len(_PREFIX))
        if link.get("chain") != chain:
            return None
        return int(link["seq"]), str(link["hash"])
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def last_link(fd: int, chain: str) -> tuple[int, str, bool]:
    """``(seq, hash, ends_with_newline)`` of ``chain``'s last line in the open file ``fd`` (0 and the
    genesis hash when the file has none), reading back from the end in ``BLOCK`` steps."""
    end = os.fstat(fd).st_size
    if end == 0:
        return 0, GENESIS, True
    newline = os.pread(fd, 1, end - 1) == b"\n"
    pos, tail = end, b""
    while pos > 0:
        start = max(0, pos - BLOCK)
        tail = os.pread(fd, pos - start, start) + tail
        pos = start
        lines = tail.split(b"\n")
        tail = lines.pop(0) if pos > 0 else b""  # maybe a partial line: kept for the next step
        for raw in reversed(lines):
            found = _link_of(raw, chain)
            if found is not None:
                return found[0], found[1], newline
    return 0, GENESIS, newline


def append(path: str, chain: str, items: Iterable[tuple[str, str]]) -> int:
    """Append ``items`` (``(record id, canonical body)``, in order) to ``path`` as chained lines of
    ``chain``; creates the file (mode 0600) and its folder. Returns the last ``seq``. Raises OSError."""
    import fcntl

    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o600)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        fd = os.open(path, flags, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        seq, prev, newline = last_link(fd, chain)
        lines = [] if newline else [""]
        for record_id, body in items:
            seq += 1
            text, prev = line_for(chain, seq, prev, record_id, body)
            lines.append(text)
        write_all(fd, ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass"), path, "the audit file")
        return seq
    finally:
        os.close(fd)  # closing releases the lock


# ---------------------------------------------------------------------------- verify


class JsonlProblem:
    """The first bad line: ``line`` (1-based), ``chain``/``seq``/``id`` when known, ``what``."""

    __slots__ = ("chain", "id", "line", "seq", "what")

    def __init__(
        self, line: int, what: str, chain: str | None = None, seq: int | None = None, rid: str | None = None
    ) -> None:
        self.line, self.what, self.chain, self.seq, self.id = line, what, chain, seq, rid

    def __str__(self) -> str:
        where = f"line {self.line}"
        if self.chain is not None:
            from gateway.approvals.record import printable  # (a line edited by hand may hold anything)

            rid = f", record {printable(str(self.id), keep='')})" if self.id else ")"
            where += f" (chain {self.chain!r} seq {self.seq}" + rid
        return f"{where}: {self.what}"

    __repr__ = __str__


class JsonlReport:
    """``lines`` checked, per chain ``(first seq, last seq, last hash)`` in ``chains``, the first
    ``problem`` (None when the file verifies)."""

    __slots__ = ("chains", "lines", "problem")

    def __init__(self) -> None:
        self.lines = 0
        self.chains: dict[str, list[Any]] = {}
        self.problem: JsonlProblem | None = None


def _lines(path: str) -> Iterator[tuple[int, bytes]]:
    with open(path, "rb") as fh:
        yield from enumerate(fh, 1)


def verify_file(path: str, *, continued: bool = False) -> JsonlReport:
    """Walk the JSON-lines file ``path`` (see module docstring). Raises OSError when it cannot be read."""
    import json

    report = JsonlReport()
    heads: dict[str, tuple[int, str]] = {}
    blank = 0  # the first whitespace-only line seen: fine at the end of the file, not between records
    for number, raw in _lines(path):
        if not raw.strip():
            blank = blank or number
            continue
        if blank:
            report.problem = JsonlProblem(blank, "a blank line between records (only the end may have whitespace)")
            return report
        if not raw.endswith(b"\n"):
            report.problem = JsonlProblem(number, "the line is cut off (no newline: a torn write, or a cut file)")
            return report
        raw = raw[:-1]
        try:
            value = json.loads(raw.decode("utf-8", "surrogatepass"))
        except ValueError:
            report.problem = JsonlProblem(number, "not a JSON record")
            return report
        link: Any = value.pop("_chain", None) if isinstance(value, dict) else None
        try:
            chain, seq, prev, digest = str(link["chain"]), int(link["seq"]), str(link["prev_hash"]), str(link["hash"])
            rid = link.get("id")
        except (TypeError, KeyError, ValueError):
            report.problem = JsonlProblem(number, "not a chained record (no valid _chain key)")
            return report
        problem = _check(heads, continued, chain, seq, prev)
        if problem is None and link_hash(prev, chain, seq, canonical(value)) != digest:
            problem = "hash mismatch: the record was edited"
        if problem is None and "id" in value and value["id"] != rid:
            problem = f"its _chain id ({rid!r}) disagrees with the record ({value['id']!r})"
        if problem is not None:
            report.problem = JsonlProblem(number, problem, chain, seq, rid)
            return report
        heads[chain] = (seq, digest)
        first = report.chains.setdefault(chain, [seq, seq, digest])
        first[1], first[2] = seq, digest
        report.lines = number
    return report


def _check(heads: dict[str, tuple[int, str]], continued: bool, chain: str, seq: int, prev: str) -> str | None:
    head = heads.get(chain)
    if head is None:
        if continued or (seq == 1 and prev == GENESIS):
            return None
        return f"the chain starts at seq {seq}, not 1: earlier records are missing (deleted?)"
    last_seq, last_hash = head
    if seq <= last_seq:
        return f"seq {seq} appears again or out of order (expected {last_seq + 1})"
    if seq > last_seq + 1:
        return f"the chain jumps from seq {last_seq} to {seq}: a record is missing (deleted) or out of order"
    if prev != last_hash:
        return "does not follow the record before it (reordered, or the one before was changed)"
    return None
