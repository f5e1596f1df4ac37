"""The files ``install`` reads and writes: JSON documents kept in their own indentation, the unified
diff of ``--dry-run``, atomic writes with a backup, and ``apply`` (print or write a ``Plan``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gateway.install.options import InstallError


@dataclass
class FileChange:
    """One file ``install`` would write: its current text (None: does not exist) and the new text."""

    path: str
    before: str | None
    after: str

    @property
    def changed(self) -> bool:
        return self.before != self.after


@dataclass
class Plan:
    host: str
    action: str  # install | uninstall
    changes: list[FileChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # the hooks would not run as things stand


def read(path: str, *, newline: str | None = None) -> str | None:
    """The text of ``path`` (None: it does not exist); ``newline=""`` keeps its line endings as written
    (CRLF stays CRLF). Raises InstallError when it cannot be read."""
    try:
        with open(path, encoding="utf-8", newline=newline) as fh:
            return fh.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstallError(f"{path}: cannot read: {exc}") from None


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's members, refusing a key given twice (``json`` would keep the last in silence)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


class _NotJson(ValueError):
    """A constant Python's ``json`` accepts and JSON does not (``NaN``, ``Infinity``, ``-Infinity``)."""

    def __init__(self, word: str) -> None:
        super().__init__(word)
        self.word = word


def _refuse_constant(word: str) -> Any:
    raise _NotJson(word)


def load_json(path: str, text: str | None) -> dict[str, Any]:
    """The JSON object in ``text`` (the file at ``path``; empty or missing: ``{}``). Raises InstallError
    for text that is not a JSON object, for ``NaN``/``Infinity`` (Python's ``json`` reads them; the
    hosts' ``JSON.parse`` rejects the whole file, so the hooks written there would never load), and for
    an object that has a key twice: a JSON reader keeps the last of them, so a rewrite would drop the
    first without a word."""
    import json

    if text is None or not text.strip():
        return {}
    try:
        doc = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_refuse_constant)
    except _NotJson as exc:
        raise InstallError(
            f"{path}: not plain JSON ({exc.word} is not a JSON value: the host's JSON parser rejects the "
            "whole file), so hookgate will not edit it; write a number or null there, then run this again"
        ) from None
    except _DuplicateKey as exc:
        raise InstallError(
            f"{path}: the key {exc.key!r} appears twice in one object; JSON readers keep only the last one "
            "(so does the host), and rewriting the file would drop the other: merge them by hand, then "
            "run this again"
        ) from None
    except ValueError as exc:
        raise InstallError(
            f"{path}: not plain JSON ({exc}; comments?), so hookgate will not edit it; "
            "add the hooks by hand (see --dry-run on a copy without comments)"
        ) from None
    if not isinstance(doc, dict):
        raise InstallError(f"{path}: expected a JSON object, got {type(doc).__name__}")
    return doc


def is_crlf(text: str) -> bool:
    """True when every line break of ``text`` is CRLF (and there is at least one)."""
    return "\r\n" in text and text.count("\n") == text.count("\r\n")


def _indent(text: str | None) -> int | str:
    if text:
        for line in text.splitlines()[1:]:
            stripped = line.lstrip(" \t")
            if stripped and stripped != line:
                lead = line[: len(line) - len(stripped)]
                return "\t" if lead.startswith("\t") else len(lead)
    return 2


def dump(doc: dict[str, Any], like: str | None) -> str:
    import json

    text = json.dumps(doc, indent=_indent(like), ensure_ascii=False)
    return text if like is not None and like.strip() and not like.endswith("\n") else text + "\n"


def hooks_of(path: str, doc: dict[str, Any]) -> dict[str, Any]:
    hooks = doc.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(f"{path}: 'hooks' is not an object; fix it by hand first")
    return hooks


def tidy(doc: dict[str, Any]) -> None:
    if doc.get("hooks") == {}:
        del doc["hooks"]


def _backup_path(path: str) -> str:
    import time

    stamp = time.strftime("%Y%m%d-%H%M%S")
    candidate = f"{path}.hookgate-backup-{stamp}"
    n = 1
    while os.path.exists(candidate):
        n += 1
        candidate = f"{path}.hookgate-backup-{stamp}-{n}"
    return candidate


def write_change(change: FileChange) -> str | None:
    """Write ``change`` atomically (mode kept); return the backup path (None for a new file)."""
    import shutil
    import tempfile

    backup = None
    directory = os.path.dirname(change.path) or "."
    os.makedirs(directory, exist_ok=True)
    mode = None
    if change.before is not None:
        backup = _backup_path(change.path)
        shutil.copy2(change.path, backup)
        mode = os.stat(change.path).st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=".hookgate-", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:  # line endings exactly as planned
            fh.write(change.after)
        os.chmod(tmp, mode if mode is not None else 0o644)
        os.replace(tmp, change.path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return backup


def diff(change: FileChange) -> str:
    import difflib

    old, new = (change.before or "").splitlines(keepends=True), change.after.splitlines(keepends=True)
    lines = difflib.unified_diff(
        old, new, fromfile=change.path if change.before is not None else "/dev/null", tofile=change.path
    )
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def _stderr(line: str) -> None:
    import sys

    sys.stderr.write(line + "\n")


def apply(
    result: Plan, *, dry_run: bool, out: Callable[[str], None] = print, warn: Callable[[str], None] = _stderr
) -> int:
    """Print (dry run) or write the plan; returns the exit code. Each of ``result.warnings`` goes to
    ``warn`` (stderr) as ``warning: ...``, whether or not a file changes."""
    for line in result.warnings:
        warn(f"warning: {line}")
    changed = [c for c in result.changes if c.changed]
    where = ", ".join(c.path for c in result.changes) or "no file"
    if not changed:
        state = "installed" if result.action == "install" else "not installed"
        out(f"hookgate is already {state} for {result.host} ({where}): nothing to do")
        return 0
    for change in changed:
        if dry_run:
            out(diff(change).rstrip("\n"))
        else:
            backup = write_change(change)
            out(f"wrote {change.path}" + (f" (backup: {backup})" if backup else " (new file)"))
    for note in result.notes:
        out(f"note: {note}")
    if dry_run:
        out(f"dry run: {len(changed)} file(s) would change; nothing written")
    return 0
