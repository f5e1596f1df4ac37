"""``hookgate install HOST`` / ``hookgate uninstall HOST``: wire a host's own hook config to hookgate.

HOST is ``claude``, ``kiro``, ``gemini`` or ``codex``. Every event hookgate supports on that host gets
one command hook, ``<absolute path of hookgate> run --dialect HOST`` (plus ``--config FILE`` and
``--server URL`` when given), in the host's own file and format:

==========  =====================================  =====================================================
host        project (``--project DIR``)            user level (the default)
==========  =====================================  =====================================================
claude      ``DIR/.claude/settings.json``          ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``/settings.json
gemini      ``DIR/.gemini/settings.json``          ``~/.gemini/settings.json``
codex       ``DIR/.codex/hooks.json``              ``$CODEX_HOME`` (``~/.codex``)/hooks.json
kiro        ``DIR/.kiro/agents/AGENT.json``        ``~/.kiro/agents/AGENT.json``
==========  =====================================  =====================================================

For Codex it also writes the hook trust entries (``[hooks.state."<key>"] trusted_hash``) into
``$CODEX_HOME/config.toml``, since Codex silently skips an untrusted hook (``gateway.install_codex``).

Rules: other hooks in the file are left alone (hookgate's own entries are recognized by their command:
``hookgate ... run``); an existing entry is updated in place, a missing one appended as a new group;
running install twice changes nothing (idempotent); every file that changes is first copied to
``<file>.hookgate-backup-<YYYYmmdd-HHMMSS>``; ``--dry-run`` prints the unified diff and writes
nothing. ``uninstall`` removes only hookgate's entries (and, for Codex, their trust entries; the trust
of hooks that move up a position is carried over). Exit codes: 0 done (or nothing to do), 1 an error
(one line on stderr; nothing written).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

HOOK_TIMEOUT_S = 600
"""The host-side timeout of a hookgate hook (seconds): hookgate enforces each handler's own deadline,
so the host's (fail-open) timeout should never be the one that fires."""

# Claude Code events not wired by default: a WorktreeCreate/Remove hook replaces Claude Code's own git
# worktree handling, MessageDisplay fires for every displayed message, FileChanged needs file names.
CLAUDE_SKIPPED = frozenset({"WorktreeCreate", "WorktreeRemove", "MessageDisplay", "FileChanged"})


class InstallError(Exception):
    """Nothing can be written; the message is one line."""


def host_events(host: str) -> list[str]:
    """The host's event names (its own vocabulary) that ``install`` wires by default."""
    if host == "claude":
        from gateway.events import EVENTS

        return [name for name in EVENTS if name not in CLAUDE_SKIPPED]
    if host == "gemini":
        from gateway.dialects.gemini import EVENT_NAMES as GEMINI_EVENTS

        return list(GEMINI_EVENTS)
    if host == "codex":
        from gateway.dialects.codex import CODEX_EVENTS

        return list(CODEX_EVENTS)
    from gateway.dialects.kiro import EVENT_NAMES as KIRO_EVENTS

    return list(KIRO_EVENTS)


def _all_host_events(host: str) -> dict[str, str]:
    """Every event name ``--events`` accepts for ``host``: host name -> canonical name."""
    if host == "claude":
        from gateway.events import EVENTS

        return {name: name for name in EVENTS}
    from gateway.dialects import get_dialect

    names: dict[str, str] = dict(get_dialect(host).EVENT_NAMES)
    return names


def select_events(host: str, wanted: str | None) -> list[str]:
    """``--events`` (comma-separated, host or canonical names) as host event names; default: all."""
    if not wanted:
        return host_events(host)
    table = _all_host_events(host)
    by_canonical: dict[str, str] = {}
    for name, canonical in table.items():
        by_canonical.setdefault(canonical, name)
    chosen: list[str] = []
    for word in (w.strip() for w in wanted.split(",")):
        if not word:
            continue
        found = word if word in table else by_canonical.get(word)
        if found is None:
            raise InstallError(f"--events: {host} has no event {word!r} (expected some of: {', '.join(table)})")
        if found not in chosen:
            chosen.append(found)
    return chosen


