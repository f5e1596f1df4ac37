"""Whether a ``sed`` command line only reads (for ``readOnly``): its options and its script, command by command.

Options are read with the default shell guard's GNU option parser (``configs.guards.destructive.getopt``):
``-i`` also inside a bundle (``-ni``, ``-Ei``, ``-i.bak``), long options also abbreviated as GNU sed takes them
(``--in`` is ``--in-place``, ``--fi`` ``--file``); ``-f``/``--file`` is a script hookgate does not read, so it
may write. The script (each ``-e``, or the first operand) is walked command by command, past addresses
(``1``, ``$``, ``/re/I``, ``\\%re%``, ``1~2``, ``addr,+3``, ``!``): ``w``/``W``, the ``s///w`` flag write a file,
``e`` and the ``s///e`` flag run a command (also found by the guard's ``optruns``), and a command sed does not
have counts as a write. Regular expressions are compiled on use only (``re``'s cache)."""

from __future__ import annotations

_LONG = (
    *("--quiet", "--silent", "--debug", "--expression", "--file", "--follow-symlinks", "--in-place"),
    *("--line-length", "--null-data", "--zero-terminated", "--posix", "--regexp-extended", "--separate"),
    *("--sandbox", "--unbuffered", "--binary", "--help", "--version"),
)
_PLAIN = frozenset("=dDgGhHnNpPxzF")  # commands without an argument
_S_FLAGS = frozenset("gpiImMe0123456789")


def sed_reason(args: list[str]) -> str | None:
    """Why ``sed ARGS`` may write a file or run a command, or None when it only reads."""
    from configs.guards.destructive.getopt import getopt
    from configs.guards.destructive.optruns import option_runs

    spelled: list[str] = []
    for k, a in enumerate(args):
        if a == "--":
            spelled += args[k:]
            break
        if a.startswith("--"):
            name, eq, value = a.partition("=")
            full = [o for o in _LONG if o.startswith(name)] if name not in _LONG else [name]
            if len(full) != 1:
                return f"sed {name} is not an option hookgate can read, so it may write"
            a = full[0] + eq + value
        spelled.append(a)
    operands, opts, _ = getopt(spelled, "efl", frozenset({"--expression", "--file", "--line-length"}), optional="i")
    names = {o for o, _ in opts}
    if names & {"-i", "--in-place"}:
        return "sed -i (--in-place) edits files"
    if names & {"-f", "--file"}:
        return "sed -f runs a script file hookgate does not read, so it may write"
    scripts = [v for o, v in opts if o in ("-e", "--expression")] or operands[:1]
    if option_runs("sed", spelled):
        return "sed's e command (or s///e) runs a shell command"
    for script in scripts:
        why = script_reason(script)
        if why is not None:
            return why
    return None


def script_reason(script: str) -> str | None:
    """Why the sed ``script`` may write or run a command, or None (every command in it only reads)."""
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in " \t\r\n;}":
            i += 1
            continue
        if c == "#":
            i = _line_end(script, i)
            continue
        at = _address(script, i)
        if at is None:
            return f"sed script {script[i : i + 20]!r} has an address hookgate cannot read, so it may write"
        i = at
        while i < n and script[i] in " \t!":
            i += 1
        if i >= n:
            return None
        c = script[i]
        if c in "wW":
            return f"sed {c} command writes a file"
        if c == "e":
            return "sed e command runs a shell command"
        if c in "sy":
            end = _delimited(script, i + 1, 2)
            if end is None:
                return f"sed {c} command {script[i : i + 20]!r} cannot be read, so it may write"
            i = end
            if c == "s":
                j = i
                while j < n and script[j] in _S_FLAGS:
                    j += 1
                flags = script[i:j]
                if j < n and script[j] == "w":
                    return "sed s///w writes a file"
                if "e" in flags:
                    return "sed s///e runs the pattern space as a shell command"
                i = j
        elif c in "aic":
            i = _text_end(script, i + 1)
        elif c in "rR":
            i = _line_end(script, i)  # a file name to the end of the line (read, not written)
        elif c in "btTv:":
            while i < n and script[i] not in ";\n":
                i += 1
        elif c in "qQlL":
            i += 1
            while i < n and script[i] in " \t0123456789":
                i += 1
        elif c in _PLAIN or c == "{":
            i += 1
        else:
            return f"sed command {c!r} is not one hookgate knows, so it may write"
    return None


def _line_end(script: str, i: int) -> int:
    end = script.find("\n", i)
    return len(script) if end < 0 else end


def _text_end(script: str, i: int) -> int:
    """The end of ``a``/``i``/``c`` text: the end of the line, going on past lines ending in a backslash."""
    while True:
        end = _line_end(script, i)
        line = script[i:end]
        if end >= len(script) or (len(line) - len(line.rstrip("\\"))) % 2 == 0:
            return end
        i = end + 1


def _delimited(script: str, i: int, parts: int) -> int | None:
    """The index after ``parts`` delimited parts starting with the delimiter at ``script[i]`` (``s/a/b/``:
    two parts after the ``/``), or None when they do not close."""
    if i >= len(script) or script[i] in "\n\\":
        return None
    delim, j = script[i], i + 1
    while parts and j < len(script):
        c = script[j]
        if c == "\\":
            j += 2
            continue
        if c == delim:
            parts -= 1
        j += 1
    return j if not parts else None


def _address(script: str, i: int) -> int | None:
    """The index after the address(es) at ``i`` (``i`` itself when there is none), or None when one does not
    close (``/re`` without its ``/``)."""
    n = len(script)
    for second in (False, True):
        if i >= n:
            return i if not second else None
        c = script[i]
        if c.isdigit():
            while i < n and (script[i].isdigit() or script[i] == "~"):
                i += 1
        elif c == "$":
            i += 1
        elif c in "/\\":
            end = _delimited(script, i + (c == "\\"), 1)
            if end is None:
                return None
            i = end
            while i < n and script[i] in "IM":
                i += 1
        elif second and c in "+~":
            i += 1
            while i < n and script[i].isdigit():
                i += 1
        elif second:
            return None
        else:
            return i
        while i < n and script[i] in " \t":
            i += 1
        if second or i >= n or script[i] != ",":
            return i
        i += 1
        while i < n and script[i] in " \t":
            i += 1
    return i
