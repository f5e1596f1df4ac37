"""The approval gate under ``hookgate run``: the waiting process holds the hook; another process answers."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.conftest import run_hookgate
from tests.integration.approvals_helpers import (
    Waiting,
    approvals,
    bash_event,
    decision_of,
    listed,
    run_event,
    wait_for_pending,
    wait_for_waiters,
    write_config,
)


@pytest.mark.usefixtures("store_backend")
def test_run_is_released_by_approve_from_another_process(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"timeout": 60})
    waiting = Waiting(["run", "--config", str(config)], bash_event())
    [request] = wait_for_pending(config)
    assert request["tool_name"] == "Bash" and request["tool_use_id"] == "toolu_01"
    assert request["session_id"] == "sess-1" and request["decided_by"] is None
    assert waiting.running()
    answer = approvals(config, "approve", request["id"], "--reason", "release is due")
    assert answer.returncode == 0, answer.stderr
    code, out, err = waiting.finish()
    assert code == 0, err
    decision = decision_of(out)
    assert decision["permissionDecision"] == "allow"
    assert "approved by cli:" in decision["permissionDecisionReason"]
    assert "release is due" in decision["permissionDecisionReason"]
    assert waiting.elapsed < 30  # released by the answer, not by the 60 s timeout
    [record] = listed(config)
    assert record["status"] == "approved" and record["decided_by"].startswith("cli:")
    assert record["reason"] == "release is due" and record["consumed_at"] is not None
    shown = approvals(config, "show", request["id"])
    assert "approved" in shown.stdout and "Run git push origin main in /repo?" in shown.stdout


def test_run_is_denied_by_reject_naming_who_and_why(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    waiting = Waiting(["run", "--config", str(config)], bash_event())
    [request] = wait_for_pending(config)
    assert approvals(config, "reject", request["id"], "--reason", "not on a Friday").returncode == 0
    code, out, _ = waiting.finish()
    assert code == 2
    decision = decision_of(out)
    assert decision["permissionDecision"] == "deny"
    reason = decision["permissionDecisionReason"]
    assert "rejected by cli:" in reason and "not on a Friday" in reason and request["id"] in reason
    # the request is answered once: a second answer is refused with exit 3
    again = approvals(config, "approve", request["id"])
    assert again.returncode == 3 and "already rejected" in again.stderr


def test_run_is_denied_at_expiry(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"timeout": 2})
    code, out, _ = run_event(config, bash_event())
    assert code == 2
    assert "expired with no answer" in decision_of(out)["permissionDecisionReason"]
    [record] = listed(config)
    assert record["status"] == "expired" and record["decided_by"] == "hookgate:timeout"
    late = approvals(config, "approve", record["id"])
    assert late.returncode == 3 and "already expired" in late.stderr


def test_on_timeout_ask_hands_the_call_to_the_host_prompt(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"timeout": 1.5, "onTimeout": "ask"})
    code, out, _ = run_event(config, bash_event())
    assert code == 0
    assert decision_of(out)["permissionDecision"] == "ask"


def test_where_the_host_has_no_prompt_a_closed_gate_stops_the_action(tmp_path: Path) -> None:
    """An approval on UserPromptSubmit with onTimeout: ask let the prompt through at expiry (a system message
    alone: Claude Code has no permission prompt there), and a rejected approval on SessionStart let the
    session start. Now ask closes the gate where there is no prompt (a block), and an event that cannot be
    blocked is stopped with continue: false, as a class hook stops a session."""
    import json

    prompt = write_config(tmp_path, {"timeout": 1.5, "onTimeout": "ask"}, matcher="", event="UserPromptSubmit")
    code, out, err = run_event(prompt, {"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "ship it"})
    assert code == 2 and json.loads(out)["decision"] == "block", out
    assert "expired with no answer" in err
    start = write_config(tmp_path, {"timeout": 30}, matcher="", event="SessionStart", name="start.yaml")
    waiting = Waiting(["run", "--config", str(start)], {"hook_event_name": "SessionStart", "session_id": "s2"})
    [request] = wait_for_pending(start)
    assert approvals(start, "reject", request["id"], "--reason", "not now").returncode == 0
    code, out, _ = waiting.finish()
    answer = json.loads(out)
    assert answer["continue"] is False and "rejected by cli:" in answer["stopReason"], out
    assert "not now" in answer["stopReason"]


@pytest.mark.parametrize(
    ("setting", "named"), [({"cacheTtl": 600}, "cacheTtl: not allowed"), ({"async": True}, "async: not allowed")]
)
def test_settings_that_would_open_the_gate_without_an_answer_are_refused(
    tmp_path: Path, setting: dict[str, object], named: str
) -> None:
    """cacheTtl on an approval reused one approval for every identical call for 10 minutes, and async ran
    the gate in the background: the call was allowed at once, before anyone answered. Both validated ok.
    Now validate names the setting (exit 1) and the handler fails closed at run time (a deny)."""
    config = write_config(tmp_path, {"timeout": 20, **setting})
    checked = run_hookgate(["validate", "--config", str(config)])
    assert checked.returncode == 1 and named in checked.stdout + checked.stderr, checked
    code, out, _ = run_event(config, bash_event(), timeout=15)
    assert code == 2 and decision_of(out)["permissionDecision"] == "deny", out
    assert named in decision_of(out)["permissionDecisionReason"]
    assert listed(config) == []  # nobody was asked about a call the gate could not hold


@pytest.mark.usefixtures("store_backend")
def test_an_answer_given_while_nobody_waits_is_honoured_on_the_retry_once(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"timeout": 30})
    waiting = Waiting(["run", "--config", str(config)], bash_event())
    [request] = wait_for_pending(config)
    waiting.proc.kill()  # the host killed the hook (or the machine rebooted): nobody waits now
    waiting.finish()
    assert approvals(config, "approve", request["id"]).returncode == 0
    # the model retries the same call (a new tool_use_id): it finds the answer at once, no second request
    code, out, err = run_event(config, bash_event(tool_use_id="toolu_02"), timeout=10)
    assert code == 0, err
    assert decision_of(out)["permissionDecision"] == "allow"
    assert len(listed(config)) == 1
    # consumed once: the next identical call asks again
    asked = Waiting(["run", "--config", str(config)], bash_event(tool_use_id="toolu_03"))
    pending = wait_for_pending(config)
    assert [p["id"] for p in pending] != [request["id"]]
    assert approvals(config, "reject", pending[0]["id"]).returncode == 0
    assert asked.finish()[0] == 2


@pytest.mark.parametrize("ids", [(None, None), ("toolu_A", "toolu_B")])
def test_identical_calls_wait_on_one_request_and_one_approval_releases_one(
    tmp_path: Path, ids: tuple[str | None, str | None]
) -> None:
    """A second identical call (a retry, or the same call twice) finds the first one's request and waits on
    it; the approval goes to one of them (one approval, one call: a payment, a force push); the other asks
    anew with a request of its own."""
    config = write_config(tmp_path, {"timeout": 30})
    first = Waiting(["run", "--config", str(config)], bash_event(tool_use_id=ids[0]))
    [request] = wait_for_pending(config)
    assert request["tool_use_id"] == ids[0]
    second = Waiting(["run", "--config", str(config)], bash_event(tool_use_id=ids[1]))
    wait_for_waiters(request["id"], 2)
    assert approvals(config, "approve", request["id"]).returncode == 0
    [again] = wait_for_pending(config)
    assert again["id"] != request["id"]
    deadline = time.monotonic() + 30
    while first.running() and second.running() and time.monotonic() < deadline:
        time.sleep(0.05)
    released, waiting = (first, second) if not first.running() else (second, first)
    assert released.finish()[0] == 0 and waiting.running()
    assert approvals(config, "approve", again["id"]).returncode == 0
    code, out, _ = waiting.finish()
    assert code == 0 and again["id"] in out
    assert sorted(r["status"] for r in listed(config)) == ["approved", "approved"]


def test_other_handlers_deny_still_wins(tmp_path: Path) -> None:
    config = tmp_path / "hookgate.yaml"
    config.write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [
                        {
                            "matcher": "Bash",
                            "hooks": [
                                {"type": "approval", "timeout": 20},
                                {"type": "command", "command": "echo nope >&2; exit 2"},
                            ],
                        }
                    ]
                }
            }
        )
    )
    waiting = Waiting(["run", "--config", str(config)], bash_event())
    [request] = wait_for_pending(config)
    approvals(config, "approve", request["id"])
    code, out, _ = waiting.finish()
    assert code == 2
    decision = decision_of(out)
    assert decision["permissionDecision"] == "deny" and "nope" in decision["permissionDecisionReason"]


def test_two_gates_on_one_call_are_two_requests_and_each_needs_its_own_answer(tmp_path: Path) -> None:
    """An ops gate and a security gate on the same call: two requests, each with its own message, and the
    ops team's approval does not release the security gate (the request names its handler)."""
    gate = {"type": "approval", "timeout": 30}
    config = tmp_path / "hookgate.yaml"
    config.write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [
                        {"matcher": "Bash", "hooks": [{**gate, "id": "ops", "message": "OPS: ${tool_input.command}?"}]},
                        {"matcher": "Bash", "hooks": [{**gate, "id": "sec", "message": "SEC: ${tool_input.command}?"}]},
                    ]
                }
            }
        )
    )
    waiting = Waiting(["run", "--config", str(config)], bash_event())
    pending = wait_for_pending(config, count=2)
    by_message = {r["message"].split(":")[0]: r for r in pending}
    assert sorted(by_message) == ["OPS", "SEC"]
    assert approvals(config, "approve", by_message["OPS"]["id"]).returncode == 0
    time.sleep(1.0)
    assert waiting.running()  # the security gate still waits
    assert [r["id"] for r in listed(config) if r["status"] == "pending"] == [by_message["SEC"]["id"]]
    assert approvals(config, "approve", by_message["SEC"]["id"]).returncode == 0
    code, out, err = waiting.finish()
    assert code == 0, err
    assert decision_of(out)["permissionDecision"] == "allow"


