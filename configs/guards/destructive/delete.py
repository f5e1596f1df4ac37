"""Deletes: ``rm -r``, ``find -delete`` / ``-exec rm``, and the areas where a recursive delete is allowed.

A recursive delete passes when every target provably lies in an allowed area (``allowed_area``): a build or
cache folder inside the project (``node_modules``, ``dist``... a configurable list; the project is the
directory the command runs in), below a temp root (``/tmp``, ``/var/tmp``, ``$TMPDIR``; not the root itself,
nor a path holding the project or the home directory), or under one of the user's ``allowPaths``. A target
known only at run time (``$DIR``, ``$(cmd)``, what ``xargs`` reads) is not provably anywhere, so it is denied.
"""

from __future__ import annotations

import os

from .context import POLICY, Ctx
from .expand import unwrap
from .getopt import getopt
from .gitdir import git_dir_reason, worked_git_dir
from .lexer import Word
from .protected import git_kind, git_reason, in_project, installed_kind, policy_file, rule_for, write_reason

_FIND_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
DELETERS = frozenset({"rm", "unlink", "shred", "rmdir"})
_FIND_FILTERS = frozenset(
    {
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-type",
        "-xtype",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-used",
        "-empty",
        "-size",
        "-user",
        "-group",
        "-uid",
        "-gid",
        "-nouser",
        "-nogroup",
        "-perm",
        "-links",
        "-inum",
        "-samefile",
        "-lname",
        "-ilname",
        "-context",
        "-fstype",
    }
)


def resolve(word: Word, ctx: Ctx) -> str | None:
    """The absolute, normalised path ``word`` names, or None when it is known only at run time. ``~``,
    ``$HOME``, ``$TMPDIR`` (``${TMPDIR:-/tmp}``) and ``$PWD`` are expanded; a relative path is joined to
    the directory the command runs in ("" + relative when that is unknown)."""
    text = word.text
    if text[:1] in ("~", "$"):
        for prefix in ("~", "${HOME}", "$HOME", "${TMPDIR:-/tmp}", "${TMPDIR}", "$TMPDIR", "${PWD}", "$PWD"):
            if text == prefix or text.startswith(prefix + "/"):
                if "HOME" in prefix or prefix == "~":
                    value: str | None = ctx.state.home()
                elif "TMPDIR" in prefix:
                    value = ctx.state.tmpdir() or ("/tmp" if prefix == "${TMPDIR:-/tmp}" else "")
                else:
                    value = ctx.cwd
                if value is None:
                    return None
                text = value + text[len(prefix) :]
                break
        else:
            if not word.literal or text.startswith("~"):
                return None
    elif not word.literal:
        return None
    if not text:
        return None
    if not text.startswith("/"):
        if ctx.lost or ctx.state.changes_directory_before(ctx.state.part):
            return None  # `cd .. && rm -rf build`: relative to a directory hookgate does not follow
        if ctx.cwd is None:
            path = os.path.normpath(text)
            return None if path == ".." or path.startswith("../") else path  # relative to an unknown directory
        text = os.path.join(ctx.cwd, text)
    return os.path.normpath(text).replace("//", "/")


def _inside(path: str, root: str) -> bool:
    """``path`` strictly below ``root``."""
    return root != path and path.startswith(root.rstrip("/") + "/")


def holds(path: str, other: str) -> bool:
    """Deleting ``path`` deletes ``other`` too (it is ``other`` or a parent of it)."""
    return other == path or _inside(other, path)


