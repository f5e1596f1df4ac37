"""Round trips to PostgreSQL per event, counted by the real server (README's "Running several instances"
table is this test's measurement).

The test database logs every statement it runs (``log_statement = 'all'``, set for that database only);
hookgate's connections are in autocommit mode and never prepare statements, so each logged statement
is one client round trip (a ``BEGIN``/``COMMIT`` would be logged as statements too). Each event goes
through a real ``hookgate run`` process, then through a real ``hookgate serve``, and the statements the
server logged while it was answered are counted: every stateful hot path costs at most two.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.conftest import run_hookgate
from tests.fakes.anthropic_api import FakeAnthropic, tool_use
from tests.fakes.serving import listening_socket
from tests.integration.serve_helpers import ServeProcess

#: (label, event maker, round trips expected, what the hookgate answer must show)
Step = tuple[str, Callable[[str], dict[str, Any]], int, Callable[[dict[str, Any]], bool]]


@pytest.fixture(scope="module")
def claude() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(sock=listening_socket()) as fake:
        fake.responder = lambda body: tool_use("submit_verdict", {"ok": False, "reason": "run the tests"})
        yield fake


def write_config(tmp_path: Path, claude: FakeAnthropic) -> Path:
    config = tmp_path / "hookgate.json"
    config.write_text(
        json.dumps(
            {
                "hooks": {
                    "Stop": [{"hooks": [{"type": "prompt", "prompt": "Done? $ARGUMENTS", "id": "judge"}]}],
                    "PreToolUse": [
                        {
                            "matcher": "Bash",
                            "hooks": [
                                {"type": "builtin", "name": "rateLimit", "limit": 100, "window": 3600, "id": "rate"}
                            ],
                        },
                        {"matcher": "Write|Grep", "hooks": [{"type": "builtin", "name": "readOnly", "id": "ro"}]},
                        {
                            "matcher": "Read",
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": 'echo \'{"systemMessage": "read checked"}\'',
                                    "cacheTtl": 600,
                                    "id": "cached",
                                }
                            ],
                        },
                    ],
                    "PostToolUse": [{"hooks": [{"type": "command", "command": "true", "id": "stateless"}]}],
                },
                "llm": {"default": "fake", "providers": {"fake": {"type": "anthropic", "baseUrl": claude.base_url}}},
                "settings": {"stopBlockLimit": 2},
                "audit": {"record": "off"},
            }
        )
    )
    return config


def tool(name: str, tool_input: dict[str, Any], event: str = "PreToolUse") -> Callable[[str], dict[str, Any]]:
    def make(session: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "hook_event_name": event,
            "session_id": session,
            "transcript_path": "/tmp/t.jsonl",
            "cwd": "/tmp",
            "tool_name": name,
            "tool_input": {k: v.replace("SESSION", session) for k, v in tool_input.items()},
            "tool_use_id": "toolu_1",
        }
        if event == "PostToolUse":
            body["tool_response"] = {"ok": True}
        return body

    return make


def stop(session: str) -> dict[str, Any]:
    return {
        "hook_event_name": "Stop",
        "session_id": session,
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/tmp",
        "stop_hook_active": True,
    }


def blocked(answer: dict[str, Any]) -> bool:
    return answer.get("decision") == "block"


def through(answer: dict[str, Any]) -> bool:
    return answer.get("decision") is None and "stopBlockLimit" in answer.get("systemMessage", "")


def permission(value: str | None) -> Callable[[dict[str, Any]], bool]:
    return lambda answer: answer.get("hookSpecificOutput", {}).get("permissionDecision") == value


def message(text: str) -> Callable[[dict[str, Any]], bool]:
    return lambda answer: text in answer.get("systemMessage", "")


STEPS: list[Step] = [
    ("readOnly, a write, mode off", tool("Write", {"file_path": "/tmp/x", "content": "y"}), 1, permission(None)),
    ("readOnly, a call that writes nothing", tool("Grep", {"pattern": "x"}), 0, permission(None)),
    ("rateLimit, a window's first call", tool("Bash", {"command": "ls"}), 2, permission(None)),
    ("rateLimit, later calls", tool("Bash", {"command": "ls -l"}), 1, permission(None)),
    ("cacheTtl miss (read, write)", tool("Read", {"file_path": "/tmp/SESSION"}), 2, message("read checked")),
    ("cacheTtl hit", tool("Read", {"file_path": "/tmp/SESSION"}), 1, message("read checked")),
    ("Stop guard: reserve, the check blocks", stop, 2, blocked),
    ("Stop guard: reserve, blocks again", stop, 2, blocked),
    ("Stop guard: limit reached, the stop goes through", stop, 2, through),
    ("Stop guard: counted again from 0", stop, 2, blocked),
    ("a stateless event", tool("Bash", {"command": "ls"}, "PostToolUse"), 0, lambda a: True),
]


@pytest.fixture
def logged_db(pg_server: Any, pg_url: str) -> str:
    migrated = run_hookgate(["store", "migrate"], env={"HOOKGATE_STORE_URL": pg_url})
    assert migrated.returncode == 0, migrated.stderr
    pg_server.log_statements(pg_url.rsplit("/", 1)[1])
    return pg_url


def measure(pg_server: Any, send: Callable[[dict[str, Any]], dict[str, Any]], session: str) -> list[str]:
    """Send every step's event; return one problem line per step whose cost or answer is not as expected."""
    problems = []
    for label, make, expected, check in STEPS:
        mark = pg_server.log_mark()
        answer = send(make(session))
        statements = pg_server.logged_statements(mark)
        if len(statements) != expected or not check(answer):
            problems.append(f"{label}: {len(statements)} statement(s), expected {expected}: {statements}; {answer}")
        if len({pid for pid, _ in statements}) > 1 and "run" in session:
            problems.append(f"{label}: more than one connection: {statements}")
        if any(sql.split()[0].upper() in ("BEGIN", "COMMIT", "SAVEPOINT") for _, sql in statements):
            problems.append(f"{label}: a transaction on the hot path: {statements}")
    return problems


