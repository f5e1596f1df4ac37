"""Commands that other programs run from their options or scripts (the shell text each one runs, for
``ctx.check_text``): ``tar --to-command=CMD``, ``--checkpoint-action=exec=CMD``, ``-I CMD`` (``--use-compress-
program``), ``--rsh-command``; ``rsync -e CMD`` (``--rsh``); ``ssh``/``scp``/``sftp -o ProxyCommand=CMD``
(``LocalCommand``, ``KnownHostsCommand``, ``-oProxyCommand CMD``); ``sqlite3``'s ``.shell CMD``/``.system CMD`` (or
a prefix, ``.sh``) and ``.once '|CMD'`` (``.output``, ``.import``, ``.read``); GNU ``sed``'s ``e CMD`` command and
``s///e``; and the strings an awk program pipes into a command or reads one from (``print "…" | "sh"``, ``"…" |
getline``). Standard library only."""

from __future__ import annotations

import re

from .getopt import getopt

# GNU tar's long options that run a command: (the prefix its value starts with, the shortest unique
# abbreviation tar accepts: --to-c, --checkpoint-a, --use, --rs)
_TAR_LONG = {
    "--to-command": ("", 6),
    "--checkpoint-action": ("exec=", 13),
    "--use-compress-program": ("", 5),
    "--rsh-command": ("", 4),
}
_SSH_OPTIONS = ("proxycommand", "localcommand", "knownhostscommand")
# sqlite3 takes any prefix of a dot-command's name (.sh, .sy); .once/.output/.import/.read '|CMD' run CMD
_SQLITE_SHELL = r"(?m)^\s*\.(?:sh(?:e|el|ell)?|sy(?:s|st|ste|stem)?)\s+(.+)$"  # compiled on first use (re's cache)
_SQLITE_PIPE = r"(?m)^\s*\.(?:on|onc|once|ou|out|outp|outpu|output|im|imp|impo|impor|import|re|rea|read)\s+(.+)$"
# GNU sed's `e COMMAND` (an address or a separator before it); the command runs to the end of the line
_SED_EXEC = r"(?m)(?:^|[;{}\s\d$/!])e[ \t]+(.+)$"
_SED_BEFORE = frozenset(";{}!$/ \t\n0123456789")  # what may stand before an `s` command
_SED_BARE_E = r"(?:^|[;{}\s\d$/!])e\s*(?:$|[;}\n])"  # an `e` command without an argument: runs the pattern space
_AWK_STRING = r'"((?:[^"\\\n]|\\.)*)"'
_AWK_PIPE = r"(?<!\|)\|&?(?!\|)"


def option_runs(name: str, args: list[str]) -> list[str]:
    """The shell texts ``name ARGS`` runs through its options (see the module docstring)."""
    if name in ("tar", "gtar", "bsdtar"):
        return _tar(args)
    if name == "rsync":
        return [v for o, v in getopt(args, "eTfBM", frozenset({"--rsh", "--temp-dir"}))[1] if o in ("-e", "--rsh")]
    if name in ("ssh", "scp", "sftp"):
        program = [v for o, v in getopt(args, "cFiloPSJXDBRs")[1] if o == "-S"] if name != "ssh" else []
        return _ssh(args) + program  # scp -S PROGRAM: run in place of ssh
    if name == "sqlite3":
        return sqlite_runs(args)
    if name in ("sed", "gsed"):
        operands, opts, _ = getopt(args, "efl", frozenset({"--expression", "--file", "--line-length"}))
        scripts = [v for o, v in opts if o in ("-e", "--expression")]
        if not scripts and not any(o in ("-f", "--file") for o, _ in opts):
            scripts = operands[:1]
        return [m.group(1) for s in scripts for m in re.finditer(_SED_EXEC, s)] + _sed_substituted("\n".join(scripts))
    return []


def sqlite_runs(texts: list[str]) -> list[str]:
    """The shell commands sqlite3 dot-commands in ``texts`` (arguments, ``-cmd`` values, its stdin) run."""
    import shlex

    out = [m.group(1) for a in texts for m in re.finditer(_SQLITE_SHELL, a)]
    for m in (m for a in texts for m in re.finditer(_SQLITE_PIPE, a)):
        try:
            words = shlex.split(m.group(1))
        except ValueError:
            words = m.group(1).split()
        out += [w[1:] for w in words if w.startswith("|") and w[1:].strip()]  # .once '|rm -rf ~'
    return out


def _sed_substituted(script: str) -> list[str]:
    """The replacements of a sed script's ``s`` commands that run as commands: with the ``e`` flag
    (``s/x/rm -rf ~/e``), or all of them when the script has a bare ``e`` command (``s/.*/rm -rf ~/;e``)."""
    if "s" not in script or "e" not in script:
        return []
    bare = re.search(_SED_BARE_E, script) is not None
    out: list[str] = []
    i = 0
    while i < len(script) - 1 and len(out) < 100:
        if script[i] != "s" or (i and script[i - 1] not in _SED_BEFORE) or script[i + 1] in "\n\\":
            i += 1
            continue
        delim, j = script[i + 1], i + 2
        parts: list[str] = []
        buf: list[str] = []
        while j < len(script) and len(parts) < 2:
            c = script[j]
            if c == "\\" and j + 1 < len(script):
                buf.append(script[j + 1] if script[j + 1] == delim else c + script[j + 1])
                j += 2
                continue
            if c == delim:
                parts.append("".join(buf))
                buf = []
            else:
                buf.append(c)
            j += 1
        if len(parts) < 2:
            break
        flags = re.match(r"[gpeiImM0-9]*", script[j:])
        if bare or (flags is not None and "e" in flags.group(0)):
            out.append(parts[1])
        i = j
    return [text for text in out if text.strip()]


def _tar(args: list[str]) -> list[str]:
    out = []
    for k, a in enumerate(args):
        key, eq, value = a.partition("=")
        full = next((f for f, (_, n) in _TAR_LONG.items() if len(key) >= n and f.startswith(key)), None)
        if full is not None:
            if not eq:
                value = args[k + 1] if k + 1 < len(args) else ""
            prefix = _TAR_LONG[full][0]
            if value.startswith(prefix):
                out.append(value[len(prefix) :])
        elif a.startswith("-") and not a.startswith("--") and "I" in a:  # -I CMD, -cI CMD, -ICMD
            rest = a[a.index("I") + 1 :]
            out.append(rest or (args[k + 1] if k + 1 < len(args) else ""))
    return [text for text in out if text]


def _ssh(args: list[str]) -> list[str]:
    out = []
    for k, a in enumerate(args):
        value = None
        if a == "-o" and k + 1 < len(args):
            value = args[k + 1]
        elif a.startswith("-o") and len(a) > 2:
            value = a[2:]
        if value is None:
            continue
        parts = re.split(r"\s*=\s*|\s+", value.strip(), maxsplit=1)
        key = parts[0].lower()
        command = parts[1] if len(parts) > 1 else ""
        if key in _SSH_OPTIONS and command and command.lower() != "none":
            out.append(command)
    return out


def awk_piped(program: str) -> list[str]:
    """The string literals of an awk program that pipes into or from a command (``print … | "cmd"``,
    ``"cmd" | getline``): each may be a command line or what a shell reads (``print "rm -rf ~" | "sh"``)."""
    if not re.search(_AWK_PIPE, program):
        return []
    return [m.group(1).replace('\\"', '"') for m in re.finditer(_AWK_STRING, program)]
