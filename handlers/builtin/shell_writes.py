"""Which shell commands only read: the Bash half of ``handlers.builtin.writes`` (the ``readOnly`` built-in).

``shell_write_reason(command, read_commands=()) -> str | None`` names why a Bash command may write or run a
program (None: every part of it only reads). The command is parsed with bashlex; it reads only when every
command in it (pipelines, lists, subshells, ``$(...)``, ``${x:-$(...)}``, assignments' values, loop bodies) is
on the read-only list with harmless arguments and no output is redirected to a file other than ``/dev/null``.
A command not on the list, one bashlex cannot parse, or an assignment to a variable that makes programs run a
command (``GIT_PAGER``, ``LESSOPEN``, ``GIT_EXTERNAL_DIFF``, ``BASH_ENV``... see ``runs_programs``) counts as a
write (read-only mode fails closed). ``sed`` is read with the default shell guard's option parser and its
script command by command (``sedscript``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from gateway.errors import HookgateError

READ_COMMANDS = frozenset(
    {
        "ls",
        "cat",
        "head",
        "tail",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "wc",
        "pwd",
        "echo",
        "printf",
        "which",
        "type",
        "whoami",
        "id",
        "date",
        "uname",
        "stat",
        "file",
        "du",
        "df",
        "tree",
        "cut",
        "tr",
        "diff",
        "cmp",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "true",
        "false",
        "test",
        "[",
        "jq",
        "nl",
        "less",
        "more",
        "column",
        "seq",
        "sleep",
        "hostname",
        "ps",
        "printenv",
        "cd",
        "sha256sum",
        "sha1sum",
        "md5sum",
        "comm",
        "od",
        "hexdump",
        "strings",
        "uniq",
        "sort",
        "sed",
        "find",
        "git",
        "xargs",
        "timeout",
        "nice",
        "nohup",
        "time",
        "command",
        "env",
        ":",
    }
)
"""Commands that read (some only with harmless arguments; see ``_argv_reason``)."""

GIT_READ = frozenset(
    {
        "status",
        "log",
        "diff",
        "show",
        "blame",
        "grep",
        "ls-files",
        "ls-tree",
        "rev-parse",
        "describe",
        "shortlog",
        "cat-file",
        "whatchanged",
        "rev-list",
        "name-rev",
        "help",
        "version",
    }
)
_GIT_LIST_FLAGS = frozenset(
    {
        "-a",
        "-r",
        "-l",
        "--list",
        "-v",
        "-vv",
        "--all",
        "--remotes",
        "--show-current",
        "--verbose",
        "--contains",
        "--merged",
        "--no-merged",
    }
)
_FIND_WRITES = frozenset({"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"})
_QUIET_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_OUTPUT_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<>"})


class _Unsure(HookgateError):
    """The command cannot be shown to be read-only."""


def shell_write_reason(command: str, read_commands: Iterable[str] = ()) -> str | None:
    """Why the shell ``command`` may write, or None when every part of it only reads."""
    if not command.strip():
        return None
    import bashlex

    try:
        trees = bashlex.parse(command)
    except Exception as exc:  # bashlex raises its own ParsingError, and others on odd input
        return f"shell command cannot be analysed ({type(exc).__name__}), so it may write"
    allowed = READ_COMMANDS | frozenset(read_commands)
    try:
        for tree in trees:
            _walk(tree, allowed)
    except _Unsure as why:
        return str(why)
    return None


def argv_reason(argv: list[str], read_commands: Iterable[str] = ()) -> str | None:
    """Why the simple command ``argv`` (its words as the program gets them) may write, or None."""
    return _argv_reason(argv, READ_COMMANDS | frozenset(read_commands)) if argv else None


def _walk(node: Any, allowed: frozenset[str]) -> None:
    kind = getattr(node, "kind", "")
    if kind == "command":
        _command(node, allowed)
        return
    if kind == "redirect":
        _redirect(node)
    if kind == "function":
        raise _Unsure("shell command defines a function, so it may write")
    if kind == "parameter":
        _parameter(str(getattr(node, "value", "")), allowed)
        return
    if kind == "heredoc":
        _heredoc(str(getattr(node, "value", "")))
        return
    if kind == "assignment":
        _assignment(node, allowed)
        return
    if kind == "tilde":
        return
    for attr in ("parts", "list"):
        for child in getattr(node, attr, None) or []:
            _walk(child, allowed)
    for attr in ("command", "output", "heredoc"):
        child = getattr(node, attr, None)
        if child is not None and hasattr(child, "kind"):
            _walk(child, allowed)


_SUBSTITUTIONS = ("$(", "`", "<(", ">(")


def _parameter(value: str, allowed: frozenset[str]) -> None:
    """``${NAME<op>WORD}``: WORD (a default, an assigned value, a pattern, an index) is expanded, so a
    command substitution in it runs (``${q:=$(touch x)}``)."""
    if not any(s in value for s in _SUBSTITUTIONS):
        return
    m = re.match(r"[#!]?(?:[A-Za-z_]\w*|[0-9@*#?$!-])", value)
    rest = value[m.end() if m else 0 :].lstrip(":-=+?#%/^,@")
    why = shell_write_reason(": " + rest, allowed) if rest else None
    if why is not None:
        raise _Unsure(f"a command substitution inside ${{{value[:30]}}} may write: {why}")


def _heredoc(value: str) -> None:
    """An unquoted here-document expands ``$(...)`` and backquotes (bashlex keeps its text unparsed; a quoted
    delimiter, where nothing expands, is one bashlex cannot parse)."""
    if "$(" in value or "`" in value:
        raise _Unsure("a here-document runs a command substitution, so it may write")


def _assignment(node: Any, allowed: frozenset[str]) -> None:
    """``NAME=VALUE``: a substitution in VALUE runs; some variables make the programs run later start a
    command (``runs_programs``)."""
    text = str(getattr(node, "word", ""))
    name = text.split("=", 1)[0].rstrip("+")
    if runs_programs(name):
        raise _Unsure(f"shell command sets {name}, which can make a program run a command, so it may write")
    for inner in getattr(node, "parts", None) or []:
        if inner.kind in ("commandsubstitution", "processsubstitution"):
            _walk(inner.command, allowed)
        elif inner.kind == "parameter":
            _parameter(str(getattr(inner, "value", "")), allowed)


_RUNS_NAMES = frozenset(
    {
        *("PAGER", "MANPAGER", "EDITOR", "VISUAL", "BROWSER", "SHELL", "BASH_ENV", "ENV", "PROMPT_COMMAND"),
        *("PS0", "PS1", "PS2", "PS4", "SHELLOPTS", "BASHOPTS", "PATH", "HOME", "XDG_CONFIG_HOME", "MORE"),
        *("RIPGREP_CONFIG_PATH", "GREP_OPTIONS", "MANOPT", "PYTHONSTARTUP", "NODE_OPTIONS", "PERL5OPT"),
    }
)
_RUNS_PREFIXES = ("GIT_", "LESS", "LD_", "DYLD_", "BASH_FUNC_")
_RUNS_SUFFIXES = ("PAGER", "EDITOR", "_COMMAND", "ASKPASS")


def runs_programs(name: str) -> bool:
    """Whether setting the variable ``name`` can make a read-only command run a program or write a file:
    pagers and editors (``GIT_PAGER``, ``PAGER``, ``EDITOR``, ``VISUAL``), every ``GIT_*`` variable
    (``GIT_EXTERNAL_DIFF``, ``GIT_SSH_COMMAND``, ``GIT_CONFIG_*``, ``GIT_TRACE=FILE``...), less's
    (``LESSOPEN``, ``LESSCLOSE``, ``LESS``), what the shell runs (``BASH_ENV``, ``ENV``, ``PROMPT_COMMAND``,
    ``PS4``), where programs and their configuration are found (``PATH``, ``HOME``, ``LD_PRELOAD``)."""
    upper = name.upper()
    return upper in _RUNS_NAMES or upper.startswith(_RUNS_PREFIXES) or upper.endswith(_RUNS_SUFFIXES)


def _redirect(node: Any) -> None:
    target: Any = getattr(node, "output", None)
    word = getattr(target, "word", None)
    if (
        node.type in _OUTPUT_REDIRECTS
        and isinstance(word, str)
        and word not in _QUIET_TARGETS
        and not (node.type == ">&" and word.isdigit())
    ):
        raise _Unsure(f"shell command writes to {word!r} ({node.type})")


def _command(node: Any, allowed: frozenset[str]) -> None:
    words: list[str] = []
    for part in node.parts:
        if part.kind == "redirect":
            _walk(part, allowed)
        elif part.kind == "word":
            for inner in getattr(part, "parts", None) or []:
                if inner.kind in ("commandsubstitution", "processsubstitution"):
                    _walk(inner.command, allowed)
                elif inner.kind == "parameter":
                    if not words:
                        raise _Unsure(f"shell command name {part.word!r} is computed, so it may write")
                    _parameter(str(getattr(inner, "value", "")), allowed)
            words.append(part.word)
        else:
            _walk(part, allowed)
    if words:
        why = _argv_reason(words, allowed)
        if why is not None:
            raise _Unsure(why)


_PREFIX_ARGS = {"timeout": 1, "nice": 0, "nohup": 0, "time": 0, "command": 0}
_XARGS_WITH_VALUE = frozenset({"-n", "-I", "-P", "-d", "-L", "-s", "-E", "-a", "--max-args", "--delimiter"})


def _argv_reason(argv: list[str], allowed: frozenset[str]) -> str | None:
    name = argv[0].rsplit("/", 1)[-1]
    args = argv[1:]
    if name not in allowed:
        return f"shell command {name!r} may write (not one of readOnly's read-only commands)"
    if name in _PREFIX_ARGS:
        rest = [a for a in args if not a.startswith("-")][_PREFIX_ARGS[name] :]
        return _argv_reason(rest, allowed) if rest else None
    if name == "env":
        if any(a.startswith(("-S", "--split-string", "--s")) for a in args):
            return "env -S runs a command line of its own"
        named = next((a.split("=", 1)[0] for a in args if "=" in a and runs_programs(a.split("=", 1)[0])), None)
        if named is not None:
            return f"env {named}=... can make a program run a command"
        rest = [a for a in args if not a.startswith("-") and "=" not in a]
        return _argv_reason(rest, allowed) if rest else None
    if name == "xargs":
        i = 0
        while i < len(args) and args[i].startswith("-"):
            i += 2 if args[i] in _XARGS_WITH_VALUE else 1
        return _argv_reason(args[i:], allowed) if args[i:] else None
    if name == "find" and _FIND_WRITES & set(args):
        return f"find with {sorted(_FIND_WRITES & set(args))[0]} may write"
    if name == "sed":
        from handlers.builtin.sedscript import sed_reason

        return sed_reason(args)
    if name in ("rg", "ag") and any(a.split("=", 1)[0] in ("--pre", "--pre-glob", "--pager") for a in args):
        return f"{name} {next(a for a in args if a.startswith('--p')).split('=', 1)[0]} runs a program"
    if name == "file" and any(a == "--compile" or (a[:1] == "-" and a[1:2] != "-" and "C" in a) for a in args):
        return "file -C writes a compiled magic file"
    if name == "sort":
        return _sort_reason(args)
    if name in ("less", "more"):
        return _pager_reason(name, args)
    if name == "tree" and any(a == "-o" or a.startswith("-o") for a in args):
        return "tree -o writes a file"
    if name == "date" and any(a in ("-s", "--set") or a.startswith(("--set=", "-s")) for a in args):
        return "date -s sets the clock"
    if name == "hostname" and any(not a.startswith("-") for a in args):
        return "hostname NAME sets the host name"
    if name == "uniq" and len([a for a in args if not a.startswith("-")]) > 1:
        return "uniq with an output file writes it"
    if name == "git":
        return _git_reason(args)
    return None


_SORT_LONG = (
    *("output", "compress-program", "check", "batch-size", "debug", "files0-from", "field-separator", "key"),
    *("merge", "stable", "buffer-size", "temporary-directory", "parallel", "unique", "zero-terminated", "help"),
    *("version", "ignore-leading-blanks", "dictionary-order", "ignore-case", "general-numeric-sort"),
    *("ignore-nonprinting", "month-sort", "human-numeric-sort", "numeric-sort", "random-sort", "random-source"),
    *("reverse", "sort", "version-sort"),
)
"""GNU sort's long options: getopt takes any unique prefix of one (``--o`` is ``--output``)."""


