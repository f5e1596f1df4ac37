"""The ``channels:`` section and the approval handler's fields, validated at load; validate's warnings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gateway.approvals.checks import approval_warnings
from gateway.config import load_config
from gateway.errors import ConfigError
from tests.conftest import run_hookgate


def write(tmp_path: Path, doc: dict) -> Path:  # type: ignore[type-arg]
    path = tmp_path / "hookgate.json"
    path.write_text(json.dumps(doc))
    return path


def approval(**fields: object) -> dict:  # type: ignore[type-arg]
    return {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "approval", **fields}]}]}}


def test_channels_load_normalized(tmp_path: Path) -> None:
    config = load_config(
        [
            str(
                write(
                    tmp_path,
                    {
                        **approval(channel="ops", timeout=30),
                        "channels": {
                            "ops": {"type": "slack", "channel": "C1"},
                            "lark": {"type": "feishu", "chatId": "oc_1", "domain": "https://open.larksuite.com"},
                            "hook": {
                                "type": "webhook",
                                "url": "https://example.test/in",
                                "signingSecretEnv": "HOOK_SECRET",
                            },
                        },
                    },
                )
            )
        ]
    )
    assert config.channels["ops"] == {
        "type": "slack",
        "channel": "C1",
        "token_env": "SLACK_BOT_TOKEN",
        "signing_secret_env": "SLACK_SIGNING_SECRET",
        "base_url": "https://slack.com/api/",
        "timeout": 10.0,
    }
    assert config.channels["lark"]["domain"] == "https://open.larksuite.com"
    assert config.channels["hook"]["callback_url"] == "http://127.0.0.1:8787"
    [spec] = config.hooks["PreToolUse"][0].handlers
    assert spec.type == "approval" and spec.timeout == 30
    assert spec.fail_closed  # always: a gate that failed must not let the call through
    assert spec.options == {"channel": "ops", "on_timeout": "deny", "approvers": [], "message": None}


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ({**approval(channel="nope")}, "hooks.PreToolUse[0].hooks[0].channel: no channel 'nope' under channels:"),
        ({**approval(), "channels": {"x": {"type": "teams"}}}, "channels.x.type: required, one of slack, feishu"),
        ({**approval(), "channels": {"x": {"type": "slack"}}}, "channels.x.channel: Field required"),
        (
            {**approval(), "channels": {"x": {"type": "webhook", "url": "ftp://x", "signingSecretEnv": "S"}}},
            "channels.x.url",
        ),
        (
            {**approval(), "channels": {"x": {"type": "slack", "channel": "C", "tokenEnv": "not a name"}}},
            "channels.x.tokenEnv",
        ),
        ({**approval(), "channels": ["ops"]}, "channels: expected an object of named channels"),
        (approval(onTimeout="allow"), "onTimeout"),
        (approval(approvers="U1"), "approvers"),
    ],
)
def test_bad_channels_and_fields_are_load_errors(tmp_path: Path, doc: dict, expected: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ConfigError) as caught:
        load_config([str(write(tmp_path, doc))], use_cache=False)
    assert any(expected in issue for issue in caught.value.issues), caught.value.issues


def test_a_broken_message_template_makes_the_handler_unrunnable(tmp_path: Path) -> None:
    config = load_config([str(write(tmp_path, approval(message="Run ${tool_input.command")))], use_cache=False)
    assert any("message" in problem for problem in config.broken), config.broken


def test_unknown_channel_field_is_a_warning(tmp_path: Path) -> None:
    config = load_config(
        [
            str(
                write(
                    tmp_path,
                    {**approval(), "channels": {"ops": {"type": "slack", "channel": "C1", "signingSecret": "x"}}},
                )
            )
        ]
    )
    assert any("channels.ops.signingSecret: unknown field for a slack channel" in w for w in config.warnings)


def test_validate_warns_when_the_wait_would_outlive_the_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [
                        {"matcher": "Bash", "hooks": [{"type": "command", "command": "hookgate run", "timeout": 60}]}
                    ]
                }
            }
        )
    )
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    config = load_config(
        [
            str(
                write(
                    tmp_path,
                    {
                        **approval(timeout=90, channel="ops"),
                        "channels": {"ops": {"type": "slack", "channel": "C1", "tokenEnv": "NO_SUCH_TOKEN_VAR"}},
                    },
                )
            )
        ]
    )
    warnings = approval_warnings(config)
    assert any("timeout: 90 s is not below the host's timeout of 60 s" in w and "settings.json" in w for w in warnings)
    assert any("NO_SUCH_TOKEN_VAR is not set" in w for w in warnings)
    shown = run_hookgate(
        ["validate", str(tmp_path / "hookgate.json")],
        env={"CLAUDE_PROJECT_DIR": str(project), "HOME": str(tmp_path / "home")},
    )
    assert shown.returncode == 0 and "is not below the host's timeout of 60 s" in shown.stdout
    (project / ".claude" / "settings.json").unlink()
    monkeypatch.setenv("HOOKGATE_SERVER_TIMEOUT", "100")
    assert not any("timeout:" in w for w in approval_warnings(config))  # 90 s is 2 s below 100 s
    monkeypatch.setenv("HOOKGATE_SERVER_TIMEOUT", "91")
    assert any("HOOKGATE_SERVER_TIMEOUT" in w for w in approval_warnings(config))


def test_default_host_timeout_is_claude_codes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    ok = load_config([str(write(tmp_path, approval(timeout=120)))], use_cache=False)
    assert approval_warnings(ok) == []
    near = load_config([str(write(tmp_path, approval(timeout=599)))], use_cache=False)
    assert "Claude Code's default hook timeout" in approval_warnings(near)[0]
