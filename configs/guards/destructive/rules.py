"""The dispatcher: every simple command of a token list (and of every substitution in it) goes to its rule.

``check_tokens`` walks the simple commands (``expand.commands``) and the command and process substitutions
wherever they are; ``check_argv`` unwraps wrappers (``expand.unwrap``), checks the shell programs they run, and
hands the command to its rule: ``delete`` (rm, find, unlink...), ``git``, ``writes``, ``programs`` (shells,
eval, source, interpreters, at/crontab), mkfs, dd. A glob in the command name is checked as every command it
could match; a literal ``$(echo ...)`` command word as the command it prints.
"""

from __future__ import annotations

import os
import re

from .cmdnames import (
    DISK_TOOLS,
    FETCHERS,
    FORMATTERS,
    HTTP_CLIENTS,
    OPTION_RUNNERS,
    PROGRAM_FILES,
    SHELLS,
    TOOLS,
    interpreter_family,
    writes_files,
)
from .context import POLICY, Ctx
from .defined import check_defined, check_startup, define_aliases, define_functions, fork_bomb
from .expand import (
    ASSIGNMENT,
    Cmd,
    Unwrapped,
    base,
    commands,
    defaulted,
    evaluated,
    literal_output,
    show,
    unwrap,
)
from .getopt import getopt
from .lexer import Redir, Token, Word
from .wrappers import WRAPPERS

# The rule modules (delete, git, interp, programs, selfguard, tools, writes) are imported where a command's
# name calls for them (``cmdnames``): a hook call on ``ls -la`` loads none of them.

_OUTPUT_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_FORK_BOMB = f"This is a fork bomb: it starts processes until the machine stops responding. {POLICY} blocks it."
# the names a glob in the command word is tried as (``r?`` -> rm): every command this guard judges
_GLOB_CANDIDATES = (
    "rm",
    "unlink",
    "shred",
    "rmdir",
    "find",
    "git",
    "dd",
    "mkfs",
    *sorted(FORMATTERS),
    "wipefs",
    "blkdiscard",
    "mkswap",
    "sgdisk",
    "sfdisk",
    "eval",
    "source",
    "tee",
    "cp",
    "mv",
    "ln",
    "install",
    "rsync",
    "sed",
    "perl",
    "truncate",
    "chmod",
    "chown",
    "tar",
    "curl",
    "wget",
    "python",
    "python3",
    "node",
    "ruby",
    "php",
    "lua",
    "deno",
    "tclsh",
    "pwsh",
    "powershell",
    "at",
    "batch",
    "crontab",
    "trap",
    "rimraf",
    "fd",
    "fdfind",
    "hookgate",
    "sqlite3",
    "uv",
    *sorted(DISK_TOOLS),
    *sorted(TOOLS),
    *sorted(HTTP_CLIENTS),
    *sorted(SHELLS),
    *sorted(WRAPPERS),
)


def check_tokens(toks: list[Token], ctx: Ctx, stdin: Cmd | None = None) -> str | None:
    """Check a shell program; ``stdin``: the command whose output it reads (``curl x | sh -c 'sh'``), or None."""
    if fork_bomb(toks):
        return ctx.hit("shell.fork-bomb", ":(){ :|:& };:", _FORK_BOMB)
    define_functions(toks, ctx.state.functions)
    if _names(toks, FETCHERS):  # curl -o x URL && sh x: the files it downloads to, before anything runs
        from .programs import record_downloads

        record_downloads(toks, ctx)
    for cmd in commands(toks, stdin):
        reason = check_cmd(cmd, ctx)
        if reason:
            return reason
    for t in toks:  # command and process substitutions run too, wherever they are
        words = [t] if isinstance(t, Word) else [w for w in (t.target, t.body) if w] if isinstance(t, Redir) else []
        for w in words:
            for sub in w.subs:
                reason = check_tokens(sub, ctx.deeper())
                if reason:
                    return reason
    return None