def test_list_json_has_the_documented_fields_and_cli_errors(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"timeout": 1})
    run_event(config, bash_event())
    [record] = listed(config)
    for key in (
        "id",
        "status",
        "session_id",
        "tool_use_id",
        "tool_name",
        "created_at",
        "expires_at",
        "decided_by",
        "reason",
    ):
        assert key in record
    missing = approvals(config, "approve", "apr-nosuchid")
    assert missing.returncode == 4 and "no approval request" in missing.stderr
    # where it looked: run from another folder without --config, an id or a list is looked for in another
    # store, and once said only "no approval request(s)"
    assert " in " in missing.stderr and f"(config: {config})" in missing.stderr, missing.stderr
    assert ".sqlite3" in missing.stderr or "postgresql://" in missing.stderr
    assert len(missing.stderr.splitlines()) == 1
    empty = approvals(config, "list", "--status", "cancelled")
    assert empty.stdout.startswith("no approval requests with status cancelled in ") and str(config) in empty.stdout
    plain = approvals(config, "list")
    assert record["id"] in plain.stdout and "expired" in plain.stdout


async def test_the_result_carries_the_approval_for_the_audit_record(tmp_path: Path) -> None:
    from gateway.api import Gateway

    config = write_config(tmp_path, {"timeout": 1, "id": "gate"})
    async with Gateway.from_file(str(config)) as gateway:
        decision = await gateway.dispatch(bash_event())
    [result] = decision.results
    approval = result.meta["approval"]
    assert approval == {"id": approval["id"], "decided_by": "hookgate:timeout", "status": "expired"}
    assert result.side_effects == [f"created approval request {approval['id']}"]
    assert result.fail_closed and decision.permission == "deny"


