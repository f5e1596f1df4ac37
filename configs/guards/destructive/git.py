"""git: pushes that destroy remote history, and commands that throw away work.

Deny where the work is lost for good (uncommitted changes, untracked files, unreachable objects):
``reset --hard``/``--merge``, ``clean -f``, ``checkout -- <paths>``/``-f``/``.``, ``checkout-index -f``,
``restore`` of the worktree, ``switch --discard-changes``/``-f``, ``rm -f`` (not ``--cached``), ``worktree remove
--force``, ``submodule deinit -f``, ``read-tree --reset -u``, ``reflog expire --expire=now``/``reflog delete``,
``gc --prune=now``/``prune``, and force/mirror/delete/prune pushes. Ask where git can still bring it back (the
commits stay reachable through the reflog or ``git fsck``): ``branch -D``/``-d``/``-M``/``-C`` (and ``branch``
with arguments known only at run time), ``update-ref -d``, ``stash drop``, ``stash clear``. Global options
(``-C dir``, ``-c k=v``), abbreviated long options (``--fo``) and inline aliases (``-c alias.p='push -f'``; ``!``
aliases and ``-c`` values git runs as commands are checked as shell commands, and so are such values set with
``git config`` and the environment variables git runs: ``check_env``) are followed, and so is the shell command
``rebase -x CMD`` runs. ``git rm`` (not ``--cached``) and ``git mv`` are judged as the ``rm`` and ``mv`` they are
for hook configuration and secrets files (``git rm .claude/settings.json``, ``git mv hookgate.yaml x``).
"""

from __future__ import annotations

import re
import shlex

from .context import POLICY, Ctx
from .expand import long_opt, names
from .getopt import getopt
from .gitexec import CONFIG_EDITS, check_runs, config_file_reason

_GLOBAL_WITH_VALUE = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--list-cmds"}
)
# git -c keys whose value git runs as a shell command (a `!` alias is one too); compiled on first use
_COMMAND_KEYS = (
    r"core\.(?:pager|editor|sshcommand|fsmonitor|askpass)|sequence\.editor|diff\.external"
    r"|pager\..+|(?:diff|merge)tool\..+\.cmd|credential\.helper|gpg\.program"
    r"|(?:diff|filter)\..+\.(?:command|textconv|clean|smudge|process)|merge\..+\.driver|interactive\.difffilter"
)

_LOST = "throws away uncommitted work with no undo"
_RECOVERABLE = "can only be undone with git's reflog or `git fsck`"


def _lost(shown: str, what: str, instead: str) -> str:
    return f"`{shown}` {_LOST} ({what}), so {POLICY} blocks it. {instead}, or ask the user."


def config_env(args: list[str], assigns: list[str], variables: dict[str, list[str]]) -> list[str]:
    """``args`` with each global ``--config-env=KEY=VAR`` as ``-c KEY=VALUE`` for every value ``VAR`` is known
    to hold (assigned before the command or earlier in the line, ``assigns``: its ``NAME=value`` words)."""
    env = {name: list(values) for name, values in variables.items()}
    for a in assigns:
        name, _, value = a.partition("=")
        env[name] = [value]
    out, i = [], 0
    while i < len(args) and args[i].startswith("-"):
        a = args[i]
        spec = a[len("--config-env=") :] if a.startswith("--config-env=") else None
        if a == "--config-env" and i + 1 < len(args):
            spec, i = args[i + 1], i + 1
        if spec is None:
            out.append(a)
            if a in _GLOBAL_WITH_VALUE and i + 1 < len(args):
                out.append(args[i + 1])
                i += 1
        else:
            key, _, var = spec.partition("=")
            out += [x for value in env.get(var, []) for x in ("-c", f"{key}={value}")]
        i += 1
    return [*out, *args[i:]]