def _names(toks: list[Token], wanted: frozenset[str], depth: int = 0) -> bool:
    """Whether a word of ``toks`` (or of a substitution in them) is one of ``wanted`` (``/usr/bin/curl`` too)."""
    for t in toks:
        words = [t] if isinstance(t, Word) else [w for w in (t.target, t.body) if w] if isinstance(t, Redir) else []
        for w in words:
            if base(w.text) in wanted or (depth < 8 and any(_names(sub, wanted, depth + 1) for sub in w.subs)):
                return True
    return False


def check_cmd(cmd: Cmd, ctx: Ctx) -> str | None:
    for r in cmd.redirs:
        if r.op in _OUTPUT_REDIRECTS and r.target is not None:
            target = r.target.text
            if (r.op == ">&" and (target.isdigit() or target == "-")) or target == "/dev/null":
                continue  # (2>/dev/null: nothing to protect there, and no need to load the write rules)
            from .writes import write_reason

            reason = write_reason(target, show(cmd.words, cmd.redirs), ctx)
            if reason:
                return reason
    for w in (*cmd.words, *(r.target for r in cmd.redirs if r.target is not None)):
        if w.procsub is not None and w.text.startswith(">("):  # curl URL > >(sh), curl URL | tee >(sh)
            reason = _check_written_into(w.procsub, cmd, ctx)
            if reason:
                return reason
    return check_argv(cmd.words, cmd, ctx)


def _sqlite_fed(args: list[Word], cmd: Cmd | None) -> str | None:
    """The literal script sqlite3 reads on its stdin (``echo …``/``printf …`` piped in, a heredoc, a here-string)
    and from ``-init <(echo …)``, or None."""
    from .programs import stdin, stdin_text

    texts = [stdin_text(*stdin(cmd))] if cmd is not None else []
    for k, w in enumerate(args[:-1]):
        init = args[k + 1]
        if w.text.lstrip("-") == "init" and init.procsub is not None:
            producers = commands(init.procsub)
            texts.append(stdin_text("pipe", producers[-1]) if producers else None)
    return "\n".join(t for t in texts if t) or None


def _reads_stdin(toks: list[Token]) -> bool:
    """Whether the substitution ``toks`` prints its stdin: ``$(cat)``, ``$(cat -)``, ``$(cat /dev/stdin)``."""
    subs = commands(toks)
    return (
        len(subs) == 1
        and [w.text for w in subs[0].words][:1] == ["cat"]
        and not subs[0].redirs
        and all(w.text in ("-", "/dev/stdin", "/dev/fd/0") for w in subs[0].words[1:])
    )


def _check_written_into(procsub: list[Token], writer: Cmd, ctx: Ctx) -> str | None:
    """``>(...)`` written by ``writer`` (a redirection's target, ``tee``'s or ``curl -o``'s file): the first
    command of the substitution reads what ``writer`` writes (``tee``: what ``writer`` itself reads)."""
    subs = commands(procsub)
    if not subs:
        return None
    fed = Cmd(writer)
    fed.words, fed.redirs = subs[0].words, subs[0].redirs
    return check_cmd(fed, ctx.deeper())


