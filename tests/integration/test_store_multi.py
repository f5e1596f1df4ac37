"""Three `hookgate serve` processes on one PostgreSQL database, as three machines behind a load balancer.

Each replica is a real subprocess with its own state dir and config cache (as on separate machines);
they share nothing but `HOOKGATE_STORE_URL`. Requests are spread round-robin (and in parallel where
the point is a race) over the three replicas.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.conftest import run_hookgate
from tests.fakes.anthropic_api import FakeAnthropic, delayed, tool_use
from tests.fakes.serving import listening_socket
from tests.integration.serve_helpers import ServeProcess, isolated_env
from tests.integration.test_approvals_channels import Receiver, signed
from tests.pg_server import PASSWORD

JSON = {"content-type": "application/json"}
REPLICAS = 3


def post(url: str, body: Any) -> dict[str, Any]:
    response = httpx2.post(f"{url}/hooks", content=json.dumps(body), headers=JSON, timeout=60)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


class Cluster:
    """Three replicas of one config on one database; ``url(i)`` is replica ``i % 3``."""

    def __init__(self, servers: list[ServeProcess], db_url: str, pg: Any, config: Path) -> None:
        self.servers = servers
        self.config = config
        self.db_url = db_url
        self.pg = pg
        self.db = db_url.rsplit("/", 1)[1]

    def url(self, i: int) -> str:
        return self.servers[i % len(self.servers)].url

    def logs(self) -> list[str]:
        return [line for s in self.servers for line in s.lines]


@pytest.fixture(scope="module")
def claude() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(sock=listening_socket()) as fake:
        # the judge always says "not done"; slowly (3 s) for sessions named slow-*, so that a burst of
        # parallel stops all reach the guard while the first ones are still being judged
        fake.responder = lambda body: (
            delayed(tool_use("submit_verdict", {"ok": False, "reason": "run the tests"}), 3.0)
            if "slow-" in json.dumps(body)
            else tool_use("submit_verdict", {"ok": False, "reason": "run the tests"})
        )
        yield fake


SECRET = "whsec_" + base64.b64encode(b"multi-instance approvals secret!").decode()


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    """Where the webhook approval channel posts its requests (a real server verifying the signatures)."""
    hook = Receiver(SECRET)
    try:
        yield hook
    finally:
        hook.thread.stop()


@pytest.fixture(scope="module")
def cluster(
    tmp_path_factory: pytest.TempPathFactory, pg_server: Any, claude: FakeAnthropic, receiver: Receiver
) -> Iterator[Cluster]:
    """One database, three replicas, one policy for every test of this module (tests use their own
    session ids, so they do not see each other's counts). Each replica's config differs only in its
    audit chain name, as three machines' host names would."""
    tmp_path = tmp_path_factory.mktemp("cluster")
    pg_url = pg_server.url(pg_server.new_database())
    policy = {
        "hooks": {
            "Stop": [{"hooks": [{"type": "prompt", "prompt": "Done? $ARGUMENTS", "id": "judge"}]}],
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        {
                            "type": "builtin",
                            "name": "rateLimit",
                            "limit": 5,
                            "window": 3600,
                            "per": ["session"],
                            "id": "rate",
                            "failClosed": True,
                        }
                    ],
                },
                {
                    "matcher": "Edit",
                    "hooks": [{"type": "approval", "channel": "hook", "timeout": 60, "id": "ask-a-person"}],
                },
            ],
        },
        "channels": {
            "hook": {
                "type": "webhook",
                "url": receiver.url,
                "signingSecretEnv": "APPROVAL_HOOK_SECRET",
                "callbackUrl": "https://lb.example.test",
            }
        },
        "llm": {"default": "fake", "providers": {"fake": {"type": "anthropic", "baseUrl": claude.base_url}}},
        "settings": {"stopBlockLimit": 3},
    }
    configs = []
    for i in range(REPLICAS):
        configs.append(tmp_path / f"machine{i}.json")
        configs[i].write_text(json.dumps({**policy, "audit": {"chain": f"machine{i}"}}))
    migrated = run_hookgate(["store", "migrate", "--config", str(configs[0])], env={"HOOKGATE_STORE_URL": pg_url})
    assert migrated.returncode == 0, migrated.stderr
    with ExitStack() as stack:
        servers = []
        for i in range(REPLICAS):
            env = {
                **isolated_env(tmp_path / f"machine{i}"),
                "HOOKGATE_STORE_URL": pg_url,
                "ANTHROPIC_API_KEY": "sk-test",
                "APPROVAL_HOOK_SECRET": SECRET,
            }
            servers.append(stack.enter_context(ServeProcess(configs[i], env=env, args=["--reload-interval", "0"])))
        cluster = Cluster(servers, pg_url, pg_server, configs[0])
        yield cluster
    assert all(PASSWORD not in line for line in cluster.logs())


