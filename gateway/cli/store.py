"""``hookgate store migrate`` and ``hookgate store status``: the state store's schema and contents.

Both open the store the config selects (``settings.store`` or ``$HOOKGATE_STORE_URL``; the SQLite file
under ``settings.stateDir`` by default) and name it by its redacted URL (never its password).

- ``migrate`` applies the pending schema migrations (PostgreSQL: in one transaction, under an advisory
  lock, so several replicas may run it at once); exit 0, or 1 with a one-line error.
- ``status`` prints the backend, the schema version next to the one this hookgate needs, and the row
  count of every table (``--json``: one object ``{"store", "kind", "version", "required", "tables"}``);
  exit 0 when the schema is current, 1 when it is older (the line names ``hookgate store migrate``) or
  the store cannot be reached. It creates and changes nothing: an SQLite file is opened read-only, and
  when there is none yet it says so (exit 0; ``--json`` adds ``"exists": false``).
"""

from __future__ import annotations

import json

from gateway.cli import _err
from gateway.wire import EXIT_ERROR, EXIT_OK

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from gateway.store import OpenMode
    from gateway.store.base import Store


def _open(args: argparse.Namespace, mode: OpenMode = "admin") -> Store | None:
    """The store the config selects, or None after a one-line error; ``StoreNotFound`` passes through
    (``peek``: an SQLite store not made yet)."""
    from gateway.config import find_config_paths, load_config
    from gateway.errors import ConfigError, StoreError, StoreNotFound
    from gateway.store import open_store

    try:
        config = load_config(find_config_paths(args.config))
        return open_store(config, mode=mode)
    except ConfigError as exc:
        more = f" (and {len(exc.issues) - 1} more; run 'hookgate validate')" if len(exc.issues) > 1 else ""
        _err(f"invalid config: {exc.issues[0]}{more}")
    except StoreNotFound:
        raise
    except StoreError as exc:
        _err(str(exc))
    return None


def _with_store(args: argparse.Namespace, body: Callable[[Store], int], mode: OpenMode = "admin") -> int:
    """Open the store the config selects, run ``body`` on it, close it: ``body``'s exit code, or 1 with a
    one-line error when the store cannot be opened or a ``StoreError`` ends ``body``."""
    from gateway.errors import StoreError

    store = _open(args, mode)
    if store is None:
        return EXIT_ERROR
    try:
        return body(store)
    except StoreError as exc:
        _err(str(exc))
        return EXIT_ERROR
    finally:
        store.close()


def cmd_migrate(args: argparse.Namespace) -> int:
    def migrate(store: Store) -> int:
        applied = store.migrate()
        version = store.schema_version()
        if applied:
            print(
                f"store {store.display}: migrated to schema version {version} "
                f"(applied {', '.join(str(v) for v in applied)})"
            )
        elif version > store.required_version:
            print(
                f"store {store.display}: schema version {version} is newer than this hookgate's "
                f"{store.required_version} (a newer hookgate migrated it; this one works on it); nothing to apply"
            )
        else:
            print(f"store {store.display}: schema version {version} is current; nothing to apply")
        return EXIT_OK

    return _with_store(args, migrate)


def cmd_status(args: argparse.Namespace) -> int:
    def status(store: Store) -> int:
        version = store.schema_version()
        counts = store.table_counts()
        required = store.required_version
        if getattr(args, "json", False):
            print(
                json.dumps(
                    {
                        "store": store.display,
                        "kind": store.kind,
                        "version": version,
                        "required": required,
                        "tables": counts,
                    }
                )
            )
        else:
            print(f"store: {store.display} ({store.kind})")
            print(f"schema version: {version} (this hookgate needs {required})")
            width = max((len(name) for name in counts), default=0)
            for name, count in counts.items():
                print(f"  {name.ljust(width)}  {count} row(s)")
        if version < required:
            _err(
                f"store {store.display}: schema version {version} is older than {required}: "
                "run 'hookgate store migrate'"
            )
            return EXIT_ERROR
        return EXIT_OK

    from gateway.errors import StoreNotFound

    try:  # a status creates nothing: an SQLite file is opened read-only
        return _with_store(args, status, mode="peek")
    except StoreNotFound as exc:
        from gateway.store.sqlite import MIGRATIONS

        if getattr(args, "json", False):
            shown = {"store": exc.where, "kind": "sqlite", "version": 0, "required": len(MIGRATIONS), "tables": {}}
            print(json.dumps({**shown, "exists": False}))
        else:
            print(f"store: {exc.where} (sqlite): not created yet (the first event that keeps state creates it)")
        return EXIT_OK