def check_git(args: list[str], shown: str, ctx: Ctx) -> str | None:
    aliases = dict(ctx.state.git_aliases)  # git config alias.p 'push -f' && git p, GIT_CONFIG_KEY_0=alias.p
    no_force_needed = False  # -c clean.requireForce=false: git clean deletes without -f
    i = 0
    for _ in range(10):  # aliases may name aliases
        i = 0
        while i < len(args) and args[i].startswith("-"):
            if args[i] == "-c" and i + 1 < len(args):
                key, eq, value = args[i + 1].partition("=")
                if key.lower().startswith("alias.") and eq:
                    aliases[key[6:].lower()] = value
                elif key.lower() == "clean.requireforce":
                    no_force_needed = value.lower() in ("false", "no", "off", "0")
                elif value and re.fullmatch(_COMMAND_KEYS, key, re.IGNORECASE):
                    reason = ctx.check_text(value.lstrip("!"))
                    if reason:
                        return reason
            i += 2 if args[i] in _GLOBAL_WITH_VALUE else 1
        if i >= len(args):
            return None
        alias = aliases.pop(args[i].lower(), None)
        if alias is None:
            break
        if alias.startswith("!"):  # git runs it with sh -c, the remaining arguments appended
            return ctx.check_text(" ".join([alias[1:], *(shlex.quote(a) for a in args[i + 1 :])]))
        try:
            expansion = shlex.split(alias)
        except ValueError:
            return ctx.state.raw_scan("git " + alias, "an inline git alias cannot be split", ctx)
        args = args[:i] + expansion + args[i + 1 :]
    sub, rest = args[i].lower(), args[i + 1 :]
    reason = check_runs(args[:i], sub, rest, shown, ctx)  # bisect run, submodule foreach, --upload-pack...
    if reason:
        return reason
    if sub == "clean" and no_force_needed:
        rest = ["-f", *rest]
    check = _SUBCOMMANDS.get(sub)
    return check(rest, shown, ctx) if check else None


def _push(args: list[str], shown: str, ctx: Ctx) -> str | None:
    operands, opts, _ = getopt(args, "o", frozenset({"--push-option", "--repo", "--receive-pack", "--exec"}))
    found = names(opts)
    if "-n" in found or long_opt(found, "--dry-run", 4):
        return None
    if "-f" in found or long_opt(found, "--force", 5) or any(o.startswith("+") for o in operands):
        return ctx.hit(
            "git.push-force",
            shown,
            (
                f"`{shown}` force-pushes. Force-pushing rewrites the remote branch's history and can destroy other "
                f"people's commits, so {POLICY} blocks it. Push normally (or use --force-with-lease), or ask the user "
                "to force-push."
            ),
        )
    if long_opt(found, "--mirror", 4):
        return ctx.hit(
            "git.push-mirror",
            shown,
            (
                f"`{shown}` makes the remote an exact mirror of this clone, overwriting and deleting its branches "
                f"and tags, so {POLICY} blocks it. Push the branches you mean to, or ask the user."
            ),
        )
    if "-d" in found or long_opt(found, "--delete", 4) or any(o.startswith(":") for o in operands[1:]):
        return ctx.hit(
            "git.push-delete",
            shown,
            (
                f"`{shown}` deletes a branch or tag on the remote, which can destroy other people's work, so "
                f"{POLICY} blocks it. Ask the user to delete it."
            ),
        )
    if long_opt(found, "--prune", 4):
        return ctx.hit(
            "git.push-prune",
            shown,
            (
                f"`{shown}` deletes every remote branch that does not exist locally, so {POLICY} blocks it. "
                "Ask the user to run it."
            ),
        )
    return None


def _reset(args: list[str], shown: str, ctx: Ctx) -> str | None:
    found = {a for a in args if a.startswith("--")}
    if long_opt(found, "--hard", 3):
        return ctx.hit(
            "git.reset-hard",
            shown,
            (
                f"`{shown}` {_LOST}, so {POLICY} blocks `git reset --hard`. Use `git stash` to set changes aside, "
                "or ask the user."
            ),
        )
    if long_opt(found, "--merge", 4):
        return ctx.hit(
            "git.reset-merge",
            shown,
            _lost(shown, "`git reset --merge` discards changes in files the reset touches", "Use `git stash` first"),
        )
    return None


def _clean(args: list[str], shown: str, ctx: Ctx) -> str | None:
    _, opts, _ = getopt(args, "e", frozenset({"--exclude"}))
    found = names(opts)
    if ("-f" in found or long_opt(found, "--force", 3)) and not ("-n" in found or long_opt(found, "--dry-run", 3)):
        return ctx.hit(
            "git.clean-force",
            shown,
            (
                f"`{shown}` permanently deletes untracked files, so {POLICY} blocks `git clean -f`. "
                "Run `git clean -n` to see what it would delete, or ask the user."
            ),
        )
    return None