def stop_event(session: str) -> dict[str, Any]:
    return {
        "hook_event_name": "Stop",
        "session_id": session,
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/tmp",
        "stop_hook_active": True,
    }


def test_stop_guard_limit_holds_across_replicas(cluster: Cluster, claude: FakeAnthropic) -> None:
    """A check that always blocks: 3 blocks in a row whichever replica answers, then the stop goes
    through (the 4th event, on a replica that never blocked this session itself), then checked again."""
    before = len(claude.message_requests)
    answers = [post(cluster.url(i), stop_event("stop-seq")) for i in range(5)]
    assert [a.get("decision") for a in answers] == ["block", "block", "block", None, "block"]
    assert "stopBlockLimit" in answers[3].get("systemMessage", "")
    assert len(claude.message_requests) - before == 4


def test_parallel_stops_across_replicas_block_exactly_the_limit(cluster: Cluster, claude: FakeAnthropic) -> None:
    """30 Stops of one session at once, spread over the three replicas, while the judge takes 3 s: exactly
    3 (stopBlockLimit) are judged and block, the other 27 go through at once with the guard's message,
    and each cost exactly two statements on the database (reserve, then settle). Afterwards the count
    is still at the limit (every stop let through ran while reserved checks were in flight, so none
    reset it): the next stop goes through and resets it, the one after is judged again."""
    session = "slow-par"

    def judged() -> int:
        return sum(1 for r in claude.message_requests if session.encode() in r.raw)

    cluster.pg.statements_reset(cluster.db)
    with ThreadPoolExecutor(30) as pool:
        answers = list(pool.map(lambda i: post(cluster.url(i), stop_event(session)), range(30)))
    decisions = [a.get("decision") for a in answers]
    assert decisions.count("block") == 3, decisions
    assert all("stopBlockLimit" in a.get("systemMessage", "") for a in answers if a.get("decision") != "block")
    assert judged() == 3
    assert cluster.pg.statements(cluster.db, touching="counters") == 2 * 30
    after = [post(cluster.url(i), stop_event(session)) for i in range(2)]
    assert [a.get("decision") for a in after] == [None, "block"]
    assert judged() == 4


def bash(session: str, n: int) -> dict[str, Any]:
    return {
        "hook_event_name": "PreToolUse",
        "session_id": session,
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/tmp",
        "tool_name": "Bash",
        "tool_input": {"command": f"echo {n}"},
        "tool_use_id": f"t{n}",
    }


def permission(answer: dict[str, Any]) -> str | None:
    value: str | None = answer.get("hookSpecificOutput", {}).get("permissionDecision")
    return value


def test_rate_limit_holds_exactly_across_replicas(cluster: Cluster) -> None:
    """20 calls of one session at once, spread over the three replicas, limit 5: exactly 5 get through,
    and each event cost one statement on the database (the window's first call two)."""
    cluster.pg.statements_reset(cluster.db)
    with ThreadPoolExecutor(20) as pool:
        answers = list(pool.map(lambda i: post(cluster.url(i), bash("rate-a", i)), range(20)))
    decisions = [permission(a) for a in answers]
    assert decisions.count(None) == 5 and decisions.count("deny") == 15
    reasons = [a["hookSpecificOutput"]["permissionDecisionReason"] for a in answers if permission(a) == "deny"]
    assert all("5 calls per 3600 s reached for session=rate-a" in r for r in reasons)
    # (the replicas' approval sweepers and audit writer threads, whose batches are transactions, also
    # run now and then, off the request path: their statements are not these events'; the events' own
    # statements are single autocommit statements, no BEGIN/COMMIT)
    statements = cluster.pg.statements(cluster.db, excluding=("approvals", "audit_", "BEGIN", "COMMIT"))
    assert statements <= 2 * 20, statements  # at most two round trips per event
    assert cluster.pg.statements(cluster.db, touching="counters") == 20 + 1  # one capped increment each, plus
    # the window's first call's cleanup of the previous window
    # another session has its own window, on any replica
    assert permission(post(cluster.url(1), bash("rate-b", 0))) is None


