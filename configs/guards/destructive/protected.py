"""The protected files (secrets, the agent's hook configuration): ``secrets_guard``, found as a sibling module
whether the guard is imported as ``configs.guards`` or run by path (``python -I -S shell_guard.py``)."""

from __future__ import annotations

try:
    from .. import secrets_guard as _guard
except ImportError:  # run by path: shell_guard.py put configs/guards/ on sys.path while it imports this package
    import secrets_guard as _guard  # type: ignore[no-redef]

from .outside import read as read_outside

_guard.on_outside_read = read_outside  # its environment and file-system reads count as the shell guard's

answer = _guard.answer
config_kind = _guard.config_kind
glob_reason = _guard.glob_reason
hook_main = _guard.hook_main
secret_kind = _guard.secret_kind
write_reason = _guard.write_reason
git_kind = _guard.git_kind
git_reason = _guard.git_reason
installed_kind = _guard.installed_kind
link_target = _guard.link_target


def rule_for(path: str, removal: bool = False) -> str:
    """The rule a shell write to (or removal of) ``path`` falls under."""
    return "write.hook-config" if _guard.config_kind(path, removal) else "write.secrets"


def policy_file(path: str) -> bool:
    """True when absolute ``path`` is a file the hookgate in this process loaded its policy from."""
    return _guard._policy_file(_guard.normal(path))


def in_project(path: str, cwd: str | None) -> str | None:
    """A relative ``path`` joined to the directory the command runs in (for the installed-hookgate check:
    ``sed -i ... configs/default.yaml`` run in ``site-packages``), or None."""
    if not cwd or path.startswith(("/", "~", "$")):
        return None
    return cwd.rstrip("/") + "/" + path
