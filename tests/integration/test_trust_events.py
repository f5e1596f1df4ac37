"""Issue 10, classes 2, 3 and 4, through ``hookgate run`` subprocesses and a real ``hookgate serve``:
big events, event data parsed as shell code, malformed events in serve."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx2
import pytest

from tests.conftest import run_hookgate
from tests.integration.serve_helpers import ServeProcess, isolated_env

JSON = {"content-type": "application/json"}
MIB = 1024 * 1024


def padded_write(path: str, size: int) -> bytes:
    """A Write of ``path`` whose content pads the event to about ``size`` bytes."""
    return json.dumps(
        {
            "hook_event_name": "PreToolUse",
            "session_id": "s1",
            "cwd": "/tmp",
            "tool_name": "Write",
            "tool_input": {"file_path": path, "content": "A" * size},
        }
    ).encode()


# ------------------------------------------------------------------ class 2: big events


@pytest.mark.parametrize("target", ["/tmp/project/.env", "~/.ssh/authorized_keys"])
def test_a_write_padded_past_8_mib_is_still_judged(target: str) -> None:
    proc = run_hookgate(
        ["run", "--config", "builtin:default"], padded_write(os.path.expanduser(target), 12 * MIB), timeout=120
    )
    assert proc.returncode == 2, proc.stderr[-500:]
    assert "secret" in proc.stderr.lower() or "ssh" in proc.stderr.lower(), proc.stderr[-500:]


@pytest.mark.parametrize("dialect", ["claude", "kiro", "gemini", "codex"])
def test_an_event_over_the_limit_is_denied_in_the_hosts_dialect(dialect: str) -> None:
    names = {"claude": "PreToolUse", "kiro": "preToolUse", "gemini": "BeforeTool", "codex": "PreToolUse"}
    body = json.dumps(
        {"hook_event_name": names[dialect], "tool_name": "Bash", "tool_input": {"command": "echo " + "x" * (2 * MIB)}}
    ).encode()
    proc = run_hookgate(
        ["run", "--dialect", dialect, "--config", "builtin:default"], body, env={"HOOKGATE_MAX_EVENT_BYTES": str(MIB)}
    )
    assert "limit" in proc.stderr + proc.stdout and "Traceback" not in proc.stderr
    if dialect == "gemini":  # Gemini's own deny: a JSON decision (what Gemini CLI honours)
        assert json.loads(proc.stdout)["decision"] == "deny", proc.stdout
        return
    assert proc.returncode == 2, proc.stderr
    if dialect in ("claude", "codex"):
        assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_the_default_limit_is_at_least_64_mib() -> None:
    body = json.dumps(
        {
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "ls", "description": "d" * (60 * MIB)},
        }
    ).encode()
    proc = run_hookgate(["run", "--config", "builtin:default"], body, timeout=120)
    assert (proc.returncode, proc.stderr) == (0, "")


@pytest.fixture(scope="module")
def default_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with ServeProcess("builtin:default", env=isolated_env(tmp_path_factory.mktemp("big"))) as server:
        yield server


def test_serve_judges_a_write_padded_past_8_mib(default_server: ServeProcess) -> None:
    response = httpx2.post(
        f"{default_server.url}/hooks", content=padded_write("/tmp/p/.env", 12 * MIB), headers=JSON, timeout=120
    )
    assert response.status_code == 200, response.text[:300]
    assert response.json()["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_serve_denies_an_event_over_its_limit_with_http_200(tmp_path: Path) -> None:
    with ServeProcess("builtin:default", env=isolated_env(tmp_path), args=["--max-body", str(MIB)]) as server:
        body = padded_write("/tmp/p/notes.txt", 2 * MIB)
        response = httpx2.post(f"{server.url}/hooks", content=body, headers=JSON, timeout=60)
        assert response.status_code == 200, response.text[:300]
        answer = response.json()["hookSpecificOutput"]
        assert answer["permissionDecision"] == "deny" and "limit" in answer["permissionDecisionReason"]
        for dialect, name in (
            ("kiro", "preToolUse"),
            ("gemini", "BeforeTool"),
            ("claude", "PreToolUse"),
            ("auto", "preToolUse"),
        ):
            big = json.dumps(
                {"hook_event_name": name, "tool_name": "Bash", "tool_input": {"command": "x" * (2 * MIB)}}
            ).encode()
            response = httpx2.post(f"{server.url}/hooks/{dialect}", content=big, headers=JSON, timeout=60)
            assert response.status_code == 200, response.text[:300]
            envelope = response.json()
            if dialect == "gemini":
                assert json.loads(envelope["stdout"])["decision"] == "deny"
            else:
                assert envelope["exit_code"] == 2 and "limit" in envelope["stderr"], envelope
        stop = json.dumps({"hook_event_name": "Stop", "session_id": "s", "x": "y" * (2 * MIB)}).encode()
        response = httpx2.post(f"{server.url}/hooks", content=stop, headers=JSON, timeout=60)
        assert response.status_code == 200  # never a non-2xx, which Claude Code's http hook reads as "go ahead"


def test_the_thin_client_never_forwards_an_event_cut_short(default_server: ServeProcess) -> None:
    body = padded_write("/tmp/p/notes.txt", 2 * MIB)
    for argv in (
        ["run", "--server", default_server.url],
        ["run", "--server", default_server.url, "--on-server-down", "open"],
    ):
        proc = run_hookgate(argv, body, env={"HOOKGATE_MAX_EVENT_BYTES": str(MIB)})
        assert proc.returncode == 2 and "limit" in proc.stderr, proc.stderr
    from gateway import client

    script = subprocess.run(
        [sys.executable, "-I", "-S", client.__file__, default_server.url],
        input=body,
        capture_output=True,
        env={**os.environ, "HOOKGATE_MAX_EVENT_BYTES": str(MIB)},
        check=False,
    )
    assert script.returncode == 2 and b"limit" in script.stderr


# ------------------------------------------------------------------ class 3: event data as shell code


def exec_form_config(tmp_path: Path, script: str) -> Path:
    config = tmp_path / "hookgate.json"
    config.write_text(
        json.dumps(
            {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "sh", "args": ["-c", script]}]}]}}
        )
    )
    return config


def test_exec_form_sh_c_never_runs_a_cwd_as_code(tmp_path: Path) -> None:
    evil = tmp_path / "x$(touch pwned)"  # the command would run in the event's cwd: that directory
    evil.mkdir()
    pwned = evil / "pwned"
    config = exec_form_config(tmp_path, 'echo "project: ${CLAUDE_PROJECT_DIR}" >&2; exit 0')
    event = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": str(evil)}
    proc = run_hookgate(["run", "--config", str(config)], event)
    assert not pwned.exists(), "the event's cwd was run as shell code"
    assert proc.returncode == 0, proc.stderr
    plain = tmp_path / "plain"
    plain.mkdir()
    marker = plain / "seen"
    config = exec_form_config(tmp_path, f'[ "${{CLAUDE_PROJECT_DIR}}" = "{plain}" ] && touch "{marker}"')
    run_hookgate(["run", "--config", str(config)], {**event, "cwd": str(plain)})
    assert marker.exists()  # the placeholder still reaches the script, as a variable


@pytest.mark.parametrize("argv", [["bash", "-c"], ["/bin/sh", "-ec"], ["env", "sh", "-c"], ["bash", "-lc"]])
def test_other_shell_spellings_are_safe_too(tmp_path: Path, argv: list[str]) -> None:
    evil = tmp_path / "y`touch pwned`"
    evil.mkdir()
    pwned = evil / "pwned"
    ran = tmp_path / "ran"
    config = tmp_path / "hookgate.json"
    config.write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [
                        {
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": argv[0],
                                    "args": [*argv[1:], f"echo ${{CLAUDE_PROJECT_DIR}} >/dev/null; touch {ran}"],
                                }
                            ]
                        }
                    ]
                }
            }
        )
    )
    proc = run_hookgate(
        ["run", "--config", str(config)],
        {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": str(evil)},
    )
    assert proc.returncode == 0 and ran.exists(), proc.stderr  # the hook did run
    assert not pwned.exists()


def test_validate_warns_about_a_placeholder_inside_a_shell_script(tmp_path: Path) -> None:
    config = exec_form_config(tmp_path, "cd ${CLAUDE_PROJECT_DIR} && ls")
    check = run_hookgate(["validate", str(config)])
    assert check.returncode == 0
    warning = [line for line in check.stdout.splitlines() if "args[1]" in line]
    assert warning and "warning" in warning[0] and '"$1"' in warning[0], check.stdout


def test_event_data_is_never_pasted_into_other_interpreters_code(tmp_path: Path) -> None:
    evil = tmp_path / "q'); open('pwned', 'w'); print('"
    evil.mkdir()
    config = tmp_path / "hookgate.json"
    config.write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [
                        {
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": sys.executable,
                                    "args": ["-c", "print('${CLAUDE_PROJECT_DIR}')"],
                                }
                            ]
                        }
                    ]
                }
            }
        )
    )
    check = run_hookgate(["validate", str(config)])
    assert check.returncode == 1 and "args[1]" in check.stdout and "environment variable" in check.stdout
    proc = run_hookgate(
        ["run", "--config", str(config)],
        {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": str(evil)},
    )
    assert proc.returncode == 2  # the handler cannot run safely: it fails closed on its own event
    assert not (evil / "pwned").exists()


@pytest.fixture
def project_dir_server(tmp_path: Path) -> Iterator[tuple[ServeProcess, Path]]:
    pwned = tmp_path / "pwned"
    config = exec_form_config(tmp_path, 'echo "dir=${CLAUDE_PROJECT_DIR}" >&2; exit 2')
    with ServeProcess(config, env={**isolated_env(tmp_path), "HOOKGATE_TOKEN": "t"}) as server:
        yield server, pwned


def test_project_dir_header_is_never_shell_code_and_must_be_an_existing_directory(
    project_dir_server: tuple[ServeProcess, Path], tmp_path: Path
) -> None:
    server, pwned = project_dir_server
    event = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": "/tmp"}

    def post(value: str) -> httpx2.Response:
        return httpx2.post(
            f"{server.url}/hooks",
            content=json.dumps(event).encode(),
            timeout=30,
            headers={**JSON, "authorization": "Bearer t", "x-hookgate-project-dir": quote(value)},
        )

    for value in (f"/tmp/x$(touch {pwned})", "relative/dir", "/no/such/dir"):
        response = post(value)
        assert response.status_code == 400, response.text
        assert "X-Hookgate-Project-Dir" in response.json()["error"]
    evil = tmp_path / "z$(touch pwned)"
    evil.mkdir()
    response = post(str(evil))  # an existing directory with a hostile name: accepted, and inert
    assert response.status_code == 200
    assert f"dir={evil}" in response.json()["hookSpecificOutput"]["permissionDecisionReason"]
    assert not pwned.exists() and not (evil / "pwned").exists() and not Path("/tmp/pwned").exists()


# ------------------------------------------------------------------ class 4: malformed events in serve


@pytest.mark.parametrize(
    "route", ["/hooks", "/hooks/claude", "/hooks/kiro", "/hooks/gemini", "/hooks/codex", "/hooks/auto"]
)
@pytest.mark.parametrize("name", [[], {}, ["PreToolUse"], {"a": 1}, 5, None, 1.5, True])
def test_a_non_string_event_name_is_a_400_on_every_route(default_server: ServeProcess, route: str, name: Any) -> None:
    mark = len(default_server.lines)
    response = httpx2.post(
        f"{default_server.url}{route}", content=json.dumps({"hook_event_name": name}).encode(), headers=JSON, timeout=30
    )
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert isinstance(error, str) and "\n" not in error and "hook_event_name" in error
    assert not [line for line in default_server.lines[mark:] if "Traceback" in line]


@pytest.mark.parametrize("dialect", ["kiro", "gemini", "codex", "auto"])
def test_run_answers_a_non_string_event_name_with_one_line(dialect: str) -> None:
    proc = run_hookgate(["run", "--dialect", dialect, "--config", "builtin:default"], b'{"hook_event_name": []}')
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "internal error" not in proc.stderr


# ------------------------------------------------------------------ NaN and Infinity: not JSON, never passed on

STRICT_GUARD = (
    "import json, sys\n"
    "event = json.loads(sys.stdin.read(), parse_constant=lambda c: sys.exit(f'not JSON: {c}'))\n"  # as JSON.parse
    "if 'rm' in event['tool_input'].get('cmd', ''):\n"
    "    print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PreToolUse', 'permissionDecision': 'deny',"
    " 'permissionDecisionReason': 'no rm'}}))\n"
)


def _strict_config(tmp_path: Path) -> str:
    guard = tmp_path / "guard.py"
    guard.write_text(STRICT_GUARD)
    config = tmp_path / "hookgate.json"
    hook = {"type": "command", "command": f"{sys.executable} {guard}"}
    config.write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": [hook]}]}}))
    return str(config)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_an_event_holding_nan_or_infinity_is_denied_not_handed_to_a_strict_hook(tmp_path: Path, constant: str) -> None:
    """Python reads NaN, a strict parser (JSON.parse, jq, this guard) fails on it, and a failed hook lets the
    call run: such an event is undecodable, denied where a block holds an action back."""
    body = f'{{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/tmp","tool_name":"t","tool_input":{{"cmd":"rm -rf /","n":{constant}}}}}'
    proc = run_hookgate(["run", "--config", _strict_config(tmp_path)], body.encode(), env=isolated_env(tmp_path))
    assert proc.returncode == 2, proc.stderr
    reason = json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert f"{constant.lstrip('-')} is not a JSON number" in reason
    stop = f'{{"hook_event_name":"Stop","session_id":"s","cwd":"/tmp","x":{constant}}}'
    proc = run_hookgate(["run", "--config", _strict_config(tmp_path)], stop.encode(), env=isolated_env(tmp_path))
    assert proc.returncode == 1 and "is not a JSON number" in proc.stderr  # where a block holds nothing back


async def test_the_python_api_refuses_what_a_json_event_cannot_hold(tmp_path: Path) -> None:
    """A Python agent's tool arguments come from json.loads of what the model wrote (NaN included) or are
    built in code (a tuple key, a Path): refused with the field named, before any hook sees them."""
    from gateway.api import Gateway
    from gateway.errors import EventError, EventUndecodable, ToolCallDenied

    deep: Any = 1
    for _ in range(300):
        deep = [deep]
    async with Gateway.from_file(_strict_config(tmp_path)) as gw:
        for args, message in (
            ({"cmd": "rm -rf /", "n": float("nan")}, "event field 'tool_input.n' holds nan"),
            ({"cmd": "ls", "n": [1, float("-inf")]}, "event field 'tool_input.n[1]' holds -inf"),
            ({(1, 2): 1}, "event field 'tool_input' has a tuple key (1, 2)"),
            ({"p": Path("/x")}, "event field 'tool_input.p' holds a PosixPath, which is not a JSON value"),
        ):
            with pytest.raises(EventError, match=f"^{re.escape(message)}"):
                async with gw.tool_call("t", args, session_id="s"):
                    raise AssertionError("the tool ran")
        with pytest.raises(EventUndecodable, match="nested too deeply"):
            await gw.dispatch({"hook_event_name": "PreToolUse", "tool_name": "t", "tool_input": {"x": deep}})
        with pytest.raises(ToolCallDenied, match="no rm"):  # the same guard, on JSON it can read, still denies
            async with gw.tool_call("t", {"cmd": "rm -rf /", "n": 1.5, 2: "int keys are written as strings"}):
                pass