def test_an_approval_allows_only_the_input_the_approver_saw(tmp_path: Path) -> None:
    """A reused tool_use_id with other arguments is a new request: approving 'git push origin docs' never
    lets 'git push origin +main' through (the request key holds the input's fingerprint)."""
    config = write_config(tmp_path, {"timeout": 60})
    first = Waiting(["run", "--config", str(config)], bash_event("git push origin docs", tool_use_id="same"))
    [request] = wait_for_pending(config)
    second = Waiting(["run", "--config", str(config)], bash_event("git push origin +main", tool_use_id="same"))
    pending = wait_for_pending(config, count=2)
    assert sorted(r["tool_input"]["command"] for r in pending) == ["git push origin +main", "git push origin docs"]
    assert approvals(config, "approve", request["id"]).returncode == 0
    code, out, err = first.finish()
    assert code == 0 and decision_of(out)["permissionDecision"] == "allow", err
    assert second.running()  # still waiting for its own answer
    other = next(r for r in pending if r["id"] != request["id"])
    assert approvals(config, "reject", other["id"]).returncode == 0
    code, out, _ = second.finish()
    assert code == 2 and decision_of(out)["permissionDecision"] == "deny"


def test_an_approval_is_bound_to_the_folder_the_approver_saw(tmp_path: Path) -> None:
    """'rm -rf *' approved in /tmp/scratch (the folder the message and every channel show) once released
    'rm -rf *' in /home/ana/project on the retry: the fingerprint held no cwd. Now the same command in
    another folder is a request of its own; the approval still goes to the call in its own folder."""
    config = write_config(tmp_path, {"timeout": 60})
    first = Waiting(["run", "--config", str(config)], bash_event("rm -rf *", tool_use_id="t1", cwd="/tmp/scratch"))
    [request] = wait_for_pending(config)
    first.proc.kill()  # the host killed its hook: nobody waits when the answer comes
    first.proc.wait()
    assert approvals(config, "approve", request["id"]).returncode == 0
    moved = Waiting(["run", "--config", str(config)], bash_event("rm -rf *", tool_use_id="t2", cwd="/home/ana/project"))
    [other] = wait_for_pending(config)
    assert other["id"] != request["id"] and other["cwd"] == "/home/ana/project"
    assert moved.running()  # not released by the approval given for /tmp/scratch
    assert approvals(config, "reject", other["id"]).returncode == 0
    code, out, _ = moved.finish()
    assert code == 2 and decision_of(out)["permissionDecision"] == "deny"
    code, out, err = run_event(config, bash_event("rm -rf *", tool_use_id="t3", cwd="/tmp/scratch"))
    assert code == 0 and decision_of(out)["permissionDecision"] == "allow", err
    assert request["id"] in decision_of(out)["permissionDecisionReason"]


