"""The shared store going away: decisions that need state follow failClosed, the rest keep working,
nothing is a traceback, and hookgate carries on when the database is back (a real PostgreSQL)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway import Gateway
from gateway.config import load_config
from tests.fakes.anthropic_api import FakeAnthropic, tool_use
from tests.fakes.serving import listening_socket
from tests.pg_server import PASSWORD, free_port


@pytest.fixture
def claude(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    with FakeAnthropic(sock=listening_socket()) as fake:
        fake.responder = lambda body: tool_use("submit_verdict", {"ok": False, "reason": "run the tests"})
        yield fake


def _gateway(tmp_path: Path, claude: FakeAnthropic) -> Gateway:
    path = tmp_path / "hookgate.json"
    path.write_text(json.dumps({
        "hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "Done? $ARGUMENTS", "id": "judge"}]}]},
        "llm": {"default": "fake", "providers": {"fake": {"type": "anthropic", "baseUrl": claude.base_url}}},
        "settings": {"stopBlockLimit": 1, "stateDir": str(tmp_path / "state")}}))
    return Gateway(load_config([str(path)], use_cache=False))


def _stop(session: str) -> dict[str, Any]:
    return {"hook_event_name": "Stop", "session_id": session, "cwd": "/tmp", "stop_hook_active": True}


async def test_stop_guard_without_the_store_runs_the_checks_and_says_so(tmp_path: Path, claude: FakeAnthropic,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOOKGATE_STORE_URL", f"postgresql://hookgate:{PASSWORD}@127.0.0.1:{free_port()}/db")
    async with _gateway(tmp_path, claude) as gw:
        decisions = [await gw.dispatch(_stop("s")) for _ in range(2)]
    for decision in decisions:  # the limit (1) cannot be counted: the check runs and still blocks
        assert decision.block and decision.reason == "run the tests"
        assert "Stop-loop guard" in (decision.system_message or "") and "unreachable" in (decision.system_message
                                                                                          or "")
        assert PASSWORD not in json.dumps(decision.to_dict())
    assert len(claude.message_requests) == 2


async def test_stop_guard_counts_again_once_the_store_is_back(tmp_path: Path, claude: FakeAnthropic,
                                                               pg_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from gateway.store.postgres import PostgresStore

    url = pg_server.url(pg_server.new_database())
    PostgresStore(url).migrate()
    monkeypatch.setenv("HOOKGATE_STORE_URL", url)
    try:
        async with _gateway(tmp_path, claude) as gw:
            first = await gw.dispatch(_stop("s"))
            assert first.block and first.system_message is None
            pg_server.stop()
            down = await gw.dispatch(_stop("s"))
            assert down.block and "unreachable" in (down.system_message or "")
            pg_server.start()
            back = await gw.dispatch(_stop("s"))  # the count written before the outage is still there
            assert not back.block and "stopBlockLimit" in (back.system_message or "")
    finally:
        if not pg_server.is_running():
            pg_server.start()
