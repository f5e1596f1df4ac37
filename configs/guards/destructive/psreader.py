"""PowerShell's reader (for ``powershell``): a script as statements of words, as PowerShell splits them.

Quotes (``'...'`` literal, ``"..."`` expanding), here-strings (``@'...'@``, ``@"..."@``), backtick escapes,
comments, ``;``/newline/``|``/``&&`` between statements, arrays (``a,b``: one word, its elements apart by
``SEP``), and ``( )``/``$( )``/``{ }`` groups (one word, their insides returned to be checked as scripts). A
script of more than ``MAX_STATEMENTS`` statements is refused as unanalysable, never read in part."""

from __future__ import annotations

import re

from .lexer import Unanalysable, Word

MAX_STATEMENTS = 500  # statements one script (or one group's inside) may hold; more is refused as unanalysable
HOME_VARS = ("$home", "${home}", "$env:home", "${env:home}", "$env:userprofile", "${env:userprofile}")


def word(text: str, literal: bool) -> Word:
    """A word with its ``literal`` flag set."""
    w = Word(text)
    w.literal = literal
    return w


_OPENERS = {"(": ")", "{": "}"}
SEP = "\x1f"  # between the elements of an array word (a,b), as the reader builds it


def closing(text: str, i: int) -> int:
    """The index of the bracket closing ``text[i]`` (quotes skipped), or len(text)."""
    stack, j, n = [_OPENERS[text[i]]], i + 1, len(text)
    while j < n and stack:
        c = text[j]
        if c in "'\"":
            end = text.find(c, j + 1)
            j = n if end < 0 else end + 1
            continue
        if c == "`":
            j += 2
            continue
        if c in _OPENERS:
            stack.append(_OPENERS[c])
        elif c == stack[-1]:
            stack.pop()
        j += 1
    return j - 1 if not stack else n


class _Reader:
    """The statements of a script as it is read: the words so far, the word being built, where it starts."""

    __slots__ = ("groups", "in_word", "literal", "piece", "piped", "script", "start", "statements", "words")

    def __init__(self, script: str) -> None:
        self.script = script
        self.statements: list[tuple[list[Word], bool, str]] = []
        self.groups: list[str] = []
        self.words: list[Word] = []
        self.piece: list[str] = []
        self.in_word, self.literal, self.piped, self.start = False, True, False, 0

    def add(self, text: str, literal: bool = True) -> None:
        self.piece.append(text)
        self.in_word = True
        self.literal = self.literal and literal

    def reopen(self) -> None:
        """Go on building the last word (``'a' , 'b'``: the comma joins them)."""
        last = self.words.pop()
        self.piece, self.in_word, self.literal = [last.text], True, last.literal

    def end_word(self) -> None:
        if self.in_word:
            self.words.append(word("".join(self.piece), self.literal))
        self.piece.clear()
        self.in_word, self.literal = False, True

    def end_statement(self, at: int, piped_next: bool) -> None:
        self.end_word()
        if self.words:
            self.statements.append((self.words, self.piped, self.script[self.start : at]))
        self.words = []
        self.piped, self.start = piped_next, at + 1


