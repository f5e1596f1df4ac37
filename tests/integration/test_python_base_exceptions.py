"""A python handler's code raising a BaseException (SystemExit from argparse or sys.exit, KeyboardInterrupt,
GeneratorExit, a CancelledError of its own) fails that handler like any exception: never an exit of
hookgate, never an allow that overrides failClosed or a sibling's deny."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from gateway.api import Gateway
from gateway.events import HookEvent
from handlers.python import THREAD_CHARS
from tests.conftest import run_hookgate

PRE = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "rm -rf x"}, "cwd": "/tmp"}
FUNCS = "tests.integration.policy_funcs"


def _config(tmp_path: Path, *handlers: dict[str, Any]) -> str:
    path = tmp_path / "hookgate.json"
    path.write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": list(handlers)}]}}))
    return str(path)


def _py(name: str, **kw: Any) -> dict[str, Any]:
    key = "hook" if name[0].isupper() else "callable"
    return {"type": "python", key: f"{FUNCS}:{name}", **kw}


RAISERS = [
    ("exits", "SystemExit: 0"),
    ("argparse_help", "SystemExit: 0"),
    ("interrupted", "KeyboardInterrupt"),
    ("generator_exit", "GeneratorExit"),
    ("self_cancelled", "CancelledError"),
    ("async_exits", "SystemExit: 3"),
    ("ExitingHook", "SystemExit: 0"),
    ("AsyncExitingHook", "SystemExit: 0"),
    ("ExitingFilterHook", "SystemExit: 0"),
]


@pytest.mark.parametrize("mode", ["run", "serve"])
@pytest.mark.parametrize(("name", "message"), RAISERS)
async def test_a_base_exception_is_a_handler_failure(tmp_path: Path, name: str, message: str, mode: str) -> None:
    async with Gateway.from_file(_config(tmp_path, _py(name, failClosed=True)), mode=mode) as gw:
        d = await gw.dispatch(PRE)
    [result] = d.results
    assert (result.status, result.message) == ("error", message)
    assert d.permission == "deny"
    async with Gateway.from_file(_config(tmp_path, _py(name, failClosed=False), _py("deny_rm")), mode=mode) as gw:
        d = await gw.dispatch(PRE)
    assert sorted(r.status for r in d.results) == ["error", "ok"]  # (a class hook's chain runs after)
    assert (d.permission, d.permission_reason) == ("deny", "no rm")  # the sibling's deny holds


def test_sync_dispatch_without_a_loop(tmp_path: Path) -> None:
    """The inline executor (no event loop: ``hookgate run``'s path for plain functions)."""
    for name in ("exits", "argparse_help", "generator_exit", "ExitingHook"):
        gw = Gateway.from_file(_config(tmp_path, _py(name, failClosed=False), _py("deny_rm")), mode="run")
        event = gw.parse(PRE)
        assert isinstance(event, HookEvent)
        d = gw.dispatcher.decide(event, gw.context)
        assert d.permission == "deny" and sorted(r.status for r in d.results) == ["error", "ok"], name


def test_a_threadsafe_function_exiting_in_its_worker_thread(tmp_path: Path) -> None:
    event = {**PRE, "tool_input": {"command": "rm " + "x" * (THREAD_CHARS + 1)}}

    async def go() -> Any:
        path = _config(tmp_path, _py("threaded_exits", failClosed=True))
        async with Gateway.from_file(path, mode="serve") as gw:
            return await gw.dispatch(event)

    d = asyncio.run(go())
    assert d.permission == "deny" and d.results[0].message == "SystemExit: 0"


async def test_the_dispatchers_own_cancellation_still_goes_up(tmp_path: Path) -> None:
    async with Gateway.from_file(
        _config(tmp_path, {"type": "python", "callable": "tests.unit.dispatch_callables:slow"})
    ) as gw:
        task = asyncio.ensure_future(gw.dispatch(PRE))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


@pytest.mark.parametrize("name", ["exits", "argparse_help", "interrupted", "generator_exit", "async_exits"])
def test_hookgate_run_denies(tmp_path: Path, name: str) -> None:
    proc = run_hookgate(["run", "--config", _config(tmp_path, _py(name, failClosed=True))], PRE)
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    proc = run_hookgate(["run", "--config", _config(tmp_path, _py(name), _py("deny_rm"))], PRE)
    assert proc.returncode == 2 and "no rm" in proc.stderr, (proc.returncode, proc.stdout, proc.stderr)


def test_sigterm_during_a_python_handler_still_ends_the_run(tmp_path: Path) -> None:
    """The SIGTERM handler's exit (``gateway.errors.Terminated``) is not a handler's SystemExit: the run
    unwinds at once with 128 + SIGTERM, the next handler never runs."""
    import os
    import signal
    import subprocess
    import sys
    import time

    mark = tmp_path / "mark"
    config = _config(tmp_path, _py("sleeps"), _py("deny_rm"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "gateway", "run", "--config", config],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "HOOKGATE_TEST_MARK": str(mark)},
    )
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(PRE).encode())
    proc.stdin.close()
    for _ in range(200):
        if mark.exists():
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 128 + signal.SIGTERM
    assert proc.stdout is not None and proc.stdout.read() == b""