def hookgate_argv(explicit: str | None = None) -> list[str]:
    """The absolute command that starts hookgate: ``--hookgate``, this very script, the ``hookgate``
    next to this interpreter, the one on PATH, else ``python -m gateway``."""
    import shutil

    if explicit:
        path = os.path.abspath(os.path.expanduser(explicit))
        if not os.access(path, os.X_OK):
            raise InstallError(f"--hookgate {explicit}: not an executable file")
        return [path]
    candidates = []
    if os.path.basename(sys.argv[0]) == "hookgate":
        candidates.append(os.path.abspath(sys.argv[0]))
    candidates.append(os.path.join(os.path.dirname(sys.executable), "hookgate"))
    found = shutil.which("hookgate")
    if found:
        candidates.append(os.path.abspath(found))
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return [path]
    return [os.path.abspath(sys.executable), "-m", "gateway"]


def hook_command(host: str, *, executable: list[str], config: str | list[str] | None = None,
                 server: str | None = None) -> str:
    """The command line each hook runs (shell-quoted); ``config``: one path or several (all pinned)."""
    import shlex

    argv = [*executable, "run", "--dialect", host]
    for path in [config] if isinstance(config, str) else config or []:
        argv += ["--config", path]
    if server:
        argv += ["--server", server]
    return shlex.join(argv)


def is_hookgate_command(command: Any) -> bool:
    """True for a command hook that runs ``hookgate ... run`` (how hookgate finds its own entries)."""
    import shlex

    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if not words:
        return False
    if os.path.basename(words[0]) == "hookgate":
        rest = words[1:]
    elif len(words) >= 3 and words[1:3] == ["-m", "gateway"]:
        rest = words[3:]
    else:
        return False
    return "run" in rest


# ------------------------------------------------------------------ editing hook config documents

Position = tuple[str, int, int]
"""(event, group index, handler index) of a handler in a ``hooks`` block."""


@dataclass
class Edit:
    """The outcome of editing one ``hooks`` block: hookgate's handler positions before and after, and
    where each other handler moved."""

    ours_before: list[Position] = field(default_factory=list)
    ours_after: dict[Position, dict[str, Any]] = field(default_factory=dict)
    moved: dict[Position, Position] = field(default_factory=dict)
    groups_after: dict[Position, Any] = field(default_factory=dict)  # position -> its group's matcher


def _is_ours(handler: Any) -> bool:
    return isinstance(handler, dict) and is_hookgate_command(handler.get("command"))


def edit_grouped(hooks: dict[str, Any], wanted: dict[str, dict[str, Any]]) -> Edit:
    """Make hookgate's handlers in a Claude/Gemini/Codex ``hooks`` block exactly ``wanted`` (event ->
    handler), in place: update the first existing one, append a new group when missing, remove the rest
    (and groups that only held them). Other handlers and groups keep their order."""
    edit = Edit()
    for event in list(hooks) + [e for e in wanted if e not in hooks]:
        groups = hooks.get(event, [])
        if not isinstance(groups, list):
            if event in wanted:
                raise InstallError(f"hooks.{event} is not a list; fix it by hand first")
            continue
        want = wanted.get(event)
        placed = False
        new_groups: list[Any] = []
        for gi, group in enumerate(groups):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list):
                new_groups.append(group)
                continue
            kept: list[Any] = []
            for hi, handler in enumerate(handlers):
                if _is_ours(handler):
                    edit.ours_before.append((event, gi, hi))
                    if want is not None and not placed:
                        kept.append(want)
                        placed = True
                        edit.ours_after[(event, len(new_groups), len(kept) - 1)] = want
                    continue
                edit.moved[(event, gi, hi)] = (event, len(new_groups), len(kept))
                kept.append(handler)
            if kept or not handlers:  # a group that only held hookgate's handlers goes
                new_groups.append({**group, "hooks": kept})
        if want is not None and not placed:
            new_groups.append({"hooks": [want]})
            edit.ours_after[(event, len(new_groups) - 1, 0)] = want
        for gi, group in enumerate(new_groups):
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                for hi in range(len(group["hooks"])):
                    edit.groups_after[(event, gi, hi)] = group.get("matcher")
        if new_groups:
            hooks[event] = new_groups
        elif event in hooks:
            del hooks[event]
    return edit


