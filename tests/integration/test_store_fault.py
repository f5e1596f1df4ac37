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
    path.write_text(
        json.dumps(
            {
                "hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "Done? $ARGUMENTS", "id": "judge"}]}]},
                "llm": {"default": "fake", "providers": {"fake": {"type": "anthropic", "baseUrl": claude.base_url}}},
                "settings": {"stopBlockLimit": 1, "stateDir": str(tmp_path / "state")},
            }
        )
    )
    return Gateway(load_config([str(path)], use_cache=False))


def _stop(session: str) -> dict[str, Any]:
    return {"hook_event_name": "Stop", "session_id": session, "cwd": "/tmp", "stop_hook_active": True}


async def test_stop_guard_without_the_store_runs_the_checks_and_says_so(
    tmp_path: Path, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOOKGATE_STORE_URL", f"postgresql://hookgate:{PASSWORD}@127.0.0.1:{free_port()}/db")
    async with _gateway(tmp_path, claude) as gw:
        decisions = [await gw.dispatch(_stop("s")) for _ in range(2)]
    for decision in decisions:  # the limit (1) cannot be counted: the check runs and still blocks
        assert decision.block and decision.reason == "run the tests"
        assert "Stop-loop guard" in (decision.system_message or "") and "unreachable" in (decision.system_message or "")
        assert PASSWORD not in json.dumps(decision.to_dict())
    assert len(claude.message_requests) == 2


async def test_stop_guard_counts_again_once_the_store_is_back(
    tmp_path: Path, claude: FakeAnthropic, pg_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
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


def _rate_config(tmp_path: Path, *, fail_closed: bool, limit: int = 100) -> str:
    path = tmp_path / f"rate-{fail_closed}.json"
    path.write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [
                        {
                            "matcher": "Bash|Write",
                            "hooks": [
                                {"type": "builtin", "name": "readOnly", "id": "ro", "failClosed": fail_closed},
                                {
                                    "type": "builtin",
                                    "name": "rateLimit",
                                    "limit": limit,
                                    "window": 3600,
                                    "per": ["session"],
                                    "id": "rate",
                                    "failClosed": fail_closed,
                                },
                            ],
                        }
                    ]
                }
            }
        )
    )
    return str(path)


def _bash(command: str, session: str = "s") -> dict[str, Any]:
    return {
        "hook_event_name": "PreToolUse",
        "session_id": session,
        "cwd": "/tmp",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": "t1",
    }


