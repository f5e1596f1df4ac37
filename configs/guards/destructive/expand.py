"""Expansion and unwrapping: from tokens to the simple commands bash really runs.

Brace expansion (``{rm,-rf,~}``), ``$IFS`` splitting, splitting a token list into simple commands (with the
command piped into each), GNU-style option parsing, and unwrapping: ``sudo -u x env -u Y nice -n 5 rm -rf /``
is ``rm -rf /``; ``su -c 'X'``, ``watch X``, ``tmux new 'X'``, ``sg grp 'X'``, ``script -c 'X'``,
``expect -c 'spawn X'`` and ``parallel X ::: args`` run the shell program ``X``; ``xargs`` and ``parallel``
without argument lists run the command with arguments read from stdin. Also the positional parameters a
``sh -c SCRIPT arg0 arg1`` script receives (``bind_positionals``) and what ``echo``/``printf`` print.
"""

from __future__ import annotations

import itertools
import re

from .expect import as_tclsh, expect_runs
from .getopt import getopt
from .lexer import Redir, Token, Unanalysable, Word, ansi_decode
from .runners import RUNNERS, STRING_RUNNERS, run_by, string_runs, tmux_runs
from .wrappers import REMOTE, WRAPPERS


class Cmd:
    """A simple command: its words, its redirections, and the command whose output is piped into it."""

    __slots__ = ("pipe_in", "redirs", "words")

    def __init__(self, pipe_in: Cmd | None) -> None:
        self.words: list[Word] = []
        self.redirs: list[Redir] = []
        self.pipe_in = pipe_in


MAX_WRAPPERS = 64  # wrappers (sudo, env, nice, runners...) unwrapped in a row; more is refused as unanalysable
MAX_BRACE_WORDS = 256  # a word's brace expansion may give this many words; more is refused as unanalysable
_IFS = r"\$\{IFS\}|\$IFS(?![A-Za-z0-9_])"  # compiled on first use (re's cache)
_POSITIONAL = r"\$\{?[0-9]\}?"


def _braces(text: str, meta: list[int], out: list[tuple[str, list[int]]], depth: int = 0) -> None:
    """Bash brace expansion of comma lists (``{rm,-rf,~}``, ``a{b,c{d,e}}``) into ``out``; ``meta``: the
    indices of unquoted ``{``, ``,``, ``}`` (quoted ones do not expand). ``{a..b}`` sequences stay as written."""
    if len(out) >= MAX_BRACE_WORDS or depth > 100:
        raise Unanalysable("expands braces into too many words")
    for k, o in enumerate(meta):
        if text[o] != "{":
            continue
        level, commas, close = 0, [], -1
        for j in meta[k + 1 :]:
            c = text[j]
            if c == "{":
                level += 1
            elif c == "}":
                if level == 0:
                    close = j
                    break
                level -= 1
            elif c == "," and level == 0:
                commas.append(j)
        if close < 0 or not commas:
            continue
        prefix, suffix = text[:o], text[close + 1 :]
        for start, end in zip([o + 1, *(c + 1 for c in commas)], [*commas, close], strict=True):
            alt = text[start:end]
            new_meta = (
                [i for i in meta if i < o]
                + [i - start + o for i in meta if start <= i < end]
                + [i - close - 1 + o + len(alt) for i in meta if i > close]
            )
            _braces(prefix + alt + suffix, new_meta, out, depth + 1)
        return
    out.append((text, meta))


def expand(w: Word) -> list[Word]:
    """The words bash makes of ``w`` before running it: brace expansion, then ``$IFS`` / ``${IFS}`` splitting
    (``rm${IFS}-rf${IFS}/`` -> ``rm -rf /``; ``$1``...``$9`` next to it count as empty)."""
    has_brace = any(w.text[i] == "{" for i in w.meta)
    has_ifs = not w.literal and "IFS" in w.text and re.search(_IFS, w.text) is not None
    if not has_brace and not has_ifs:
        return [w]
    forms: list[tuple[str, list[int]]] = []
    if has_brace:
        _braces(w.text, w.meta, forms)
    else:
        forms.append((w.text, w.meta))
    words: list[Word] = []
    for text, meta in forms:
        if not has_ifs:
            pieces = [(text, meta, w.literal)]
        else:
            globbing = any(text[i] in "*?[" for i in meta if i < len(text))
            pieces = []
            for part in re.split(_IFS, text):
                part = re.sub(_POSITIONAL, "", part)
                if part:
                    glob_meta = [i for i, c in enumerate(part) if c in "*?["] if globbing else []
                    pieces.append((part, glob_meta, "$" not in part and "`" not in part))
        for text_, meta_, literal in pieces:
            nw = Word(text_)
            nw.literal, nw.quoted, nw.meta = literal, w.quoted, meta_
            if not words:
                nw.subs, nw.procsub = w.subs, w.procsub
            words.append(nw)
    return words or [w]