def edit_flat(hooks: dict[str, Any], wanted: dict[str, dict[str, Any]]) -> None:
    """The same for Kiro's flat ``hooks`` block (event -> list of ``{command, matcher?, timeout_ms?}``)."""
    for event in list(hooks) + [e for e in wanted if e not in hooks]:
        entries = hooks.get(event, [])
        if not isinstance(entries, list):
            if event in wanted:
                raise InstallError(f"hooks.{event} is not a list; fix it by hand first")
            continue
        want = wanted.get(event)
        kept: list[Any] = []
        placed = False
        for entry in entries:
            if _is_ours(entry):
                if want is not None and not placed:
                    kept.append(want)
                    placed = True
                continue
            kept.append(entry)
        if want is not None and not placed:
            kept.append(want)
        if kept:
            hooks[event] = kept
        elif event in hooks:
            del hooks[event]


# ------------------------------------------------------------------ files

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


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstallError(f"{path}: cannot read: {exc}") from None


def _load_json(path: str, text: str | None) -> dict[str, Any]:
    import json

    if text is None or not text.strip():
        return {}
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise InstallError(f"{path}: not plain JSON ({exc}; comments?), so hookgate will not edit it; "
                           "add the hooks by hand (see --dry-run on a copy without comments)") from None
    if not isinstance(doc, dict):
        raise InstallError(f"{path}: expected a JSON object, got {type(doc).__name__}")
    return doc


def _indent(text: str | None) -> int | str:
    if text:
        for line in text.splitlines()[1:]:
            stripped = line.lstrip(" \t")
            if stripped and stripped != line:
                lead = line[: len(line) - len(stripped)]
                return "\t" if lead.startswith("\t") else len(lead)
    return 2


def _dump(doc: dict[str, Any], like: str | None) -> str:
    import json

    text = json.dumps(doc, indent=_indent(like), ensure_ascii=False)
    return text if like is not None and like.strip() and not like.endswith("\n") else text + "\n"


def _hooks_of(path: str, doc: dict[str, Any]) -> dict[str, Any]:
    hooks = doc.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(f"{path}: 'hooks' is not an object; fix it by hand first")
    return hooks


def _tidy(doc: dict[str, Any]) -> None:
    if doc.get("hooks") == {}:
        del doc["hooks"]


# ------------------------------------------------------------------ per host

@dataclass
class Options:
    host: str
    action: str
    project: str | None
    executable: list[str]
    config: str | list[str] | None = None
    server: str | None = None
    events: list[str] = field(default_factory=list)
    agent: str | None = None


def _home(*parts: str) -> str:
    return os.path.join(os.path.expanduser("~"), *parts)


def codex_home() -> str:
    return os.path.abspath(os.path.expanduser(os.environ.get("CODEX_HOME") or _home(".codex")))


def target_file(opts: Options) -> str:
    """The host config file ``install`` edits (see module docstring)."""
    base = opts.project
    if opts.host == "claude":
        root = os.path.join(base, ".claude") if base else os.path.expanduser(
            os.environ.get("CLAUDE_CONFIG_DIR") or _home(".claude"))
        return os.path.join(root, "settings.json")
    if opts.host == "gemini":
        return os.path.join(base, ".gemini", "settings.json") if base else _home(".gemini", "settings.json")
    if opts.host == "codex":
        return os.path.join(base, ".codex", "hooks.json") if base else os.path.join(codex_home(), "hooks.json")
    folder = os.path.join(base, ".kiro", "agents") if base else _home(".kiro", "agents")
    return os.path.join(folder, f"{_kiro_agent(folder, opts)}.json")