def allowed_area(word: Word, ctx: Ctx) -> str | None:
    """Which allowed area the recursive-delete target ``word`` lies in ("a build or cache folder", "a temp
    directory", "an allowPaths entry"), or None (see the module docstring)."""
    path = resolve(word, ctx)
    if path is None:
        return None
    home, project = ctx.state.home(), ctx.state.project
    if path.startswith("/"):
        roots, allowed_paths = ctx.state.areas()
        for allowed in allowed_paths:
            if holds(allowed, path):
                return "an allowPaths entry"
        in_project = project is not None and project not in roots and _inside(path, project)
        if path not in roots and not in_project:  # a project in /tmp is still a project (cwd /tmp itself is not)
            for root in roots:
                if root in ("/", home) or not _inside(path, root):
                    continue
                if holds(path, home) or (project and holds(path, project)):
                    return None
                if word.globs() and any(_globholds(path, p) for p in (home, project) if p):
                    return None  # rm -rf /tmp/pr* from /tmp/proj
                return "a temp directory"
    artifact = _artifact(path, word, ctx)
    if artifact is not None:
        return artifact
    if word.globs() and any(c in word.text.rsplit("/", 1)[-1] for c in "*?[") and not _build_part(path, ctx, True):
        return None
    if _build_part(path, ctx, False):
        return "a build or cache folder"
    project_ = ctx.state.project
    if path.rsplit("/", 1)[-1] in BUILD_FILES and (project_ is None or _inside(path, project_)) and not word.globs():
        return "a generated file"  # rm -rf node_modules package-lock.json
    return None


def _artifact(path: str, word: Word, ctx: Ctx) -> str | None:
    """``*.egg-info`` (or one named so) and a git lock file (``.git/index.lock``, ``.git/refs/heads/x.lock``)
    inside the project: what setuptools leaves beside ``build/``, what a crashed git leaves behind."""
    project = ctx.state.project
    if project is None or project in ("/", ctx.state.home()) or not _inside(path, project):
        return None
    rel = path[len(project.rstrip("/")) + 1 :]
    last = rel.rsplit("/", 1)[-1]
    if last.endswith(".egg-info") and not any(c in last[:-9].strip("*") for c in "*?[]") and not _glob_dirs(rel):
        return "a build or cache folder"  # foo.egg-info, src/*.egg-info (each match is one)
    if (rel.startswith(".git/") and last.endswith(".lock") and ".." not in rel) and not word.globs():
        return "a git lock file"
    return None


def _glob_dirs(rel: str) -> bool:
    """Whether a folder above the last part of ``rel`` is a glob (``*/x.egg-info`` could name ``src``)."""
    return any(c in rel.rsplit("/", 1)[0] for c in "*?[") if "/" in rel else False


# generated files a recursive delete may name next to the build folders (lock files and coverage data)
BUILD_FILES = frozenset(
    {
        "package-lock.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lockb",
        "npm-shrinkwrap.json",
        "poetry.lock",
        "Pipfile.lock",
        "Cargo.lock",
        "composer.lock",
        "Gemfile.lock",
        ".coverage",
        "coverage.xml",
        ".eslintcache",
        "tsconfig.tsbuildinfo",
    }
)


def _globholds(pattern: str, other: str) -> bool:
    """Whether glob ``pattern`` (an absolute path) could name ``other`` or a parent of it."""
    import fnmatch

    parts, others = pattern.strip("/").split("/"), other.strip("/").split("/")
    return len(parts) <= len(others) and all(fnmatch.fnmatchcase(o, p) for p, o in zip(parts, others, strict=False))


# file names a find -delete may remove anywhere in the project: compiled and editor leftovers
CACHE_FILES = frozenset({"*.pyc", "*.pyo", "*.o", "*.class", ".DS_Store", "*~", "*.swp"})


def _build_part(path: str, ctx: Ctx, parent_only: bool) -> bool:
    """Whether ``path`` lies in a build or cache folder inside the project (``parent_only``: a folder above
    its last part, for ``dist/*``)."""
    project = ctx.state.project
    if project is None:
        if path.startswith("/") or ctx.cwd is not None:  # env -C DIR with no project known: not provably in one
            return False
        rel = path
    else:
        if project in ("/", ctx.state.home()) or not _inside(path, project):
            return False
        rel = path[len(project.rstrip("/")) + 1 :]
    parts = rel.split("/")
    if parent_only:
        parts = parts[:-1]
    return any(p in ctx.settings.build_dirs for p in parts)


