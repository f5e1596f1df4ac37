"""Other tools that destroy data wholesale: ``chmod -R``/``chown -R``/``chgrp -R`` and ``rsync --delete`` aimed at
a protected root, and ``tar --remove-files``.

A protected root (``protected_root``) is ``/``, a top-level folder (``/etc``, ``/home``...), anything inside
the system folders (``/etc``, ``/usr``, ``/bin``, ``/sbin``, ``/lib*``, ``/boot``), the home folder or the
project (the directory the command runs in), or a folder holding one of them; a glob counts by the folder it
starts from (``chmod -R 777 *`` in the project is the project). Recursive mode and owner changes there are lost
for good (no tool records the old modes; sudo, ssh and setuid programs stop working), so they are denied, and so
is ``rsync --delete`` onto one (it deletes whatever the source lacks). ``tar --remove-files`` deletes the files
it archives: they live on in the archive, so it asks, unless every member lies in an allowed area (it passes)
or the archive is ``/dev/null`` (a recursive delete: ``rm.recursive``). ``tar -x`` and ``unzip`` into a folder of
hook configuration or a ``.git`` (``-C .claude``, ``-d .claude``), or with a member named as one or as a secrets
file (``tar xf x.tar .claude/settings.json``), count as writing it; a plain ``tar xf x.tar`` passes (what an
archive holds is not known). A path known only at run time is not judged here.
"""

from __future__ import annotations

from .context import POLICY, Ctx
from .delete import allowed_area, check_rm, holds, resolve
from .expand import long_opt
from .getopt import getopt
from .lexer import Word
from .writes import COPIERS

_SYSTEM = ("/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/System", "/Library")
_GLOB = frozenset("*?[")


def protected_root(word: Word, ctx: Ctx) -> str | None:
    """What protected root ``word`` names (see the module docstring), for the reason; or None."""
    path = resolve(word, ctx)
    if path is None and word.literal and not word.text.startswith(("/", "~")):  # cd / && chmod -R 777 .
        for target in ctx.state.cd_targets() if ctx.state.changes_directory() else []:
            if target.startswith(("/", "~")):
                joined = Word(target.rstrip("/") + "/" + word.text)
                if word.globs():
                    joined.meta = [k for k, c in enumerate(joined.text) if c in _GLOB]
                where = protected_root(joined, ctx)
                if where:
                    return where
        return None
    if path is None or not path.startswith("/"):
        return None
    if word.globs():  # judged by the folder the glob starts from
        parts = path.split("/")
        first = next((k for k, p in enumerate(parts) if _GLOB & set(p)), len(parts))
        path = "/".join(parts[:first]) or "/"
    home, project = ctx.state.home(), ctx.state.project
    if path == "/":
        return "/, the file system root"
    if path.count("/") == 1:
        return f"{path}, a top-level folder"
    if any(holds(root, path) for root in _SYSTEM):
        return f"{path}, a system folder"
    if holds(path, home):
        return f"{path}, your home folder" if path == home else f"{path}, which holds your home folder"
    if project and project != "/" and holds(path, project):
        return f"{path}, the project" if path == project else f"{path}, which holds the project"
    return None


def check_tool(name: str, args: list[Word], shown: str, ctx: Ctx) -> str | None:
    if name in ("chmod", "chown", "chgrp"):
        return _perms(name, args, shown, ctx)
    if name == "rsync":
        return _rsync(args, shown, ctx)
    if name == "unzip":
        return _unzip([w.text for w in args], shown, ctx)
    return _tar(args, shown, ctx) or _tar_extract([w.text for w in args], shown, ctx)


# tar's short options that take a value (GNU, bsdtar), and long ones that take the next word unless given `=`
_TAR_SHORT_VALUE = "bCfFgHIKLNTVX"
_TAR_LONG_VALUE = frozenset(
    {
        "--file",
        "--directory",
        "--files-from",
        "--exclude-from",
        "--exclude",
        "--transform",
        "--xform",
        "--strip-components",
        "--owner",
        "--group",
        "--mode",
        "--format",
        "--use-compress-program",
        "--to-command",
        "--checkpoint-action",
        "--newer",
        "--after-date",
        "--newer-mtime",
        "--label",
        "--blocking-factor",
        "--record-size",
        "--tape-length",
        "--starting-file",
        "--suffix",
        "--index-file",
        "--info-script",
        "--new-volume-script",
        "--volno-file",
        "--rsh-command",
        "--mtime",
        "--quoting-style",
    }
)


