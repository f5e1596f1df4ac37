"""How ``mcp_tool`` calls fail against real stdio servers (tests/fakes/mcp_raw_server.py), and what is said
about it: a stdout line that is not JSON-RPC and the SDK's own log records are one redacted line on
``hookgate run``'s stderr (which Claude Code hands the model on exit 2), never a multi-line dump holding
the server's secret."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.conftest import run_hookgate
from tests.fakes.mcp_helpers import ROOT, event

RAW = str(ROOT / "tests" / "fakes" / "mcp_raw_server.py")
SECRET = "sk-live-abc123"


def config(tmp_path: Path, do: str, env: dict[str, str] | None = None, **args: Any) -> Path:
    """A config whose PreToolUse/Bash hook calls the raw server's ``act`` with ``do`` (failClosed)."""
    hook = {"type": "mcp_tool", "id": "mt", "server": "raw", "tool": "act", "input": {"do": do, **args}}
    doc = {
        "mcpServers": {"raw": {"command": sys.executable, "args": [RAW], "env": env or {}}},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{**hook, "timeout": 20, "failClosed": True}]}]},
    }
    path = tmp_path / "hookgate.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_startup_banner_on_stdout_is_one_redacted_line_on_stderr(tmp_path: Path) -> None:
    path = config(tmp_path, "ok", {"FAKE_RAW_BANNER": f"starting; api_key={SECRET}"})
    proc = run_hookgate(["run", "--config", str(path)], event("Bash", command="ls"))
    assert proc.returncode == 0, proc.stderr  # the banner is ignored, the call is answered
    assert SECRET not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert "MCP server 'raw' wrote a line that is not a JSON-RPC message" in lines[0]
    assert "api_key=[REDACTED" in lines[0]
    assert "validation error" not in proc.stderr and "pydantic" not in proc.stderr


def test_the_sdks_own_log_records_are_one_redacted_line_each(tmp_path: Path) -> None:
    # an invalid notification: the SDK logs "Failed to validate notification" with its traceback and
    # pydantic's dump of the input, which holds what the server sent
    path = config(tmp_path, "bad_notification", data=f"token={SECRET}")
    proc = run_hookgate(["run", "--config", str(path)], event("Bash", command="ls"))
    assert proc.returncode == 0, proc.stderr
    assert SECRET not in proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("hookgate: client: ") and "Failed to validate notification" in lines[0]
