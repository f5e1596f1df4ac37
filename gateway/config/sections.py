"""hookgate's own config sections next to ``hooks``: ``settings``, ``mcpServers``/``mcpConfig``, ``llm``,
``guards`` (in ``gateway.config.guards``);
``channels`` (approval channels: ``gateway.approvals.config``).

Each section is validated with its pydantic model and stored normalized on the compiler. Keys that
Claude Code settings files carry (``permissions``, ``env``, ``model``, ...) are ignored silently in
a file named ``settings*.json``; elsewhere an unknown top-level key is a warning.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

if TYPE_CHECKING:
    from gateway.config.compiler import Compiler

KIRO_AGENT_KEYS = {"name", "description", "prompt", "tools", "allowedTools", "toolsSettings", "resources",
                   "toolAliases", "useLegacyMcpJson", "model", "$schema", "welcomeMessage", "keyboardShortcut"}


def compile_sections(compiler: Compiler, path: str, base_dir: str, doc: dict[str, Any]) -> None:
    """Validate the non-hook sections of one config document into ``compiler``."""
    from gateway.config.schema import GATEWAY_SECTIONS, Settings, pydantic_issues, suggest

    if "settings" in doc:
        try:
            merged = {**_aliased(compiler.settings), **(doc["settings"] or {})}
            compiler.settings = Settings.model_validate(merged).model_dump()
        except (ValidationError, TypeError) as exc:
            if isinstance(exc, ValidationError):
                compiler.issues.extend(f"{path}: settings.{i}" for i in pydantic_issues(exc, ""))
            else:
                compiler.issues.append(f"{path}: settings: expected an object")
    if "mcpServers" in doc or "mcpConfig" in doc:
        _compile_mcp(compiler, path, base_dir, doc)
    if "llm" in doc:
        _compile_llm(compiler, path, doc["llm"])
    if "guards" in doc:
        from gateway.config.guards import compile_guards

        compile_guards(compiler, path, doc["guards"])
    if "agents" in doc:
        from gateway.config.agents import compile_agents

        compile_agents(compiler, path, base_dir, doc["agents"])
    if "channels" in doc:
        from gateway.approvals.config import compile_section

        compile_section(compiler, path, doc["channels"])
    if os.path.basename(path).startswith("settings") or (set(doc) & KIRO_AGENT_KEYS):
        return
    for key in doc:
        if key not in GATEWAY_SECTIONS:
            compiler.warnings.append(f"{path}: {key}: unknown top-level key, ignored"
                                     f"{suggest(str(key), list(GATEWAY_SECTIONS))}")


def _aliased(settings: dict[str, Any]) -> dict[str, Any]:
    from gateway.config.schema import Settings

    return {(Settings.model_fields[k].alias or k): v for k, v in settings.items()}


# ---------------------------------------------------------------------------- llm

def _llm_models() -> tuple[Any, Any]:
    from typing import Literal

    from pydantic import BaseModel, ConfigDict, Field

    class Provider(BaseModel):
        """One ``llm.providers.<name>`` entry (camelCase in the file, snake_case once normalized)."""

        model_config = ConfigDict(extra="allow", populate_by_name=True)
        type: Literal["anthropic", "openai"] | None = None
        model: str | None = Field(None, min_length=1)
        base_url: str | None = Field(None, alias="baseUrl", pattern=r"^https?://")
        api_key_env: str | None = Field(None, alias="apiKeyEnv", min_length=1)
        key_required: bool = Field(True, alias="keyRequired")
        max_tokens: int = Field(1024, alias="maxTokens", gt=0, le=200_000)
        max_retries: int = Field(2, alias="maxRetries", ge=0, le=10)
        structured_output: Literal["tool", "json_schema", "json_object", "none"] | None = Field(
            None, alias="structuredOutput")
        stream: bool = False
        headers: dict[str, str] = Field(default_factory=dict)

    class Llm(BaseModel):
        model_config = ConfigDict(extra="allow", populate_by_name=True)
        default: str | None = Field(None, min_length=1)
        providers: dict[str, dict[str, Any]] = Field(default_factory=dict)

    return Llm, Provider


def _compile_llm(compiler: Compiler, path: str, raw: Any) -> None:
    """Validate one file's ``llm`` section and merge it (providers by name; later files win)."""
    from handlers.llm.base import BUILTIN_PROVIDERS, DEFAULT_KEY_ENV, DEFAULT_MODEL, DEFAULT_STRUCTURED

    if not isinstance(raw, dict):
        compiler.issues.append(f"{path}: llm: expected an object with 'default' and 'providers'")
        return
    llm_model, provider_model = _llm_models()
    section = compiler.validated(llm_model, raw, f"{path}: llm", known=["default", "providers"])
    if section is None:
        return
    llm = compiler.llm or {"default": "anthropic", "providers": {**BUILTIN_PROVIDERS}}
    if section.default is not None:
        llm["default"] = section.default
    for name, entry in section.providers.items():
        where = f"{path}: llm.providers.{name}"
        provider = compiler.validated(provider_model, entry, where, unknown="provider field")
        if provider is None:
            continue
        kind = provider.type or (name if name in DEFAULT_KEY_ENV else None)
        if kind is None:
            compiler.issues.append(f"{where}.type: required (anthropic or openai; an OpenAI-compatible "
                                   "server such as Ollama, vLLM or llama.cpp is type openai with a baseUrl)")
            continue
        model = provider.model or DEFAULT_MODEL.get(kind)
        if model is None:
            compiler.issues.append(f"{where}.model: required for an openai provider (e.g. gpt-5-mini, "
                                   "or the model name your local server serves)")
            continue
        if provider.stream and kind != "anthropic":
            compiler.issues.append(f"{where}.stream: only anthropic providers stream; remove it")
            continue
        structured = provider.structured_output or DEFAULT_STRUCTURED[kind]
        if structured == "json_object" and kind != "openai":
            compiler.issues.append(f"{where}.structuredOutput: json_object is an OpenAI mode; use tool, "
                                   "json_schema or none")
            continue
        llm["providers"][name] = {
            "type": kind, "model": model, "base_url": provider.base_url,
            "api_key_env": provider.api_key_env or DEFAULT_KEY_ENV[kind], "key_required": provider.key_required,
            "max_tokens": provider.max_tokens, "max_retries": provider.max_retries,
            "structured_output": structured, "stream": provider.stream, "headers": dict(provider.headers)}
    compiler.llm = llm