def test_run_with_the_store_down_follows_fail_closed(tmp_path: Path) -> None:
    from tests.conftest import run_hookgate

    env = {"HOOKGATE_STORE_URL": f"postgresql://hookgate:{PASSWORD}@127.0.0.1:{free_port()}/db"}
    closed = run_hookgate(["run", "--config", _rate_config(tmp_path, fail_closed=True)], _bash("ls"), env=env)
    assert closed.returncode == 2
    reason = json.loads(closed.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "'rate' failed" in reason and "unreachable" in reason and "Traceback" not in closed.stderr
    opened = run_hookgate(["run", "--config", _rate_config(tmp_path, fail_closed=False)], _bash("rm -f x"), env=env)
    assert opened.returncode == 0, opened.stderr
    message = json.loads(opened.stdout)["systemMessage"]
    assert "'ro' let this through without its state" in message and "'rate' let this through" in message
    for proc in (closed, opened):
        assert PASSWORD not in proc.stdout + proc.stderr and "Traceback" not in proc.stderr


def test_run_is_not_held_by_a_table_another_session_locked(tmp_path: Path, pg_server: Any) -> None:
    """A slow database (here: the counters table locked by another session) holds a `hookgate run` store
    call at most ``RUN_OP_TIMEOUT`` seconds: the statement is cancelled, the check follows failClosed with
    one line saying so, and the same store's next call works on a fresh connection. Stores opened without
    the bound (CLI commands, the audit writer moving a large spool) wait as long as it takes."""
    import threading
    import time

    import psycopg

    from gateway.errors import StoreUnavailable
    from gateway.store import RUN_OP_TIMEOUT
    from gateway.store.postgres import PostgresStore
    from tests.conftest import run_hookgate

    url = pg_server.url(pg_server.new_database())
    PostgresStore(url, mode="admin").migrate()
    store = PostgresStore(url, mode="run", op_timeout=RUN_OP_TIMEOUT)
    unbounded = PostgresStore(url, mode="run")  # the CLI's and the audit writer's: a long move is no hang
    locker = psycopg.connect(url)
    try:
        locker.execute("LOCK TABLE counters IN ACCESS EXCLUSIVE MODE")
        started = time.monotonic()
        proc = run_hookgate(
            ["run", "--config", _rate_config(tmp_path, fail_closed=False)], _bash("ls"), env={"HOOKGATE_STORE_URL": url}
        )
        assert time.monotonic() - started < RUN_OP_TIMEOUT + 4
        assert proc.returncode == 0, proc.stderr
        message = json.loads(proc.stdout)["systemMessage"]
        assert "'rate' let this through without its state" in message
        assert f"did not answer within {RUN_OP_TIMEOUT:g} s" in message
        assert PASSWORD not in proc.stdout + proc.stderr and "Traceback" not in proc.stderr
        with pytest.raises(StoreUnavailable, match="did not answer"):
            store.counter_add("s", "k")
        waiting = threading.Thread(target=unbounded.counter_add, args=("s", "k"))
        waiting.start()
        waiting.join(RUN_OP_TIMEOUT + 1)
        assert waiting.is_alive()  # still waiting for the lock: not cancelled
    finally:
        locker.rollback()
        locker.close()
    waiting.join(10)
    assert store.counter_add("s", "k") == 2  # the cancelled connection was dropped; a new one answers
    store.close()
    unbounded.close()


def test_serve_while_postgresql_stops_and_restarts(tmp_path: Path, pg_server: Any) -> None:
    """A live `hookgate serve`: the database stops mid-run (stateless events keep their answers, the
    failClosed rate limit denies naming the outage), then starts again (the same pool reconnects, and
    the count written before the outage is still there: the limit still holds exactly)."""
    import httpx2

    from gateway.store.postgres import PostgresStore
    from tests.integration.serve_helpers import ServeProcess

    url = pg_server.url(pg_server.new_database())
    PostgresStore(url).migrate()
    config = tmp_path / "serve.json"
    config.write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [
                        {
                            "matcher": "Bash",
                            "hooks": [
                                {
                                    "type": "builtin",
                                    "name": "rateLimit",
                                    "limit": 3,
                                    "window": 3600,
                                    "per": ["session"],
                                    "id": "rate",
                                    "failClosed": True,
                                }
                            ],
                        },
                        {"matcher": "Read", "hooks": [{"type": "command", "command": "echo fine"}]},
                    ]
                }
            }
        )
    )

    def ask(server: ServeProcess, event: dict[str, Any]) -> dict[str, Any]:
        response = httpx2.post(
            f"{server.url}/hooks", content=json.dumps(event), headers={"content-type": "application/json"}, timeout=30
        )
        assert response.status_code == 200, response.text
        answer: dict[str, Any] = response.json()
        return answer

    def decision(answer: dict[str, Any]) -> str | None:
        value: str | None = answer.get("hookSpecificOutput", {}).get("permissionDecision")
        return value

    read = {
        "hook_event_name": "PreToolUse",
        "session_id": "s",
        "cwd": "/tmp",
        "tool_name": "Read",
        "tool_input": {"file_path": "/tmp/x"},
        "tool_use_id": "r",
    }
    try:
        with ServeProcess(config, env={"HOOKGATE_STORE_URL": url}) as server:
            assert [decision(ask(server, _bash("ls"))) for _ in range(2)] == [None, None]
            pg_server.stop()
            down = ask(server, _bash("ls"))
            assert decision(down) == "deny" and "unreachable" in down["hookSpecificOutput"]["permissionDecisionReason"]
            assert ask(server, read).get("hookSpecificOutput", {}).get("permissionDecision") is None
            server.wait_log("is unreachable")
            pg_server.start()
            after = [decision(ask(server, _bash("ls"))) for _ in range(3)]
            assert after == [None, "deny", "deny"]  # 2 before + 1 now = the limit of 3; nothing was lost
            server.wait_log("reachable again")
        assert all(PASSWORD not in line for line in server.lines)
        assert not any("Traceback" in line for line in server.lines)
    finally:
        if not pg_server.is_running():
            pg_server.start()


