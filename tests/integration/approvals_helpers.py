"""Helpers for the approval tests: a config file, a waiting ``hookgate run`` as a real subprocess, and
``hookgate approvals`` from another process."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import HOOKGATE, run_hookgate


def write_config(
    directory: Path,
    handler: dict[str, Any] | None = None,
    channels: dict[str, Any] | None = None,
    matcher: str = "Bash",
    event: str = "PreToolUse",
    name: str = "hookgate.yaml",
) -> Path:
    """A config with one approval handler (``handler`` overrides its fields) on ``event``."""
    entry = {"type": "approval", "timeout": 20, "message": "Run ${tool_input.command} in ${cwd}?"}
    entry.update(handler or {})
    doc: dict[str, Any] = {"hooks": {event: [{"matcher": matcher, "hooks": [entry]}]}}
    if channels:
        doc["channels"] = channels
    path = directory / name
    path.write_text(yaml.safe_dump(doc))
    return path


def bash_event(
    command: str = "git push origin main",
    *,
    tool_use_id: str | None = "toolu_01",
    session_id: str = "sess-1",
    cwd: str = "/repo",
    event: str = "PreToolUse",
) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "hook_event_name": event,
        "session_id": session_id,
        "cwd": cwd,
        "tool_name": "Bash",
        "tool_input": {"command": command},
    }
    if tool_use_id is not None:
        payload["tool_use_id"] = tool_use_id
    return payload


class Waiting:
    """``hookgate ARGS`` started with ``event`` on stdin; ``finish()`` -> (exit code, stdout, stderr)."""

    def __init__(self, args: list[str], event: dict[str, Any], env: dict[str, str] | None = None) -> None:
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [*HOOKGATE, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
        )
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(event).encode())
        self.proc.stdin.close()
        self.proc.stdin = None  # communicate() must not flush it again

    def finish(self, timeout: float = 60) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=timeout)
        self.elapsed = time.monotonic() - self.started
        return self.proc.returncode, out.decode(), err.decode()

    def running(self) -> bool:
        return self.proc.poll() is None


def approvals(config: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``hookgate approvals ARGS --config CONFIG`` from another process."""
    return run_hookgate(["approvals", *args, "--config", str(config)], env=env)


def listed(config: Path, env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    result = approvals(config, "list", "--json", env=env)
    assert result.returncode == 0, result.stderr
    records: list[dict[str, Any]] = json.loads(result.stdout)
    return records


def wait_for_pending(
    config: Path, count: int = 1, timeout: float = 30, env: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """The pending requests, once there are ``count`` of them (fails after ``timeout`` s)."""
    deadline = time.monotonic() + timeout
    while True:
        pending = [r for r in listed(config, env) if r["status"] == "pending"]
        if len(pending) >= count:
            return pending
        assert time.monotonic() < deadline, f"no {count} pending request(s) within {timeout} s"
        time.sleep(0.1)


def decision_of(stdout: str) -> dict[str, Any]:
    output: dict[str, Any] = json.loads(stdout)["hookSpecificOutput"]
    return output


def run_event(config: Path, event: dict[str, Any], timeout: float = 60) -> tuple[int, str, str]:
    """``hookgate run --config CONFIG`` on ``event``: (exit code, stdout, stderr)."""
    result = run_hookgate(["run", "--config", str(config)], event, timeout=timeout)
    return result.returncode, result.stdout, result.stderr


def wait_for_waiters(approval_id: str, count: int, timeout: float = 30) -> None:
    """Until ``count`` processes wait on ``approval_id`` (their FIFOs in the state dir's approvals-wake)."""
    folder = Path(os.environ["XDG_STATE_HOME"]) / "hookgate" / "approvals-wake"
    deadline = time.monotonic() + timeout
    while len(list(folder.glob(f"{approval_id}.*.fifo"))) < count:
        assert time.monotonic() < deadline, f"fewer than {count} waiter(s) on {approval_id}"
        time.sleep(0.05)
