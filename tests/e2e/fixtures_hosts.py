"""Pytest fixtures for the Gemini CLI / Codex CLI end-to-end tests.

Load with ``pytest_plugins = ["tests.e2e.fixtures_hosts"]`` in a test module (or import the
fixtures into a conftest). The CLI fixtures install the pinned CLI once per cache folder and
skip, with a one-line reason, when npm or the install is unavailable
(``HOOKGATE_E2E_STRICT=1`` makes that a failure instead).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.hosts import CODEX, GEMINI, Workspace, require_cli


@pytest.fixture(scope="session")
def gemini_cli() -> Path:
    """The ``gemini`` executable of ``@google/gemini-cli`` at the pinned version."""
    return require_cli(GEMINI)


@pytest.fixture(scope="session")
def codex_cli() -> Path:
    """The ``codex`` executable of ``@openai/codex`` at the pinned version."""
    return require_cli(CODEX)


@pytest.fixture
def host_ws(tmp_path: Path) -> Workspace:
    """A fresh scenario layout: ``proj/`` (cwd, holds ``victim/``), ``hooks/``, ``logs/``."""
    ws = Workspace(tmp_path)
    ws.make_victim()
    return ws
