"""What an ``expect -c`` script runs, for ``expand.unwrap``: the commands of its ``spawn``/``exec`` lines and the
text its ``send`` lines type (``expect_runs``), and the script itself as a Tcl program for tclsh's checks
(``as_tclsh``)."""

from __future__ import annotations

import re

# compiled on first use; `eval spawn {…}` too
_EXPECT_SPAWN = (
    r"(?:^|[;\n\[{])[ \t]*(?:eval[ \t]+)*(?:exp_)?(?:spawn|exec|system)[ \t]+((?:-[-\w]*[ \t]+)*)([^;\n\]}]*)"
)


def as_tclsh(tcl: str) -> str:
    """A shell program that gives ``tclsh`` the Tcl program ``tcl`` on stdin (a quoted heredoc: no expansion),
    so an ``expect -c`` script gets the Tcl checks (``exec``, ``open "|..."``, ``file delete``) that
    ``tclsh`` gets."""
    mark = "HOOKGATE_TCL"
    while mark in tcl:
        mark += "_"
    return f"tclsh <<'{mark}'\n{tcl}\n{mark}\n"


def expect_runs(tcl: str) -> list[str]:
    """The commands an expect script's ``spawn``/``exec`` lines run (Tcl braces read as quotes), and the text
    its ``send`` lines type into what it spawned."""
    out = []
    for m in re.finditer(_EXPECT_SPAWN, tcl):
        out.append(m.group(2).replace("{", "'").replace("}", "'"))
    for m in re.finditer(r"(?:^|[;\n\[{])[ \t]*(?:exp_)?send[ \t]+(?:-[-\w]*[ \t]+)*\"((?:[^\"\\]|\\.)*)\"", tcl):
        out.append(re.sub(r"\\[rn]", "\n", m.group(1)).replace('\\"', '"'))
    return out
