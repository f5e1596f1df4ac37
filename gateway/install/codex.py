"""Codex CLI: ``DIR/.codex/hooks.json`` (``--project``) or ``$CODEX_HOME`` (``~/.codex``)``/hooks.json``;
matcher groups of command entries, plus the hook trust entries in ``$CODEX_HOME/config.toml``
(``gateway.install.codex_trust``), since Codex silently skips an untrusted hook."""

from __future__ import annotations

import os
from typing import Any

from gateway.install.edit import Edit, edit_grouped
from gateway.install.files import FileChange, Plan, hooks_of, read
from gateway.install.options import HOOK_TIMEOUT_S, InstallError, Options, _home


def default_events() -> list[str]:
    from gateway.dialects.codex import CODEX_EVENTS

    return list(CODEX_EVENTS)


def all_events() -> dict[str, str]:
    from gateway.dialects import get_dialect

    names: dict[str, str] = dict(get_dialect("codex").EVENT_NAMES)
    return names


def codex_home() -> str:
    return os.path.abspath(os.path.expanduser(os.environ.get("CODEX_HOME") or _home(".codex")))


def target_file(opts: Options) -> str:
    folder = os.path.join(opts.project, ".codex") if opts.project else codex_home()
    return os.path.join(folder, "hooks.json")


def handler_entry(opts: Options, event: str, command: str) -> dict[str, Any]:
    return {"type": "command", "command": command, "timeout": 3 if event == "SessionEnd" else HOOK_TIMEOUT_S}


def edit(
    opts: Options, result: Plan, path: str, before: str | None, doc: dict[str, Any], wanted: dict[str, dict[str, Any]]
) -> Edit:
    """Make install's entries in ``doc`` (the file at ``path``, ``before`` its text) exactly ``wanted``,
    and plan the matching trust entries."""
    edit = edit_grouped(hooks_of(path, doc), wanted, opts.host, result.keep_empty)
    _trust(opts, result, path, edit)
    return edit


def _trust(opts: Options, result: Plan, hooks_file: str, edit: Edit) -> None:
    import gateway.install.codex_trust as trust

    config_path = os.path.join(codex_home(), "config.toml")
    text = read(config_path)
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
        result.notes.append(
            f"Codex loads {hooks_file} only in a trusted project: trust {opts.project} in Codex "
            f'(or add [projects."{os.path.abspath(opts.project)}"] trust_level = "trusted" to '
            f"{config_path})"
        )
