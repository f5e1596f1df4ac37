"""hookgate default policy: block destructive shell commands (PreToolUse on Bash).

Denies, with a reason the user understands:

- a recursive delete: ``rm -r`` / ``-R`` / ``--recursive`` / ``--rec`` (with or without ``-f``), and
  ``find ... -delete`` or ``find ... -exec rm`` on ``/``, ``~``, ``$HOME`` or a path outside the event's
  ``cwd``, or with no test (``-name``, ``-type``, ``-mtime``...: a bare ``find . -delete`` deletes the whole
  tree, ``.git`` included);
- a destructive ``git push`` (``-f``/``--force``, ``+ref``, ``--mirror``, ``--delete``/``-d``, ``:ref``,
  ``--prune``; ``--force-with-lease`` passes), ``git reset --hard``, ``git clean -f`` (not ``-n``), also
  after git's global options (``git -C dir -c k=v --no-pager push -f``), with abbreviated long options
  (``git clean --fo``, ``reset --ha``), through inline aliases (``git -c alias.p='push -f' p``; a ``!`` alias,
  and ``-c core.pager=``/``core.sshCommand=``... values, are checked as shell commands);
- ``dd`` onto a device, ``mkfs``, a fork bomb;
- code run straight from a download (``curl ... | sh``, ``bash <(curl ...)``, ``sh -c "$(curl ...)"``,
  ``curl ... | python3``), and any other program text a shell reads from a pipe (``... | sh``) or a file
  redirect (``sh < x.sh``), except a literal ``echo``/``printf`` whose text is then checked like a command;
- writes to secrets files (``> .env``, ``tee``, ``cp``/``mv``/``ln``/``install``/``rsync`` destinations,
  ``sed -i``, ``perl -i``, ``dd of=``, ``truncate``, ``curl -o``, ``wget -O``), judged by
  ``secrets_guard.secret_kind``, and writes, deletes (``rm``, ``unlink``, ``shred``) and moves (``mv`` sources)
  of the agent's own hook configuration (``secrets_guard.config_kind``: ``hookgate.yaml``,
  ``.claude/settings.json``...);
  a glob written to (``> .e?v``) is matched against those names.

The command is tokenized the way bash does it (quotes, ``\\`` escapes, ``#`` comments only at the start
of a word, heredocs -- whose bodies are data --, ``$(...)``, backticks, ``<(...)``, ``$'...'``) and every
simple command is checked, including those in substitutions, after ``;``/``&&``/``|``/newlines, inside
``{ }``, ``( )``, ``if``/``for``/``while`` bodies, after ``!``, behind wrappers (``sudo -u x``, ``env -u X``,
``nice -n 5``, ``timeout -s KILL 5``, ``stdbuf -o0``, ``xargs -0``, ``command``, ``exec``, ``time``, ``doas``...)
and inside ``sh``/``bash``/``dash``/``zsh``/``ksh`` ``-c``, ``eval``, ``watch``, ``su -c``, ``env -S``, here-strings
and heredocs fed to a shell. The command name is read after quote removal (``\\rm``, ``"rm"``, ``/bin/rm``);
unquoted brace lists are expanded (``{rm,-rf,~}``; ``{a..b}`` sequences are not), ``$IFS``/``${IFS}`` splits
words, a glob command name (``/bin/r?``, ``[r]m``) is checked as every command it can match, and a literal
``$(echo ...)``/`` `printf ...` `` command word is checked as the command it prints.
A command that cannot be tokenized (unbalanced quotes) is scanned as raw text for the same patterns;
one nesting substitutions or ``sh -c`` more than ``MAX_DEPTH`` levels deep is denied as unanalysable.

Two ways to run it (standard library only: json, re, shlex, os; fnmatch when a glob needs matching):

- in-process: ``check_event(event) -> dict | None`` (hookgate's ``python`` handler); it never raises.
- as a command hook: ``python -I -S shell_guard.py`` reads the event on stdin and prints the answer.

``check_command(command, cwd=None) -> str | None`` is the rule itself (also used by
``configs/validators/policy.py``). Known limitations: a command name or option only known at run time
(``r=rm; $r -rf /``, ``rm $FLAGS x``), aliases and functions defined elsewhere, ``cd`` earlier in the
command (``find`` paths are judged against the event's ``cwd``), remote commands (``ssh host ...``,
``docker exec``), code in other languages (``python -c "shutil.rmtree('/')"``), ``{a..b}`` sequences,
git subcommands that restore files (``git checkout -- hookgate.yaml``).
"""

from __future__ import annotations

import os
import re
import shlex
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # no typing import at run time (a command hook starts in milliseconds)
    from typing import Any

try:
    from . import secrets_guard as _secrets
except ImportError:  # run as a script (``python -I -S shell_guard.py``): load the sibling file
    _HERE = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, _HERE)
    try:
        import secrets_guard as _secrets  # type: ignore[no-redef]
    finally:
        sys.path.remove(_HERE)

POLICY = "hookgate's default policy"
MAX_DEPTH = 20  # nested substitutions / sh -c levels; deeper input is refused as unanalysable
MAX_LENGTH = 1_000_000  # longer commands are only scanned as raw text

# ---------------------------------------------------------------------------- tokens


class ParseError(ValueError):
    """The command cannot be tokenized (unbalanced quotes, an unterminated substitution)."""


class _TooDeep(Exception):
    pass


class _Unanalysable(Exception):
    """The command is well-formed but too large to analyse (``str(exc)``: what it does, for the reason)."""


class Word:
    """One shell word after quote removal. ``text`` keeps expansions as written (``$HOME``, ``$(...)``);
    ``literal``: no expansion at all (``text`` is exactly what the command receives); ``subs``: the
    command and process substitutions inside (token lists; they run); ``procsub``: the word is a whole
    ``<(...)``/``>(...)``."""

    __slots__ = ("literal", "meta", "procsub", "quoted", "subs", "text")

    def __init__(self, text: str = "") -> None:
        self.text = text
        self.literal = True
        self.quoted = False
        self.subs: list[list[Token]] = []
        self.procsub: list[Token] | None = None
        self.meta: list[int] = []  # indices in text of unquoted brace and glob characters ({ , } * ? [)

    def globs(self) -> bool:
        """Whether the word holds an unquoted glob character (``r?``, ``*.env``, ``[r]m``)."""
        return any(self.text[i] in "*?[" for i in self.meta if i < len(self.text))


class Op:
    """A control operator: ``;`` (also for newlines), ``&``, ``&&``, ``||``, ``|``, ``|&``, ``(``, ``)``, ``;;``..."""

    __slots__ = ("op",)

    def __init__(self, op: str) -> None:
        self.op = op


class Redir:
    """A redirection: ``op`` (``>``, ``>>``, ``<``, ``<<``, ``<<<``, ``&>``...), its ``target`` word (a heredoc's
    delimiter) and, for a heredoc, its ``body`` (a Word: literal for a quoted delimiter)."""

    __slots__ = ("body", "op", "target")

    def __init__(self, op: str) -> None:
        self.op = op
        self.target: Word | None = None
        self.body: Word | None = None


Token = Word | Op | Redir

_OPERATORS = ("&&", "||", ";;&", ";;", ";&", "|&", ";", "&", "|", "(", ")")
_REDIRECTS = ("<<<", "<<-", "&>>", "<<", ">>", "<&", ">&", "<>", ">|", "&>", "<", ">")
_CONTINUES = frozenset({"&&", "||", "|", "|&", "(", ";", "&", ";;", ";&", ";;&"})  # a newline after these is a space
_BLANK = " \t\r"
_META = frozenset(" \t\r\n;&|()<>")
_PLAIN = re.compile(r"[^ \t\r\n;&|()<>'\"\\$`]+")
_DQ_PLAIN = re.compile(r'[^"\\$`]*')
_HEREDOC_PLAIN = re.compile(r"[^\\$`]*")
_BACKTICK_STOP = re.compile(r"[`\\]")
_ANSI_STOP = re.compile(r"['\\]")
_META_CHARS = re.compile(r"[{},*?\[]")
_VAR = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]")
_ANSI_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f",
                 "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_ANSI_CODE = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)", re.DOTALL)