def test_a_user_id_with_no_name_can_answer_and_is_recorded_by_its_number(tmp_path: Path) -> None:
    """`hookgate approvals approve` run as a user id with no passwd entry and no $USER (a container run as
    `--user 4242`) failed with "internal error: KeyError: 'getpwuid(): uid not found: 4242'" and could
    not answer at all; now it answers as cli:uid-4242. (A user namespace gives the uid without a passwd entry.)"""
    import os
    import shutil
    import subprocess

    from tests.conftest import HOOKGATE

    unshare = ["unshare", "--user", "--map-user=4242", "--map-group=4242"]
    if shutil.which("unshare") is None or subprocess.run([*unshare, "true"], capture_output=True).returncode:
        pytest.skip("no user namespaces here (unshare --user)")
    config = write_config(tmp_path, {"timeout": 60})
    waiting = Waiting(["run", "--config", str(config)], bash_event())
    [request] = wait_for_pending(config)
    env = {k: v for k, v in os.environ.items() if k not in ("LOGNAME", "USER", "LNAME", "USERNAME")}
    answered = subprocess.run(
        [*unshare, *HOOKGATE, "approvals", "approve", request["id"], "--config", str(config)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert answered.returncode == 0, answered.stderr
    assert answered.stdout.strip() == f"{request['id']}: approved by cli:uid-4242"
    code, out, err = waiting.finish()
    assert code == 0 and "approved by cli:uid-4242" in decision_of(out)["permissionDecisionReason"], err


def test_a_lone_surrogate_in_the_event_can_still_be_approved(tmp_path: Path) -> None:
    """A JSON event may hold a lone surrogate ("\\ud800": a model's output cut inside an emoji). The store
    could not keep it as text, so the request was never created: the gate failed closed on every try and
    the call could never be approved. Now it is stored as its escape, and the approval releases the call."""
    config = write_config(tmp_path, {"timeout": 60})
    event = bash_event("echo \udcff done", cwd="/tmp/\ud800")
    waiting = Waiting(["run", "--config", str(config)], event)
    [request] = wait_for_pending(config)
    assert request["tool_input"] == {"command": "echo \\udcff done"} and request["cwd"] == "/tmp/\\ud800"
    assert approvals(config, "approve", request["id"]).returncode == 0
    code, out, err = waiting.finish()
    assert code == 0 and decision_of(out)["permissionDecision"] == "allow", err


def test_a_huge_cli_reason_is_cut_as_on_every_other_route(tmp_path: Path) -> None:
    """`approve --reason` with 120,000 characters went whole into the agent's permissionDecisionReason
    (the HTTP routes keep 1,000); now every route keeps the first 1,000 characters."""
    config = write_config(tmp_path, {"timeout": 60})
    waiting = Waiting(["run", "--config", str(config)], bash_event())
    [request] = wait_for_pending(config)
    assert approvals(config, "approve", request["id"], "--reason", "why " * 30000).returncode == 0
    code, out, err = waiting.finish()
    reason = decision_of(out)["permissionDecisionReason"]
    assert code == 0 and len(reason) < 1200 and "why why" in reason and "…" in reason, err
    [stored] = listed(config)
    assert len(stored["reason"]) == 1000


def test_control_characters_in_the_input_are_escaped_for_the_approver(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"timeout": 60})
    sneaky = "git push --force origin main # \r\x1b[2Kgit push origin feature-x"
    waiting = Waiting(["run", "--config", str(config)], bash_event(sneaky))
    [request] = wait_for_pending(config)
    shown = approvals(config, "show", request["id"]).stdout + approvals(config, "list").stdout
    assert "\r" not in shown and "\x1b" not in shown
    assert "\\r\\x1b[2K" in request["message"]
    approvals(config, "reject", request["id"])
    assert waiting.finish()[0] == 2


def test_a_newline_or_a_bidi_override_cannot_add_rows_or_reorder_what_the_approver_reads(tmp_path: Path) -> None:
    """A command holding a newline and a fake row once printed that row in ``approvals list``; U+202E
    (right-to-left override), U+2028 and U+0085 reached ``show`` raw, and so did a newline in the cwd."""
    config = write_config(tmp_path, {"timeout": 60})
    sneaky = "git push --force origin main\napr-fake0001  approved by cli:alice \u202egnp.x\u2028\x85"
    waiting = Waiting(["run", "--config", str(config)], bash_event(sneaky, cwd="/repo\nfolder:      /safe"))
    [request] = wait_for_pending(config)
    listing = approvals(config, "list").stdout
    shown = approvals(config, "show", request["id"]).stdout
    assert len(listing.splitlines()) == 1 and "apr-fake0001" not in listing.splitlines()[0][:20]
    for text in (listing, shown):
        assert not any(c in text for c in "\u202e\u2028\x85"), text
    assert "\\u202e" in shown and "\\n" in shown
    assert [line for line in shown.splitlines() if line.startswith("folder:")] == [
        "folder:      /repo\\nfolder:      /safe"
    ]
    approvals(config, "reject", request["id"])
    assert waiting.finish()[0] == 2


def test_every_transition_reaches_the_audit_trail(tmp_path: Path) -> None:
    """created -> approved (by another process) -> consumed are audit records beside the tool call's own,
    in the same hash chain (`hookgate audit verify` passes)."""
    import subprocess
    import sys

    config = write_config(tmp_path, {"timeout": 60})
    waiting = Waiting(["run", "--config", str(config)], bash_event())
    [request] = wait_for_pending(config)
    assert approvals(config, "approve", request["id"], "--reason", "ok by me").returncode == 0
    assert waiting.finish()[0] == 0

    def audit(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "gateway", "audit", *args, "--config", str(config)],
            capture_output=True,
            text=True,
            timeout=60,
        )

    query = audit("query", "--json")
    assert query.returncode == 0, query.stderr
    records = json.loads(query.stdout)
    transitions = [r["approval"]["transition"] for r in records if r["event"] == "ApprovalTransition"]
    assert sorted(transitions) == ["approved", "consumed", "created"]
    approved = next(r for r in records if r.get("approval", {}).get("transition") == "approved")
    assert approved["decision"] == "allow" and approved["reason"] == "ok by me"
    assert approved["approval"]["decided_by"].startswith("cli:") and approved["tool_name"] == "Bash"
    tool_call = next(r for r in records if r["event"] == "PreToolUse")
    assert tool_call["approval"]["id"] == request["id"] and tool_call["decision"] == "allow"
    verified = audit("verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_a_reviewers_reason_cannot_redraw_the_users_terminal(tmp_path: Path) -> None:
    """The reason goes into permissionDecisionReason, which the host prints: CR, ESC and a bidi override
    arrive as visible escapes, in the agent's answer and in the stored request alike."""
    config = write_config(tmp_path)
    waiting = Waiting(["run", "--config", str(config)], bash_event())
    [request] = wait_for_pending(config)
    sneaky = "not now\r\x1b[2K\x1b[1A approved by alice\u202e"
    assert approvals(config, "reject", request["id"], "--reason", sneaky).returncode == 0
    code, out, _ = waiting.finish()
    assert code == 2
    reason = decision_of(out)["permissionDecisionReason"]
    assert "rejected by cli:" in reason and "not now" in reason
    assert not any(c in reason for c in "\r\x1b\u202e"), reason
    assert "\\r\\x1b[2K" in reason and "\\u202e" in reason
    [record] = listed(config)
    assert not any(c in record["reason"] for c in "\r\x1b\u202e")
