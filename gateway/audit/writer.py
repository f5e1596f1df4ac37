"""``hookgate serve``'s audit writer process: redaction, canonical JSON, hashing and the store's writes
of every record, off the server's interpreter (and so off its GIL and its core).

The server takes each record's parts as it answers the event (``gateway.audit.recorder``:
``record_parts`` and a pickle, a few microseconds, unredacted), and its writer thread sends what is
queued every ``FLUSH_SECONDS`` to this child process over a pipe; the child builds each record
(``record_of``), redacts and truncates it (``Redactor``), before
anything reaches a sink, and appends the batch to the configured sinks in one store transaction
(hash-chained), drains the spool of the ``hookgate run`` processes beside it every second and applies
retention every ten minutes: the same ``Recorder`` code the thread runs when there is no child. The
pipe is private to the two processes and nothing in it touches the disk unredacted.

Protocol (parent to child, on the child's stdin): frames of a 4-byte big-endian length and a pickle. The
first frame is the child's setup (``setup``: the normalized ``audit`` section, ``state_dir``,
``settings`` (``settings.store`` and ``stateDir``: which store to open), ``config_hash``, ``version``);
every later one is a batch ``(seq, [(id, record), ...])``, each record pickled on its own (the server
pickles a record's parts as it answers the event: ``(epoch seconds, span start ns or None, parts)``) and
paired with its id (given by the server's writer thread as it makes the batch,
``gateway.audit.spool.new_ids``). Once a batch is written (or, if the store cannot take it, spooled) the
child writes ``seq`` as 4 big-endian bytes to its stdout: the parent keeps each batch until then, and
writes what a dead child never acknowledged itself (``gateway.audit.pipe.WriterProcess``). End of input
(the parent closed the pipe, or died) makes the child write what it has, drain the spool once more,
close the store and exit 0. The child runs in a session of its own (a Ctrl-C on the server's terminal
never reaches it) and ignores SIGINT and SIGTERM (a ``systemctl stop`` signals every process of the
service): its parent decides when it ends, by closing the pipe. Errors go to stderr (the server's) as
log lines of ``hookgate.audit``.

Run as ``python -m gateway.audit.writer`` (``gateway.audit.pipe.WriterProcess`` starts it; the frames
are ``gateway.audit.pipe``'s).
"""

from __future__ import annotations

import os
import sys

from gateway.audit.pipe import HEADER, read_frame

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

UPKEEP_SECONDS = 1.0
"""The child looks after the spool and retention at least this often, also when no batch comes."""


class _Settings:
    """What ``open_store`` reads of a config: its ``settings``."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = settings


def idle_priority() -> None:
    """Run this process under ``SCHED_IDLE`` (Linux; elsewhere, or where it is refused, nothing
    changes): it gets only CPU time nothing else wants, and the scheduler treats a CPU running it as
    idle when it places a woken task, so the server and its clients are never queued behind the
    writer or moved off their CPU for it. If the writer falls behind, the server writes batches itself
    (``Recorder.MAX_LAG``), so records never wait on it without bound."""
    policy = getattr(os, "SCHED_IDLE", None)
    if policy is None:
        return
    import contextlib

    with contextlib.suppress(OSError):
        os.sched_setscheduler(0, policy, os.sched_param(0))


def main() -> int:
    """The child (see module docstring). Exit 0 at end of input; 2 on a bad setup frame."""
    import logging
    import select
    import signal
    import time

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    idle_priority()
    logger = logging.getLogger("hookgate")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s:     hookgate: %(message)s"))
    logger.addHandler(handler)
    logger.propagate = False

    from gateway.audit.recorder import Recorder
    from gateway.store import open_store

    fd = sys.stdin.fileno()
    ack = sys.stdout.fileno()
    try:
        setup = read_frame(fd)
        settings = _Settings(setup["settings"])
        recorder = Recorder(
            setup["audit"],
            state_dir=setup["state_dir"],
            store_factory=lambda: open_store(settings),  # type: ignore[arg-type]  # reads .settings only
            config_hash=setup["config_hash"],
            version=setup["version"],
            background=True,
        )
    except Exception as exc:
        sys.stderr.write(f"hookgate: audit writer: bad setup: {type(exc).__name__}: {exc}\n")
        return 2
    upkeep = recorder.upkeep_clock()
    try:
        while True:
            ready, _, _ = select.select([fd], [], [], UPKEEP_SECONDS)
            if ready:
                try:
                    seq, batch = read_frame(fd)
                except EOFError:
                    break
                try:
                    recorder.write_packed(batch)
                except Exception as exc:  # one bad batch must not end the writer
                    recorder._report(exc)
                os.write(ack, HEADER.pack(seq))
            try:
                upkeep(time.monotonic(), False)
            except Exception as exc:
                recorder._report(exc)
        upkeep(time.monotonic(), True)
    finally:
        recorder.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