def test_audit_records_written_while_postgresql_is_down_reach_it_afterwards(tmp_path: Path, pg_server: Any) -> None:
    """`serve` keeps recording while the database is stopped: the batches wait in the spool, and once it
    is back they are appended to the chain; `hookgate audit verify` passes and no record is missing."""
    import time

    import httpx2

    from gateway.store.postgres import PostgresStore
    from tests.conftest import run_hookgate
    from tests.integration.serve_helpers import ServeProcess

    url = pg_server.url(pg_server.new_database())
    PostgresStore(url).migrate()
    config = tmp_path / "audited.json"
    config.write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true", "id": "noop"}]}]
                },
                "audit": {"chain": "box", "keepDays": 30},
                "settings": {"stateDir": str(tmp_path / "state")},
            }
        )
    )
    spool = tmp_path / "state" / "audit"

    def send(server: ServeProcess, n: int) -> None:
        response = httpx2.post(
            f"{server.url}/hooks",
            content=json.dumps(_bash(f"echo {n}", "audit")),
            headers={"content-type": "application/json"},
            timeout=30,
        )
        assert response.status_code == 200

    def stored(store: PostgresStore) -> int:
        return sum(h.seq for h in store.audit_heads() if h.chain == "box")

    store = PostgresStore(url)
    try:
        with ServeProcess(config, env={"HOOKGATE_STORE_URL": url}) as server:
            for n in range(3):
                send(server, n)
            deadline = time.monotonic() + 20
            while stored(store) < 3:
                assert time.monotonic() < deadline
                time.sleep(0.1)
            pg_server.stop()
            for n in range(3, 10):  # answered as usual; recorded into the spool
                send(server, n)
                time.sleep(0.8)  # a batch, and a drain of the spool that fails, about every second
            server.wait_log("they wait in the spool")
            # one spool that grows (and at most the file one failed drain set aside), not a file per
            # drain attempt; and no line says a record could not be recorded: each one waits in the spool
            assert len(list(spool.iterdir())) <= 2, sorted(p.name for p in spool.iterdir())
            assert not [line for line in server.lines if "cannot record" in line], server.lines
            pg_server.start()
            deadline = time.monotonic() + 30
            while True:
                try:
                    if stored(store) >= 10:
                        break
                except Exception:  # the test's own connection reconnects too
                    store.close()
                assert time.monotonic() < deadline, "the spooled records never reached the store"
                time.sleep(0.2)
        assert stored(store) == 10
        verified = run_hookgate(["audit", "verify", "--config", str(config)], env={"HOOKGATE_STORE_URL": url})
        assert verified.returncode == 0, verified.stdout + verified.stderr
        assert all(PASSWORD not in line for line in server.lines)
    finally:
        store.close()
        if not pg_server.is_running():
            pg_server.start()


def test_serve_after_a_restart_while_idle_loses_no_decision(tmp_path: Path, pg_server: Any) -> None:
    """PostgreSQL restarts while `serve` is idle: every pooled connection was ended by the server. The
    next stateful calls (writes: a rate limit's count) go out on fresh connections instead of failing on
    a dead one: none is denied by failClosed, the count goes on, and no outage is logged (the audit
    writer's connection neither: its records go straight in, not by way of the spool)."""
    import time
    from concurrent.futures import ThreadPoolExecutor

    import httpx2

    from gateway.store.postgres import PostgresStore
    from tests.integration.serve_helpers import ServeProcess

    url = pg_server.url(pg_server.new_database())
    PostgresStore(url).migrate()
    config = tmp_path / "serve.json"
    rate = {"type": "builtin", "name": "rateLimit", "limit": 100, "window": 3600, "id": "rate", "failClosed": True}
    config.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [rate]}]}}))

    def stored(n: int) -> None:
        deadline = time.monotonic() + 20
        while pg_server.psql("SELECT count(*) FROM audit_records", url.rsplit("/", 1)[1]).strip() != str(n):
            assert time.monotonic() < deadline
            time.sleep(0.2)

    def ask(server: ServeProcess, n: int) -> dict[str, Any]:
        response = httpx2.post(
            f"{server.url}/hooks", content=json.dumps(_bash(f"echo {n}")), headers={"content-type": "application/json"}
        )
        assert response.status_code == 200, response.text
        answer: dict[str, Any] = response.json()
        return answer

    try:
        with ServeProcess(config, env={"HOOKGATE_STORE_URL": url}) as server, ThreadPoolExecutor(4) as pool:
            assert list(pool.map(lambda n: ask(server, n), range(8))) == [{}] * 8  # a few pooled connections
            stored(8)  # the audit writer has its connection too
            pg_server.stop()
            pg_server.start()
            answers = list(pool.map(lambda n: ask(server, n), range(8)))
            assert answers == [{}] * 8, answers
            (count,) = pg_server.psql("SELECT value FROM counters", url.rsplit("/", 1)[1]).split()
            assert int(count) == 16  # every call counted once
            stored(16)
        assert not [line for line in server.lines if "unreachable" in line or "cannot" in line], server.lines
    finally:
        if not pg_server.is_running():
            pg_server.start()


