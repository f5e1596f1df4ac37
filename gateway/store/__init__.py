"""The state store: ``base.Store`` (the one interface), ``sqlite.SQLiteStore`` (embedded default), and
``open_store(config)``, which picks the backend ``settings`` name. May import ``gateway.errors`` and the
standard library only (backends import their drivers when opened)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gateway.config import RuntimeConfig
    from gateway.store.base import Store


def default_state_dir() -> str:
    """``$XDG_STATE_HOME/hookgate``, else ``~/.local/state/hookgate``."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "hookgate")


def open_store(config: RuntimeConfig) -> Store:
    """The store ``config`` names: today the SQLite file under ``settings.stateDir`` (default
    ``default_state_dir()``). Raises StoreError when it cannot be opened."""
    from gateway.store.sqlite import SQLiteStore

    state_dir = os.path.expanduser(config.settings.get("state_dir") or default_state_dir())
    return SQLiteStore(state_dir)
