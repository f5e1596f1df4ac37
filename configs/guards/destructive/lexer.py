"""The guard's own Bash tokenizer: quotes, escapes, comments, heredocs and every expansion context bash runs.

Why a second Bash parser: hookgate's ``if`` rules split commands with bashlex (``gateway/bash_split.py``), which is
right for matching a rule against a command; the default policy needs a lexer that never fails open, costs
microseconds without third-party imports (the guard also runs as ``python -I -S``), and keeps what bashlex
drops: every command and process substitution, wherever bash would run it (in ``$((...))``, ``${x:-...}``,
``$[...]``, heredoc bodies), plus which words were quoted, for the rules in ``rules.py``.
"""

from __future__ import annotations

import re

MAX_DEPTH = 20  # nested substitutions / sh -c levels; deeper input is refused as unanalysable


class ParseError(ValueError):
    """The command cannot be tokenized (unbalanced quotes, an unterminated substitution)."""


class TooDeep(Exception):
    """Substitutions or ``sh -c`` levels nest more than ``MAX_DEPTH`` deep."""


class Unanalysable(Exception):
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
# Patterns, not compiled objects: ``re`` compiles each on first use (and caches it), so a hook call compiles only
# those its command needs.
_PLAIN = r"[^ \t\r\n;&|()<>'\"\\$`]+"
_DQ_PLAIN = r'[^"\\$`]*'
_HEREDOC_PLAIN = r"[^\\$`]*"
_SIMPLE_WORD = r"[^\s;&|()<>'\"\\$`{},*?\[#]+"
_SIMPLE = rf" *{_SIMPLE_WORD}(?: +{_SIMPLE_WORD})* *"
"""A command of plain words between spaces: no quote, escape, expansion, operator, redirection, comment, glob
or brace character, no tab or newline. Its tokens are its words as written (what ``_word`` makes of them)."""
_BACKTICK_STOP = r"[`\\]"
_ANSI_STOP = r"['\\]"
_META_CHARS = r"[{},*?\[]"
_META_SET = frozenset("{},*?[")  # the characters of _META_CHARS
_VAR = r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]"
_ANSI_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_ANSI_CODE = r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)"  # compiled on first use


def ansi_decode(raw: str) -> str:
    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        if code[0] in "xuU" and len(code) > 1:
            return chr(min(int(code[1:], 16), 0x10FFFF))
        if code[0] in "01234567":
            return chr(int(code, 8) & 0xFF)
        if code[0] == "c":
            return chr(ord(code[1]) & 0x1F)
        return _ANSI_ESCAPES.get(code, "\\" + code)

    return re.sub(_ANSI_CODE, one, raw, flags=re.DOTALL)


