"""Which PowerShell scripts only read: Claude Code's ``PowerShell`` tool, for the ``readOnly`` built-in.

``powershell_write_reason(script, read_commands=()) -> str | None`` names why a script may write or run a
program (None: it only reads). The script is read with the default shell guard's PowerShell reader
(``configs.guards.destructive.psreader``: statements, pipes, quotes, ``( )``/``$( )``/``{ }`` groups) and
reads only when it can be shown to: every statement, also inside every group and script block, is

- a known read-only cmdlet or alias (``READ_CMDLETS``: ``Get-ChildItem``/``ls``/``dir``, ``Get-Content``/
  ``cat``, ``Select-String``, ``Get-Item``, ``Test-Path``, ``Get-Location``, ``Measure-Object``, ``Format-*``,
  ``Where-Object``, ``Select-Object``, ``Sort-Object``...; a name that is also a native command on Linux,
  where pwsh runs the program, ``ls``, ``cat``, ``sort``, must also pass the Bash rules);
- or a native command whose words are all literal and that the Bash rules count as read-only (``git status``,
  ``rg TODO``: ``shell_writes.argv_reason``);
- or an expression of variables, properties, numbers and comparison operators only (``$_.Length -gt 1kb``
  in a ``Where-Object`` block): no method call, no assignment;

and nothing is redirected to a file (``>``, ``>>``, ``2>``, ``*>`` other than ``>$null`` and ``2>&1``).
Anything else (an unknown cmdlet, ``&``/``.``, ``Invoke-Expression``, ``ForEach-Object``, ``Out-File``,
``Set-Content``, ``[IO.File]::...``, ``$env:X = ...``, a script the reader refuses) counts as a write.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from handlers.builtin.shell_writes import READ_COMMANDS, argv_reason

if TYPE_CHECKING:
    from configs.guards.destructive.lexer import Word

READ_CMDLETS = frozenset(
    {
        *("get-childitem", "gci", "ls", "dir", "get-content", "gc", "cat", "type", "select-string", "sls"),
        *("get-item", "gi", "get-itemproperty", "gp", "get-itempropertyvalue", "gpv", "test-path", "resolve-path"),
        *("rvpa", "split-path", "join-path", "get-location", "gl", "pwd", "set-location", "sl", "cd", "chdir"),
        *("push-location", "pushd", "pop-location", "popd", "measure-object", "measure", "format-table", "ft"),
        *("format-list", "fl", "format-wide", "fw", "format-custom", "fc", "format-hex", "fhx", "where-object"),
        *("where", "?", "select-object", "select", "sort-object", "sort", "group-object", "group"),
        *("compare-object", "compare", "diff", "get-unique", "gu", "get-member", "gm", "get-date", "get-process"),
        *("gps", "ps", "get-service", "gsv", "get-alias", "gal", "get-variable", "gv", "get-command", "gcm"),
        *("get-psdrive", "gdr", "get-filehash", "get-host", "get-culture", "get-uiculture", "get-uptime"),
        *("write-output", "echo", "write", "write-host", "write-verbose", "write-debug", "write-information"),
        *("out-string", "out-null", "out-host", "oh", "convertto-json", "convertfrom-json", "convertto-csv"),
        *("convertfrom-csv", "convertto-html", "convertto-xml", "convertfrom-stringdata", "select-xml", "test-json"),
        *("import-csv", "ipcsv", "get-history", "h", "history", "ghy", "get-random", "get-error", "start-sleep"),
        *("sleep", "get-pscallstack", "get-timezone", "get-computerinfo", "get-hotfix", "get-wmiobject"),
    }
)
"""Cmdlets and aliases that change nothing (lowercase). ``Get-Help`` is not one (``-Online`` starts a
browser), nor ``ForEach-Object`` (``% Delete`` calls each item's method)."""
_BOTH = frozenset({"ls", "cat", "sort", "ps", "diff", "echo", "pwd", "cd", "type", "sleep"})
"""Aliases that pwsh on Linux and macOS leaves to the native program of that name."""
_MODULES = ("microsoft.powershell.management\\", "microsoft.powershell.utility\\", "microsoft.powershell.core\\")
_OPERATOR = r"-[ci]?(?:eq|ne|gt|ge|lt|le|like|notlike|match|notmatch|contains|notcontains|in|notin|is|isnot)"
_EXPRESSION = (
    rf"(?i)\$[\w:?]+(?:\.\w+)*|{_OPERATOR}|-(?:and|or|xor|not)|\d+(?:\.\d+)?(?:kb|mb|gb|tb|pb)?|\$true|\$false|\$null"
)
_QUIET = r"[1-6*]?>(?:&[12]|>?\$null)"  # 2>&1, >$null, 2>>$null
MAX_DEPTH = 20


def powershell_write_reason(script: str, read_commands: Iterable[str] = ()) -> str | None:
    """Why the PowerShell ``script`` may write or run a program, or None when it only reads."""
    if not script.strip():
        return None
    from configs.guards.destructive.lexer import Unanalysable

    allowed = tuple(read_commands)
    try:
        return _script(script, allowed, 0)
    except Unanalysable as exc:
        return f"PowerShell script {exc}, so it may write"
    except Exception as exc:  # the reader on odd input: fail closed
        return f"PowerShell script cannot be analysed ({type(exc).__name__}), so it may write"


def _script(script: str, allowed: tuple[str, ...], depth: int) -> str | None:
    from configs.guards.destructive.psreader import read_statements

    if depth > MAX_DEPTH:
        return "PowerShell script nests groups too deep to check, so it may write"
    statements, groups = read_statements(script)
    for words, _piped, source in statements:
        why = _statement(words, allowed)
        if why is not None:
            return f"PowerShell `{' '.join(source.split())[:60]}`: {why}"
    for group in groups:  # ( ), $( ), { }: their statements run too
        why = _script(group, allowed, depth + 1)
        if why is not None:
            return why
    return None


def _group(w: Word) -> bool:
    """Whether ``w`` is one whole group (``(…)``, ``$(…)``, ``@(…)``, ``{…}``; not ``(…).Delete()``), whose
    inside is checked apart."""
    from configs.guards.destructive.psreader import closing

    text = w.text
    at = 1 if text[:2] in ("$(", "@(", "@{") else 0
    return not w.literal and text[at : at + 1] in ("(", "{") and closing(text, at) == len(text) - 1


def _statement(words: list[Word], allowed: tuple[str, ...]) -> str | None:
    import re

    texts = [w.text for w in words]
    redirected = _redirection(words)
    if redirected is not None:
        return redirected
    head = texts[0].lower()
    if head.startswith(_MODULES):
        head = head.split("\\", 1)[1]
    if head.startswith("$") or re.fullmatch(r"\d+(?:\.\d+)?", head):  # an expression
        for w in words:
            if not _group(w) and not re.fullmatch(_EXPRESSION, w.text):
                return f"{w.text[:30]!r} in an expression may call a method or assign, so it may write"
        return None
    if any("(" in w.text and not _group(w) for w in words):  # a method call: .Delete(), [IO.File]::Write(...)
        return "a method call may write"
    if head in READ_CMDLETS:
        if head in _BOTH and all(w.literal for w in words):  # pwsh on Linux runs the native program
            return argv_reason(texts, allowed)
        return None
    if texts[0] in READ_COMMANDS or texts[0] in allowed:  # a native command: git status, rg TODO
        if all(w.literal for w in words):
            return argv_reason(texts, allowed)
        return f"{texts[0][:30]!r} is given arguments known only at run time, so it may write"
    return f"{texts[0][:30]!r} is not a read-only cmdlet or command hookgate knows, so it may write"


def _redirection(words: list[Word]) -> str | None:
    """Why a statement's redirection writes a file (``> out.txt``, ``2>log``), or None."""
    import re

    for k, w in enumerate(words):
        if _group(w) or (">" not in w.text and "<" not in w.text):
            continue
        if re.fullmatch(_QUIET, w.text):
            continue
        nxt = words[k + 1].text.lower() if k + 1 < len(words) else ""
        if re.fullmatch(r"[1-6*]?>>?", w.text) and nxt == "$null":
            continue
        return f"{w.text[:30]!r} redirects output to a file"
    return None