def _checkout(args: list[str], shown: str, ctx: Ctx) -> str | None:
    operands, opts, _ = getopt(args, "bBU", frozenset({"--orphan", "--conflict", "--pathspec-from-file"}))
    found = names(opts)
    if found & {"-b", "-B", "--orphan"}:
        return None
    force = "-f" in found or long_opt(found, "--force", 4)
    paths = "--" in args and args.index("--") < len(args) - 1
    if force or paths or long_opt(found, "--pathspec-from-file", 4) or any(o in (".", ":/", "*") for o in operands):
        what = "`git checkout -f` overwrites local changes" if force else "it overwrites those files' local changes"
        return ctx.hit("git.checkout-discard", shown, _lost(shown, what, "Commit or `git stash` them first"))
    return None


def _restore(args: list[str], shown: str, ctx: Ctx) -> str | None:
    operands, opts, _ = getopt(args, "sU", frozenset({"--source", "--conflict", "--pathspec-from-file"}))
    found = names(opts)
    staged = "-S" in found or long_opt(found, "--staged", 4)
    worktree = "-W" in found or long_opt(found, "--worktree", 3)
    if (worktree or not staged) and (operands or long_opt(found, "--pathspec-from-file", 4)):
        return ctx.hit(
            "git.restore-worktree",
            shown,
            _lost(
                shown,
                "restoring the working tree overwrites local changes",
                "Use `git restore --staged` to unstage only, `git stash` to set changes aside",
            ),
        )
    return None


def _switch(args: list[str], shown: str, ctx: Ctx) -> str | None:
    _, opts, _ = getopt(args, "cC", frozenset({"--create", "--force-create", "--orphan", "--conflict"}))
    found = names(opts)
    if "-f" in found or long_opt(found, "--force", 4) or long_opt(found, "--discard-changes", 4):
        return ctx.hit(
            "git.switch-discard", shown, _lost(shown, "it discards local changes", "Commit or `git stash` them first")
        )
    return None


def _rm(args: list[str], shown: str, ctx: Ctx) -> str | None:
    operands, opts, _ = getopt(args, "", frozenset({"--pathspec-from-file"}))
    found = names(opts)
    if ("-f" in found or long_opt(found, "--force", 4)) and not long_opt(found, "--cached", 4):
        return ctx.hit(
            "git.rm-force",
            shown,
            _lost(shown, "`git rm -f` deletes files even with local changes", "Use `git rm --cached` to untrack only"),
        )
    if long_opt(found, "--cached", 4) or "-n" in found or long_opt(found, "--dry-run", 3) or not operands:
        return None  # --cached only untracks: the files stay
    from .delete import check_removals  # git rm .claude/settings.json, git rm -r .claude: deletes them

    return check_removals(operands, shown, ctx)


def _mv(args: list[str], shown: str, ctx: Ctx) -> str | None:
    """``git mv``: judged as the ``mv`` it is (``git mv hookgate.yaml x`` moves hook configuration away, ``git mv
    -f x .claude/settings.json`` overwrites it); ``-n``/``--dry-run`` moves nothing."""
    operands, opts, _ = getopt(args)
    found = names(opts)
    if "-n" in found or long_opt(found, "--dry-run", 3) or len(operands) < 2:
        return None
    from .writes import check_writes

    return check_writes("mv", ["--", *operands], shown, ctx)


def _worktree(args: list[str], shown: str, ctx: Ctx) -> str | None:
    if not args or args[0] != "remove":
        return None
    _, opts, _ = getopt(args[1:])
    if "-f" in names(opts) or long_opt(names(opts), "--force", 4):
        return ctx.hit(
            "git.worktree-remove-force",
            shown,
            _lost(
                shown,
                "it deletes the worktree with its uncommitted and untracked files",
                "Use `git worktree remove` without --force, which refuses a dirty worktree",
            ),
        )
    return None