def _ansi_decode(raw: str) -> str:
    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        if code[0] in "xuU" and len(code) > 1:
            return chr(min(int(code[1:], 16), 0x10FFFF))
        if code[0] in "01234567":
            return chr(int(code, 8) & 0xFF)
        if code[0] == "c":
            return chr(ord(code[1]) & 0x1F)
        return _ANSI_ESCAPES.get(code, "\\" + code)

    return _ANSI_CODE.sub(one, raw)


class _Lexer:
    """Bash's tokenizer, closely enough for policy checks (see the module docstring)."""

    def __init__(self, src: str, depth: int, start: int = 0) -> None:
        if depth > MAX_DEPTH:
            raise _TooDeep
        self.s = src
        self.i = start
        self.depth = depth
        self.heredocs: list[Redir] = []  # waiting for their bodies (after the next newline)
        self.closing = False

    def run(self, closing: bool = False) -> list[Token]:
        """Tokens up to the end, or (``closing``) up to and including an unmatched ``)``."""
        self.closing = closing
        s, n = self.s, len(self.s)
        toks: list[Token] = []
        target_for: Redir | None = None
        parens = 0
        while self.i < n:
            c = s[self.i]
            if c in _BLANK:
                self.i += 1
            elif c == "\\" and s.startswith("\n", self.i + 1):
                self.i += 2
            elif c == "\n":
                self.i += 1
                self._read_heredocs()
                target_for = None
                if toks and not (isinstance(toks[-1], Op) and toks[-1].op in _CONTINUES):
                    toks.append(Op(";"))
            elif c == "#":  # a comment: only ever at the start of a word
                end = s.find("\n", self.i)
                self.i = n if end < 0 else end
            elif c == ")" and closing and parens == 0:
                self.i += 1
                return toks
            elif (c in "<>" and not s.startswith("(", self.i + 1)) or (c == "&" and s.startswith(">", self.i + 1)):
                op = next(r for r in _REDIRECTS if s.startswith(r, self.i))
                self.i += len(op)
                target_for = Redir(op)
                toks.append(target_for)
            elif c in ";&|()":
                op = next(o for o in _OPERATORS if s.startswith(o, self.i))
                self.i += len(op)
                parens += (op == "(") - (op == ")")
                toks.append(Op(op))
                target_for = None
            else:
                before = self.i
                word = self._word()
                if self.i == before:
                    raise ParseError(f"unexpected {c!r}")
                if word is None:
                    continue  # an fd number before a redirection (2>file)
                if target_for is not None:
                    target_for.target = word
                    if target_for.op in ("<<", "<<-"):
                        self.heredocs.append(target_for)
                    target_for = None
                else:
                    toks.append(word)
        if closing:
            raise ParseError("a $( or <( has no closing )")
        self._read_heredocs()
        return toks

    # -- heredocs

    def _read_heredocs(self) -> None:
        s, n = self.s, len(self.s)
        for redir in self.heredocs:
            delim_word = redir.target
            delim = delim_word.text if delim_word else ""
            strip = redir.op == "<<-"
            lines: list[str] = []
            while self.i < n:
                end = s.find("\n", self.i)
                end = n if end < 0 else end
                line = s[self.i:end]
                check = line.lstrip("\t") if strip else line
                if check == delim or check.rstrip("\r") == delim:
                    self.i = min(end + 1, n)
                    break
                if self.closing and delim and check.startswith(delim + ")"):  # `EOF)` closing a $(...) on the same line
                    self.i += len(line) - len(check) + len(delim)
                    break
                lines.append(check)
                self.i = min(end + 1, n)
            body = "\n".join(lines)
            if delim_word is not None and delim_word.quoted:
                redir.body = Word(body)
            else:  # expansions and substitutions happen in the body
                sub = _Lexer(body, self.depth + 1)
                word = Word()
                sub._dq(word, heredoc=True)
                redir.body = word
        self.heredocs.clear()

    # -- words

    def _word(self) -> Word | None:
        s, n = self.s, len(self.s)
        w = Word()
        if s.startswith(("<(", ">("), self.i):
            start = self.i
            inner = _Lexer(s, self.depth + 1, self.i + 2)
            toks = inner.run(closing=True)
            self.i = inner.i
            w.procsub = toks
            w.subs.append(toks)
            w.text = s[start:self.i]
            w.literal = False
        while self.i < n:
            c = s[self.i]
            if c in _META:
                if c in "<>" and not w.quoted and w.literal and (w.text.isdigit() or re.fullmatch(r"\{\w+\}", w.text)):
                    return None  # 2>x, {fd}>x: the number belongs to the redirection
                break
            if c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise ParseError("unbalanced single quote")
                w.text += s[self.i + 1:end]
                w.quoted = True
                self.i = end + 1
            elif c == '"':
                self.i += 1
                w.quoted = True
                self._dq(w, heredoc=False)
            elif c == "\\":
                nxt = s[self.i + 1:self.i + 2]
                if nxt != "\n":
                    w.text += nxt or "\\"
                    w.quoted = True
                self.i += 2
            elif c == "$":
                self._dollar(w, in_dq=False)
            elif c == "`":
                self._backtick(w)
            else:
                m = _PLAIN.match(s, self.i)
                if m is None:  # pragma: no cover - every other character is plain
                    raise ParseError(f"unexpected {c!r}")
                if _META_CHARS.search(m.group()):
                    base = len(w.text)
                    w.meta.extend(base + k.start() for k in _META_CHARS.finditer(m.group()))
                w.text += m.group()
                self.i = m.end()
        return w

    def _dq(self, w: Word, heredoc: bool) -> None:
        """The rest of a double-quoted string (or a whole heredoc body) into ``w``."""
        s, n = self.s, len(self.s)
        plain = _HEREDOC_PLAIN if heredoc else _DQ_PLAIN
        while True:
            m = plain.match(s, self.i)
            if m is not None:
                w.text += m.group()
                self.i = m.end()
            if self.i >= n:
                if heredoc:
                    return
                raise ParseError("unbalanced double quote")
            c = s[self.i]
            if c == '"':
                self.i += 1
                return
            if c == "\\":
                nxt = s[self.i + 1:self.i + 2]
                if nxt == "\n":
                    self.i += 2
                elif nxt in ("$", "`", "\\") or (nxt == '"' and not heredoc):
                    w.text += nxt
                    self.i += 2
                else:
                    w.text += "\\"
                    self.i += 1
            elif c == "$":
                self._dollar(w, in_dq=True)
            else:
                self._backtick(w)

    def _dollar(self, w: Word, in_dq: bool) -> None:
        s, i = self.s, self.i
        nxt = s[i + 1:i + 2]
        if nxt == "(" and s.startswith("((", i + 1):  # $(( arithmetic ))
            end = self._balanced(i + 3, "(", ")", 2)
            w.text += s[i:end]
            w.literal = False
            self.i = end
        elif nxt == "(":
            inner = _Lexer(s, self.depth + 1, i + 2)
            w.subs.append(inner.run(closing=True))
            w.text += s[i:inner.i]
            w.literal = False
            self.i = inner.i
        elif nxt == "{":
            end = self._balanced(i + 2, "{", "}", 1)
            w.text += s[i:end]
            w.literal = False
            self.i = end
        elif nxt == "'" and not in_dq:  # $'...' ANSI-C quoting
            j = i + 2
            while True:
                m = _ANSI_STOP.search(s, j)
                if m is None:
                    raise ParseError("unbalanced $'")
                if s[m.start()] == "'":
                    break
                j = m.start() + 2
            w.text += _ansi_decode(s[i + 2:m.start()])
            w.quoted = True
            self.i = m.start() + 1
        elif nxt == '"' and not in_dq:  # $"..." locale string: a double-quoted string
            self.i += 1
        else:
            var = _VAR.match(s, i + 1)
            if var:
                w.text += "$" + var.group()
                w.literal = False
                self.i = var.end()
            else:
                w.text += "$"
                self.i += 1

    def _balanced(self, j: int, open_: str, close: str, depth: int) -> int:
        """The index after the ``close`` that brings ``depth`` to 0 (quotes skipped). Raises ParseError."""
        s, n = self.s, len(self.s)
        while j < n:
            c = s[j]
            if c == "\\":
                j += 2
                continue
            if c in "'\"":
                end = s.find(c, j + 1)
                if end < 0:
                    raise ParseError(f"unbalanced {c}")
                j = end + 1
                continue
            if c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        raise ParseError(f"unbalanced {open_}")

    def _backtick(self, w: Word) -> None:
        s = self.s
        j = self.i + 1
        parts: list[str] = []
        while True:
            m = _BACKTICK_STOP.search(s, j)
            if m is None:
                raise ParseError("unbalanced backquote")
            k = m.start()
            parts.append(s[j:k])
            if s[k] == "`":
                j = k + 1
                break
            nxt = s[k + 1:k + 2]
            parts.append(nxt if nxt in ("`", "\\", "$") else "\\" + nxt)
            j = k + 2
        body = "".join(parts)
        w.subs.append(_Lexer(body, self.depth + 1).run())
        w.text += "`" + body + "`"
        w.literal = False
        self.i = j


