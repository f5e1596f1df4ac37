"""PowerShell (``pwsh``, ``powershell``): the script it runs, statement by statement.

The script is ``-Command``/``-c`` (the rest of the line; the default for ``powershell``, where a bare argument
is a command), ``-CommandWithArgs``/``-cwa``, ``-EncodedCommand``/``-e`` (base64 of UTF-16LE text) or stdin
(``-Command -``, ``-File -``, a heredoc or ``echo ... |``); ``-File script.ps1`` (pwsh's default) runs a file.
In the script, ``Remove-Item`` and its aliases (``rm``, ``ri``, ``del``, ``erase``, ``rd``, ``rmdir``) with
``-Recurse`` (or ``-rf``: pwsh on Linux runs the native rm) are checked as ``rm -rf`` of their paths, without it
as ``rm``; ``-WhatIf`` deletes nothing. ``Invoke-Expression``/``iex 'TEXT'`` and the insides of ``( )``,
``$( )`` and ``{ }`` are checked as scripts, ``[IO.Directory]::Delete(PATH, $true)`` as ``rm -rf``,
``Start-Process FILE -ArgumentList ARGS`` as the command line it starts, and any other command as the native
command line it is (``git reset --hard``, ``/bin/rm -rf /``); after ``Set-Location`` a relative path is
somewhere hookgate does not follow. Windows paths (``C:\\Users``) are absolute, ``~``, ``$HOME`` and
``$env:USERPROFILE`` the home directory, other variables known only at run time. Imported only when the
command is PowerShell."""

from __future__ import annotations

import re

from .context import POLICY, Ctx
from .expand import Cmd
from .lexer import Word
from .psreader import HOME_VARS, SEP, net_path, path, read_statements, word

