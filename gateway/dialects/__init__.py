"""Dialects: how each host's hook JSON maps to the canonical ``HookEvent`` and back.

A dialect module exposes ``NAME``, ``EVENT_NAMES`` (host event name -> canonical),
``parse(data) -> HookEvent``, ``render(decision) -> (exit_code, stdout, stderr)`` and
``host_payload(event) -> dict`` (the event as a hook written for this host expects it on stdin).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any

from gateway.errors import EventError

if TYPE_CHECKING:
    from gateway.events import HookEvent

DIALECTS = {"claude": "gateway.dialects.claude", "kiro": "gateway.dialects.kiro"}


def get_dialect(name: str) -> ModuleType:
    """The dialect module for ``name``. Raises EventError for an unknown dialect."""
    try:
        return importlib.import_module(DIALECTS[name])
    except KeyError:
        raise EventError(f"unknown dialect {name!r} (expected one of: {', '.join(DIALECTS)}, auto)") from None


def detect(data: dict[str, Any]) -> str:
    """Pick the dialect from ``hook_event_name`` (falls back to ``claude``, which reports unknown events)."""
    name = data.get("hook_event_name")
    for dialect in DIALECTS:
        if dialect != "claude" and name in get_dialect(dialect).EVENT_NAMES:
            return dialect
    return "claude"


def parse_event(data: dict[str, Any], dialect: str = "auto") -> HookEvent:
    """Parse a decoded event with ``dialect`` (``auto`` detects). Raises EventError."""
    event: HookEvent = get_dialect(detect(data) if dialect == "auto" else dialect).parse(data)
    return event


def host_payload(event: HookEvent, dialect: str) -> dict[str, Any]:
    """The event as a hook configured in ``dialect``'s format expects it on stdin."""
    if event.dialect == dialect:
        return event.raw
    result: dict[str, Any] = get_dialect(dialect).host_payload(event)
    return result
