"""The ``mcpServers`` / ``mcpConfig`` config sections (the servers ``mcp_tool`` handlers call), declared
through the handler registry (``handlers.base.SECTIONS``), so the config package never imports it by
name. Validated at load time into ``Compilation.mcp_servers``: name -> normalized server (snake_case;
``type`` stdio | http | sse, ``where``, ``base_dir``, ...), read by ``handlers.mcp_sessions``."""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import ValidationError

from gateway.config.documents import read_document
from gateway.config.schema import issues_under, suggest
from gateway.errors import ConfigError
from handlers.base import ConfigSection

if TYPE_CHECKING:
    from gateway.config.schema import Compilation

MCP_TYPES = {"stdio": "stdio", "http": "http", "streamable-http": "http", "streamableHttp": "http", "sse": "sse"}
"""Accepted ``type`` values of an MCP server and the transport each means."""
MCP_START_TIMEOUT = 30.0
"""Default ``startTimeout``: seconds a server may take to start and finish the MCP handshake."""
MCP_MAX_SESSIONS = 16
"""Largest ``sessions`` (warm sessions, for a stdio server processes, kept to one server)."""


def _mcp_models() -> tuple[Any, Any]:
    from typing import Literal

    from pydantic import BaseModel, ConfigDict, Field, field_validator

    class McpServer(BaseModel):
        """Fields of every server: Claude Code's ``.mcp.json`` shape plus hookgate's ``allowedEnvVars``
        (names that ``${VAR}`` may read from the environment), ``startTimeout`` (seconds), ``sessions``
        (how many warm sessions ``hookgate serve`` may keep to the server: 1-16) and ``protocol``
        (``legacy``: the initialize handshake; ``auto``: the SDK probes for the 2026 protocol first)."""

        model_config = ConfigDict(extra="allow", populate_by_name=True)
        allowed_env_vars: list[str] = Field(default_factory=list, alias="allowedEnvVars")
        start_timeout: float = Field(MCP_START_TIMEOUT, alias="startTimeout", gt=0, lt=1000)
        sessions: int = Field(1, ge=1, le=MCP_MAX_SESSIONS, strict=True)
        protocol: Literal["legacy", "auto"] = "legacy"

    class StdioServer(McpServer):
        type: Literal["stdio"] = "stdio"
        command: str = Field(min_length=1)
        args: list[str] = Field(default_factory=list)
        env: dict[str, str] = Field(default_factory=dict)
        cwd: str | None = Field(None, min_length=1)

    class RemoteServer(McpServer):
        type: Literal["http", "sse"]
        url: str
        headers: dict[str, str] = Field(default_factory=dict)

        @field_validator("url")
        @classmethod
        def _http_url(cls, value: str) -> str:
            if not value.startswith(("http://", "https://")) or len(value.split("://", 1)[1]) == 0:
                raise ValueError(
                    f"expected an http:// or https:// URL, got {value!r} (no ${{VAR}} "
                    "substitution in url, as for http hooks)"
                )
            return value

    return StdioServer, RemoteServer


def _mcp_server(compiler: Compilation, where: str, base_dir: str, raw: Any) -> dict[str, Any] | None:
    """Validate one server entry; the normalized dict (snake_case) or None (issues recorded)."""
    if not isinstance(raw, dict):
        compiler.issues.append(
            f"{where}: expected an object (command/args/env for a stdio server, "
            f"or type and url for http and sse), got {type(raw).__name__}"
        )
        return None
    kind = raw.get("type")
    if kind is None:
        if "command" in raw:
            kind = "stdio"
        elif "url" in raw:
            compiler.issues.append(f"{where}.type: required next to a url: 'http' (streamable HTTP) or 'sse'")
            return None
        else:
            compiler.issues.append(
                f"{where}: expected 'command' (a stdio server) or 'type' and 'url' (an http or sse server)"
            )
            return None
    norm = MCP_TYPES.get(kind) if isinstance(kind, str) else None
    if norm is None:
        compiler.issues.append(f"{where}.type: expected stdio, http or sse, got {kind!r}")
        return None
    stdio_model, remote_model = _mcp_models()
    model = stdio_model if norm == "stdio" else remote_model
    try:
        server = model.model_validate({**raw, "type": norm})
    except ValidationError as exc:
        compiler.issues.extend(issues_under(where, exc))
        return None
    known = sorted(f.alias or n for n, f in model.model_fields.items())
    for key in server.model_extra or {}:
        article = "a" if norm == "stdio" else "an"
        compiler.warnings.append(
            f"{where}.{key}: unknown field for {article} {norm} MCP server, ignored{suggest(key, known)}"
        )
    from handlers.mcp_launch import PLACEHOLDERS, env_refs

    allowed = set(server.allowed_env_vars)
    if norm == "stdio":
        texts = [
            ("command", server.command, False),
            *((f"args[{i}]", a, False) for i, a in enumerate(server.args)),
            *((f"env.{k}", v, False) for k, v in server.env.items()),
            ("cwd", server.cwd or "", False),
        ]
    else:
        texts = [(f"headers.{k}", v, True) for k, v in server.headers.items()]
    for field, text, plain in texts:
        for name in env_refs(text, plain=plain):
            if name not in allowed and name not in PLACEHOLDERS:
                compiler.warnings.append(
                    f"{where}.{field}: ${{{name}}} is not listed in allowedEnvVars, so it "
                    "becomes empty; list it to pass the environment variable"
                )
    entry: dict[str, Any] = {
        "type": norm,
        "where": where,
        "base_dir": base_dir,
        "allowed_env_vars": list(server.allowed_env_vars),
        "start_timeout": server.start_timeout,
        "sessions": server.sessions,
        "protocol": server.protocol,
    }
    if norm == "stdio":
        entry.update(command=server.command, args=list(server.args), env=dict(server.env), cwd=server.cwd)
    else:
        entry.update(url=server.url, headers=dict(server.headers))
    return entry