# CLI parameters: (name, shortest abbreviation, what it takes: a value, or the script in some form)
_PARAMETERS = (
    ("command", "c", "command"),
    ("commandwithargs", "commandwithargs", "command-with-args"),
    ("configurationname", "config", "value"),
    ("configurationfile", "configurationfile", "value"),
    ("custompipename", "custompipename", "value"),
    ("encodedcommand", "e", "encoded"),
    ("encodedarguments", "encodeda", "value"),
    ("executionpolicy", "ex", "value"),
    ("file", "f", "file"),
    ("inputformat", "inp", "value"),
    ("outputformat", "o", "value"),
    ("settingsfile", "settings", "value"),
    ("workingdirectory", "wo", "value"),
    ("windowstyle", "w", "value"),
)
_ALIASES = {"cwa": "command-with-args", "ec": "encoded", "ea": "value", "ep": "value", "if": "value"}
_ALIASES |= {"of": "value", "wd": "value"}
_REMOVE = frozenset(
    {"remove-item", "rm", "ri", "del", "erase", "rd", "rmdir", "microsoft.powershell.management\\remove-item"}
)
_EVAL = frozenset({"invoke-expression", "iex"})
_START = frozenset({"start-process", "saps", "start"})
# common parameters (every cmdlet has them) that take a value, their switches, and their aliases
_COMMON_VALUES = (
    "erroraction",
    "warningaction",
    "informationaction",
    "progressaction",
    "errorvariable",
    "warningvariable",
    "informationvariable",
    "outvariable",
    "outbuffer",
    "pipelinevariable",
)
_COMMON = (*_COMMON_VALUES, "debug", "verbose", "whatif", "confirm")
_COMMON_ALIASES = {
    "ea": "erroraction",
    "wa": "warningaction",
    "infa": "informationaction",
    "proga": "progressaction",
    "ev": "errorvariable",
    "wv": "warningvariable",
    "iv": "informationvariable",
    "ov": "outvariable",
    "ob": "outbuffer",
    "pv": "pipelinevariable",
    "db": "debug",
    "vb": "verbose",
    "wi": "whatif",
    "cf": "confirm",
}
_REMOVE_PARAMS = (
    "path",
    "literalpath",
    "filter",
    "include",
    "exclude",
    "recurse",
    "force",
    "credential",
    "stream",
    *_COMMON,
)
_REMOVE_ALIASES = {**_COMMON_ALIASES, "pspath": "literalpath", "lp": "literalpath"}
_VALUE_PARAMS = frozenset({"filter", "include", "exclude", "credential", "stream", *_COMMON_VALUES})
_START_VALUES = frozenset(
    {"workingdirectory", "verb", "windowstyle", "redirectstandardinput", "redirectstandardoutput"}
    | {"redirectstandarderror", "credential", "environment", *_COMMON_VALUES}
)
_START_PARAMS = (
    *("filepath", "argumentlist", "loaduserprofile", "nonewwindow", "passthru", "wait", "usenewenvironment"),
    *sorted(_START_VALUES - set(_COMMON_VALUES)),
    *_COMMON,
)
_START_ALIASES = {**_COMMON_ALIASES, "path": "filepath", "pspath": "filepath", "args": "argumentlist"}
_START_ALIASES |= {"al": "argumentlist", "lup": "loaduserprofile", "nnw": "nonewwindow", "rse": "redirectstandarderror"}
_START_ALIASES |= {"rsi": "redirectstandardinput", "rso": "redirectstandardoutput"}
_LIST = frozenset({"get-childitem", "gci", "ls", "dir", "microsoft.powershell.management\\get-childitem"})
_LIST_VALUES = frozenset({"filter", "include", "exclude", "attributes", *_COMMON_VALUES})
_LIST_PARAMS = (
    *("path", "literalpath", "recurse", "depth", "force", "name", "followsymlink", "directory", "file", "hidden"),
    *("readonly", "system", "filter", "include", "exclude", "attributes", *_COMMON),
)
_FETCH = r"\b(?:iwr|irm|invoke-webrequest|invoke-restmethod|curl|wget|downloadstring|downloadfile)\b"
_MOVES = frozenset({"set-location", "sl", "cd", "chdir", "push-location", "pushd", "pop-location", "popd"})
# [System.IO.Directory]::Delete(PATH[, RECURSIVE]) ([Directory] after `using namespace System.IO`)
_NET_DELETE = (
    r"\[(?:System\.)?(?:IO\.)?(Directory|File)\]::Delete\(\s*('[^']*'|\"[^\"]*\"|\$\{?[\w:]+\}?)\s*(?:,([^)]*))?"
)


def _parameter(text: str) -> str | None:
    """What a CLI parameter (``-Command``, ``-c``, ``--nop``, ``-EncodedCommand``) takes, or None (a switch)."""
    key = text.lstrip("-").lower()
    if not key:
        return None
    if key in _ALIASES:
        return _ALIASES[key]
    for name, shortest, takes in _PARAMETERS:
        if name.startswith(key) and len(key) >= len(shortest):
            return takes
    return None


def check_powershell(name: str, args: list[Word], cmd: Cmd | None, ctx: Ctx, shown: str) -> str | None:
    """The script ``pwsh``/``powershell ARGS`` runs, checked statement by statement (see the module docstring)."""
    texts = [w.text for w in args]
    script: str | None = None
    i = 0
    while i < len(texts):
        a = texts[i]
        takes = _parameter(a) if a.startswith("-") and a != "-" else None
        if a.startswith("-") and a != "-" and takes is None:
            i += 1  # -NoProfile, -NonInteractive, -NoLogo...
            continue
        if takes == "value":
            i += 2
            continue
        if takes == "encoded":
            script = _decoded(texts[i + 1]) if i + 1 < len(texts) else None
            break
        if takes == "file" or (takes is None and not name.startswith("powershell")):  # pwsh script.ps1: a file
            rest = texts[i + 1 :] if takes == "file" else texts[i:]
            at = i + 1 if takes == "file" else i
            if at < len(args):
                from .programs import download_reason, downloaded_file

                if downloaded_file(args[at], ctx):  # pwsh -File <(curl ...), curl -o x.ps1 URL; pwsh x.ps1
                    return ctx.hit("exec.download", shown, download_reason())
            if rest[:1] != ["-"]:
                return None
            script = ""
            break
        rest = texts[i + 1 :] if takes else texts[i:]  # -Command ..., or powershell's bare command
        if any(w.subs for w in args[i:]):  # pwsh -c "$(curl ...)"
            from .programs import fetch_in_subs

            reason = fetch_in_subs(args[i + 1 if takes else i :], shown, ctx)
            if reason:
                return reason
        script = (rest[0] if rest else "") if takes == "command-with-args" else " ".join(rest)
        break
    if not script or script == "-":  # the script is stdin
        from .programs import download_reason, piped_download, stdin, stdin_text

        kind, src = stdin(cmd)
        if piped_download(src, kind, ctx):
            return ctx.hit("exec.download", shown, download_reason())
        script = stdin_text(kind, src)
        if script is None and (
            kind == "pipe" or (kind == "file" and isinstance(src, Word) and src.text != "/dev/null")
        ):
            return _unseen_stdin(kind, src, shown, ctx)
    return _check_script(script, shown, ctx) if script else None


