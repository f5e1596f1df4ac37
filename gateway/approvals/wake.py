"""Waiting for an answer without busy work: one FIFO per waiting process, written to on every transition.

A waiter creates ``<dir>/<approval id>.<pid>.<random>.fifo`` and watches it with the event loop
(``add_reader``); whoever changes the request (``Desk.decide``, the sweeper, in any process on this
machine) writes one byte into every FIFO of that id. The FIFO is opened read-write, so it never reports
end-of-file while the waiter holds it. A store shared across machines (PostgreSQL) cannot reach another
machine's FIFOs: waiters also re-read the request every ``RECHECK`` seconds (``recheck_interval``), so
an answer given there is seen within that time; on the SQLite store, whose writers all share this
machine's FIFO folder, only every ``LOCAL_RECHECK`` seconds, as a safety net. Linux and macOS
(``os.mkfifo``); a stale FIFO (its waiter died) is removed by the next writer. ``stop_waiting`` ends
every wait of the process at once (a graceful shutdown of ``hookgate serve``).
"""

from __future__ import annotations

import contextlib
import errno
import glob
import os
import secrets
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio

RECHECK = 2.0
"""Seconds between re-reads of a request while waiting on a shared store (answers given on other machines)."""
LOCAL_RECHECK = 30.0
"""The same on the SQLite store (every writer wakes the waiters through the FIFOs)."""


def recheck_interval(store_kind: str) -> float:
    """How often a waiter re-reads its request on a store of ``store_kind`` (``Store.kind``)."""
    return LOCAL_RECHECK if store_kind == "sqlite" else RECHECK


_stopping: list[bool] = [False]
_waiting: set[asyncio.Event] = set()


def stop_waiting() -> None:
    """End every wait of this process now, and any that starts later (``hookgate serve`` got SIGTERM):
    each ``Listener.wait`` returns as if woken and ``stopping()`` is True, so a waiting approval call
    answers at once (its request stays pending in the store, for a retry after the restart). Call it on
    the event loop's thread (``loop.call_soon_threadsafe(stop_waiting)`` from a signal handler)."""
    _stopping[0] = True
    for event in list(_waiting):
        event.set()


def stopping() -> bool:
    """True once ``stop_waiting`` was called in this process."""
    return _stopping[0]


class Listener:
    """One waiter's FIFO: ``await listener.wait(seconds)`` returns True when woken, False on time-out."""

    def __init__(self, fd: int, event: asyncio.Event) -> None:
        self._fd = fd
        self._event = event

    async def wait(self, seconds: float) -> bool:
        import asyncio

        try:
            async with asyncio.timeout(max(seconds, 0.0)):
                await self._event.wait()
        except TimeoutError:
            return False
        self._event.clear()
        with contextlib.suppress(BlockingIOError, InterruptedError):
            while os.read(self._fd, 512):
                pass
        return True


class Waker:
    """Wake-ups for approval ids, through FIFOs under ``directory`` (created on first use)."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    @contextlib.asynccontextmanager
    async def listen(self, approval_id: str) -> AsyncIterator[Listener]:
        """A ``Listener`` for ``approval_id``, registered before the caller re-reads the request, so no
        transition between that read and the wait is missed."""
        import asyncio

        os.makedirs(self.directory, mode=0o700, exist_ok=True)
        path = os.path.join(self.directory, f"{approval_id}.{os.getpid()}.{secrets.token_hex(4)}.fifo")
        os.mkfifo(path, 0o600)
        fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
        loop = asyncio.get_running_loop()
        event = asyncio.Event()
        loop.add_reader(fd, event.set)
        _waiting.add(event)
        if stopping():
            event.set()
        try:
            yield Listener(fd, event)
        finally:
            _waiting.discard(event)
            loop.remove_reader(fd)
            os.close(fd)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)

    def notify(self, approval_id: str) -> int:
        """Wake every waiter of ``approval_id`` on this machine; returns how many were reached."""
        reached = 0
        for path in glob.glob(os.path.join(glob.escape(self.directory), f"{glob.escape(approval_id)}.*.fifo")):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as exc:
                if exc.errno == errno.ENXIO:  # no reader: its waiter died without cleaning up
                    with contextlib.suppress(OSError):
                        os.unlink(path)
                continue
            try:
                os.write(fd, b"!")
                reached += 1
            except BlockingIOError:
                reached += 1  # the pipe is full of earlier wake-ups: the waiter will wake anyway
            except OSError:
                pass
            finally:
                os.close(fd)
        return reached
