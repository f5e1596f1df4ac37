"""Property-based fuzzing of every way an event gets in (issue 10, class 4): malformed input is a
one-line error, never a crash.

- ``hookgate serve`` (a real server on 127.0.0.1): every POST route (``/hooks``, ``/hooks/{dialect}``
  for each dialect and ``auto``, with and without the trailing slash) gets generated events and raw
  bodies. Every answer is 200, or 400/413 with a one-line ``{"error": ...}``; never 500, and the
  server's log never holds a traceback.
- ``hookgate run`` in every dialect: each generated event runs in a forked child that executes the real
  command line entry point (``gateway.__main__`` path: ``main(["run", "--dialect", D, ...])``) with the
  event on its stdin, so exit codes, stdout and stderr are those of a real process. The exit code is
  0, 1 or 2; stderr never holds a traceback or an "internal error".

Each property runs at least its ``*_EXAMPLES`` generated events (2,000 in all per run of this file) under a
wall-clock bound (``DEADLINE_S`` per property): the test fails when the budget is blown.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.integration.serve_helpers import ServeProcess, isolated_env

SCALE = float(os.environ.get("HOOKGATE_FUZZ_SCALE", "1"))
SERVE_EXAMPLES = int(1200 * SCALE)
RUN_EXAMPLES = int(800 * SCALE)
"""Generated events per property: 2,000 per run of this file (a forked ``run`` costs more than a request)."""
DEADLINE_S = 240.0
"""Wall-clock budget per property (seconds); the machine is shared, so generous."""

CANONICAL = [
    "SessionStart",
    "Setup",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "Notification",
    "SubagentStart",
    "SubagentStop",
    "Stop",
    "StopFailure",
    "ConfigChange",
    "FileChanged",
    "WorktreeCreate",
    "PreCompact",
    "SessionEnd",
    "Elicitation",
    "MessageDisplay",
    "TaskCreated",
    "TeammateIdle",
    "CwdChanged",
]
KIRO = ["agentSpawn", "userPromptSubmit", "preToolUse", "postToolUse", "stop"]
GEMINI = [
    "BeforeTool",
    "AfterTool",
    "BeforeAgent",
    "AfterAgent",
    "BeforeModel",
    "AfterModel",
    "BeforeToolSelection",
    "PreCompress",
    "Notification",
    "SessionStart",
    "SessionEnd",
]
CODEX = ["Interrupt"]
TOOLS = [
    "Bash",
    "Write",
    "Edit",
    "MultiEdit",
    "Read",
    "NotebookEdit",
    "WebFetch",
    "mcp__git__status",
    "execute_bash",
    "fs_write",
    "fs_read",
    "@git/status",
    "run_shell_command",
    "write_file",
    "replace",
    "exec_command",
    "apply_patch",
    "shell",
    "Agent",
    "Task",
]
FIELDS = [
    "session_id",
    "transcript_path",
    "cwd",
    "permission_mode",
    "tool_name",
    "tool_input",
    "tool_use_id",
    "tool_response",
    "prompt",
    "stop_hook_active",
    "last_assistant_message",
    "agent_id",
    "agent_type",
    "source",
    "reason",
    "error",
    "trigger",
    "notification_type",
    "file_path",
    "turn_id",
    "model",
    "timestamp",
    "llm_request",
    "llm_response",
    "tool_calls",
    "message",
    "title",
    "matcher",
    "hookEventName",
    "mcp_server_name",
    "command_name",
    "load_reason",
    "worktree_path",
]
INPUT_KEYS = [
    "command",
    "file_path",
    "path",
    "content",
    "new_string",
    "old_string",
    "edits",
    "url",
    "patch",
    "input",
    "description",
    "notebook_path",
    "file_paths",
    "args",
    "cmd",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
    st.sampled_from(
        [
            "rm -rf /",
            "/tmp",
            ".env",
            "~/.ssh/authorized_keys",
            "$(touch x)",
            "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch",
            "",
            "\u0000",
            "\ud800",
            "../../etc/passwd",
        ]
    ),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)),
    max_leaves=12,
)
event_names = st.one_of(st.sampled_from(CANONICAL + KIRO + GEMINI + CODEX), json_values)
tool_inputs = st.one_of(st.dictionaries(st.sampled_from(INPUT_KEYS), json_values, max_size=4), json_values)


@st.composite
def events(draw: st.DrawFn) -> dict[str, Any]:
    event: dict[str, Any] = {}
    if draw(st.integers(0, 9)):
        event["hook_event_name"] = draw(event_names)
    if draw(st.booleans()):
        event["tool_name"] = draw(st.one_of(st.sampled_from(TOOLS), json_values))
    if draw(st.booleans()):
        event["tool_input"] = draw(tool_inputs)
    for name in draw(st.lists(st.sampled_from(FIELDS), max_size=6, unique=True)):
        event[name] = draw(json_values)
    return event


def encode(event: dict[str, Any]) -> bytes:
    return json.dumps(event, ensure_ascii=False).encode("utf-8", "surrogatepass")


raw_bodies = st.one_of(
    st.binary(max_size=64),
    st.sampled_from(
        [
            b"",
            b"null",
            b"[]",
            b"1",
            b'"x"',
            b"{",
            b"\xff\xfe{}",
            b'{"hook_event_name": "Stop"',
            b'{"a": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        ]
    ),
)
bodies = st.one_of(events().map(encode), raw_bodies)

ROUTES = [
    "/hooks",
    "/hooks/",
    *(f"/hooks/{d}{s}" for d in ("claude", "kiro", "gemini", "codex", "auto") for s in ("", "/")),
]
DIALECTS = ["auto", "claude", "kiro", "gemini", "codex"]


class Budget:
    """Fails the property once ``seconds`` of wall-clock time have gone by."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.started = time.monotonic()
        self.count = 0

    def tick(self) -> None:
        self.count += 1
        elapsed = time.monotonic() - self.started
        assert elapsed < self.seconds, f"fuzzing took over {self.seconds:.0f} s after {self.count} events"


