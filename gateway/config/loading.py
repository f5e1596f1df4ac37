"""Runtime config: finding config files, loading them fast, and the plain specs the dispatcher uses.

Lookup order (``hookgate run``): ``--config`` (repeatable; hooks are concatenated as Claude Code
merges settings levels), ``$HOOKGATE_CONFIG`` (``os.pathsep``-separated), ``./hookgate.yaml``,
``./hookgate.yml``, ``./hookgate.json``, else the built-in ``configs/default.yaml``.

Loading validates with pydantic (``gateway.config.compiler``) and caches the normalized result as JSON
under ``$HOOKGATE_CACHE_DIR`` (default ``$XDG_CACHE_HOME/hookgate``), keyed by each file's path,
mtime and size, so a hook call that finds a valid cache imports neither pydantic nor PyYAML.
``HOOKGATE_NO_CACHE=1`` turns the cache off. Raises ConfigError (with ``issues``) on any problem.
"""

from __future__ import annotations

import json
import os
import sys

from gateway.config.specs import RuntimeConfig

TYPE_CHECKING = False  # typing costs a hook process ~2 ms to import: not on this path
if TYPE_CHECKING:
    from typing import Any

    from gateway.config.schema import CommandCheck

CACHE_FORMAT = "hookgate-config-12"
LOCAL_NAMES = ("hookgate.yaml", "hookgate.yml", "hookgate.json")


def default_config_path() -> str:
    """Path of the built-in default config shipped inside the package (``configs/default.yaml``)."""
    import configs

    return os.path.join(os.path.dirname(os.path.abspath(configs.__file__)), "default.yaml")


BUILTIN_DEFAULT = "builtin:default"
"""A config path naming the shipped default policy, e.g. ``--config builtin:default --config mine.yaml``."""


def _resolve_path(path: str) -> str:
    """``path`` made absolute; ``builtin:default`` the shipped default. Raises ConfigError for any other
    ``builtin:`` name (there is one built-in config), which would otherwise be read as a relative path."""
    if path == BUILTIN_DEFAULT:
        return default_config_path()
    if path.startswith("builtin:"):
        from gateway.errors import ConfigError

        raise ConfigError(f"{path}: no such built-in config (the built-in one is {BUILTIN_DEFAULT})")
    return os.path.abspath(path)


def config_list(text: str) -> list[str]:
    """The entries of a ``$HOOKGATE_CONFIG`` value: ``os.pathsep``-separated, each ``builtin:NAME`` one entry."""
    parts = text.replace("builtin:", "builtin\0").split(os.pathsep)
    return [p.replace("builtin\0", "builtin:") for p in parts if p]


def find_config_paths(explicit: list[str] | None = None) -> list[str]:
    """Resolve which config files to load (see module docstring for the order; ``builtin:default``
    names the shipped default config)."""
    if explicit:
        return [_resolve_path(p) for p in explicit]
    env = os.environ.get("HOOKGATE_CONFIG")
    if env:
        return [_resolve_path(p) for p in config_list(env)]
    for name in LOCAL_NAMES:
        if os.path.isfile(name):
            return [os.path.abspath(name)]
    return [default_config_path()]


def _cache_dir() -> str:
    base = os.environ.get("HOOKGATE_CACHE_DIR")
    if base:
        return base
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(xdg, "hookgate")


def _cache_key(paths: list[str]) -> str | None:
    """What a cached compile depends on: the cache format, the Python, the project folder, the config files
    (path, mtime, size) and this hookgate's install (this module's path and mtime: an upgrade or reinstall
    writes it anew, so a compile cached by another hookgate is never reused)."""
    try:
        own = os.stat(__file__).st_mtime_ns
    except OSError:
        return None
    parts = [CACHE_FORMAT, sys.version, os.environ.get("CLAUDE_PROJECT_DIR", ""), f"{__file__}\0{own}"]
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            return None
        parts.append(f"{path}\0{st.st_mtime_ns}\0{st.st_size}")
    return "\n".join(parts)


def _cache_file(key: str) -> str:
    """The cache entry's file: named by a checksum of ``key`` (64-bit FNV-1a: no zlib or hashlib import on
    the hook path); the entry stores ``key`` itself, which ``_read_cache`` compares, so a checksum
    collision only costs a re-validation."""
    checksum = 0xCBF29CE484222325
    for byte in key.encode():
        checksum = ((checksum ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return os.path.join(_cache_dir(), f"config-{checksum:016x}.json")


def _read_cache(key: str) -> dict[str, Any] | None:
    try:
        with open(_cache_file(key), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    valid = isinstance(data, dict) and data.get("format") == CACHE_FORMAT and data.get("key") == key
    return data if valid else None


def _write_cache(key: str, data: dict[str, Any]) -> None:
    target = _cache_file(key)
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        tmp = f"{target}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump({**data, "format": CACHE_FORMAT, "key": key}, fh)
        os.replace(tmp, target)
    except OSError:
        pass  # a read-only cache dir only costs speed


def load_config(
    paths: list[str], *, use_cache: bool = True, command_check: CommandCheck | None = None
) -> RuntimeConfig:
    """Load and validate ``paths`` into a ``RuntimeConfig`` (its ``guards`` section tunes the default policy
    while the dispatcher runs this config's handlers: ``gateway.config.guards.scope``). Raises ConfigError
    listing every problem. ``command_check`` (``gateway.config.schema.CommandCheck``, validate's) also
    checks each command handler; with it the cache is neither read nor written."""
    return _load_config(paths, use_cache and command_check is None, command_check)


def _load_config(paths: list[str], use_cache: bool, command_check: CommandCheck | None = None) -> RuntimeConfig:
    use_cache = use_cache and os.environ.get("HOOKGATE_NO_CACHE") != "1"
    key = _cache_key(paths) if use_cache else None
    if key is not None:
        cached = _read_cache(key)
        if cached is not None and all(_stamp(p) == stamp for p, stamp in cached.get("depends", [])):
            try:
                return RuntimeConfig.from_dict(cached)
            except (KeyError, TypeError, ValueError, AttributeError):
                pass  # a damaged cache entry: validate again
    from gateway.config.compiler import compile_configs
    from handlers.base import is_persistent_type

    data = compile_configs(paths, command_check)
    types = {h["type"] for groups in data["hooks"].values() for g in groups for h in g["handlers"]}
    if key is not None and all(is_persistent_type(t) for t in types):
        # a type registered in-process (register_handler) exists only in that process: never cached
        _write_cache(key, {**data, "depends": [[p, _stamp(p)] for p in data.get("depends", [])]})
    return RuntimeConfig.from_dict(data)


def _stamp(path: str) -> str:
    """``mtime_ns:size`` of a file a config depends on (``mcpConfig``), or ``missing``."""
    try:
        st = os.stat(path)
    except OSError:
        return "missing"
    return f"{st.st_mtime_ns}:{st.st_size}"
