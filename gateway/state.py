"""A small SQLite state store under ``settings.stateDir``: verdict caches and per-session counters.

Safe for concurrent hook processes: WAL journal, a 5 s busy timeout, and single-statement upserts.
Each call opens its own short transaction; values are JSON text. Time is ``time.time()`` seconds.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cache (key TEXT PRIMARY KEY, value TEXT NOT NULL, expires REAL NOT NULL);
CREATE TABLE IF NOT EXISTS counters (scope TEXT NOT NULL, key TEXT NOT NULL, value INTEGER NOT NULL,
                                     updated REAL NOT NULL, PRIMARY KEY (scope, key));
"""


class StateStore:
    """Key-value cache with expiry and integer counters, in ``<state_dir>/state.sqlite3``."""

    def __init__(self, state_dir: str) -> None:
        os.makedirs(state_dir, exist_ok=True)
        self.path = os.path.join(state_dir, "state.sqlite3")
        self._db = sqlite3.connect(self.path, timeout=5.0, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(_SCHEMA)

    def cache_get(self, key: str) -> Any | None:
        row = self._db.execute("SELECT value, expires FROM cache WHERE key = ?", (key,)).fetchone()
        if row is None or row[1] < time.time():
            return None
        return json.loads(row[0])

    def cache_put(self, key: str, value: Any, ttl: float) -> None:
        self._db.execute("INSERT INTO cache (key, value, expires) VALUES (?, ?, ?) "
                         "ON CONFLICT(key) DO UPDATE SET value = excluded.value, expires = excluded.expires",
                         (key, json.dumps(value), time.time() + ttl))

    def counter_get(self, scope: str, key: str) -> int:
        row = self._db.execute("SELECT value FROM counters WHERE scope = ? AND key = ?", (scope, key)).fetchone()
        return int(row[0]) if row else 0

    def counter_add(self, scope: str, key: str, delta: int = 1) -> int:
        """Add ``delta`` atomically and return the new value."""
        row = self._db.execute(
            "INSERT INTO counters (scope, key, value, updated) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(scope, key) DO UPDATE SET value = value + excluded.value, updated = excluded.updated "
            "RETURNING value", (scope, key, delta, time.time())).fetchone()
        return int(row[0])

    def counter_reset(self, scope: str, key: str) -> None:
        self._db.execute("DELETE FROM counters WHERE scope = ? AND key = ?", (scope, key))

    def close(self) -> None:
        self._db.close()
