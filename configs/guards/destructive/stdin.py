"""``stdin_source``: what a command's stdin is, as a command whose output it reads, for a shell program the
command runs (``curl x | sh -c 'sh'``, ``su -c sh <<< 'rm -rf ~'``, a function body): its commands read it too."""

from __future__ import annotations

from .expand import Cmd, commands
from .lexer import Word

_NOTHING = frozenset({"/dev/null", "/dev/zero"})


def stdin_source(cmd: Cmd | None) -> Cmd | None:
    """The command whose output ``cmd`` reads: the one piped in, the producer of ``< <(...)``, or ``cat`` with
    ``cmd``'s heredoc, here-string or input file; None when it reads nothing known."""
    if cmd is None:
        return None
    for r in reversed(cmd.redirs):
        if r.op not in ("<<", "<<-", "<<<", "<", "<>") or r.target is None:
            continue
        if r.target.procsub is not None:  # < <(curl ...)
            producers = commands(r.target.procsub)
            return producers[-1] if producers else None
        if r.op in ("<", "<>") and r.target.text in _NOTHING:
            return None
        fake = Cmd(None)
        fake.words, fake.redirs = [Word("cat")], [r]
        return fake
    return cmd.pipe_in
