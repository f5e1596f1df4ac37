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
    keep_empty: frozenset[str] = frozenset()  # events that were [] before install filled them (kept as [])
    remember: tuple[str, dict[str, Any]] | None = None  # (file, its empty containers) to keep in memory
    forget: str | None = None  # the file whose memory an uninstall drops


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
    if text.startswith("\ufeff"):
        raise InstallError(
            f"{path}: the file starts with a byte order mark (a UTF-8 BOM), which JSON.parse rejects, and "
            "hookgate does not know that the host skips it, so it will not edit the file: save it as UTF-8 "
            "without a BOM (in most editors: 'UTF-8', not 'UTF-8 with BOM'), then run this again"
        )
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


def tidy(doc: dict[str, Any], *, keep: bool) -> None:
    """Drop a ``hooks`` object the edit left empty, unless ``keep`` (it was ``{}`` before install)."""
    if doc.get("hooks") == {} and not keep:
        del doc["hooks"]


def empty_containers(doc: dict[str, Any]) -> dict[str, Any]:
    """What of ``doc``'s ``hooks`` is empty as it stands (``{"hooks": True}`` for ``"hooks": {}``,
    ``{"events": [...]}`` for events holding ``[]``): what uninstall should give back after install fills it."""
    hooks = doc.get("hooks")
    if not isinstance(hooks, dict):
        return {}
    found: dict[str, Any] = {}
    if not hooks:
        found["hooks"] = True
    events = [event for event, entries in hooks.items() if entries == []]
    if events:
        found["events"] = events
    return found


def _memory_file() -> str:
    from gateway.wire import default_state_dir

    return os.path.join(default_state_dir(), "install-empty.json")


def _load_memory() -> dict[str, Any]:
    import json

    try:
        with open(_memory_file(), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def remembered(path: str) -> dict[str, Any]:
    """The empty containers ``path`` had before install filled them (see ``empty_containers``); ``{}``
    when none are remembered (``$XDG_STATE_HOME/hookgate/install-empty.json``, by the file's real path)."""
    entry = _load_memory().get(os.path.realpath(path))
    if not isinstance(entry, dict):
        return {}
    events = entry.get("events")
    found: dict[str, Any] = {"hooks": True} if entry.get("hooks") is True else {}
    if isinstance(events, list) and all(isinstance(e, str) for e in events):
        found["events"] = events
    return found


def _save_memory(path: str, entry: dict[str, Any] | None) -> None:
    """Add ``entry`` (``empty_containers``) to what is remembered of ``path``; None: forget ``path``."""
    import json

    data = _load_memory()
    key = os.path.realpath(path)
    if entry:
        old = remembered(path)
        events = list(dict.fromkeys([*old.get("events", []), *entry.get("events", [])]))
        data[key] = {**({"hooks": True} if old.get("hooks") or entry.get("hooks") else {}), "events": events}
    elif key in data:
        del data[key]
    else:
        return
    os.makedirs(os.path.dirname(_memory_file()), exist_ok=True)
    tmp = _memory_file() + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2)
    os.replace(tmp, _memory_file())


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
    """Write ``change`` atomically (mode kept); return the backup path (None for a new file). A symlink
    is written through: its target file is replaced, the link stays (the backup is next to the link)."""
    import shutil
    import tempfile

    backup = None
    target = os.path.realpath(change.path)
    directory = os.path.dirname(target)
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
        os.replace(tmp, target)
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
    if not dry_run and (result.remember is not None or result.forget is not None):
        try:
            if result.remember is not None:
                _save_memory(*result.remember)
            if result.forget is not None:
                _save_memory(result.forget, None)
        except OSError as exc:
            result.notes.append(f"could not note which empty hooks lists to give back on uninstall: {exc}")
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
            link = f"through the link to {os.path.realpath(change.path)}; " if os.path.islink(change.path) else ""
            out(f"wrote {change.path} ({link}" + (f"backup: {backup})" if backup else "new file)"))
    for note in result.notes:
        out(f"note: {note}")
    if dry_run:
        out(f"dry run: {len(changed)} file(s) would change; nothing written")
    return 0
