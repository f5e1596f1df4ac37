"""Shared fixtures: paths to the copied cases, an isolated environment for `hookgate` subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "cases"
HOOKGATE = [sys.executable, "-m", "gateway"]


@pytest.fixture(autouse=True)
def _isolated_state(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every test gets its own config cache and state dir, and HOOKGATE_CASES pointing at the cases."""
    base = tmp_path_factory.mktemp("hookgate-env")
    monkeypatch.setenv("HOOKGATE_CACHE_DIR", str(base / "cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(base / "state"))
    monkeypatch.setenv("HOOKGATE_CASES", str(CASES))
    for var in ("HOOKGATE_CONFIG", "HOOKGATE_SERVER", "HOOKGATE_ON_CONFIG_ERROR", "CLAUDE_PROJECT_DIR"):
        monkeypatch.delenv(var, raising=False)
    yield


def run_hookgate(
    args: list[str],
    stdin: bytes | str | dict[str, Any] | None = None,
    *,
    env: dict[str, str] | None = None,
    cwd: str | Path | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """Run `python -m gateway ARGS` as a real subprocess and return its completed process (text)."""
    if isinstance(stdin, dict):
        stdin = json.dumps(stdin)
    data = stdin.encode() if isinstance(stdin, str) else stdin
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run(
        [*HOOKGATE, *args], input=data, capture_output=True, env=full_env, cwd=cwd, timeout=timeout, check=False
    )
    return subprocess.CompletedProcess(
        proc.args, proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
    )


def load_case(*parts: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CASES.joinpath(*parts)).read_text())
    return data


# -- PostgreSQL (the shared store): a real server, see tests/pg_server.py -------------------------------


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """A PostgreSQL cluster for the whole session (started as the `postgres` user when running as root).

    Skips when Debian's postgresql package is missing, fails instead under CI (`CI=true`) or
    `HOOKGATE_PG_STRICT=1`, where `.ci/run` installs it."""
    from tests.pg_server import start_server

    try:
        server = start_server()
    except FileNotFoundError as exc:
        if os.environ.get("CI") == "true" or os.environ.get("HOOKGATE_PG_STRICT") == "1":
            pytest.fail(str(exc))
        pytest.skip(str(exc))
    try:
        yield server
    finally:
        server.destroy()


@pytest.fixture
def pg_url(pg_server: Any) -> str:
    """The URL (with password) of a fresh, empty database on the session's server, for one test."""
    if not pg_server.is_running():
        pg_server.start()
    url: str = pg_server.url(pg_server.new_database())
    return url


@pytest.fixture(params=["sqlite", "postgresql"])
def store_backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test once per store: the default SQLite file, then a fresh migrated PostgreSQL database
    selected through `HOOKGATE_STORE_URL` (so `hookgate` subprocesses and in-process gateways alike use
    it). Use with `@pytest.mark.usefixtures("store_backend")` on any test that keeps state."""
    if request.param == "sqlite":
        monkeypatch.delenv("HOOKGATE_STORE_URL", raising=False)
        return "sqlite"
    url: str = request.getfixturevalue("pg_url")
    from gateway.store.postgres import PostgresStore

    store = PostgresStore(url)
    store.migrate()
    store.close()
    monkeypatch.setenv("HOOKGATE_STORE_URL", url)
    return url
