"""PowerShell statements that write files, as the shell command lines that write the same files.

So the rules for ``tee``, ``cp``, ``mv`` and ``ln`` (writes to secrets files and to the agent's own hook
configuration, ``writes``/``selfguard``) judge them too:

- ``Set-Content``/``sc``, ``Add-Content``/``ac``, ``Clear-Content``/``clc``, ``Out-File``, ``Tee-Object``/
  ``tee`` and ``New-Item``/``ni`` (a file; ``-ItemType SymbolicLink``/``HardLink``/``Junction`` with
  ``-Target``/``-Value``: ``ln -s TARGET PATH``) write their path: ``tee PATH``;
- ``Copy-Item``/``copy``/``cp``/``cpi``: ``cp [-r] PATH DESTINATION``; ``Move-Item``/``move``/``mv``/``mi``:
  ``mv PATH DESTINATION``; ``Rename-Item``/``ren``/``rni``: ``mv PATH NEWNAME`` (the new name in the same
  folder);
- a redirection (``> FILE``, ``>> FILE``, ``2> FILE``, ``*> FILE``): ``tee FILE``;
- ``[IO.File]::WriteAllText(PATH, ...)`` (``WriteAllLines``, ``WriteAllBytes``, ``AppendAllText``,
  ``AppendAllLines``, ``Create``, ``Copy``/``Move`` to their second path): ``tee PATH``.

Parameters are matched as PowerShell does (a unique prefix or an alias, ``-Path:VALUE``); each cmdlet's
positional parameters are taken in its order (``Set-Content PATH VALUE``: the value is not a path); a
parameter this module does not know is taken to have a value (which is then not read as a path)."""

from __future__ import annotations

import re

from .lexer import Word
from .psreader import SEP, net_path, path, word

# cmdlet -> (its names, positional parameters in order, parameters that are switches)
_WRITE_SWITCHES = frozenset({"force", "nonewline", "passthru", "asbytestream"})
_CMDLETS: dict[str, tuple[frozenset[str], tuple[str, ...], frozenset[str]]] = {
    "set-content": (frozenset({"set-content", "sc"}), ("path", "value"), _WRITE_SWITCHES),
    "add-content": (frozenset({"add-content", "ac"}), ("path", "value"), _WRITE_SWITCHES),
    "clear-content": (frozenset({"clear-content", "clc"}), ("path",), frozenset({"force"})),
    "out-file": (
        frozenset({"out-file"}),
        ("filepath", "encoding"),
        frozenset({"append", "force", "noclobber", "nonewline"}),
    ),
    "tee-object": (frozenset({"tee-object", "tee"}), ("filepath",), frozenset({"append"})),
    "new-item": (frozenset({"new-item", "ni"}), ("path",), frozenset({"force"})),
    "copy-item": (
        frozenset({"copy-item", "copy", "cp", "cpi"}),
        ("path", "destination"),
        frozenset({"recurse", "force", "container", "passthru"}),
    ),
    "move-item": (
        frozenset({"move-item", "move", "mv", "mi"}),
        ("path", "destination"),
        frozenset({"force", "passthru"}),
    ),
    "rename-item": (frozenset({"rename-item", "ren", "rni"}), ("path", "newname"), frozenset({"force", "passthru"})),
}
_BY_NAME = {alias: cmdlet for cmdlet, (names, _, _) in _CMDLETS.items() for alias in names}
_BY_NAME |= {f"microsoft.powershell.management\\{c}": c for c in _CMDLETS if c != "out-file" and c != "tee-object"}
_BY_NAME |= {f"microsoft.powershell.utility\\{c}": c for c in ("out-file", "tee-object")}
_ALIASES = {"pspath": "literalpath", "lp": "literalpath", "path": "path", "fullname": "literalpath"}
_COMMON_SWITCHES = frozenset({"whatif", "confirm", "verbose", "debug", "wi", "cf", "vb", "db"})
_NET_WRITE = (
    r"\[(?:System\.)?(?:IO\.)?File\]::(WriteAllText|WriteAllLines|WriteAllBytes|AppendAllText|AppendAllLines"
    r"|AppendText|CreateText|Create|OpenWrite|Copy|Move|Replace)\(\s*"
    r"('[^']*'|\"[^\"]*\"|\$\{?[\w:]+\}?)\s*(?:,\s*('[^']*'|\"[^\"]*\"|\$\{?[\w:]+\}?))?"
)
_REDIRECT = re.compile(r"(?:[1-6*])?>>?(.*)", re.DOTALL)


def _param(key: str, cmdlet: str) -> str:
    """The parameter ``-KEY`` names for ``cmdlet``: an alias, a whole name or the one it is a prefix of
    (else ``key`` itself: a parameter this module does not know)."""
    if key in _ALIASES:
        return _ALIASES[key]
    _, positional, switches = _CMDLETS[cmdlet]
    names = {*positional, *switches, "literalpath", "itemtype", "value", "destination", "target", "name"}
    found = [n for n in names if n.startswith(key)]
    return key if key in found or len(found) != 1 else found[0]


