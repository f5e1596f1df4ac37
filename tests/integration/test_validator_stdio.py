"""The policy validator's stdio transport (configs/validators/stdio.py): the SDK's stdio_server on asyncio pipe
streams, the SDK's own thread-backed transport when stdout is not a pipe, and stray prints kept off the wire."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from typing import IO

from tests.conftest import ROOT

POLICY = str(ROOT / "configs" / "validators" / "policy.py")
EXCHANGE = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "check_command", "arguments": {"command": "rm -rf /"}},
    },
    {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "no_such_tool", "arguments": {}}},
]


def _send(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stdin is not None
    proc.stdin.write("".join(json.dumps(m) + "\n" for m in EXCHANGE).encode())
    proc.stdin.flush()


def _check(lines: list[str]) -> None:
    answers = {m["id"]: m for m in map(json.loads, lines)}
    assert answers[1]["result"]["serverInfo"]["name"] == "hookgate-policy"
    output = answers[2]["result"]["structuredContent"]["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny" and "rm -rf /" in output["permissionDecisionReason"]
    assert answers[3]["result"]["isError"] is True and "no_such_tool" in answers[3]["result"]["content"][0]["text"]


def test_validator_over_pipes() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-I", POLICY], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        _send(proc)
        assert proc.stdout is not None
        lines = [proc.stdout.readline().decode() for _ in range(3)]  # initialize, and the two calls
    finally:
        assert proc.stdin is not None
        proc.stdin.close()  # end of input: the server exits
        assert proc.wait(60) == 0
    _check(lines)


def _lines_in(out: IO[bytes], count: int, proc: subprocess.Popen[bytes]) -> list[str]:
    deadline = time.monotonic() + 60  # a bound on a wait, not a timing assertion
    while time.monotonic() < deadline and proc.poll() is None:
        out.seek(0)
        lines = out.read().decode().splitlines()
        if len(lines) >= count:
            return lines
        time.sleep(0.02)
    raise AssertionError(f"the validator wrote no {count} answers")


def test_validator_with_a_file_for_stdout_uses_the_sdk_transport() -> None:
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(
            [sys.executable, "-I", POLICY], stdin=subprocess.PIPE, stdout=out, stderr=subprocess.PIPE
        )
        try:
            _send(proc)
            lines = _lines_in(out, 3, proc)
        finally:
            assert proc.stdin is not None
            proc.stdin.close()
            assert proc.wait(60) == 0
    _check(lines)


STRAY = """
import asyncio, sys
sys.path.insert(0, sys.argv[1])
from configs.validators.stdio import pipe_streams

async def main():
    async with pipe_streams() as streams:
        lines, writer = streams
        print("stray output")  # fd 1 is stderr meanwhile: never on the wire
        sys.stdout.flush()
        async for line in lines:
            await writer.write("echo " + line)
            await writer.flush()
    print("after")  # fd 1 is the wire again

asyncio.run(main())
"""


def test_pipe_streams_keep_stray_output_off_the_wire() -> None:
    done = subprocess.run(
        [sys.executable, "-c", STRAY, str(ROOT)], input=b"one\ntwo\n", capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"echo one\necho two\nafter\n"
    assert b"stray output" in done.stderr
