"""The shell guard's rules, their default decisions, and what a user may tune (the config's ``guards`` section).

``RULES`` names every rule (``rm.recursive``, ``git.stash-drop``...) with its default decision: ``deny``, or
``ask`` where the lost work can still be recovered. ``Settings`` holds the tuning: rule decisions (``deny``,
``ask``, ``off``; ``git.*`` names a family), ``allow_paths`` (recursive deletes under them pass),
``allow_commands`` (shell patterns a simple command may match to pass), ``build_dirs`` (the build and cache
folders a recursive delete inside the project may remove) and ``temp_roots``. hookgate validates the config
section with pydantic and calls ``configure``; the guard itself stays standard-library only.
"""

from __future__ import annotations

import os

from .outside import read as read_outside

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from contextvars import ContextVar, Token

DECISIONS = ("deny", "ask", "off")

# rule id: (default decision, what it stops)
RULES: dict[str, tuple[str, str]] = {
    "rm.recursive": ("deny", "recursive deletes outside the build folders, temp roots and allowPaths"),
    "shred.outside": ("deny", "shred of files outside the project, the temp roots and allowPaths (lost for good)"),
    "find.delete": ("deny", "find -delete / -exec rm outside the project, or not restricted to build and cache names"),
    "git.push-force": ("deny", "git push -f / --force / +ref"),
    "git.push-mirror": ("deny", "git push --mirror"),
    "git.push-delete": ("deny", "git push --delete / -d / :ref"),
    "git.push-prune": ("deny", "git push --prune"),
    "git.reset-hard": ("deny", "git reset --hard, and its plumbing form git read-tree --reset -u"),
    "git.reset-merge": ("deny", "git reset --merge"),
    "git.clean-force": ("deny", "git clean -f"),
    "git.checkout-discard": (
        "deny",
        "git checkout -- <paths>, git checkout -f, git checkout ., git checkout-index -f",
    ),
    "git.restore-worktree": ("deny", "git restore <paths> (not --staged alone)"),
    "git.switch-discard": ("deny", "git switch --discard-changes / -f"),
    "git.rm-force": ("deny", "git rm -f without --cached"),
    "git.worktree-remove-force": ("deny", "git worktree remove --force"),
    "git.submodule-deinit-force": ("deny", "git submodule deinit -f / --force (the submodules' working trees)"),
    "git.stash-drop": ("ask", "git stash drop"),
    "git.stash-clear": ("ask", "git stash clear"),
    "git.branch-force-delete": ("ask", "git branch -D, and git branch with arguments known only at run time"),
    "git.branch-delete": ("ask", "git branch -d (merged branches)"),
    "git.branch-overwrite": ("ask", "git branch -M / -C (rename or copy over an existing branch)"),
    "git.reflog-expire": ("deny", "git reflog expire --expire=now, git reflog delete"),
    "git.gc-prune": ("deny", "git gc --prune=now, git prune (unreachable objects deleted at once)"),
    "git.ref-delete": ("ask", "git update-ref -d (a branch or tag deleted through plumbing)"),
    "git.ext-command": (
        "ask",
        "ext:: remote URLs and uploadpack.packObjectsHook (git runs a command as the transport)",
    ),
    "disk.dd-device": ("deny", "dd onto a device"),
    "disk.mkfs": ("deny", "mkfs"),
    "disk.device-write": ("deny", "a redirect, tee, cp or other write onto a disk device (> /dev/sda)"),
    "disk.wipe": ("deny", "wipefs -a, blkdiscard, mkswap, sgdisk --zap-all/--clear and other partition-table writes"),
    "shell.fork-bomb": ("deny", "fork bombs"),
    "exec.download": ("deny", "downloaded code run straight away (curl ... | sh)"),
    "exec.unseen": ("deny", "program text a shell reads from a pipe or file hookgate cannot see"),
    "write.secrets": ("deny", "shell writes to secrets files"),
    "write.hook-config": ("deny", "shell writes, deletes and moves of the agent's hook configuration"),
    "write.git-config": ("deny", "shell writes, deletes and moves of .git/config and .git/hooks/"),
    "perm.recursive": ("deny", "chmod -R / chown -R / chgrp -R on /, system folders, the home folder or the project"),
    "rsync.delete": ("deny", "rsync --delete (and --delete-*) onto /, system folders, the home folder or the project"),
    "tar.remove-files": ("ask", "tar --remove-files (the files live on in the archive; to /dev/null: rm.recursive)"),
    "hookgate.self-change": (
        "deny",
        "hookgate install/uninstall, mode ... off, approvals approve/reject run by the agent (also via python -m "
        "gateway, sqlite3 on its state, curl to the approvals routes), pip uninstall/reinstall of hookgate",
    ),
    "parse.unanalysable": ("deny", "commands nested too deep or too large to check"),
    "parse.unterminated": ("ask", "an unterminated $( or backquote: hookgate cannot tell what it runs"),
}