def test_round_trips_per_event_through_hookgate_run(
    tmp_path: Path, pg_server: Any, logged_db: str, claude: FakeAnthropic
) -> None:
    config = write_config(tmp_path, claude)
    env = {"HOOKGATE_STORE_URL": logged_db, "ANTHROPIC_API_KEY": "sk-test"}

    def send(event: dict[str, Any]) -> dict[str, Any]:
        proc = run_hookgate(["run", "--config", str(config)], event, env=env)
        assert proc.returncode in (0, 2), proc.stderr
        return json.loads(proc.stdout) if proc.stdout.strip() else {}

    # the first stateful event in a state dir also checks the schema (two statements), then remembers it
    mark = pg_server.log_mark()
    send(tool("Write", {"file_path": "/tmp/x", "content": "y"})("warm-up"))
    first = pg_server.logged_statements(mark)
    assert len(first) == 1 + 2, first
    assert measure(pg_server, send, "run-1") == []
    # read-only mode on: the same single read of the flag, now a deny
    assert run_hookgate(["mode", "read-only", "on", "--config", str(config)], env=env).returncode == 0
    mark = pg_server.log_mark()
    answer = send(tool("Write", {"file_path": "/tmp/x", "content": "y"})("run-1"))
    assert permission("deny")(answer) and len(pg_server.logged_statements(mark)) == 1


def test_round_trips_per_event_through_serve(
    tmp_path: Path, pg_server: Any, logged_db: str, claude: FakeAnthropic
) -> None:
    config = write_config(tmp_path, claude)
    env = {"HOOKGATE_STORE_URL": logged_db, "ANTHROPIC_API_KEY": "sk-test"}
    with ServeProcess(config, env=env, args=["--reload-interval", "0"]) as server:

        def send(event: dict[str, Any]) -> dict[str, Any]:
            response = httpx2.post(
                f"{server.url}/hooks",
                content=json.dumps(event),
                headers={"content-type": "application/json"},
                timeout=60,
            )
            assert response.status_code == 200, response.text
            answer: dict[str, Any] = response.json()
            return answer

        send(tool("Bash", {"command": "ls"}, "PostToolUse")("warm-up"))  # the pool's first connection is up
        assert measure(pg_server, send, "serve-1") == []
        # again on a warm pool (psycopg would prepare a statement on its fifth use: hookgate never lets it)
        for round_ in range(2, 5):
            assert measure(pg_server, send, f"serve-{round_}") == []


def approval() -> Any:
    from gateway.approvals.record import ApprovalRecord, fingerprint, new_id, request_key

    print_ = fingerprint("s", "Edit", {"file_path": "/x"})
    now = time.time()
    return ApprovalRecord(
        id=new_id(),
        key=request_key("s", None, print_),
        fingerprint=print_,
        status="pending",
        created_at=now,
        expires_at=now + 60,
    )


