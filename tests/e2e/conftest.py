"""Fixtures driving the real Claude Code CLI offline (see README.md in this folder).

* ``e2e_sandbox`` (session): the network namespace shared by the CLI and the fakes.
* ``claude_cli`` (session): the pinned CLI, npm-installed into the cache on first use; skips
  the test (one-line reason) when npm or the install is unavailable, fails instead when
  ``HOOKGATE_E2E_STRICT=1``.
* ``fake_api``: a ``FakeAnthropic`` reachable from inside the sandbox.
* ``run_claude(project_dir, settings, script, prompt=...) -> ClaudeRun``.
* ``hookgate_bin``: the venv's ``hookgate`` console script (skips when not installed).
* ``tmp_path``: overridden to live under the e2e cache, outside the temp roots the default policy lets
  ``rm -rf`` clean up (a victim folder under /tmp would prove nothing).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

import pytest

from tests.e2e.claude_cli import DEFAULT_ARGS, ClaudeCli, ClaudeRun, ClaudeUnavailable, cache_root, ensure_claude
from tests.e2e.hook_settings import hookgate_executable
from tests.e2e.netns import Sandbox
from tests.e2e.scenarios import DEFAULT_PROMPT, RunClaude
from tests.fakes.anthropic_api import FakeAnthropic, ScriptItem

E2E_DIR = Path(__file__).parent
_summary: dict[str, str] = {}


@pytest.hookimpl(tryfirst=True)  # before `-m` deselection
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if E2E_DIR in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.e2e)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _summary:
        terminalreporter.write_line("claude e2e: " + ", ".join(f"{k}={v}" for k, v in _summary.items()))


def _unavailable(reason: str) -> NoReturn:
    if os.environ.get("HOOKGATE_E2E_STRICT") == "1":
        pytest.fail(f"HOOKGATE_E2E_STRICT=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture
def tmp_path(request: pytest.FixtureRequest) -> Iterator[Path]:
    """Scratch space for one e2e test, outside the temp roots (under the e2e cache): the default policy allows
    recursive deletes below /tmp, so a victim folder there would make "rm -rf <dir> is denied" prove nothing."""
    root = cache_root() / "scratch"
    root.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix=re.sub(r"\W+", "_", request.node.name)[:40] + "-", dir=root)).resolve()
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def e2e_sandbox() -> Iterator[Sandbox]:
    sandbox = Sandbox.create()
    _summary["netns"] = "isolated" if sandbox.isolated else f"NOT isolated ({sandbox.reason})"
    if not sandbox.isolated:
        import warnings

        warnings.warn(f"claude e2e runs on the host network: {sandbox.reason}", stacklevel=1)
    yield sandbox
    sandbox.close()


@pytest.fixture(scope="session")
def claude_cli(e2e_sandbox: Sandbox) -> ClaudeCli:
    started = time.monotonic()
    try:
        binary = ensure_claude()
    except ClaudeUnavailable as exc:
        _summary["install"] = f"unavailable: {exc}"
        _unavailable(str(exc))
    _summary["install_or_check_s"] = f"{time.monotonic() - started:.1f}"
    _summary["binary"] = str(binary)
    return ClaudeCli(binary, e2e_sandbox)


@pytest.fixture
def fake_api(e2e_sandbox: Sandbox) -> Iterator[FakeAnthropic]:
    with FakeAnthropic(sock=e2e_sandbox.bind_loopback()) as fake:
        yield fake


@pytest.fixture
def run_claude(claude_cli: ClaudeCli, fake_api: FakeAnthropic, tmp_path: Path) -> RunClaude:
    """``run_claude(project_dir, settings, script, prompt)``: HOME is ``tmp_path/home``."""

    def run(
        project_dir: Path,
        settings: Mapping[str, Any] | None,
        script: Sequence[ScriptItem],
        prompt: str = DEFAULT_PROMPT,
        *,
        args: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 90.0,
    ) -> ClaudeRun:
        return claude_cli.run(
            fake_api,
            project_dir,
            settings,
            script,
            prompt,
            home=tmp_path / "home",
            args=DEFAULT_ARGS if args is None else args,
            env=env,
            timeout=timeout,
        )

    return run


@pytest.fixture
def hookgate_bin() -> Path:
    """HOOKGATE: ``<venv>/bin/hookgate``; skips until the package's console script is installed."""
    path = hookgate_executable()
    if not path.exists():
        _unavailable(f"{path} not installed (pip install -e . in the venv)")
    return path
