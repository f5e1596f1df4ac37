"""The ``http`` handler against real uvicorn receivers on 127.0.0.1 (tests/fakes/webhooks.py).

Deliveries go through the real handler, the real aiohttp client and the SSRF-guarded resolver; the
only test hook is the guard's injectable resolver (an /etc/hosts-style table), used where a hostname
must resolve to a chosen address. No traffic leaves loopback: names that the guard must refuse
resolve to loopback addresses that are not the receiver's.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway import Gateway
from gateway.config import load_config
from handlers.http import CLIENT_RESOURCE, close_client, make_client
from handlers.netguard import StaticResolver
from tests.conftest import ROOT, run_hookgate
from tests.fakes.webhooks import ClosingServer, Receiver, wait_for

EVENT = {
    "hook_event_name": "PreToolUse",
    "session_id": "s-1",
    "cwd": "/tmp",
    "tool_name": "Bash",
    "tool_input": {"command": "rm -rf build"},
    "tool_use_id": "toolu_1",
}
PROMPT = {"hook_event_name": "UserPromptSubmit", "session_id": "s-1", "cwd": "/tmp", "prompt": "hello"}
SECRET = "whsec_" + base64.b64encode(b"0123456789abcdef0123456789abcdef").decode()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver(secret=SECRET) as r:
        yield r


def write_config(
    tmp_path: Path,
    handler: dict[str, Any],
    event: str = "PreToolUse",
    matcher: str | None = "Bash",
    name: str = "hookgate.json",
) -> str:
    group: dict[str, Any] = {"hooks": [handler]}
    if matcher is not None:
        group["matcher"] = matcher
    path = tmp_path / name
    path.write_text(json.dumps({"hooks": {event: [group]}}))
    return str(path)


def gateway_for(tmp_path: Path, handler: dict[str, Any], **kwargs: Any) -> Gateway:
    return Gateway(load_config([write_config(tmp_path, handler, **kwargs)], use_cache=False), mode="api")


async def dispatch(
    tmp_path: Path,
    handler: dict[str, Any],
    event: dict[str, Any] = EVENT,
    resolver: StaticResolver | None = None,
    **kwargs: Any,
) -> Any:
    gw = gateway_for(tmp_path, {"type": "http", **handler}, event=event["hook_event_name"], **kwargs)
    if resolver is not None:
        gw.context.get_resource(CLIENT_RESOURCE, lambda: make_client(resolver), close_client)
    async with gw:
        return await gw.dispatch(event)


# ---------------------------------------------------------------------------- answers


async def test_json_answer_decides_and_the_request_is_the_event(tmp_path: Path, receiver: Receiver) -> None:
    decision = await dispatch(tmp_path, {"url": receiver.url("/answer/deny")})
    assert decision.permission == "deny" and decision.permission_reason == "denied by the webhook"
    [result] = decision.results
    assert result.status == "ok" and result.meta["status"] == 200 and result.meta["attempts"] == 1
    [call] = receiver.calls
    assert call.json() == EVENT
    assert call.headers["content-type"] == "application/json"
    assert call.headers["user-agent"].startswith("hookgate/")
    assert call.headers["webhook-id"] == result.meta["webhook_id"]
    assert call.headers["webhook-timestamp"].isdigit() and "webhook-signature" not in call.headers


async def test_a_json_answer_after_a_utf8_byte_order_mark_decides(tmp_path: Path, receiver: Receiver) -> None:
    status, body, headers = receiver.answers["deny"]
    receiver.answers["bom"] = (status, b"\xef\xbb\xbf" + body, headers)
    decision = await dispatch(tmp_path, {"url": receiver.url("/answer/bom")})
    assert decision.permission == "deny" and decision.permission_reason == "denied by the webhook"


async def test_a_legacy_block_beside_a_permission_allow_still_denies(tmp_path: Path, receiver: Receiver) -> None:
    # found by a tester: the webhook's block was loosened to an allow by the hookSpecificOutput beside it
    body = {"decision": "block", "reason": "bad", "hookSpecificOutput": {"hookEventName": "PreToolUse"}}
    body["hookSpecificOutput"]["permissionDecision"] = "allow"
    receiver.answers["blockallow"] = (200, json.dumps(body).encode(), {"content-type": "application/json"})
    decision = await dispatch(tmp_path, {"url": receiver.url("/answer/blockallow")})
    assert decision.permission == "deny" and decision.permission_reason == "bad"


@pytest.mark.parametrize(
    ("first", "second", "path"),
    [
        ({"async": True}, {}, "/answer/deny"),
        ({}, {"failClosed": True}, "/answer/garbage"),
        ({"timeout": 0.2}, {"timeout": 5}, "/late"),  # answers a deny after 0.5 s
    ],
    ids=["async-then-sync", "open-then-closed", "short-then-long"],
)
async def test_a_weaker_copy_of_a_webhook_does_not_stand_in_for_it(
    tmp_path: Path, receiver: Receiver, first: dict[str, Any], second: dict[str, Any], path: str
) -> None:
    # found by a tester: identical handlers ran once whatever their async/failClosed, so a background (or
    # fail-open, or shorter-lived) copy listed first silently replaced the one that decides (or fails closed)
    url = receiver.url(path)
    hooks = [{"type": "http", "url": url, "id": "a", **first}, {"type": "http", "url": url, "id": "b", **second}]
    config = tmp_path / "hookgate.json"
    config.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": hooks}]}}))
    async with Gateway(load_config([str(config)], use_cache=False), mode="api") as gw:
        decision = await gw.dispatch(EVENT)
    assert sorted(r.id for r in decision.results) == ["a", "b"]
    assert decision.permission == "deny"


async def test_empty_2xx_is_no_decision(tmp_path: Path, receiver: Receiver) -> None:
    decision = await dispatch(tmp_path, {"url": receiver.url("/answer/empty")})
    assert decision.is_empty and decision.results[0].status == "ok"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("garbage", "answer is not a JSON object: hello, I am not JSON"),
        ("array", "answer is not a JSON object"),
        ("notfound", "HTTP 404"),
    ],
)
async def test_other_answers_are_non_blocking_errors(
    tmp_path: Path, receiver: Receiver, name: str, message: str
) -> None:
    decision = await dispatch(tmp_path, {"url": receiver.url(f"/answer/{name}")})
    [result] = decision.results
    assert result.status == "error" and message in (result.message or "")
    assert decision.permission is None and not decision.block


async def test_plain_text_is_never_context_even_on_user_prompt_submit(tmp_path: Path, receiver: Receiver) -> None:
    decision = await dispatch(tmp_path, {"url": receiver.url("/answer/garbage")}, event=PROMPT, matcher=None)
    assert decision.results[0].status == "error" and decision.additional_context == []


async def test_fail_closed_turns_an_error_into_deny(tmp_path: Path, receiver: Receiver) -> None:
    decision = await dispatch(tmp_path, {"url": receiver.url("/answer/garbage"), "failClosed": True, "id": "policy"})
    assert decision.permission == "deny" and "'policy' failed" in (decision.permission_reason or "")


async def test_5xx_is_retried_with_a_stable_webhook_id_then_fails(tmp_path: Path, receiver: Receiver) -> None:
    decision = await dispatch(tmp_path, {"url": receiver.url("/answer/error500"), "retries": 2})
    [result] = decision.results
    assert result.status == "error" and result.meta["attempts"] == 3 and result.meta["status"] == 500
    assert "HTTP 500" in (result.message or "") and "internal trouble" in (result.message or "")
    calls = receiver.calls_to("/answer/error500")
    assert len(calls) == 3 and len({c.headers["webhook-id"] for c in calls}) == 1


async def test_429_then_200_succeeds(tmp_path: Path, receiver: Receiver) -> None:
    decision = await dispatch(tmp_path, {"url": receiver.url("/flaky/429")})
    assert decision.permission == "deny" and decision.results[0].meta["attempts"] == 2
    ids = [c.headers["webhook-id"] for c in receiver.calls_to("/flaky/429")]
    assert len(ids) == 2 and ids[0] == ids[1]


async def test_503_then_200_succeeds_and_retries_0_does_not_retry(tmp_path: Path, receiver: Receiver) -> None:
    assert (await dispatch(tmp_path, {"url": receiver.url("/flaky/503")})).permission == "deny"
    receiver.calls.clear()
    decision = await dispatch(tmp_path, {"url": receiver.url("/flaky/503"), "retries": 0})
    assert decision.results[0].status == "error" and len(receiver.calls) == 1


async def test_4xx_is_not_retried(tmp_path: Path, receiver: Receiver) -> None:
    decision = await dispatch(tmp_path, {"url": receiver.url("/answer/notfound"), "retries": 3})
    assert decision.results[0].meta["attempts"] == 1 and len(receiver.calls) == 1


async def test_retries_never_pass_the_deadline(tmp_path: Path, receiver: Receiver) -> None:
    receiver.fail_first = 100
    decision = await dispatch(tmp_path, {"url": receiver.url("/flaky/503"), "retries": 10, "timeout": 1})
    [result] = decision.results
    # Retry-After: 0 makes every wait zero, so the budget, not the count, ends the attempts: the
    # answer is the last real error, not a timeout imposed from outside.
    assert result.status == "error" and "HTTP 503" in (result.message or "")


async def test_slow_body_times_out_with_no_decision(tmp_path: Path, receiver: Receiver) -> None:
    decision = await dispatch(tmp_path, {"url": receiver.url("/slow-body"), "timeout": 1})
    assert decision.results[0].status == "timeout" and decision.is_empty


async def test_body_over_1_mib_is_cut_off_and_an_error(tmp_path: Path, receiver: Receiver) -> None:
    decision = await dispatch(tmp_path, {"url": receiver.url("/big")})
    assert decision.results[0].status == "error" and "limit" in (decision.results[0].message or "")


async def test_chunked_answers_are_read_and_capped_without_a_content_length(tmp_path: Path, receiver: Receiver) -> None:
    decision = await dispatch(tmp_path, {"url": receiver.url("/chunked/deny")})
    assert decision.permission == "deny"
    decision = await dispatch(tmp_path, {"url": receiver.url("/chunked/big")})
    [result] = decision.results
    assert result.status == "error" and "exceeds 1048576 bytes; cut off" in (result.message or ""), result.message


async def test_connections_are_reused_after_empty_and_json_answers(tmp_path: Path, receiver: Receiver) -> None:
    gw = gateway_for(tmp_path, {"type": "http", "url": receiver.url("/answer/empty")})
    async with gw:
        for _ in range(3):
            assert (await gw.dispatch(EVENT)).results[0].status == "ok"
    gw = gateway_for(tmp_path, {"type": "http", "url": receiver.url("/answer/deny")})
    async with gw:
        for _ in range(3):
            assert (await gw.dispatch(EVENT)).permission == "deny"
    ports = [call.peer_port for call in receiver.calls]
    assert len(ports) == 6 and len(set(ports[:3])) == 1 and len(set(ports[3:])) == 1, ports


async def test_redirects_are_not_followed(tmp_path: Path, receiver: Receiver) -> None:
    decision = await dispatch(tmp_path, {"url": receiver.url("/redirect")})
    assert decision.results[0].status == "error" and "HTTP 307" in (decision.results[0].message or "")
    assert receiver.calls_to("/answer/deny") == []


async def test_connection_closed_without_answer_is_an_error_and_not_retried(tmp_path: Path) -> None:
    with ClosingServer() as server:
        decision = await dispatch(tmp_path, {"url": f"http://127.0.0.1:{server.port}/hook", "retries": 3})
    [result] = decision.results
    assert result.status == "error" and "closed the connection without an answer" in (result.message or "")
    assert server.accepted == 1


async def test_connection_refused_is_retried_then_an_error(tmp_path: Path) -> None:
    with ClosingServer() as server:
        port = server.port
    decision = await dispatch(tmp_path, {"url": f"http://127.0.0.1:{port}/hook", "retries": 1})
    [result] = decision.results
    assert result.status == "error" and "cannot connect" in (result.message or "") and result.meta["attempts"] == 2


# ---------------------------------------------------------------------------- signing and interpolation


async def test_signature_verifies_with_standardwebhooks(
    tmp_path: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOOK_SECRET", SECRET)
    decision = await dispatch(tmp_path, {"url": receiver.url("/signed"), "signingSecretEnv": "HOOK_SECRET"})
    [call] = receiver.calls
    assert decision.additional_context == [f"verified {call.headers['webhook-id']}"]
    assert call.headers["webhook-signature"].startswith("v1,")


async def test_signature_is_fresh_on_every_retry(
    tmp_path: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOOK_SECRET", SECRET)
    decision = await dispatch(tmp_path, {"url": receiver.url("/flaky/502"), "signingSecretEnv": "HOOK_SECRET"})
    from standardwebhooks import Webhook

    calls = receiver.calls_to("/flaky/502")
    assert decision.permission == "deny" and len(calls) == 2
    for call in calls:
        Webhook(SECRET).verify(call.body, call.headers)  # raises when the signature does not match


async def test_wrong_or_missing_secret_fails(
    tmp_path: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOOK_SECRET", "whsec_" + base64.b64encode(b"another secret, 24 bytes").decode())
    decision = await dispatch(tmp_path, {"url": receiver.url("/signed"), "signingSecretEnv": "HOOK_SECRET"})
    assert "HTTP 401" in (decision.results[0].message or "")
    monkeypatch.delenv("HOOK_SECRET")
    decision = await dispatch(
        tmp_path, {"url": receiver.url("/signed"), "signingSecretEnv": "HOOK_SECRET", "failClosed": True}
    )
    assert decision.permission == "deny" and "HOOK_SECRET, which is not set" in (decision.permission_reason or "")


async def test_headers_and_url_interpolate_allowed_variables(
    tmp_path: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOOK_PORT", str(receiver.port))
    monkeypatch.setenv("HOOK_TOKEN", "t0ken")
    decision = await dispatch(
        tmp_path,
        {
            "url": "http://127.0.0.1:${HOOK_PORT}/answer/empty",
            "headers": {"Authorization": "Bearer $HOOK_TOKEN", "X-Static": "plain"},
            "allowedEnvVars": ["HOOK_PORT", "HOOK_TOKEN"],
        },
    )
    assert decision.results[0].status == "ok"
    [call] = receiver.calls
    assert call.headers["authorization"] == "Bearer t0ken" and call.headers["x-static"] == "plain"


@pytest.mark.parametrize("fail_closed", [False, True])
async def test_an_unset_allowed_variable_is_not_sent_empty(
    tmp_path: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch, fail_closed: bool
) -> None:
    # found by a tester: validate said a failClosed handler with an unset $HOOK_TOKEN "would deny every
    # call", yet the request went out as "Bearer " and the webhook's answer (an allow) decided
    monkeypatch.delenv("HOOK_TOKEN", raising=False)
    handler = {
        "url": receiver.url("/answer/deny"),
        "headers": {"Authorization": "Bearer $HOOK_TOKEN"},
        "allowedEnvVars": ["HOOK_TOKEN"],
        "failClosed": fail_closed,
    }
    decision = await dispatch(tmp_path, handler)
    [result] = decision.results
    assert result.status == "error" and not receiver.calls
    assert (
        result.message == "allowedEnvVars: $HOOK_TOKEN is not set, so the request would go out with it empty; not sent"
    )
    assert decision.permission == ("deny" if fail_closed else None)


# ---------------------------------------------------------------------------- SSRF guard


async def test_hostname_resolving_to_a_private_address_is_refused(tmp_path: Path, receiver: Receiver) -> None:
    # 127.0.0.2 is loopback but the name is not: a non-loopback name may not reach a non-public
    # address. (A broken guard would reach nothing beyond loopback.)
    resolver = StaticResolver({"hooks.corp.test": ["127.0.0.2"], "mapped.corp.test": ["::ffff:127.0.0.1"]})
    for name in ("hooks.corp.test", "mapped.corp.test"):
        decision = await dispatch(
            tmp_path, {"url": f"http://{name}:{receiver.port}/answer/deny", "retries": 3}, resolver=resolver
        )
        [result] = decision.results
        assert result.status == "error" and "refusing to connect" in (result.message or "")
        assert "allowPrivateNetworks" in (result.message or "") and result.meta["attempts"] == 1
    assert receiver.calls == [] and [h for h, _ in resolver.calls] == ["hooks.corp.test", "mapped.corp.test"]


async def test_allowed_private_name_connects_to_the_checked_ip_with_the_names_host_header(
    tmp_path: Path, receiver: Receiver
) -> None:
    resolver = StaticResolver({"hooks.corp.test": ["127.0.0.1"]})
    decision = await dispatch(
        tmp_path,
        {"url": f"http://hooks.corp.test:{receiver.port}/answer/deny", "allowPrivateNetworks": True},
        resolver=resolver,
    )
    assert decision.permission == "deny"
    [call] = receiver.calls
    assert call.headers["host"] == f"hooks.corp.test:{receiver.port}"
    assert resolver.calls == [("hooks.corp.test", receiver.port)]


async def test_name_is_resolved_once_per_connection_so_rebinding_cannot_switch_the_target(
    tmp_path: Path, receiver: Receiver
) -> None:
    class Rebinding(StaticResolver):
        async def __call__(self, host: str, port: int) -> list[str]:
            answers = await super().__call__(host, port)
            self.table[host] = ["127.0.0.3"]  # every later lookup would point elsewhere
            return answers

    resolver = Rebinding({"hooks.corp.test": ["127.0.0.1"]})
    gw = gateway_for(
        tmp_path,
        {"type": "http", "url": f"http://hooks.corp.test:{receiver.port}/answer/empty", "allowPrivateNetworks": True},
    )
    gw.context.get_resource(CLIENT_RESOURCE, lambda: make_client(resolver), close_client)
    async with gw:
        for _ in range(3):
            assert (await gw.dispatch(EVENT)).results[0].status == "ok"
    assert len(receiver.calls) == 3 and len(resolver.calls) == 1  # one pooled connection to the checked IP


async def test_tls_uses_the_name_for_sni_and_the_certificate_check(tmp_path: Path) -> None:
    import ssl

    pytest.importorskip("cryptography")
    from tests.fakes.webhooks import self_signed

    certfile, keyfile = self_signed(str(tmp_path), "hooks.corp.test")
    trust = ssl.create_default_context(cafile=certfile)
    resolver = StaticResolver({"hooks.corp.test": ["127.0.0.1"], "other.corp.test": ["127.0.0.1"]})
    with Receiver(tls=(certfile, keyfile)) as receiver:
        for name, ok in (("hooks.corp.test", True), ("other.corp.test", False)):
            gw = gateway_for(
                tmp_path, {"type": "http", "url": receiver.url("/answer/deny", host=name), "allowPrivateNetworks": True}
            )
            gw.context.get_resource(CLIENT_RESOURCE, lambda: make_client(resolver, trust), close_client)
            async with gw:
                decision = await gw.dispatch(EVENT)
            if ok:
                assert decision.permission == "deny"
            else:
                assert "certificate" in (decision.results[0].message or "").lower()
        [call] = receiver.calls  # the mismatched name never got past the handshake
        assert call.headers["host"] == f"hooks.corp.test:{receiver.port}"


async def test_literal_private_ip_is_refused_at_delivery_without_a_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The variable is set only after the config loaded, so the load-time check could not see the address:
    # the handler refuses it by the very rule validate applies (handlers.netguard.host_problem), before
    # any connection is tried.
    for address in ("10.1.2.3", "169.254.169.254", "[::ffff:10.0.0.1]"):
        monkeypatch.delenv("HOOK_HOST", raising=False)
        gw = gateway_for(
            tmp_path,
            {
                "type": "http",
                "url": "http://${HOOK_HOST}:9/hook",
                "allowedEnvVars": ["HOOK_HOST"],
                "retries": 3,
                "timeout": 5,
            },
        )
        monkeypatch.setenv("HOOK_HOST", address)
        async with gw:
            [result] = (await gw.dispatch(EVENT)).results
        assert result.status == "error" and "SSRF guard refuses it" in (result.message or ""), result.message
        assert "attempts" not in result.meta and result.duration_ms < 2000  # nothing was sent


async def test_literal_loopback_is_allowed_without_opt_in(tmp_path: Path, receiver: Receiver) -> None:
    decision = await dispatch(tmp_path, {"url": receiver.url("/answer/empty", host="localhost")})
    assert decision.results[0].status == "ok"


# ---------------------------------------------------------------------------- async and run mode


async def test_async_delivery_runs_in_the_background_and_cannot_decide(tmp_path: Path, receiver: Receiver) -> None:
    gw = gateway_for(tmp_path, {"type": "http", "url": receiver.url("/hold"), "async": True})
    async with gw:
        decision = await gw.dispatch(EVENT)
        assert decision.results[0].status == "skipped" and decision.is_empty
        receiver.release.set()
    assert receiver.done == ["/hold"]  # aclose drained the background delivery


def test_hookgate_run_answers_before_an_async_delivery_finishes(tmp_path: Path, receiver: Receiver) -> None:
    config = write_config(tmp_path, {"type": "http", "url": receiver.url("/hold"), "async": True})
    proc = run_hookgate(["run", "--config", config], EVENT, timeout=20)
    assert (proc.returncode, proc.stdout) == (0, "")
    assert receiver.done == []  # the receiver is still holding the delivery: run did not wait
    receiver.release.set()
    wait_for(lambda: receiver.done == ["/hold"], what="the detached delivery to finish")
    assert receiver.calls[0].json() == EVENT


def test_hookgate_run_in_process_delivery(tmp_path: Path, receiver: Receiver) -> None:
    config = write_config(tmp_path, {"type": "http", "url": receiver.url("/answer/deny")})
    proc = run_hookgate(["run", "--config", config], EVENT)
    assert proc.returncode == 2 and json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_http_handler_imports_nothing_heavy_until_it_runs(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"type": "http", "url": "http://127.0.0.1:9/x", "if": "Bash(curl *)"})
    script = (
        "import sys, io; from gateway.cli import main; sys.stdin = io.TextIOWrapper(io.BytesIO("
        f"{json.dumps(EVENT).encode()!r})); code = main(['run', '-c', {config!r}]); "
        "print([m for m in ('aiohttp', 'httpx2', 'httpcore2', 'tenacity', 'pydantic') if m in sys.modules], code)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    assert run_hookgate(["run", "-c", config], EVENT).returncode == 0  # fills the config cache (JSON)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[] 0"


# ---------------------------------------------------------------------------- load-time checks


@pytest.mark.parametrize(
    ("handler", "problem"),
    [
        ({"url": "ftp://example.com/x"}, "scheme must be http or https"),
        ({"url": "http:///nohost"}, "has no host"),
        ({"url": "https://user:pw@example.com/"}, "must not carry credentials"),
        ({"url": "http://example.com:99999/"}, "not a valid URL"),
        ({"url": "http://10.1.2.3/hook"}, "10.1.2.3 is a private address"),
        ({"url": "http://169.254.169.254/latest"}, "link-local (cloud metadata)"),
        ({"url": "http://$HOST/hook"}, "$HOST is not listed in allowedEnvVars"),
        ({"url": "http://127.0.0.1/", "headers": {"X-Key": "${KEY}"}}, "headers.X-Key: $KEY is not listed"),
        ({"url": "http://127.0.0.1/", "headers": {"webhook-id": "x"}}, "set by hookgate itself"),
        ({"url": "http://127.0.0.1/", "retries": -1}, "retries"),
    ],
)
def test_validate_reports_bad_http_handlers(tmp_path: Path, handler: dict[str, Any], problem: str) -> None:
    config = write_config(tmp_path, {"type": "http", **handler})
    proc = run_hookgate(["validate", config])
    assert proc.returncode == 1 and problem in proc.stdout, proc.stdout


def test_validate_accepts_private_ip_with_opt_in(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {
            "type": "http",
            "url": "http://10.1.2.3/hook",
            "allowPrivateNetworks": True,
            "retries": 2,
            "signingSecretEnv": "S",
            "allowedEnvVars": ["T"],
            "headers": {"Authorization": "Bearer $T"},
        },
    )
    proc = run_hookgate(["validate", config])
    assert proc.returncode == 0, proc.stdout
