"""Issue 10, class 10: the agent handler's read-only tools refuse hard-linked files, through a real
``hookgate run`` whose agent talks to a local fake of the Anthropic API."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import run_hookgate
from tests.fakes.anthropic_api import FakeAnthropic, tool_results, tool_use
from tests.fakes.serving import listening_socket


@pytest.fixture
def claude() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(sock=listening_socket()) as fake:
        yield fake


def test_agent_tools_refuse_a_hard_link_to_a_file_outside_the_project(tmp_path: Path, claude: FakeAnthropic) -> None:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hello')\n")
    secret = tmp_path / "outside-secret.txt"
    secret.write_text("TOP SECRET hard-linked\n")
    try:
        os.link(secret, root / "notes.txt")  # same file system (both under tmp_path)
        os.link(secret, root / "src" / "data.txt")
    except OSError as exc:
        pytest.skip(f"cannot make hard links here: {exc}")
    claude.script(
        tool_use("Read", {"path": "notes.txt"}),
        tool_use("Grep", {"pattern": "SECRET"}),
        tool_use("Grep", {"pattern": "SECRET", "path": "src/data.txt"}),
        tool_use("Glob", {"pattern": "**/*.txt"}),
        tool_use("Read", {"path": "src/app.py"}),
        tool_use("submit_verdict", {"ok": True, "reason": "fine"}),
    )
    config = tmp_path / "hookgate.json"
    config.write_text(
        json.dumps(
            {
                "hooks": {
                    "Stop": [{"hooks": [{"type": "agent", "prompt": "Check the work. $ARGUMENTS", "id": "verifier"}]}]
                },
                "llm": {"default": "fake", "providers": {"fake": {"type": "anthropic", "baseUrl": claude.base_url}}},
                "settings": {"stateDir": str(tmp_path / "state")},
            }
        )
    )
    event = {
        "hook_event_name": "Stop",
        "session_id": "s1",
        "cwd": str(root),
        "stop_hook_active": False,
        "last_assistant_message": "done",
    }
    proc = run_hookgate(["run", "--config", str(config)], event, env={"ANTHROPIC_API_KEY": "sk-test"})
    assert proc.returncode == 0, proc.stderr
    outputs = [(r["is_error"], r["content"]) for r in tool_results(claude.message_requests[-1].body)]
    assert len(outputs) == 5, outputs
    assert outputs[0][0] and "hard link" in outputs[0][1]
    assert outputs[1] == (False, "(no matches)")  # walks skip hard-linked files
    assert outputs[2][0] and "hard link" in outputs[2][1]
    assert outputs[3][1] == "(no files match)"
    assert outputs[4] == (False, "     1\tprint('hello')")
    assert not any("TOP SECRET" in body for _, body in outputs)