def _submodule(args: list[str], shown: str, ctx: Ctx) -> str | None:
    """``git submodule deinit -f``: the submodules' working trees deleted even with local changes (without -f,
    deinit refuses a submodule whose working tree has them)."""
    i = 0
    while i < len(args) and args[i].startswith("-"):  # submodule's own options: --quiet, --cached
        i += 1
    if i >= len(args) or args[i] != "deinit":
        return None
    _, opts, _ = getopt(args[i + 1 :])
    if "-f" in names(opts) or long_opt(names(opts), "--force", 4):
        return ctx.hit(
            "git.submodule-deinit-force",
            shown,
            _lost(
                shown,
                "it deletes the submodules' working trees with their local changes",
                "Use `git submodule deinit` without -f, which refuses a submodule with local changes",
            ),
        )
    return None


def _stash(args: list[str], shown: str, ctx: Ctx) -> str | None:
    verb = args[0] if args else ""
    if verb == "drop":
        return ctx.hit(
            "git.stash-drop",
            shown,
            (
                f"`{shown}` deletes a stash, which {_RECOVERABLE}; {POLICY} asks first. `git stash pop` applies and "
                "drops it in one step."
            ),
        )
    if verb == "clear":
        return ctx.hit(
            "git.stash-clear", shown, (f"`{shown}` deletes every stash, which {_RECOVERABLE}; {POLICY} asks first.")
        )
    return None


def _branch(args: list[str], shown: str, ctx: Ctx) -> str | None:
    if "--end-of-options" in args:  # git branch --end-of-options -d: creates a branch named -d
        cut = args.index("--end-of-options")
        args = [*args[:cut], "--", *args[cut + 1 :]]
    operands, opts, _ = getopt(
        args,
        "u",
        frozenset(
            {
                "--set-upstream-to",
                "--format",
                "--contains",
                "--no-contains",
                "--merged",
                "--no-merged",
                "--points-at",
                "--sort",
                "--color",
            }
        ),
    )
    found = names(opts)
    force = "-f" in found or long_opt(found, "--force", 4)
    delete = "-d" in found or long_opt(found, "--delete", 5)
    if "-D" in found or (delete and force):
        return ctx.hit(
            "git.branch-force-delete",
            shown,
            (
                f"`{shown}` deletes a branch even if it is not merged; its commits {_RECOVERABLE}, so {POLICY} "
                "asks first. `git branch -d` deletes only merged branches."
            ),
        )
    if delete:
        return ctx.hit(
            "git.branch-delete",
            shown,
            (
                f"`{shown}` deletes a branch (git refuses one not merged into HEAD or its upstream, but the "
                f"branch's own reflog goes with it); its commits {_RECOVERABLE}, so {POLICY} asks first."
            ),
        )
    overwrite = "-M" in found or "-C" in found
    overwrite = overwrite or (force and ("-m" in found or "-c" in found or long_opt(found, "--move", 4)))
    if overwrite or (force and long_opt(found, "--copy", 4)):
        return ctx.hit(
            "git.branch-overwrite",
            shown,
            (
                f"`{shown}` renames or copies a branch over one that may exist, which then points elsewhere; "
                f"its old commits {_RECOVERABLE}, so {POLICY} asks first. Use -m/-c, which refuse to overwrite."
            ),
        )
    dynamic = [o for o in operands if o.startswith(("$", "`"))]
    if dynamic:  # git branch $(producer): the options are known only at run time (-D, at worst)
        return ctx.hit(
            "git.branch-force-delete",
            shown,
            (
                f"`{shown}` takes arguments known only at run time ({dynamic[0]}), which could delete a branch "
                f"(`-D`); its commits would then be recoverable only through git's reflog, so {POLICY} asks first."
            ),
        )
    return None


def _checkout_index(args: list[str], shown: str, ctx: Ctx) -> str | None:
    """``git checkout-index -f -a``: the index's copy over every working-tree file."""
    _, opts, _ = getopt(args, "", frozenset({"--prefix", "--stage"}))
    found = names(opts)
    prefix = next((v for o, v in opts if o == "--prefix"), "")
    if ("-f" in found or long_opt(found, "--force", 4)) and "--temp" not in found and prefix in ("", "./"):
        return ctx.hit(
            "git.checkout-discard",
            shown,
            _lost(shown, "`checkout-index -f` overwrites the files' local changes", "Commit or `git stash` them first"),
        )
    return None


