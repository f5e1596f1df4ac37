"""Issue 10, class 8: ``hookgate install`` never wires a loop, names Kiro agents right, and keeps the
user's formatting. Every test runs ``hookgate install`` (and ``hookgate run``) as a subprocess."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.conftest import run_hookgate

HG = str(Path(sys.executable).with_name("hookgate"))  # the installed console script (what install pins)
RM_RF = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}, "cwd": "/tmp"}
USER_SETTINGS = """{
    "permissions": {"allow": ["Bash(ls)", "Read"], "deny": []},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "./my-stop-check.sh"}]}]
    },
    "model": "sonnet"
}
"""


def test_install_refuses_the_settings_file_it_writes_as_its_config(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(USER_SETTINGS)
    proc = run_hookgate(["install", "claude", "--project", str(tmp_path), "--config", str(settings)])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "the file being installed into" in proc.stderr and "--config" in proc.stderr
    assert "hookgate.yaml" in proc.stderr  # says what to do instead
    assert settings.read_text() == USER_SETTINGS
    assert not list(settings.parent.glob("settings.json.hookgate-backup-*"))
    relative = run_hookgate(["install", "claude", "--project", ".", "--config", ".claude/settings.json"], cwd=tmp_path)
    assert relative.returncode == 1 and settings.read_text() == USER_SETTINGS
    settings.write_text('{"permissions": {}}\n')  # no hooks at all: still the file being installed into
    bare = run_hookgate(["install", "claude", "--project", str(tmp_path), "--config", str(settings)])
    assert bare.returncode == 1 and "the file being installed into" in bare.stderr


def test_install_refuses_a_config_holding_hookgates_own_entries(tmp_path: Path) -> None:
    first = run_hookgate(["install", "claude", "--project", str(tmp_path), "--hookgate", HG])
    assert first.returncode == 0, first.stderr
    settings = tmp_path / ".claude" / "settings.json"
    copy = tmp_path / "policy.json"
    copy.write_text(settings.read_text())  # a copy of a wired settings file, used as the policy
    before = settings.read_text()
    proc = run_hookgate(["install", "gemini", "--project", str(tmp_path), "--config", str(copy)])
    assert proc.returncode == 1 and "hookgate run" in proc.stderr and "loop" in proc.stderr, proc.stderr
    assert not (tmp_path / ".gemini" / "settings.json").exists()
    assert settings.read_text() == before
    # what would have happened: every tool call denied, nested hookgate processes
    validate = run_hookgate(["validate", str(copy)])
    assert "hookgate run" in validate.stdout and "loop" in validate.stdout, validate.stdout


def test_kiro_agent_given_as_a_file_name_is_not_doubled(tmp_path: Path) -> None:
    proc = run_hookgate(["install", "kiro", "--project", str(tmp_path), "--agent", "foo.json", "--hookgate", HG])
    assert proc.returncode == 0, proc.stderr
    agents = sorted(p.name for p in (tmp_path / ".kiro" / "agents").iterdir())
    assert agents == ["foo.json"]
    assert json.loads((tmp_path / ".kiro" / "agents" / "foo.json").read_text())["name"] == "foo"


def test_install_keeps_the_users_formatting(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(USER_SETTINGS)
    proc = run_hookgate(["install", "claude", "--project", str(tmp_path), "--hookgate", HG])
    assert proc.returncode == 0, proc.stderr
    after = settings.read_text()
    # the user's own lines are untouched, byte for byte
    assert '    "permissions": {"allow": ["Bash(ls)", "Read"], "deny": []},\n' in after
    assert '        "Stop": [{"hooks": [{"type": "command", "command": "./my-stop-check.sh"}]}' in after
    assert after.endswith('    "model": "sonnet"\n}\n')
    doc = json.loads(after)
    assert doc["permissions"] == {"allow": ["Bash(ls)", "Read"], "deny": []}
    assert "hookgate run" in json.dumps(doc["hooks"]["PreToolUse"])
    removed = run_hookgate(["uninstall", "claude", "--project", str(tmp_path)])
    assert removed.returncode == 0 and settings.read_text() == USER_SETTINGS


def test_install_refuses_a_settings_file_with_a_key_twice(tmp_path: Path) -> None:
    """`json` keeps the last of two equal keys: rewriting would silently drop the first `hooks` block."""
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    text = (
        '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./first.sh"}]}]},\n'
        ' "model": "sonnet",\n'
        ' "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "./second.sh"}]}]}}\n'
    )
    settings.write_text(text)
    proc = run_hookgate(["install", "claude", "--project", str(tmp_path), "--hookgate", HG])
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
    assert "the key 'hooks' appears twice" in proc.stderr and str(settings) in proc.stderr
    assert settings.read_text() == text and not list(settings.parent.glob("settings.json.hookgate-backup-*"))


def test_install_and_uninstall_refuse_a_settings_file_holding_nan_or_infinity(tmp_path: Path) -> None:
    """Python's `json` reads NaN/Infinity; Claude Code's JSON.parse rejects the whole file, hooks and all."""
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    for word in ("NaN", "Infinity", "-Infinity"):
        text = f'{{"model": "sonnet", "x": [1, {word}]}}\n'
        settings.write_text(text)
        for args in (["install", "claude", "--hookgate", HG], ["uninstall", "claude"]):
            proc = run_hookgate([*args, "--project", str(tmp_path)])
            assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stdout + proc.stderr
            assert f"{settings}: not plain JSON ({word} is not a JSON value" in proc.stderr
            assert "Traceback" not in proc.stderr
        assert settings.read_text() == text and not list(settings.parent.glob("settings.json.hookgate-backup-*"))


def test_install_keeps_crlf_line_endings_and_uninstall_gives_the_file_back(tmp_path: Path) -> None:
    """A settings file a Windows editor wrote (CRLF): install keeps every line ending, uninstall restores it."""
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = USER_SETTINGS.replace("\n", "\r\n").encode()
    settings.write_bytes(original)
    proc = run_hookgate(["install", "claude", "--project", str(tmp_path), "--hookgate", HG])
    assert proc.returncode == 0 and "rewrite" not in proc.stdout, proc.stdout + proc.stderr
    after = settings.read_bytes()
    assert after.count(b"\n") == after.count(b"\r\n") > original.count(b"\r\n")  # no bare LF was added
    assert b'    "permissions": {"allow": ["Bash(ls)", "Read"], "deny": []},\r\n' in after
    assert after.endswith(b'    "model": "sonnet"\r\n}\r\n')
    assert "hookgate run" in json.dumps(json.loads(after)["hooks"]["PreToolUse"])
    again = run_hookgate(["install", "claude", "--project", str(tmp_path), "--hookgate", HG])
    assert "nothing to do" in again.stdout and settings.read_bytes() == after
    removed = run_hookgate(["uninstall", "claude", "--project", str(tmp_path)])
    assert removed.returncode == 0, removed.stderr
    assert settings.read_bytes() == original


def test_install_into_a_crlf_file_with_no_hooks_yet_and_no_final_newline(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = b'{\r\n  "model": "x"\r\n}'
    settings.write_bytes(original)
    assert run_hookgate(["install", "claude", "--project", str(tmp_path), "--hookgate", HG]).returncode == 0
    after = settings.read_bytes()
    assert after.startswith(b'{\r\n  "model": "x",\r\n') and after.endswith(b"\r\n}")
    assert after.count(b"\n") == after.count(b"\r\n")
    assert run_hookgate(["uninstall", "claude", "--project", str(tmp_path)]).returncode == 0
    assert settings.read_bytes() == original


HAND_WRITTEN: dict[str, Any] = {
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {
                        "type": "command",
                        "command": '/opt/hg/bin/hookgate run --config "$CLAUDE_PROJECT_DIR"/policy/strict.yaml',
                    }
                ],
            }
        ]
    }
}


def user_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    return {"HOME": str(home), "CLAUDE_CONFIG_DIR": ""}


def test_install_leaves_a_hand_written_hookgate_hook_and_its_config_pin_alone(tmp_path: Path) -> None:
    env = user_env(tmp_path)
    settings = Path(env["HOME"]) / ".claude" / "settings.json"
    original = json.dumps(HAND_WRITTEN, indent=2) + "\n"
    settings.write_text(original)
    command = HAND_WRITTEN["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    warning = (
        f"warning: {settings}: PreToolUse already runs hookgate through a hook install did not write ({command}); "
        "install leaves it as it is and adds no second one for PreToolUse: to let install manage PreToolUse, "
        "remove that hook and run install again\n"
    )
    dry = run_hookgate(["install", "claude", "--events", "PreToolUse", "--dry-run", "--hookgate", HG], env=env)
    assert dry.returncode == 0 and dry.stderr == warning, dry.stdout + dry.stderr
    assert "nothing to do" in dry.stdout and settings.read_text() == original
    full = run_hookgate(["install", "claude", "--events", "PreToolUse,Stop", "--hookgate", HG], env=env)
    assert full.returncode == 0 and full.stderr == warning, full.stdout + full.stderr
    doc = json.loads(settings.read_text())
    assert doc["hooks"]["PreToolUse"] == HAND_WRITTEN["hooks"]["PreToolUse"]  # the pin and the matcher kept
    assert doc["hooks"]["Stop"][0]["hooks"][0]["command"] == f"{HG} run --dialect claude"
    removed = run_hookgate(["uninstall", "claude"], env=env)
    assert removed.returncode == 0 and settings.read_text() == original, removed.stdout + removed.stderr


def test_install_writes_through_a_symlinked_settings_file(tmp_path: Path) -> None:
    env = user_env(tmp_path)
    settings = Path(env["HOME"]) / ".claude" / "settings.json"
    dotfiles = tmp_path / "dotfiles" / "claude-settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text(USER_SETTINGS)
    settings.symlink_to(dotfiles)
    proc = run_hookgate(["install", "claude", "--hookgate", HG], env=env)
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {settings} (through the link to {dotfiles}; backup: {settings}.hookgate-backup-" in proc.stdout
    assert settings.is_symlink() and settings.resolve() == dotfiles
    assert "hookgate run" in json.dumps(json.loads(dotfiles.read_text())["hooks"]["PreToolUse"])
    [backup] = settings.parent.glob("settings.json.hookgate-backup-*")
    assert not backup.is_symlink() and backup.read_text() == USER_SETTINGS
    assert run_hookgate(["uninstall", "claude"], env=env).returncode == 0
    assert settings.is_symlink() and dotfiles.read_text() == USER_SETTINGS


def test_install_refuses_a_settings_file_with_a_byte_order_mark(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = b"\xef\xbb\xbf" + USER_SETTINGS.encode()
    settings.write_bytes(original)
    for args in (["install", "claude", "--hookgate", HG], ["uninstall", "claude"]):
        proc = run_hookgate([*args, "--project", str(tmp_path)])
        assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stdout + proc.stderr
        assert proc.stderr.startswith(f"hookgate: {settings}: the file starts with a byte order mark (a UTF-8 BOM)")
        assert "without a BOM" in proc.stderr and "utf-8-sig" not in proc.stderr
    assert settings.read_bytes() == original and not list(settings.parent.glob("settings.json.hookgate-backup-*"))