_OPENERS = frozenset({"if", "while", "until", "for", "select", "case", "{"})
_CLOSERS = frozenset({"fi", "done", "esac", "}"})


def commands(toks: list[Token], stdin: Cmd | None = None) -> list[Cmd]:
    """The simple commands in ``toks``, each knowing the command piped into it. A compound command (``if``,
    ``while``, ``for``, ``{ }``, ``( )``) passes what is piped into it to every command in it
    (``curl x | if true; then sh; fi``); ``stdin``: what the whole program reads (``curl x | sh -c 'sh'``)."""
    cmds: list[Cmd] = []
    cur = Cmd(stdin)
    inherited: list[tuple[str, Cmd | None]] = [("", stdin)]  # (opener, stdin) of the compounds we are in
    pending: Cmd | None = stdin  # the command a `|` pipes into the next one
    for t in toks:
        if isinstance(t, Word):
            if all(w.text in _RESERVED for w in cur.words) and len(inherited) < 1000:  # command position
                if t.text in _OPENERS:
                    inherited.append((t.text, cur.pipe_in))
                elif t.text in _CLOSERS and len(inherited) > 1 and inherited[-1][0] != "(":
                    inherited.pop()
            cur.words.extend(expand(t))
        elif isinstance(t, Redir):
            cur.redirs.append(t)
        else:
            if cur.words or cur.redirs:
                cmds.append(cur)
            if t.op in ("|", "|&"):
                pending = cmds[-1] if cmds else None  # (curl x) | sh: the last command before the `|`
            elif t.op == "(":
                inherited.append(("(", pending))
            elif t.op == ")":
                if len(inherited) > 1 and inherited[-1][0] == "(":
                    inherited.pop()
            else:
                pending = inherited[-1][1]
            cur = Cmd(pending)
    if cur.words or cur.redirs:
        cmds.append(cur)
    return cmds


# ---------------------------------------------------------------------------- option parsing


def names(opts: list[tuple[str, str]]) -> set[str]:
    return {name for name, _ in opts}


def base(text: str) -> str:
    return text.rsplit("/", 1)[-1]


def long_opt(found: set[str], full: str, shortest: int) -> bool:
    """Whether ``found`` holds long option ``full`` or an abbreviation git/GNU accept (``--fo`` for ``--force``)
    at least ``shortest`` characters long (counting the dashes)."""
    return any(n == full or (n.startswith("--") and len(n) >= shortest and full.startswith(n)) for n in found)


ASSIGNMENT = r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?="  # compiled on first use (re's cache)


def _assignment(text: str) -> bool:
    """Whether ``text`` starts with ``NAME=`` (or ``NAME+=``, ``NAME[i]=``)."""
    return "=" in text and re.match(ASSIGNMENT, text) is not None


