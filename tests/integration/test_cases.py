"""Every row of the shared cases table, through `hookgate run` as a subprocess with the real scripts."""

from __future__ import annotations

import json

import pytest

from tests.conftest import CASES, load_case, run_hookgate

GUARDS = str(CASES / "configs" / "guards.json")
KIRO = str(CASES / "configs" / "kiro-agent.json")


def _claude(name: str) -> tuple[int, dict, str]:
    proc = run_hookgate(["run", "--config", GUARDS], load_case("claude", name))
    body = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return proc.returncode, body, proc.stderr


def _specific(body: dict) -> dict:
    return body.get("hookSpecificOutput", {})


def test_rm_rf_is_denied_with_the_scripts_reason() -> None:
    code, body, err = _claude("pretooluse-bash-rm-rf.json")
    assert _specific(body)["permissionDecision"] == "deny"
    assert _specific(body)["permissionDecisionReason"] == "Destructive command blocked by hook"
    assert code == 2 and "Destructive command blocked by hook" in err


def test_safe_command_is_allowed_with_a_merged_rewrite() -> None:
    code, body, _ = _claude("pretooluse-bash-safe.json")
    original = load_case("claude", "pretooluse-bash-safe.json")["tool_input"]
    assert code == 0
    assert _specific(body)["permissionDecision"] == "allow"
    assert _specific(body)["updatedInput"] == {**original, "command": "timeout 300 npm test"}


def test_compound_command_matches_the_rm_subcommand() -> None:
    code, body, _ = _claude("pretooluse-bash-compound.json")
    assert _specific(body)["permissionDecision"] == "deny" and code == 2


def test_exit_2_reason_is_the_scripts_stderr() -> None:
    code, body, err = _claude("pretooluse-write-env.json")
    reason = _specific(body)["permissionDecisionReason"]
    assert _specific(body)["permissionDecision"] == "deny"
    assert reason.startswith("writing to /home/dev/projects/webshop/.env is not allowed")
    assert code == 2 and reason in err


@pytest.mark.parametrize(
    "name",
    [
        "pretooluse-edit-src.json",
        "pretooluse-mcp-github.json",
        "stop-active.json",
        "sessionstart.json",
        "sessionend.json",
        "posttooluse-bash.json",
        "posttoolusefailure-bash.json",
    ],
)
def test_no_decision(name: str) -> None:
    proc = run_hookgate(["run", "--config", GUARDS], load_case("claude", name))
    assert (proc.returncode, proc.stdout) == (0, "")


def test_user_prompt_submit_gets_plain_stdout_as_context() -> None:
    code, body, _ = _claude("userpromptsubmit.json")
    assert code == 0
    assert "Project rules" in _specific(body)["additionalContext"]
    assert _specific(body)["hookEventName"] == "UserPromptSubmit"


def test_stop_is_blocked_with_the_reason() -> None:
    code, body, _ = _claude("stop.json")
    assert body["decision"] == "block"
    assert body["reason"] == "Run the test suite and report the result before stopping."
    assert code == 2


# ---- Kiro dialect


def _kiro(name: str, dialect: str = "kiro") -> tuple[int, str, str]:
    proc = run_hookgate(["run", "--config", KIRO, "--dialect", dialect], load_case("kiro", name))
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("dialect", ["kiro", "auto"])
def test_kiro_agent_spawn_context_on_stdout(dialect: str) -> None:
    code, out, _ = _kiro("agentspawn.json", dialect)
    assert code == 0 and "Project rules" in out


def test_kiro_fs_write_env_blocked_with_exit_2() -> None:
    code, out, err = _kiro("pretooluse-fs-write-env.json")
    assert code == 2 and "is not allowed" in err and out == ""


def test_kiro_execute_bash_rm_normalized_from_claude_json() -> None:
    code, out, err = _kiro("pretooluse-execute-bash-rm.json")
    assert code == 2 and "Destructive command blocked by hook" in err and out == ""


@pytest.mark.parametrize(
    "name", ["pretooluse-mcp-git-status.json", "posttooluse-fs-read.json", "userpromptsubmit.json", "stop.json"]
)
def test_kiro_quiet_events(name: str) -> None:
    code, out, err = _kiro(name)
    assert (code, out, err) == (0, "", "")


def test_kiro_events_through_the_claude_config_use_canonical_tool_names() -> None:
    """The Claude-format guards config protects a Kiro host too: execute_bash is Bash, fs_write is Write."""
    proc = run_hookgate(
        ["run", "--config", GUARDS, "--dialect", "kiro"], load_case("kiro", "pretooluse-execute-bash-rm.json")
    )
    assert proc.returncode == 2 and "Destructive command blocked by hook" in proc.stderr
