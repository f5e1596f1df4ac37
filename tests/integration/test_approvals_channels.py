"""Approval channels end to end: ``hookgate run`` posts through the official SDKs (slack_sdk, lark-oapi) or a
signed webhook to loopback fakes of the platforms; the platform's callback reaches ``hookgate serve``."""

from __future__ import annotations

import base64
import json
import os
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import httpx2
import pytest
from standardwebhooks.webhooks import Webhook

from tests.fakes.feishu_api import FakeFeishu
from tests.fakes.serving import ServerThread, listening_socket, server_on
from tests.fakes.slack_api import FakeSlack
from tests.integration.approvals_helpers import Waiting, bash_event, decision_of, listed, wait_for_pending, write_config
from tests.integration.serve_helpers import ServeProcess

TOKEN = "serve-token"


def wait_until(predicate: Any, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


@pytest.fixture
def slack(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeSlack]:
    fake = FakeSlack()
    monkeypatch.setenv("SLACK_BOT_TOKEN", fake.token)
    monkeypatch.setenv("SLACK_SIGNING_SECRET", fake.signing_secret)
    yield fake
    fake.stop()


@pytest.fixture
def feishu(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeFeishu]:
    fake = FakeFeishu()
    for name, value in (
        ("LARK_APP_ID", fake.app_id),
        ("LARK_APP_SECRET", fake.app_secret),
        ("LARK_VERIFICATION_TOKEN", fake.verification_token),
        ("LARK_ENCRYPT_KEY", fake.encrypt_key),
    ):
        monkeypatch.setenv(name, value)
    yield fake
    fake.stop()


def slack_config(tmp_path: Path, fake: FakeSlack, **handler: Any) -> Path:
    return write_config(
        tmp_path,
        {"channel": "ops", "approvers": ["U024BE7LH"], **handler},
        {"ops": {"type": "slack", "channel": "C0123456", "baseUrl": fake.base_url}},
    )


def test_slack_approve_button_releases_the_call_and_the_message_shows_who(tmp_path: Path, slack: FakeSlack) -> None:
    config = slack_config(tmp_path, slack, timeout=60)
    with ServeProcess(config, env={"HOOKGATE_TOKEN": TOKEN}) as serve:
        waiting = Waiting(["run", "--config", str(config)], bash_event())
        wait_until(lambda: slack.messages)
        [ts] = list(slack.messages)
        message = slack.messages[ts]
        assert message["channel"] == "C0123456"
        assert "git push origin main" in json.dumps(message["blocks"])
        [request] = wait_for_pending(config)
        assert slack.button(ts, "Approve")["value"] == request["id"]
        url = f"{serve.url}/approvals/slack"
        # a forged callback (another signing secret) and a stale one are refused and change nothing
        forged = slack.click(url, ts, secret="not-the-secret")
        assert forged[0] == 401 and b"signature check failed" in forged[1]
        stale = slack.click(url, ts, age=600)  # said as what it is, not as a bad signature
        assert stale[0] == 401 and re.search(rb"timestamp is 6\d\d s old \(more than 5 minutes\)", stale[1]), stale
        # someone who is not an approver: acknowledged to Slack, not taken, and the log says why
        mark = len(serve.lines)
        assert slack.click(url, ts, user_id="U0MALLORY", username="mallory")[0] == 200
        assert "is not one of this request's approvers" in serve.wait_log("refused", after=mark)
        assert listed(config)[0]["status"] == "pending" and waiting.running()
        status, _ = slack.click(url, ts, "Approve")
        assert status == 200
        code, out, err = waiting.finish(timeout=30)
        assert code == 0, err
        assert "approved by slack:U024BE7LH" in decision_of(out)["permissionDecisionReason"]
        wait_until(lambda: slack.messages[ts]["updates"])
        final = json.dumps(slack.messages[ts]["blocks"])
        assert "Approved by slack:U024BE7LH" in final and "hookgate_approve" not in final


def test_slack_reject_and_a_click_on_an_expired_request(tmp_path: Path, slack: FakeSlack) -> None:
    config = slack_config(tmp_path, slack, timeout=2).rename(tmp_path / "short.yaml")
    with ServeProcess(config) as serve:
        code, out, _ = Waiting(["run", "--config", str(config)], bash_event()).finish()
        assert code == 2 and "expired" in decision_of(out)["permissionDecisionReason"]
        [ts] = list(slack.messages)
        assert "Expired by hookgate:timeout" in json.dumps(slack.messages[ts]["blocks"])
        # a click on the stale card (as a client that had not refreshed it): refused, and the card says so
        [record] = listed(config)
        payload = {
            "type": "block_actions",
            "user": {"id": "U024BE7LH", "username": "alice"},
            "actions": [{"type": "button", "action_id": "hookgate_approve", "value": record["id"]}],
        }
        assert slack.send_callback(f"{serve.url}/approvals/slack", payload)[0] == 200
        wait_until(lambda: "answer refused" in json.dumps(slack.messages[ts]["blocks"]))
        assert "already expired" in json.dumps(slack.messages[ts]["blocks"])
        assert listed(config)[0]["status"] == "expired"
        # a new call (with time to answer), rejected with the button
        patient = slack_config(tmp_path, slack, timeout=60)
        patient = patient.rename(tmp_path / "patient.yaml")
        waiting = Waiting(["run", "--config", str(patient)], bash_event("git push --force"))
        wait_until(lambda: len(slack.messages) == 2)
        ts2 = next(t for t in slack.messages if t != ts)
        assert slack.click(f"{serve.url}/approvals/slack", ts2, "Reject")[0] == 200
        code, out, _ = waiting.finish()
        assert code == 2 and "rejected by slack:U024BE7LH" in decision_of(out)["permissionDecisionReason"]


def test_one_slack_app_posting_to_two_channels_takes_a_click_on_either(tmp_path: Path, slack: FakeSlack) -> None:
    """One Slack app (one signing secret) with two `channels:` entries (#ops and #security): a click on a
    #security card was checked against the first entry, ops, whose secret is the same, and refused there
    as "not posted to channel 'ops'", so no click on a second channel's card ever decided anything. Now
    the click goes to the channel the request was posted to."""
    spec = {"type": "slack", "baseUrl": slack.base_url}
    config = write_config(
        tmp_path,
        {"channel": "sec", "approvers": ["U024BE7LH"], "timeout": 60},
        {"ops": {**spec, "channel": "C0123456"}, "sec": {**spec, "channel": "C0SECURITY"}},
    )
    with ServeProcess(config, env={"HOOKGATE_TOKEN": TOKEN}) as serve:
        waiting = Waiting(["run", "--config", str(config)], bash_event())
        wait_until(lambda: slack.messages)
        [ts] = list(slack.messages)
        assert slack.messages[ts]["channel"] == "C0SECURITY"
        assert slack.click(f"{serve.url}/approvals/slack", ts, "Approve")[0] == 200
        code, out, err = waiting.finish(timeout=30)
        assert code == 0 and "approved by slack:U024BE7LH" in decision_of(out)["permissionDecisionReason"], err
        wait_until(lambda: slack.messages[ts]["updates"])
        assert "Approved by slack:U024BE7LH" in json.dumps(slack.messages[ts]["blocks"])


def test_feishu_card_button_approves_through_the_card_action_callback(tmp_path: Path, feishu: FakeFeishu) -> None:
    config = write_config(
        tmp_path,
        {"channel": "lark", "timeout": 60},
        {"lark": {"type": "feishu", "chatId": "oc_0123", "domain": feishu.domain}},
    )
    with ServeProcess(config, env={"HOOKGATE_TOKEN": TOKEN}) as serve:
        waiting = Waiting(["run", "--config", str(config)], bash_event())
        wait_until(lambda: feishu.messages)
        [message_id] = list(feishu.messages)
        card = feishu.messages[message_id]
        assert card["chat_id"] == "oc_0123" and "git push origin main" in json.dumps(card["content"])
        url = f"{serve.url}/approvals/feishu"
        assert feishu.click(url, message_id, encrypt_key="forged-key")[0] == 401
        assert feishu.click(url, message_id, token="forged-token")[0] == 401
        assert listed(config)[0]["status"] == "pending"
        status, body = feishu.click(url, message_id, "Approve")
        assert status == 200 and json.loads(body)["toast"]["type"] == "success"
        code, out, err = waiting.finish(timeout=30)
        assert code == 0, err
        assert "approved by feishu:ou_fake_alice" in decision_of(out)["permissionDecisionReason"]
        wait_until(lambda: feishu.messages[message_id]["updates"])
        final = feishu.messages[message_id]["content"]
        assert final["header"]["template"] == "green"
        assert "Approved by feishu:ou_fake_alice" in json.dumps(final)
        assert ("PATCH", f"/open-apis/im/v1/messages/{message_id}") in feishu.calls


class Receiver:
    """A webhook receiver on 127.0.0.1 that verifies each delivery with ``standardwebhooks``."""

    def __init__(self, secret: str) -> None:
        self.webhook = Webhook(secret)
        self.deliveries: list[dict[str, Any]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                try:
                    receiver.deliveries.append(receiver.webhook.verify(body, dict(self.headers)))
                    status = 204
                except Exception:
                    status = 401
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

        self.thread = ServerThread(server_on(listening_socket(), Handler), "approval-webhook")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.thread.port}/in"


def signed(secret: str, body: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    data = json.dumps(body)
    now = datetime.now(tz=UTC)
    msg_id = "msg_" + os.urandom(6).hex()
    return data.encode(), {
        "content-type": "application/json",
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Webhook(secret).sign(msg_id, now, data),
    }


def test_webhook_channel_posts_a_signed_request_and_takes_a_signed_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "whsec_" + base64.b64encode(os.urandom(24)).decode()
    monkeypatch.setenv("APPROVAL_HOOK_SECRET", secret)
    receiver = Receiver(secret)
    try:
        callback_base = "https://hookgate.example.test"  # where the receiver would reach serve (not used here)
        config = write_config(
            tmp_path,
            {"channel": "hook", "timeout": 60},
            {
                "hook": {
                    "type": "webhook",
                    "url": receiver.url,
                    "signingSecretEnv": "APPROVAL_HOOK_SECRET",
                    "callbackUrl": callback_base,
                }
            },
        )
        with ServeProcess(config) as serve:
            waiting = Waiting(["run", "--config", str(config)], bash_event())
            wait_until(lambda: receiver.deliveries)
            delivery = receiver.deliveries[0]
            assert delivery["type"] == "approval.requested"
            approval_id = delivery["approval"]["id"]
            assert delivery["approval"]["tool_input"] == {"command": "git push origin main"}
            assert delivery["callback_url"] == f"{callback_base}/approvals/{approval_id}"
            answer_url = f"{serve.url}/approvals/{approval_id}"
            body, headers = signed(
                "whsec_" + base64.b64encode(b"another secret entirely").decode(), {"decision": "approve", "by": "bot"}
            )
            assert httpx2.post(answer_url, content=body, headers=headers).status_code == 401
            unnamed, headers = signed(secret, {"decision": "approve", "by": "release-bot"})
            refused = httpx2.post(answer_url, content=unnamed, headers=headers)
            assert refused.status_code == 400 and "must name its request" in refused.text
            answer = {"id": approval_id, "decision": "approve", "by": "release-bot", "reason": "CI green"}
            body, headers = signed(secret, answer)
            other = f"{serve.url}/approvals/apr-someother1"
            assert httpx2.post(other, content=body, headers=headers).status_code in (404, 409)
            answered = httpx2.post(answer_url, content=body, headers=headers)
            assert answered.status_code == 200, answered.text
            code, out, err = waiting.finish(timeout=30)
            assert code == 0, err
            assert "approved by webhook:release-bot (CI green)" in decision_of(out)["permissionDecisionReason"]
            wait_until(lambda: len(receiver.deliveries) == 2)
            assert receiver.deliveries[1]["type"] == "approval.approved"
            assert receiver.deliveries[1]["approval"]["decided_by"] == "webhook:release-bot"
    finally:
        receiver.thread.stop()


def test_an_answer_signed_for_one_request_cannot_decide_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The signature covers the body, not the URL: a receiver's signed "approve" for request A, replayed to
    B's URL (another command), once approved B too. The body must name its request."""
    secret = "whsec_" + base64.b64encode(os.urandom(24)).decode()
    monkeypatch.setenv("APPROVAL_HOOK_SECRET", secret)
    receiver = Receiver(secret)
    try:
        channel = {"type": "webhook", "url": receiver.url, "signingSecretEnv": "APPROVAL_HOOK_SECRET"}
        config = write_config(tmp_path, {"channel": "hook", "timeout": 30}, {"hook": channel})
        with ServeProcess(config) as serve:
            first = Waiting(["run", "--config", str(config)], bash_event("git status", tool_use_id="toolu_A"))
            wait_until(lambda: len(receiver.deliveries) >= 1)
            second = Waiting(["run", "--config", str(config)], bash_event("git push --force", tool_use_id="toolu_B"))
            wait_until(lambda: len(receiver.deliveries) >= 2)
            ids = {d["approval"]["tool_use_id"]: d["approval"]["id"] for d in receiver.deliveries}
            body, headers = signed(secret, {"id": ids["toolu_A"], "decision": "approve", "by": "alice"})
            replay = httpx2.post(f"{serve.url}/approvals/{ids['toolu_B']}", content=body, headers=headers)
            assert replay.status_code == 409 and "signed for request" in replay.text, replay.text
            answered = httpx2.post(f"{serve.url}/approvals/{ids['toolu_A']}", content=body, headers=headers)
            assert answered.status_code == 200, answered.text
            assert first.finish(timeout=30)[0] == 0
            assert second.running()
            second.proc.kill()
            second.finish(timeout=30)
        statuses = {r["tool_use_id"]: r["status"] for r in listed(config)}
        assert statuses == {"toolu_A": "approved", "toolu_B": "pending"}
    finally:
        receiver.thread.stop()


def test_a_channel_that_cannot_post_cancels_the_request(
    tmp_path: Path, slack: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-wrong")
    config = slack_config(tmp_path, slack)
    code, out, _ = Waiting(["run", "--config", str(config)], bash_event()).finish()
    assert code == 2
    assert "cancelled" in decision_of(out)["permissionDecisionReason"]
    assert "invalid_auth" in decision_of(out)["permissionDecisionReason"]
    [record] = listed(config)
    assert record["status"] == "cancelled" and record["decided_by"] == "hookgate:channel"


def test_a_channel_that_hangs_cannot_hold_the_answer_past_the_deadline(tmp_path: Path, slack: FakeSlack) -> None:
    slack.delay = 8.0  # longer than the whole approval timeout
    config = slack_config(tmp_path, slack, timeout=3)
    waiting = Waiting(["run", "--config", str(config)], bash_event())
    code, out, _ = waiting.finish()
    assert code == 2 and waiting.elapsed < 6
    assert "did not answer in time" in decision_of(out)["permissionDecisionReason"]
    assert listed(config)[0]["status"] == "cancelled"
