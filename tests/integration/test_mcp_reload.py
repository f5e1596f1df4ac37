"""``hookgate serve`` reloads when an ``mcpConfig`` file (a project's ``.mcp.json``) changes, not only when a
``--config`` file does: the edited server definition is used from then on, and the old server is stopped."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import httpx2

from tests.fakes.mcp_helpers import ROOT, alive, event
from tests.fakes.webhooks import wait_for
from tests.integration.serve_helpers import ServeProcess

RAW = str(ROOT / "tests" / "fakes" / "mcp_raw_server.py")


def mcp_json(path: Path, log: Path) -> None:
    server = {"command": sys.executable, "args": [RAW], "env": {"FAKE_RAW_LOG": str(log)}}
    path.write_text(json.dumps({"mcpServers": {"raw": server}}))


def starts(log: Path) -> list[int]:
    if not log.exists():
        return []
    return [int(line.split()[1]) for line in log.read_text().splitlines() if line.startswith("start ")]


def test_an_edited_mcp_config_file_is_reloaded_and_its_new_server_definition_used(tmp_path: Path) -> None:
    first, second = tmp_path / "first.log", tmp_path / "second.log"
    servers = tmp_path / ".mcp.json"
    mcp_json(servers, first)
    hook = {"type": "mcp_tool", "server": "raw", "tool": "act", "input": {"do": "ok"}, "failClosed": True}
    config = tmp_path / "hookgate.json"
    config.write_text(
        json.dumps({"mcpConfig": ".mcp.json", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}})
    )
    with ServeProcess(config, args=["--reload-interval", "0.1"]) as server:

        def call() -> None:
            answer = httpx2.post(f"{server.url}/hooks", json=event("Bash", command="ls"), timeout=30)
            assert answer.status_code == 200 and answer.json() == {}, answer.text

        call()
        (old,) = starts(first)
        mark = len(server.lines)
        mcp_json(servers, second)  # the config file itself is untouched
        line = server.wait_log("config reloaded", after=mark)
        assert "config file changed" in line and ".mcp.json" in line
        call()
        assert starts(first) == [old] and len(starts(second)) == 1  # the new definition, one start
        wait_for(lambda: not alive(old), what="the old server to stop")
        assert httpx2.get(f"{server.url}/healthz").json()["reloads"] == 1
        assert server.stop() == 0
