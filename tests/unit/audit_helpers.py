"""A store with only the audit tables, for unit tests of the audit methods."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from gateway.audit.sqlite_audit import AUDIT_MIGRATION, SQLiteAuditMixin


class AuditOnlyStore(SQLiteAuditMixin):
    def __init__(self, path: str) -> None:
        self._db = sqlite3.connect(path, isolation_level=None, timeout=5.0, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(AUDIT_MIGRATION)

    def close(self) -> None:
        self._db.close()


def make_store(tmp_path: Path) -> AuditOnlyStore:
    return AuditOnlyStore(str(tmp_path / "state.sqlite3"))
