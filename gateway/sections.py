"""hookgate's own config sections next to ``hooks``: ``settings``, ``mcpServers``/``mcpConfig``, ``llm``.

Each section is validated with its pydantic model and stored normalized on the compiler. Keys that
Claude Code settings files carry (``permissions``, ``env``, ``model``, ...) are ignored silently in
a file named ``settings*.json``; elsewhere an unknown top-level key is a warning.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

if TYPE_CHECKING:
    from gateway.config_schema import _Compiler

KIRO_AGENT_KEYS = {"name", "description", "prompt", "tools", "allowedTools", "toolsSettings", "resources",
                   "toolAliases", "useLegacyMcpJson", "model", "$schema", "welcomeMessage", "keyboardShortcut"}


def compile_sections(compiler: _Compiler, path: str, base_dir: str, doc: dict[str, Any]) -> None:
    """Validate the non-hook sections of one config document into ``compiler``."""
    from gateway.config_schema import GATEWAY_SECTIONS, Settings, _pydantic_issues

    if "settings" in doc:
        try:
            merged = {**_aliased(compiler.settings), **(doc["settings"] or {})}
            compiler.settings = Settings.model_validate(merged).model_dump()
        except (ValidationError, TypeError) as exc:
            if isinstance(exc, ValidationError):
                compiler.issues.extend(f"{path}: settings.{i}" for i in _pydantic_issues(exc, ""))
            else:
                compiler.issues.append(f"{path}: settings: expected an object")
    servers = doc.get("mcpServers")
    if servers is not None:
        if isinstance(servers, dict):
            compiler.mcp_servers.update(servers)
        else:
            compiler.issues.append(f"{path}: mcpServers: expected an object keyed by server name")
    if "mcpConfig" in doc:
        ref = os.path.join(base_dir, os.path.expanduser(str(doc["mcpConfig"])))
        from gateway.config_schema import read_document

        try:
            mcp_doc = read_document(ref)
        except Exception as exc:
            compiler.issues.append(f"{path}: mcpConfig: {exc}")
        else:
            if isinstance(mcp_doc, dict) and isinstance(mcp_doc.get("mcpServers"), dict):
                for name, server in mcp_doc["mcpServers"].items():
                    compiler.mcp_servers.setdefault(name, server)
            else:
                compiler.issues.append(f"{path}: mcpConfig: {ref} has no mcpServers object")
    if "llm" in doc:
        if isinstance(doc["llm"], dict):
            compiler.llm.update(doc["llm"])
        else:
            compiler.issues.append(f"{path}: llm: expected an object")
    if os.path.basename(path).startswith("settings") or (set(doc) & KIRO_AGENT_KEYS):
        return
    for key in doc:
        if key not in GATEWAY_SECTIONS:
            compiler.warnings.append(f"{path}: {key}: unknown top-level key, ignored")


def _aliased(settings: dict[str, Any]) -> dict[str, Any]:
    from gateway.config_schema import Settings

    return {(Settings.model_fields[k].alias or k): v for k, v in settings.items()}
