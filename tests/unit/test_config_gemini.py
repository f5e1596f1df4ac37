"""A Gemini CLI settings ``hooks`` block loads as a hookgate config (timeouts in ms, Gemini event names)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gateway.config import load_config
from gateway.config.gemini import command_for, is_gemini_block
from gateway.errors import ConfigError


def write(tmp_path: Path, doc: dict[str, Any], name: str = "settings.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def hook(command: str = "true", **fields: Any) -> dict[str, Any]:
    return {"type": "command", "command": command, **fields}


def test_a_gemini_settings_file_loads(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "hooks": {
                "BeforeTool": [
                    {
                        "matcher": "run_shell_command",
                        "sequential": True,
                        "hooks": [hook(name="deny-rm", timeout=10000), hook("echo 2")],
                    }
                ],
                "AfterAgent": [{"hooks": [hook(name="check")]}],
                "SessionStart": [{"matcher": "startup", "hooks": [hook(timeout=500)]}],
            },
        },
    )
    config = load_config([path], use_cache=False)
    [pre] = config.hooks["PreToolUse"]
    assert (pre.matcher, pre.dialect, pre.sequential) == ("run_shell_command", "gemini", True)
    first, second = pre.handlers
    assert (first.id, first.timeout, first.options["shell"], first.dialect) == ("deny-rm", 10.0, "bash", "gemini")
    assert second.timeout == 60.0  # Gemini's default, 60000 ms
    [stop] = config.hooks["Stop"]
    assert stop.matcher is None and stop.handlers[0].id == "check"
    assert config.hooks["SessionStart"][0].matcher == "startup"
    assert config.hooks["SessionStart"][0].handlers[0].timeout == 0.5
    assert config.warnings == []


def test_a_bare_block_and_hooks_config(tmp_path: Path) -> None:
    bare = write(tmp_path, {"BeforeTool": [{"hooks": [hook()]}], "AfterTool": [{"hooks": [hook()]}]}, "g.json")
    assert set(load_config([bare], use_cache=False).hooks) == {"PreToolUse", "PostToolUse"}
    path = write(
        tmp_path,
        {
            "hooksConfig": {"disabled": ["off"]},
            "hooks": {
                "SessionStart": [{"hooks": [hook(name="off"), hook(name="on")]}],
                "BeforeModel": [{"hooks": [hook()]}],
            },
        },
        "h.json",
    )
    config = load_config([path], use_cache=False)
    assert [h.id for h in config.hooks["SessionStart"][0].handlers] == ["on"]
    assert any("hooksConfig.disabled" in w for w in config.warnings)
    assert any("BeforeModel is a model-level Gemini event" in w for w in config.warnings)
    off = write(tmp_path, {"hooksConfig": {"enabled": False}, "hooks": {"BeforeTool": [{"hooks": [hook()]}]}}, "o.json")
    config = load_config([off], use_cache=False)
    assert config.hooks == {} and "hooksConfig.enabled is false" in config.warnings[0]


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"hooks": {"BeforeTool": [{"hooks": [{"type": "http", "url": "http://x"}]}]}}, 'type "command" only'),
        ({"hooks": {"BeforeTool": [{"hooks": [{"type": "command"}]}]}}, "BeforeTool[0].hooks[0].command"),
        ({"hooks": {"BeforeTool": [{"hooks": [hook(timeout=-1)]}]}}, "BeforeTool[0].hooks[0].timeout"),
        ({"hooks": {"BeforeTool": [{"hooks": [hook(env={"1BAD": "x"})]}]}}, "not a valid environment variable"),
        ({"hooks": {"BeforeTool": {"hooks": []}}}, "expected a list of hook definitions"),
        ({"hooks": {"BeforeTool": [{"hooks": [hook()]}], "AfterAgnt": []}}, "unknown Gemini CLI event 'AfterAgnt'"),
        ({"hooks": {"BeforeTool": [{"hooks": [hook()]}], "PreToolUse": []}}, "a Gemini CLI event"),
        ({"hooksConfig": {"disabled": "x"}, "hooks": {}}, "hooksConfig.disabled: expected a list"),
    ],
)
def test_errors_name_the_place(tmp_path: Path, doc: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config([write(tmp_path, doc)], use_cache=False)
    assert any(message in issue for issue in info.value.issues), info.value.issues


def test_long_timeouts_are_capped_with_a_warning(tmp_path: Path) -> None:
    config = load_config(
        [write(tmp_path, {"hooks": {"AfterTool": [{"hooks": [hook(timeout=3_600_000)]}]}})], use_cache=False
    )
    assert config.hooks["PostToolUse"][0].handlers[0].timeout == 900.0 and "over 900 s" in config.warnings[0]


def test_detection_and_command_exports() -> None:
    assert is_gemini_block({"BeforeTool": []}, {})
    assert not is_gemini_block({"SessionStart": []}, {})  # shared names alone: Claude Code's format
    assert is_gemini_block({"SessionStart": []}, {"hooksConfig": {}})
    assert command_for("./x.sh", None) == "./x.sh"
    assert command_for("$GEMINI_PROJECT_DIR/x.sh", {"TOKEN": "a b"}) == (
        "export GEMINI_PROJECT_DIR=\"${GEMINI_PROJECT_DIR:-$CLAUDE_PROJECT_DIR}\" TOKEN='a b'; $GEMINI_PROJECT_DIR/x.sh"
    )


def test_a_codex_hooks_json_is_claude_code_format(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook(timeout=10)]}], "Stop": [{"hooks": [hook()]}]}},
        "hooks.json",
    )
    config = load_config([path], use_cache=False)
    assert config.hooks["PreToolUse"][0].dialect == "claude" and config.hooks["PreToolUse"][0].handlers[0].timeout == 10