def test_each_store_step_is_one_protocol_round_trip(pg_url: str, tmp_path: Path) -> None:
    """The same, seen from the client: libpq's own protocol trace (``PGconn.trace``) of the connection
    shows one ``ReadyForQuery`` (the end of one exchange) per store step, also after a statement's fifth
    use (when psycopg would otherwise prepare it first, an extra exchange)."""
    from gateway.store.postgres import PostgresStore

    store = PostgresStore(pg_url)
    store.migrate()
    conn = store._sync.connection()
    trace = tmp_path / "libpq.trace"
    steps: list[tuple[str, Callable[[], Any], int]] = [
        ("reserve", lambda: store.counter_reserve("stop-guard", "s", 3, ("stop-guard-inflight", "s@1")), 1),
        (
            "settle keep",
            lambda: store.counter_settle("stop-guard", "s", "keep", inflight=("stop-guard-inflight", "s@1")),
            1,
        ),
        ("settle keep, nothing in flight", lambda: store.counter_settle("stop-guard", "s", "keep"), 0),
        ("settle reset", lambda: store.counter_settle("stop-guard", "s", "reset", inflight=("x", "y")), 1),
        (
            "settle reset_if_idle",
            lambda: store.counter_settle("stop-guard", "s", "reset_if_idle", busy=(("x", "y"), ("x", "z"))),
            1,
        ),
        ("capped add", lambda: store.counter_add_capped("rateLimit", "w", 100), 1),
        ("flag", lambda: store.flag_get("readOnly"), 1),
        ("cache get", lambda: store.cache_get("k"), 1),
        ("cache put", lambda: store.cache_put("k", {"v": 1}, 60), 1),
        ("approval lookup (sweep and find)", lambda: store.approval_lookup("k", "f", time.time(), "sweeper"), 1),
        ("approval create", lambda: store.approval_create(approval()), 1),
        ("approval re-read while waiting", lambda: store.approval_get("apr-none"), 1),
        ("approval consume", lambda: store.approval_consume("apr-none", time.time()), 1),
    ]
    try:
        with trace.open("w") as fh:
            for label, step, expected in steps * 6:
                fh.flush()
                before = trace.read_text().count("ReadyForQuery")
                conn.pgconn.trace(fh.fileno())
                step()
                conn.pgconn.untrace()
                fh.flush()
                exchanges = trace.read_text().count("ReadyForQuery") - before
                assert exchanges == expected, (label, exchanges, trace.read_text()[-2000:])
    finally:
        store.close()


def test_an_audit_batch_is_one_statement_and_its_links_verify(pg_url: str, tmp_path: Path) -> None:
    """``audit_append`` on PostgreSQL: one exchange per batch (a new chain's too), no BEGIN/COMMIT; the links the database computed (non-ASCII bodies too) are the
    ones ``hookgate audit verify`` recomputes, and ids already stored or repeated are left out."""
    from gateway.audit.report import verify_store
    from gateway.store.audit_types import AuditEntry, link_hash
    from gateway.store.postgres import PostgresStore

    def entry(i: int) -> AuditEntry:
        body = json.dumps(
            {"time": "2026-12-01T10:00:00Z", "event": "PreToolUse", "decision": "allow", "tool_name": "Bash",
             "session_id": "s", "handlers": [], "n": i, "text": "grüße 🚀 \\ \" \n end"},
            ensure_ascii=False, sort_keys=True, separators=(",", ":"),
        )  # fmt: skip
        return AuditEntry.from_body(f"rec-{i}", body)

    store = PostgresStore(pg_url)
    store.migrate()
    conn = store._sync.connection()
    trace = tmp_path / "libpq.trace"
    try:
        for batch, expected, stored in [
            ([entry(i) for i in range(50)], 1, 50),  # a new chain: its head row is made in the same statement
            ([entry(i) for i in range(40, 300)] + [entry(299)], 1, 250),  # 10 known ids, one repeated
            ([entry(5)], 1, 0),
        ]:
            with trace.open("w") as fh:
                conn.pgconn.trace(fh.fileno())
                assert store.audit_append("machine-a", batch) == stored
                conn.pgconn.untrace()
            text = trace.read_text()
            assert text.count("ReadyForQuery") == expected, text[-3000:]
            assert "BEGIN" not in text and "COMMIT" not in text
        rows = store.audit_chain("machine-a", 0, 1000)
        assert [r.seq for r in rows] == list(range(1, 301)) and [r.id for r in rows] == [f"rec-{i}" for i in range(300)]
        for before, row in itertools.pairwise(rows):
            assert row.prev_hash == before.hash and row.hash == link_hash(before.hash, "machine-a", row.seq, row.body)
        assert all(r.problem is None for r in verify_store(store))
    finally:
        store.close()