def _unseen_stdin(kind: str, src: Word | Cmd | None, shown: str, ctx: Ctx) -> str | None:
    """PowerShell reading its script from a pipe or file hookgate cannot see (``cat x.ps1 | pwsh -``)."""
    from .expand import show

    where = show(src.words, src.redirs, 60) + " |" if isinstance(src, Cmd) else "< " + getattr(src, "text", "")
    return ctx.hit(
        "exec.unseen",
        shown[:80],
        (
            f"`{shown[:80]}` runs PowerShell code from `{where}`, which hookgate cannot see, so {POLICY} blocks it. "
            "Run the commands directly instead."
        ),
    )


def _decoded(text: str) -> str | None:
    """``-EncodedCommand``'s script: base64 of UTF-16LE text (None when it is not)."""
    import base64
    import binascii

    try:
        return base64.b64decode(text, validate=True).decode("utf-16-le")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


def check_script(script: str, shown: str, ctx: Ctx) -> str | None:
    """A PowerShell script (``pwsh -c``'s, or the ``PowerShell`` tool's ``command``), statement by statement;
    ``shown``: what the reason names as the command that runs it."""
    return _check_script(script, shown, ctx)


def _check_script(script: str, shown: str, ctx: Ctx) -> str | None:
    if "::" in script:  # [System.IO.Directory]::Delete('/home/user', $true)
        for m in re.finditer(_NET_DELETE, script, re.IGNORECASE):
            second = (m.group(3) or "").strip().lower()
            recursive = m.group(1).lower() == "directory" and second not in ("", "$false", "0")  # 1, [bool]1...
            target = net_path(m.group(2))
            reason = _verdict(m.group(0), [Word("rm"), *([Word("-rf")] if recursive else []), target], shown, ctx)
            if reason:
                return reason
        from .pswrites import net_written

        for argv in net_written(script):  # [IO.File]::WriteAllText('.env', ...)
            reason = _verdict(" ".join(w.text for w in argv), argv, shown, ctx)
            if reason:
                return reason
    statements, groups = read_statements(script)
    producer: tuple[list[Word], str] | None = None
    for words, piped, source in statements:
        reason = _check_statement(words, producer if piped else None, source, shown, ctx)
        if reason:
            return reason
        producer = words, source
        if words and words[0].text.lower() in _MOVES:  # Set-Location ..: later relative paths are elsewhere
            ctx = ctx.moved_to(None, True)
    for group in groups:  # ( ), $( ), { }: their statements run too
        reason = _check_script(group, shown, ctx.deeper())
        if reason:
            return reason
    return None