# ---------------------------------------------------------------------------- simple commands


class Cmd:
    """A simple command: its words, its redirections, and the command whose output is piped into it."""

    __slots__ = ("pipe_in", "redirs", "words")

    def __init__(self, pipe_in: Cmd | None) -> None:
        self.words: list[Word] = []
        self.redirs: list[Redir] = []
        self.pipe_in = pipe_in


MAX_BRACE_WORDS = 256  # a word's brace expansion may give this many words; more is refused as unanalysable
_IFS = re.compile(r"\$\{IFS\}|\$IFS(?![A-Za-z0-9_])")
_POSITIONAL = re.compile(r"\$\{?[0-9]\}?")


def _braces(text: str, meta: list[int], out: list[tuple[str, list[int]]], depth: int = 0) -> None:
    """Bash brace expansion of comma lists (``{rm,-rf,~}``, ``a{b,c{d,e}}``) into ``out``; ``meta``: the
    indices of unquoted ``{``, ``,``, ``}`` (quoted ones do not expand). ``{a..b}`` sequences stay as written."""
    if len(out) >= MAX_BRACE_WORDS or depth > 100:
        raise _Unanalysable("expands braces into too many words")
    for k, o in enumerate(meta):
        if text[o] != "{":
            continue
        level, commas, close = 0, [], -1
        for j in meta[k + 1:]:
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
        prefix, suffix = text[:o], text[close + 1:]
        for start, end in zip([o + 1, *(c + 1 for c in commas)], [*commas, close], strict=True):
            alt = text[start:end]
            new_meta = ([i for i in meta if i < o] + [i - start + o for i in meta if start <= i < end]
                        + [i - close - 1 + o + len(alt) for i in meta if i > close])
            _braces(prefix + alt + suffix, new_meta, out, depth + 1)
        return
    out.append((text, meta))


def _expand(w: Word) -> list[Word]:
    """The words bash makes of ``w`` before running it: brace expansion, then ``$IFS`` / ``${IFS}`` splitting
    (``rm${IFS}-rf${IFS}/`` -> ``rm -rf /``; ``$1``...``$9`` next to it count as empty)."""
    has_brace = any(w.text[i] == "{" for i in w.meta)
    has_ifs = not w.literal and "IFS" in w.text and _IFS.search(w.text) is not None
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
            for part in _IFS.split(text):
                part = _POSITIONAL.sub("", part)
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


def _commands(toks: list[Token]) -> list[Cmd]:
    cmds: list[Cmd] = []
    cur = Cmd(None)
    pending: Cmd | None = None  # the command a `|` pipes into the next one
    for t in toks:
        if isinstance(t, Word):
            cur.words.extend(_expand(t))
        elif isinstance(t, Redir):
            cur.redirs.append(t)
        else:
            if cur.words or cur.redirs:
                cmds.append(cur)
            if t.op in ("|", "|&"):
                pending = cmds[-1] if cmds else None  # (curl x) | sh: the last command before the `|`
            elif t.op not in ("(", ")"):
                pending = None
            cur = Cmd(pending)
    if cur.words or cur.redirs:
        cmds.append(cur)
    return cmds


_FORK_BOMB_WINDOW = 64


def _fork_bomb(toks: list[Token]) -> bool:
    """A function that calls itself in a pipeline or in the background: ``:(){ :|:& };:``."""
    for k in range(len(toks) - 2):
        a, b, c = toks[k], toks[k + 1], toks[k + 2]
        if not (isinstance(a, Word) and isinstance(b, Op) and b.op == "(" and isinstance(c, Op) and c.op == ")"):
            continue
        depth, calls_self, forks = 0, False, False
        for t in toks[k + 3:k + 3 + _FORK_BOMB_WINDOW]:  # a fork bomb is short; this keeps the scan linear
            if isinstance(t, Word):
                if t.text in ("{", "("):
                    depth += 1
                elif t.text == "}":
                    depth -= 1
                    if depth <= 0:
                        break
                elif t.text == a.text and depth > 0:
                    calls_self = True
            elif isinstance(t, Op) and t.op in ("|", "|&", "&") and depth > 0:
                forks = True
        if calls_self and forks:
            return True
    return False


# ---------------------------------------------------------------------------- option parsing


def _getopt(args: list[str], short_arg: str = "", long_arg: frozenset[str] = frozenset(), optional: str = "",
            permute: bool = True) -> tuple[list[str], list[tuple[str, str]], int]:
    """GNU-style options: ``(operands, [(option, value)], index where parsing stopped)``.

    ``short_arg``: letters taking a value (attached or the next word); ``optional``: letters taking an
    optional attached value only; ``long_arg``: long options taking the next word unless written ``--x=v``.
    ``permute=False`` stops at the first operand (for wrappers: ``sudo rm -rf`` -- ``-rf`` is rm's)."""
    operands: list[str] = []
    opts: list[tuple[str, str]] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            i += 1
            operands.extend(args[i:])
            return operands, opts, i
        if a.startswith("--"):
            name, eq, val = a.partition("=")
            if name in long_arg and not eq and i + 1 < len(args):
                i += 1
                val = args[i]
            opts.append((name, val))
        elif a.startswith("-") and len(a) > 1:
            for k in range(1, len(a)):
                ch = a[k]
                if ch in short_arg:
                    val = a[k + 1:]
                    if not val and i + 1 < len(args):
                        i += 1
                        val = args[i]
                    opts.append(("-" + ch, val))
                    break
                if ch in optional:
                    opts.append(("-" + ch, a[k + 1:]))
                    break
                opts.append(("-" + ch, ""))
        elif permute:
            operands.append(a)
        else:
            return operands, opts, i
        i += 1
    return operands, opts, i