def _tar_extract(args: list[str], shown: str, ctx: Ctx) -> str | None:
    """``tar -x`` (``--extract``, ``--get``, old-style ``xf``) into a hook-configuration folder (``-C .claude``,
    ``--directory``) or of a member named as hook configuration, a secrets file or a ``.git`` (``tar xf x.tar
    .claude/settings.json``). What an archive holds is not known, so a plain ``tar xf x.tar`` passes."""
    letters: set[str] = set()
    longs: set[str] = set()
    dirs: list[str] = []
    members: list[str] = []
    i = 0
    while i < len(args):
        t = args[i]
        if t == "--":
            members += args[i + 1 :]
            break
        if t.startswith("--"):
            key, eq, value = t.partition("=")
            if key in _TAR_LONG_VALUE and not eq and i + 1 < len(args):
                i, value = i + 1, args[i + 1]
            longs.add(key)
            if key == "--directory":
                dirs.append(value)
        elif (t.startswith("-") and len(t) > 1) or (i == 0 and t.isalpha()):  # -xf x, or old style xf x
            dashed = t.startswith("-")
            body = t[1:] if dashed else t
            later: list[str] = []  # old style: the values follow in the order of their letters
            for k, ch in enumerate(body):
                letters.add(ch)
                if ch in _TAR_SHORT_VALUE:
                    if dashed:
                        value = body[k + 1 :]
                        if not value and i + 1 < len(args):
                            i, value = i + 1, args[i + 1]
                        dirs += [value] if ch == "C" else []
                        break
                    later.append(ch)
            for ch in later:
                if i + 1 < len(args):
                    i += 1
                    dirs += [args[i]] if ch == "C" else []
        else:
            members.append(t)
        i += 1
    extracts = "x" in letters or long_opt(longs, "--extract", 5) or long_opt(longs, "--get", 4)
    if not extracts or "O" in letters or "t" in letters or long_opt(longs, "--to-stdout", 5):
        return None  # lists, or extracts to stdout: writes no file
    return _landing_check("extracts an archive", dirs, members, shown, ctx)


def _unzip(args: list[str], shown: str, ctx: Ctx) -> str | None:
    """``unzip -d .claude x.zip`` (into a hook-configuration folder) and ``unzip x.zip .claude/settings.json``
    (a member named as one), like ``tar -x``; listing, testing and printing (``-l``, ``-t``, ``-p``, ``-v``,
    ``-z``, ``-Z``) write nothing."""
    dirs: list[str] = []
    operands: list[str] = []
    letters: set[str] = set()
    excluding = False
    i = 0
    while i < len(args):
        t = args[i]
        if t.startswith("-") and len(t) > 1:
            excluding = False
            for k, ch in enumerate(t[1:]):
                letters.add(ch)
                if ch in "dPIO":  # a value: attached or the next word
                    value = t[k + 2 :]
                    if not value and i + 1 < len(args):
                        i, value = i + 1, args[i + 1]
                    dirs += [value] if ch == "d" else []
                    break
                if ch == "x":
                    excluding = True  # -x FILES...: names not to extract
        elif not excluding:
            operands.append(t)
        i += 1
    if letters & set("ltpvzZ") or not operands:
        return None
    members = operands[1:]
    if "j" in letters:  # -j: every member lands in the folder by its last name
        members += [m.rsplit("/", 1)[-1] for m in members]
    return _landing_check("extracts an archive", dirs, members, shown, ctx)


def _landing_check(what: str, dirs: list[str], members: list[str], shown: str, ctx: Ctx) -> str | None:
    """An archive extracted into ``dirs`` (none: the current directory) with ``members`` named: denied when a
    folder is hook configuration or a ``.git`` (everything lands in it: ``-C .claude``), or a member lands on
    hook configuration, a secrets file or a ``.git`` (a member may be a whole folder: ``.claude``)."""
    from .gitdir import git_dir_reason, is_git_dir
    from .protected import config_kind, git_kind, git_reason
    from .protected import write_reason as protected_write_reason
    from .writes import replaced_kind

    for folder in dirs:
        for candidate in ctx.state.candidates(folder):
            kind = replaced_kind(candidate)
            if kind is not None:
                reason = protected_write_reason(candidate, f"`{shown}`", removal=True, verb=f"{what} into")
                return ctx.hit("write.hook-config", shown, reason or "")
            git = git_kind(candidate.rstrip("/") + "/x")
            if is_git_dir(candidate) or git is not None:
                return ctx.hit("write.git-config", shown, git_dir_reason(f"`{shown}`", candidate, f"{what} into"))
    for member in members:
        for folder in dirs or [""]:
            landing = folder.rstrip("/") + "/" + member if folder else member
            for candidate in ctx.state.candidates(landing):
                reason = protected_write_reason(candidate, f"`{shown}`", removal=True, verb=f"{what} onto")
                if reason is not None:
                    rule = "write.hook-config" if config_kind(candidate, removal=True) else "write.secrets"
                    return ctx.hit(rule, shown, reason)
                git = git_kind(candidate)
                if git is not None:
                    return ctx.hit("write.git-config", shown, git_reason(candidate, f"`{shown}`", git))
                if is_git_dir(candidate):
                    return ctx.hit("write.git-config", shown, git_dir_reason(f"`{shown}`", candidate, f"{what} onto"))
    return None


