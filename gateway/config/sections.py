"""The config sections next to ``hooks``: hookgate's own (``settings``; ``guards`` in
``gateway.config.guards``; ``agents`` in ``gateway.config.agents``; ``channels``, the approval channels, in
``gateway.approvals.config``; ``audit`` in ``gateway.audit.config``) here, and those a handler family owns
(``llm``, ``mcpServers``/``mcpConfig``, ...), which it declares through the handler registry
(``handlers.base.config_sections``), so this package
never imports a concrete handler.

Each section is validated with its pydantic model and stored normalized on the compilation. Keys that
Claude Code settings files carry (``permissions``, ``env``, ``model``, ...) are ignored silently in
a file named ``settings*.json``; elsewhere an unknown top-level key is a warning.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from handlers.base import config_sections

if TYPE_CHECKING:
    from gateway.config.schema import Compilation

KIRO_AGENT_KEYS = {
    "name",
    "description",
    "prompt",
    "tools",
    "allowedTools",
    "toolsSettings",
    "resources",
    "toolAliases",
    "useLegacyMcpJson",
    "model",
    "$schema",
    "welcomeMessage",
    "keyboardShortcut",
}


def compile_sections(compiler: Compilation, path: str, base_dir: str, doc: dict[str, Any]) -> None:
    """Validate the non-hook sections of one config document into ``compiler``."""
    from gateway.config.schema import GATEWAY_SECTIONS, Settings, issues_under, suggest

    if "settings" in doc:
        try:
            merged = {**_aliased(compiler.settings), **anchored_settings(doc["settings"] or {}, base_dir)}
            compiler.settings = Settings.model_validate(merged).model_dump()
        except (ValidationError, TypeError) as exc:
            if isinstance(exc, ValidationError):
                compiler.issues.extend(issues_under(f"{path}: settings", exc))
            else:
                compiler.issues.append(f"{path}: settings: expected an object")
    known = set(GATEWAY_SECTIONS) | {"disableAllHooks"}  # Claude Code's switch (compiler: _all_hooks_disabled)
    for section in config_sections():
        known.update(section.keys)
        if any(key in doc for key in section.keys):
            section.compile(compiler, path, base_dir, doc)
    if "guards" in doc:
        from gateway.config.guards import compile_guards

        compile_guards(compiler, path, doc["guards"])
    if "agents" in doc:
        from gateway.config.agents import compile_agents

        compile_agents(compiler, path, base_dir, doc["agents"])
    if "channels" in doc:
        from gateway.approvals.config import compile_section

        compile_section(compiler, path, doc["channels"])
    if "audit" in doc:
        from gateway.audit.config import compile_audit

        compile_audit(compiler, path, base_dir, doc["audit"])
    if os.path.basename(path).startswith("settings") or (set(doc) & KIRO_AGENT_KEYS):
        return
    for key in doc:
        if key not in known:
            compiler.warnings.append(f"{path}: {key}: unknown top-level key, ignored{suggest(str(key), sorted(known))}")


def anchored_settings(raw: Any, base_dir: str) -> Any:
    """``raw`` (one file's ``settings``) with a relative ``stateDir`` resolved against ``base_dir`` (the
    folder of the config file that sets it), as a relative ``jsonl:`` audit path is: the state must not
    depend on the directory a process starts in. ``~`` paths (expanded where used), absolute paths, an
    empty string and anything that is not a string are left as they are (the schema reports a wrong
    type); ``raw`` that is not a mapping is returned unchanged."""
    if not isinstance(raw, dict):
        return raw
    out = dict(raw)
    for key in ("stateDir", "state_dir"):  # the alias or the field name (populate_by_name)
        value = raw.get(key)
        if isinstance(value, str) and value and not value.startswith("~") and not os.path.isabs(value):
            out[key] = os.path.normpath(os.path.join(base_dir, value))
    return out


def known_top_level_keys() -> list[str]:
    """Every top-level key a config may hold: hookgate's own sections and the ones sections register."""
    from gateway.config.schema import GATEWAY_SECTIONS

    known = list(GATEWAY_SECTIONS)
    for section in config_sections():
        known.extend(k for k in section.keys if k not in known)
    return known


def _aliased(settings: dict[str, Any]) -> dict[str, Any]:
    from gateway.config.schema import Settings

    return {(Settings.model_fields[k].alias or k): v for k, v in settings.items()}


def finish_sections(compiler: Compilation) -> None:
    """Cross-file checks of every registered section, run once every file is read."""
    for section in config_sections():
        section.finish(compiler)
    from gateway.approvals.config import finish_section

    finish_section(compiler)
