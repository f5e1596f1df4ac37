"""``Store``: the one state-store interface. Everything that must outlive one process (verdict caches,
Stop-guard counts, rate-limit counts, the read-only flag; approvals and audit records as they land)
goes through it, never a module's own file or dict, so that pointing ``settings.store`` at a shared
backend makes every feature correct across machines at once.

Backends: ``gateway.store.sqlite.SQLiteStore`` (embedded, the default). A feature that needs more adds
abstract methods here and implements them in every backend in the same change, with a schema
migration (``gateway.store.sqlite.MIGRATIONS``).

Contract for every method: safe for concurrent processes (each call is atomic on its own); values are
JSON-serializable (``Any`` below means a JSON value); times are ``time.time()`` seconds; a backend
failure raises ``gateway.errors.StoreError``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any


class Store(ABC):
    """Key-value cache with expiry, integer counters (scope, key) and named JSON flags."""

    @abstractmethod
    def cache_get(self, key: str) -> Any | None:
        """The cached value of ``key``, or None when absent or expired."""

    @abstractmethod
    def cache_put(self, key: str, value: Any, ttl: float) -> None:
        """Cache ``value`` under ``key`` for ``ttl`` seconds (replacing any earlier value)."""

    @abstractmethod
    def counter_get(self, scope: str, key: str) -> int:
        """The counter's value (0 when it was never added to or was reset)."""

    @abstractmethod
    def counter_add(self, scope: str, key: str, delta: int = 1) -> int:
        """Add ``delta`` atomically and return the new value."""

    @abstractmethod
    def counter_add_capped(self, scope: str, key: str, limit: int) -> int | None:
        """Add 1 atomically only while the counter is below ``limit``: the new value, or None when the
        limit was already reached (nothing changed). Rate limits use it with a time-bucketed ``key``."""

    @abstractmethod
    def counter_reset(self, scope: str, key: str) -> None:
        """Set the counter back to 0 (remove it)."""

    @abstractmethod
    def flag_get(self, name: str) -> Any | None:
        """The JSON value of flag ``name``, or None when unset."""

    @abstractmethod
    def flag_set(self, name: str, value: Any | None) -> None:
        """Set flag ``name`` to the JSON ``value``; None deletes it."""

    @abstractmethod
    def close(self) -> None:
        """Release the backend's connections (the store is not used afterwards)."""
