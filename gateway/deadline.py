"""``Deadline(seconds)``: stop the code inside ``with Deadline(...)`` after ``seconds`` by raising
``DeadlineExceeded`` in it, for the steps of ``hookgate run`` that must never hold back the hook's answer
(the audit record step; a user's ``audit.redact`` pattern that backtracks).

It is a ``SIGALRM`` timer (``setitimer``, POSIX), so it works in the main thread only; in another thread,
or where there is no ``SIGALRM``, the block runs unbounded (``armed`` is False). It interrupts Python code
and the blocking system calls Python retries (``flock``, ``connect``, ``read``: PEP 475) and ``re``
matching, which checks for signals. Deadlines nest: an inner one takes the timer and gives the outer
one back, less the time spent, when it ends (the outer one fires at once if its time is up). A timer
the process had set before (``signal.alarm``) is given back the same way. Standard library only;
``_signal`` (the C module: ``signal`` imports ``enum``) and ``time`` are imported on entry.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import FrameType, TracebackType


class DeadlineExceeded(BaseException):
    """Raised inside a ``Deadline`` block whose time ran out. A ``BaseException``: the ``except Exception``
    clauses that keep a record step from failing a hook must not swallow it and carry on unbounded.
    ``deadline``: the ``Deadline`` that fired."""

    def __init__(self, deadline: Deadline) -> None:
        super().__init__(f"took longer than {deadline.seconds:g} s")
        self.deadline = deadline


class Deadline:
    """``with Deadline(seconds):`` (seconds: float > 0). See the module docstring."""

    __slots__ = ("_done", "_old", "_previous", "_started", "armed", "seconds")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.armed = False
        self._done = False
        self._previous: object = None
        self._old = (0.0, 0.0)
        self._started = 0.0

    def _fire(self, signum: int, frame: FrameType | None) -> None:
        if not self._done:  # a signal that arrives as the block ends changes nothing
            raise DeadlineExceeded(self)

    def __enter__(self) -> Deadline:
        import _signal as signal  # the C module: signal.py imports enum, a few ms on the hook path
        import time

        try:
            self._previous = signal.signal(signal.SIGALRM, self._fire)
        except (ValueError, AttributeError):  # not the main thread, or no SIGALRM here
            return self
        self.armed = True
        self._started = time.monotonic()
        delay = self.seconds
        old = signal.getitimer(signal.ITIMER_REAL)
        if old[0]:
            delay = min(delay, old[0])  # an outer deadline (or timer) due sooner: fire then
        self._old = signal.setitimer(signal.ITIMER_REAL, delay)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._done = True
        if not self.armed:
            return
        import _signal as signal  # the C module: signal.py imports enum, a few ms on the hook path
        import time

        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self._previous)
        old_delay, old_interval = self._old
        if old_delay:
            left = old_delay - (time.monotonic() - self._started)
            signal.setitimer(signal.ITIMER_REAL, max(left, 1e-6), old_interval)
