"""Helpers for the hookgate scenarios driven by the real Claude Code CLI (``test_claude_hookgate.py``).

* ``STREAM_ARGS`` / ``StreamRun``: run the CLI with ``--output-format stream-json --verbose
  --include-hook-events`` so the CLI itself reports every hook it ran (``hook_response`` events
  with ``exit_code``, ``stdout``, ``stderr``, ``outcome``): that is the hook log the tests read,
  next to ``permission_denials`` (from the final ``result`` event) and files on disk.
* ``hookgate_env(tmp)``: hookgate's config cache and state live in the test's tmp dir.
* ``write_config(path, hooks, ...)``: a hookgate config file (JSON) with ``settings.stateDir`` in
  the test's tmp dir.
* ``HookgateServer``: ``hookgate serve`` as a real subprocess inside the e2e network namespace,
  so that the CLI's ``type: "http"`` hooks and the thin client can reach it.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

from tests.e2e.claude_cli import ClaudeRun
from tests.e2e.netns import Sandbox

T = TypeVar("T")
JsonDict = dict[str, Any]

STREAM_ARGS = ("--output-format", "stream-json", "--verbose", "--include-hook-events", "--allowedTools", "Bash")


@dataclass
class StreamRun:
    """A ``claude -p`` run in stream-json mode, parsed."""

    run: ClaudeRun

    @cached_property
    def events(self) -> list[JsonDict]:
        found: list[JsonDict] = []
        for line in self.run.stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                with contextlib.suppress(ValueError):
                    found.append(json.loads(line))
        return found

    @property
    def result(self) -> JsonDict:
        """The final ``{"type": "result", ...}`` event ({} when the CLI printed none)."""
        return next((e for e in reversed(self.events) if e.get("type") == "result"), {})

    @property
    def permission_denials(self) -> list[JsonDict]:
        return list(self.result.get("permission_denials") or [])

    @property
    def denied_commands(self) -> list[str]:
        return [d.get("tool_input", {}).get("command", "") for d in self.permission_denials]

    def hook_responses(self, event: str | None = None) -> list[JsonDict]:
        """The CLI's record of each hook it ran (``exit_code``; for http hooks the HTTP status)."""
        return [
            e
            for e in self.events
            if e.get("type") == "system"
            and e.get("subtype") == "hook_response"
            and (event is None or e.get("hook_event") == event)
        ]

    def hook_answers(self, event: str) -> list[JsonDict]:
        """The JSON each hook of ``event`` printed or returned ({} for an empty answer)."""
        answers = []
        for response in self.hook_responses(event):
            out = str(response.get("stdout") or "").strip()
            answers.append(json.loads(out) if out.startswith("{") else {})
        return answers

    @property
    def main_requests(self) -> list[Any]:
        """The CLI's main-loop Messages calls (the ones offering tools; not prompt-hook or hookgate calls)."""
        return [
            r
            for r in self.run.requests
            if r.path == "/v1/messages"
            and isinstance(r.body, dict)
            and r.headers.get("user-agent", "").startswith("claude-cli/")
            and any(t.get("name") == "Bash" for t in r.body.get("tools") or [])
        ]

    @property
    def tool_uses(self) -> list[JsonDict]:
        return self.run.tool_uses

    @property
    def tool_results(self) -> list[JsonDict]:
        return self.run.tool_results

    def describe(self) -> str:
        hooks = [
            (e.get("hook_name"), e.get("exit_code"), e.get("outcome"), str(e.get("output"))[:300])
            for e in self.hook_responses()
        ]
        result = {k: v for k, v in self.result.items() if k not in ("usage", "modelUsage")}
        kinds = [f"{r.method} {r.path} [{r.kind}] {r.headers.get('user-agent', '')[:20]}" for r in self.run.requests]
        return (
            f"rc={self.run.returncode} elapsed={self.run.elapsed:.2f}s\nrequests={kinds}\nhooks={hooks}\n"
            f"result={json.dumps(result)[:1500]}\nstderr={self.run.stderr[-1500:]}"
        )


def hookgate_env(tmp: Path) -> dict[str, str]:
    """Env for hook processes: hookgate's config cache and default state dir under ``tmp``."""
    return {"HOOKGATE_CACHE_DIR": str(tmp / "hookgate-cache"), "XDG_STATE_HOME": str(tmp / "xdg-state")}


def state_dir(tmp: Path) -> Path:
    return tmp / "hookgate-state"


def write_config(
    path: Path, hooks: Mapping[str, Any], *, settings: Mapping[str, Any] | None = None, **sections: Any
) -> Path:
    """A hookgate config (JSON) whose ``settings.stateDir`` is ``<path's dir>/hookgate-state``."""
    doc: JsonDict = {
        "hooks": dict(hooks),
        **sections,
        "settings": {"stateDir": str(state_dir(path.parent)), **(settings or {})},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2))
    return path


def write_script(path: Path, body: str) -> Path:
    """An executable script (``body`` includes its ``#!`` line)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    path.chmod(0o755)
    return path


# --------------------------------------------------------------------------- hookgate serve


def _inside(sandbox: Sandbox, fn: Callable[[], T]) -> T:
    return sandbox.netns.run_inside(fn) if sandbox.netns is not None else fn()


def free_port(sandbox: Sandbox) -> int:
    """A port that is free on the sandbox's loopback (bound then released)."""
    sock = sandbox.bind_loopback(0)
    port = int(sock.getsockname()[1])
    sock.close()
    return port


def http_get(sandbox: Sandbox, port: int, path: str, timeout: float = 2.0) -> tuple[int, bytes]:
    """``GET http://127.0.0.1:port/path`` from inside the sandbox: ``(status, body)``."""

    def get() -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        try:
            conn.request("GET", path)
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    return _inside(sandbox, get)


@dataclass
class HookgateServer:
    """``hookgate serve`` in the sandbox; ``start()`` waits for ``GET /healthz``."""

    executable: Path
    sandbox: Sandbox
    config: Path
    env: Mapping[str, str]
    log: Path
    cwd: Path | None = None
    port: int = 0
    extra_args: Sequence[str] = ()
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, ready_timeout: float = 20.0) -> HookgateServer:
        self.port = self.port or free_port(self.sandbox)
        argv = self.sandbox.wrap(
            [
                str(self.executable),
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--config",
                str(self.config),
                *self.extra_args,
            ]
        )
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, **self.env},
                cwd=self.cwd,
                start_new_session=True,
            )
        deadline = time.monotonic() + ready_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"hookgate serve exited rc={self.proc.returncode}: {self.log_text()[-1500:]}")
            with contextlib.suppress(OSError):
                if http_get(self.sandbox, self.port, "/healthz", timeout=0.5)[0] == 200:
                    return self
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"hookgate serve not ready after {ready_timeout}s: {self.log_text()[-1500:]}")

    def get(self, path: str) -> tuple[int, str]:
        status, body = http_get(self.sandbox, self.port, path)
        return status, body.decode("utf-8", "replace")

    def metric(self, name: str, **labels: str) -> float:
        """One sample of ``GET /metrics`` (Prometheus text); 0.0 when absent."""
        want = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
        for line in self.get("/metrics")[1].splitlines():
            if line.startswith("#") or " " not in line:
                continue
            key, value = line.rsplit(" ", 1)
            series, _, label_text = key.partition("{")
            found = ",".join(sorted(label_text.rstrip("}").split(","))) if label_text else ""
            if series == name and found == want:
                return float(value)
        return 0.0

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=5)

    def __enter__(self) -> HookgateServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
