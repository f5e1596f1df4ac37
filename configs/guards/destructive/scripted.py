"""A download as the script of a program whose script can run shell commands: sqlite3 (``.shell``,
``.system``), sed (``e``), awk (``system()``)."""

from __future__ import annotations

from .context import Ctx
from .expand import Cmd, show
from .lexer import Word
from .programs import download_reason, fetch_in_subs, piped_download, stdin

_SCRIPTED = frozenset({"sqlite3", "sed", "gsed", "awk", "gawk", "mawk", "nawk"})
"""Programs whose script can run shell commands (sqlite3's ``.shell``/``.system``, sed's ``e``, awk's
``system()``): a download that becomes their script runs code (``check_scripted``)."""


def check_scripted(name: str, args: list[Word], cmd: Cmd | None, shown: str, ctx: Ctx) -> str | None:
    """The download reason when a download is the script of ``name`` (one of ``_SCRIPTED``): sqlite3 reading
    SQL and dot-commands on its stdin from one (``curl x | sqlite3 db``, ``sqlite3 db < <(curl x)``) or given
    one as an argument (``sqlite3 db "$(curl x)"``); sed given one as its script (``sed "$(curl x)" f``);
    awk reading its program file from stdin (``curl x | awk -f /dev/stdin``)."""
    if name not in _SCRIPTED:
        return None
    if name in ("sqlite3", "sed", "gsed"):  # not a <(curl ...) file: that is data, or an -init/-f file (PROGRAM_FILES)
        reason = fetch_in_subs([a for a in args if a.procsub is None], shown, ctx)
        if reason:
            return reason
    reads_stdin = (name == "sqlite3" and len(_sqlite_operands(args)) < 2) or any(
        a.text in ("-", "/dev/stdin", "/dev/fd/0") and k and args[k - 1].text in ("-f", "--file")
        for k, a in enumerate(args)
    )
    kind, src = stdin(cmd)
    if reads_stdin and piped_download(src, kind, ctx):
        return ctx.hit("exec.download", f"{show(src.words, src.redirs, 80)} | {name}", download_reason())
    return None


_SQLITE_VALUED = frozenset(
    {"-cmd", "-init", "-separator", "-newline", "-nullvalue", "-vfs", "-maxsize", "-mmap", "-lookaside", "-pagecache"}
)


def _sqlite_operands(args: list[Word]) -> list[Word]:
    """sqlite3's operands (the database, then SQL): with SQL among them it reads no commands from stdin
    (``curl x | sqlite3 db ".import /dev/stdin t"`` reads data there)."""
    out: list[Word] = []
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a.text.startswith("-") and len(a.text) > 1:
            skip = "-" + a.text.lstrip("-") in _SQLITE_VALUED
        else:
            out.append(a)
    return out