def _check_statement(
    words: list[Word], producer: tuple[list[Word], str] | None, source: str, shown: str, ctx: Ctx
) -> str | None:
    """One statement (``producer``: the statement piped into it, with its text, or None)."""
    piped = producer is not None
    while words and words[0].text in ("&", "."):  # the call operator, dot-sourcing
        words = words[1:]
    if not words:
        return None
    from .pswrites import written

    for line in written(words):  # Set-Content .env, Copy-Item x .claude/settings.json, > hookgate.yaml...
        reason = _verdict(source, line, shown, ctx)
        if reason:
            return reason
    called = re.fullmatch(r"(iex|invoke-expression)(\(.*\))", words[0].text, re.IGNORECASE | re.DOTALL)
    if called:  # iex("..."): the call's parentheses are its argument
        words = [word(called.group(1), True), word(called.group(2), False), *words[1:]]
    head = words[0].text.lower()
    if (
        producer is not None
        and head in ("%", "foreach-object", "foreach")
        and len(words) > 1
        and re.fullmatch(_EACH_REMOVED, words[1].text, re.IGNORECASE)
    ):
        roots = _listed_tree(producer[0])  # gci ~ -r | % { Remove-Item $_.FullName }: as rm -rf ~
        return _verdict(source, [Word("rm"), Word("-rf"), *roots], shown, ctx) if roots else None
    if (
        producer is not None
        and head in ("%", "foreach-object", "foreach")
        and len(words) > 1
        and re.fullmatch(r"\{\s*(?:iex|invoke-expression)\s+\$(?:_|psitem)\s*\}", words[1].text, re.IGNORECASE)
    ):
        return _piped_code(producer, source, shown, ctx)  # '...' | % { iex $_ }: each item is run
    if head in _EVAL:
        code = [w for w in words[1:] if not w.text.startswith("-")]
        if not code and producer is not None:  # '...' | iex: the script is what the pipe carries
            return _piped_code(producer, source, shown, ctx)
        for w in code:
            if not w.literal and re.search(_FETCH, w.text, re.IGNORECASE):  # iex (iwr https://...)
                from .programs import download_reason

                return ctx.hit("exec.download", " ".join(source.split())[:80], download_reason())
            inner = w.text if w.literal else _paren_string(w.text)  # iex ("..."), iex('...')
            if inner is None and not w.literal and not w.text.startswith(("(", "$(", "@(")):
                inner = _home_expanded(w.text)  # iex "Remove-Item -Recurse $HOME": the string expands first
            reason = _check_script(inner.replace(SEP, ","), shown, ctx.deeper()) if inner is not None else None
            if reason:
                return reason
        return None
    if head in _REMOVE:
        argv = _removal(words[1:], piped)
        roots = _listed_tree(producer[0]) if producer is not None and argv and "$input" in argv[-1].text else None
        if argv and roots:  # gci ~ -Recurse | Remove-Item: every item under ~, as rm -rf ~
            argv = [Word("rm"), Word("-rf"), *roots]
        return _verdict(source, argv, shown, ctx) if argv else None
    if head in _START:
        for argv in _started(words[1:]):
            reason = _verdict(source, argv, shown, ctx)
            if reason:
                return reason
        return None
    return _verdict(source, _elements(words), shown, ctx)  # a native command: git reset --hard, /bin/rm -rf /


_EACH_REMOVED = (
    r"\{\s*(?:remove-item|rm|ri|del|erase|rd|rmdir)\s+(?:-\w+(?::\S+)?\s+)*"
    r"\$(?:_|psitem)(?:\.(?:fullname|pspath))?(?:\s+-\w+(?::\S+)?)*\s*\}"
)


def _home_expanded(text: str) -> str | None:
    """A double-quoted string's text with its home variables as ``~`` (None when it holds none)."""
    out = re.sub("|".join(re.escape(v) for v in HOME_VARS) + r"(?![\w:])", "~", text, flags=re.IGNORECASE)
    return out if out != text else None


def _paren_string(text: str) -> str | None:
    """The string in ``('...')`` or ``("...")`` (one without ``$`` or backtick inside), or None."""
    m = re.fullmatch(r"\(\s*(?:'([^']*)'|\"([^\"$`]*)\")\s*\)", text, re.DOTALL)
    return None if m is None else m.group(1) if m.group(1) is not None else m.group(2)