def check_argv(words: list[Word], cmd: Cmd | None, ctx: Ctx) -> str | None:
    """Check one command line (``cmd``: where its stdin comes from, or None when unknown/none)."""
    ctx.state.on_time()
    if any(w.subs and not w.literal for w in words):  # g$(printf it) re$(printf set) --ha$(printf rd)
        spliced = [evaluated(w) for w in words]
        if any(s is not None for s in spliced):
            words = [x for w, s in zip(words, spliced, strict=True) for x in ([w] if s is None else s)]
    if any(not w.literal and "${" in w.text for w in words):  # ${x:-rm} -rf ~: the default may be what runs
        alternative = defaulted(words)
        reason = check_argv(alternative, cmd, ctx.deeper()) if alternative is not None else None
        if reason:
            return reason
    if ctx.state.variables and any(not w.literal and "$" in w.text for w in words):
        from .variables import substituted  # x='rm -rf ~'; eval "$x": what the variables hold runs

        for text in substituted(words, ctx.state.variables):
            reason = ctx.check_text(text)
            if reason:
                return reason
    if ctx.state.positionals and any(not w.literal and "$" in w.text for w in words):
        from .variables import with_positionals  # set -- rm -rf ~; "$@"

        for text in with_positionals(words, ctx.state.positionals):
            reason = ctx.check_text(text)
            if reason:
                return reason
    u = unwrap(words)
    if u.runner and base(u.runner[0].text) in PROGRAM_FILES and (ctx.state.downloaded or any(w.subs for w in u.runner)):
        from .programs import check_program_files  # make -f <(curl ...), gdb -x, vim -S, expect -f

        reason = check_program_files(base(u.runner[0].text), u.runner[1:], show(u.runner), ctx)
        if reason:
            return reason
    for text in u.strings:  # su -c sh, script -qc sh: the program reads the command's stdin (xargs: none)
        from .stdin import stdin_source

        reason = ctx.check_text(text, None if u.feeder else stdin_source(cmd))
        if reason:
            return reason
    if u.remote:  # ssh host 'rm -rf build': run in a directory nothing here says (not the project)
        from .stdin import stdin_source

        elsewhere = ctx.moved_to(None, True)
        for text in u.remote:
            reason = elsewhere.check_text(text, None if u.feeder else stdin_source(cmd))
            if reason:
                return reason
    if u.chdir is not None:  # env -C / rm -rf build: the delete runs in /
        ctx = ctx.moved_to(*_moved_cwd(u.chdir, ctx))
    core = u.words
    declared = core[1:] if core and core[0].text in _DECLARES else []
    if u.assigns or declared:  # BASH_ENV=x.sh bash, PROMPT_COMMAND='...': run at a shell's start or prompt
        reason = check_startup([*u.assigns, *declared], core, ctx)
        if reason:
            return reason
    if u.assigns or declared:  # GIT_PAGER='rm -rf ~' git log, export GIT_EDITOR=...
        reason = _check_assignments([*u.assigns, *declared], ctx)
        if reason:
            return reason
    if declared or (u.assigns and not core):  # x='rm -rf ~' (then eval "$x"), export CMD=...
        from .variables import remember

        remember([*u.assigns, *declared] if not core else declared, ctx.state.variables)
    while core and core[0].text.startswith("BASH_FUNC_") and "=" in core[0].text:  # env 'BASH_FUNC_ls%%=() {
        body = core[0].text.partition("=")[2]  # rm -rf ~; }' bash -c ls: a function bash imports, then may call
        reason = ctx.check_text(body[2:] if body.startswith("()") else body)
        if reason:
            return reason
        core = core[1:]
    if not core:
        return None
    feeder_cmd = cmd if u.feeder else None  # xargs feeds its stdin as arguments; the command's stdin is empty
    if u.feeder:
        cmd = None
    head = core[0]
    if ctx.state.downloaded and "/" in head.text:  # curl -o x URL; chmod +x x; ./x
        from .programs import run_downloaded

        reason = run_downloaded(head, show(core, limit=80), ctx)
        if reason:
            return reason
    if head.globs() and head.text != "[" and base(head.text).strip("*"):  # /bin/r? -rf /: every command it can
        # name (a bare `*` names whatever sorts first: unknowable, like `/* *`, a C comment pasted into a shell)
        return _check_glob_head(head, core[1:], cmd, ctx)
    if head.subs and not head.literal and head.procsub is None:  # $(echo rm -rf /): its output is the command
        output = literal_output(head)
        if output is not None:
            import shlex

            return ctx.check_text(" ".join([output, *(shlex.quote(w.text) for w in core[1:])]))
    if head.literal and (head.text in ctx.state.functions or head.text in ctx.state.aliases):
        reason = check_defined(head.text, core[1:], cmd, ctx)
        if reason:
            return reason
    name = "sh" if head.text in ("$SHELL", "${SHELL}") else base(head.text)
    if name.lower() in ("git", "git.exe"):
        name = "git"
    args = core[1:]
    if u.feeder and name not in SHELLS:  # xargs rm -r: the arguments it reads are known only at run time
        args = _fed(args, u)
    texts = [w.text for w in args]
    shown = show(core)
    files = name if name in PROGRAM_FILES else interpreter_family(name)
    if files in PROGRAM_FILES and (ctx.state.downloaded or any(w.subs for w in args)):  # awk -f <(curl ...)
        from .programs import check_program_files

        reason = check_program_files(files, args, shown, ctx)
        if reason:
            return reason
    if name in ("sqlite3", "sed", "gsed") or name in _AWKS:  # curl x | sqlite3 db: a download as the script
        from .scripted import check_scripted

        reason = check_scripted(name, args, cmd, shown, ctx)
        if reason:
            return reason
    if name in OPTION_RUNNERS:  # tar --to-command=CMD, ssh -o ProxyCommand=CMD, sqlite3 .shell CMD, sed 'e CMD'
        from .optruns import option_runs

        fed = _sqlite_fed(args, cmd) if name == "sqlite3" else None  # echo '.shell rm -rf ~' | sqlite3 x.db
        for text in option_runs(name, [*texts, *([fed] if fed else [])]):
            reason = ctx.check_text(text)
            if reason:
                return reason
    if name in ("rm", "rimraf", "unlink", "shred", "rmdir", "find"):
        from .delete import check_find, check_removals, check_rm

        if name == "rm":
            return check_rm(args, shown, ctx)
        if name == "shred":
            from .shred import check_shred

            return check_shred(args, shown, ctx)
        if name == "rimraf":  # npx rimraf dist: rm -rf in node's clothes
            return check_rm([Word("-r"), *args], shown, ctx)
        if name == "find":
            return check_find(args, ctx, shown)
        return check_removals(getopt(texts)[0], shown, ctx)
    if name in _AWKS:
        return _check_awk(texts, shown, ctx, _program_files(args), args)
    if name == "git":
        from .git import check_git, config_env

        if any(t.startswith("--config-env") for t in texts):  # X='!rm -rf ~' git --config-env=alias.p=X p
            texts = config_env(texts, [w.text for w in u.assigns], ctx.state.variables)
        return check_git(texts, shown, ctx)
    if name.startswith(("mkfs", "newfs_")) or name in FORMATTERS:  # newfs_hfs, newfs_msdos (macOS)
        return ctx.hit(
            "disk.mkfs", shown, f"`{shown}` formats a file system and erases everything on it, so {POLICY} blocks it."
        )
    if name in ("fd", "fdfind"):  # fd -t d build -x rm -rf: the command after --exec runs on every result
        return _check_fd_exec(args, ctx)
    if name in DISK_TOOLS:
        from .writes import check_disk_tool

        return check_disk_tool(name, texts, shown, ctx)
    if name in SHELLS:
        from .programs import check_shell

        return check_shell(name, args, feeder_cmd if u.feeder else cmd, ctx, u)
    if name == "eval":
        from .programs import check_program, fetch_in_subs, stdin

        if cmd is not None and any(_reads_stdin(sub) for w in args for sub in w.subs):  # ... | eval "$(cat)"
            reason = check_program(*stdin(cmd), "eval", ctx)
            if reason:
                return reason
        return fetch_in_subs(args, shown, ctx) or ctx.check_text(" ".join(texts[texts[:1] == ["--"] :]))
    if name == "trap":  # trap 'cmd' EXIT: the shell runs cmd
        texts = texts[texts[:1] == ["--"] :]
        return ctx.check_text(texts[0]) if texts and texts[0] not in ("-l", "-p", "-") else None
    if name in ("source", "."):
        from .programs import check_source

        return check_source(name, args, cmd, ctx)
    if name in ("at", "batch", "crontab"):
        from .programs import check_scheduler

        return check_scheduler(name, args, cmd, ctx)
    if name == "alias":
        define_aliases(texts, ctx.state.aliases)
        return None
    if name == "hash" and any(t.startswith("-p") for t in texts[:-1]):  # hash -p /bin/rm ls: ls runs /bin/rm
        import shlex

        at = next(k for k, t in enumerate(texts) if t.startswith("-p"))
        path, names = (texts[at][2:], texts[at + 1 :]) if texts[at] != "-p" else (texts[at + 1], texts[at + 2 :])
        for alias in names if path else []:
            ctx.state.aliases[alias] = shlex.quote(path)
        return None
    if name in ("mapfile", "readarray"):  # mapfile -C CMD: the shell evals CMD for lines it reads
        for option, callback in getopt(texts, "dnOsuCc")[1]:
            reason = ctx.check_text(callback) if option == "-C" else None
            if reason:
                return reason
        return None
    if name == "set":
        from .variables import set_positionals

        set_positionals(texts, ctx.state.positionals)
        return None
    if name == "shift" and ctx.state.positionals:  # set -- x rm -rf ~; shift; "$@"
        from .variables import shift_positionals

        shift_positionals(texts, ctx.state.positionals)
        return None
    if name == "hookgate":
        from .selfguard import check_hookgate

        return check_hookgate(texts, shown, ctx)
    if name.rstrip("0123456789.") in _PIP_NAMES or (name == "uv" and texts[:1] in (["pip"], ["tool"])):
        from .selfguard import check_pip

        reason = check_pip(name, texts, shown, ctx)
        if reason:
            return reason
    if name == "sqlite3":
        from .selfguard import check_sqlite

        return check_sqlite(texts, shown, ctx, _sqlite_fed(args, cmd))
    if name in HTTP_CLIENTS:
        from .selfguard import check_http

        reason = check_http(texts, shown, ctx)
        if reason:
            return reason
    if name in TOOLS:
        from .tools import check_tool

        reason = check_tool(name, args, shown, ctx)
        if reason:
            return reason
    if writes_files(name):
        from .writes import check_writes

        reason = check_writes(name, texts, shown, ctx)
        if reason:
            return reason
    if name[:1] in "pP" and name.lower().removesuffix(".exe") in _POWERSHELLS:
        from .powershell import check_powershell

        return check_powershell(name.lower(), args, cmd, ctx, shown)
    if name == "deno":
        from .programs import check_deno

        return check_deno(args, cmd, ctx, shown)
    family = interpreter_family(name)
    if family:
        from .programs import check_interpreter

        return check_interpreter(family, args, cmd, ctx, shown)
    return None


