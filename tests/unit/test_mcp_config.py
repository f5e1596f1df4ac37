"""The mcpServers / mcpConfig sections and mcp_tool handler fields: validation messages, normalization,
environment interpolation, and the config cache following a referenced .mcp.json."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from gateway.config import load_config
from gateway.errors import ConfigError
from handlers.mcp_sessions import expand, stdio_launch

PY = sys.executable


def _write(folder: Path, doc: dict[str, Any], name: str = "hookgate.json") -> str:
    path = folder / name
    path.write_text(json.dumps(doc))
    return str(path)


def _hook(server: str = "policy", **fields: Any) -> dict[str, Any]:
    return {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "mcp_tool", "server": server, "tool": "check_command", **fields}]}
        ]
    }


def _issues(path: str) -> list[str]:
    """What `hookgate validate` reports: schema errors (ConfigError), else handlers that cannot run."""
    try:
        broken = load_config([path], use_cache=False).broken
    except ConfigError as err:
        return err.issues
    assert broken, "expected validation problems"
    return broken


def test_servers_are_normalized(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {
            "mcpServers": {
                "policy": {"command": PY, "args": ["-m", "x"], "env": {"A": "1"}, "cwd": "sub"},
                "web": {
                    "type": "http",
                    "url": "https://mcp.example.com/mcp",
                    "headers": {"Authorization": "Bearer $T"},
                    "allowedEnvVars": ["T"],
                    "startTimeout": 5,
                },
                "events": {"type": "sse", "url": "http://127.0.0.1:8000/sse", "sessions": 3, "protocol": "auto"},
                "modern": {"type": "streamable-http", "url": "http://127.0.0.1:8000/mcp"},
            },
            "hooks": _hook(),
        },
    )
    config = load_config([path], use_cache=False)
    policy = config.mcp_servers["policy"]
    assert policy == {
        "type": "stdio",
        "command": PY,
        "args": ["-m", "x"],
        "env": {"A": "1"},
        "cwd": "sub",
        "allowed_env_vars": [],
        "start_timeout": 30.0,
        "sessions": 1,
        "protocol": "legacy",
        "base_dir": str(tmp_path),
        "where": f"{path}: mcpServers.policy",
    }
    assert config.mcp_servers["web"]["headers"] == {"Authorization": "Bearer $T"}
    assert config.mcp_servers["web"]["start_timeout"] == 5
    assert config.mcp_servers["web"]["sessions"] == 1
    assert config.mcp_servers["events"]["type"] == "sse"
    assert (config.mcp_servers["events"]["sessions"], config.mcp_servers["events"]["protocol"]) == (3, "auto")
    assert config.mcp_servers["modern"]["type"] == "http"
    assert config.warnings == []


@pytest.mark.parametrize(
    ("server", "issue"),
    [
        (
            {"args": ["x"]},
            "mcpServers.policy: expected 'command' (a stdio server) or 'type' and 'url' (an http or sse server)",
        ),
        ({"command": 3}, "mcpServers.policy.command: Input should be a valid string, got int"),
        ({"command": ""}, "mcpServers.policy.command: String should have at least 1 character"),
        ({"command": PY, "args": "x"}, "mcpServers.policy.args: Input should be a valid list, got str"),
        ({"command": PY, "env": {"PORT": 8080}}, "mcpServers.policy.env.PORT: Input should be a valid string, got int"),
        (
            {"type": "websocket", "url": "ws://x"},
            "mcpServers.policy.type: expected stdio, http or sse, got 'websocket'",
        ),
        ({"url": "http://x/mcp"}, "mcpServers.policy.type: required next to a url: 'http' (streamable HTTP) or 'sse'"),
        (
            {"type": "http", "url": "ftp://x"},
            "mcpServers.policy.url: expected an http:// or https:// URL, got 'ftp://x'",
        ),
        ({"type": "http"}, "mcpServers.policy.url: Field required"),
        ({"command": PY, "startTimeout": 0}, "mcpServers.policy.startTimeout: Input should be greater than 0"),
        ({"command": PY, "sessions": 0}, "mcpServers.policy.sessions: Input should be greater than or equal to 1"),
        ({"command": PY, "sessions": 17}, "mcpServers.policy.sessions: Input should be less than or equal to 16"),
        ({"command": PY, "sessions": "2"}, "mcpServers.policy.sessions: Input should be a valid integer"),
        ({"command": PY, "sessions": True}, "mcpServers.policy.sessions: Input should be a valid integer"),
        (
            {"type": "http", "url": "http://x/mcp", "protocol": "2026"},
            "mcpServers.policy.protocol: Input should be 'legacy' or 'auto'",
        ),
        (
            "python",
            "mcpServers.policy: expected an object (command/args/env for a stdio server, or type and url for "
            "http and sse), got str",
        ),
    ],
)
def test_server_errors_name_the_field(tmp_path: Path, server: Any, issue: str) -> None:
    path = _write(tmp_path, {"mcpServers": {"policy": server}})
    issues = _issues(path)
    assert issues[0].startswith(f"{path}: {issue}"), issues


def test_unknown_fields_and_unlisted_env_vars_are_warnings(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {
            "mcpServers": {
                "a": {"command": PY, "arg": ["x"], "env": {"KEY": "${SECRET_KEY}", "DIR": "${CLAUDE_PROJECT_DIR}"}},
                "b": {
                    "type": "http",
                    "url": "http://h/mcp",
                    "headers": {"X": "$TOKEN", "Y": "${OK}"},
                    "allowedEnvVars": ["OK"],
                    "oauth": {},
                },
            }
        },
    )
    warnings = [w for w in load_config([path], use_cache=False).warnings if "no hooks configured" not in w]
    assert warnings == [
        f"{path}: mcpServers.a.arg: unknown field for a stdio MCP server, ignored (did you mean 'args'?)",
        f"{path}: mcpServers.a.env.KEY: ${{SECRET_KEY}} is not listed in allowedEnvVars, so it becomes empty; "
        "list it to pass the environment variable",
        f"{path}: mcpServers.b.oauth: unknown field for an http MCP server, ignored",
        f"{path}: mcpServers.b.headers.X: ${{TOKEN}} is not listed in allowedEnvVars, so it becomes empty; "
        "list it to pass the environment variable",
    ]


def test_mcp_tool_fields(tmp_path: Path) -> None:
    servers = {"policy": {"command": PY}}
    assert (
        load_config(
            [_write(tmp_path, {"mcpServers": servers, "hooks": _hook(input={"c": "${tool_input.command}"})})],
            use_cache=False,
        ).handler_count()
        == 1
    )
    where = f"{tmp_path / 'hookgate.json'}: hooks.PreToolUse[0].hooks[0]"
    path = _write(tmp_path, {"mcpServers": servers, "hooks": _hook(tool="", input={"c": "${tool input}"})})
    assert _issues(path) == [f"{where}.tool: String should have at least 1 character"]
    path = _write(tmp_path, {"mcpServers": servers, "hooks": _hook(input={"c": ["${tool_input.x"]})})
    assert _issues(path) == [
        f"{where}: input.c[0]: unclosed or nested '${{' in '${{tool_input.x' (write $${{ for a literal ${{)"
    ]
    path = _write(tmp_path, {"mcpServers": servers, "hooks": _hook(input="x")})
    assert _issues(path) == [f"{where}.input: Input should be a valid dictionary, got str"]


def test_mcp_tool_must_name_a_configured_server(tmp_path: Path) -> None:
    path = _write(tmp_path, {"mcpServers": {"policy": {"command": PY}}, "hooks": _hook("polciy")})
    assert _issues(path) == [
        f"{path}: hooks.PreToolUse[0].hooks[0].server: no MCP server named 'polciy' in "
        "mcpServers or mcpConfig (configured: policy) (did you mean 'policy'?)"
    ]
    path = _write(tmp_path, {"hooks": _hook()})
    assert "(none is configured)" in _issues(path)[0]


def test_a_server_entry_reported_invalid_is_not_reported_missing_too(tmp_path: Path) -> None:
    path = _write(tmp_path, {"mcpServers": {"policy": {"command": 5}}, "hooks": _hook()})
    assert _issues(path) == [f"{path}: mcpServers.policy.command: Input should be a valid string, got int"]
    dot_mcp = tmp_path / ".mcp.json"
    dot_mcp.write_text(json.dumps({"mcpServers": {"policy": {"command": PY, "sessions": 0}}}))
    path = _write(tmp_path, {"mcpConfig": str(dot_mcp), "hooks": _hook()}, "viaconfig.json")
    (issue,) = _issues(path)
    assert issue.startswith(f"{dot_mcp}: mcpServers.policy.") and "no MCP server named" not in issue
    path = _write(tmp_path, {"mcpServers": ["policy"], "hooks": _hook()}, "listed.json")  # invalid as a whole
    assert _issues(path) == [f"{path}: mcpServers: expected an object keyed by server name, got list"]


def test_the_server_may_be_defined_in_another_file(tmp_path: Path) -> None:
    hooks = _write(tmp_path, {"hooks": _hook()}, "hooks.json")
    servers = _write(tmp_path, {"mcpServers": {"policy": {"command": PY}}}, "servers.json")
    assert load_config([hooks, servers], use_cache=False).mcp_servers["policy"]["command"] == PY


def test_a_used_stdio_server_must_be_startable(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {
            "mcpServers": {"policy": {"command": "no-such-mcp-server-xyz"}, "unused": {"command": "./missing.sh"}},
            "hooks": _hook(),
        },
    )
    assert _issues(path) == [
        f"{path}: mcpServers.policy.command: 'no-such-mcp-server-xyz' not found (resolved to "
        "no-such-mcp-server-xyz); every mcp_tool handler using 'policy' would fail"
    ]


# ---------------------------------------------------------------------------- mcpConfig


def test_mcp_config_reads_a_dot_mcp_json(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    _write(
        tmp_path / "proj",
        {
            "mcpServers": {
                "policy": {"command": PY, "args": ["a"]},
                "other": {"type": "http", "url": "http://127.0.0.1:1/mcp"},
            }
        },
        ".mcp.json",
    )
    path = _write(tmp_path, {"mcpConfig": "proj/.mcp.json", "mcpServers": {"other": {"command": PY}}, "hooks": _hook()})
    config = load_config([path], use_cache=False)
    assert config.mcp_servers["policy"]["where"] == f"{tmp_path / 'proj' / '.mcp.json'}: mcpServers.policy"
    assert config.mcp_servers["policy"]["base_dir"] == str(tmp_path / "proj")
    assert config.mcp_servers["other"]["type"] == "stdio"  # mcpServers wins over the same name in mcpConfig


def test_the_loaded_config_records_its_mcp_config_files_also_from_the_cache(tmp_path: Path) -> None:
    # hookgate serve watches them (gateway/serve/reload.py): an edited .mcp.json is reloaded
    _write(tmp_path, {"mcpServers": {"policy": {"command": PY}}}, ".mcp.json")
    path = _write(tmp_path, {"mcpConfig": ".mcp.json", "hooks": _hook()})
    compiled, cached = load_config([path]), load_config([path])  # the second is read from the load cache
    assert compiled.depends == cached.depends == [str(tmp_path / ".mcp.json")]
    plain = {"mcpServers": {"policy": {"command": PY}}, "hooks": _hook()}
    assert load_config([_write(tmp_path, plain, "plain.json")], use_cache=False).depends == []


def test_mcp_config_errors(tmp_path: Path) -> None:
    path = _write(tmp_path, {"mcpConfig": "missing.json"})
    assert _issues(path)[0].startswith(f"{path}: mcpConfig: {tmp_path / 'missing.json'}: cannot read config")
    _write(tmp_path, {"servers": {}}, ".mcp.json")
    path = _write(tmp_path, {"mcpConfig": ".mcp.json"})
    assert _issues(path) == [f"{path}: mcpConfig: {tmp_path / '.mcp.json'} has no mcpServers object"]
    _write(tmp_path, {"mcpServers": {"bad": {"type": "http"}}}, ".mcp.json")
    assert _issues(path) == [f"{tmp_path / '.mcp.json'}: mcpServers.bad.url: Field required"]
    path = _write(tmp_path, {"mcpConfig": 3})
    assert _issues(path) == [f"{path}: mcpConfig: expected the path of a .mcp.json file (or a list of paths), got 3"]


def test_the_config_cache_follows_the_referenced_mcp_json(tmp_path: Path) -> None:
    mcp_json = tmp_path / ".mcp.json"
    mcp_json.write_text(json.dumps({"mcpServers": {"one": {"command": PY}}}))
    path = _write(tmp_path, {"mcpConfig": ".mcp.json"})
    assert list(load_config([path]).mcp_servers) == ["one"]
    assert list(load_config([path]).mcp_servers) == ["one"]  # from the cache
    mcp_json.write_text(json.dumps({"mcpServers": {"one": {"command": PY}, "two": {"command": PY}}}))
    os.utime(mcp_json, ns=(1, 1))
    assert sorted(load_config([path]).mcp_servers) == ["one", "two"]


# ---------------------------------------------------------------------------- interpolation at start time


def test_expand_substitutes_only_allowed_env_vars(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKEN", "t0k")
    monkeypatch.setenv("OTHER", "nope")
    assert expand("Bearer ${TOKEN} $TOKEN ${OTHER}|$OTHER", {}, {"TOKEN"}, plain=True) == "Bearer t0k t0k |"
    assert expand("$TOKEN ${TOKEN}", {}, {"TOKEN"}) == "$TOKEN t0k"  # braces only outside headers
    assert expand("${HOOKGATE_PYTHON} ${TOKEN}", {"HOOKGATE_PYTHON": "/py"}, set()) == "/py "


def test_stdio_launch_resolves_placeholders_and_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", "/proj")
    monkeypatch.setenv("API_KEY", "k")
    server = {
        "type": "stdio",
        "command": "./bin/server",
        "args": ["${HOOKGATE_CONFIG_DIR}/x", "${API_KEY}"],
        "env": {"KEY": "${API_KEY}", "ROOT": "${CLAUDE_PROJECT_DIR}"},
        "cwd": "data",
        "allowed_env_vars": ["API_KEY"],
        "base_dir": str(tmp_path),
    }
    command, args, env, cwd = stdio_launch(server)
    assert command == "/proj/bin/server"
    assert args == [f"{tmp_path}/x", "k"]
    assert env == {"KEY": "k", "ROOT": "/proj"}
    assert cwd == str(tmp_path / "data")
