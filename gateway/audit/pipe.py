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
