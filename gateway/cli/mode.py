"""``hookgate mode read-only on|off|status``: switch read-only mode for every process sharing the store.

The mode is the state store's ``readOnly`` flag (``Store.flag_set``), read by the ``readOnly`` built-in
on each call, so switching it takes effect at once for every ``hookgate run`` process, a running
``hookgate serve`` and Python hosts using the same store (``settings.stateDir``, or a shared store).
The store is the one the config names (``--config`` as for ``hookgate run``). ``status`` prints
``read-only: on|off`` with where it comes from (``settings.readOnly: true`` keeps it on whatever the
flag says), then ``store: WHERE (KIND)``, the store it read and wrote (a URL shown without its
password), and whether the config has a ``readOnly`` handler at all. Exit 0; 1 on a usage, config or
store error (one line on stderr).
"""

from __future__ import annotations

from gateway.cli import _err
from gateway.wire import EXIT_ERROR, EXIT_OK

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from gateway.config.specs import RuntimeConfig


def _has_read_only_handler(config: RuntimeConfig) -> bool:
    return any(
        h.type == "builtin" and h.options.get("name") == "readOnly"
        for groups in config.hooks.values()
        for g in groups
        for h in g.handlers
    )


def cmd_mode(args: argparse.Namespace) -> int:
    from gateway.config import find_config_paths, load_config
    from gateway.errors import ConfigError, StoreError
    from gateway.store import open_store
    from handlers.builtin.read_only import FLAG

    try:
        config = load_config(find_config_paths(args.config))
    except ConfigError as exc:
        _err(f"invalid config: {exc.issues[0]}")
        return EXIT_ERROR
    try:
        store = open_store(config)
        try:
            if args.state in ("on", "off"):
                store.flag_set(FLAG, True if args.state == "on" else None)
            flag = bool(store.flag_get(FLAG))
            where = f"{store.display} ({store.kind})"  # redacted: never a password
        finally:
            store.close()
    except StoreError as exc:
        _err(str(exc) if str(exc).startswith("state store") else f"state store: {exc}")
        return EXIT_ERROR
    forced = bool(config.settings.get("read_only"))
    source = " (settings.readOnly: true)" if forced else (" (hookgate mode read-only on)" if flag else "")
    print(f"read-only: {'on' if forced or flag else 'off'}{source}")
    print(f"store: {where}")
    if args.state == "off" and forced:
        print("note: settings.readOnly: true in the config keeps read-only mode on")
    if not _has_read_only_handler(config):
        print("note: no {type: builtin, name: readOnly} handler in the config, so nothing is denied")
    return EXIT_OK