def _parameters(cmdlet: str, args: list[Word]) -> tuple[dict[str, list[Word]], bool]:
    """``{parameter: values}`` of one call (positional ones by the cmdlet's order), and whether ``-WhatIf``
    makes it write nothing."""
    _, positional, switches = _CMDLETS[cmdlet]
    given: dict[str, list[Word]] = {}
    free = list(positional)
    i = 0
    while i < len(args):
        w = args[i]
        if w.text.startswith("-") and len(w.text) > 1 and not w.text[1].isdigit():
            name, colon, value = w.text[1:].partition(":")
            key = _param(name.lower(), cmdlet)
            if key in ("whatif", "wi") and (not colon or value.lower() == "$true"):
                return {}, True
            if key in switches or key in _COMMON_SWITCHES:
                i += 1
                continue
            if colon:
                given.setdefault(key, []).append(word(value, w.literal))
            elif i + 1 < len(args):
                given.setdefault(key, []).append(args[i + 1])
                i += 1
            if key in free:
                free.remove(key)
        elif free:
            given.setdefault(free.pop(0), []).append(w)
        i += 1
    return given, False


def _split(words: list[Word]) -> list[Word]:
    """Each path of ``words`` (``a,b`` arrays as their elements), Windows paths as ``/`` paths."""
    out = []
    for w in words:
        for part in w.text.replace(SEP, ",").split(","):
            if part.strip():
                out.append(word(path(part.strip()), w.literal))
    return out


def written(words: list[Word]) -> list[list[Word]]:
    """The shell command lines that write what the PowerShell statement ``words`` writes (see the module
    docstring); ``[]`` when it writes no file this module knows of."""
    found: list[list[Word]] = []
    for i, w in enumerate(words[1:], 1):  # redirections, on any statement
        m = _REDIRECT.fullmatch(w.text)
        if m and w.text[:1] in "123456*>":
            target = m.group(1) or (words[i + 1].text if i + 1 < len(words) else "")
            if target and not target.startswith("&"):  # 2>&1 writes no file
                found.append([Word("tee"), *_split([word(target, w.literal)])])
    cmdlet = _BY_NAME.get(words[0].text.lower()) if words else None
    if cmdlet is None:
        return found
    args = [w for w in words[1:] if not _REDIRECT.fullmatch(w.text) or w.text[:1] not in "123456*>"]
    given, harmless = _parameters(cmdlet, args)
    if harmless:
        return found
    paths = _split(given.get("path", []) + given.get("literalpath", []) + given.get("filepath", []))
    if cmdlet in ("copy-item", "move-item"):
        destination = _split(given.get("destination", []))
        if paths and destination:
            recursive = cmdlet == "copy-item" and "recurse" in {a.text[1:].lower() for a in args if a.text[:1] == "-"}
            verb = [Word("cp"), *([Word("-r")] if recursive else [])] if cmdlet == "copy-item" else [Word("mv")]
            found.append([*verb, *paths, destination[0]])
        elif paths and cmdlet == "move-item":  # no destination: the current folder; the source is moved away
            found.append([Word("mv"), *paths, Word(".")])
        return found
    if cmdlet == "rename-item":
        new = _split(given.get("newname", []))
        for path in paths:
            folder = path.text.rpartition("/")[0]
            name = new[0].text if new else "renamed"
            found.append([Word("mv"), path, word(f"{folder}/{name}" if folder else name, path.literal)])
        return found
    if cmdlet == "new-item":
        names = _split(given.get("name", []))
        if names:  # New-Item -Path DIR -Name FILE
            base = paths[0].text.rstrip("/") + "/" if paths else ""
            paths = [word(base + n.text, n.literal) for n in names]
        kind = (given.get("itemtype") or [Word("file")])[0].text.lower()
        if kind in ("symboliclink", "hardlink", "junction"):
            target = _split(given.get("target", []) + given.get("value", []))
            if target:
                return found + [[Word("ln"), Word("-s"), target[0], path] for path in paths]
        if kind in ("directory", "d"):
            return found + [[Word("mkdir"), Word("-p"), path] for path in paths]
    found.extend([Word("tee"), path] for path in paths)
    return found


def net_written(script: str) -> list[list[Word]]:
    """``[IO.File]::WriteAllText(PATH, ...)`` and its kin in ``script`` as ``tee PATH`` (``Copy``, ``Move``
    and ``Replace``: their second path; ``Move`` also takes the first away: ``mv``)."""
    found = []
    for m in re.finditer(_NET_WRITE, script, re.IGNORECASE):
        method = m.group(1).lower()
        first = net_path(m.group(2))
        second = net_path(m.group(3)) if m.group(3) else None
        if method in ("copy", "move", "replace"):
            if second is not None:
                found.append([Word("mv" if method == "move" else "cp"), first, second])
        else:
            found.append([Word("tee"), first])
    return found
