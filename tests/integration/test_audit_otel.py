"""OpenTelemetry spans from `hookgate run` and `hookgate serve` reach an OTLP/HTTP receiver on loopback;
without OTel configured the SDK is never imported."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import HOOKGATE, ROOT, run_hookgate
from tests.fakes.otlp_receiver import OtlpReceiver
from tests.integration.serve_helpers import ServeProcess

pytest.importorskip("opentelemetry.sdk")

GUARD = r"""#!/bin/sh
case "$(cat)" in *"rm -rf"*) echo "no rm -rf here" >&2; exit 2 ;; esac
exit 0
"""


def write_config(tmp_path: Path, audit: dict[str, Any] | None = None) -> Path:
    guard = tmp_path / "guard.sh"
    guard.write_text(GUARD)
    guard.chmod(0o755)
    config: dict[str, Any] = {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        {"type": "command", "id": "guard", "command": str(guard)},
                        {"type": "command", "id": "broken", "command": "exit 1"},
                    ],
                }
            ]
        },
        "settings": {"stateDir": str(tmp_path / "state")},
    }
    if audit:
        config["audit"] = audit
    path = tmp_path / "hookgate.json"
    path.write_text(json.dumps(config))
    return path


def bash(command: str) -> dict[str, Any]:
    return {
        "hook_event_name": "PreToolUse",
        "session_id": "sess-otel",
        "tool_name": "Bash",
        "tool_use_id": "toolu_otel_1",
        "tool_input": {"command": command},
        "cwd": "/tmp",
    }


def test_run_exports_spans_when_the_env_names_an_endpoint(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    with OtlpReceiver() as otlp:
        proc = run_hookgate(
            ["run", "--config", str(config)],
            bash("rm -rf /srv"),
            cwd=ROOT,
            env={"OTEL_EXPORTER_OTLP_ENDPOINT": otlp.endpoint, "OTEL_SERVICE_NAME": "ignored"},
        )
        assert proc.returncode == 2
        spans = otlp.wait_spans(3)
    by_name = {s["name"]: s for s in spans}
    parent = by_name["execute_tool Bash"]
    attrs = parent["attributes"]
    assert attrs["gen_ai.operation.name"] == "execute_tool"
    assert attrs["gen_ai.tool.name"] == "Bash"
    assert attrs["gen_ai.tool.call.id"] == "toolu_otel_1"
    assert attrs["gen_ai.conversation.id"] == "sess-otel"
    assert attrs["hookgate.decision"] == "deny" and attrs["hookgate.reason"] == "no rm -rf here"
    guard, broken = by_name["hookgate.handler guard"], by_name["hookgate.handler broken"]
    assert guard["parent_span_id"] == parent["span_id"] == broken["parent_span_id"]
    assert guard["attributes"]["hookgate.handler.type"] == "command"
    assert guard["attributes"]["hookgate.handler.status"] == "ok"
    assert broken["attributes"]["hookgate.handler.status"] == "error"
    assert broken["attributes"]["error.type"] == "error" and broken["status"] == "STATUS_CODE_ERROR"
    assert parent["resource"]["service.name"] == "hookgate"


def test_serve_exports_spans_from_the_config(tmp_path: Path) -> None:
    with OtlpReceiver() as otlp:
        config = write_config(
            tmp_path,
            audit={"otel": {"endpoint": otlp.endpoint, "serviceName": "hg-serve", "headers": {"x-tenant": "t1"}}},
        )
        with ServeProcess(config, cwd=ROOT) as server:
            for command in ("ls", "rm -rf /"):
                request = urllib.request.Request(
                    f"{server.url}/hooks",
                    data=json.dumps(bash(command)).encode(),
                    headers={"Content-Type": "application/json"},
                )
                with urllib.request.urlopen(request, timeout=30) as response:
                    assert response.status == 200
            spans = otlp.wait_spans(6)
        assert otlp.requests[0]["x-tenant"] == "t1"
    parents = [s for s in spans if s["name"] == "execute_tool Bash"]
    assert sorted(p["attributes"]["hookgate.decision"] for p in parents) == ["deny", "none"]
    assert {s["resource"]["service.name"] for s in spans} == {"hg-serve"}


PROBE = """
import json, sys
from gateway.cli import main
code = main(["run", "--config", sys.argv[1]])
sys.stderr.write("\\nLOADED=" + json.dumps(sorted(m for m in sys.modules if m.startswith("opentelemetry"))) + "\\n")
raise SystemExit(code)
"""


def test_no_otel_import_unless_configured(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("OTEL_")}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(config)],
        input=json.dumps(bash("ls")).encode(),
        capture_output=True,
        cwd=ROOT,
        timeout=60,
        check=False,
        env=env,
    )
    line = next(ln for ln in proc.stderr.decode().splitlines() if ln.startswith("LOADED="))
    assert json.loads(line.removeprefix("LOADED=")) == []


class SilentCollector:
    """A TCP listener on loopback that accepts connections and never answers (a hung collector)."""

    def __enter__(self) -> SilentCollector:
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.endpoint = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()


@pytest.mark.parametrize("timeout_env", [None, "8"])
def test_a_collector_that_never_answers_does_not_hold_back_the_answer(tmp_path: Path, timeout_env: str | None) -> None:
    """The exit flush waits at most ``RUN_CLOSE_SECONDS`` (not ``OTEL_EXPORTER_OTLP_TIMEOUT``): the host,
    which waits for the hook process to end, gets the deny long before its own timeout; stderr's first
    line is still the deny's reason, with one hookgate line about the spans and none of the SDK's."""
    import time

    config = write_config(tmp_path)
    with SilentCollector() as collector:
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint}
        if timeout_env:
            env["OTEL_EXPORTER_OTLP_TIMEOUT"] = timeout_env
        started = time.monotonic()
        proc = run_hookgate(["run", "--config", str(config)], bash("rm -rf /srv"), cwd=ROOT, env=env)
        took = time.monotonic() - started
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert "no rm -rf here" in lines and lines[-1].startswith("hookgate: audit: spans not exported to"), lines
    assert lines.index("no rm -rf here") < len(lines) - 1  # the answer first, the spans' line after it
    assert "Failed to export" not in proc.stderr and "Transient error" not in proc.stderr
    assert took < 6.0, took  # (8 s of exporter timeout would be far past this; the wait is 1 s)


def test_serve_stops_promptly_when_the_collector_never_answers(tmp_path: Path) -> None:
    import signal
    import time

    with SilentCollector() as collector:
        config = write_config(tmp_path, audit={"otel": {"endpoint": collector.endpoint}})
        with ServeProcess(config, cwd=ROOT) as server:
            request = urllib.request.Request(
                f"{server.url}/hooks",
                data=json.dumps(bash("ls")).encode(),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=30) as response:
                assert response.status == 200
            assert server.proc is not None
            started = time.monotonic()
            server.proc.send_signal(signal.SIGTERM)
            server.proc.wait(timeout=30)
            took = time.monotonic() - started
    assert took < 8.0, took  # docker's stop grace period is 10 s; the flush waits 2 s


def _post(url: str, event: dict[str, Any]) -> None:
    request = urllib.request.Request(
        f"{url}/hooks", data=json.dumps(event).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 200


def test_serve_spans_end_when_the_answer_was_decided(tmp_path: Path) -> None:
    """A server writes its records a batch at a time (up to a quarter second later, after the store's
    commit); the dispatch span ends at the record's time, when the answer was decided, not when it is
    written, so a span's duration is the dispatch's."""
    from datetime import datetime

    with OtlpReceiver() as otlp:
        config = write_config(tmp_path, audit={"otel": {"endpoint": otlp.endpoint}})
        with ServeProcess(config, cwd=ROOT) as server:
            commands = ["ls", "pwd", "rm -rf /tmp/x"]
            for command in commands:
                _post(server.url, {**bash(command), "tool_use_id": f"toolu_{command}"})
            spans = otlp.wait_spans(3 * len(commands))
    query = run_hookgate(["audit", "query", "--json", "--config", str(config)], cwd=ROOT)
    assert query.returncode == 0, query.stderr
    decided = {
        r["tool_use_id"]: datetime.fromisoformat(r["time"].replace("Z", "+00:00")).timestamp()
        for r in json.loads(query.stdout)
    }
    parents = [s for s in spans if s["name"] == "execute_tool Bash"]
    assert len(parents) == len(commands)
    for parent in parents:
        call = parent["attributes"]["gen_ai.tool.call.id"]
        assert abs(parent["end_ns"] / 1e9 - decided[call]) < 0.0015, (call, parent["end_ns"], decided[call])
        children = [s for s in spans if s["parent_span_id"] == parent["span_id"]]
        assert len(children) == 2 and all(c["end_ns"] <= parent["end_ns"] for c in children)


def test_serve_says_when_spans_stop_and_start_going_out(tmp_path: Path) -> None:
    """A collector that cannot be reached is one log line while serve runs (not one per batch, and not
    only at shutdown), and one more when spans go out again."""
    import socket

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there yet
    endpoint = f"http://127.0.0.1:{port}"
    config = write_config(tmp_path, audit={"otel": {"endpoint": endpoint}})
    with ServeProcess(config, cwd=ROOT) as server:
        _post(server.url, bash("ls"))
        line = server.wait_log(r"spans not exported to", timeout=30)
        assert f"audit: spans not exported to {endpoint}/v1/traces (" in line, line
        assert "the records are kept" in line and "Traceback" not in "\n".join(server.lines)
        _post(server.url, bash("pwd"))
        import time

        time.sleep(3)  # a second failed batch: no second line
        assert sum("spans not exported" in ln for ln in server.lines) == 1, server.lines
        with OtlpReceiver(port=port) as otlp:
            _post(server.url, bash("whoami"))
            otlp.wait_spans(3, timeout=30)
            server.wait_log(r"spans are exported to .* again", timeout=30)


@pytest.mark.parametrize(
    ("otel", "said"),
    [
        (
            {"endpoint": "localhost:4318"},
            "audit.otel.endpoint: 'localhost:4318': expected the collector's http:// or https:// base URL",
        ),
        ({"endpoint": "http://127.0.0.1:4318", "headers": {"x-team": 7}}, "audit.otel.headers.x-team: "),
        ("http://127.0.0.1:4318", "audit.otel: expected true, false or a mapping (endpoint, headers, serviceName)"),
    ],
)
def test_a_mistake_in_audit_otel_is_one_line_about_itself(tmp_path: Path, otel: Any, said: str) -> None:
    """``audit.otel`` takes true, false or a mapping: a mistake inside the mapping was reported as an error of
    each member of a ``bool | OtelSection`` union, and the line ``hookgate run`` printed was the first,
    ``audit.otel.bool: Input should be a valid boolean, got dict``."""
    config = write_config(tmp_path, audit={"otel": otel})
    check = run_hookgate(["validate", "--config", str(config)], cwd=ROOT)
    assert check.returncode != 0
    errors = [line for line in check.stdout.splitlines() + check.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and said in errors[0], check.stdout + check.stderr
    assert "bool" not in errors[0] and "OtelSection" not in errors[0]
    run = run_hookgate(["run", "--config", str(config)], bash("ls"), cwd=ROOT)
    assert said in run.stderr and "valid boolean" not in run.stderr, run.stderr


def test_otel_true_without_an_endpoint_names_where_spans_went(tmp_path: Path) -> None:
    """``otel: true`` with no endpoint anywhere: the SDK's default; its failure line names that URL, not
    "the OTLP endpoint"."""
    import os
    import socket

    with socket.socket() as sock:
        if sock.connect_ex(("127.0.0.1", 4318)) == 0:
            pytest.skip("a collector listens on localhost:4318")
    config = write_config(tmp_path, audit={"otel": True})
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    proc = subprocess.run(
        [*HOOKGATE, "run", "--config", str(config)],
        input=json.dumps(bash("ls")).encode(),
        capture_output=True,
        cwd=ROOT,
        timeout=60,
        check=False,
        env=env,
    )
    line = proc.stderr.decode().splitlines()[-1]
    assert line.startswith("hookgate: audit: spans not exported to http://localhost:4318/v1/traces (the default: "), (
        line
    )