def check_agent_name(name: str) -> str:
    """``name`` when it is a plain Kiro agent name (the file ``NAME.json`` in the agents folder): 1-128 of
    letters, digits, ``-``, ``_``, ``.``, not starting with ``.`` and without ``..``; so it cannot point
    outside the folder. Raises InstallError (one line)."""
    import re

    if not re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}", name) or ".." in name:
        raise InstallError(f"--agent {name[:100]!r}: expected a plain agent name (letters, digits, '-', '_', "
                           "'.'; no '/' or '..'), e.g. --agent hookgate")
    return name


def _kiro_agent(folder: str, opts: Options) -> str:
    if opts.agent:
        return check_agent_name(opts.agent)
    try:
        names = sorted(n[:-5] for n in os.listdir(folder) if n.endswith(".json"))
    except OSError:
        names = []
    if len(names) == 1:
        return names[0]
    if len(names) > 1:
        raise InstallError(f"{folder} holds several Kiro agents ({', '.join(names)}); choose one with --agent NAME")
    return "hookgate"


def handler_entry(opts: Options, event: str) -> dict[str, Any]:
    """The hook entry for ``event`` in the host's own format."""
    command = hook_command(opts.host, executable=opts.executable, config=opts.config, server=opts.server)
    if opts.host == "claude":
        entry: dict[str, Any] = {"type": "command", "command": command}
        if event != "SessionEnd":  # SessionEnd hooks share Claude Code's short shutdown budget
            entry["timeout"] = HOOK_TIMEOUT_S
        return entry
    if opts.host == "codex":
        return {"type": "command", "command": command, "timeout": 3 if event == "SessionEnd" else HOOK_TIMEOUT_S}
    if opts.host == "gemini":
        return {"name": "hookgate", "type": "command", "command": command, "timeout": HOOK_TIMEOUT_S * 1000,
                "description": "hookgate: one hook policy for every agent"}
    return {"command": command, "timeout_ms": HOOK_TIMEOUT_S * 1000}


def plan(opts: Options) -> Plan:
    """Every file change ``opts`` calls for (nothing is written). Raises InstallError."""
    result = Plan(opts.host, opts.action)
    path = target_file(opts)
    before = _read(path)
    doc = _load_json(path, before)
    wanted = {event: handler_entry(opts, event) for event in opts.events} if opts.action == "install" else {}
    if opts.host == "kiro":
        if before is None and not wanted:
            return result
        if before is None:
            doc = {"name": os.path.basename(path)[:-5], "tools": ["*"],
                   "description": "Kiro's tools, every hook event through hookgate"}
            result.notes.append(f"created the Kiro agent {doc['name']!r} ({path}); use this agent in Kiro "
                                "for the hooks to run")
        edit_flat(_hooks_of(path, doc), wanted)
        _tidy(doc)
    else:
        if before is None and not wanted:
            return result
        edit = edit_grouped(_hooks_of(path, doc), wanted)
        _tidy(doc)
        if opts.host == "codex":
            _codex_trust(opts, result, path, edit)
    after = _dump(doc, before)
    if before is not None and _load_json(path, before) == doc:
        after = before  # semantically unchanged: keep the file byte for byte
    result.changes.insert(0, FileChange(path, before, after))
    return result


