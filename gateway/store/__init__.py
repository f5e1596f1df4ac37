"""The state store: ``base.Store`` (the one interface), ``sqlite.SQLiteStore`` (embedded default),
``postgres.PostgresStore`` (shared), and ``open_store(config)``, which picks the backend ``settings``
(or ``$HOOKGATE_STORE_URL``) names. May import ``gateway.errors``, ``gateway.wire`` and the standard library only
(backends import their drivers when opened: psycopg only when PostgreSQL is configured).

Schema check: SQLite migrates itself when opened. PostgreSQL is migrated by ``hookgate store migrate``
(one person or deploy step, not every process); ``check_schema`` refuses a database older than this
hookgate with a one-line ``StoreSchemaError`` naming that command. ``hookgate serve`` checks at start;
``hookgate run`` checks on its first use of the store and remembers the version it saw in a stamp file
under the state dir, so later events spend no round trip on it (a database that lost its tables later
still fails with the same message: missing tables map to ``StoreSchemaError``).
"""

from __future__ import annotations

import os

from gateway.wire import default_state_dir as default_state_dir  # re-exported: its home is the wire module

TYPE_CHECKING = False  # typing costs ~2 ms to import; `hookgate run` loads this package to open the store
if TYPE_CHECKING:
    from typing import Literal

    from gateway.config.specs import RuntimeConfig
    from gateway.store.base import Store
    from gateway.store.postgres import PostgresStore

    OpenMode = Literal["run", "serve", "api", "admin", "peek"]


def state_dir(config: RuntimeConfig) -> str:
    """``settings.stateDir`` (``~`` expanded), else ``default_state_dir()``."""
    return os.path.expanduser(config.settings.get("state_dir") or default_state_dir())


RUN_OP_TIMEOUT = 5.0
"""Seconds a state-store operation of a ``hookgate run`` handler may take on PostgreSQL before it is
cancelled (``open_store(op_timeout=...)``): a row or table locked by another session must not hold a
hook call without bound. ``serve`` bounds its calls with the handler's deadline; CLI commands (a
migration waiting its turn, a long export) and the audit writer (a spool moved after a long outage) are
not bounded."""


def open_store(
    config: RuntimeConfig,
    mode: OpenMode = "run",
    *,
    busy_timeout: float | None = None,
    op_timeout: float | None = None,
) -> Store:
    """The store ``config`` names: ``$HOOKGATE_STORE_URL``, else ``settings.store``, else the SQLite file
    under ``settings.stateDir``. ``mode``: ``serve`` (async pool; no network I/O here), ``run``/``api``
    (one connection; the schema is checked, see module docstring), ``admin`` (CLI: no check), ``peek``
    (``admin`` that creates nothing: an SQLite file is opened read-only, ``StoreNotFound`` when absent).
    ``busy_timeout``: how long an SQLite store waits for another process's write lock (default
    ``gateway.store.sqlite.BUSY_TIMEOUT``; then StoreBusy). Raises StoreError (one line, no password) when it
    cannot be opened. ``op_timeout``: PostgreSQL only, see ``RUN_OP_TIMEOUT``."""
    from gateway.errors import StoreError
    from gateway.store.url import parse, selected

    try:
        choice = parse(selected(config.settings.get("store")))
    except ValueError as exc:
        raise StoreError(str(exc)) from None
    if choice.kind == "sqlite":
        from gateway.store.sqlite import SQLiteStore

        waits = {} if busy_timeout is None else {"busy_timeout": busy_timeout}
        return SQLiteStore(choice.sqlite_dir or state_dir(config), readonly=mode == "peek", **waits)
    try:
        from gateway.store.postgres import PostgresStore
    except ImportError:
        raise StoreError(f"store {choice.display} needs psycopg: pip install 'hookgate[postgres]'") from None
    store = PostgresStore(
        choice.url, mode="admin" if mode == "admin" or mode == "peek" else mode, op_timeout=op_timeout
    )
    if mode in ("run", "api"):
        try:
            check_schema(store, stamp_dir=state_dir(config))
        except BaseException:
            store.close()
            raise
    return store


def check_schema(store: PostgresStore, stamp_dir: str | None = None) -> int:
    """The database's schema version, when it is at least the one this hookgate needs; else
    ``StoreSchemaError`` naming ``hookgate store migrate``. With ``stamp_dir``: skipped (no round trip)
    once a check there saw the needed version, recorded after a passing check."""
    from gateway.errors import StoreSchemaError

    stamp = None
    if stamp_dir is not None:
        import hashlib

        stamp = os.path.join(stamp_dir, "pg-schema-" + hashlib.sha256(store.display.encode()).hexdigest()[:16])
        try:
            with open(stamp, encoding="ascii") as fh:
                seen = int(fh.read().strip() or 0)
            if seen >= store.required_version:
                return seen
        except (OSError, ValueError):
            pass
    version = store.schema_version()
    if version < store.required_version:
        raise StoreSchemaError(
            f"store {store.display} has schema version {version}, this hookgate needs "
            f"{store.required_version}: run 'hookgate store migrate'"
        )
    if stamp is not None:
        try:
            os.makedirs(os.path.dirname(stamp), mode=0o700, exist_ok=True)
            tmp = f"{stamp}.{os.getpid()}"
            with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="ascii") as fh:
                fh.write(str(version))
            os.replace(tmp, stamp)
        except OSError:
            pass  # no stamp: the next process checks again
    return version


def check_at_start(config: RuntimeConfig) -> str | None:
    """``hookgate serve``'s start check. SQLite: nothing to check (it migrates when opened). PostgreSQL:
    the schema version, once: raises ``StoreSchemaError`` when it is too old (``serve`` exits with that
    line) or ``StoreError`` when psycopg is missing; returns a warning line when the database cannot be
    reached now (``serve`` starts anyway: stateless handlers work, stateful ones follow failClosed until
    it returns); None when all is well."""
    from gateway.errors import StoreUnavailable
    from gateway.store.url import parse, selected

    try:
        if parse(selected(config.settings.get("store"))).kind != "postgresql":
            return None
    except ValueError:
        pass  # open_store raises the StoreError below
    from gateway.store.postgres import PostgresStore

    store = open_store(config, mode="admin")
    try:
        if isinstance(store, PostgresStore):
            check_schema(store)
    except StoreUnavailable as exc:
        return f"{exc}; starting anyway: stateful decisions follow failClosed until it answers"
    finally:
        store.close()
    return None