def rm_reason(shown: str, target: str | None = None) -> str:
    if target and target.startswith("$HOOKGATE_"):
        target = "what it reads from stdin"
    elif target and len(target) > 60:
        target = target[:57] + "..."
    where = ""
    if target and len(shown) < 100:
        where = f" (its target {target} is not in a build folder or a temp directory)"
    what = f"`{shown}`{where}"
    return (
        f"{what} deletes a whole directory tree (a recursive delete) with no undo, so {POLICY} blocks it. "
        "Delete the specific files you need to, or ask the user to run it."
    )


def check_rm(args: list[Word], shown: str, ctx: Ctx) -> str | None:
    """``rm``: a recursive delete outside the allowed areas (a target read from stdin, ``xargs rm -r``, is
    a word known only at run time)."""
    texts = [w.text for w in args]
    recursive = False
    for a in texts:
        if a == "--":
            break
        if a.startswith("--"):
            if len(a) >= 3 and "--recursive".startswith(a.partition("=")[0]):
                recursive = True
        elif a.startswith("-") and ("r" in a or "R" in a):
            recursive = True
    if recursive:
        ctx.state.part = shown
        targets = _operand_words(args)
        for word in targets:
            if allowed_area(word, ctx) is None:
                several = len(targets) > 1 or word.text.startswith("$HOOKGATE_")
                reason = ctx.hit("rm.recursive", shown, rm_reason(shown, word.text if several else None))
                if reason:
                    return reason
                break
    return check_removals(getopt(texts)[0], shown, ctx)


def _operand_words(args: list[Word]) -> list[Word]:
    out, options = [], True
    for w in args:
        if options and w.text == "--":
            options = False
        elif options and w.text.startswith("-") and len(w.text) > 1:
            continue
        else:
            out.append(w)
    return out


def check_removals(paths: list[str], shown: str, ctx: Ctx) -> str | None:
    """Deleting (or moving away) hook configuration or a secrets file counts as writing it."""
    for path in paths:
        for candidate in ctx.state.candidates(path):
            reason = write_reason(candidate, f"`{shown}`", removal=True)
            if reason:
                return ctx.hit(rule_for(candidate, removal=True), shown, reason)
            git = git_kind(candidate)
            if git is not None:
                return ctx.hit("write.git-config", shown, git_reason(candidate, f"`{shown}`", git, removal=True))
            if worked_git_dir(candidate, ctx):  # mv .git /tmp/g takes its config and hooks away with it
                return ctx.hit("write.git-config", shown, git_dir_reason(f"`{shown}`", candidate, "deletes or moves"))
        full = in_project(path, ctx.cwd)
        if full and (installed_kind(full, removal=True) or policy_file(full)):
            reason = write_reason(full, f"`{shown}`", removal=True) or ""
            return ctx.hit("write.hook-config", shown, reason)
    return None