class McpSection(ConfigSection):
    """``mcpServers`` (later files win by name) and ``mcpConfig``; every ``mcp_tool`` names a server."""

    keys: ClassVar[tuple[str, ...]] = ("mcpServers", "mcpConfig")

    def compile(self, compiler: Compilation, path: str, base_dir: str, doc: dict[str, Any]) -> None:
        """``mcpServers`` (later files win by name) and ``mcpConfig`` (a ``.mcp.json`` path or a list of them;
        its servers never replace one defined in ``mcpServers``). Read files are recorded in ``depends``."""
        servers = doc.get("mcpServers")
        if servers is not None:
            if not isinstance(servers, dict):
                compiler.issues.append(
                    f"{path}: mcpServers: expected an object keyed by server name, got {type(servers).__name__}"
                )
                compiler.mcp_invalid.add("*")  # every name it may have meant: reported here, not as missing
            else:
                for name, raw in servers.items():
                    entry = _mcp_server(compiler, f"{path}: mcpServers.{name}", base_dir, raw)
                    if entry is not None:
                        compiler.mcp_servers[str(name)] = entry
                        compiler.mcp_invalid.discard(str(name))
                    else:
                        compiler.mcp_invalid.add(str(name))
        if "mcpConfig" not in doc:
            return
        refs = doc["mcpConfig"]
        refs = [refs] if isinstance(refs, str) else refs
        if not isinstance(refs, list) or not refs or not all(isinstance(r, str) and r for r in refs):
            compiler.issues.append(
                f"{path}: mcpConfig: expected the path of a .mcp.json file (or a list of paths), "
                f"got {doc['mcpConfig']!r}"
            )
            return
        explicit = set(servers) if isinstance(servers, dict) else set()
        for ref in refs:
            full = os.path.normpath(os.path.join(base_dir, os.path.expanduser(ref)))
            try:
                mcp_doc = read_document(full)
            except ConfigError as exc:
                compiler.issues.append(f"{path}: mcpConfig: {exc}")
                continue
            depends = getattr(compiler, "depends", None)
            if isinstance(depends, list):
                depends.append(full)
            entries = mcp_doc.get("mcpServers") if isinstance(mcp_doc, dict) else None
            if not isinstance(entries, dict):
                compiler.issues.append(f"{path}: mcpConfig: {full} has no mcpServers object")
                continue
            for name, raw in entries.items():
                if name in explicit or name in compiler.mcp_servers:
                    continue
                entry = _mcp_server(compiler, f"{full}: mcpServers.{name}", os.path.dirname(full), raw)
                if entry is not None:
                    compiler.mcp_servers[str(name)] = entry
                else:
                    compiler.mcp_invalid.add(str(name))

    def finish(self, compiler: Compilation) -> None:
        """Every ``mcp_tool`` handler names a configured server; a stdio server it uses can be started."""
        servers = compiler.mcp_servers
        checked: set[str] = set()
        for groups in compiler.hooks.values():
            for group in groups:
                for handler in group["handlers"]:
                    if handler["type"] != "mcp_tool":
                        continue
                    name = handler["options"].get("server")
                    if name not in servers and (name in compiler.mcp_invalid or "*" in compiler.mcp_invalid):
                        continue  # its entry is reported invalid already: the config fails on that line
                    if name not in servers:
                        configured = f"configured: {', '.join(sorted(servers))}" if servers else "none is configured"
                        hint = suggest(str(name), list(servers))
                        compiler.issues.append(
                            f"{handler['where']}.server: no MCP server named {name!r} in "
                            f"mcpServers or mcpConfig ({configured}){hint}"
                        )
                        continue
                    server = servers[name]
                    if server["type"] != "stdio" or name in checked:
                        continue
                    checked.add(name)
                    from handlers.mcp_launch import stdio_launch

                    command = stdio_launch(server)[0]
                    if "$" in command:
                        continue
                    found = os.path.exists(command) if "/" in command else shutil.which(command) is not None
                    if not found:
                        compiler.issues.append(
                            f"{server['where']}.command: {server['command']!r} not found "
                            f"(resolved to {command}); every mcp_tool handler using {name!r} "
                            "would fail"
                        )