def finish_sections(compiler: Compiler) -> None:
    """Cross-file checks, run once every file is read: each prompt/agent handler names a provider
    that exists. (A missing API key is checked by ``hookgate validate``, not here: the loaded config
    is cached and must not depend on the environment.)"""
    from handlers.base import is_judgment_type
    from handlers.llm.base import BUILTIN_PROVIDERS

    if not compiler.llm:
        compiler.llm = {"default": "anthropic", "providers": {**BUILTIN_PROVIDERS}}
    providers = compiler.llm["providers"]
    default = compiler.llm["default"]
    for groups in compiler.hooks.values():
        for group in groups:
            for handler in group["handlers"]:
                if not is_judgment_type(handler["type"]):
                    continue
                name = handler["options"].get("provider")
                if name is None and default not in providers:
                    compiler.issues.append(f"{handler['where']}: uses the default LLM provider, but llm.default "
                                           f"names {default!r}, which is not in llm.providers "
                                           f"({', '.join(sorted(providers))})")
                elif name is not None and name not in providers:
                    compiler.issues.append(f"{handler['where']}.provider: unknown LLM provider {name!r} "
                                           f"(expected one of: {', '.join(sorted(providers))})")
    _finish_mcp(compiler)
    from gateway.approvals.config import finish_section

    finish_section(compiler)


# ---------------------------------------------------------------------------- mcpServers / mcpConfig

MCP_TYPES = {"stdio": "stdio", "http": "http", "streamable-http": "http", "streamableHttp": "http", "sse": "sse"}
"""Accepted ``type`` values of an MCP server and the transport each means."""
MCP_START_TIMEOUT = 30.0
"""Default ``startTimeout``: seconds a server may take to start and finish the MCP handshake."""


def _mcp_models() -> tuple[Any, Any]:
    from typing import Literal

    from pydantic import BaseModel, ConfigDict, Field, field_validator

    class McpServer(BaseModel):
        """Fields of every server: Claude Code's ``.mcp.json`` shape plus hookgate's ``allowedEnvVars``
        (names that ``${VAR}`` may read from the environment) and ``startTimeout`` (seconds)."""

        model_config = ConfigDict(extra="allow", populate_by_name=True)
        allowed_env_vars: list[str] = Field(default_factory=list, alias="allowedEnvVars")
        start_timeout: float = Field(MCP_START_TIMEOUT, alias="startTimeout", gt=0, lt=1000)

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
                raise ValueError(f"expected an http:// or https:// URL, got {value!r} (no ${{VAR}} "
                                 "substitution in url, as for http hooks)")
            return value

    return StdioServer, RemoteServer


