"""The default policy's guard tests run in one fixed environment: a developer at /home/dev with a
private TMPDIR, outside any Claude project and without a hookgate server or an XDG state home (so the guard
sees the default state dir, ``/home/dev/.local/state/hookgate``). A test that runs ``hookgate run`` gives it
a state dir of its own (``own_state``): its audit record must land in the test's folder, not in a home."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/dev")
    monkeypatch.setenv("TMPDIR", "/tmp/u1000")
    for name in ("CLAUDE_PROJECT_DIR", "XDG_STATE_HOME", "HOOKGATE_SERVER"):
        monkeypatch.delenv(name, raising=False)


def own_state(tmp_path: Path) -> dict[str, str]:
    """The environment a ``hookgate run`` subprocess of these tests adds: its own ``XDG_STATE_HOME``."""
    return {"XDG_STATE_HOME": str(tmp_path / "state")}