def read_statements(script: str) -> tuple[list[tuple[list[Word], bool, str]], list[str]]:
    """The script's statements (its words, whether a pipe feeds it, its text) and the insides of its
    ``( )``/``$( )``/``{ }`` groups (each one word of the statement that holds it, known only at run time)."""
    r = _Reader(script)
    i, n = 0, len(script)
    while i < n:
        if len(r.statements) > MAX_STATEMENTS:
            raise Unanalysable(f"runs a PowerShell script of more than {MAX_STATEMENTS} statements, too many")
        c = script[i]
        if c in " \t\r":
            r.end_word()
        elif c in "\n;":
            r.end_statement(i, False)
        elif c == "|" or (c == "&" and script.startswith("&&", i)):
            double = script.startswith(c * 2, i)
            r.end_statement(i, c == "|" and not double)
            i += double
        elif c == "&" and not r.in_word:  # the call operator: a word of its own
            r.add(c)
            r.end_word()
        elif c == "#" and not r.in_word:
            i = script.find("\n", i)
            i = n if i < 0 else i - 1
        elif c == "<" and script.startswith("<#", i):
            end = script.find("#>", i + 2)
            i = n if end < 0 else end + 1
        elif c == "@" and script[i + 1 : i + 2] in ("'", '"') and not r.in_word:  # a here-string: @' ... '@
            quote, nl = script[i + 1], script.find("\n", i + 2)
            end = script.find("\n" + quote + "@", nl) if nl >= 0 else -1
            body = script[nl + 1 : end if end >= 0 else n] if nl >= 0 else script[i + 2 :]
            if quote == '"':
                for k in (m.start() for m in re.finditer(r"\$\(", body)):
                    r.groups.append(body[k + 2 : closing(body, k + 1)])
                r.add(re.sub(r"`(.)", r"\1", body), "$" not in body)
            else:
                r.add(body)
            i = end + 2 if end >= 0 else n
        elif c == "'":
            end = i + 1
            while True:
                end = script.find("'", end)
                if end < 0 or not script.startswith("''", end):
                    break
                end += 2
            end = n if end < 0 else end
            r.add(script[i + 1 : end].replace("''", "'"))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and script[j] != '"':
                j += 2 if script[j] == "`" else 1
            body = script[i + 1 : j]
            for k in (m.start() for m in re.finditer(r"\$\(", body)):
                r.groups.append(body[k + 2 : closing(body, k + 1)])
            body = body if r.in_word else with_home(body)
            r.add(re.sub(r"`(.)", r"\1", body), "$" not in body)
            i = j
        elif c == "`":
            r.add(script[i + 1 : i + 2].replace("\n", ""))
            i += 1
        elif c in "({" or (c in "$@" and script[i + 1 : i + 2] in ("(", "{") and script[i : i + 2] != "${"):
            at = i if c in "({" else i + 1
            close = closing(script, at)
            r.groups.append(script[at + 1 : close])
            r.add(script[i : close + 1], False)
            i = close
        elif c in ")}":
            r.end_word()
        elif c == ",":  # an array: a, b is one word, its elements apart
            if not r.in_word and r.words:
                r.reopen()
            r.add(SEP)
            while i + 1 < n and script[i + 1] in " \t\r\n":  # an array goes on over a line break
                i += 1
        elif c == "$":
            m = re.compile(r"\$(?:\{[^}]*\}|[\w:?]*)").match(script, i)
            var = m.group(0) if m else "$"
            home = not r.in_word and var.lower() in HOME_VARS
            r.add("~" if home else var, home)
            i += len(var) - 1
        else:
            r.add(c)
        i += 1
    r.end_statement(n, False)
    if len(r.statements) > MAX_STATEMENTS:
        raise Unanalysable(f"runs a PowerShell script of more than {MAX_STATEMENTS} statements, too many")
    return r.statements, r.groups


def with_home(body: str) -> str:
    """``body`` with a leading home variable (``"$HOME/src"``) as ``~``."""
    low = body.lower()
    for var in HOME_VARS:
        if low.startswith(var) and (len(body) == len(var) or body[len(var)] in "/\\"):
            return "~" + body[len(var) :]
    return body


def path(text: str) -> str:
    """A Windows path read as absolute (``C:\\Users`` is ``/Users``), backslashes as slashes."""
    text = text.replace("\\", "/")
    if re.match(r"[A-Za-z]:(?:/|$)", text):
        text = "/" + text[2:].lstrip("/")
    return text


def net_path(raw: str) -> Word:
    """The path argument of a .NET file method: a quoted string or a variable (``$HOME``: ``~``)."""
    if raw[0] == "$":
        at_home = raw.lower() in HOME_VARS
        return word("~" if at_home else raw, at_home)
    body = raw[1:-1] if raw[0] == "'" else with_home(raw[1:-1])
    return word(path(body), raw[0] == "'" or "$" not in body)
