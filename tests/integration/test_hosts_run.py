"""``hookgate run --dialect gemini|codex`` as a real subprocess, and hooks written in Gemini's own format.

Payloads are the ones the real CLIs send (tests/e2e/HOSTS.md); the answers checked are the ones the
real CLIs honour (pinned by tests/e2e/test_gemini_cli.py and test_codex_cli.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_hookgate

GEMINI = {
    "session_id": "0e2d831a",
    "transcript_path": "/h/chats/session.jsonl",
    "timestamp": "2026-11-29T12:21:21.409Z",
}
CODEX = {
    "session_id": "01a22740",
    "turn_id": "01a22740-bd6b",
    "model": "gpt-5.5",
    "permission_mode": "bypassPermissions",
    "transcript_path": "/h/sessions/2026/11/29/rollout-x.jsonl",
}


def gemini_shell(cwd: Path, command: str) -> dict[str, Any]:
    return {
        **GEMINI,
        "cwd": str(cwd),
        "hook_event_name": "BeforeTool",
        "tool_name": "run_shell_command",
        "tool_input": {"command": command},
    }


def codex_shell(cwd: Path, command: str) -> dict[str, Any]:
    return {
        **CODEX,
        "cwd": str(cwd),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": "call_1",
    }


@pytest.mark.parametrize("dialect", ["gemini", "auto"])
def test_default_policy_denies_rm_rf_on_gemini(tmp_path: Path, dialect: str) -> None:
    proc = run_hookgate(["run", "--dialect", dialect], gemini_shell(tmp_path, "rm -rf src"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    assert answer["decision"] == "deny" and "rm -rf" in answer["reason"]
    safe = run_hookgate(["run", "--dialect", dialect], gemini_shell(tmp_path, "ls"), cwd=tmp_path)
    assert (safe.returncode, safe.stdout) == (0, "")


@pytest.mark.parametrize("dialect", ["codex", "auto"])
def test_default_policy_denies_rm_rf_on_codex(tmp_path: Path, dialect: str) -> None:
    proc = run_hookgate(["run", "--dialect", dialect], codex_shell(tmp_path, "rm -rf src"), cwd=tmp_path)
    assert proc.returncode == 2 and "rm -rf" in proc.stderr  # exit 2 + stderr: the one answer Codex never ignores
    specific = json.loads(proc.stdout)["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse" and specific["permissionDecision"] == "deny"
    assert specific["permissionDecisionReason"]


def test_model_level_gemini_events_pass_through(tmp_path: Path) -> None:
    event = {**GEMINI, "cwd": str(tmp_path), "hook_event_name": "AfterModel", "llm_request": {}, "llm_response": {}}
    proc = run_hookgate(["run", "--dialect", "gemini"], event, cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    explained = run_hookgate(["explain", "--dialect", "gemini"], event, cwd=tmp_path)
    assert explained.returncode == 0 and "passed through" in explained.stdout


def test_codex_fail_closed_handler_blocks(tmp_path: Path) -> None:
    config = tmp_path / "hookgate.json"
    config.write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [
                        {
                            "matcher": "Bash",
                            "hooks": [{"type": "command", "id": "crashy", "command": "exit 1", "failClosed": True}],
                        }
                    ]
                }
            }
        )
    )
    proc = run_hookgate(["run", "--dialect", "codex", "--config", str(config)], codex_shell(tmp_path, "ls"))
    assert proc.returncode == 2 and "crashy" in proc.stderr
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_stop_block_on_gemini_is_an_after_agent_deny(tmp_path: Path) -> None:
    config = tmp_path / "hookgate.json"
    config.write_text(
        json.dumps(
            {
                "hooks": {
                    "Stop": [
                        {
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": 'echo \'{"decision": "block", "reason": "run the tests"}\'',
                                }
                            ]
                        }
                    ]
                }
            }
        )
    )
    event = {
        **GEMINI,
        "cwd": str(tmp_path),
        "hook_event_name": "AfterAgent",
        "prompt": "p",
        "prompt_response": "done",
        "stop_hook_active": False,
    }
    proc = run_hookgate(["run", "--dialect", "gemini", "--config", str(config)], event)
    assert proc.returncode == 0 and json.loads(proc.stdout) == {"decision": "deny", "reason": "run the tests"}


GEMINI_HOOK = """#!/bin/sh
# A hook written for Gemini CLI: reads Gemini's payload, answers in Gemini's format.
payload=$(cat)
printf '%s\\n' "$payload" > "$LOG"
case "$payload" in
  *run_shell_command*'rm '*) echo '{"decision": "deny", "reason": "gemini hook says no"}' ;;
  *run_shell_command*'sleep'*) echo '{"hookSpecificOutput": {"tool_input": {"command": "true"}}}' ;;
  *run_shell_command*'curl'*) echo "curl is not allowed" >&2; exit 3 ;;
  *) echo 'plain text from the hook' ;;
esac
"""


@pytest.fixture
def gemini_config(tmp_path: Path) -> Path:
    script = tmp_path / "hook.sh"
    script.write_text(GEMINI_HOOK)
    script.chmod(0o755)
    config = tmp_path / "settings.json"
    config.write_text(
        json.dumps(
            {
                "hooks": {
                    "BeforeTool": [
                        {
                            "matcher": "run_shell.*",
                            "hooks": [
                                {
                                    "name": "legacy",
                                    "type": "command",
                                    "command": f"{script}",
                                    "timeout": 5000,
                                    "env": {"LOG": str(tmp_path / "payload.json")},
                                }
                            ],
                        }
                    ]
                }
            }
        )
    )
    return config


@pytest.mark.parametrize("host", ["claude", "codex", "gemini"])
def test_a_gemini_format_hook_guards_every_host(tmp_path: Path, gemini_config: Path, host: str) -> None:
    def event(command: str) -> dict[str, Any]:
        if host == "gemini":
            return gemini_shell(tmp_path, command)
        if host == "codex":
            return codex_shell(tmp_path, command)
        return {
            "hook_event_name": "PreToolUse",
            "cwd": str(tmp_path),
            "tool_name": "Bash",
            "tool_input": {"command": command},
        }

    args = ["run", "--dialect", host, "--config", str(gemini_config)]
    denied = run_hookgate(args, event("rm -r x"))
    seen = json.loads((tmp_path / "payload.json").read_text())
    assert (seen["hook_event_name"], seen["tool_name"]) == ("BeforeTool", "run_shell_command")  # Gemini's shape
    assert "timestamp" in seen
    assert "gemini hook says no" in denied.stdout, denied.stderr
    rewritten = run_hookgate(args, event("sleep 100"))
    assert '"true"' in rewritten.stdout and rewritten.returncode == 0
    refused = run_hookgate(args, event("curl x"))  # Gemini: exit 3 with text denies
    assert "curl is not allowed" in refused.stdout + refused.stderr
    quiet = run_hookgate(args, event("ls"))
    assert quiet.returncode == 0 and "deny" not in quiet.stdout