def _piped_code(producer: tuple[list[Word], str], source: str, shown: str, ctx: Ctx) -> str | None:
    """``PRODUCER | iex``: a literal string or here-string (or ``echo``/``Write-Output`` of literals) is checked
    as the script it is; anything else is code hookgate cannot see (``exec.unseen``; a download:
    ``exec.download``), as ``... | sh`` is."""
    words, text = producer
    head = words[0].text.lower()
    lead = text.lstrip()
    if len(words) == 1 and words[0].literal and lead[:1] in ("'", '"', "@"):  # a string, or an array of them
        return _check_script("\n".join(words[0].text.split(SEP)), shown, ctx.deeper())
    if head in ("echo", "write-output", "write") and all(w.literal for w in words[1:]):
        return _check_script("\n".join(w.text for w in _elements(words[1:])), shown, ctx.deeper())
    part = f"{' '.join(text.split())[:60]} | {' '.join(source.split())[:20]}"
    if re.search(_FETCH, text, re.IGNORECASE):
        from .programs import download_reason

        return ctx.hit("exec.download", part, download_reason())
    return ctx.hit(
        "exec.unseen",
        part,
        (
            f"Piping the output of `{' '.join(text.split())[:60]}` into `{' '.join(source.split())[:20]}` runs "
            f"PowerShell code that hookgate cannot see, so {POLICY} blocks it. Run the commands directly instead."
        ),
    )


def _started(args: list[Word]) -> list[list[Word]]:
    """``Start-Process FILE [ARGS]`` (``-FilePath``, ``-ArgumentList``/``-Args``) as the command lines it may
    start: an array's elements each one word (as Windows quotes them) and joined with spaces and split again (as
    pwsh on Linux passes them); one string split as a command line (double quotes group, ``\\"`` is a quote)."""
    named: dict[str, Word] = {}
    positional: list[Word] = []
    i = 0
    while i < len(args):
        text = args[i].text
        name, colon, value = text[1:].partition(":")
        param = _resolve(name.lower(), _START_PARAMS, _START_ALIASES) if text[:1] == "-" and name.isalpha() else None
        if param in ("filepath", "argumentlist"):
            given = word(value, args[i].literal) if colon else args[i + 1] if i + 1 < len(args) else None
            if given is not None:
                named[param] = given
            i += 1 if colon else 2
            continue
        if param is not None or (text[:1] == "-" and name.isalpha()):  # -Wait: none; -Verb RunAs: a value
            i += 1 + (param in _START_VALUES and not colon)
            continue
        positional.append(args[i])
        i += 1
    file = named.get("filepath") or (positional[0] if positional else None)
    listed = named.get("argumentlist")
    if listed is None and len(positional) > 1 and "filepath" not in named:
        listed = positional[1]
    if file is None:
        return []
    head = word(file.text.replace(SEP, ","), file.literal)
    literal = listed.literal if listed else True
    elements = [e for e in listed.text.split(SEP) if e] if listed else []
    lines = [_command_line(" ".join(elements))]
    if len(elements) > 1:
        lines.append(elements)
    return [[head, *(word(p, literal) for p in line)] for line in lines]


def _command_line(text: str) -> list[str]:
    """A command-line string split as .NET and the C runtime split one: blanks separate, double quotes group,
    ``\\"`` is a quote."""
    out: list[str] = []
    piece: list[str] = []
    quoted = started = False
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and text.startswith('"', i + 1):
            piece.append('"')
            started, i = True, i + 2
            continue
        if c == '"':
            quoted, started = not quoted, True
        elif c in " \t" and not quoted:
            if started:
                out.append("".join(piece))
            piece, started = [], False
        else:
            piece.append(c)
            started = True
        i += 1
    if started:
        out.append("".join(piece))
    return out


def _verdict(source: str, argv: list[Word], shown: str, ctx: Ctx) -> str | None:
    reason = ctx.check_argv(argv)
    if reason:
        statement = " ".join(source.split())[:60]
        return f"`{shown[:80]}` runs the PowerShell command `{statement}`, which hookgate checks as a command: {reason}"
    return None