def _mcp_server(compiler: Compiler, where: str, base_dir: str, raw: Any) -> dict[str, Any] | None:
    """Validate one server entry; the normalized dict (snake_case) or None (issues recorded)."""
    from gateway.config.schema import pydantic_issues, suggest
    from handlers.mcp_sessions import PLACEHOLDERS, env_refs

    if not isinstance(raw, dict):
        compiler.issues.append(f"{where}: expected an object (command/args/env for a stdio server, "
                               f"or type and url for http and sse), got {type(raw).__name__}")
        return None
    kind = raw.get("type")
    if kind is None:
        if "command" in raw:
            kind = "stdio"
        elif "url" in raw:
            compiler.issues.append(f"{where}.type: required next to a url: 'http' (streamable HTTP) or 'sse'")
            return None
        else:
            compiler.issues.append(f"{where}: expected 'command' (a stdio server) or 'type' and 'url' "
                                   "(an http or sse server)")
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
        compiler.issues.extend(f"{where}.{i}" for i in pydantic_issues(exc, ""))
        return None
    known = sorted(f.alias or n for n, f in model.model_fields.items())
    for key in server.model_extra or {}:
        article = "a" if norm == "stdio" else "an"
        compiler.warnings.append(f"{where}.{key}: unknown field for {article} {norm} MCP server, ignored"
                                 f"{suggest(key, known)}")
    allowed = set(server.allowed_env_vars)
    if norm == "stdio":
        texts = [("command", server.command, False), *((f"args[{i}]", a, False) for i, a in enumerate(server.args)),
                 *((f"env.{k}", v, False) for k, v in server.env.items()), ("cwd", server.cwd or "", False)]
    else:
        texts = [(f"headers.{k}", v, True) for k, v in server.headers.items()]
    for field, text, plain in texts:
        for name in env_refs(text, plain=plain):
            if name not in allowed and name not in PLACEHOLDERS:
                compiler.warnings.append(f"{where}.{field}: ${{{name}}} is not listed in allowedEnvVars, so it "
                                         "becomes empty; list it to pass the environment variable")
    entry: dict[str, Any] = {"type": norm, "where": where, "base_dir": base_dir,
                             "allowed_env_vars": list(server.allowed_env_vars),
                             "start_timeout": server.start_timeout}
    if norm == "stdio":
        entry.update(command=server.command, args=list(server.args), env=dict(server.env), cwd=server.cwd)
    else:
        entry.update(url=server.url, headers=dict(server.headers))
    return entry


def _compile_mcp(compiler: Compiler, path: str, base_dir: str, doc: dict[str, Any]) -> None:
    """``mcpServers`` (later files win by name) and ``mcpConfig`` (a ``.mcp.json`` path or a list of them;
    its servers never replace one defined in ``mcpServers``). Read files are recorded in ``depends``."""
    from gateway.config.schema import read_document
    from gateway.errors import ConfigError

    servers = doc.get("mcpServers")
    if servers is not None:
        if not isinstance(servers, dict):
            compiler.issues.append(f"{path}: mcpServers: expected an object keyed by server name, "
                                   f"got {type(servers).__name__}")
        else:
            for name, raw in servers.items():
                entry = _mcp_server(compiler, f"{path}: mcpServers.{name}", base_dir, raw)
                if entry is not None:
                    compiler.mcp_servers[str(name)] = entry
    if "mcpConfig" not in doc:
        return
    refs = doc["mcpConfig"]
    refs = [refs] if isinstance(refs, str) else refs
    if not isinstance(refs, list) or not refs or not all(isinstance(r, str) and r for r in refs):
        compiler.issues.append(f"{path}: mcpConfig: expected the path of a .mcp.json file (or a list of paths), "
                               f"got {doc['mcpConfig']!r}")
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


def _finish_mcp(compiler: Compiler) -> None:
    """Every ``mcp_tool`` handler names a configured server; a stdio server it uses can be started."""
    import shutil

    from gateway.config.schema import suggest
    from handlers.mcp_sessions import stdio_launch

    servers = compiler.mcp_servers
    checked: set[str] = set()
    for groups in compiler.hooks.values():
        for group in groups:
            for handler in group["handlers"]:
                if handler["type"] != "mcp_tool":
                    continue
                name = handler["options"].get("server")
                if name not in servers:
                    configured = f"configured: {', '.join(sorted(servers))}" if servers else "none is configured"
                    hint = suggest(str(name), list(servers))
                    compiler.issues.append(f"{handler['where']}.server: no MCP server named {name!r} in "
                                           f"mcpServers or mcpConfig ({configured}){hint}")
                    continue
                server = servers[name]
                if server["type"] != "stdio" or name in checked:
                    continue
                checked.add(name)
                command = stdio_launch(server)[0]
                if "$" in command:
                    continue
                found = os.path.exists(command) if "/" in command else shutil.which(command) is not None
                if not found:
                    compiler.issues.append(f"{server['where']}.command: {server['command']!r} not found (resolved to "
                                           f"{command}); every mcp_tool handler using {name!r} would fail")
