"""Approvals cost nothing where they do not run: the channel SDKs load only for a channel of their type,
and a config with approvals on other tools loads no approval code on the hot path (subprocesses)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT
from tests.integration.approvals_helpers import bash_event

WATCHED = ("gateway.approvals", "gateway.approvals.desk", "slack_sdk", "lark_oapi", "standardwebhooks", "httpx2")
PROBE = """
import json, sys
from gateway.cli import main
code = main(["run", "--config", sys.argv[1]])
sys.stderr.write("\\nLOADED=" + json.dumps([m for m in WATCHED if m in sys.modules]) + "\\n")
raise SystemExit(code)
""".replace("WATCHED", repr(WATCHED))


def loaded(config: Path, payload: dict[str, object]) -> tuple[int, list[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(config)],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    line = next(ln for ln in proc.stderr.decode().splitlines() if ln.startswith("LOADED="))
    return proc.returncode, json.loads(line.removeprefix("LOADED="))


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
