"""``gateway.deadline``: a block stopped after its time (Python code, a blocking flock), nesting, threads."""

from __future__ import annotations

import fcntl
import threading
import time
from pathlib import Path

import pytest

from gateway.deadline import Deadline, DeadlineExceeded


def test_a_blocking_flock_is_interrupted(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    path.write_text("")
    with open(path, "rb") as held, open(path, "rb") as waiting:
        fcntl.flock(held, fcntl.LOCK_EX)
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded) as caught, Deadline(0.2) as deadline:
            fcntl.flock(waiting, fcntl.LOCK_EX)
    assert caught.value.deadline is deadline and deadline.armed
    assert time.monotonic() - started < 10


def test_an_inner_deadline_gives_the_outer_one_back() -> None:
    outer = Deadline(0.6)
    with pytest.raises(DeadlineExceeded) as caught, outer:
        inner = Deadline(0.1)
        try:
            with inner:
                while True:
                    time.sleep(0.01)
        except DeadlineExceeded as exc:
            assert exc.deadline is inner
        while True:  # the outer one still fires
            time.sleep(0.01)
    assert caught.value.deadline is outer


def test_a_block_that_ends_in_time_leaves_no_timer() -> None:
    import signal

    with Deadline(5):
        pass
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_outside_the_main_thread_the_block_runs_unbounded() -> None:
    seen: list[bool] = []

    def work() -> None:
        with Deadline(0.01) as deadline:
            time.sleep(0.1)
        seen.append(deadline.armed)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(10)
    assert seen == [False]
