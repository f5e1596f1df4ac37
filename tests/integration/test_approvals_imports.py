"""Approvals cost nothing where they do not run: the channel SDKs load only for a channel of their type,
and a config with approvals on other tools loads no approval code on the hot path (subprocesses)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.import_probe import modules_loaded
from tests.integration.approvals_helpers import bash_event

WATCHED = ("gateway.approvals", "gateway.approvals.desk", "slack_sdk", "lark_oapi", "standardwebhooks", "httpx2")


def loaded(config: Path, payload: dict[str, Any]) -> tuple[int, list[str]]:
    return modules_loaded(config, payload, WATCHED)


def test_approvals_on_other_tools_load_nothing(tmp_path: Path) -> None:
    config = tmp_path / "hookgate.json"
    config.write_text(
        json.dumps(
            {
                "channels": {"ops": {"type": "slack", "channel": "C1"}, "lark": {"type": "feishu", "chatId": "oc_1"}},
                "hooks": {
                    "PreToolUse": [
                        {"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]},
                        {
                            "matcher": "Write",
                            "hooks": [{"type": "approval", "channel": "ops"}, {"type": "approval", "channel": "lark"}],
                        },
                    ]
                },
            }
        )
    )
    loaded(config, bash_event("ls"))  # compiles and caches the config
    code, modules = loaded(config, bash_event("ls"))
    assert code == 0 and modules == []


def test_an_inbox_approval_loads_no_channel_sdk(tmp_path: Path) -> None:
    config = tmp_path / "hookgate.json"
    config.write_text(
        json.dumps(
            {
                "channels": {"ops": {"type": "slack", "channel": "C1"}},
                "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "approval", "timeout": 1}]}]},
            }
        )
    )
    code, modules = loaded(config, bash_event("git push"))
    assert code == 2  # expired: denied
    assert "gateway.approvals.desk" in modules
    assert not {"slack_sdk", "lark_oapi", "standardwebhooks", "httpx2"} & set(modules)