def _moved_cwd(chdir: Word | None, ctx: Ctx) -> tuple[str | None, bool]:
    """``(cwd, lost)`` for a command run in ``chdir`` (None: where it was)."""
    if chdir is None:
        return ctx.cwd, False
    text = chdir.text
    if text.startswith("~") and chdir.literal:
        text = ctx.state.home() + text[1:]
    if not chdir.literal or text.startswith("~"):
        return None, True
    if not text.startswith("/"):
        if ctx.cwd is None or ctx.lost or ctx.state.changes_directory_before(ctx.state.part):
            return None, True
        text = os.path.join(ctx.cwd, text)
    return os.path.normpath(text), False


_PIP_NAMES = frozenset({"pip", "pip3", "pipx"})
_POWERSHELLS = frozenset({"pwsh", "powershell", "pwsh-preview"})
_DECLARES = frozenset({"export", "declare", "typeset", "local", "readonly"})


def _check_assignments(words: list[Word], ctx: Ctx) -> str | None:
    pairs = []
    for w in words:
        m = re.match(ASSIGNMENT, w.text) if "=" in w.text else None
        value: str | None = w.text[m.end() :] if m else None
        if m and not w.literal:  # GIT_PAGER=$(echo rm -rf ~): what the substitution prints
            spliced = Word(w.text[m.end() :])
            spliced.subs = w.subs
            value = literal_output(spliced)
        if m and value is not None:
            pairs.append((m.group().rstrip("+=").split("[", 1)[0], value))
    if not pairs:
        return None
    from .git import check_env

    return check_env(pairs, ctx)