def edit(session: str) -> dict[str, Any]:
    return {
        "hook_event_name": "PreToolUse",
        "session_id": session,
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/tmp",
        "tool_name": "Edit",
        "tool_input": {"file_path": "/srv/app/prod.yaml", "old_string": "a", "new_string": "b"},
        "tool_use_id": f"toolu_{session}",
    }


def test_an_approval_asked_on_one_replica_is_answered_through_another(cluster: Cluster, receiver: Receiver) -> None:
    """Replica 0 holds the tool call and posts the request; the signed answer arrives at replicas 1 and 2
    at once (a platform retrying, a balancer spreading): exactly one transition happens, the other is
    refused, and the waiting request on replica 0 is released with the answer."""
    seen = len(receiver.deliveries)
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(post, cluster.url(0), edit("appr-1"))
        deadline = time.monotonic() + 30
        while len(receiver.deliveries) == seen:
            assert time.monotonic() < deadline, "the approval request was never posted"
            time.sleep(0.05)
        delivery = receiver.deliveries[seen]
        assert delivery["type"] == "approval.requested"
        approval_id = delivery["approval"]["id"]
        answer = {"id": approval_id, "decision": "approve", "by": "alice", "reason": "change window"}
        body, headers = signed(SECRET, answer)
        with ThreadPoolExecutor(2) as both:
            replies = list(
                both.map(
                    lambda i: httpx2.post(
                        f"{cluster.url(i)}/approvals/{approval_id}", content=body, headers=headers, timeout=30
                    ),
                    (1, 2),
                )
            )
        assert sorted(r.status_code for r in replies) == [200, 409], [r.text for r in replies]
        refused = next(r for r in replies if r.status_code == 409).json()
        assert refused["status"] == "approved" and refused["decided_by"] == "webhook:alice"
        started = time.monotonic()
        answer = waiting.result(timeout=30)
    assert time.monotonic() - started < 5  # released by the shared row (re-read every 2 s), not a timeout
    assert permission(answer) == "allow"
    assert "approved by webhook:alice (change window)" in answer["hookSpecificOutput"]["permissionDecisionReason"]
    from gateway.store.postgres import PostgresStore

    store = PostgresStore(cluster.db_url)
    try:
        record = store.approval_get(approval_id)
        assert record is not None and record.status == "approved" and record.decided_by == "webhook:alice"
        assert record.consumed_at is not None  # delivered once, to the call on replica 0
    finally:
        store.close()


def test_audit_verify_passes_over_the_records_of_all_three_replicas(cluster: Cluster) -> None:
    """Every replica appended its records (batched by its writer thread) to its own chain in the one
    database, concurrently with the others; `hookgate audit verify` walks every chain and passes."""
    with ThreadPoolExecutor(9) as pool:  # a little more concurrent traffic on every replica
        list(pool.map(lambda i: post(cluster.url(i), bash(f"audit-{i % 3}", i)), range(27)))
    from gateway.store.postgres import PostgresStore

    store = PostgresStore(cluster.db_url)
    try:
        deadline = time.monotonic() + 20
        while True:  # the writer threads append at least every 0.25 s
            heads = {h.chain: h.seq for h in store.audit_heads()}
            if all(heads.get(f"machine{i}", 0) >= 9 for i in range(REPLICAS)):
                break
            assert time.monotonic() < deadline, heads
            time.sleep(0.2)
    finally:
        store.close()
    verified = run_hookgate(
        ["audit", "verify", "--config", str(cluster.config)], env={"HOOKGATE_STORE_URL": cluster.db_url}
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    for i in range(REPLICAS):
        assert f"machine{i}" in verified.stdout
    assert PASSWORD not in verified.stdout + verified.stderr