def _names(opts: list[tuple[str, str]]) -> set[str]:
    return {name for name, _ in opts}


def _base(text: str) -> str:
    return text.rsplit("/", 1)[-1]


_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
_RESERVED = frozenset({"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "coproc",
                       "esac"})
_SKIP_WHOLE = frozenset({"for", "select", "case", "[[", "in"})

# wrapper: (short options with a value, long options with a value, optional-value letters, operands before the command)
_WRAPPERS: dict[str, tuple[str, frozenset[str], str, int]] = {
    "sudo": ("CDgpRrtTUu", frozenset({"--close-from", "--chdir", "--group", "--host", "--prompt", "--chroot",
                                      "--role", "--type", "--command-timeout", "--other-user", "--user"}), "", 0),
    "doas": ("uC", frozenset(), "", 0),
    "pkexec": ("", frozenset({"--user"}), "", 0),
    "env": ("uCSP", frozenset({"--unset", "--chdir", "--split-string"}), "", 0),
    "nice": ("n", frozenset({"--adjustment"}), "", 0),
    "nohup": ("", frozenset(), "", 0),
    "time": ("fo", frozenset({"--format", "--output"}), "", 0),
    "timeout": ("sk", frozenset({"--signal", "--kill-after"}), "", 1),
    "stdbuf": ("ioe", frozenset({"--input", "--output", "--error"}), "", 0),
    "ionice": ("cnpPu", frozenset({"--class", "--classdata", "--pid", "--pgid", "--uid"}), "", 0),
    "chronic": ("", frozenset(), "", 0),
    "command": ("", frozenset(), "", 0),
    "builtin": ("", frozenset(), "", 0),
    "exec": ("a", frozenset(), "", 0),
    "xargs": ("adEILnPs", frozenset({"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars",
                                     "--process-slot-var"}), "eil", 0),
    "setsid": ("", frozenset(), "", 0),
    "unbuffer": ("", frozenset(), "", 0),
    "caffeinate": ("tw", frozenset(), "", 0),
    "flock": ("wEc", frozenset({"--timeout", "--conflict-exit-code", "--command"}), "", 1),
    "chroot": ("", frozenset({"--userspec", "--groups"}), "", 1),
    "busybox": ("", frozenset(), "", 0),
    "strace": ("abeEIoOpPsSuUX", frozenset(), "", 0),
    "watch": ("n", frozenset({"--interval"}), "d", 0),
    "su": ("cgGsw", frozenset({"--command", "--group", "--supp-group", "--shell", "--whitelist-environment"}), "", 0),
    "runuser": ("cugGsw", frozenset({"--command", "--user", "--group", "--supp-group", "--shell"}), "", 0),
}
_STRING_OPTIONS = {"env": ("-S", "--split-string")}
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "fish", "csh", "tcsh"})
FETCHERS = frozenset({"curl", "wget", "fetch", "http", "https", "xh"})
_INTERPRETER = re.compile(r"(python|pypy|perl|ruby|node|php|lua)[0-9.]*|(nodejs|Rscript)")
# family: (letters giving the program inline, letters taking a value, attached-only letters,
#          long options giving the program, long options taking a value)
_INTERPRETERS: dict[str, tuple[str, str, str, frozenset[str], frozenset[str]]] = {
    "python": ("cm", "WX", "", frozenset(), frozenset({"--check-hash-based-pycs"})),
    "pypy": ("cm", "WX", "", frozenset(), frozenset()),
    "perl": ("eE", "", "MmIilxdDC0", frozenset(), frozenset()),
    "ruby": ("e", "rICEF", "", frozenset(), frozenset()),
    "node": ("ep", "rC", "", frozenset({"--eval", "--print"}),
             frozenset({"--require", "--import", "--loader", "--experimental-loader", "--conditions"})),
    "nodejs": ("ep", "rC", "", frozenset({"--eval", "--print"}), frozenset({"--require", "--import", "--loader"})),
    "php": ("rf", "cdz", "", frozenset(), frozenset()),
    "lua": ("e", "l", "", frozenset(), frozenset()),
    "Rscript": ("e", "", "", frozenset(), frozenset()),
}


def _strip_prefix(words: list[Word]) -> list[Word]:
    """Drop reserved words (``if``, ``{``, ``!``, ``do``...), ``function NAME`` and ``VAR=value`` words."""
    i = 0
    while i < len(words):
        w = words[i]
        if w.quoted or not w.literal:
            if _ASSIGNMENT.match(w.text) and not w.text.startswith(("$", "`")):
                i += 1
                continue
            break
        if w.text in _SKIP_WHOLE:
            return []
        if w.text in _RESERVED:
            i += 1
        elif w.text == "function":
            i += 2
        elif _ASSIGNMENT.match(w.text):
            i += 1
        else:
            break
    return words[i:]


def _unwrap(words: list[Word]) -> tuple[list[Word], list[str], bool]:
    """``(the command a wrapper chain runs, shell strings the wrappers run, whether xargs runs it -- its
    arguments then come from xargs' stdin)``: ``sudo -u x env -u Y nice -n 5 rm -rf /`` -> ``rm -rf /``;
    ``su -c 'X'`` -> ``["X"]``."""
    words = _strip_prefix(words)
    strings: list[str] = []
    via_xargs = False
    while words:
        name = _base(words[0].text)
        spec = _WRAPPERS.get(name) if words[0].literal else None
        if spec is None:
            break
        short_arg, long_arg, optional, skip = spec
        args = [w.text for w in words[1:]]
        if name in ("su", "runuser", "flock"):  # -c anywhere: su root -c 'cmd', flock LOCK -c 'cmd'
            _, opts, _ = _getopt(args, short_arg, long_arg, optional)
            found = [v for o, v in opts if o in ("-c", "--command")]
            if found or name == "su" or (name == "runuser" and "-u" not in _names(opts)):
                return [], strings + found, via_xargs
        _, opts, stop = _getopt(args, short_arg, long_arg, optional, permute=False)
        if name == "command" and _names(opts) & {"-v", "-V"}:
            return [], strings, via_xargs  # prints what the name is; runs nothing
        rest = words[1 + stop:]
        if name == "env":
            while rest and (rest[0].text == "-" or _ASSIGNMENT.match(rest[0].text)):
                rest = rest[1:]
        rest = rest[skip:]
        text_opts = _STRING_OPTIONS.get(name, ())
        inline = [v for o, v in opts if o in text_opts]
        if inline:  # env -S 'cmd args' more-args
            tail = " ".join(shlex.quote(w.text) for w in rest)
            return [], [*strings, f"{inline[0]} {tail}".strip()], via_xargs
        if name == "watch":  # watch joins its arguments and runs them with sh -c
            return [], [*strings, " ".join(w.text for w in rest)], via_xargs
        if name == "xargs":
            via_xargs = True
        words = _strip_prefix(rest)
    return words, strings, via_xargs


def _core_name(cmd: Cmd) -> str:
    words, _, _ = _unwrap(cmd.words)
    return _base(words[0].text) if words else ""


def _show(words: list[Word], redirs: list[Redir] | None = None, limit: int = 160) -> str:
    parts = [w.text for w in words]
    for r in redirs or []:
        if r.op not in ("<<", "<<-"):
            parts.append(r.op + (r.target.text if r.target else ""))
    text = " ".join(parts).replace("\n", " ")
    return text if len(text) <= limit else text[:limit - 3] + "..."


# ---------------------------------------------------------------------------- reasons


def _download_reason() -> str:
    return ("Piping a downloaded script straight into a shell or interpreter (`curl ... | sh`, `bash <(curl ...)`, "
            f"`sh -c \"$(curl ...)\"`) runs code nobody has read, so {POLICY} blocks it. Download the script to a "
            "file, read it, then run it.")


