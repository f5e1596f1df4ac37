"""Approval requests keep no secret verbatim: the stored request, the audit records and the channel's
delivery are redacted like the audit trail, while the answer stays bound to the exact (unredacted) input."""

from __future__ import annotations

import base64
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import run_hookgate
from tests.integration.approvals_helpers import Waiting, approvals, bash_event, decision_of, listed, wait_for_pending
from tests.integration.test_approvals_channels import Receiver

ANT_KEY = "sk-ant-api03-" + "Zq7Xw" * 14
GH_TOKEN = "ghp_" + "aB3dE6gH9k" * 4
OTHER_GH = "ghp_" + "Mn0pQ2rS4t" * 4
SECRETS = (ANT_KEY, GH_TOKEN, OTHER_GH)


def secret_config(tmp_path: Path, channels: dict[str, Any] | None = None, **handler: Any) -> Path:
    entry = {"type": "approval", "timeout": 60, "message": "Run ${tool_input.command}?", **handler}
    doc: dict[str, Any] = {
        "settings": {"stateDir": str(tmp_path / "state")},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [entry]}]},
        "audit": {"sink": ["store", f"jsonl:{tmp_path / 'state' / 'audit.jsonl'}"]},
    }
    if channels:
        doc["channels"] = channels
    path = tmp_path / "hookgate.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def secret_event(token: str = GH_TOKEN, tool_use_id: str = "toolu_01") -> dict[str, Any]:
    event = bash_event(f"curl -H 'x-api-key: {ANT_KEY}' https://api.example.test/{token}", tool_use_id=tool_use_id)
    event["tool_input"][ANT_KEY] = 1  # a secret as an object key
    return event


def files_with_secrets(*roots: Path) -> list[tuple[str, str]]:
    """(file, secret) for every file under ``roots`` (also SQLite's -wal/-shm) holding a secret's bytes."""
    found = []
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file() and path.name != "hookgate.yaml":
                data = path.read_bytes()
                found += [(str(path), s[:12]) for s in SECRETS if s.encode() in data]
    return found


@pytest.mark.usefixtures("store_backend")
def test_secrets_in_an_approved_call_reach_no_file_and_the_answer_stays_bound(tmp_path: Path) -> None:
    config = secret_config(tmp_path)
    waiting = Waiting(["run", "--config", str(config)], secret_event())
    [request] = wait_for_pending(config)
    shown = json.dumps(request)
    assert all(s not in shown for s in SECRETS) and "[REDACTED:api_key]" in shown, shown
    assert "[REDACTED:" in request["message"] and request["message"].startswith("Run curl -H")
    # the same redacted text, another token: a new request, never the one asked about
    other = Waiting(["run", "--config", str(config)], secret_event(OTHER_GH, tool_use_id="toolu_02"))
    pending = wait_for_pending(config, count=2)
    assert len({r["fingerprint"] for r in pending}) == 2
    assert json.dumps(pending[0]["tool_input"]) == json.dumps(pending[1]["tool_input"])  # both redacted alike
    assert approvals(config, "approve", request["id"], "--reason", f"ok, token {GH_TOKEN}").returncode == 0
    code, out, err = waiting.finish()
    assert code == 0, err
    decision = decision_of(out)
    assert decision["permissionDecision"] == "allow" and GH_TOKEN not in decision["permissionDecisionReason"]
    assert other.running()  # the other input is not approved by that answer
    [second] = [r for r in listed(config) if r["status"] == "pending"]
    assert approvals(config, "reject", second["id"]).returncode == 0
    code, out, _ = other.finish()
    assert code == 2 and decision_of(out)["permissionDecision"] == "deny"
    query = approvals(config, "list", "--json").stdout + approvals(config, "show", request["id"]).stdout
    audit = run_hookgate(["audit", "query", "--json", "--config", str(config)]).stdout
    assert "ApprovalTransition" in audit and "[REDACTED:" in audit
    assert all(s not in query + audit for s in SECRETS)
    assert (tmp_path / "state").is_dir()
    assert files_with_secrets(tmp_path, Path(os.environ["XDG_STATE_HOME"])) == []


def test_a_webhook_channel_gets_the_redacted_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "whsec_" + base64.b64encode(os.urandom(24)).decode()
    monkeypatch.setenv("APPROVAL_HOOK_SECRET", secret)
    receiver = Receiver(secret)
    try:
        channels = {"hook": {"type": "webhook", "url": receiver.url, "signingSecretEnv": "APPROVAL_HOOK_SECRET"}}
        config = secret_config(tmp_path, channels, channel="hook")
        waiting = Waiting(["run", "--config", str(config)], secret_event())
        deadline = time.monotonic() + 30
        while not receiver.deliveries:
            assert time.monotonic() < deadline, "no delivery"
            time.sleep(0.05)
        delivered = json.dumps(receiver.deliveries[0])
        assert all(s not in delivered for s in SECRETS) and "[REDACTED:api_key]" in delivered
        assert "Run curl -H" in receiver.deliveries[0]["approval"]["message"]
        assert approvals(config, "approve", receiver.deliveries[0]["approval"]["id"]).returncode == 0
        code, out, err = waiting.finish()
        assert code == 0 and decision_of(out)["permissionDecision"] == "allow", err
    finally:
        receiver.thread.stop()
    assert files_with_secrets(tmp_path) == []