def test_serve_with_a_wrong_password_says_why_and_does_not_hold_every_call(tmp_path: Path, pg_server: Any) -> None:
    """A wrong password (no connection can be had): each stateful call's line names the reason (the last
    connection attempt's, not only "couldn't get a connection"), and once the store is known to be down a
    call waits a fraction of a second for a connection, not the pool's whole 2 s, on every tool call."""
    import time

    import httpx2

    from tests.integration.serve_helpers import ServeProcess

    db = pg_server.new_database()
    wrong = f"postgresql://hookgate:not-{PASSWORD}@127.0.0.1:{pg_server.port}/{db}"
    config = tmp_path / "serve.json"
    rate = {"type": "builtin", "name": "rateLimit", "limit": 100, "window": 3600, "id": "rate"}
    config.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [rate]}]}}))
    with ServeProcess(config, env={"HOOKGATE_STORE_URL": wrong}) as server:
        answers, took = [], []
        for n in range(4):
            started = time.monotonic()
            response = httpx2.post(
                f"{server.url}/hooks",
                content=json.dumps(_bash(f"echo {n}")),
                headers={"content-type": "application/json"},
            )
            took.append(time.monotonic() - started)
            answers.append(response.json()["systemMessage"])
        for message in answers:
            assert "'rate' let this through without its state" in message
            assert 'password authentication failed for user "hookgate"' in message, message
        assert max(took[1:]) < 1.5, took  # the first call found out; the others did not wait 2 s each
    assert all(PASSWORD not in line for line in server.lines + answers)


def test_run_does_not_retry_a_drain_on_every_call_while_the_store_hangs(tmp_path: Path, pg_server: Any) -> None:
    """The spool has passed its drain size and PostgreSQL hangs (its postmaster stopped: connections are
    accepted and never answered). One `hookgate run` pays the drain's deadline and says so; the calls of
    the next seconds do not try again (each would wait as long), and once the server answers every
    record reaches the store."""
    import os
    import signal
    import time

    from gateway.audit.spool import DRAIN_BYTES
    from gateway.store.postgres import PostgresStore
    from tests.conftest import run_hookgate

    url = pg_server.url(pg_server.new_database())
    PostgresStore(url, mode="admin").migrate()
    state = tmp_path / "state"
    config = tmp_path / "hookgate.json"
    noop = {"type": "command", "command": "true", "id": "noop"}
    config.write_text(
        json.dumps(
            {
                "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [noop]}]},
                "audit": {"chain": "laptop"},
                "settings": {"stateDir": str(state)},
            }
        )
    )
    env = {"HOOKGATE_STORE_URL": url}
    assert run_hookgate(["run", "--config", str(config)], _bash("ls"), env=env).returncode == 0
    spool = state / "audit" / "spool.jsonl"
    record = json.loads(spool.read_text().split("\t", 1)[1])
    lines = []
    for n in range(2 * DRAIN_BYTES // len(spool.read_bytes())):  # past the size at which `run` drains
        record["id"] = f"filler-{n}"
        lines.append(f"filler-{n}\t{json.dumps(record, sort_keys=True, separators=(',', ':'))}\n")
    with spool.open("a") as fh:
        fh.write("".join(lines))
    postmaster = int((pg_server.data / "postmaster.pid").read_text().split()[0])
    os.kill(postmaster, signal.SIGSTOP)
    try:
        took, errs = [], []
        for n in range(3):
            started = time.monotonic()
            proc = run_hookgate(["run", "--config", str(config)], _bash(f"echo {n}"), env=env)
            took.append(time.monotonic() - started)
            assert proc.returncode == 0 and proc.stdout == "", proc.stderr
            errs.append(proc.stderr)
    finally:
        os.kill(postmaster, signal.SIGCONT)
    assert "the record is in the spool" in errs[0] and "try again in 30 s" in errs[0], (errs, took)
    assert errs[1:] == ["", ""], errs
    assert max(took[1:]) < 1.5, took
    verified = run_hookgate(["audit", "verify", "--config", str(config)], env=env)
    assert verified.returncode == 0, verified.stderr
    assert f"'laptop': {len(lines) + 4} record(s) ok" in verified.stdout, verified.stdout
    assert not list((state / "audit").glob("spool.jsonl*"))  # all moved
