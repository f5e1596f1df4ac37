"""Issue 10, class 5: parallel Stops of one session never block more often than ``stopBlockLimit``,
through a real ``hookgate serve`` and through parallel ``hookgate run`` processes; the judge is a
prompt handler against a local fake of the Anthropic API that always says "not done" (slowly)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx2
import pytest

from tests.conftest import HOOKGATE
from tests.fakes.anthropic_api import FakeAnthropic, delayed, tool_use
from tests.fakes.serving import listening_socket
from tests.integration.serve_helpers import ServeProcess, isolated_env

JSON = {"content-type": "application/json"}


def blocking_judge(seconds: float) -> Iterator[FakeAnthropic]:
    """A judge that always says "not done", after ``seconds`` (long enough for every parallel stop to
    reach the guard while the first ones are still being judged)."""
    with FakeAnthropic(sock=listening_socket()) as fake:
        fake.responder = lambda body: delayed(
            tool_use("submit_verdict", {"ok": False, "reason": "run the tests"}), seconds
        )
        yield fake


@pytest.fixture
def always_blocks() -> Iterator[FakeAnthropic]:
    yield from blocking_judge(2.0)


@pytest.fixture
def slowly_blocks() -> Iterator[FakeAnthropic]:
    yield from blocking_judge(6.0)


def stop_config(tmp_path: Path, fake: FakeAnthropic) -> Path:
    config = tmp_path / "hookgate.json"
    config.write_text(
        json.dumps(
            {
                "hooks": {
                    "Stop": [
                        {"hooks": [{"type": "prompt", "prompt": "Done? $ARGUMENTS", "id": "judge", "timeout": 120}]}
                    ]
                },  # a loaded machine is slow to start 30 processes
                "llm": {"default": "fake", "providers": {"fake": {"type": "anthropic", "baseUrl": fake.base_url}}},
                "settings": {"stopBlockLimit": 3, "stateDir": str(tmp_path / "state")},
            }
        )
    )
    return config


STOP = {
    "hook_event_name": "Stop",
    "session_id": "parallel-session",
    "cwd": "/tmp",
    "stop_hook_active": False,
    "last_assistant_message": "All done.",
}


def test_30_parallel_stops_through_serve_block_at_most_the_limit(tmp_path: Path, always_blocks: FakeAnthropic) -> None:
    env = {**isolated_env(tmp_path), "ANTHROPIC_API_KEY": "sk-test"}
    with (
        ServeProcess(stop_config(tmp_path, always_blocks), env=env) as server,
        httpx2.Client(timeout=120) as client,
        ThreadPoolExecutor(30) as pool,
    ):
        answers = list(
            pool.map(
                lambda _: client.post(f"{server.url}/hooks", content=json.dumps(STOP).encode(), headers=JSON).json(),
                range(30),
            )
        )
    blocks = [a for a in answers if a.get("decision") == "block"]
    assert len(blocks) == 3, [a.get("decision") for a in answers]
    assert all("stopBlockLimit" in a.get("systemMessage", "") for a in answers if a.get("decision") != "block")


def test_30_parallel_stops_through_run_block_at_most_the_limit(tmp_path: Path, slowly_blocks: FakeAnthropic) -> None:
    config = stop_config(tmp_path, slowly_blocks)
    env = {**os.environ, "ANTHROPIC_API_KEY": "sk-test"}
    procs = [
        subprocess.Popen(
            [*HOOKGATE, "run", "--config", str(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        for _ in range(30)
    ]
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(STOP).encode())
        proc.stdin.close()
    outputs = []
    for proc in procs:
        assert proc.stdout is not None and proc.stderr is not None
        outputs.append((proc.stdout.read(), proc.wait(timeout=180)))
        proc.stdout.close()
        proc.stderr.close()
    answers = [json.loads(out) for out, _ in outputs]
    assert [a.get("decision") for a in answers].count("block") == 3, [a for a in answers if "skipped" not in str(a)]
    assert all("stopBlockLimit" in a.get("systemMessage", "") for a in answers if a.get("decision") != "block")
    codes = [code for _, code in outputs]
    assert codes.count(2) == 3 and codes.count(0) == 27, codes  # a block exits 2 (JSON and stderr), the rest 0