class Lexer:
    """Bash's tokenizer, closely enough for policy checks (see the module docstring)."""

    def __init__(self, src: str, depth: int, start: int = 0) -> None:
        if depth > MAX_DEPTH:
            raise TooDeep
        self.s = src
        self.i = start
        self.depth = depth
        self.heredocs: list[Redir] = []  # waiting for their bodies (after the next newline)
        self.closing = False

    def run(self, closing: bool = False) -> list[Token]:
        """Tokens up to the end, or (``closing``) up to and including an unmatched ``)``."""
        self.closing = closing
        s, n = self.s, len(self.s)
        if not closing and self.i == 0 and re.fullmatch(_SIMPLE, s):  # `npm test`: no character to interpret
            self.i = n
            return [Word(text) for text in s.split()]
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
                line = s[self.i : end]
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
                sub = Lexer(body, self.depth + 1)
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
            inner = Lexer(s, self.depth + 1, self.i + 2)
            toks = inner.run(closing=True)
            self.i = inner.i
            w.procsub = toks
            w.subs.append(toks)
            w.text = s[start : self.i]
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
                w.text += s[self.i + 1 : end]
                w.quoted = True
                self.i = end + 1
            elif c == '"':
                self.i += 1
                w.quoted = True
                self._dq(w, heredoc=False)
            elif c == "\\":
                nxt = s[self.i + 1 : self.i + 2]
                if nxt != "\n":
                    w.text += nxt or "\\"
                    w.quoted = True
                self.i += 2
            elif c == "$":
                self._dollar(w, in_dq=False)
            elif c == "`":
                self._backtick(w)
            else:
                m = re.compile(_PLAIN).match(s, self.i)
                if m is None:  # pragma: no cover - every other character is plain
                    raise ParseError(f"unexpected {c!r}")
                if not _META_SET.isdisjoint(m.group()):
                    base = len(w.text)
                    w.meta.extend(base + k.start() for k in re.compile(_META_CHARS).finditer(m.group()))
                w.text += m.group()
                self.i = m.end()
        return w

    def _dq(self, w: Word, heredoc: bool) -> None:
        """The rest of a double-quoted string (or a whole heredoc body) into ``w``."""
        s, n = self.s, len(self.s)
        plain = re.compile(_HEREDOC_PLAIN if heredoc else _DQ_PLAIN)
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
                nxt = s[self.i + 1 : self.i + 2]
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
        nxt = s[i + 1 : i + 2]
        if nxt == "(" and s.startswith("((", i + 1):  # $(( arithmetic )): substitutions inside it run
            self._expansion(w, i + 3, "(", ")", 2)
            body = s[i + 3 : self.i - 2]
            if "(" in body or "-" in body:  # bash reads `$((cmd) )` as a substitution of a subshell: check both
                try:  # noqa: SIM105 (contextlib is one more import on the hook path)
                    w.subs.append(Lexer("(" + body + ")", self.depth + 1).run())
                except ParseError:
                    pass
        elif nxt == "(":
            inner = Lexer(s, self.depth + 1, i + 2)
            w.subs.append(inner.run(closing=True))
            w.text += s[i : inner.i]
            w.literal = False
            self.i = inner.i
        elif nxt == "{":  # ${x:-$(cmd)}, ${a[$(cmd)]}: the parameter expansion's words are expanded too
            self._expansion(w, i + 2, "{", "}", 1)
        elif nxt == "[":  # $[ old-style arithmetic ]
            self._expansion(w, i + 2, "[", "]", 1)
        elif nxt == "'" and not in_dq:  # $'...' ANSI-C quoting
            j = i + 2
            while True:
                m = re.compile(_ANSI_STOP).search(s, j)
                if m is None:
                    raise ParseError("unbalanced $'")
                if s[m.start()] == "'":
                    break
                j = m.start() + 2
            w.text += ansi_decode(s[i + 2 : m.start()])
            w.quoted = True
            self.i = m.start() + 1
        elif nxt == '"' and not in_dq:  # $"..." locale string: a double-quoted string
            self.i += 1
        else:
            var = re.compile(_VAR).match(s, i + 1)
            if var:
                w.text += "$" + var.group()
                w.literal = False
                self.i = var.end()
            else:
                w.text += "$"
                self.i += 1

    def _expansion(self, w: Word, j: int, open_: str, close: str, depth: int) -> None:
        """Read an expansion from ``self.i`` up to the ``close`` that brings ``depth`` to 0, into ``w`` (its text
        as written; the substitutions inside it, which bash runs, into ``w.subs``). Raises ParseError."""
        s, n, start = self.s, len(self.s), self.i
        scratch = Word()
        while j < n:
            c = s[j]
            if c == "\\":
                j += 2
            elif c == "'":
                end = s.find("'", j + 1)
                if end < 0:
                    raise ParseError("unbalanced single quote")
                j = end + 1
            elif c in '"$`':
                self.i = j
                if c == '"':
                    self.i += 1
                    self._dq(scratch, heredoc=False)
                elif c == "$":
                    self._dollar(scratch, in_dq=True)
                else:
                    self._backtick(scratch)
                j = self.i
            else:
                if c == open_:
                    depth += 1
                elif c == close:
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
        else:
            raise ParseError(f"unbalanced {open_}")
        self.i = j + 1
        w.text += s[start : self.i]
        w.subs.extend(scratch.subs)
        w.literal = False

    def _backtick(self, w: Word) -> None:
        s = self.s
        j = self.i + 1
        parts: list[str] = []
        while True:
            m = re.compile(_BACKTICK_STOP).search(s, j)
            if m is None:
                raise ParseError("unbalanced backquote")
            k = m.start()
            parts.append(s[j:k])
            if s[k] == "`":
                j = k + 1
                break
            nxt = s[k + 1 : k + 2]
            parts.append(nxt if nxt in ("`", "\\", "$") else "\\" + nxt)
            j = k + 2
        body = "".join(parts)
        w.subs.append(Lexer(body, self.depth + 1).run())
        w.text += "`" + body + "`"
        w.literal = False
        self.i = j