def _removal(args: list[Word], piped: bool) -> list[Word] | None:
    """``Remove-Item ARGS`` as an ``rm`` command line (None: it deletes nothing, ``-WhatIf`` or ``-WhatIf:$true``).
    Parameters are matched as PowerShell does (a name's unique prefix, or an alias); the value of ``-Filter``,
    ``-ErrorAction`` and the other value parameters is not a path."""
    recursive, paths, i = False, [], 0
    while i < len(args):
        w = args[i]
        text = w.text
        if text.startswith("-") and len(text) > 1:
            name, colon, value = text[1:].partition(":")
            param = _resolve(name.lower(), _REMOVE_PARAMS, _REMOVE_ALIASES)
            if param == "recurse" or (param is None and re.fullmatch(r"[rRfvdiI]*[rR][rRfvdiI]*", name)):  # -rf
                recursive = recursive or not (colon and value.lower() == "$false")
            elif param == "whatif":
                if not colon or value.lower() == "$true":  # -WhatIf:0, -WhatIf:$null... delete
                    return None
            elif param in ("path", "literalpath"):
                if colon:
                    paths += _paths(word(value, w.literal))
                elif i + 1 < len(args):
                    i += 1
                    paths += _paths(args[i])
            elif param in _VALUE_PARAMS:
                i += 0 if colon else 1
        else:
            paths += _paths(w)
        i += 1
    if piped and not paths:  # Get-ChildItem ~ | Remove-Item -Recurse: the paths come from the pipeline
        paths.append(word("$input", False))
    return [Word("rm"), *([Word("-rf")] if recursive else []), *paths]


def _listed_tree(words: list[Word]) -> list[Word] | None:
    """The folders a recursive listing (``Get-ChildItem ~ -Recurse``, ``gci -r``, ``-Depth N``) walks (``.``
    when none is named), or None when ``words`` is not one."""
    if not words or words[0].text.lower() not in _LIST:
        return None
    recursive, roots, i = False, [], 1
    while i < len(words):
        w = words[i]
        name, colon, value = w.text[1:].partition(":")
        key = name.lower() if w.text[:1] == "-" and len(w.text) > 1 else ""
        if key and "recurse".startswith(key):
            recursive = recursive or not (colon and value.lower() == "$false")
        elif key and len(key) >= 2 and "depth".startswith(key):
            recursive, i = True, i + (not colon)
        elif key in ("pspath", "lp") or (len(key) >= 2 and ("path".startswith(key) or "literalpath".startswith(key))):
            given = word(value, w.literal) if colon else words[i + 1] if i + 1 < len(words) else None
            roots += _paths(given) if given is not None else []
            i += not colon
        elif key:
            i += _resolve(key, _LIST_PARAMS, _COMMON_ALIASES) in _LIST_VALUES and not colon
        elif not roots:
            roots += _paths(w)
        i += 1
    return (roots or [word(".", True)]) if recursive else None


def _resolve(key: str, names: tuple[str, ...], aliases: dict[str, str]) -> str | None:
    """The parameter ``-KEY`` names: an alias, a whole name, or the one name it is a prefix of (None: no
    parameter, or several: PowerShell refuses an ambiguous abbreviation)."""
    if key in aliases:
        return aliases[key]
    found = [n for n in names if n.startswith(key)]
    return key if key in found else found[0] if len(found) == 1 else None


def _paths(w: Word) -> list[Word]:
    """The paths of one argument (``a,b`` is two, and so is ``'a,b'``, to be safe), as ``rm`` reads them."""
    return [word(path(p.strip()), w.literal) for p in w.text.replace(SEP, ",").split(",") if p.strip()]


def _elements(words: list[Word]) -> list[Word]:
    """``words`` with each array (``a,b``) as its elements: how PowerShell passes them to a native command."""
    if not any(SEP in w.text for w in words):
        return words
    return [word(p, w.literal) for w in words for p in (w.text.split(SEP) if SEP in w.text else [w.text]) if p]
