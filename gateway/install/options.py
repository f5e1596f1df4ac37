"""What every host's installer shares: ``Options`` (the parsed command line), the command a hook runs,
how hookgate recognises its own entries, and ``InstallError``."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any

from gateway.errors import InstallError as InstallError

HOOK_TIMEOUT_S = 600
"""The host-side timeout of a hookgate hook (seconds): hookgate enforces each handler's own deadline,
so the host's (fail-open) timeout should never be the one that fires."""


@dataclass
class Options:
    host: str
    action: str
    project: str | None
    executable: list[str]
    config: str | list[str] | None = None
    server: str | None = None
    events: list[str] = field(default_factory=list)
    agent: str | None = None


def _home(*parts: str) -> str:
    return os.path.join(os.path.expanduser("~"), *parts)


def check_agent_name(name: str) -> str:
    """``name`` when it is a plain Kiro agent name (the file ``NAME.json`` in the agents folder): 1-128 of
    letters, digits, ``-``, ``_``, ``.``, not starting with ``.`` and without ``..``; so it cannot point
    outside the folder. Raises InstallError (one line)."""
    import re

    if not re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}", name) or ".." in name:
        raise InstallError(
            f"--agent {name[:100]!r}: expected a plain agent name (letters, digits, '-', '_', "
            "'.'; no '/' or '..'), e.g. --agent hookgate"
        )
    return name


def hookgate_argv(explicit: str | None = None) -> list[str]:
    """The absolute command that starts hookgate: ``--hookgate``, this very script, the ``hookgate``
    next to this interpreter, the one on PATH, else ``python -m gateway``."""
    import shutil

    if explicit:
        path = os.path.abspath(os.path.expanduser(explicit))
        if not os.access(path, os.X_OK):
            raise InstallError(f"--hookgate {explicit}: not an executable file")
        return [path]
    candidates = []
    if os.path.basename(sys.argv[0]) == "hookgate":
        candidates.append(os.path.abspath(sys.argv[0]))
    candidates.append(os.path.join(os.path.dirname(sys.executable), "hookgate"))
    found = shutil.which("hookgate")
    if found:
        candidates.append(os.path.abspath(found))
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return [path]
    return [os.path.abspath(sys.executable), "-m", "gateway"]


def hook_command(
    host: str, *, executable: list[str], config: str | list[str] | None = None, server: str | None = None
) -> str:
    """The command line each hook runs (shell-quoted); ``config``: one path or several (all pinned)."""
    import shlex

    argv = [*executable, "run", "--dialect", host]
    for path in [config] if isinstance(config, str) else config or []:
        argv += ["--config", path]
    if server:
        argv += ["--server", server]
    return shlex.join(argv)


def is_hookgate_command(command: Any) -> bool:
    """True for a command hook that runs ``hookgate ... run``, whoever wrote it (``is_install_command``
    tells install's own entries from hand-written ones)."""
    import shlex

    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if not words:
        return False
    if os.path.basename(words[0]) == "hookgate":
        rest = words[1:]
    elif len(words) >= 3 and words[1:3] == ["-m", "gateway"]:
        rest = words[3:]
    else:
        return False
    return "run" in rest


def is_install_command(command: Any, host: str) -> bool:
    """True when ``command`` is exactly a command line ``install`` writes for ``host`` (what
    ``hook_command`` returns, in every version so far): ``EXE run --dialect HOST``, then any ``--config
    PATH`` (absolute, or a ``builtin:`` name), then at most one ``--server http(s)://...``, shell-quoted as
    ``shlex.join`` quotes it; EXE is an absolute ``.../hookgate`` or ``PYTHON -m gateway``. These are the
    entries install updates and uninstall removes; any other hook that runs hookgate (a hand-written
    ``hookgate run --config "$CLAUDE_PROJECT_DIR"/policy.yaml``) is the user's and is left alone."""
    import shlex

    if not isinstance(command, str) or not is_hookgate_command(command):
        return False
    words = shlex.split(command)
    if shlex.join(words) != command or not os.path.isabs(words[0]):
        return False
    rest = words[1:] if os.path.basename(words[0]) == "hookgate" else words[3:]
    if rest[:3] != ["run", "--dialect", host]:
        return False
    rest = rest[3:]
    while rest[:1] == ["--config"] and len(rest) >= 2 and (os.path.isabs(rest[1]) or rest[1].startswith("builtin:")):
        rest = rest[2:]
    if rest[:1] == ["--server"] and len(rest) >= 2 and rest[1].startswith(("http://", "https://")):
        rest = rest[2:]
    return not rest
