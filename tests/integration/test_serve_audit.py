"""`hookgate serve` records every event through its writer process: a real server, real events, the
records read back through `hookgate audit`; the writer is a child of the server and ends with it."""

from __future__ import annotations

import json
import os
import time
import urllib.request
from pathlib import Path

from tests.conftest import run_hookgate
from tests.integration.serve_helpers import ServeProcess

KEY = "sk-ant-api03-" + "q" * 40
ROOT = Path(__file__).resolve().parents[2]


def post(url: str, command: str, i: int) -> dict[str, object]:
    event = {
        "hook_event_name": "PreToolUse",
        "session_id": "serve-audit",
        "cwd": "/tmp",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": f"toolu_{i}",
    }
    request = urllib.request.Request(
        f"{url}/hooks", data=json.dumps(event).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        answer: dict[str, object] = json.loads(response.read())
    return answer


def writer_pids(server_pid: int) -> list[int]:
    """The server's child processes running ``gateway.audit.writer``."""
    found = []
    for task in os.listdir(f"/proc/{server_pid}/task"):
        for child in Path(f"/proc/{server_pid}/task/{task}/children").read_text().split():
            try:
                cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
            except OSError:
                continue
            if b"gateway.audit.writer" in cmdline:
                found.append(int(child))
    return found


def test_serve_records_every_event_through_its_writer_process(tmp_path: Path) -> None:
    state = tmp_path / "state"
    config = tmp_path / "hookgate.yaml"
    config.write_text(f"settings:\n  stateDir: {state}\n")
    with ServeProcess("builtin:default", config, cwd=ROOT) as server:
        assert server.proc is not None
        answers = [post(server.url, f"echo {i} {KEY}" if i % 2 else "rm -rf /", i) for i in range(40)]
        assert sum(1 for a in answers if a) == 20  # the guard denied every rm -rf /
        deadline = time.monotonic() + 20
        while not writer_pids(server.proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        (writer,) = writer_pids(server.proc.pid)
        assert os.getsid(writer) != os.getsid(server.proc.pid)  # a terminal's Ctrl-C does not reach it
        assert post(server.url, "ls", 40) == {}
        assert server.stop() == 0  # SIGTERM: the server closes the pipe, the writer writes what it has
    assert not Path(f"/proc/{writer}").exists()  # and ends; nothing is left behind
    query = run_hookgate(["audit", "query", "--json", "--session", "serve-audit", "-c", str(config)])
    assert query.returncode == 0, query.stderr
    rows = json.loads(query.stdout)
    assert sorted(int(r["tool_use_id"].split("_")[1]) for r in rows) == list(range(41))
    assert {r["decision"] for r in rows} == {"deny", "none"}
    verify = run_hookgate(["audit", "verify", "-c", str(config)])
    assert verify.returncode == 0 and "41 record(s) ok" in verify.stdout, verify.stdout + verify.stderr
    for path in state.rglob("*"):  # redacted before anything reached the disk
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
