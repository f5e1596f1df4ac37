"""Events over the size limit: read within bounds, and answer with a deny, never a silent pass.

Hosts send whatever size the tool call has, and every host treats hookgate's exit 1 (and Claude Code's
``http`` hook any non-2xx) as "go ahead": so an event padded past a limit must not fail open.
``hookgate run`` reads stdin into one buffer of at most ``event_limit() + 1`` bytes (default 64 MiB;
``HOOKGATE_MAX_EVENT_BYTES`` overrides it), ``hookgate serve`` streams the body into one growing
buffer (``--max-body``, same default), and the JSON text is decoded once. Past the limit, reading goes
on but keeps only the first ``HEAD_BYTES`` and the last ``TAIL_BYTES`` (``Oversized``), to find the
event's ``hook_event_name`` (``sniff_event_name``); ``oversize_decision`` then answers as ``hookgate
run`` does for a broken policy: a deny (PreToolUse, PermissionRequest) or a block on events where a
block holds an action back, rendered in the host's dialect; on the others (Stop, PostToolUse,
SessionStart, ...), where a block would only loop or means nothing, ``None`` (exit 1 with one line).
An event whose name cannot be found is denied as a PreToolUse.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from gateway.decision import Decision

HEAD_BYTES = 1024 * 1024
"""Bytes kept from the start of an oversized event (where hosts put ``hook_event_name``)."""
TAIL_BYTES = 64 * 1024
"""Bytes kept from its end (in case the name comes last)."""
DRAIN_LIMIT = 1024 * 1024 * 1024
"""``hookgate serve`` reads (and drops) at most this much of an oversized body before answering."""
_NAME = re.compile(rb'"hook_event_name"\s*:\s*"((?:[^"\\]|\\.){1,100})"')


class Oversized:
    """What is kept of an event over ``limit`` bytes: its ``size`` (bytes read), ``head`` and ``tail``."""

    def __init__(
        self,
        data: bytes | bytearray,
        limit: int,
        problem: str | None = None,
        setting: str = "HOOKGATE_MAX_EVENT_BYTES",
    ) -> None:
        self.head = bytes(data[:HEAD_BYTES])
        self.tail = bytes(data[-TAIL_BYTES:])
        self.size = len(data)
        self.limit = limit
        self.problem = problem
        """Set for an event within the limit that cannot be decoded (``EventUndecodable``'s message)."""
        self.setting = setting
        """What set the limit, for the message (``--max-body``, ``HOOKGATE_MAX_EVENT_BYTES``)."""

    def feed(self, chunk: bytes) -> None:
        """Count (and drop) more of the event; only its last ``TAIL_BYTES`` are kept."""
        if chunk:
            self.size += len(chunk)
            self.tail = (self.tail + chunk)[-TAIL_BYTES:]

    def drain(self, read: Callable[[int], bytes]) -> None:
        """Read the rest of a stream (``read(n) -> bytes``), keeping only the tail."""
        while chunk := read(1024 * 1024):
            self.feed(chunk)

    @property
    def message(self) -> str:
        if self.problem is not None:
            return f"{self.problem}: it cannot be checked, so it is not let through"
        return (
            f"event is {self.size} bytes, over the limit of {self.limit} bytes ({self.setting}): "
            "it cannot be checked, so it is not let through"
        )

    def event_name(self) -> str | None:
        """The event's ``hook_event_name`` as found in the head or the tail, or None."""
        return sniff_event_name(self.head) or sniff_event_name(self.tail)


def sniff_event_name(data: bytes) -> str | None:
    """The ``hook_event_name`` string found in a piece of an event's JSON text, or None."""
    match = _NAME.search(data)
    if match is None:
        return None
    try:
        name = json.loads(b'"' + match.group(1) + b'"')
    except ValueError:
        return None
    return name if isinstance(name, str) else None


def oversize_decision(over: Oversized, dialect: str) -> tuple[str, Decision | None]:
    """``(dialect, decision)`` for an event over the limit: the dialect that renders the answer (``auto``
    resolved from the event's name) and a deny/block decision, or None where a block holds nothing
    back (the caller exits 1 with ``over.message``)."""
    from gateway.decision import HandlerResult, Verdict, merge
    from gateway.dialects import DIALECTS, get_dialect
    from gateway.events import CONTINUE_EVENTS, EVENTS, PERMISSION_EVENTS

    host_name = over.event_name()
    if dialect == "auto":
        dialect = next((d for d in ("kiro", "gemini") if host_name in get_dialect(d).EVENT_NAMES), "claude")
    names = getattr(get_dialect(dialect), "EVENT_NAMES", None) if dialect in DIALECTS else None
    canonical = names.get(host_name, host_name) if isinstance(names, dict) and dialect != "claude" else host_name
    if canonical not in EVENTS:
        canonical = "PreToolUse"  # no readable name: deny, the safe side
    spec = EVENTS[canonical]
    if canonical in CONTINUE_EVENTS or not (spec.blocks or spec.tool):
        return dialect, None
    reason = f"hookgate: {over.message}"
    verdict = (
        Verdict(permission="deny", permission_reason=reason)
        if canonical in PERMISSION_EVENTS
        else Verdict(block=True, reason=reason)
    )
    result = HandlerResult(id="hookgate", type="internal", status="ok", verdict=verdict, message=over.message)
    return dialect, merge(canonical, [result], blocks=spec.blocks)
