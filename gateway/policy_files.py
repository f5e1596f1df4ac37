"""The files the hookgate policies of this process were loaded from (``RuntimeConfig.sources``, and the
``mcpConfig`` files they read): every ``Dispatcher`` adds its config's, and the default policy's guards
(``configs.guards.secrets_guard.config_kind``) count a write to one as a change to the agent's own hook
configuration, whatever the file is called (``policy.yaml`` as much as ``hookgate.yaml``). A guard run as a
plain command hook, without hookgate in its process, cannot know them and goes by file names alone.
Standard library only; nothing at import time."""

from __future__ import annotations

LOADED: set[str] = set()
"""Absolute, normalized paths (``os.path.normpath``)."""


def add(paths: list[str]) -> None:
    """Count ``paths`` (absolute; others are skipped: ``builtin:`` names, in-memory configs) as policy files."""
    import os

    LOADED.update(os.path.normpath(p) for p in paths if isinstance(p, str) and os.path.isabs(p))
