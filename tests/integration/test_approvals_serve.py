"""The approval gate behind ``hookgate serve``: the thin client holds the hook while serve waits; serve
killed mid-wait; answers through ``POST /approvals/{id}`` (serve token or a Standard Webhooks signature)."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import httpx2

from tests.integration.approvals_helpers import Waiting, bash_event, decision_of, listed, wait_for_pending, write_config
from tests.integration.serve_helpers import ServeProcess

TOKEN = "serve-token-for-approvals"


def test_serve_killed_mid_wait_then_restarted_keeps_the_request_and_honours_the_callback(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"timeout": 120})
    env = {"HOOKGATE_TOKEN": TOKEN}
    with ServeProcess(config, env=env) as serve:
        # the recommended wiring for a gate that must hold: the thin client, failing closed
        client = ["run", "--server", serve.url, "--on-server-down", "closed"]
        waiting = Waiting(client, bash_event(), env=env)
        [request] = wait_for_pending(config)
        assert serve.proc is not None
        serve.proc.send_signal(signal.SIGKILL)  # dies mid-wait: no cleanup, no answer
        code, out, err = waiting.finish(timeout=30)
        assert code == 2, (out, err)  # a connection error, failed closed: the call is held back
        assert "hookgate serve" in err or "server" in err
    # the request outlived the process that posted it
    [record] = listed(config)
    assert record["id"] == request["id"] and record["status"] == "pending"
    with ServeProcess(config, env=env) as serve:
        answer = httpx2.post(
            f"{serve.url}/approvals/{request['id']}",
            headers={"Authorization": f"Bearer {TOKEN}"},
            json={"decision": "approve", "by": "ops-lead", "reason": "checked the diff"},
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["status"] == "approved" and answer.json()["decided_by"] == "api:ops-lead"
        # the model retries the call: allowed at once, without a second request
        started = time.monotonic()
        retried = Waiting(
            ["run", "--server", serve.url, "--on-server-down", "closed"], bash_event(tool_use_id="toolu_retry"), env=env
        )
        code, out, err = retried.finish(timeout=30)
        assert code == 0, err
        assert decision_of(out)["permissionDecision"] == "allow"
        assert "api:ops-lead" in decision_of(out)["permissionDecisionReason"]
        assert time.monotonic() - started < 10
        assert len(listed(config)) == 1
        # the callback needs a credential: a second, unauthenticated answer is refused before it counts
        forged = httpx2.post(f"{serve.url}/approvals/{request['id']}", json={"decision": "reject"})
        assert forged.status_code == 401
        late = httpx2.post(
            f"{serve.url}/approvals/{request['id']}",
            headers={"Authorization": f"Bearer {TOKEN}"},
            json={"decision": "reject"},
        )
        assert late.status_code == 409 and "already approved" in late.json()["error"]


def test_serve_holds_the_wait_and_a_token_answer_releases_it(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"timeout": 60})
    env = {"HOOKGATE_TOKEN": TOKEN}
    with ServeProcess(config, env=env) as serve:
        waiting = Waiting(["run", "--server", serve.url, "--on-server-down", "closed"], bash_event(), env=env)
        [request] = wait_for_pending(config)
        listing = httpx2.get(f"{serve.url}/approvals?status=pending", headers={"Authorization": f"Bearer {TOKEN}"})
        assert [r["id"] for r in listing.json()["approvals"]] == [request["id"]]
        assert httpx2.get(f"{serve.url}/approvals").status_code == 401
        other = httpx2.post(  # a body naming another request is refused, and decides nothing
            f"{serve.url}/approvals/{request['id']}",
            headers={"Authorization": f"Bearer {TOKEN}"},
            json={"id": "apr-someother", "decision": "approve"},
        )
        assert other.status_code == 409 and "apr-someother" in other.json()["error"]
        assert waiting.running()
        rejected = httpx2.post(
            f"{serve.url}/approvals/{request['id']}",
            headers={"Authorization": f"Bearer {TOKEN}"},
            json={"decision": "reject", "by": "sec", "reason": "prod freeze"},
        )
        assert rejected.status_code == 200
        code, out, _ = waiting.finish(timeout=30)
        assert code == 2
        reason = decision_of(out)["permissionDecisionReason"]
        assert "rejected by api:sec" in reason and "prod freeze" in reason
        bad = httpx2.post(
            f"{serve.url}/approvals/{request['id']}",
            headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
            content=b"not json",
        )
        assert bad.status_code == 400
        assert json.loads(bad.text)["error"]


def test_sigterm_ends_approval_waits_promptly_and_the_request_stays_pending(tmp_path: Path) -> None:
    """A graceful shutdown (SIGTERM) waits for open requests; an approval wait (here up to 120 s) ends at
    once with its fail-closed "still pending" answer, serve exits 0 within seconds, and the request is
    still pending in the store, so a restarted serve (or any replica) can still take its answer."""
    config = write_config(tmp_path, {"timeout": 120})
    env = {"HOOKGATE_TOKEN": TOKEN}
    with ServeProcess(config, env=env) as serve:
        waiting = Waiting(["run", "--server", serve.url, "--on-server-down", "closed"], bash_event(), env=env)
        [request] = wait_for_pending(config)
        started = time.monotonic()
        code = serve.stop(timeout=30)
        stopped_in = time.monotonic() - started
        out_code, out, err = waiting.finish(timeout=30)
    assert code == 0 and stopped_in < 10, (code, stopped_in, serve.lines[-5:])
    assert out_code == 2, (out, err)
    answer = decision_of(out)
    assert answer["permissionDecision"] == "deny"
    assert (
        f"approval {request['id']} is still pending (hookgate serve is shutting down)"
        in (answer["permissionDecisionReason"])
    )
    [record] = listed(config)
    assert record["id"] == request["id"] and record["status"] == "pending"


def test_an_approval_given_after_the_http_caller_hung_up_goes_to_the_retry(tmp_path: Path) -> None:
    """Claude Code's ``http`` hook gives up at its timeout and the model retries the call. The server's wait
    for the first request once took the approval given after that ("approved (delivered)") for a call that
    never ran, and the retry opened a new request. Now the wait sees its client gone and leaves the
    approval for the retry (``gateway.caller``)."""
    config = write_config(tmp_path, {"timeout": 60})
    env = {"HOOKGATE_TOKEN": TOKEN}
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with ServeProcess(config, env=env) as serve:
        try:
            httpx2.post(f"{serve.url}/hooks", json=bash_event(), headers=auth, timeout=1.5)
            raise AssertionError("the first call was answered while its request was pending")
        except httpx2.TimeoutException:
            pass  # the host gave up and hung up
        [request] = wait_for_pending(config)
        time.sleep(3)  # the wait looks for its caller every CALLER_RECHECK (2 s)
        answer = httpx2.post(f"{serve.url}/approvals/{request['id']}", headers=auth, json={"decision": "approve"})
        assert answer.status_code == 200, answer.text
        time.sleep(0.5)
        assert listed(config)[0]["consumed_at"] is None  # nobody took it
        retried = httpx2.post(
            f"{serve.url}/hooks", json=bash_event(tool_use_id="toolu_retry"), headers=auth, timeout=30
        )
        assert retried.status_code == 200
        assert retried.json()["hookSpecificOutput"]["permissionDecision"] == "allow", retried.text
        [record] = listed(config)
        assert record["id"] == request["id"] and record["consumed_at"] is not None


def test_a_token_answer_must_be_json_and_is_recorded_as_the_api(tmp_path: Path) -> None:
    """README "Request checks": every POST is application/json (415 otherwise), the approval answers
    included (a text/plain answer with the token was once taken). A script's answer without ``by`` is
    the API's (``api:anonymous``), not a console's: no console was involved."""
    config = write_config(tmp_path, {"timeout": 60})
    env = {"HOOKGATE_TOKEN": TOKEN}
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with ServeProcess(config, env=env) as serve:
        waiting = Waiting(["run", "--server", serve.url, "--on-server-down", "closed"], bash_event(), env=env)
        [request] = wait_for_pending(config)
        url = f"{serve.url}/approvals/{request['id']}"
        body = json.dumps({"decision": "approve"}).encode()
        for content_type in ("text/plain", "application/x-www-form-urlencoded", None):
            headers = {**auth, **({"Content-Type": content_type} if content_type else {})}
            refused = httpx2.post(url, content=body, headers=headers)
            assert refused.status_code == 415, (content_type, refused.text)
            assert refused.json()["error"].startswith("Content-Type must be application/json")
        ui = httpx2.post(
            f"{serve.url}/ui/api/approvals/{request['id']}",
            content=body,
            headers={**auth, "Content-Type": "text/plain"},
        )
        assert ui.status_code == 415, ui.text
        assert waiting.running() and listed(config)[0]["status"] == "pending"  # none of them decided anything
        answer = httpx2.post(url, content=body, headers={**auth, "Content-Type": "application/json; charset=utf-8"})
        assert answer.status_code == 200, answer.text
        assert answer.json()["decided_by"] == "api:anonymous"
        code, out, err = waiting.finish(timeout=30)
        assert code == 0, err
        assert "approved by api:anonymous" in decision_of(out)["permissionDecisionReason"]
        metrics = httpx2.get(f"{serve.url}/metrics", headers=auth).text
        assert 'hookgate_requests_rejected_total{reason="unsupported_media_type"} 4.0' in metrics


def test_listing_approvals_refuses_an_unknown_status(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"timeout": 60})
    env = {"HOOKGATE_TOKEN": TOKEN}
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with ServeProcess(config, env=env) as serve:
        waiting = Waiting(["run", "--server", serve.url, "--on-server-down", "closed"], bash_event(), env=env)
        [request] = wait_for_pending(config)
        bogus = httpx2.get(f"{serve.url}/approvals?status=bogus", headers=auth)
        assert bogus.status_code == 400, bogus.text
        error = bogus.json()["error"]
        assert "'bogus'" in error and "pending, approved, rejected, expired, cancelled" in error
        for query in ("", "?status=", "?status=pending"):
            listing = httpx2.get(f"{serve.url}/approvals{query}", headers=auth)
            assert listing.status_code == 200 and [r["id"] for r in listing.json()["approvals"]] == [request["id"]]
        assert httpx2.get(f"{serve.url}/approvals?status=approved", headers=auth).json() == {"approvals": []}
        waiting.proc.kill()
        waiting.finish(timeout=30)


def test_without_a_token_no_route_of_serve_takes_an_answer(tmp_path: Path) -> None:
    """On a server started without HOOKGATE_TOKEN the console needs no sign-in, so its answer route would
    take an approval from any process on the machine (the agent's own shell with curl) and record it as
    ``console:ui``: it is refused (403) like ``POST /approvals/{id}`` (401), the console's panel is told it
    cannot answer, and the messages say how to answer instead."""
    config = write_config(tmp_path, {"timeout": 60})
    with ServeProcess(config, env={"HOOKGATE_TOKEN": ""}) as serve:
        waiting = Waiting(["run", "--server", serve.url, "--on-server-down", "closed"], bash_event())
        [request] = wait_for_pending(config)
        panel = httpx2.get(f"{serve.url}/ui/api/approvals")
        assert panel.status_code == 200 and panel.json()["can_answer"] is False
        assert [r["id"] for r in panel.json()["approvals"]] == [request["id"]]
        for path, status in ((f"/ui/api/approvals/{request['id']}", 403), (f"/approvals/{request['id']}", 401)):
            refused = httpx2.post(serve.url + path, json={"decision": "approve"})
            assert refused.status_code == status, refused.text
            assert "this server has no token" in refused.json()["error"]
            assert "hookgate approvals approve" in refused.json()["error"]
        listing = httpx2.get(f"{serve.url}/approvals")
        assert listing.status_code == 401 and "this server has no token" in listing.json()["error"]
        assert waiting.running() and listed(config)[0]["status"] == "pending"
        approved = Waiting(["approvals", "approve", request["id"], "--config", str(config)], {})
        assert approved.finish(timeout=30)[0] == 0
        code, out, err = waiting.finish(timeout=30)
        assert code == 0 and decision_of(out)["permissionDecision"] == "allow", err
