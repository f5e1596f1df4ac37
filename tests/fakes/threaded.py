"""Python handler functions that say which thread ran them (tests of ``hookgate_threadsafe``)."""

from __future__ import annotations

import threading
from typing import Any


def where(event: dict[str, Any]) -> dict[str, Any]:
    """No decision; the thread's name in ``meta`` (the answer's ``hookgate`` object)."""
    return {"hookgate": {"thread": threading.current_thread().name}}


def where_threadsafe(event: dict[str, Any]) -> dict[str, Any]:
    return where(event)


where_threadsafe.hookgate_threadsafe = True  # type: ignore[attr-defined]


def hold(event: dict[str, Any]) -> dict[str, Any] | None:
    """Holds the caller's thread (the event loop, under serve) for 2 s when the command is ``hold``."""
    import time

    if (event.get("tool_input") or {}).get("command") == "hold":
        time.sleep(2.0)
    return None