def _perms(name: str, args: list[Word], shown: str, ctx: Ctx) -> str | None:
    recursive, reference, operands, options = False, False, [], True
    for w in args:
        t = w.text
        if options and t == "--":
            options = False
        elif options and t.startswith("--"):
            recursive = recursive or long_opt({t.partition("=")[0]}, "--recursive", 5)
            reference = reference or t.startswith("--reference")
        elif options and t.startswith("-") and len(t) > 1 and set(t[1:]) <= set("RcfvhHLP"):
            recursive = recursive or "R" in t
        else:
            operands.append(w)
    if not recursive:
        return None
    for target in operands if reference else operands[1:]:  # the first operand is the mode, owner or group
        where = protected_root(target, ctx)
        if where:
            what = "permissions" if name == "chmod" else "owners" if name == "chown" else "groups"
            return ctx.hit(
                "perm.recursive",
                shown,
                (
                    f"`{shown}` changes the {what} of everything under {where}; the old {what} are recorded "
                    f"nowhere, so they are lost for good (sudo, ssh and setuid programs can stop working), and "
                    f"{POLICY} blocks it. Change the specific files or subfolders you mean, or ask the user."
                ),
            )
    return None


def _rsync(args: list[Word], shown: str, ctx: Ctx) -> str | None:
    texts = [w.text for w in args]
    if not any(t == "--del" or t.startswith("--delete") for t in texts):
        return None
    operands, opts, _ = getopt(texts, *COPIERS["rsync"])
    if any(o in ("-n", "--dry-run") for o, _ in opts) or len(operands) < 2:
        return None
    dest = operands[-1]
    if "::" in dest or dest.startswith("rsync://") or ":" in dest.split("/", 1)[0]:
        return None  # a remote destination (host:path): outside this guard's reach
    word = next((w for w in reversed(args) if w.text == dest), Word(dest))
    if allowed_area(word, ctx):
        return None
    where = protected_root(word, ctx)
    if where is None:
        return None
    return ctx.hit(
        "rsync.delete",
        shown,
        (
            f"`{shown}` deletes, under {where}, every file the source does not have, with no undo, so "
            f"{POLICY} blocks it. Sync into a folder of its own, drop --delete, or ask the user."
        ),
    )


def _tar(args: list[Word], shown: str, ctx: Ctx) -> str | None:
    texts = [w.text for w in args]
    if not any(t.startswith("--remove-f") for t in texts):
        return None
    archive, members, chdir = None, [], False
    i = 0
    while i < len(args):
        t = texts[i]
        if t.startswith("--"):
            key, eq, value = t.partition("=")
            if key in ("--file", "--directory") and not eq and i + 1 < len(args):
                i, value = i + 1, texts[i + 1]
            archive = value if key == "--file" else archive
            chdir = chdir or key == "--directory"
        elif (t.startswith("-") and len(t) > 1) or (i == 0 and t.isalpha()):  # -czf x, or old style czf x
            letters = t.lstrip("-")
            for k, ch in enumerate(letters):
                if ch in "fC":
                    value = letters[k + 1 :] if t.startswith("-") else ""
                    if not value and i + 1 < len(args):
                        i, value = i + 1, texts[i + 1]
                    archive = value if ch == "f" else archive
                    chdir = chdir or ch == "C"
                    if t.startswith("-"):
                        break
        else:
            members.append(args[i])
        i += 1
    if archive == "/dev/null":  # archived nowhere: a recursive delete of the members
        return check_rm([Word("-r"), *members], shown, ctx)
    if members and not chdir and all(allowed_area(m, ctx) for m in members):
        return None
    return ctx.hit(
        "tar.remove-files",
        shown,
        (
            f"`{shown}` deletes the files it archives; they can be brought back only from "
            f"{archive or 'the archive'}, so {POLICY} asks first. Archive without --remove-files, check the "
            "archive, then delete."
        ),
    )
