"""A repository's ``.git`` folder itself and the places that hold hook configuration (the home directory, the
project): writing, moving or deleting a ``.git`` the agent works in points git at another config and hooks or
takes them away (``writes`` and ``delete`` both judge it)."""

from __future__ import annotations

import os

from .context import POLICY, Ctx
from .expand import base


def is_git_dir(path: str) -> bool:
    """Whether ``path`` names a repository's ``.git`` folder itself (``.git``, ``repo/.git/``)."""
    return base(os.path.normpath(path.replace("\\", "/"))).lower() == ".git"


def worked_git_dir(path: str, ctx: Ctx) -> bool:
    """Whether ``path`` is the ``.git`` of a repository the agent works in: in the directory the command runs
    in or a folder below it (``.git``, ``sub/.git``), or in the project or home directory. Writing one (a
    ``gitdir:`` file, a link, a folder copied over it) points git at another config and hooks, which it runs
    by itself; a ``.git`` copied elsewhere (``cp -r x/.git /tmp/backup/``) is a backup."""
    if not is_git_dir(path):
        return False
    parent = os.path.dirname(os.path.normpath(path.replace("\\", "/"))) or "."
    if parent[:1] not in ("/", "~", "$") and parent != ".." and not parent.startswith("../"):
        return True
    return holder(parent, ctx) is not None


def _absolute(path: str, ctx: Ctx) -> str | None:
    """``path`` as an absolute, normalised path (``~``, ``$HOME``, ``$PWD`` expanded; relative: from the
    directory the command runs in), or None when it is known only at run time or the directory is unknown."""
    for prefix in ("~", "${HOME}", "$HOME", "${PWD}", "$PWD"):
        if path == prefix or path.startswith(prefix + "/"):
            value = ctx.cwd if "PWD" in prefix else ctx.state.home()
            if value is None:
                return None
            path = value + path[len(prefix) :]
            break
    if not path or "$" in path or "`" in path or path.startswith("~"):
        return None
    if not path.startswith("/"):
        if ctx.cwd is None:
            return None
        path = ctx.cwd.rstrip("/") + "/" + path
    return os.path.normpath(path).replace("//", "/")


def holder(path: str, ctx: Ctx) -> str | None:
    """What ``path`` is when it is the home directory, the project (the event's ``cwd``), the directory the
    command runs in, or a folder holding one of them (each holds hook configuration: ``~/.claude/settings.json``,
    the project's ``.claude/`` and ``hookgate.yaml``), for a reason; or None. After a ``cd``, a relative path is
    also tried in each literal ``cd`` target. Reads nothing but the home directory's name."""
    places: list[tuple[str, str]] = []
    for candidate in ctx.state.candidates(path):
        if candidate[:1] not in ("/", "~", "$"):
            folded = os.path.normpath(candidate)
            if folded != "." and folded != ".." and not folded.startswith("../"):
                continue  # below the directory the command runs in: no need to read where home is
        full = _absolute(candidate, ctx)
        if full is None:
            continue
        if not places:
            places.append((ctx.state.home(), "your home directory"))
            for place in dict.fromkeys(p for p in (ctx.state.project, ctx.cwd) if p):
                places.append((os.path.normpath(place), "the project"))
        for place, what in places:
            if full == place:
                return f"{full}, {what}"
            if place.startswith(full.rstrip("/") + "/"):
                return f"{full}, which holds {what}"
    return None


def git_dir_reason(what: str, path: str, verb: str) -> str:
    return (
        f"{what} {verb} {path}, a repository's .git folder: git runs the commands its config names (core.pager, "
        f"core.fsmonitor, ! aliases...) and its hooks by itself on later commits, checkouts and pushes, so {POLICY} "
        "blocks it. Ask the user to set the repository up."
    )