def check_find(args: list[Word], ctx: Ctx, shown: str) -> str | None:
    i = 0
    while i < len(args) and (args[i].text in ("-H", "-L", "-P", "-D") or args[i].text.startswith("-O")):
        i += 2 if args[i].text == "-D" else 1
    roots: list[Word] = []
    while i < len(args) and not (args[i].text.startswith("-") or args[i].text in ("(", "!", ")", ",")):
        roots.append(args[i])
        i += 1
    expr = args[i:]
    found = _found(roots or [Word(".")], expr, ctx)
    deletes = tests = restricted = unrestricted = negated = False  # restricted: a build-folder -name seen so far
    j = 0
    while j < len(expr):
        text = expr[j].text
        if text in _FIND_ACTIONS:
            end = j + 1
            while end < len(expr) and expr[end].text not in (";", "+"):
                end += 1
            run = expr[j + 1 : end]
            for path in found:  # {} is each file found
                reason = ctx.check_argv([path if w.text == "{}" else w for w in run])
                if reason:
                    return reason
            core = unwrap(run).words
            if core and core[0].text.rsplit("/", 1)[-1] in DELETERS:
                deletes = True
                unrestricted = unrestricted or not restricted
            j = end  # what -exec runs is its own command line: `-exec echo -delete ;` deletes nothing
        elif text == "-delete":
            deletes = True
            unrestricted = unrestricted or not restricted
        elif text in _FIND_FILTERS or text.startswith("-newer"):
            tests = True
            if text in ("-name", "-iname") and j + 1 < len(expr):
                name = expr[j + 1].text
                restricted = restricted or name in ctx.settings.build_dirs or name in CACHE_FILES
                j += 1
            restricted = restricted or text == "-empty"  # only empty files and folders: nothing is lost
        elif text in ("-o", "-or", "!", "-not", ","):
            negated = True
        j += 1
    if not deletes:
        return None
    if roots and all(allowed_area(root, ctx) for root in roots):
        return None
    for root in roots or [Word(".")]:
        where = outside(root, ctx.cwd, ctx.state.home())
        if where:
            return ctx.hit(
                "find.delete",
                shown,
                f"`{shown}` deletes files under {where}, with no undo, so {POLICY} "
                "blocks it. Run it on a path inside the project, or ask the user.",
            )
    if not tests:
        where = " ".join(w.text for w in roots) or "."
        return ctx.hit(
            "find.delete",
            shown,
            f"`{shown}` has no test (such as -name or -type), so it deletes "
            f"everything under {where}, .git included, with no undo; {POLICY} blocks it. Add a test that "
            "selects the files, or ask the user.",
        )
    if unrestricted or negated:
        where = " ".join(w.text for w in roots) or "."
        return ctx.hit(
            "find.delete",
            shown,
            f"`{shown}` deletes files under {where} that its -name tests do not "
            "restrict to the build and cache folders (node_modules, __pycache__, *.pyc...; the tests must "
            f"come before -delete), with no undo; {POLICY} blocks it. Delete the specific files, or ask "
            "the user.",
        )
    return None


def _found(roots: list[Word], expr: list[Word], ctx: Ctx) -> list[Word]:
    """What ``{}`` can stand for in ``-exec``: the roots themselves (at most), or -- when the expression selects
    nothing but build folders by name (``-name node_modules``) -- those folders below each root."""
    names = [expr[k + 1].text for k in range(len(expr) - 1) if expr[k].text in ("-name", "-iname")]
    negates = any(w.text in ("-o", "-or", "!", "-not", "-path", "-ipath", "-regex", "-wholename") for w in expr)
    if not names or negates or not all(n in ctx.settings.build_dirs for n in names):
        return roots
    return [Word(f"{root.text.rstrip('/')}/{name}") if root.literal else root for root in roots for name in names]


def outside(word: Word, cwd: str | None, home: str) -> str | None:
    """Why deleting under ``word`` is out of bounds (``"/, the file system root"``), or None. Out of bounds:
    ``/``, the home directory, and paths outside ``cwd`` (without ``cwd``: a top-level directory or ``..``).
    Paths known only at run time (``$DIR``) are None."""
    text = word.text
    for prefix in ("${HOME}", "$HOME", "~"):
        if text == prefix or text.startswith(prefix + "/"):
            text = home + text[len(prefix) :]
            break
    else:
        if not word.literal or text.startswith("~"):
            return None
    path = os.path.normpath(text) if text else "."
    if not os.path.isabs(path):
        if not cwd:
            return f"{word.text}, above the current directory" if path == ".." or path.startswith("../") else None
        path = os.path.normpath(os.path.join(cwd, path))
    shown = word.text if word.text == path else f"{word.text} ({path})"
    if path in ("/", "//"):
        return f"{shown}, the file system root"
    if path == home:
        return f"{shown}, your home directory"
    if cwd:
        root = os.path.normpath(cwd)
        inside = path == root or path.startswith(root.rstrip("/") + "/")
        return None if inside else f"{shown}, outside the directory the command runs in ({root})"
    return f"{shown}, a top-level directory" if path.count("/") <= 1 else None
