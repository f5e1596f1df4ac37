"""The real Claude Code CLI (pinned 2.1.197), offline, against the fake Messages API.

Assert on files on disk, hook logs, ``permission_denials`` and the fake's request log, never on
the CLI's wording (it changes between versions).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.e2e.claude_cli import API_KEY, ClaudeCli
from tests.e2e.hook_receiver import HookReceiver
from tests.e2e.hook_settings import (
    command_hook_settings,
    http_hook_settings,
    pretooluse_deny,
    write_deny_hook,
)
from tests.e2e.netns import Sandbox
from tests.e2e.scenarios import RmVictim, RunClaude, rm_victim_scenario

pytestmark = pytest.mark.e2e


def _assert_clean_run(outcome: RmVictim) -> None:
    run = outcome.run
    assert run.returncode == 0, run.describe()
    assert run.result is not None and run.result.get("is_error") is False, run.describe()
    assert [r.kind for r in run.requests if r.path == "/v1/messages"] == ["scripted", "scripted"], run.describe()
    assert all(r.api_key == API_KEY for r in run.requests if r.path.startswith("/v1/"))
    (tool_use,) = run.tool_uses
    assert tool_use["input"]["command"] == outcome.command
    (tool_result,) = run.tool_results
    assert tool_result["tool_use_id"] == tool_use["id"]


# --------------------------------------------------------------------------- controls (no hookgate)


def test_sandbox_has_no_network_but_loopback(claude_cli: ClaudeCli, e2e_sandbox: Sandbox) -> None:
    if not e2e_sandbox.isolated:
        pytest.skip(f"no network namespace: {e2e_sandbox.reason}")
    routes = subprocess.run(
        e2e_sandbox.wrap(["cat", "/proc/net/route", "/proc/net/dev"]),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "lo:" in routes
    devices = [line.split(":")[0].strip() for line in routes.splitlines() if ":" in line]
    assert devices == ["lo"], routes


def test_control_without_hooks_the_tool_really_runs(run_claude: RunClaude, tmp_path: Path) -> None:
    outcome = rm_victim_scenario(run_claude, tmp_path, settings=None)
    _assert_clean_run(outcome)
    assert not outcome.victim.exists(), "rm -rf did not run: the harness proves nothing"
    assert outcome.run.permission_denials == []
    assert outcome.run.tool_results[0].get("is_error") is not True


def test_control_native_deny_hook_blocks_the_tool(run_claude: RunClaude, tmp_path: Path) -> None:
    hook = write_deny_hook(tmp_path / "hooks", reason="blocked by native test hook")
    outcome = rm_victim_scenario(run_claude, tmp_path, command_hook_settings(hook.command))
    _assert_clean_run(outcome)
    assert outcome.survived, outcome.run.describe()
    (call,) = hook.calls()
    assert call["hook_event_name"] == "PreToolUse"
    assert call["tool_name"] == "Bash"
    assert call["tool_input"]["command"] == outcome.command
    assert outcome.denied_commands == [outcome.command]
    (tool_use,) = outcome.run.tool_uses
    assert outcome.run.permission_denials[0]["tool_use_id"] == call["tool_use_id"] == tool_use["id"]
    assert outcome.run.tool_results[0].get("is_error") is True


def test_control_native_http_hook_blocks_the_tool(run_claude: RunClaude, e2e_sandbox: Sandbox, tmp_path: Path) -> None:
    """The ``type: "http"`` path ``hookgate serve`` will use: the receiver lives in the sandbox."""
    deny = pretooluse_deny("blocked by http test hook")
    with HookReceiver(e2e_sandbox.bind_loopback(), deny) as receiver:
        settings = http_hook_settings(receiver.url, headers={"X-Test": "e2e"})
        outcome = rm_victim_scenario(run_claude, tmp_path, settings)
    _assert_clean_run(outcome)
    assert outcome.survived, outcome.run.describe()
    (call,) = receiver.calls
    assert call.headers["x-test"] == "e2e"
    assert call.body["hook_event_name"] == "PreToolUse"
    assert call.body["tool_input"]["command"] == outcome.command
    assert outcome.denied_commands == [outcome.command]


# --------------------------------------------------------------------------- HOOKGATE scenarios
# The hookgate scenarios (run, serve, thin client, updatedInput, Stop checks, failClosed, mcp_tool)
# are in test_claude_hookgate.py; each runs its own no-hook control next to the hookgate run.
# Remember: http hooks fail OPEN on any error (500, timeout, refused); `command` hooks block only
# with an explicit deny or exit code 2.
