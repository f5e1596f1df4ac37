"""Install the pinned Claude Code CLI with npm (cached) and run it offline against the fake API."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.e2e.netns import Sandbox
from tests.fakes.anthropic_api import FakeAnthropic, RecordedRequest, ScriptItem, tool_results

CLAUDE_VERSION = "2.1.197"
CLAUDE_PACKAGE = f"@anthropic-ai/claude-code@{CLAUDE_VERSION}"
API_KEY = "sk-test-hookgate-e2e"
INSTALL_TIMEOUT_S = 600
DEFAULT_ARGS = ("--output-format", "json", "--allowedTools", "Bash")

# Keep the CLI from calling anything but ANTHROPIC_BASE_URL (telemetry, updates, error reports,
# DNS), and make it fail fast instead of retrying for minutes when the fake is unreachable.
OFFLINE_ENV = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_MAX_RETRIES": "0",
}


class ClaudeUnavailable(RuntimeError):
    """The CLI can't be installed or started here; the message is a one-line skip reason."""


# --------------------------------------------------------------------------- install


def cache_root() -> Path:
    """``$HOOKGATE_E2E_CACHE``, else ``$XDG_CACHE_HOME/hookgate-e2e`` (``~/.cache/hookgate-e2e``)."""
    if explicit := os.environ.get("HOOKGATE_E2E_CACHE"):
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hookgate-e2e"


def install_dir(root: Path | None = None) -> Path:
    return (root or cache_root()) / f"claude-{CLAUDE_VERSION}"


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else "(no output)"


def _npm_reason(output: str) -> str:
    """``code: message`` from npm's error lines, e.g. ``ECONNREFUSED: FetchError: request to ...``."""
    lines = [line.removeprefix("npm error").strip() for line in output.splitlines()]
    lines = [line for line in lines if line and not line.startswith(("A complete log", "syscall", "errno"))]
    code = next((line.removeprefix("code ") for line in lines if line.startswith("code ")), "")
    message = next((line for line in lines if not line.startswith("code ")), _last_line(output))
    return f"{code}: {message}"[:200] if code else message[:200]


def cli_version(binary: Path) -> str:
    """``claude --version`` (e.g. ``2.1.197 (Claude Code)``); raises ClaudeUnavailable."""
    try:
        done = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=60, env=_minimal_env()
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ClaudeUnavailable(f"{binary} --version failed: {exc}") from exc
    if done.returncode != 0:
        raise ClaudeUnavailable(f"{binary} --version: rc={done.returncode}: {_last_line(done.stderr)}")
    return done.stdout.strip()


def _candidates(target: Path) -> list[Path]:
    # With --ignore-scripts the .bin stub only says "native binary not installed": fall back to
    # the platform package's binary, which is the real thing.
    modules = target / "node_modules"
    return [modules / ".bin" / "claude", *sorted(modules.glob("@anthropic-ai/claude-code-*/claude"))]


def locate_binary(target: Path) -> Path | None:
    for candidate in _candidates(target):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            with contextlib.suppress(ClaudeUnavailable):
                if cli_version(candidate).startswith(CLAUDE_VERSION):
                    return candidate
    return None


def _npm_install(npm: str, workdir: Path) -> None:
    workdir.mkdir(parents=True)
    (workdir / "package.json").write_text(json.dumps({"name": "hookgate-e2e-claude", "private": True}))
    cmd = [npm, "install", "--no-audit", "--no-fund", "--loglevel=error", CLAUDE_PACKAGE]
    try:
        done = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise ClaudeUnavailable(f"npm install {CLAUDE_PACKAGE} timed out after {INSTALL_TIMEOUT_S}s") from exc
    if done.returncode != 0:
        reason = _npm_reason(done.stderr or done.stdout)
        raise ClaudeUnavailable(f"npm install {CLAUDE_PACKAGE} failed (rc={done.returncode}): {reason}")


@contextlib.contextmanager
def _install_lock(root: Path) -> Iterator[None]:
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f".claude-{CLAUDE_VERSION}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _install(root: Path, target: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise ClaudeUnavailable(f"npm not found on PATH, cannot install {CLAUDE_PACKAGE}")
    staging = root / f".{target.name}.tmp-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        _npm_install(npm, staging)
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def ensure_claude(root: Path | None = None) -> Path:
    """Path of a working ``claude`` binary of the pinned version, installing it into the cache if needed.

    ``$HOOKGATE_E2E_CLAUDE`` points at an existing binary instead (any version; no install).
    Raises ``ClaudeUnavailable`` with a one-line reason.
    """
    if explicit := os.environ.get("HOOKGATE_E2E_CLAUDE"):
        cli_version(Path(explicit))
        return Path(explicit)
    root = root or cache_root()
    target = install_dir(root)
    if found := locate_binary(target):
        return found
    with _install_lock(root):
        if found := locate_binary(target):  # another process installed it meanwhile
            return found
        _install(root, target)
    if found := locate_binary(target):
        return found
    raise ClaudeUnavailable(f"{CLAUDE_PACKAGE} installed in {target} but no working claude binary found")


