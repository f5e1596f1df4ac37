"""Claude Code's ``"disableAllHooks": true`` (and Gemini's ``hooksConfig`` switches): ``install`` warns
that the hooks it writes will not run, and a settings file loaded as a policy runs none of its hooks,
as Claude Code does. Real ``hookgate`` subprocesses."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from gateway.config import load_config
from tests.conftest import run_hookgate

HG = str(Path(sys.executable).with_name("hookgate"))
RM = {
    "hook_event_name": "PreToolUse",
    "session_id": "s",
    "cwd": "/tmp",
    "tool_name": "Bash",
    "tool_use_id": "t",
    "tool_input": {"command": "rm -rf /"},
}
DENY_ALL = {"PreToolUse": [{"hooks": [{"type": "command", "command": "echo no >&2; exit 2"}]}]}


def _settings(tmp_path: Path, folder: str, doc: dict[str, Any]) -> Path:
    path = tmp_path / folder / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path


def test_install_claude_warns_once_that_disable_all_hooks_turns_the_hooks_off(tmp_path: Path) -> None:
    settings = _settings(tmp_path, ".claude", {"disableAllHooks": True})
    proc = run_hookgate(["install", "claude", "--project", str(tmp_path), "--hookgate", HG])
    assert proc.returncode == 0 and proc.stdout.startswith(f"wrote {settings}"), proc.stdout + proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith(f'warning: {settings}: "disableAllHooks": true: Claude Code runs none of the hooks')
    again = run_hookgate(["install", "claude", "--project", str(tmp_path), "--hookgate", HG, "--dry-run"])
    assert "nothing to do" in again.stdout and "disableAllHooks" in again.stderr  # still dead: still said
    assert "warning" not in run_hookgate(["uninstall", "claude", "--project", str(tmp_path)]).stderr


@pytest.mark.parametrize("value", [False, None])
def test_install_claude_says_nothing_when_hooks_are_enabled(tmp_path: Path, value: bool | None) -> None:
    _settings(tmp_path, ".claude", {} if value is None else {"disableAllHooks": value})
    proc = run_hookgate(["install", "claude", "--project", str(tmp_path), "--hookgate", HG])
    assert proc.returncode == 0 and proc.stderr == ""


@pytest.mark.parametrize(
    ("hooks_config", "expected"),
    [({"enabled": False}, "hooksConfig.enabled is false"), ({"disabled": ["hookgate"]}, "lists 'hookgate'")],
)
def test_install_gemini_warns_about_its_own_switches(tmp_path: Path, hooks_config: Any, expected: str) -> None:
    settings = _settings(tmp_path, ".gemini", {"hooksConfig": hooks_config})
    proc = run_hookgate(["install", "gemini", "--project", str(tmp_path), "--hookgate", HG])
    assert proc.returncode == 0, proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"warning: {settings}: ") and expected in line


def test_a_settings_file_with_disable_all_hooks_runs_none_of_its_hooks(tmp_path: Path) -> None:
    policy = tmp_path / "dis.json"
    policy.write_text(json.dumps({"disableAllHooks": True, "hooks": DENY_ALL}))
    ran = run_hookgate(["run", "--config", str(policy)], RM)
    assert (ran.returncode, ran.stdout) == (0, ""), ran.stderr
    checked = run_hookgate(["validate", str(policy)])
    assert checked.returncode == 0, checked.stdout + checked.stderr
    text = checked.stdout + checked.stderr
    assert f"{policy}: disableAllHooks is true: Claude Code runs none of these hooks, and neither does hookgate" in text
    assert "unknown top-level key" not in text
    policy.write_text(json.dumps({"disableAllHooks": False, "hooks": DENY_ALL}))
    assert run_hookgate(["run", "--config", str(policy)], RM).returncode == 2  # false: the hooks run


def test_disable_all_hooks_applies_to_its_own_file_only(tmp_path: Path) -> None:
    off = tmp_path / "settings.json"
    off.write_text(json.dumps({"disableAllHooks": True, "hooks": DENY_ALL}))
    mine = tmp_path / "hookgate.json"
    mine.write_text(json.dumps({"hooks": DENY_ALL}))
    config = load_config([str(off), str(mine)], use_cache=False)
    assert [g.where for g in config.hooks["PreToolUse"]] == [f"{mine}: hooks.PreToolUse[0]"]
    off.write_text(json.dumps({"disableAllHooks": "yes", "hooks": DENY_ALL}))
    config = load_config([str(off)], use_cache=False)
    assert len(config.hooks["PreToolUse"]) == 1
    assert f"{off}: disableAllHooks: expected true or false, got str; ignored" in config.warnings
