"""The pipe between ``hookgate serve`` and its audit writer process (``gateway.audit.writer``): the
frames (a 4-byte big-endian length and a pickle) and ``WriterProcess``, the server's handle on the
child. See ``gateway.audit.writer`` for the protocol."""

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
    """The parent's handle on one writer child (see ``gateway.audit.writer``). ``setup``: the first
    frame. Raises OSError when the child cannot be started.

    Every batch is kept until the child acknowledges it (a 4-byte sequence number on its stdout, sent
    once the batch is written); ``unwritten`` gives back what a child that died never acknowledged,
    which the parent then writes itself (each record carries its id, and the store skips an id it
    already has, so a batch the child wrote just before dying is not stored twice)."""

    def __init__(self, setup: dict[str, Any]) -> None:
        import subprocess
        from collections import deque

        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self.proc: subprocess.Popen[bytes] = subprocess.Popen(
            [sys.executable, "-m", "gateway.audit.writer"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            close_fds=True,
            start_new_session=True,  # a Ctrl-C on the server's terminal goes to its process group, not here
        )
        assert self.proc.stdout is not None
        self._acks = self.proc.stdout.fileno()
        os.set_blocking(self._acks, False)
        self._partial = b""
        self._seq = 0
        self._unacked: deque[tuple[int, list[tuple[str, bytes]]]] = deque()
        self._write(frame(setup))

    def send(self, batch: list[tuple[str, bytes]]) -> None:
        """Send one batch of packed records (``(id, pickled parts)`` pairs: ``Recorder._batch``). Raises
        OSError (BrokenPipeError: the child is gone)."""
        self._seq += 1
        self._unacked.append((self._seq, batch))
        self._write(frame((self._seq, batch)))
        self._read_acks()

    def _write(self, data: bytes) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        stdin.write(data)
        stdin.flush()

    def _read_acks(self) -> bool:
        """Forget the batches the child has acknowledged so far; True at the end of its output."""
        while True:
            try:
                chunk = os.read(self._acks, 4096)
            except BlockingIOError:
                return False
            except OSError:
                return True
            if not chunk:
                return True
            data = self._partial + chunk
            whole = len(data) - len(data) % HEADER.size
            self._partial = data[whole:]
            for offset in range(0, whole, HEADER.size):
                (seq,) = HEADER.unpack_from(data, offset)
                while self._unacked and self._unacked[0][0] <= seq:
                    self._unacked.popleft()

    def lag(self) -> int:
        """How many batches sent are not yet acknowledged (written)."""
        self._read_acks()
        return len(self._unacked)

    def unwritten(self) -> list[tuple[str, bytes]]:
        """The packed records of every batch the child has not acknowledged (call once it has ended)."""
        self._read_acks()
        left = [packed for _, batch in self._unacked for packed in batch]
        self._unacked.clear()
        return left

    def stop(self, timeout: float) -> bool:
        """Close the pipe and wait up to ``timeout`` seconds for the child to write everything and exit.
        True when it exited in time (then ``unwritten`` says what it did not write); False when it is
        still writing (it finishes on its own)."""
        import contextlib
        import subprocess

        stdin = self.proc.stdin
        if stdin is not None:
            with contextlib.suppress(OSError):  # already gone: the exit status says how it ended
                stdin.close()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