def one_line_error(body: bytes) -> str:
    data = json.loads(body)
    assert isinstance(data, dict) and set(data) == {"error"}, data
    error = data["error"]
    assert isinstance(error, str) and error and "\n" not in error, error
    return error


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    base = tmp_path_factory.mktemp("fuzz-serve")
    env = {**isolated_env(base), "HOOKGATE_TOKEN": "fuzz-token"}
    with ServeProcess("builtin:default", env=env, args=["--reload-interval", "0"]) as proc:
        yield proc


def test_serve_answers_every_generated_event_without_a_500(server: ServeProcess) -> None:
    budget = Budget(DEADLINE_S)
    statuses: dict[int, int] = {}
    headers = {"content-type": "application/json", "authorization": "Bearer fuzz-token"}
    with httpx2.Client(base_url=server.url, headers=headers, timeout=60) as client:

        @settings(
            max_examples=SERVE_EXAMPLES,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
        @given(
            route=st.sampled_from(ROUTES),
            body=bodies,
            project_dir=st.one_of(
                st.none(), st.sampled_from(["/tmp", "relative", "/no/such/dir", "%00", "/tmp/x$(touch /tmp/pwned)", ""])
            ),
        )
        def check(route: str, body: bytes, project_dir: str | None) -> None:
            budget.tick()
            extra = {} if project_dir is None else {"x-hookgate-project-dir": project_dir}
            response = client.post(route, content=body, headers=extra)
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            assert response.status_code in (200, 400, 413), (
                route,
                body[:200],
                response.status_code,
                response.text[:300],
            )
            if response.status_code != 200:
                one_line_error(response.content)
            else:
                assert isinstance(response.json(), dict)

        check()
    assert budget.count >= SERVE_EXAMPLES
    assert statuses.get(200, 0) > 0 and statuses.get(400, 0) > 0, statuses  # both kinds were generated
    assert not [line for line in server.lines if "Traceback" in line or "internal error" in line], "\n".join(
        server.lines[-40:]
    )


# ---------------------------------------------------------------------------------- hookgate run


def run_forked(argv: list[str], stdin: bytes, timeout: float = 60.0) -> tuple[int, bytes, bytes]:
    """Run hookgate's real command line entry point in a forked child: ``(exit_code, stdout, stderr)``."""
    from gateway.cli import main

    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: a hookgate run process
        code = 1
        try:
            os.dup2(in_r, 0)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            for fd in (in_r, in_w, out_r, out_w, err_r, err_w):
                os.close(fd)
            sys.stdin = open(0, closefd=False)  # noqa: SIM115
            sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
            sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException as exc:  # what would have been a traceback
            os.write(2, f"Traceback (most recent call last): {type(exc).__name__}: {exc}\n".encode())
            code = 99
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
    os.close(in_r)
    os.close(out_w)
    os.close(err_w)
    with contextlib.suppress(BrokenPipeError):
        os.write(in_w, stdin)  # bodies here are small: one write fits the pipe
    os.close(in_w)
    out, err = bytearray(), bytearray()
    open_fds = {out_r: out, err_r: err}
    deadline = time.monotonic() + timeout
    while open_fds:
        ready, _, _ = select.select(list(open_fds), [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            os.kill(pid, 9)
            raise AssertionError(f"hookgate {' '.join(argv)} did not finish in {timeout} s: {stdin[:200]!r}")
        for fd in ready:
            chunk = os.read(fd, 65536)
            if chunk:
                open_fds[fd].extend(chunk)
            else:
                os.close(fd)
                del open_fds[fd]
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), bytes(out), bytes(err)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_run_answers_every_generated_event_with_0_1_or_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gateway.cli  # warm the imports once, so each forked child starts at once
    from gateway.config import default_config_path, load_config

    monkeypatch.chdir(tmp_path)
    load_config([default_config_path()])  # fills the config cache the children read
    budget = Budget(DEADLINE_S)
    codes: dict[int, int] = {}

    @settings(
        max_examples=RUN_EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(dialect=st.sampled_from(DIALECTS), body=bodies)
    def check(dialect: str, body: bytes) -> None:
        budget.tick()
        code, _out, err = run_forked(["run", "--dialect", dialect, "--config", "builtin:default"], body)
        codes[code] = codes.get(code, 0) + 1
        text = err.decode("utf-8", "replace")
        assert code in (0, 1, 2), (dialect, body[:200], code, text[-500:])
        assert "Traceback" not in text and "internal error" not in text, (dialect, body[:200], text[-500:])
        if code == 1:
            assert text.count("\n") == 1, (dialect, body[:200], text)

    assert gateway.cli is not None
    check()
    assert budget.count >= RUN_EXAMPLES
    assert codes.get(1, 0) > 0 and codes.get(0, 0) > 0, codes