_RESERVED = frozenset(
    {"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "coproc", "esac"}
)
_SKIP_WHOLE = frozenset({"for", "select", "case", "[[", "in"})

_STRING_OPTIONS = {"env": ("-S", "--split-string")}
# wrappers that take the command to run as a shell string under -c (anywhere among their options)
_DASH_C = frozenset({"su", "runuser", "flock", "script", "npx"})


class Unwrapped:
    """What a wrapper chain runs: ``words`` (the command, maybe empty), ``strings`` (shell programs the
    wrappers run), ``feeder`` (xargs/parallel: more arguments come from stdin), ``replace`` (the placeholder
    those arguments replace: ``-I {}``, ``-J %``, parallel's ``{}``; None: they are appended), ``assigns``:
    the ``VAR=value`` words the command runs with (before it, or given to ``env``); ``runner``: the words of
    the tool the chain ends in when it runs what its options say (``make``, ``gdb``, ``vim``, ``expect``: for
    the files of program text they read, ``programs.check_program_files``)."""

    __slots__ = ("assigns", "chdir", "feeder", "remote", "replace", "runner", "strings", "words")

    def __init__(self, words: list[Word], strings: list[str], feeder: bool = False, replace: str | None = None):
        self.words = words
        self.strings = strings
        self.feeder = feeder
        self.replace = replace
        self.assigns: list[Word] = []
        self.chdir: Word | None = None  # env -C DIR, sudo -D DIR: the directory the command runs in
        self.runner: list[Word] = []
        self.remote: list[str] = []  # ssh host CMD, docker exec CTR CMD: shell programs run elsewhere


def strip_prefix(words: list[Word], assigns: list[Word] | None = None) -> list[Word]:
    """Drop reserved words (``if``, ``{``, ``!``, ``do``...), ``function NAME`` and ``VAR=value`` words (the
    assignments go to ``assigns``, when given)."""
    i = 0
    while i < len(words):
        w = words[i]
        if w.quoted or not w.literal:
            if _assignment(w.text) and not w.text.startswith(("$", "`")):
                if assigns is not None:
                    assigns.append(w)
                i += 1
                continue
            break
        if w.text in _SKIP_WHOLE:
            return []
        if w.text == "coproc" and i + 2 < len(words) and words[i + 2].text == "{" and words[i + 2].literal:
            i += 2  # coproc NAME { ...; }
        elif w.text in _RESERVED:
            i += 1
        elif w.text == "function":
            i += 2
        elif _assignment(w.text):
            if assigns is not None:
                assigns.append(w)
            i += 1
        else:
            break
    return words[i:]


def unwrap(words: list[Word]) -> Unwrapped:
    """The command a wrapper chain runs (see the module docstring)."""
    assigns: list[Word] = []
    chdir: list[Word] = []
    remote: list[str] = []
    u = _unwrap(words, assigns, chdir, remote)
    u.assigns = assigns
    u.chdir = chdir[-1] if chdir else None
    u.remote = remote
    return u


def _unwrap(words: list[Word], assigns: list[Word], chdir: list[Word], remote: list[str]) -> Unwrapped:
    words = strip_prefix(words, assigns)
    strings: list[str] = []
    feeder, replace = False, None
    unwrapped = -1  # wrappers unwrapped so far (the loop's first word may be one or the command itself)
    while words:
        unwrapped += 1
        if unwrapped > MAX_WRAPPERS:  # each step copies the rest of the words: a long chain is quadratic
            raise Unanalysable(
                f"runs more than {MAX_WRAPPERS} wrapper commands in a row (sudo, env, nice, ...), too many"
            )
        name = base(words[0].text)
        spec = WRAPPERS.get(name) if words[0].literal else None
        if spec is not None and name in _LAUNCHERS:
            from .launchers import launched  # here: only these launchers need it

            launch = launched(name, words[1:])
            assigns += launch.assigns
            if launch.chdir is not None:
                chdir.append(launch.chdir)
            words = strip_prefix(launch.words, assigns)
            continue
        if spec is None and words[0].literal and name in RUNNERS:
            runner = run_by(name, words[1:])
            if runner is None:
                break
            strings += runner[1]
            words = strip_prefix(runner[0], assigns)
            continue
        if spec is None and words[0].literal and name in STRING_RUNNERS:
            out = Unwrapped([], strings + string_runs(name, [w.text for w in words[1:]]), feeder, replace)
            out.runner = words
            return out
        if spec is None and words[0].literal and name in REMOTE:
            from .remote import remote_runs  # here: only these commands need it

            remote += remote_runs(name, [w.text for w in words[1:]])
            break  # the command itself is checked too (rsync --delete, ssh -o ProxyCommand=CMD)
        if spec is None:
            break
        short_arg, long_arg, optional, skip = spec
        args = [w.text for w in words[1:]]
        if name in _DASH_C:  # -c anywhere: su root -c 'cmd', flock LOCK -c 'cmd', script -qc 'cmd' log
            _, opts, _ = getopt(args, short_arg, long_arg, optional)
            found = [v for o, v in opts if o in ("-c", "--command", "--call")]
            if found or name == "su" or name == "script" or (name == "runuser" and "-u" not in names(opts)):
                shell = [] if found or name not in ("su", "runuser") else [Word("sh")]  # su alone: sh on stdin
                return Unwrapped(shell, strings + found, feeder, replace)
        if name == "sg":  # sg [-] GROUP [-c] 'command': /bin/sh runs the command
            command = [a for a in args if a != "-"][1:]
            command = command[1:] if command[:1] == ["-c"] else command
            return Unwrapped([], [*strings, " ".join(command)] if command else strings, feeder, replace)
        if name == "tmux":
            return Unwrapped([], strings + tmux_runs(args), feeder, replace)
        if name == "expect":
            operands, opts, _ = getopt(args, short_arg, long_arg, optional)
            tcl = "\n".join(v for o, v in opts if o == "-c")
            reads_stdin = "-f" not in names(opts) and operands[:1] in ([], ["-"], ["/dev/stdin"])
            tclsh = [Word("tclsh")] if reads_stdin else []  # expect <<< 'exec ...': a Tcl program on stdin
            program = [as_tclsh(tcl)] if tcl else []  # expect -c 'file delete -force ~': Tcl's own commands
            out = Unwrapped(tclsh, strings + expect_runs(tcl) + program, feeder, replace)
            out.runner = words
            return out
        if name == "parallel":
            return _parallel(words[1:], strings)
        _, opts, stop = getopt(args, short_arg, long_arg, optional, permute=False)
        if name == "rlwrap":  # rlwrap -z FILTER: the filter runs too (through sh -c when it has quotes or pipes)
            strings = strings + [v for o, v in opts if o in ("-z", "--filter")]
        if name == "command" and names(opts) & {"-v", "-V"}:
            return Unwrapped([], strings, feeder, replace)  # prints what the name is; runs nothing
        rest = words[1 + stop :]
        if name in _CHDIR:
            for o, v in opts:
                if o in _CHDIR[name]:
                    chdir.append(_option_word(words[1 : 1 + stop], o, v))
        if name == "screen" and "-X" in names(opts):  # screen -X stuff 'keys': typed into the session's shell
            cmd = [v for o, v in opts if o == "-X"] + [w.text for w in rest]
            return Unwrapped([], [*strings, " ".join(cmd[1:])] if cmd[:1] == ["stuff"] else strings)
        if name == "env":
            first = 0
            while first < len(rest) and (rest[first].text == "-" or _assignment(rest[first].text)):
                if rest[first].text != "-":
                    assigns.append(rest[first])
                first += 1
            rest = rest[first:]
        rest = rest[skip:]
        text_opts = _STRING_OPTIONS.get(name, ())
        inline = [v for o, v in opts if o in text_opts]
        if inline:  # env -S 'cmd args' more-args
            import shlex  # here: a plain command never needs it

            tail = " ".join(shlex.quote(w.text) for w in rest)
            return Unwrapped([], [*strings, f"{inline[0]} {tail}".strip()], feeder, replace)
        if name == "watch":  # watch joins its arguments and runs them with sh -c
            return Unwrapped([], [*strings, " ".join(w.text for w in rest)], feeder, replace)
        if name == "xargs":
            feeder = True
            for o, v in opts:
                if o in ("-I", "-J", "-i", "--replace"):
                    replace = v or "{}"
        if not rest and name in ("sudo", "doas") and names(opts) & {"-s", "-i", "--shell", "--login"}:
            rest = [Word("sh")]  # sudo -s alone: a shell reading stdin (curl ... | sudo -s)
        words = strip_prefix(rest, assigns)
    return Unwrapped(words, strings, feeder, replace)


_LAUNCHERS = frozenset({"bwrap", "capsh", "start-stop-daemon"})
_CHDIR = {
    "env": ("-C", "--chdir"),
    "sudo": ("-D", "--chdir"),
    "unshare": ("-w", "--wd"),
    "nsenter": ("-w", "--wd"),
    "systemd-run": ("--working-directory",),
    "parallel": ("--workdir",),
}


def _option_word(words: list[Word], option: str, value: str) -> Word:
    """The word holding an option's ``value`` (literal or not), for ``env -C "$D"``."""
    for w in words:
        if w.text == value or w.text.endswith(value):
            return w if w.text == value else _word(value, w.literal)
    return _word(value, "$" not in value and "`" not in value)


def _word(text: str, literal: bool) -> Word:
    w = Word(text)
    w.literal = literal
    return w


_PARALLEL_PLACEHOLDER = r"\{(?:\d*[./#%^]*|/\.|//|\d+/\.?)\}"
_PARALLEL_SEPARATORS = frozenset({":::", "::::", ":::+", "::::+"})


def _parallel(words: list[Word], strings: list[str]) -> Unwrapped:
    """GNU parallel: the command template (joined and run by a shell) with each argument after ``:::`` put in
    place of ``{}`` (or appended); without an argument list the arguments come from stdin."""
    spec = WRAPPERS["parallel"]
    args = [w.text for w in words]
    _, opts, stop = getopt(args, spec[0], spec[1], spec[2], permute=False)
    replace = next((v for o, v in opts if o in ("-I", "--replace")), "{}") or "{}"
    rest = args[stop:]
    cut = next((k for k, a in enumerate(rest) if a in _PARALLEL_SEPARATORS), len(rest))
    template, lists = rest[:cut], rest[cut:]
    values = [a for a in lists if a not in _PARALLEL_SEPARATORS]
    from_files = any(a.startswith("::::") for a in lists) or any(o in ("-a", "--arg-file") for o, _ in opts)
    if not lists or from_files:  # arguments from stdin or from a file: unknown
        values = []
    if not values:
        if not template:  # each stdin line is a command: like `xargs sh -c`
            return Unwrapped([Word("sh"), Word("-c")], strings, True, None)
        text = " ".join(template)
        marked = text.replace(replace, '"$PARALLEL_ARG"') if replace in text else text + ' "$PARALLEL_ARG"'
        return Unwrapped([], [*strings, marked], True, replace)
    import shlex  # here: a plain command never needs it

    out = list(strings)
    for value in values:
        if not template:
            out.append(value)
            continue
        text = " ".join(template)
        quoted = shlex.quote(value)
        if replace in text or re.search(_PARALLEL_PLACEHOLDER, text):
            text = re.sub(_PARALLEL_PLACEHOLDER, quoted.replace("\\", "\\\\"), text.replace(replace, quoted))
        else:
            text += " " + quoted
        out.append(text)
    return Unwrapped([], out)


# ---------------------------------------------------------------------------- positional parameters, printing

_POSITIONAL_REF = r"\$(?:\{([0-9]+|[@*])(?::([0-9]+)(?::([0-9]+))?)?\}|([0-9@*]))"  # "${@:2}", "${@:1:3}" too


def bind_positionals(script: str, args: list[str]) -> str | None:
    """``script`` with ``$0``, ``$1``..., ``${N}``, ``$@``, ``$*`` replaced by ``args`` (``args[0]`` is ``$0``)
    the way bash would expand them (quoted inside double quotes, split into words outside), or None when the
    script uses none of them. ``bash -c 'eval "$0"' 'rm -rf ~'`` runs ``eval "rm -rf ~"``."""
    if "$" not in script or not re.search(_POSITIONAL_REF, script):
        return None
    out: list[str] = []
    i, n, in_dq = 0, len(script), False
    while i < n:
        c = script[i]
        if c == "'" and not in_dq:
            end = script.find("'", i + 1)
            end = n if end < 0 else end + 1
            out.append(script[i:end])
            i = end
            continue
        if c == "\\":
            out.append(script[i : i + 2])
            i += 2
            continue
        if c == '"':
            in_dq = not in_dq
        m = re.compile(_POSITIONAL_REF).match(script, i) if c == "$" else None
        if m is None:
            out.append(c)
            i += 1
            continue
        key, start, count = m.group(1) or m.group(4), m.group(2), m.group(3)
        values = args[1:] if key in ("@", "*") else [args[int(key)]] if int(key) < len(args) else []
        if start is not None:  # ${@:N:M}: M parameters from $N; ${1:N:M}: characters of $1
            first, size = int(start), None if count is None else int(count)
            values = args[first:][:size] if key in ("@", "*") else [v[first:][:size] for v in values]
        if in_dq:  # "$@" is one word per value, "$*" and "$N" one word
            escaped = [re.sub(r'(["\\$`])', r"\\\1", v) for v in values]
            out.append(('" "' if key == "@" else " ").join(escaped))
        else:
            import shlex  # here: a plain command never needs it

            out.append(" ".join(shlex.quote(p) for v in values for p in v.split()))
        i = m.end()
    return "".join(out)


def printed(name: str, args: list[str]) -> str:
    """What ``echo ARGS`` / ``printf ARGS`` prints, roughly (enough to check it as a command)."""
    escapes = name == "printf"
    if name == "echo":
        while args and re.fullmatch(r"-[neE]+", args[0]):
            escapes = escapes or "e" in args[0]
            args = args[1:]
        text = " ".join(args)
    else:
        fmt, rest = (args[0], args[1:]) if args else ("", [])
        for value in rest:
            m = re.search(r"%[-0-9.]*[sbdq]", fmt)
            fmt = fmt[: m.start()] + value + fmt[m.end() :] if m else fmt + " " + value
        text = fmt
    return ansi_decode(text) if escapes else text


def _sub_output(sub: list[Token]) -> str | None:
    """What substitution ``sub`` prints when it is one literal ``echo``/``printf`` (else None)."""
    cmds = commands(sub)
    if len(cmds) != 1 or cmds[0].redirs:
        return None
    u = unwrap(cmds[0].words)
    name = base(u.words[0].text) if u.words and not u.strings else ""
    if name in ("echo", "printf") and all(w.literal for w in u.words[1:]):
        return printed(name, [w.text for w in u.words[1:]]).rstrip("\n")
    return None


def literal_output(word: Word) -> str | None:
    """What a command word like ``$(echo rm -rf /)`` or ```printf rm``` prints, when it is a single literal
    ``echo``/``printf`` substitution (its output then runs as the command), else None."""
    if len(word.subs) != 1 or not word.text.startswith(("$(", "`")) or not word.text.endswith((")", "`")):
        return None
    return _sub_output(word.subs[0])


def evaluated(word: Word) -> list[Word] | None:
    """The words bash makes of ``word`` when it is literal text spliced with literal ``echo``/``printf``
    substitutions (``g$(printf it)`` is ``git``; unquoted output is split into words), else None."""
    if not word.subs or word.procsub is not None or "`" in word.text or word.text.count("$(") != len(word.subs):
        return None
    outputs = [_sub_output(sub) for sub in word.subs]
    if any(o is None for o in outputs):
        return None
    text, pieces, k = word.text, [], 0
    for output in outputs:
        start = text.find("$(", k)
        depth, j = 0, start + 1
        while j < len(text):  # the substitution's own text: up to its closing parenthesis
            depth += (text[j] == "(") - (text[j] == ")")
            if depth == 0:
                break
            j += 1
        pieces += [text[k:start], output or ""]
        k = j + 1
    pieces.append(text[k:])
    result = "".join(pieces)
    if "$" in result:
        return None
    parts = [result] if word.quoted or _assignment(word.text) else result.split()  # X=$(...): one word
    return [Word(p) for p in parts]


_DEFAULT = r"\$\{(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+)(?::?[-=+])([^{}$`]*)\}"  # ${x:-rm}; compiled on first use


def defaulted(words: list[Word]) -> list[Word] | None:
    """The words with each ``${VAR:-WORD}`` (``-``, ``=``, ``+``, with or without ``:``) replaced by its WORD,
    the value bash gives it when VAR is unset (or, for ``+``, set): ``${x:-rm} -rf ~`` is ``rm -rf ~``; None
    when no word has such an expansion. A word still holding an expansion is kept as it is."""
    out: list[Word] = []
    changed = False
    for w in words:
        if w.literal or "${" not in w.text or not re.search(_DEFAULT, w.text):
            out.append(w)
            continue
        text = w.text
        for _ in range(8):  # ${x:-${y:-rm}}: the innermost first
            inner = re.sub(_DEFAULT, lambda m: m.group(1).replace('"', "").replace("'", ""), text)
            if inner == text:
                break
            text = inner
        if "$" in text or "`" in text:
            out.append(w)
            continue
        changed = True
        out.extend(Word(p) for p in ([text] if w.quoted else text.split()))
    return out if changed else None


def show(words: list[Word], redirs: list[Redir] | None = None, limit: int = 160) -> str:
    """The command as the user would recognise it, for a reason (at most ``limit`` characters). Reads only
    as many words and redirections as fit: a check calls it once per redirection of a command."""
    parts: list[str] = []
    size = 0
    redirects = (r.op + (r.target.text if r.target else "") for r in redirs or () if r.op not in ("<<", "<<-"))
    for part in itertools.chain((w.text for w in words), redirects):
        parts.append(part)
        size += len(part) + 1
        if size > limit:
            break
    text = " ".join(parts).replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 3] + "..."