@pytest.mark.parametrize(
    ("handlers", "command"),
    [
        (["noisy_ask"], "rm x"),  # the inline path: no event loop
        (["noisy_ask", "async_noisy"], "rm x"),  # a loop hookgate run starts for the event
        (["noisy_ask", "async_noisy", "noisy_threaded"], "rm " + "x" * (THREAD_CHARS + 1)),  # a worker thread
    ],
)
def test_hookgate_run_sends_a_handlers_prints_to_stderr(tmp_path: Path, handlers: list[str], command: str) -> None:
    """Claude Code reads stdout as the answer only when it starts with ``{``: a check's print() must not
    come first (it would lose the ask and the updatedInput)."""
    event = {**PRE, "tool_input": {"command": command}}
    proc = run_hookgate(["run", "--config", _config(tmp_path, *(_py(name) for name in handlers))], event)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("{"), proc.stdout[:200]
    output = json.loads(proc.stdout)["hookSpecificOutput"]
    assert (output["permissionDecision"], output["updatedInput"]) == ("ask", {"command": "ls -l"})
    assert "checking Bash" in proc.stderr
    if len(handlers) > 1:
        assert "async check" in proc.stderr and "still checking" in proc.stderr  # (interleaved with the thread)
    if len(handlers) > 2:
        assert "threaded check" in proc.stderr


def test_hookgate_run_sends_writes_to_descriptor_1_to_stderr(tmp_path: Path) -> None:
    """Below print(): os.write(1, ...), a C library, a child process that inherits stdout. The answer is
    still the only thing on stdout (else the host reads no deny at all), the writes go to stderr."""
    proc = run_hookgate(["run", "--config", _config(tmp_path, _py("writes_fd1"))], PRE)
    assert proc.returncode == 2, proc.stderr
    output = json.loads(proc.stdout)["hookSpecificOutput"]
    assert (output["permissionDecision"], output["permissionDecisionReason"]) == ("deny", "no raw writes")
    assert "raw fd write" in proc.stderr and "child output" in proc.stderr


async def test_a_nul_in_a_path_field_is_a_malformed_event(tmp_path: Path) -> None:
    """A cwd with a NUL cannot be a folder (a command hook failed on it: "embedded null byte", open unless
    failClosed): the event is refused as malformed, like a field of the wrong type."""
    from gateway.errors import EventError

    async with Gateway.from_file(_config(tmp_path, {"type": "command", "command": "true"})) as gw:
        for field in ("cwd", "transcript_path", "agent_transcript_path"):
            with pytest.raises(EventError, match=f"^event field '{field}' must be a path, without NUL characters$"):
                await gw.dispatch({**PRE, field: "/tmp/a\x00b"})
        assert (await gw.dispatch({**PRE, "cwd": "/tmp/a b"})).results[0].status == "ok"


def test_hookgate_serve_answers_a_deny_not_a_500(tmp_path: Path) -> None:
    import httpx2

    from tests.integration.serve_helpers import ServeProcess

    handlers = [_py("exits", failClosed=True), _py("interrupted"), _py("threaded_exits", failClosed=True)]
    with ServeProcess(_config(tmp_path, *handlers)) as server:
        for command in ("rm x", "rm " + "x" * (THREAD_CHARS + 1)):
            event = {**PRE, "tool_input": {"command": command}}
            response = httpx2.post(f"{server.url}/hooks", json=event, timeout=30)
            assert response.status_code == 200, response.text
            assert response.json()["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert server.proc is not None and server.proc.poll() is None  # still serving
