"""``hookgate serve``'s audit writer process: redaction, canonical JSON, hashing and the store's writes
of every record, off the server's interpreter (and so off its GIL and its core).

The server's writer thread (``gateway.audit.recorder``) only builds each queued record
(``build_record``: a few microseconds, unredacted) and sends a batch every ``FLUSH_SECONDS`` to this
child process over a pipe; the child redacts and truncates each record (``Redactor``), before
anything reaches a sink, and appends the batch to the configured sinks in one store transaction
(hash-chained), drains the spool of the ``hookgate run`` processes beside it every second and applies
retention every ten minutes: the same ``Recorder`` code the thread runs when there is no child. The
pipe is private to the two processes and nothing in it touches the disk unredacted.

Protocol (parent to child, on the child's stdin): frames of a 4-byte big-endian length and a pickle.
The first frame is the child's setup (``setup``: the normalized ``audit`` section, ``state_dir``,
``settings`` (``settings.store`` and ``stateDir``: which store to open), ``config_hash``,
``version``); every later one is a batch: a list of records, each pickled on its own (the server
pickles a record as it answers the event) as ``(epoch seconds, span start ns or None, record)``.
End of input (the parent closed the pipe, or died) makes the child write what it has, drain the
spool once more, close the store and exit 0. The child ignores SIGINT and SIGTERM (a Ctrl-C or a
``systemctl stop`` reaches the whole process group): its parent decides when it ends, by closing the
pipe. Errors go to stderr (the server's) as log lines of ``hookgate.audit``.

Run as ``python -m gateway.audit.writer`` (``WriterProcess`` starts it).
"""

from __future__ import annotations

import os
import pickle
import struct
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from typing import Any

HEADER = struct.Struct(">I")
UPKEEP_SECONDS = 1.0
"""The child looks after the spool and retention at least this often, also when no batch comes."""


def frame(value: Any) -> bytes:
    """``value`` as one frame (length, pickle). Raises what pickling raises (an unpicklable value)."""
    body = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(body)) + body


def _read_exact(fd: int, size: int) -> bytes:
    """``size`` bytes from ``fd`` (unbuffered: ``select`` on it then tells the truth). Raises EOFError
    at the end of input."""
    chunks = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int) -> Any:
    """The next frame's value from ``fd``, or raises EOFError at the end of input (also inside a frame)."""
    (size,) = HEADER.unpack(_read_exact(fd, HEADER.size))
    return pickle.loads(_read_exact(fd, size))


class WriterProcess:
    """The parent's handle on one writer child (see module docstring). ``setup``: the first frame.
    Raises OSError when the child cannot be started."""

    def __init__(self, setup: dict[str, Any]) -> None:
        import subprocess

        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self.proc: subprocess.Popen[bytes] = subprocess.Popen(
            [sys.executable, "-m", "gateway.audit.writer"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            env=env,
            close_fds=True,
        )
        self.send(setup)

    def send(self, value: Any) -> None:
        """Send ``value`` as one frame. Raises OSError (BrokenPipeError: the child is gone) or a
        pickling error (then nothing was sent)."""
        self.write(frame(value))

    def write(self, data: bytes) -> None:
        """Send one frame made with ``frame``. Raises OSError (BrokenPipeError: the child is gone)."""
        stdin = self.proc.stdin
        assert stdin is not None
        stdin.write(data)
        stdin.flush()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, timeout: float) -> bool:
        """Close the pipe and wait up to ``timeout`` seconds for the child to write everything and exit.
        True when it exited 0 in time (else it finishes on its own)."""
        import contextlib
        import subprocess

        stdin = self.proc.stdin
        if stdin is not None:
            with contextlib.suppress(OSError):  # already gone: the exit status says how it ended
                stdin.close()

        try:
            return self.proc.wait(timeout) == 0
        except subprocess.TimeoutExpired:
            return False


class _Settings:
    """What ``open_store`` reads of a config: its ``settings``."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = settings


def main() -> int:
    """The child (see module docstring). Exit 0 at end of input; 2 on a bad setup frame."""
    import logging
    import select
    import signal
    import time

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    logger = logging.getLogger("hookgate")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s:     hookgate: %(message)s"))
    logger.addHandler(handler)
    logger.propagate = False

    from gateway.audit.recorder import Recorder
    from gateway.store import open_store

    fd = sys.stdin.fileno()
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
                    blobs = read_frame(fd)
                except EOFError:
                    break
                try:
                    recorder.write_built([pickle.loads(blob) for blob in blobs])
                except Exception as exc:  # one bad batch must not end the writer
                    recorder._report(exc)
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