# --------------------------------------------------------------------------- run


def _minimal_env() -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"), "LANG": "C.UTF-8"}
    env.update({k: os.environ[k] for k in ("USER", "LOGNAME", "TZ") if k in os.environ})
    return env


def claude_env(home: Path, base_url: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A clean environment: nothing inherited from the caller's ANTHROPIC_*/CLAUDE_* vars; the
    caller's HOOKGATE_* vars are passed on (hooks started by the CLI see them)."""
    venv_bin = str(Path(sys.prefix) / "bin")
    env = _minimal_env()
    env.update({k: v for k, v in os.environ.items() if k.startswith("HOOKGATE_")})
    env.update(
        {
            "PATH": f"{venv_bin}{os.pathsep}{env['PATH']}",
            "HOME": str(home),
            "SHELL": shutil.which("bash") or "/bin/sh",
            "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": API_KEY,
            **OFFLINE_ENV,
        }
    )
    env.update(extra or {})
    return env


@dataclass
class ClaudeRun:
    """One ``claude -p`` run: exit code, parsed JSON result and what the fake API saw."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    elapsed: float
    requests: list[RecordedRequest] = field(default_factory=list)

    @property
    def result(self) -> dict[str, Any] | None:
        """The ``--output-format json`` object (None if stdout is not one JSON object)."""
        try:
            value = json.loads(self.stdout)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    @property
    def permission_denials(self) -> list[dict[str, Any]]:
        return list((self.result or {}).get("permission_denials") or [])

    @property
    def scripted_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.kind == "scripted"]

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        """The tool_use blocks the fake model sent (with their ids), in order."""
        replies = [r.reply for r in self.requests if r.reply]
        return [b for reply in replies for b in reply["content"] if b["type"] == "tool_use"]

    @property
    def tool_results(self) -> list[dict[str, Any]]:
        """The tool_result blocks the CLI sent back, as of its last Messages request."""
        bodies = [r.body for r in self.requests if r.path == "/v1/messages" and isinstance(r.body, dict)]
        return tool_results(bodies[-1]) if bodies else []

    def describe(self) -> str:
        """For assertion messages."""
        kinds = [f"{r.method} {r.path} [{r.kind}]" for r in self.requests]
        return (
            f"rc={self.returncode} elapsed={self.elapsed:.2f}s\nrequests={kinds}\n"
            f"stdout={self.stdout[-2000:]}\nstderr={self.stderr[-2000:]}"
        )


def write_project_settings(project_dir: Path, settings: Mapping[str, Any] | None) -> None:
    """``<project>/.claude/settings.json`` (the file a user would write); None writes nothing."""
    project_dir.mkdir(parents=True, exist_ok=True)
    if settings is not None:
        (project_dir / ".claude").mkdir(exist_ok=True)
        (project_dir / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2))


def _communicate(proc: subprocess.Popen[str], timeout: float) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the CLI and the tool/hook processes it started
        out, err = proc.communicate()
        return out, err + f"\n[hookgate e2e] killed after {timeout}s timeout"


@dataclass
class ClaudeCli:
    """The installed CLI plus where it runs: ``run()`` is the whole harness."""

    binary: Path
    sandbox: Sandbox

    def run(
        self,
        fake: FakeAnthropic,
        project_dir: Path,
        settings: Mapping[str, Any] | None,
        script: Sequence[ScriptItem],
        prompt: str,
        *,
        home: Path,
        args: Sequence[str] = DEFAULT_ARGS,
        env: Mapping[str, str] | None = None,
        timeout: float = 90.0,
    ) -> ClaudeRun:
        write_project_settings(project_dir, settings)
        home.mkdir(parents=True, exist_ok=True)
        fake.clear_script()  # each run brings its whole script
        fake.script(*script)
        first = len(fake.requests)
        argv = self.sandbox.wrap([str(self.binary), "-p", prompt, *args])
        started = time.monotonic()
        proc = subprocess.Popen(
            argv,
            cwd=project_dir,
            env=claude_env(home, fake.base_url, env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        stdout, stderr = _communicate(proc, timeout)
        elapsed = time.monotonic() - started
        return ClaudeRun(argv, proc.returncode, stdout, stderr, elapsed, fake.requests[first:])
