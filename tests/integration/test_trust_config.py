"""Issue 10, classes 1, 6, 7 and 9: a configured policy never silently lapses through its config.

Every test drives ``hookgate run`` / ``validate`` / ``explain`` as a subprocess or a real
``hookgate serve``.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.conftest import run_hookgate
from tests.integration.serve_helpers import ServeProcess

RM_RF = {
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "rm -rf /"},
    "cwd": "/tmp",
    "session_id": "s1",
}
GUARD = (
    "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: python\n"
    "          id: destructive-shell\n          callable: configs.guards.shell_guard:check_event\n"
    "          failClosed: true\n"
)


def post(url: str, body: dict[str, Any]) -> httpx2.Response:
    return httpx2.post(url, content=json.dumps(body).encode(), headers={"content-type": "application/json"}, timeout=30)


def denied(server: ServeProcess) -> bool:
    answer = post(f"{server.url}/hooks", RM_RF).json()
    return answer.get("hookSpecificOutput", {}).get("permissionDecision") == "deny"


# ------------------------------------------------------------------ class 1: reload to nothing (serve)

NOTHING = {
    "empty": "",
    "null": "null\n",
    "only-hooks": "hooks:\n",
    "comment-only": "# todo\n",
    "half-written": GUARD[: len(GUARD) // 2],
    "unparseable": "hooks: {PreToolUse: [\n",
    "unknown-keys-only": "hook:\n  PreToolUse: []\n",
}


@pytest.mark.parametrize("content", list(NOTHING.values()), ids=list(NOTHING))
def test_sighup_reload_to_nothing_is_refused_and_the_guard_keeps_denying(tmp_path: Path, content: str) -> None:
    config = tmp_path / "hookgate.yaml"
    config.write_text(GUARD)
    with ServeProcess(config, args=["--reload-interval", "0"]) as server:
        assert denied(server)
        config.write_text(content)
        mark = len(server.lines)
        server.signal(signal.SIGHUP)
        line = server.wait_log("config reload", after=mark)
        assert "rejected" in line and "still serving the previous config" in line, line
        assert denied(server)
        assert httpx2.get(f"{server.url}/healthz").json()["handlers"] == 1


def test_watcher_refuses_an_emptied_file(tmp_path: Path) -> None:
    config = tmp_path / "hookgate.yaml"
    config.write_text(GUARD)
    with ServeProcess(config, args=["--reload-interval", "0.1"]) as server:
        mark = len(server.lines)
        config.write_text("")
        line = server.wait_log("config reload", after=mark)
        assert "rejected" in line and "empty" in line, line
        assert all(denied(server) for _ in range(20))


def test_explicit_empty_hooks_block_drops_to_zero_handlers(tmp_path: Path) -> None:
    config = tmp_path / "hookgate.yaml"
    config.write_text(GUARD)
    with ServeProcess(config, args=["--reload-interval", "0"]) as server:
        config.write_text("hooks: {}\n")
        mark = len(server.lines)
        server.signal(signal.SIGHUP)
        assert "reloaded" in server.wait_log("config reload", after=mark)
        assert not denied(server)


def test_watcher_waits_until_the_file_stopped_changing(tmp_path: Path) -> None:
    """An editor writing in two steps: the watcher must not load the first half (which parses: it holds
    only a SessionStart hook), only the finished file."""
    first = "hooks:\n  SessionStart:\n    - hooks: [{type: command, command: 'true'}]\n"
    config = tmp_path / "hookgate.yaml"
    config.write_text(GUARD)
    with ServeProcess(config, args=["--reload-interval", "0.1"]) as server:
        mark = len(server.lines)
        with config.open("w") as fh:
            fh.write(first)
            fh.flush()
            time.sleep(0.6)  # several polls see the half-written file
            fh.write(GUARD.removeprefix("hooks:\n"))
        line = server.wait_log("config reload", after=mark, timeout=20)
        assert "reloaded" in line and "2 handler(s)" in line, "\n".join(server.lines[mark:])
        assert not [ln for ln in server.lines[mark:] if "1 handler(s)" in ln or "rejected" in ln]
        assert denied(server)


def test_serve_refuses_to_start_on_an_empty_config(tmp_path: Path) -> None:
    config = tmp_path / "hookgate.yaml"
    config.write_text("")
    proc = run_hookgate(["serve", "--port", "0", "--config", str(config)], timeout=30)
    assert proc.returncode == 1 and "empty" in proc.stderr and "Traceback" not in proc.stderr


# ------------------------------------------------------------------ class 1: named empty configs (run)


@pytest.mark.parametrize(
    "content",
    ["", "null\n", "hooks:\n", "# nothing yet\n", "{}", "permissions: {}\n"],
    ids=["empty", "null", "only-hooks", "comment", "empty-object", "no-recognised-key"],
)
def test_run_with_a_named_config_that_holds_nothing_blocks(tmp_path: Path, content: str) -> None:
    config = tmp_path / "policy.yaml"
    config.write_text(content)
    proc = run_hookgate(["run", "--config", str(config)], RM_RF)
    assert proc.returncode == 2 and "invalid config" in proc.stderr and str(config) in proc.stderr, proc.stderr
    proc = run_hookgate(["run"], RM_RF, env={"HOOKGATE_CONFIG": str(config)}, cwd=tmp_path)
    assert proc.returncode == 2 and "invalid config" in proc.stderr
    stop = run_hookgate(["run", "--config", str(config)], {"hook_event_name": "Stop", "session_id": "s"})
    assert stop.returncode == 1  # where a block would only make the agent loop: non-blocking
    assert run_hookgate(["validate", str(config)]).returncode == 1


def test_run_with_an_explicit_empty_hooks_block_lets_everything_through(tmp_path: Path) -> None:
    config = tmp_path / "policy.yaml"
    config.write_text("hooks: {}\n")
    proc = run_hookgate(["run", "--config", str(config)], RM_RF)
    assert (proc.returncode, proc.stdout) == (0, "")
    check = run_hookgate(["validate", str(config)])
    assert check.returncode == 0 and "no hooks configured" in check.stdout


# ------------------------------------------------------------------ class 6: configs Claude Code accepts


def test_if_on_a_non_tool_event_only_disables_that_handler(tmp_path: Path) -> None:
    config = tmp_path / "hookgate.json"
    config.write_text(
        json.dumps(
            {
                "hooks": {
                    "Stop": [
                        {
                            "hooks": [
                                {"type": "command", "if": "Bash(rm *)", "command": "echo never >&2; exit 2"},
                                {"type": "command", "command": "echo stop-ran >&2"},
                            ]
                        }
                    ],
                    "PreToolUse": [
                        {
                            "matcher": "Bash",
                            "hooks": [
                                {
                                    "type": "python",
                                    "failClosed": True,
                                    "callable": "configs.guards.shell_guard:check_event",
                                }
                            ],
                        }
                    ],
                }
            }
        )
    )
    safe = {**RM_RF, "tool_input": {"command": "ls -la"}}
    assert run_hookgate(["run", "--config", str(config)], safe).returncode == 0  # not "deny everything"
    assert run_hookgate(["run", "--config", str(config)], RM_RF).returncode == 2
    stop = run_hookgate(
        ["run", "--config", str(config)], {"hook_event_name": "Stop", "session_id": "s", "cwd": str(tmp_path)}
    )
    assert stop.returncode == 0 and "never" not in stop.stderr
    check = run_hookgate(["validate", str(config)])
    assert check.returncode == 0, check.stdout
    assert "hooks.Stop[0].hooks[0].if" in check.stdout and "never runs" in check.stdout


@pytest.mark.parametrize(
    ("handler", "warning"),
    [
        ({"type": "command", "command": "true", "timeout": 5000}, "timeout"),
        ({"type": "command", "command": "true", "args": [], "shell": "bash"}, "shell"),
        ({"type": "command", "command": "true", "once": True}, "once"),
    ],
)
def test_fields_claude_code_accepts_are_warnings_not_deny_everything(
    tmp_path: Path, handler: dict[str, Any], warning: str
) -> None:
    config = tmp_path / "hookgate.json"
    config.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [handler]}]}}))
    proc = run_hookgate(["run", "--config", str(config)], {**RM_RF, "tool_input": {"command": "ls"}})
    assert proc.returncode == 0, proc.stderr
    check = run_hookgate(["validate", str(config)])
    assert check.returncode == 0 and f"hooks.PreToolUse[0].hooks[0].{warning}" in check.stdout, check.stdout


def test_async_on_a_prompt_handler_is_ignored_as_claude_code_does(tmp_path: Path) -> None:
    config = tmp_path / "hookgate.json"
    config.write_text(
        json.dumps(
            {
                "hooks": {
                    "Stop": [{"hooks": [{"type": "prompt", "prompt": "ok? $ARGUMENTS", "async": True}]}],
                    "PreToolUse": [
                        {
                            "matcher": "Bash",
                            "hooks": [
                                {
                                    "type": "python",
                                    "failClosed": True,
                                    "callable": "configs.guards.shell_guard:check_event",
                                }
                            ],
                        }
                    ],
                },
                "llm": {"default": "p", "providers": {"p": {"type": "anthropic", "apiKeyEnv": "TRUST_TEST_KEY"}}},
            }
        )
    )
    safe = {**RM_RF, "tool_input": {"command": "ls -la"}}
    assert run_hookgate(["run", "--config", str(config)], safe).returncode == 0
    check = run_hookgate(["validate", str(config)], env={"TRUST_TEST_KEY": "k"})
    assert check.returncode == 0 and "hooks.Stop[0].hooks[0].async" in check.stdout, check.stdout


# ------------------------------------------------------------------ class 7: validate and run agree


@pytest.mark.parametrize(
    "url",
    [
        "http://2130706433/hook",
        "http://127.1/hook",
        "http://0/hook",
        "http://0x7f.0.0.1/hook",
        "http://017700000001/hook",
    ],
)
def test_validate_refuses_urls_the_http_handler_refuses(tmp_path: Path, url: str) -> None:
    config = tmp_path / "hookgate.json"
    config.write_text(
        json.dumps({"hooks": {"PreToolUse": [{"hooks": [{"type": "http", "url": url, "failClosed": True}]}]}})
    )
    check = run_hookgate(["validate", str(config)])
    assert check.returncode == 1 and "url" in check.stdout, check.stdout
    proc = run_hookgate(["run", "--config", str(config)], RM_RF)
    assert proc.returncode == 2  # the same rule at run time: the handler cannot run, and it is failClosed


def test_an_unset_secret_of_a_fail_closed_handler_is_an_error(tmp_path: Path) -> None:
    def write(fail_closed: bool) -> Path:
        config = tmp_path / f"hookgate-{fail_closed}.json"
        config.write_text(
            json.dumps(
                {
                    "hooks": {
                        "PreToolUse": [
                            {
                                "hooks": [
                                    {
                                        "type": "http",
                                        "url": "http://127.0.0.1:9/hook",
                                        "failClosed": fail_closed,
                                        "signingSecretEnv": "TRUST_UNSET_SECRET",
                                    }
                                ]
                            }
                        ]
                    }
                }
            )
        )
        return config

    check = run_hookgate(["validate", str(write(True))])
    assert check.returncode == 1 and "TRUST_UNSET_SECRET" in check.stdout and "error" in check.stdout
    check = run_hookgate(["validate", str(write(False))])
    assert check.returncode == 0 and "warning" in check.stdout and "TRUST_UNSET_SECRET" in check.stdout


# ------------------------------------------------------------------ class 9: messages that keep the place


def test_yaml_error_names_the_line_pyyaml_names(tmp_path: Path) -> None:
    config = tmp_path / "hookgate.yaml"
    config.write_text(
        "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n"
        '          command: "echo hi\n          timeout: 5\n  Stop: []\nsettings: {}\n'
    )
    check = run_hookgate(["validate", str(config)])
    assert check.returncode == 1
    assert f"{config}:6:20:" in check.stdout and "line 10, column 1" in check.stdout, check.stdout
    bad = tmp_path / "indent.yaml"
    bad.write_text("hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks: []\n     oops: 1\n")
    check = run_hookgate(["validate", str(bad)])
    assert f"{bad}:5:6:" in check.stdout, check.stdout


def test_unknown_top_level_key_gets_a_did_you_mean_and_all_unknown_is_an_error(tmp_path: Path) -> None:
    config = tmp_path / "hookgate.yaml"
    config.write_text("hook:\n  PreToolUse: []\nsetings: {}\n")
    check = run_hookgate(["validate", str(config)])
    assert check.returncode == 1, check.stdout
    assert "did you mean 'hooks'" in check.stdout and "did you mean 'settings'" in check.stdout
    mixed = tmp_path / "mixed.yaml"
    mixed.write_text(GUARD + "setings: {}\n")
    check = run_hookgate(["validate", str(mixed)])
    assert check.returncode == 0 and "did you mean 'settings'" in check.stdout


def test_validate_prints_every_warning_when_a_handler_also_has_errors(tmp_path: Path) -> None:
    config = tmp_path / "hookgate.json"
    config.write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [
                        {
                            "matcher": "Bash",
                            "hooks": [
                                {"type": "command", "command": "true", "colour": "red"},
                                {"type": "command", "command": "true", "timeout": "10"},
                            ],
                        }
                    ],
                    "Notification": [{"matcher": "x", "hooks": [{"type": "command", "command": "/no/such/script.sh"}]}],
                },
                "setings": {},
            }
        )
    )
    check = run_hookgate(["validate", str(config)])
    assert check.returncode == 1
    assert "colour" in check.stdout and "setings" in check.stdout, check.stdout
    assert "timeout" in check.stdout


def test_an_mcp_tools_own_error_text_reaches_the_deny_reason(tmp_path: Path) -> None:
    from tests.fakes.mcp_helpers import stdio_server

    config = tmp_path / "hookgate.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {"fake": stdio_server()},
                "hooks": {
                    "PreToolUse": [
                        {"hooks": [{"type": "mcp_tool", "server": "fake", "tool": "refuse", "failClosed": True}]}
                    ]
                },
            }
        )
    )
    proc = run_hookgate(["run", "--config", str(config)], RM_RF)
    assert proc.returncode == 2, proc.stderr
    reason = json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "Denied by the fake policy" in reason and "/etc/passwd is outside the project" in reason, reason


def test_explain_says_it_runs_handlers_and_dry_run_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    config = tmp_path / "hookgate.json"
    config.write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": f"touch {marker}"}]}]
                }
            }
        )
    )
    event = tmp_path / "event.json"
    event.write_text(json.dumps(RM_RF))
    dry = run_hookgate(["explain", "--dry-run", "--config", str(config), str(event)])
    assert dry.returncode == 0 and not marker.exists(), dry.stdout + dry.stderr
    assert "would run" in dry.stdout and "touch" in dry.stdout
    wet = run_hookgate(["explain", "--config", str(config), str(event)])
    assert wet.returncode == 0 and marker.exists()
    assert "runs the handlers" in wet.stdout
    help_text = run_hookgate(["explain", "--help"]).stdout
    assert "--dry-run" in help_text and "runs" in help_text


# ------------------------------------------------------------------ a matcher that backtracks

BACKTRACKING = (
    "hooks:\n  PreToolUse:\n    - matcher: '(a|aa)+$'\n      hooks:\n"
    "        - {type: command, command: 'echo no >&2; exit 2'}\n"
)
SLOW_NAME = {**RM_RF, "tool_name": "a" * 40 + "!"}  # an MCP server chooses its own tool names


def test_a_matcher_that_backtracks_is_bounded_and_runs_its_hooks(tmp_path: Path) -> None:
    """Unbounded, (a|aa)+$ on this name searches for minutes: `run` would hang and `serve` would stop
    answering everything. Bounded, the search counts as a match, and validate says so beforehand."""
    config = tmp_path / "hookgate.yaml"
    config.write_text(BACKTRACKING)
    proc = run_hookgate(["validate", str(config)])
    assert proc.returncode == 0 and "can take very long on some values" in proc.stdout + proc.stderr
    started = time.monotonic()
    proc = run_hookgate(["run", "--config", str(config)], SLOW_NAME, timeout=30)
    assert proc.returncode == 2 and "no" in proc.stderr and "counted as a match" in proc.stderr
    assert time.monotonic() - started < 20
    with ServeProcess(str(config), args=["--reload-interval", "0"]) as server:
        answer = httpx2.post(f"{server.url}/hooks", json=SLOW_NAME, timeout=20).json()
        assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert httpx2.get(f"{server.url}/healthz", timeout=5).status_code == 200
        ok = httpx2.post(f"{server.url}/hooks", json={**RM_RF, "tool_name": "Bash"}, timeout=20).json()
        assert ok == {}  # a name that does not fit is searched as before
