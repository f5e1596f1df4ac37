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