def _sort_reason(args: list[str]) -> str | None:
    """``sort -o FILE`` in any spelling GNU sort takes (``-o F``, ``-oF``, ``-ro F``, ``--output=F``, ``--o F``,
    ``--outp=F``), and ``--compress-program`` (also abbreviated), which runs a program."""
    for arg in args:
        if arg == "--":
            return None
        if arg.startswith("--"):
            given = arg[2:].split("=", 1)[0]
            found = [n for n in _SORT_LONG if n.startswith(given)] if given else []
            full = given if given in _SORT_LONG else found[0] if len(found) == 1 else None
            if full == "output":
                return "sort --output writes a file"
            if full == "compress-program":
                return "sort --compress-program runs a program"
        elif arg.startswith("-") and len(arg) > 1:
            for letter in arg[1:]:
                if letter == "o":
                    return "sort -o writes a file"
                if letter in "ktST":  # takes a value: the rest of the word is it
                    break
    return None


_GIT_RUNS_CONFIG = ("-c", "--config-env", "--exec-path")
"""git options that set configuration (``core.pager``, ``core.fsmonitor``, ``diff.external``, an alias
...) or where git finds its programs: any of them can make a read-only subcommand run a program."""


_PAGER_SAFE_START = r"^\+(\d*|[gGF]|[/?][^!|\n\r]*)$"
"""A pager's ``+COMMAND`` that only moves or searches (``+42``, ``+G``, ``+/pattern``); any other command
(``+!cmd`` runs a shell, ``+|``, ``+s`` saves, ``+v`` opens an editor) may write."""


