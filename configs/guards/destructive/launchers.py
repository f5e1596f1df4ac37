"""Launchers whose command line is not "options, then the command": ``bwrap`` (options with two or three
values, bind mounts that show a host folder under another name), ``capsh`` (``--`` hands the rest to bash) and
``start-stop-daemon`` (``--exec PROGRAM`` ... ``-- ARGS``, run in ``/`` unless ``--chdir``). ``expand.unwrap``
asks ``launched`` what they run. Imported only when one of them is the command."""

from __future__ import annotations

from .getopt import getopt
from .lexer import Word

_F = frozenset
# bwrap: the options that take values, by count (every other option is a switch); bubblewrap 0.11's usage
_BWRAP_ONE = _F(
    {
        "--args",
        "--argv0",
        "--userns",
        "--userns2",
        "--pidns",
        "--uid",
        "--gid",
        "--hostname",
        "--chdir",
        "--unsetenv",
        "--lock-file",
        "--sync-fd",
        "--remount-ro",
        "--overlay-src",
        "--tmp-overlay",
        "--ro-overlay",
        "--exec-label",
        "--file-label",
        "--proc",
        "--dev",
        "--tmpfs",
        "--mqueue",
        "--dir",
        "--seccomp",
        "--add-seccomp-fd",
        "--block-fd",
        "--userns-block-fd",
        "--info-fd",
        "--json-status-fd",
        "--cap-add",
        "--cap-drop",
        "--perms",
        "--size",
    }
)
_BWRAP_TWO = _F(
    {
        "--setenv",
        "--bind",
        "--bind-try",
        "--dev-bind",
        "--dev-bind-try",
        "--ro-bind",
        "--ro-bind-try",
        "--bind-fd",
        "--ro-bind-fd",
        "--file",
        "--bind-data",
        "--ro-bind-data",
        "--symlink",
        "--chmod",
    }
)
_BWRAP_WRITABLE = _F({"--bind", "--bind-try", "--dev-bind", "--dev-bind-try"})
_SSD_SHORT = "pxnugcsardNPIkOR"
_SSD_LONG = _F(
    {
        "--pid",
        "--ppid",
        "--pidfile",
        "--exec",
        "--name",
        "--user",
        "--group",
        "--chuid",
        "--signal",
        "--startas",
        "--chroot",
        "--chdir",
        "--nicelevel",
        "--procsched",
        "--iosched",
        "--umask",
        "--output",
        "--retry",
        "--notify-timeout",
    }
)


class Launch:
    """What a launcher runs: ``words`` (the command; empty: nothing), ``chdir`` (the directory it runs in, or
    None), ``assigns`` (``VAR=value`` words it sets). A bwrap command and its ``--chdir`` are as the host sees
    them: a bind-mounted path is named by its host folder."""

    __slots__ = ("assigns", "chdir", "words")

    def __init__(self, words: list[Word]) -> None:
        self.words = words
        self.chdir: Word | None = None
        self.assigns: list[Word] = []


def launched(name: str, args: list[Word]) -> Launch:
    """What ``name ARGS`` runs (``name``: ``bwrap``, ``capsh`` or ``start-stop-daemon``)."""
    if name == "bwrap":
        return _bwrap(args)
    if name == "capsh":
        return _capsh(args)
    return _start_stop_daemon(args)


def _word(text: str, literal: bool = True) -> Word:
    w = Word(text)
    w.literal = literal
    return w


def _bwrap(args: list[Word]) -> Launch:
    """``bwrap [OPTION...] [--] COMMAND ARGS``: every option is long and takes 0-3 separate values; the first
    other word is the command. ``--chdir DIR`` is where it runs, ``--setenv VAR VALUE`` an assignment, and a
    writable ``--bind SRC DEST`` shows host folder SRC as DEST: the command and DIR are read with SRC for DEST
    (``--bind ~ /x rm -rf /x`` deletes ``~``; ``--bind . /src --chdir /src rm -rf build`` deletes ``./build``)."""
    i, chdir, assigns, binds = 0, None, [], []
    while i < len(args):
        text = args[i].text
        if text == "--":
            i += 1
            break
        if not text.startswith("-"):
            break
        count = 1 if text in _BWRAP_ONE else 2 if text in _BWRAP_TWO else 3 if text == "--overlay" else 0
        values = args[i + 1 : i + 1 + count]
        if text == "--chdir" and values:
            chdir = values[0]
        elif text == "--setenv" and len(values) == 2:
            assigns.append(_word(f"{values[0].text}={values[1].text}", values[0].literal and values[1].literal))
        elif text in _BWRAP_WRITABLE and len(values) == 2 and values[0].text != values[1].text:
            binds.append((values[0], values[1].text.rstrip("/") or "/"))
        i += 1 + count
    launch = Launch(args[i:])
    if binds and launch.words:  # the host's view: a path under a bind's DEST is its SRC (--bind ~ /x rm -rf /x)
        launch.words = [_host_path(w, binds) for w in launch.words]
        chdir = _host_path(chdir, binds) if chdir is not None else None  # --bind . /src --chdir /src: runs in .
    launch.chdir, launch.assigns = chdir, assigns
    return launch


def _host_path(word: Word, binds: list[tuple[Word, str]]) -> Word:
    """``word`` with a bind mount's DEST prefix replaced by its host SRC (the longest DEST that matches)."""
    text = word.text
    best: tuple[Word, str] | None = None
    for src, dest in binds:
        holds = text == dest or text.startswith(dest.rstrip("/") + "/")
        if holds and (best is None or len(dest) > len(best[1])):
            best = src, dest
    if best is None or not word.literal:
        return word
    src, dest = best
    rest = (text[len(dest) :] if dest != "/" else text).strip("/")
    return _word(f"{src.text.rstrip('/')}/{rest}" if rest else src.text, src.literal)


def _capsh(args: list[Word]) -> Launch:
    """``capsh [OPTION...] -- ARGS`` (or ``-+``) runs ``/bin/bash ARGS`` (the ``--shell=`` program instead);
    ``==``/``=+`` run capsh again with the rest; without them capsh runs nothing."""
    shell = "/bin/bash"
    for k, w in enumerate(args):
        if w.text.startswith("--shell="):
            shell = w.text[len("--shell=") :]
        elif w.text in ("--", "-+"):
            return Launch([_word(shell, w.literal), *args[k + 1 :]])
        elif w.text in ("==", "=+"):
            return Launch([_word("capsh"), *args[k + 1 :]])
    return Launch([])


def _start_stop_daemon(args: list[Word]) -> Launch:
    """``start-stop-daemon --start --exec PROGRAM [--startas PATH] ... -- ARGS`` runs PATH (else PROGRAM) with
    ARGS, in ``--chdir DIR`` (default ``/``); ``--stop``, ``--status`` and ``--test`` run nothing."""
    texts = [w.text for w in args]
    _, opts, _ = getopt(texts, _SSD_SHORT, _SSD_LONG)
    found = {o for o, _ in opts}
    if not found & {"-S", "--start"} or found & {"-t", "--test"}:
        return Launch([])
    program = next((v for o, v in reversed(opts) if o in ("-a", "--startas")), None)
    program = program or next((v for o, v in reversed(opts) if o in ("-x", "--exec")), None)
    if not program:
        return Launch([])
    rest = args[texts.index("--") + 1 :] if "--" in texts else []
    launch = Launch([_word(program, "$" not in program and "`" not in program), *rest])
    chdir = next((v for o, v in reversed(opts) if o in ("-d", "--chdir")), "/")
    launch.chdir = _word(chdir, "$" not in chdir and "`" not in chdir)
    return launch