_AWKS = frozenset({"awk", "gawk", "mawk", "nawk"})


def _program_files(args: list[Word]) -> list[str]:
    """The literal text ``-f <(echo …)`` (``--file``, ``-E``) hands a program as its program file."""
    from .programs import stdin_text

    out = []
    for k, w in enumerate(args[1:], 1):
        if w.procsub is not None and args[k - 1].text in ("-f", "--file", "-E", "--exec"):
            producers = commands(w.procsub)
            text = stdin_text("pipe", producers[-1]) if producers else None
            out += [text] if text is not None else []
    return out


def _check_awk(
    args: list[str], shown: str, ctx: Ctx, files: list[str] | None = None, words: list[Word] | None = None
) -> str | None:
    """awk's program text (``files``: the text of its ``-f <(echo …)`` files; ``words``: the arguments as words,
    for a program that is a download, ``awk "$(curl ...)"``): ``system("...")`` runs a shell command."""
    _, opts, stop = getopt(
        args,
        "fvFeiE",
        frozenset({"--file", "--assign", "--field-separator", "--source", "--include", "--exec"}),
        permute=False,
    )
    operands = args[stop:]
    programs = [v for o, v in opts if o in ("-e", "--source")]
    if not programs and not any(o in ("-f", "--file", "-E", "--exec") for o, _ in opts) and operands:
        programs.append(operands[0])
        if words is not None and words[stop].subs:
            from .programs import fetch_in_subs

            reason = fetch_in_subs([words[stop]], shown, ctx)
            if reason:
                return reason
    from .interp import check_code
    from .optruns import awk_piped

    for program in [*programs, *(files or [])]:
        reason = check_code("awk", program, shown, ctx)
        for text in [] if reason else awk_piped(program):  # print "rm -rf ~" | "sh", "rm -rf ~" | getline
            reason = ctx.check_text(text)
            if reason:
                break
        if reason:
            return reason
    return None