def _rm_reason(shown: str) -> str:
    return (f"`{shown}` deletes a whole directory tree (a recursive delete) with no undo, so {POLICY} blocks it. "
            "Delete the specific files you need to, or ask the user to run it.")


_FORK_BOMB = f"This is a fork bomb: it starts processes until the machine stops responding. {POLICY} blocks it."


# ---------------------------------------------------------------------------- the checks


class _Ctx:
    __slots__ = ("cwd", "depth")

    def __init__(self, cwd: str | None, depth: int) -> None:
        self.cwd = cwd
        self.depth = depth

    def deeper(self) -> _Ctx:
        if self.depth >= MAX_DEPTH:
            raise _TooDeep
        return _Ctx(self.cwd, self.depth + 1)

    def check_text(self, text: str) -> str | None:
        """Check ``text`` as a shell program one level down (``sh -c TEXT``, ``eval TEXT``...)."""
        ctx = self.deeper()
        try:
            toks = _Lexer(text, ctx.depth).run()
        except ParseError as exc:
            return _raw_scan(text, str(exc))
        return _check_tokens(toks, ctx)


def _check_tokens(toks: list[Token], ctx: _Ctx) -> str | None:
    if _fork_bomb(toks):
        return _FORK_BOMB
    for cmd in _commands(toks):
        reason = _check_cmd(cmd, ctx)
        if reason:
            return reason
    for t in toks:  # command and process substitutions run too, wherever they are
        words = [t] if isinstance(t, Word) else [w for w in (t.target, t.body) if w] if isinstance(t, Redir) else []
        for w in words:
            for sub in w.subs:
                reason = _check_tokens(sub, ctx.deeper())
                if reason:
                    return reason
    return None


_OUTPUT_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})


def _check_cmd(cmd: Cmd, ctx: _Ctx) -> str | None:
    for r in cmd.redirs:
        if r.op in _OUTPUT_REDIRECTS and r.target is not None:
            target = r.target.text
            if r.op == ">&" and (target.isdigit() or target == "-"):
                continue
            reason = _write_reason(target, f"`{_show(cmd.words, cmd.redirs)}`")
            if reason:
                return reason
    return _check_argv(cmd.words, cmd, ctx)


def _check_argv(words: list[Word], cmd: Cmd | None, ctx: _Ctx) -> str | None:
    """Check one command line (``cmd``: where its stdin comes from, or None when unknown/none)."""
    core, strings, via_xargs = _unwrap(words)
    for text in strings:
        reason = ctx.check_text(text)
        if reason:
            return reason
    if not core:
        return None
    xargs_cmd = cmd if via_xargs else None  # xargs feeds its stdin as arguments; the command's stdin is empty
    if via_xargs:
        cmd = None
    head = core[0]
    if head.globs() and head.text != "[":  # /bin/r? -rf /: check it as every command the glob could name
        return _check_glob_head(head, core[1:], cmd, ctx)
    if head.subs and not head.literal and head.procsub is None:  # $(echo rm -rf /): its output is the command
        printed = _literal_output(head)
        if printed is not None:
            return ctx.check_text(" ".join([printed, *(shlex.quote(w.text) for w in core[1:])]))
    name = "sh" if head.text in ("$SHELL", "${SHELL}") else _base(head.text)
    args = core[1:]
    texts = [w.text for w in args]
    shown = _show(core)
    if name == "rm":
        return _check_rm(texts, shown)
    if name in ("unlink", "shred", "rmdir"):
        return _check_removals(_getopt(texts, "nsu" if name == "shred" else "")[0], shown)
    if name == "find":
        return _check_find(args, ctx, shown)
    if name == "git":
        return _check_git(texts, shown, ctx)
    if name.startswith("mkfs") or name == "mke2fs":
        return f"`{shown}` formats a file system and erases everything on it, so {POLICY} blocks it."
    if name in SHELLS:
        return _check_shell(name, args, cmd, ctx, xargs_cmd)
    if name == "eval":
        return _fetch_in_subs(args) or ctx.check_text(" ".join(texts))
    if name in ("source", "."):
        return _check_source(name, args, cmd, ctx)
    reason = _check_writes(name, texts, shown)
    if reason:
        return reason
    m = _INTERPRETER.fullmatch(name)
    if m:
        return _check_interpreter(m.group(1) or m.group(2), args, cmd, ctx)
    return None


def _check_rm(args: list[str], shown: str) -> str | None:
    for a in args:
        if a == "--":
            break
        if a.startswith("--"):
            if len(a) >= 3 and "--recursive".startswith(a.partition("=")[0]):
                return _rm_reason(shown)
        elif a.startswith("-") and ("r" in a or "R" in a):
            return _rm_reason(shown)
    return _check_removals(_getopt(args)[0], shown)


def _check_removals(paths: list[str], shown: str) -> str | None:
    """Deleting (or moving away) hook configuration or a secrets file counts as writing it."""
    for path in paths:
        reason = _secrets.write_reason(path, f"`{shown}`", removal=True)
        if reason:
            return reason
    return None


# the names a glob in the command word is tried as (``r?`` -> rm): every command this guard judges
_GLOB_CANDIDATES = tuple(sorted({
    "rm", "unlink", "shred", "rmdir", "find", "git", "dd", "mkfs", "mke2fs", "eval", "source", "tee", "cp", "mv", "ln",
    "install", "rsync", "sed", "perl", "truncate", "curl", "wget", "python", "python3", "node", "ruby", "php", "lua",
    *SHELLS, *_WRAPPERS}))


def _check_glob_head(head: Word, args: list[Word], cmd: Cmd | None, ctx: _Ctx) -> str | None:
    import fnmatch

    pattern = _base(head.text)
    for name in _GLOB_CANDIDATES:
        if fnmatch.fnmatchcase(name, pattern) or (name == "mkfs" and fnmatch.fnmatchcase("mkfs.ext4", pattern)):
            reason = _check_argv([Word(name), *args], cmd, ctx.deeper())
            if reason:
                return (f"The command name `{head.text}` is a glob that can match `{name}`, so hookgate checks it as "
                        f"`{name}`: {reason}")
    return None


def _literal_output(word: Word) -> str | None:
    """What a command word like ``$(echo rm -rf /)`` or ```printf rm``` prints, when it is a single literal
    ``echo``/``printf`` substitution (its output then runs as the command), else None."""
    if len(word.subs) != 1 or not word.text.startswith(("$(", "`")) or not word.text.endswith((")", "`")):
        return None
    cmds = _commands(word.subs[0])
    if len(cmds) != 1:
        return None
    words, strings, _ = _unwrap(cmds[0].words)
    name = _base(words[0].text) if words and not strings else ""
    if name in ("echo", "printf") and all(w.literal for w in words[1:]):
        return _printed(name, [w.text for w in words[1:]])
    return None


_FIND_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_DELETERS = frozenset({"rm", "unlink", "shred", "rmdir"})
_FIND_FILTERS = frozenset({"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
                           "-type", "-xtype", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-used",
                           "-empty", "-size", "-user", "-group", "-uid", "-gid", "-nouser", "-nogroup", "-perm",
                           "-links", "-inum", "-samefile", "-lname", "-ilname", "-context", "-fstype"})


