"""The thin client (``hookgate run --server``) against a real ``hookgate serve``, and without one."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import CASES, ROOT, load_case, run_hookgate
from tests.integration.serve_helpers import ServeProcess, isolated_env

GUARDS = str(CASES / "configs" / "guards.json")
KIRO = str(CASES / "configs" / "kiro-agent.json")
CLAUDE_CASES = ["pretooluse-bash-rm-rf.json", "pretooluse-bash-safe.json", "pretooluse-write-env.json",
                "userpromptsubmit.json", "stop.json", "sessionend.json"]
KIRO_CASES = ["pretooluse-execute-bash-rm.json", "agentspawn.json", "userpromptsubmit.json"]
HEAVY = ("pydantic", "httpx2", "httpcore2", "anthropic", "openai", "mcp", "yaml", "asyncio", "starlette",
         "uvicorn", "tenacity", "argparse", "gateway.events", "gateway.config")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with ServeProcess(GUARDS, KIRO, env=isolated_env(tmp_path_factory.mktemp("serve"))) as s:
        yield s


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def outcome(proc: subprocess.CompletedProcess[str]) -> tuple[int, str, str]:
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("name", CLAUDE_CASES)
def test_same_answer_as_in_process(server: ServeProcess, name: str) -> None:
    event = load_case("claude", name)
    local = run_hookgate(["run", "--config", GUARDS, "--config", KIRO], event)
    remote = run_hookgate(["run", "--server", server.url], event)
    assert outcome(remote) == outcome(local)


@pytest.mark.parametrize("name", KIRO_CASES)
def test_same_answer_as_in_process_for_kiro(server: ServeProcess, name: str) -> None:
    event = load_case("kiro", name)
    local = run_hookgate(["run", "--config", GUARDS, "--config", KIRO, "--dialect", "kiro"], event)
    remote = run_hookgate(["run", "--dialect", "kiro"], event, env={"HOOKGATE_SERVER": server.url})
    assert outcome(remote) == outcome(local)


def test_malformed_event_is_exit_1_with_one_line(server: ServeProcess) -> None:
    proc = run_hookgate(["run", "--server", server.url], "{oops")
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("hookgate: event is not valid JSON") and proc.stderr.count("\n") == 1


def test_standalone_script_form(server: ServeProcess) -> None:
    script = str(ROOT / "gateway" / "client.py")
    proc = subprocess.run([sys.executable, "-I", "-S", script, server.url], capture_output=True, text=True,
                          input=json.dumps(load_case("claude", "pretooluse-bash-rm-rf.json")), check=False)
    assert proc.returncode == 2 and "Destructive command blocked by hook" in proc.stderr
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_thin_client_imports_only_the_standard_library(server: ServeProcess) -> None:
    event = json.dumps(load_case("claude", "pretooluse-bash-rm-rf.json"))
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "gateway", "run", "--server", server.url],
                          input=event, capture_output=True, text=True, check=False)
    assert proc.returncode == 2, proc.stderr
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines()
                if line.startswith("import time:") and line.split("|")[0][12:].strip().isdigit()}
    assert {"gateway.client", "gateway.cli"} <= imported
    assert not imported & set(HEAVY), imported & set(HEAVY)
    ours = {m for m in imported if m.split(".")[0] in ("gateway", "handlers", "configs")}
    assert ours == {"gateway", "gateway.cli", "gateway.client", "gateway.errors"}  # __main__ runs, is not imported
    stdlib = set(sys.stdlib_module_names)
    site = {"site", "sitecustomize", "_distutils_hack", "__editable___hookgate_0_1_0_finder", "encodings"}
    others = {m for m in imported - ours if m.split(".")[0] not in stdlib and m.split(".")[0] not in site}
    assert not {m for m in others if not m.startswith("__editable__")}, others


# ---------------------------------------------------------------------------- server down


def test_unreachable_server_falls_back_to_in_process_dispatch() -> None:
    event = load_case("claude", "pretooluse-bash-rm-rf.json")
    local = run_hookgate(["run", "--config", GUARDS], event)
    remote = run_hookgate(["run", "--config", GUARDS, "--server", f"http://127.0.0.1:{closed_port()}"], event)
    assert outcome(remote) == outcome(local) and remote.returncode == 2


def test_unreachable_server_fails_open_or_closed_when_asked() -> None:
    event = load_case("claude", "pretooluse-bash-safe.json")
    url = f"http://127.0.0.1:{closed_port()}"
    opened = run_hookgate(["run", "--server", url, "--on-server-down", "open"], event)
    assert (opened.returncode, opened.stdout) == (0, "") and "failing open" in opened.stderr
    closed = run_hookgate(["run", "--server", url], event, env={"HOOKGATE_ON_SERVER_DOWN": "closed"})
    assert (closed.returncode, closed.stdout) == (2, "")
    assert closed.stderr.startswith("hookgate: server unavailable (cannot connect to 127.0.0.1:")
    assert closed.stderr.rstrip().endswith("failing closed") and closed.stderr.count("\n") == 1


def test_wrong_token_counts_as_server_down(tmp_path: Path) -> None:
    event = load_case("claude", "pretooluse-bash-rm-rf.json")
    with ServeProcess(GUARDS, env={"HOOKGATE_TOKEN": "right"}) as served:
        good = run_hookgate(["run", "--server", served.url], event, env={"HOOKGATE_TOKEN": "right"})
        assert good.returncode == 2 and "Destructive" in good.stderr
        bad = run_hookgate(["run", "--server", served.url, "--on-server-down=open"], event,
                           env={"HOOKGATE_TOKEN": "wrong"})
        assert bad.returncode == 0 and "HTTP 401" in bad.stderr


def test_server_timeout_is_server_down(tmp_path: Path) -> None:
    script = tmp_path / "slow.sh"
    script.write_text("#!/bin/sh\nsleep 3\n")
    script.chmod(0o755)
    config = tmp_path / "hookgate.yaml"
    config.write_text(f"hooks:\n  PreToolUse:\n    - hooks: [{{type: command, command: '{script}'}}]\n")
    with ServeProcess(config) as served:
        proc = run_hookgate(["run", "--server", served.url, "--on-server-down", "closed"],
                            load_case("claude", "pretooluse-bash-safe.json"), env={"HOOKGATE_SERVER_TIMEOUT": "0.5"})
    assert proc.returncode == 2 and "no answer from 127.0.0.1" in proc.stderr


def test_unusual_arguments_still_work_through_argparse(server: ServeProcess) -> None:
    event = load_case("claude", "pretooluse-bash-rm-rf.json")
    proc = run_hookgate(["run", f"--server={server.url}", "-c", GUARDS, "--dialect=claude"], event)
    assert proc.returncode == 2
    helped = run_hookgate(["run", "--help"], "", env={"HOOKGATE_SERVER": server.url})
    assert helped.returncode == 0 and "--on-server-down" in helped.stdout


def test_bad_server_url_is_server_down() -> None:
    proc = run_hookgate(["run", "--server", "unix:///tmp/x", "--on-server-down", "closed"],
                        load_case("claude", "stop.json"), env={**os.environ})
    assert proc.returncode == 2 and "must start with http://" in proc.stderr
