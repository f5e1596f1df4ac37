"""Launching a stdio MCP server: the ``${...}`` placeholders and ``allowedEnvVars`` expansion of its
``command``, ``args``, ``env`` and ``cwd`` (also of an HTTP server's ``headers``). Standard library only, so
the config sections (``handlers.mcp_config``) check them without the session machinery."""

from __future__ import annotations

import os
import re
from typing import Any

from handlers import placeholders
from handlers.placeholders import PLACEHOLDERS as PLACEHOLDERS  # re-exported: mcp_config, mcp_sessions

_BRACED = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_ANY = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


# ---------------------------------------------------------------------------- interpolation


def env_refs(text: str, *, plain: bool = False) -> list[str]:
    """Names referenced as ``${NAME}`` in ``text`` (also ``$NAME`` when ``plain``, the header syntax)."""
    pattern = _ANY if plain else _BRACED
    return [m.group(1) or m.group(2) for m in pattern.finditer(text)]


def expand(text: str, values: dict[str, str], allowed: set[str] | frozenset[str], *, plain: bool = False) -> str:
    """Replace ``${NAME}`` (and ``$NAME`` when ``plain``): hookgate placeholders from ``values``, names in
    ``allowed`` from the environment, any other name with the empty string (the http handler's rule)."""

    def repl(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        if name in values:
            return values[name]
        return os.environ.get(name, "") if name in allowed else ""

    return (_ANY if plain else _BRACED).sub(repl, text)


def placeholder_values(base_dir: str) -> dict[str, str]:
    """Values of ``PLACEHOLDERS`` for a server defined in a config file in ``base_dir``."""
    return placeholders.values(base_dir, placeholders.infer_project_dir(base_dir))


def stdio_launch(server: dict[str, Any]) -> tuple[str, list[str], dict[str, str], str | None]:
    """``(command, args, env, cwd)`` of a normalized stdio server entry, placeholders and env expanded.

    A relative ``cwd`` is relative to the config file's folder; a ``command`` with a ``/`` that is not
    absolute is relative to the project folder (as for command hooks).
    """
    base_dir = server.get("base_dir") or "."
    values = placeholder_values(base_dir)
    allowed = frozenset(server.get("allowed_env_vars") or ())
    command = os.path.expanduser(expand(server["command"], values, allowed))
    if "/" in command and not os.path.isabs(command):
        command = os.path.normpath(os.path.join(values["CLAUDE_PROJECT_DIR"], command))
    args = [expand(a, values, allowed) for a in server.get("args") or []]
    env = {k: expand(v, values, allowed) for k, v in (server.get("env") or {}).items()}
    cwd = server.get("cwd")
    if cwd:
        cwd = os.path.normpath(os.path.join(base_dir, os.path.expanduser(expand(cwd, values, allowed))))
    return command, args, env, cwd or None