def _check_find(args: list[Word], ctx: _Ctx, shown: str) -> str | None:
    i = 0
    while i < len(args) and (args[i].text in ("-H", "-L", "-P", "-D") or args[i].text.startswith("-O")):
        i += 2 if args[i].text == "-D" else 1
    roots: list[Word] = []
    while i < len(args) and not (args[i].text.startswith("-") or args[i].text in ("(", "!", ")", ",")):
        roots.append(args[i])
        i += 1
    expr = args[i:]
    deletes = any(w.text == "-delete" for w in expr)
    j = 0
    while j < len(expr):
        if expr[j].text in _FIND_ACTIONS:
            end = j + 1
            while end < len(expr) and expr[end].text not in (";", "+"):
                end += 1
            run = expr[j + 1:end]
            reason = _check_argv(run, None, ctx)
            if reason:
                return reason
            core, _, _ = _unwrap(run)
            if core and _base(core[0].text) in _DELETERS:
                deletes = True
            j = end
        j += 1
    if not deletes:
        return None
    for root in roots or [Word(".")]:
        where = _outside(root, ctx.cwd)
        if where:
            return (f"`{shown}` deletes files under {where}, with no undo, so {POLICY} blocks it. Run it on a "
                    "path inside the project, or ask the user.")
    if not any(w.text in _FIND_FILTERS or w.text.startswith("-newer") for w in expr):
        where = " ".join(w.text for w in roots) or "."
        return (f"`{shown}` has no test (such as -name or -type), so it deletes everything under {where}, .git "
                f"included, with no undo; {POLICY} blocks it. Add a test that selects the files, or ask the user.")
    return None


def _outside(word: Word, cwd: str | None) -> str | None:
    """Why deleting under ``word`` is out of bounds (``"/, the file system root"``), or None. Out of bounds:
    ``/``, the home directory, and paths outside ``cwd`` (without ``cwd``: a top-level directory or ``..``).
    Paths known only at run time (``$DIR``) are None."""
    text = word.text
    home = os.path.expanduser("~").rstrip("/") or "/"
    for prefix in ("${HOME}", "$HOME", "~"):
        if text == prefix or text.startswith(prefix + "/"):
            text = home + text[len(prefix):]
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
        base = os.path.normpath(cwd)
        inside = path == base or path.startswith(base.rstrip("/") + "/")
        return None if inside else f"{shown}, outside the directory the command runs in ({base})"
    return f"{shown}, a top-level directory" if path.count("/") <= 1 else None


_GIT_GLOBAL_WITH_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix",
                                    "--config-env", "--list-cmds"})


# git -c keys whose value git runs as a shell command (a `!` alias is one too)
_GIT_COMMAND_KEYS = re.compile(r"core\.(?:pager|editor|sshcommand|fsmonitor|askpass)|sequence\.editor|diff\.external"
                               r"|pager\..+|(?:diff|merge)tool\..+\.cmd|credential\.helper|gpg\.program"
                               r"|(?:diff|filter)\..+\.(?:command|textconv|clean|smudge|process)", re.IGNORECASE)


def _long(names: set[str], full: str, shortest: int) -> bool:
    """Whether ``names`` holds long option ``full`` or an abbreviation git/GNU accept (``--fo`` for ``--force``)
    at least ``shortest`` characters long (counting the dashes)."""
    return any(n == full or (n.startswith("--") and len(n) >= shortest and full.startswith(n)) for n in names)


def _check_git(args: list[str], shown: str, ctx: _Ctx) -> str | None:
    aliases: dict[str, str] = {}
    for _ in range(10):  # aliases may name aliases
        i = 0
        while i < len(args) and args[i].startswith("-"):
            if args[i] == "-c" and i + 1 < len(args):
                key, eq, value = args[i + 1].partition("=")
                if key.lower().startswith("alias.") and eq:
                    aliases[key[6:].lower()] = value
                elif _GIT_COMMAND_KEYS.fullmatch(key) and value:
                    reason = ctx.check_text(value.lstrip("!"))
                    if reason:
                        return reason
            i += 2 if args[i] in _GIT_GLOBAL_WITH_VALUE else 1
        if i >= len(args):
            return None
        alias = aliases.pop(args[i].lower(), None)
        if alias is None:
            break
        if alias.startswith("!"):  # git runs it with sh -c, the remaining arguments appended
            return ctx.check_text(" ".join([alias[1:], *(shlex.quote(a) for a in args[i + 1:])]))
        try:
            expansion = shlex.split(alias)
        except ValueError:
            return _raw_scan("git " + alias, "an inline git alias cannot be split")
        args = args[:i] + expansion + args[i + 1:]
    sub, rest = args[i], args[i + 1:]
    if sub == "push":
        return _check_push(rest, shown)
    if sub == "reset" and _long({a for a in rest if a.startswith("--")}, "--hard", 3):
        return (f"`{shown}` throws away uncommitted work with no undo, so {POLICY} blocks `git reset --hard`. "
                "Use `git stash` to set changes aside, or ask the user.")
    if sub == "clean":
        _, opts, _ = _getopt(rest, "e", frozenset({"--exclude"}))
        names = _names(opts)
        if ("-f" in names or _long(names, "--force", 3)) and not ("-n" in names or _long(names, "--dry-run", 3)):
            return (f"`{shown}` permanently deletes untracked files, so {POLICY} blocks `git clean -f`. "
                    "Run `git clean -n` to see what it would delete, or ask the user.")
    return None


def _check_push(args: list[str], shown: str) -> str | None:
    operands, opts, _ = _getopt(args, "o", frozenset({"--push-option", "--repo", "--receive-pack", "--exec"}))
    names = _names(opts)
    if "-n" in names or _long(names, "--dry-run", 4):
        return None
    if "-f" in names or _long(names, "--force", 5) or any(o.startswith("+") for o in operands):
        return (f"`{shown}` force-pushes. Force-pushing rewrites the remote branch's history and can destroy other "
                f"people's commits, so {POLICY} blocks it. Push normally (or use --force-with-lease), or ask the "
                "user to force-push.")
    if _long(names, "--mirror", 4):
        return (f"`{shown}` makes the remote an exact mirror of this clone, overwriting and deleting its branches "
                f"and tags, so {POLICY} blocks it. Push the branches you mean to, or ask the user.")
    if "-d" in names or _long(names, "--delete", 4) or any(o.startswith(":") for o in operands[1:]):
        return (f"`{shown}` deletes a branch or tag on the remote, which can destroy other people's work, so "
                f"{POLICY} blocks it. Ask the user to delete it.")
    if _long(names, "--prune", 4):
        return (f"`{shown}` deletes every remote branch that does not exist locally, so {POLICY} blocks it. "
                "Ask the user to run it.")
    return None


def _fetch_in_subs(words: list[Word]) -> str | None:
    """The download reason when a substitution inside ``words`` runs curl/wget (``sh -c "$(curl ...)"``)."""
    for w in words:
        for sub in w.subs:
            if any(_core_name(c) in FETCHERS for c in _commands(sub)):
                return _download_reason()
    return None


def _chain(cmd: Cmd | None) -> list[Cmd]:
    out: list[Cmd] = []
    while cmd is not None and len(out) < 100:
        out.append(cmd)
        cmd = cmd.pipe_in
    return out


def _stdin(cmd: Cmd | None) -> tuple[str, Word | Cmd | None]:
    """Where ``cmd`` reads stdin: ``("text", Word)`` (heredoc, here-string), ``("pipe", producer Cmd)``,
    ``("file", Word)`` or ``("none", None)``."""
    if cmd is None:
        return "none", None
    for r in reversed(cmd.redirs):
        if r.op in ("<<", "<<-"):
            return "text", r.body
        if r.op == "<<<":
            return "text", r.target
        if r.op in ("<", "<>", "<&") and r.target is not None:
            if r.target.procsub is not None:  # < <(curl ...)
                producers = _commands(r.target.procsub)
                return ("pipe", producers[-1]) if producers else ("none", None)
            return "file", r.target
    if cmd.pipe_in is not None:
        return "pipe", cmd.pipe_in
    return "none", None


