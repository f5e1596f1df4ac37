"""The store's write-ahead spool for short-lived writers (``hookgate run``).

Opening SQLite from a fresh process, taking its write lock and committing costs 3-5 ms; a hook runs
on every tool call and recording may add at most 1 ms. So ``hookgate run`` appends the finished,
already redacted record as one line to ``<stateDir>/audit/spool.jsonl`` (``O_APPEND``: one ``write``
per record, so concurrent processes never interleave), and ``drain`` moves spooled lines into the store
(``Store.audit_append``: the chain ``seq`` and hashes are assigned there, in the store's transaction).

Who drains: ``hookgate run`` itself when the spool has grown past ``DRAIN_BYTES`` after its write
(one call in a few hundred pays a few ms); every ``hookgate audit`` command before it reads;
``hookgate serve``'s audit writer every second. Records that wait in the spool are not yet chained;
``hookgate audit verify`` drains first.

Line format: ``<id>\\t<canonical record JSON>\\n``. ``drain`` renames the spool aside (new writers
then create a fresh one), takes the exclusive lock on the renamed file (two drains never take one file;
a writer of an older hookgate, which writes under a shared lock, finishes first), appends its lines and
removes it. A writer takes no lock (``fcntl`` is not even imported on the hook path): after its
``write`` it checks that the file it wrote to is still the spool; if a drain renamed it meanwhile, the
line may have been read or not, so the writer writes it again to the new spool, and the store skips
the copy whose id it already has. A line written while the file was still the spool was written before
the rename, so the drain, which reads after renaming, sees it. A crash between the append and the
removal leaves the file behind; the next drain reads it again and the store skips ids it already has.
A drain moves the files set aside earlier before it renames the spool: while the store cannot take them
(a shared database that is down), the spool stays one file that grows, not one more file per attempt.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from gateway.store.audit_types import AuditEntry

SPOOL_NAME = "spool.jsonl"
DRAIN_BYTES = 256 * 1024
"""After a write that leaves the spool at least this large, ``hookgate run`` drains it."""


DRAIN_FAILED = "drain-failed"
"""A file in the spool's folder whose time is when a drain on the hook path last failed."""

DRAIN_BACKOFF = 30.0
"""Seconds after a failed hook-path drain during which ``hookgate run`` does not try another."""


DRAIN_BUSY_SECONDS = 0.25
"""How long a drain on the hook path (``hookgate run``) waits for the store's write lock. Another process holds
it while it drains or writes; the next drain moves what this one leaves, and SQLite's wait for a lock (5 s by
default) cannot be cut short by the record step's deadline: every hook call past ``DRAIN_BYTES`` waited it."""


def spool_dir(state_dir: str) -> str:
    return os.path.join(state_dir, "audit")


class _Ids:
    """This process's id parts: its pid, and a 32-bit counter that starts at a random value (one
    ``os.urandom`` per process, not per record: a system call that cost a busy server microseconds)."""

    pid = 0
    next = 0

    @classmethod
    def reset(cls) -> None:
        cls.pid = os.getpid()
        cls.next = int.from_bytes(os.urandom(4), "big")


os.register_at_fork(after_in_child=_Ids.reset)


def new_id() -> str:
    """A unique record id: nanosecond time, process id and 32 bits, in hex (``<ns>-<pid>-<8 hex>``): the
    bits count up from a random start per process, so two ids of one process never share them and two
    processes' ids differ in pid or, across machines, almost surely in the bits."""
    import time

    ids = _Ids
    if not ids.pid:
        ids.reset()
    count = ids.next
    ids.next = (count + 1) & 0xFFFFFFFF
    return f"{time.time_ns():x}-{ids.pid:x}-{count:08x}"


def new_ids(n: int) -> list[str]:
    """``n`` unique record ids at once, in ``new_id``'s form (one time for all of them, consecutive
    counts): what ``hookgate serve`` gives each batch of records as it leaves the request path."""
    import time

    ids = _Ids
    if not ids.pid:
        ids.reset()
    start = ids.next
    ids.next = (start + n) & 0xFFFFFFFF
    prefix = f"{time.time_ns():x}-{ids.pid:x}-"
    return [f"{prefix}{(start + i) & 0xFFFFFFFF:08x}" for i in range(n)]


def write_all(fd: int, data: bytes, path: str, what: str) -> None:
    """One ``os.write`` of ``data`` to ``fd`` (open on ``path``, ``what`` it is, in words). Raises OSError
    naming the file: for a write the disk refused (a full disk: ``os.write``'s error names none) and for a
    short one."""
    try:
        written = os.write(fd, data)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, path) from None
    if written != len(data):
        raise OSError(f"a short write to {what} {path} ({written} of {len(data)} bytes)")


def append(state_dir: str, record_id: str, body: str) -> int:
    """Append one record to the spool (no lock: see the module docstring); returns the spool's size in
    bytes afterwards. Raises OSError."""
    directory = spool_dir(state_dir)
    path = os.path.join(directory, SPOOL_NAME)
    line = f"{record_id}\t{body}\n".encode("utf-8", "surrogatepass")
    for _ in range(8):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except FileNotFoundError:
            os.makedirs(directory, mode=0o700, exist_ok=True)
            continue
        try:
            write_all(fd, line, path, "the audit spool")
            written = os.fstat(fd)
            try:
                live = os.stat(path).st_ino == written.st_ino
            except FileNotFoundError:
                live = False
            if live:  # still the spool after the write: a drain renames first and reads after, so it sees it
                return written.st_size
            # a drain renamed this file away: it may have read the line before it was written; write it
            # again to the new spool (the store skips the second copy of an id it has)
        finally:
            os.close(fd)
    raise OSError(f"cannot append to the audit spool {path}")