def _fed(args: list[Word], u: Unwrapped) -> list[Word]:
    """The arguments with what xargs/parallel read from stdin marked unknown (in place of ``-I`` placeholders)."""
    unknown = Word("$HOOKGATE_STDIN_ITEM")
    unknown.literal = False
    if u.replace:
        return [unknown if u.replace in w.text else w for w in args]
    return [*args, unknown]


_FD_EXEC = frozenset({"-x", "--exec", "-X", "--exec-batch"})


def _check_fd_exec(args: list[Word], ctx: Ctx) -> str | None:
    """``fd ... -x CMD ARGS [;]`` (``--exec``, ``-X``/``--exec-batch``): CMD runs with each result, in place of
    a ``{}``-style placeholder or after its arguments; a result is a path known only at run time."""
    for i, word in enumerate(args):
        text = word.text
        option, eq, value = text.partition("=")
        if text.startswith("--"):
            attached = value if eq and option in _FD_EXEC else None  # --exec=rm
        else:
            attached = text[2:] if text[:2] in ("-x", "-X") and len(text) > 2 else None  # -xrm
        if text in _FD_EXEC or attached:
            rest = args[i + 1 :]
            if attached:  # --exec=rm -rf, -xrm -rf
                head = Word(attached)
                head.literal = word.literal
                rest = [head, *rest]
            end = next((k for k, w in enumerate(rest) if w.text == ";"), len(rest))
            command = rest[:end]
            if not command:
                return None
            unknown = Word("$HOOKGATE_FD_RESULT")
            unknown.literal = False
            placed = [unknown if "{" in w.text and "}" in w.text else w for w in command[1:]]
            if not any(w is unknown for w in placed):
                placed.append(unknown)
            reason = check_argv([command[0], *placed], None, ctx.deeper())
            if reason:
                return reason
            return _check_fd_exec(rest[end + 1 :], ctx) if end < len(rest) else None
    return None


def _check_glob_head(head: Word, args: list[Word], cmd: Cmd | None, ctx: Ctx) -> str | None:
    import fnmatch

    pattern = base(head.text)
    for name in (*_GLOB_CANDIDATES, *sorted(_AWKS), *sorted(_PIP_NAMES)):
        if fnmatch.fnmatchcase(name, pattern) or (name == "mkfs" and fnmatch.fnmatchcase("mkfs.ext4", pattern)):
            reason = check_argv([Word(name), *args], cmd, ctx.deeper())
            if reason:
                return (
                    f"The command name `{head.text}` is a glob that can match `{name}`, so hookgate checks it as "
                    f"`{name}`: {reason}"
                )
    return None
