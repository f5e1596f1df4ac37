"""A ``hookgate_threadsafe`` python function runs in a worker thread under a running loop when the event's
tool input is large (handlers.python.THREAD_CHARS), so a long check does not stop ``hookgate serve``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from gateway import Gateway
from handlers.python import THREAD_CHARS


def _thread(tmp_path: Path, function: str, command: str) -> str:
    config = tmp_path / "hookgate.json"
    hooks = [{"type": "python", "id": "probe", "callable": f"tests.fakes.threaded:{function}"}]
    config.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": hooks}]}}))
    event = {
        "hook_event_name": "PreToolUse",
        "session_id": "s",
        "tool_name": "Bash",
        "tool_input": {"command": command},
    }

    async def go() -> str:
        async with Gateway.from_file(str(config), mode="serve") as gateway:
            decision = await gateway.dispatch(event)
        [result] = decision.results
        assert result.status == "ok", result.message
        return str(result.meta["thread"])

    return asyncio.run(go())


@pytest.mark.parametrize(
    ("function", "size", "in_worker"),
    [
        ("where_threadsafe", THREAD_CHARS + 1, True),
        ("where_threadsafe", 100, False),  # a small input: called at once, in the loop's thread
        ("where", THREAD_CHARS * 4, False),  # no flag: never moved to another thread
    ],
)
def test_a_large_input_goes_to_a_worker_thread_only_for_a_threadsafe_function(
    tmp_path: Path, function: str, size: int, in_worker: bool
) -> None:
    thread = _thread(tmp_path, function, "echo " + "x" * size)
    assert (thread != "MainThread") is in_worker, thread


def test_the_default_guards_say_they_are_threadsafe() -> None:
    from configs.guards import secrets_guard, shell_guard

    assert getattr(shell_guard.check_event, "hookgate_threadsafe", False) is True
    assert getattr(secrets_guard.check_event, "hookgate_threadsafe", False) is True