def _check_program(kind: str, src: Word | Cmd | None, shell: str, ctx: _Ctx) -> str | None:
    """Check the program text a shell reads (from stdin or a ``<(...)`` file)."""
    if kind == "text" and isinstance(src, Word):
        return _fetch_in_subs([src]) or ctx.check_text(src.text)
    if kind == "file" and isinstance(src, Word) and src.text not in ("/dev/null", "/dev/zero"):
        return (f"`{shell} < {src.text}` runs commands from a file that hookgate cannot see, so {POLICY} blocks it. "
                "Run the commands directly instead, or ask the user.")
    if kind != "pipe" or not isinstance(src, Cmd):
        return None
    if any(_core_name(c) in FETCHERS for c in _chain(src)):
        return _download_reason()
    words, strings, _ = _unwrap(src.words)
    name = _base(words[0].text) if words and not strings else ""
    if name in ("echo", "printf") and all(w.literal for w in words[1:]):
        return ctx.check_text(_printed(name, [w.text for w in words[1:]]))
    if name == "cat" and len(words) == 1:
        kind, body = _stdin(src)
        if kind == "text" and isinstance(body, Word):
            return _fetch_in_subs([body]) or ctx.check_text(body.text)
    producer = _show(src.words, src.redirs, 80)
    return (f"Piping the output of `{producer}` into `{shell}` runs commands that hookgate cannot see, so {POLICY} "
            "blocks it. Run the commands directly instead.")


def _printed(name: str, args: list[str]) -> str:
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
            fmt = fmt[:m.start()] + value + fmt[m.end():] if m else fmt + " " + value
        text = fmt
    return _ansi_decode(text) if escapes else text


def _check_shell(name: str, args: list[Word], cmd: Cmd | None, ctx: _Ctx, xargs_cmd: Cmd | None = None) -> str | None:
    """``xargs_cmd``: the xargs command line that runs this shell (its stdin supplies the shell's arguments)."""
    i, inline, from_stdin = 0, False, False
    while i < len(args):
        a = args[i].text
        if a in ("--", "-"):
            i += 1
            break
        if a.startswith("--"):
            i += 2 if a in ("--rcfile", "--init-file") else 1
            continue
        if a[:1] in "-+" and len(a) > 1:
            inline = inline or "c" in a[1:]
            from_stdin = from_stdin or "s" in a[1:]
            i += 1 + sum(ch in "oO" for ch in a[1:])  # -o pipefail, -O extglob take a value
            continue
        break
    operands = args[i:]
    if inline:
        if xargs_cmd is not None and (not operands or "{}" in operands[0].text):  # ... | xargs sh -c
            kind, src = _stdin(xargs_cmd)
            return _check_program(kind, src, name, ctx)
        if not operands:
            return None
        return _fetch_in_subs(operands[:1]) or ctx.check_text(operands[0].text)
    if operands and not from_stdin:
        script = operands[0]
        if script.procsub is not None:  # bash <(curl ...)
            producers = _commands(script.procsub)
            return _check_program("pipe", producers[-1], name, ctx) if producers else None
        if script.text not in ("/dev/stdin", "/dev/fd/0"):
            return None  # runs a script file
    kind, src = _stdin(cmd)
    return _check_program(kind, src, name, ctx)


def _check_source(name: str, args: list[Word], cmd: Cmd | None, ctx: _Ctx) -> str | None:
    if not args:
        return None
    if args[0].procsub is not None:
        producers = _commands(args[0].procsub)
        return _check_program("pipe", producers[-1], name, ctx) if producers else None
    if args[0].text in ("/dev/stdin", "/dev/fd/0"):
        kind, src = _stdin(cmd)
        return _check_program(kind, src, name, ctx)
    return None


def _check_interpreter(family: str, args: list[Word], cmd: Cmd | None, ctx: _Ctx) -> str | None:
    """Deny an interpreter that reads its program from a download (``curl ... | python3``)."""
    inline, with_value, attached, long_inline, long_value = _INTERPRETERS[family]
    i = 0
    while i < len(args):
        a = args[i].text
        if a == "-":
            break  # the program is stdin
        if a == "--":
            i += 1
            break
        if a.startswith("--"):
            name, eq, _ = a.partition("=")
            if name in long_inline:
                return None
            i += 2 if name in long_value and not eq else 1
            continue
        if a.startswith("-") and len(a) > 1:
            for k in range(1, len(a)):
                ch = a[k]
                if ch in inline:
                    return None  # the program is an argument: stdin is data
                if ch in with_value:
                    i += 0 if a[k + 1:] else 1
                    break
                if ch in attached:
                    break
            i += 1
            continue
        break
    if i < len(args) and args[i].text != "-":
        script = args[i]
        if script.procsub is not None and any(_core_name(c) in FETCHERS for c in _commands(script.procsub)):
            return _download_reason()  # python3 <(curl ...)
        return None
    kind, src = _stdin(cmd)
    if kind == "pipe" and isinstance(src, Cmd) and any(_core_name(c) in FETCHERS for c in _chain(src)):
        return _download_reason()
    return None


# command: (short options with a value, long options with a value)
_COPIERS: dict[str, tuple[str, frozenset[str]]] = {
    "cp": ("tS", frozenset({"--target-directory", "--suffix"})),
    "mv": ("tS", frozenset({"--target-directory", "--suffix"})),
    "ln": ("tS", frozenset({"--target-directory", "--suffix"})),
    "install": ("tSmogZ", frozenset({"--target-directory", "--suffix", "--mode", "--owner", "--group"})),
    "rsync": ("efBTM", frozenset({"--rsh", "--exclude", "--include", "--filter", "--files-from", "--exclude-from",
                                  "--include-from", "--rsync-path", "--password-file", "--log-file", "--chmod",
                                  "--backup-dir", "--suffix", "--compare-dest", "--link-dest", "--copy-dest",
                                  "--partial-dir", "--temp-dir", "--out-format", "--max-size", "--min-size",
                                  "--bwlimit", "--timeout", "--port", "--block-size"})),
}


def _written_paths(name: str, args: list[str]) -> list[str]:
    """The files ``name ARGS`` writes to, as far as its arguments tell."""
    if name == "tee":
        return _getopt(args, "", frozenset(), "")[0]
    if name in _COPIERS:
        short_arg, long_arg = _COPIERS[name]
        operands, opts, _ = _getopt(args, short_arg, long_arg)
        names = _names(opts)
        if name == "install" and "-d" in names:
            return operands
        target = next((v for o, v in opts if o in ("-t", "--target-directory")), None)
        if target is None:
            if len(operands) < 2:
                return []
            target, operands = operands[-1], operands[:-1]
            no_dir = names & {"-T", "--no-target-directory"}
            is_dir = (target.endswith("/") or target in (".", "..", "~")) and not no_dir
            if not is_dir:
                return [target]
        # a directory destination: the file each source becomes in it (cp .env backup/ -> backup/.env)
        return [target, *(target.rstrip("/") + "/" + _base(src.rstrip("/")) for src in operands)]
    if name == "sed":
        operands, opts, _ = _getopt(args, "efl", frozenset({"--expression", "--file", "--line-length"}), "i")
        names = _names(opts)
        if not names & {"-i", "--in-place"}:
            return []
        return operands if names & {"-e", "-f", "--expression", "--file"} else operands[1:]
    if name.startswith("perl"):
        operands, opts, _ = _getopt(args, "eE", frozenset(), "iMmIlxdDC0")
        names = _names(opts)
        if "-i" not in names:
            return []
        return operands if names & {"-e", "-E"} else operands[1:]
    if name == "dd":
        return [a[3:] for a in args if a.startswith("of=")]
    if name == "truncate":
        return _getopt(args, "sr", frozenset({"--size", "--reference"}))[0]
    if name == "curl":
        _, opts, _ = _getopt(args, "AbcCdDeEFHKmoPQrtTuUwxXyYz", frozenset({"--output"}))
        return [v for o, v in opts if o in ("-o", "--output")]
    if name == "wget":
        _, opts, _ = _getopt(args, "OoaeiBtTwQPUlARDXI",
                             frozenset({"--output-document", "--output-file", "--append-output"}))
        return [v for o, v in opts if o in ("-O", "-o", "-a", "--output-document", "--output-file", "--append-output")]
    return []


