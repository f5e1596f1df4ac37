"""The default policy's guard tests run in one fixed environment: a developer at /home/dev with a
private TMPDIR, outside any Claude project and without a hookgate server or an XDG state home."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/dev")
    monkeypatch.setenv("TMPDIR", "/tmp/u1000")
    for name in ("CLAUDE_PROJECT_DIR", "XDG_STATE_HOME", "HOOKGATE_SERVER"):
        monkeypatch.delenv(name, raising=False)
