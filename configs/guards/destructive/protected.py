"""The protected files (secrets, the agent's hook configuration): ``secrets_guard``, found as a sibling module
whether the guard is imported as ``configs.guards`` or run by path (``python -I -S shell_guard.py``)."""

from __future__ import annotations

try:
    from .. import secrets_guard as _guard
except ImportError:  # run by path: shell_guard.py put configs/guards/ on sys.path while it imports this package
    import secrets_guard as _guard  # type: ignore[no-redef]

answer = _guard.answer
config_kind = _guard.config_kind
glob_reason = _guard.glob_reason
hook_main = _guard.hook_main
secret_kind = _guard.secret_kind
write_reason = _guard.write_reason


def rule_for(path: str, removal: bool = False) -> str:
    """The rule a shell write to (or removal of) ``path`` falls under."""
    return "write.hook-config" if _guard.config_kind(path, removal) else "write.secrets"


def git_kind(path: str) -> str | None:
    """What ``path`` is when it is a repository's own config or hook (``.git/config``, ``.git/hooks/...``), or
    None. Matched in ``secrets_guard.normal`` form, anywhere in the path (``repo/.git/config``)."""
    if ".git" not in path:
        return None
    parts = _guard.normal(path).rstrip("/").split("/")
    for k, part in enumerate(parts[:-1]):
        if part == ".git":
            rest = parts[k + 1 :]
            if rest == ["config"]:
                return "config"
            if rest[0] == "hooks":
                return "hooks"
    return None


def git_reason(path: str, what: str, kind: str, removal: bool = False) -> str:
    verb = "deletes or moves" if removal else "writes to"
    if kind == "config":
        return (
            f"{what} {verb} {path}, the repository's git config: git runs the commands it names (core.pager, "
            "core.fsmonitor, ! aliases...) and it holds the remotes and branch settings, which an overwrite loses "
            "for good, so hookgate's default policy blocks it. Use `git config` to change one setting, or ask the user."
        )
    return (
        f"{what} {verb} {path}, a git hook: git runs it by itself on later commits, checkouts and pushes, so "
        "hookgate's default policy blocks it. Ask the user to install or remove the hook."
    )