def _reflog(args: list[str], shown: str, ctx: Ctx) -> str | None:
    """``git reflog expire --expire=now`` / ``reflog delete``: the record that makes reset, rebase and deleted
    branches recoverable."""
    verb = args[0] if args else ""
    _, opts, _ = getopt(args[1:], "", frozenset({"--expire", "--expire-unreachable"}))
    expires = [v.lower() for o, v in opts if o in ("--expire", "--expire-unreachable")]
    if {"-n", "--dry-run"} & names(opts):
        return None
    if verb == "delete" or (verb == "expire" and any(_soon(v) for v in expires)):
        return ctx.hit(
            "git.reflog-expire",
            shown,
            (
                f"`{shown}` deletes reflog entries, the only record through which commits lost to a reset, a "
                f"rebase or a deleted branch can be found again; once git collects garbage they are gone for good, "
                f"so {POLICY} blocks it. Ask the user."
            ),
        )
    return None


def _soon(when: str) -> bool:
    """Whether an ``--expire``/``--prune`` time drops what git would otherwise keep for weeks: ``now``, ``all``,
    a time in seconds, minutes, hours or days."""
    if when in ("now", "all", "0") or "now" in when:
        return True
    m = re.search(r"(\d+)\W*(second|minute|hour|day)", when)  # 2.weeks.ago, 90.days.ago: git's own pace
    return m is not None and (m.group(2) != "day" or int(m.group(1)) < 7)


def _prune(args: list[str], shown: str, ctx: Ctx, gc: bool) -> str | None:
    """``git gc --prune=now`` / ``git prune``: unreachable objects (dropped stashes, deleted branches'
    commits) deleted at once instead of after git's two-week grace period."""
    found = {a.partition("=")[0] for a in args}
    if "-n" in found or "--dry-run" in found:
        return None
    if gc:
        if not any(_soon(a.partition("=")[2].lower()) for a in args if a.startswith("--prune=")):
            return None
    else:
        _, opts, _ = getopt(args, "", frozenset({"--expire"}))
        if any(not _soon(v.lower()) for o, v in opts if o == "--expire"):
            return None
    return ctx.hit(
        "git.gc-prune",
        shown,
        (
            f"`{shown}` deletes unreachable objects at once (dropped stashes, deleted branches' commits: what "
            f"`git fsck` could still bring back), so they are lost for good; {POLICY} blocks it. Run `git gc` "
            "without --prune=now, or ask the user."
        ),
    )


def _config(args: list[str], shown: str, ctx: Ctx) -> str | None:
    """``git config core.pager 'CMD'``, ``git config alias.x '!CMD'``: a value git will run as a shell command."""
    operands, opts, _ = getopt(
        args, "f", frozenset({"--file", "--blob", "--type", "--default", "--comment", "--value"})
    )
    edits = bool(CONFIG_EDITS.intersection(args)) or len(operands) > (2 if operands[:1] in (["set"], ["--add"]) else 1)
    for file in (v for o, v in opts if o in ("-f", "--file") and edits):  # git config -f .claude/settings.json k v
        reason = config_file_reason(file, shown, ctx)
        if reason:
            return reason
    if operands[:1] in (["set"], ["--add"]):
        operands = operands[1:]
    if len(operands) < 2:
        return None
    key, value = operands[0], operands[1]
    if key.lower().startswith("alias."):
        ctx.state.git_aliases[key[6:].lower()] = value  # what a later `git NAME` in the command runs
    if key.lower().startswith("alias.") and value.startswith("!"):
        return ctx.check_text(value[1:])
    if re.fullmatch(_COMMAND_KEYS, key, re.IGNORECASE):
        return ctx.check_text(value)
    return None


def _rebase(args: list[str], shown: str, ctx: Ctx) -> str | None:
    """``git rebase -x CMD`` runs CMD with the shell after each commit."""
    _, opts, _ = getopt(args, "xsX", frozenset({"--exec", "--strategy", "--strategy-option", "--onto"}))
    for option, value in opts:
        if option in ("-x", "--exec") and value:
            reason = ctx.check_text(value)
            if reason:
                return reason
    return None