_SAFE_DEVICES = ("/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/", "/dev/shm/")


def _check_writes(name: str, args: list[str], shown: str) -> str | None:
    if name == "dd":
        for a in args:
            if a.startswith("of=/dev/") and not a[3:].startswith(_SAFE_DEVICES):
                return f"`{shown}` writes straight onto a device and can overwrite a disk, so {POLICY} blocks it."
    paths = _written_paths(name, args)
    # cp -r dir .claude: a whole configuration directory
    if name in _COPIERS and paths and not paths[0].endswith("/") and _secrets.config_kind(paths[0], removal=True):
        return _secrets.write_reason(paths[0], f"`{shown}`", removal=True, verb="replaces")
    for path in paths:
        reason = _write_reason(path, f"`{shown}`")
        if reason:
            return reason
    if name == "mv":  # moving hook configuration away switches it off
        operands, opts, _ = _getopt(args, *_COPIERS["mv"])
        if not any(o in ("-t", "--target-directory") for o, _ in opts):
            operands = operands[:-1]
        return _check_removals(operands, shown)
    return None


def _write_reason(path: str, what: str) -> str | None:
    """``secrets_guard.write_reason``, and for a glob (``.e?v``) whether it could name a protected file."""
    reason = _secrets.write_reason(path, what)
    if reason is None and ("*" in path or "?" in path or "[" in path):
        reason = _secrets.glob_reason(path, what)
    return reason


# ---------------------------------------------------------------------------- raw-text fallback

_RAW_RULES = [  # bounded repeats keep the scan linear on long input
    (re.compile(r"(?<![\w./-])rm\s[^;&|\n]{0,300}?(?<=\s)(?:-[A-Za-z]*[rR]|--recursive\b)"),
     "a recursive delete (`rm -r`)"),
    (re.compile(r"(?<![\w./-])git\s[^;&|\n]{0,300}?\bpush\b[^;&|\n]{0,300}?\s(?:-[A-Za-z]*[fd][A-Za-z]*\b"
                r"|--force(?![\w-])|--mirror\b|--delete\b|--prune\b|[+:]\w)"), "a force or destructive `git push`"),
    (re.compile(r"(?<![\w./-])git\s[^;&|\n]{0,300}?\breset\s[^;&|\n]{0,300}?--hard\b"), "`git reset --hard`"),
    (re.compile(r"(?<![\w./-])(?:curl|wget)\s[^;&\n]{0,1000}?\|\s*(?:sudo\s+)?(?:\S*/)?(?:ba|z|da|k|mk|a)?sh\b"),
     "a downloaded script piped into a shell"),
    (re.compile(r":\s*\(\s*\)\s*\{[^}]{0,100}?:\s*\|\s*:"), "a fork bomb"),
]
_RAW_WRITES = [
    re.compile(r"(?:>>?|>\||&>>?)\s*['\"]?([^\s;&|<>'\"()]+)"),
    re.compile(r"\bof=['\"]?([^\s;&|'\"]+)"),
]
_RAW_ARG_WRITERS = re.compile(r"(?<![\w./-])(tee|cp|mv|ln|install|sed|truncate)\s([^;&|\n]*)")


def _raw_scan(text: str, problem: str) -> str | None:
    """The fallback for a command that cannot be tokenized: look for the destructive patterns in the raw text."""
    head = f"hookgate cannot parse this command ({problem}), and it appears to contain"
    for pattern, what in _RAW_RULES:
        if pattern.search(text):
            return f"{head} {what}; {POLICY} blocks that. Fix the quoting, or ask the user to run it."
    paths = [m.group(1) for rule in _RAW_WRITES for m in rule.finditer(text)]
    for m in _RAW_ARG_WRITERS.finditer(text):
        if m.group(1) != "sed" or re.search(r"(?:^|\s)(?:-[A-Za-z]*i|--in-place)", m.group(2)):
            paths += [p.strip("'\"") for p in m.group(2).split() if not p.startswith("-")]
    for path in paths:
        reason = _secrets.write_reason(path, "This command")
        if reason:
            return f"{head} a write to a secrets file. {reason}"
    return None


# ---------------------------------------------------------------------------- entry points


def check_command(command: str, cwd: str | None = None) -> str | None:
    """Why ``command`` must not run (a sentence for the user), or None. Never raises.

    ``cwd``: the directory it runs in (the event's ``cwd``), used to judge ``find ... -delete`` paths."""
    try:
        if len(command) > MAX_LENGTH:
            return _raw_scan(command, "it is too long to analyse")
        try:
            toks = _Lexer(command, 0).run()
        except ParseError as exc:
            return _raw_scan(command, str(exc))
        return _check_tokens(toks, _Ctx(cwd, 0))
    except _Unanalysable as exc:
        return f"The command {exc} for hookgate to check, so {POLICY} blocks it. Simplify the command."
    except (_TooDeep, RecursionError):
        return (f"The command nests substitutions or `sh -c` more than {MAX_DEPTH} levels deep, too deep for "
                f"hookgate to check, so {POLICY} blocks it. Simplify the command.")
    except Exception as exc:  # a bug in this guard must not block ordinary commands: fall back to the raw scan
        return _raw_scan(command, f"internal error {type(exc).__name__}")


_NOT_SHELL_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit", "Read", "fs_write", "fs_read",
                              "write_file", "replace", "read_file", "apply_patch"})


def check_event(event: dict[str, Any]) -> dict[str, Any] | None:
    """Claude Code hook output denying a destructive shell command, or None. Never raises.

    ``event``: a PreToolUse event whose ``tool_input.command`` (or ``cmd``; a string, or an argv list) is
    the command; ``cwd`` (and ``tool_input.workdir``/``directory``/``dir_path``) say where it runs."""
    command: Any = None
    try:
        if not isinstance(event, dict):
            return None
        tool_input = event.get("tool_input")
        if not isinstance(tool_input, dict) or event.get("tool_name") in _NOT_SHELL_TOOLS:
            return None
        command = tool_input.get("command", tool_input.get("cmd"))
        if isinstance(command, list) and command and all(isinstance(c, str) for c in command):
            command = shlex.join(command)
        if not isinstance(command, str) or not command.strip():
            return None
        cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
        workdir = next((tool_input[k] for k in ("workdir", "directory", "dir_path")
                        if isinstance(tool_input.get(k), str) and tool_input[k]), None)
        if workdir:
            cwd = os.path.normpath(os.path.join(cwd or "", workdir)) if cwd or os.path.isabs(workdir) else None
        reason = check_command(command, cwd or None)
        return _secrets.answer(event, reason) if reason else None
    except Exception:
        reason = _raw_scan(command, "internal error") if isinstance(command, str) else None
        return _secrets.answer(event, reason) if reason and isinstance(event, dict) else None


def main() -> int:
    return _secrets.hook_main(check_event, "shell_guard")


if __name__ == "__main__":
    sys.exit(main())