def _pager_reason(name: str, args: list[str]) -> str | None:
    for arg in args:
        if arg.startswith("+") and not re.match(_PAGER_SAFE_START, arg):
            return f"{name} {arg[:20]} runs a {name} command at start (it may run a shell or save a file)"
        if name == "less" and arg.startswith(("-o", "-O", "--log-file", "--LOG-FILE")):
            return f"less {arg.split('=', 1)[0]} writes a log file"
    return None


def _git_reason(args: list[str]) -> str | None:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        option = args[i].split("=", 1)[0]
        if option in _GIT_RUNS_CONFIG or (args[i].startswith("-c") and len(args[i]) > 2):
            return f"git {option} may make git run a program (configuration on the command line)"
        i += 2 if args[i] in ("-C", "--git-dir", "--work-tree", "--namespace") else 1
    if i >= len(args):
        return None
    sub, rest = args[i], args[i + 1 :]
    if sub in GIT_READ:
        written = next((a for a in rest if a.split("=", 1)[0] in ("--output", "-o") and sub != "grep"), None)
        if written is not None:
            return f"git {sub} {written.split('=', 1)[0]} writes a file"
        if sub == "grep" and any(a.startswith(("-O", "--open-files-in-pager")) for a in rest):
            return "git grep -O runs a pager program"
        if sub == "help" and any(a in ("-w", "--web", "-i", "--info", "-m", "--man") for a in rest):
            return f"git help {next(a for a in rest if a.startswith('-'))} starts another program"
        return None
    if sub in ("branch", "tag") and all(a in _GIT_LIST_FLAGS for a in rest):
        return None
    if (
        sub == "remote"
        and all(a in ("-v", "--verbose", "show", "get-url") or not a.startswith("-") for a in rest)
        and (not rest or rest[0] in ("-v", "--verbose", "show", "get-url"))
    ):
        return None
    if sub == "config" and any(a in ("--get", "--get-all", "--list", "-l", "--get-regexp") for a in rest):
        return None
    if sub == "stash" and rest[:1] in (["list"], ["show"]):
        return None
    return f"git {sub} may write"