def _read_tree(args: list[str], shown: str, ctx: Ctx) -> str | None:
    """``git read-tree --reset -u``: the plumbing form of ``reset --hard``."""
    if "--reset" in args and ("-u" in args or "--u" in args):
        return ctx.hit(
            "git.reset-hard",
            shown,
            (
                f"`{shown}` overwrites the working tree like `git reset --hard`: it {_LOST}, so {POLICY} blocks it. "
                "Use `git stash` to set changes aside, or ask the user."
            ),
        )
    return None


def _update_ref(args: list[str], shown: str, ctx: Ctx) -> str | None:
    """``git update-ref -d REF``: deletes a branch or tag without the porcelain's checks."""
    if "-d" in args or "--delete" in args:
        return ctx.hit(
            "git.ref-delete",
            shown,
            (
                f"`{shown}` deletes a ref (a branch or tag) with no check that it is merged; "
                f"its commits {_RECOVERABLE}, so {POLICY} asks first."
            ),
        )
    return None


_SUBCOMMANDS = {
    "push": _push,
    "reset": _reset,
    "clean": _clean,
    "checkout": _checkout,
    "restore": _restore,
    "switch": _switch,
    "rm": _rm,
    "mv": _mv,
    "worktree": _worktree,
    "submodule": _submodule,
    "stash": _stash,
    "branch": _branch,
    "rebase": _rebase,
    "read-tree": _read_tree,
    "update-ref": _update_ref,
    "checkout-index": _checkout_index,
    "reflog": _reflog,
    "gc": lambda args, shown, ctx: _prune(args, shown, ctx, gc=True),
    "prune": lambda args, shown, ctx: _prune(args, shown, ctx, gc=False),
    "config": _config,
}


# environment variables whose value git (or the pager and editor it starts) runs as a command
_COMMAND_VARS = frozenset(
    {
        "GIT_PAGER",
        "GIT_EDITOR",
        "GIT_SEQUENCE_EDITOR",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_EXTERNAL_DIFF",
        "GIT_ASKPASS",
        "GIT_PROXY_COMMAND",
        "SSH_ASKPASS",
        "PAGER",
        "EDITOR",
        "VISUAL",
        "MANPAGER",
        "LESSOPEN",
        "LESSCLOSE",
    }
)
_CONFIG_PAIR = r"'((?:[^']|'\\'')*)'(?:='((?:[^']|'\\'')*)')?"  # GIT_CONFIG_PARAMETERS ('k'='v' 'k2'='v2')


def check_env(assigns: list[tuple[str, str]], ctx: Ctx) -> str | None:
    """``GIT_PAGER='CMD' git log``, ``env GIT_SSH_COMMAND='CMD' git fetch``, ``export GIT_EDITOR='CMD'``: values
    git runs as shell commands (also ``GIT_CONFIG_PARAMETERS`` and ``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n``
    naming a command key). ``assigns``: ``(name, value)`` pairs as the shell assigns them."""
    keys = {name[len("GIT_CONFIG_KEY_") :]: value for name, value in assigns if name.startswith("GIT_CONFIG_KEY_")}
    for name, value in assigns:
        program = None
        if name in _COMMAND_VARS:
            program = value.lstrip("|") if name.startswith("LESS") else value
        elif name.startswith("GIT_CONFIG_VALUE_"):
            key = keys.get(name[len("GIT_CONFIG_VALUE_") :])
            if key is None or key.lower().startswith("alias.") or re.fullmatch(_COMMAND_KEYS, key, re.IGNORECASE):
                program = value.lstrip("!")
            if key is not None and key.lower().startswith("alias."):
                ctx.state.git_aliases[key[6:].lower()] = value
        elif name == "GIT_CONFIG_PARAMETERS":
            for m in re.finditer(_CONFIG_PAIR, value):
                key, setting = m.group(1), (m.group(2) or "").replace("'\\''", "'")
                if m.group(2) is None:  # the older form 'alias.p=push -f'
                    key, _, setting = key.replace("'\\''", "'").partition("=")
                if key.lower().startswith("alias."):
                    ctx.state.git_aliases[key[6:].lower()] = setting
                if key.lower().startswith("alias.") or re.fullmatch(_COMMAND_KEYS, key, re.IGNORECASE):
                    reason = ctx.check_text(setting.lstrip("!"))
                    if reason:
                        return reason
        if program:
            reason = ctx.check_text(program)
            if reason:
                return reason
    return None