BUILD_DIRS = (
    "node_modules",
    "dist",
    "build",
    "target",
    "out",
    ".next",
    ".nuxt",
    ".venv",
    "venv",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    "coverage",
    ".tox",
    ".gradle",
    ".turbo",
    ".nyc_output",
    ".parcel-cache",
    ".svelte-kit",
    ".angular",
    ".cache",
    ".expo",
    ".docusaurus",
    ".vite",
    "htmlcov",
    ".eggs",
    ".nox",
    ".hypothesis",
    "storybook-static",
)
TEMP_ROOTS = ("/tmp", "/var/tmp", "/private/tmp", "$TMPDIR")


class Finding:
    """One rule that matched: ``rule`` id, ``decision`` (deny/ask), ``reason`` for the user, ``part``: the
    simple command (as written, after unwrapping) that triggered it."""

    __slots__ = ("decision", "part", "reason", "rule")

    def __init__(self, rule: str, decision: str, reason: str, part: str) -> None:
        self.rule = rule
        self.decision = decision
        self.reason = reason
        self.part = part

    def __repr__(self) -> str:
        return f"Finding({self.rule!r}, {self.decision!r}, part={self.part!r})"


class Settings:
    """The tuning (see the module docstring). Raises ValueError naming a bad value."""

    __slots__ = ("allow_commands", "allow_paths", "build_dirs", "rules", "temp_roots")

    def __init__(
        self,
        rules: Mapping[str, str] | None = None,
        allow_paths: Iterable[str] = (),
        allow_commands: Iterable[str] = (),
        build_dirs: Iterable[str] | None = None,
        temp_roots: Iterable[str] | None = None,
    ) -> None:
        self.rules: dict[str, str] = {}
        for name, decision in (rules or {}).items():
            if decision not in DECISIONS:
                raise ValueError(f"rules.{name}: {decision!r} is not one of deny, ask, off")
            if not rule_names(name):
                raise ValueError(f"rules.{name}: no such rule (known: {', '.join(RULES)})")
            self.rules[name] = decision
        self.allow_paths = tuple(p.rstrip("/") or "/" for p in allow_paths)
        self.allow_commands = tuple(allow_commands)
        self.build_dirs = frozenset(BUILD_DIRS if build_dirs is None else build_dirs)
        self.temp_roots = tuple(TEMP_ROOTS if temp_roots is None else temp_roots)

    def decision(self, rule: str) -> str:
        """The decision for ``rule``: its own setting, else its family's (``git.*``), else the default."""
        if self.rules:
            if rule in self.rules:
                return self.rules[rule]
            family = rule.split(".", 1)[0] + ".*"
            if family in self.rules:
                return self.rules[family]
        return RULES[rule][0] if rule in RULES else "deny"

    def allows_command(self, part: str) -> bool:
        """Whether simple command ``part`` matches one of ``allow_commands``, word by word: the same number of
        words, each matching its shell pattern (``*``, ``?``, ``[...]``), so a ``*`` never spans a space
        (``rm -rf ./generated/* ~`` is not ``rm -rf ./generated/*``) nor lets in a ``..`` path segment the
        pattern word does not spell (``./generated/../../``)."""
        if not self.allow_commands:
            return False
        import fnmatch
        import shlex

        try:
            words = shlex.split(part)
        except ValueError:
            return False
        for pattern in self.allow_commands:
            try:
                wanted = shlex.split(pattern)
            except ValueError:
                wanted = pattern.split()
            if len(wanted) == len(words) and all(
                fnmatch.fnmatchcase(w, p) and (".." not in w.split("/") or ".." in p.split("/"))
                for w, p in zip(words, wanted, strict=True)
            ):
                return True
        return False

    def resolved_allow_paths(self) -> list[str]:
        if any(p.startswith("~") for p in self.allow_paths):
            read_outside()  # the home directory
        return [os.path.normpath(os.path.expanduser(p)) for p in self.allow_paths]


def rule_names(pattern: str) -> list[str]:
    """The rule ids ``pattern`` names: one id, or a family (``git.*``, ``*``)."""
    if pattern in RULES:
        return [pattern]
    if pattern == "*":
        return list(RULES)
    if pattern.endswith(".*"):
        return [r for r in RULES if r.startswith(pattern[:-1])]
    return []


DEFAULT = Settings()
_active = DEFAULT
_SCOPED: ContextVar[Settings | None] | None = None  # created by the first ``scoped`` (contextvars is imported then)


def configure(settings: Settings | None) -> None:
    """Make ``settings`` the process-wide tuning (None: the defaults): what a check uses outside ``scoped``
    (a direct ``analyse`` or ``check_event`` call). hookgate itself uses ``scoped``."""
    global _active
    _active = settings or DEFAULT


def scoped(settings: Settings | None) -> Token[Settings | None]:
    """Make ``settings`` (None: the defaults) the tuning in the current context (thread or asyncio task) until
    ``unscoped(token)``: hookgate's dispatcher runs a config's handlers inside its own config's tuning."""
    global _SCOPED
    if _SCOPED is None:
        from contextvars import ContextVar

        _SCOPED = ContextVar("hookgate_guard_settings", default=None)
    return _SCOPED.set(settings or DEFAULT)


def unscoped(token: Token[Settings | None]) -> None:
    if _SCOPED is not None:
        _SCOPED.reset(token)


def active() -> Settings:
    """The tuning in force: the context's (``scoped``), else the process-wide one (``configure``)."""
    return (_SCOPED.get() if _SCOPED is not None else None) or _active