def _codex_trust(opts: Options, result: Plan, hooks_file: str, edit: Edit) -> None:
    from gateway import install_codex as trust

    config_path = os.path.join(codex_home(), "config.toml")
    text = _read(config_path)
    current = trust.state_entries(text or "") if text else {}
    remove = {trust.trust_key(hooks_file, *pos) for pos in edit.ours_before}
    put: dict[str, dict[str, Any]] = {}
    for old, new in edit.moved.items():  # another hook moved up: its trust moves with it
        if old != new:
            old_key = trust.trust_key(hooks_file, *old)
            remove.add(old_key)
            if old_key in current:
                put[trust.trust_key(hooks_file, *new)] = dict(current[old_key])
    for (event, gi, hi), handler in edit.ours_after.items():
        key = trust.trust_key(hooks_file, event, gi, hi)
        put[key] = {"trusted_hash": trust.trust_hash(event, edit.groups_after.get((event, gi, hi)), handler)}
    remove -= set(put)
    unchanged = all(current.get(k) == v for k, v in put.items()) and not (remove & set(current))
    if unchanged:
        return
    try:
        new_text = trust.edit_state(text or "", {k for k in remove if k in current}, put)
    except trust.TomlEditError as exc:
        lines = "".join(f'\n[hooks.state."{k}"]\ntrusted_hash = "{v["trusted_hash"]}"' for k, v in put.items())
        raise InstallError(f"{config_path}: {exc}; add the trust entries by hand:{lines}") from None
    result.changes.append(FileChange(config_path, text, new_text))
    if opts.project and opts.action == "install" and not trust.project_trusted(new_text, os.path.abspath(opts.project)):
        result.notes.append(f"Codex loads {hooks_file} only in a trusted project: trust {opts.project} in Codex "
                            f"(or add [projects.\"{os.path.abspath(opts.project)}\"] trust_level = \"trusted\" to "
                            f"{config_path})")


# ------------------------------------------------------------------ writing

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
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
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
    lines = difflib.unified_diff(old, new, fromfile=change.path if change.before is not None else "/dev/null",
                                 tofile=change.path)
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def apply(result: Plan, *, dry_run: bool, out: Callable[[str], None] = print) -> int:
    """Print (dry run) or write the plan; returns the exit code."""
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


# ------------------------------------------------------------------ CLI

def _check_configs(paths: list[str]) -> list[str]:
    """The ``--config`` values to pin, absolute (``builtin:default`` kept as written: it follows the
    installed package), after validating them together. Raises InstallError."""
    from gateway.config import BUILTIN_DEFAULT, load_config
    from gateway.errors import ConfigError

    pinned = []
    for path in paths:
        full = path if path == BUILTIN_DEFAULT else os.path.abspath(os.path.expanduser(path))
        if full != BUILTIN_DEFAULT and not os.path.isfile(full):
            raise InstallError(f"--config {path}: no such file")
        pinned.append(full)
    from gateway.config import find_config_paths

    try:
        load_config(find_config_paths(pinned), use_cache=False)
    except ConfigError as exc:
        raise InstallError(f"--config {' '.join(paths)} is invalid, so every hook would fail: "
                           f"{exc.issues[0]}") from None
    return pinned


def run_install(args: argparse.Namespace) -> int:
    """``hookgate install|uninstall HOST``: exit 0 done / nothing to do, 1 error."""
    try:
        project = os.path.abspath(os.path.expanduser(args.project)) if args.project else None
        if project is not None and not os.path.isdir(project):
            raise InstallError(f"--project {args.project}: not a directory")
        if args.agent is not None:
            check_agent_name(args.agent)
        opts = Options(host=args.host, action=args.action, project=project, executable=[], agent=args.agent)
        if args.action == "install":
            if args.server is not None and (not args.server.startswith(("http://", "https://"))
                                            or any(c.isspace() or not c.isprintable() for c in args.server)):
                raise InstallError(f"--server {args.server[:200]!r}: expected an http:// or https:// URL "
                                   "(no spaces or control characters)")
            opts.executable = hookgate_argv(args.hookgate)
            opts.config = _check_configs(args.config) if args.config else None
            opts.server = args.server
            opts.events = select_events(args.host, args.events)
        return apply(plan(opts), dry_run=args.dry_run)
    except InstallError as exc:
        sys.stderr.write(f"hookgate: {exc}\n")
        return 1
    except OSError as exc:
        sys.stderr.write(f"hookgate: {exc}\n")
        return 1
