"""The plan for one host (``plan``: every file change, nothing written) and the CLI's entry
(``run_install``). The host modules (``claude``, ``gemini``, ``codex``, ``kiro``) say what differs."""

from __future__ import annotations

import os
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

import gateway.install.claude as claude
import gateway.install.codex as codex
import gateway.install.gemini as gemini
import gateway.install.kiro as kiro
from gateway.install.edit import Edit, NotAList
from gateway.install.files import (
    FileChange,
    Plan,
    apply,
    dump,
    empty_containers,
    is_crlf,
    load_json,
    read,
    remembered,
    tidy,
)
from gateway.install.options import (
    InstallError,
    Options,
    check_agent_name,
    hook_command,
    hookgate_argv,
    is_hookgate_command,
)

if TYPE_CHECKING:
    import argparse

HOSTS: dict[str, ModuleType] = {"claude": claude, "gemini": gemini, "codex": codex, "kiro": kiro}
"""Each host's module: ``default_events()``, ``all_events()``, ``target_file(opts)``,
``handler_entry(opts, event, command)``, ``edit(opts, result, path, before, doc, wanted)``, and optionally
``hooks_disabled(path, doc)``: one warning line per setting in the file that stops the host from running
the hooks install writes."""


def host_events(host: str) -> list[str]:
    """The host's event names (its own vocabulary) that ``install`` wires by default."""
    events: list[str] = HOSTS[host].default_events()
    return events


def target_file(opts: Options) -> str:
    """The host config file ``install`` edits (see ``gateway.install``)."""
    path: str = HOSTS[opts.host].target_file(opts)
    return path


def select_events(host: str, wanted: str | None) -> list[str]:
    """``--events`` (comma-separated, host or canonical names) as host event names; default: all."""
    if not wanted:
        return host_events(host)
    table: dict[str, str] = HOSTS[host].all_events()
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


def plan(opts: Options) -> Plan:
    """Every file change ``opts`` calls for (nothing is written). Raises InstallError."""
    host = HOSTS[opts.host]
    result = Plan(opts.host, opts.action)
    path = target_file(opts)
    raw = read(path, newline="")
    crlf = raw is not None and is_crlf(raw)
    before = raw.replace("\r\n", "\n") if raw is not None and crlf else raw  # edited as LF, written back as CRLF
    doc = load_json(path, before)
    command = hook_command(opts.host, executable=opts.executable, config=opts.config, server=opts.server)
    wanted = (
        {event: host.handler_entry(opts, event, command) for event in opts.events} if opts.action == "install" else {}
    )
    if before is None and not wanted:
        return result
    disabled = getattr(host, "hooks_disabled", None)  # a host switch that turns every hook in the file off
    if wanted and disabled is not None:
        result.warnings.extend(disabled(path, doc))
    empty = empty_containers(doc)  # "hooks": {} and "Event": [] as they are now
    memory = remembered(path)  # and as they were before an earlier install filled them
    result.keep_empty = frozenset(empty.get("events", []) + memory.get("events", []))
    try:
        edit: Edit = host.edit(opts, result, path, before, doc, wanted)
    except NotAList as exc:
        raise InstallError(f"{path}: {exc}") from None
    for event, command in edit.foreign.items():
        result.warnings.append(
            f"{path}: {event} already runs hookgate through a hook install did not write ({command}); "
            f"install leaves it as it is and adds no second one for {event}: to let install manage {event}, "
            "remove that hook and run install again"
        )
    tidy(doc, keep=bool(empty.get("hooks") or memory.get("hooks")))
    if opts.action == "install":
        hooks: dict[str, Any] = doc["hooks"] if isinstance(doc.get("hooks"), dict) else {}
        filled = {
            **({"hooks": True} if empty.get("hooks") and hooks else {}),
            "events": [e for e in empty.get("events", []) if hooks.get(e)],
        }
        if filled.get("hooks") or filled["events"]:
            result.remember = (path, filled)
    else:
        result.forget = path
    after = dump(doc, before)
    if before is not None and load_json(path, before) == doc:
        after = before  # semantically unchanged: keep the file byte for byte
    elif before is not None and before.strip():
        from gateway.install.jsonedit import edit_text

        edited = edit_text(before, doc)  # only hookgate's entries change; the user's text stays as written
        if edited is not None:
            after = edited
        else:
            result.notes.append(
                f"{path} is rewritten as JSON with a uniform indentation: its content, other hooks "
                "and their order are kept, only whitespace and line breaks change (see the backup)"
            )
    if crlf:
        after = after.replace("\n", "\r\n")  # a Windows editor's file keeps its line endings
    result.changes.insert(0, FileChange(path, raw, after))
    return result


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
        raise InstallError(
            f"--config {' '.join(paths)} is invalid, so every hook would fail: {exc.issues[0]}"
        ) from None
    return pinned


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def _refuse_loops(configs: list[str], target: str, host: str, *, entries: bool = True) -> None:
    """Refuse a ``--config`` that would make every hook call hookgate in a loop: the very file being
    installed into, or a file holding hookgate's own ``hookgate run`` entries. Raises InstallError
    before anything is written."""
    from gateway.config import BUILTIN_DEFAULT, load_config

    for path in configs:
        if path == BUILTIN_DEFAULT:
            continue
        if _same_file(path, target):
            raise InstallError(
                f"--config {path} is the file being installed into: the hooks would read their own "
                "`hookgate run` entries as the policy and start hookgate again on every event (denied as "
                "'nested too deep'). Keep the policy in a file of its own, e.g. move your hooks to "
                f"hookgate.yaml and run `hookgate install {host} ... --config hookgate.yaml`; nothing was written"
            )
        if not entries:
            continue
        ours = [
            spec.where
            for groups in load_config([path], use_cache=False).hooks.values()
            for g in groups
            for spec in g.handlers
            if spec.type == "command" and is_hookgate_command(_command_line(spec))
        ]
        if ours:
            raise InstallError(
                f"--config {path} holds hookgate's own `hookgate run` hooks ({ours[0]}"
                f"{f' and {len(ours) - 1} more' if len(ours) > 1 else ''}): as the policy, each event would start "
                "hookgate again, in a loop. Point --config at your own policy file, or remove those entries "
                "from it first (`hookgate uninstall` on the host it came from); nothing was written"
            )


def _command_line(spec: Any) -> str:
    import shlex

    args = spec.options.get("args")
    command = str(spec.options.get("command", ""))
    return shlex.join([command, *map(str, args)]) if args is not None else command


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
            if args.server is not None and (
                not args.server.startswith(("http://", "https://"))
                or any(c.isspace() or not c.isprintable() for c in args.server)
            ):
                raise InstallError(
                    f"--server {args.server[:200]!r}: expected an http:// or https:// URL "
                    "(no spaces or control characters)"
                )
            opts.executable = hookgate_argv(args.hookgate)
            if args.config:  # before validating: the host's own file is not a policy, whatever it holds
                _refuse_loops(
                    [os.path.abspath(os.path.expanduser(c)) for c in args.config],
                    target_file(opts),
                    args.host,
                    entries=False,
                )
            opts.config = _check_configs(args.config) if args.config else None
            opts.server = args.server
            opts.events = select_events(args.host, args.events)
            if opts.config:
                _refuse_loops(opts.config, target_file(opts), args.host)
        return apply(plan(opts), dry_run=args.dry_run)
    except InstallError as exc:
        sys.stderr.write(f"hookgate: {exc}\n")
        return 1
    except OSError as exc:
        sys.stderr.write(f"hookgate: {exc}\n")
        return 1
