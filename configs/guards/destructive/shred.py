"""``shred``: it overwrites its targets (a write: disk devices and secrets files are denied by the write
rules) and with ``-u`` deletes them; outside the project, a temp root and ``allowPaths`` (or on a path
known only at run time) that is lost for good (``shred.outside``). Its own module: it needs both the
delete areas (``delete``) and the write rules (``writes``), which import each other's modules otherwise."""

from __future__ import annotations

from .context import POLICY, Ctx
from .delete import allowed_area, holds, resolve
from .lexer import Word
from .writes import write_reason

_SHRED_VALUES = frozenset({"--iterations", "--size", "--random-source"})


def check_shred(args: list[Word], shown: str, ctx: Ctx) -> str | None:
    """``shred FILE...`` overwrites each file for good (``-u``/``--remove``: and deletes it): a write to each
    (a disk device, a secrets file, hook configuration), and one outside the project, the temp roots and
    ``allowPaths`` (or known only at run time) is denied like a recursive delete there (``shred.outside``)."""
    targets, options, k = [], True, 0
    while k < len(args):
        w, text = args[k], args[k].text
        if options and text == "--":
            options = False
        elif options and text.startswith("--"):
            if text in ("--help", "--version"):
                return None
            k += text in _SHRED_VALUES  # --size 1M (``--size=1M`` is one word)
        elif options and text.startswith("-") and len(text) > 1:
            letters = text[1:]
            at = next((i for i, c in enumerate(letters) if c in "ns"), -1)  # -n 3, -s 1M (or attached: -n3)
            k += at == len(letters) - 1
        else:
            targets.append(w)
        k += 1
    removes = any(w.text == "--remove" or w.text.startswith("--remove=") or _short(w.text, "u") for w in args)
    ctx.state.part = shown
    for word in targets:
        reason = write_reason(word.text, shown, ctx)
        if reason:
            return reason
        if _shred_allowed(word, ctx):
            continue
        path = resolve(word, ctx)
        where = (
            f"{path}, which is outside the project, a temp directory and allowPaths"
            if path
            else f"{word.text[:60]}, a path known only at run time that may lie outside the project"
        )
        what = "overwrites and deletes" if removes else "overwrites"
        return ctx.hit(
            "shred.outside",
            shown,
            f"`{shown}` {what} {where}; nothing can bring its content back, so {POLICY} blocks it. Shred files "
            "inside the project, or ask the user.",
        )
    return None


def _short(text: str, letter: str) -> bool:
    """Whether ``text`` is a short-option cluster holding ``letter`` before any option value (``-vzu``)."""
    if not text.startswith("-") or text.startswith("--"):
        return False
    for c in text[1:]:
        if c == letter:
            return True
        if c in "ns":
            return False
    return False


def _shred_allowed(word: Word, ctx: Ctx) -> bool:
    """A shred target inside the project (the rule ``rm`` of a project file follows: it passes), below a temp
    root or under ``allowPaths``."""
    path = resolve(word, ctx)
    if path is None:
        return False
    if allowed_area(word, ctx):
        return True
    project = ctx.state.project
    if project is None:
        return not path.startswith("/") and ctx.cwd is None
    return project not in ("/", ctx.state.home()) and holds(project, path)  # the project itself: a folder,
    # which shred refuses (find . -exec shred -u {} +)