def _entry(raw: bytes) -> AuditEntry:
    """The record of one spool line. A torn write (a full disk's short write, a crash) leaves a piece
    without its newline, and the next record is appended right after it: a record line has one tab (the
    canonical JSON escapes every tab in it), so the record is what follows the line's last tab, and its id
    is the body's own ``id`` when the text before that tab ends with it (the torn piece is dropped).
    Raises UnicodeDecodeError, ValueError, KeyError, TypeError for a line that holds no record."""
    import json

    from gateway.store.audit_types import AuditEntry

    head, sep, body = raw.decode("utf-8", "surrogatepass").rpartition("\t")
    if not sep:
        raise ValueError("no record")
    record = json.loads(body)
    if not isinstance(record, dict):
        raise ValueError("record is not an object")
    own = record.get("id")
    if isinstance(own, str) and own and head != own and head.endswith(own):
        head = own
    return AuditEntry.from_record(head, body, record)


def drain_after_append(drain: Callable[[], object], state_dir: str | None = None) -> None:
    """Call ``drain`` on the hook path, once this process's record is in the spool: it is never said to be
    lost. A store busy with another writer is left to the next drain, quietly; a drain the record step's
    deadline cut short, or one that failed, is one line on stderr saying the record waits in the spool.
    With ``state_dir``, a failed or cut-short drain leaves a mark (``DRAIN_FAILED``) and the hook calls of
    the next ``DRAIN_BACKOFF`` seconds do not try again: while the store is down (a server that does not
    answer costs the whole deadline) the spool stays past ``DRAIN_BYTES``, and each call would pay it."""
    import sys
    import time

    from gateway.deadline import DeadlineExceeded
    from gateway.errors import StoreBusy

    mark = os.path.join(spool_dir(state_dir), DRAIN_FAILED) if state_dir else None
    if mark is not None:
        try:
            if time.time() - os.stat(mark).st_mtime < DRAIN_BACKOFF:
                return  # a drain failed moments ago: the record waits in the spool, as the line then said
        except OSError:
            pass
    later = f"hook calls try again in {DRAIN_BACKOFF:g} s" if mark else "the next drain retries"
    try:
        drain()
    except StoreBusy:
        return
    except DeadlineExceeded as exc:
        _failed(mark)
        sys.stderr.write(
            f"hookgate: audit: the record is in the spool; moving the spool into the store {exc}, "
            f"{later} (a 'hookgate audit' command moves it now)\n"
        )
    except Exception as exc:
        _failed(mark)
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        sys.stderr.write(
            f"hookgate: audit: the record is in the spool; it was not moved into the store ({text}), {later}\n"
        )
    else:
        if mark is not None:
            import contextlib

            with contextlib.suppress(OSError):
                os.unlink(mark)


def _failed(mark: str | None) -> None:
    """Leave (or renew) the mark of a failed hook-path drain."""
    if mark is None:
        return
    try:
        os.close(os.open(mark, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600))
        os.utime(mark)
    except OSError:
        pass


def drain(state_dir: str, store: object, chain: str) -> int:
    """Move every spooled record into ``store`` (``audit_append(chain, entries)``); returns how many
    were stored. Lines that are not records (a torn write after a crash, bytes that are not UTF-8) are
    skipped; a record written right after a torn piece is kept, under its own id (``_entry``). Raises
    OSError and the store's errors; a file whose append failed stays for the next drain."""
    import contextlib
    import time

    directory = spool_dir(state_dir)
    path = os.path.join(directory, SPOOL_NAME)
    # files set aside by earlier drains first: while the store refuses them (a database that is down),
    # the spool is not renamed too, so an outage leaves one growing spool, not a file per attempt
    stored = _drain_aside(directory, store, chain)
    with contextlib.suppress(FileNotFoundError):
        os.rename(path, f"{path}.{time.time_ns():x}.{os.getpid()}")
    return stored + _drain_aside(directory, store, chain)


def _drain_aside(directory: str, store: object, chain: str) -> int:
    """Append every spool file set aside (``spool.jsonl.<ns>.<pid>``) to ``store``, oldest first, and
    remove each once stored; files another drain holds are left to it. Raises like ``drain``."""
    import fcntl

    try:
        names = sorted(n for n in os.listdir(directory) if n.startswith(SPOOL_NAME + "."))
    except FileNotFoundError:
        return 0
    stored = 0
    for name in names:
        aside = os.path.join(directory, name)
        try:
            fd = os.open(aside, os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:
            continue  # another drain took it
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if not name.endswith(f".{os.getpid()}"):
                    continue  # another drain is on it
                fcntl.flock(fd, fcntl.LOCK_EX)  # ours: wait for writers that opened it before the rename
            if not os.path.exists(aside):
                continue
            with os.fdopen(os.dup(fd), "rb") as fh:
                data = fh.read()
            entries = []
            for raw in data.split(b"\n"):
                try:
                    entries.append(_entry(raw))
                except (UnicodeDecodeError, ValueError, KeyError, TypeError):
                    continue  # not a record hookgate wrote (its lines are UTF-8 `id\tJSON`)
            stored += store.audit_append(chain, entries)  # type: ignore[attr-defined]
            os.unlink(aside)
        finally:
            os.close(fd)
    return stored
