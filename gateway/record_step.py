"""``hookgate run``'s record step, bounded: ``submit_record(recorder, event, decision, started_ns, bounded=True)`` hands
the record to the recorder within ``record_budget(event)`` seconds (``gateway.deadline``). Whatever holds it up
(a lock someone holds on a ``jsonl:`` sink, an OpenTelemetry endpoint that never answers) must not hold
back the answer until the host times the hook out and lets the call go ahead: what was written by then
stays, and one line on stderr says the rest is missing. Standard library only.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from gateway.decision import Decision
    from gateway.events import HookEvent

RECORD_SECONDS = 2.0
"""How long ``hookgate run``'s record step may take (it takes well under a millisecond; ``Dispatcher.record``),
plus ``RECORD_SECONDS_PER_CHAR`` for each character of the tool input's and response's string fields."""
RECORD_SECONDS_PER_CHAR = 2e-7
"""Redacting a large value scans it for every pattern's hints (about 50 ns per character): a 60 MiB tool
input takes some 3 s, and gets 12 s more than ``RECORD_SECONDS``."""


def record_budget(event: HookEvent) -> float:
    """Seconds ``hookgate run``'s record step gets for ``event``: ``RECORD_SECONDS`` plus the allowance for
    the string fields of ``tool_input`` and ``tool_response`` (their top level: a cheap estimate)."""
    chars = 0
    payload = event.payload
    for key in ("tool_input", "tool_response"):
        value = payload.get(key)
        if isinstance(value, str):
            chars += len(value)
        elif isinstance(value, dict):
            chars += sum(len(v) for v in value.values() if isinstance(v, str))
    return RECORD_SECONDS + chars * RECORD_SECONDS_PER_CHAR


def submit_record(
    recorder: Any, event: HookEvent, decision: Decision, started_ns: int | None, *, bounded: bool
) -> None:
    """``recorder.submit(event, decision, started_ns)``; with ``bounded`` (``hookgate run``) within
    ``record_budget(event)`` seconds. Never raises."""
    if not bounded:
        recorder.submit(event, decision, started_ns)
        return
    from gateway.deadline import Deadline, DeadlineExceeded

    try:
        with Deadline(record_budget(event)):
            recorder.submit(event, decision, started_ns)
    except DeadlineExceeded as exc:
        sys.stderr.write(
            f"hookgate: audit: cannot record: the record step {exc} (a lock held on a jsonl sink, a slow "
            "OpenTelemetry endpoint?); the answer goes out without it\n"
        )
