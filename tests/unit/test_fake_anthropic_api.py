"""The fake Messages API speaks the protocol the official SDK expects."""

from __future__ import annotations

import json
from collections.abc import Iterator

import anthropic
import httpx2 as httpx
import pytest

from tests.fakes.anthropic_api import (
    FakeAnthropic,
    bash,
    delayed,
    error,
    text,
    tool_results,
    tool_use,
    verdict,
)


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def _client(fake: FakeAnthropic, **kwargs: object) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=fake.base_url, api_key="sk-test", max_retries=0, **kwargs)  # type: ignore[arg-type]


def _ask(client: anthropic.Anthropic, **kwargs: object) -> anthropic.types.Message:
    return client.messages.create(  # type: ignore[call-overload, no-any-return]
        model="claude-haiku-4-5", max_tokens=100, messages=[{"role": "user", "content": "hi"}], **kwargs
    )


def test_non_streaming_text_and_request_log(fake: FakeAnthropic) -> None:
    fake.script(text("hello there"))
    message = _ask(_client(fake), system="be brief")
    assert [b.type for b in message.content] == ["text"]
    assert message.content[0].text == "hello there"  # type: ignore[union-attr]
    assert message.stop_reason == "end_turn"
    (request,) = fake.message_requests
    assert request.kind == "scripted"
    assert request.api_key == "sk-test"
    assert request.body["system"] == "be brief"
    assert fake.pending == 0


def test_streaming_tool_use_is_reassembled_by_the_sdk(fake: FakeAnthropic) -> None:
    command = "rm -rf /tmp/x && echo " + "long " * 30
    fake.script(bash(command))
    with _client(fake).messages.stream(
        model="m", max_tokens=10, messages=[{"role": "user", "content": "go"}]
    ) as stream:
        events = [event.type for event in stream]
        message = stream.get_final_message()
    assert events[0] == "message_start"
    assert "input_json" in events
    block = message.content[0]
    assert block.type == "tool_use"
    assert block.name == "Bash"
    assert block.input == {"command": command, "description": "run a shell command"}
    assert message.stop_reason == "tool_use"


def test_text_plus_tool_use_streaming(fake: FakeAnthropic) -> None:
    fake.script(tool_use("Read", {"path": "/etc/hosts"}, preamble="let me look"))
    with _client(fake).messages.stream(model="m", max_tokens=10, messages=[{"role": "user", "content": "x"}]) as s:
        message = s.get_final_message()
    assert [b.type for b in message.content] == ["text", "tool_use"]


def test_bearer_auth_and_beta_query_and_system_role(fake: FakeAnthropic) -> None:
    fake.script(verdict(False, "destructive"))
    body = {
        "model": "m",
        "max_tokens": 5,
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "system", "content": "mid-conversation system note"},
        ],
    }
    headers = {"authorization": "Bearer tok", "anthropic-version": "2023-06-01"}
    response = httpx.post(f"{fake.base_url}/v1/messages?beta=true", json=body, headers=headers)
    assert response.status_code == 200
    assert json.loads(response.json()["content"][0]["text"]) == {"ok": False, "reason": "destructive"}
    assert fake.requests[0].query == {"beta": "true"}


def test_missing_or_wrong_auth_is_rejected() -> None:
    with FakeAnthropic(api_key="right") as fake:
        assert httpx.post(f"{fake.base_url}/v1/messages", json={}).status_code == 401
        with pytest.raises(anthropic.AuthenticationError):
            _ask(anthropic.Anthropic(base_url=fake.base_url, api_key="wrong", max_retries=0))


def test_callable_script_items_and_responder(fake: FakeAnthropic) -> None:
    fake.script(lambda body: text(f"{len(body['messages'])} message(s)"))
    assert _ask(_client(fake)).content[0].text == "1 message(s)"  # type: ignore[union-attr]
    fake.responder = lambda body: text("from responder")
    assert _ask(_client(fake)).content[0].text == "from responder"  # type: ignore[union-attr]


def test_exhausted_script_and_side_calls_use_the_fallback(fake: FakeAnthropic) -> None:
    fake.script(text("scripted"))
    cli = _client(fake, default_headers={"user-agent": "claude-cli/2.1.197 (external, sdk-cli)"})
    assert _ask(cli).content[0].text == "ok"  # type: ignore[union-attr]  # no tools: a side call
    assert fake.pending == 1
    assert _ask(_client(fake)).content[0].text == "scripted"  # type: ignore[union-attr]
    assert _ask(_client(fake)).content[0].text == "ok"  # type: ignore[union-attr]
    assert [r.kind for r in fake.message_requests] == ["side", "scripted", "exhausted"]


def test_errors_and_delays(fake: FakeAnthropic) -> None:
    fake.script(error(529), delayed(text("late"), 2.0))
    with pytest.raises(anthropic.APIStatusError) as caught:
        _ask(_client(fake))
    assert caught.value.status_code == 529
    with pytest.raises(anthropic.APITimeoutError):
        _ask(_client(fake, timeout=0.3))


def test_count_tokens_models_preflight_and_unknown(fake: FakeAnthropic) -> None:
    client = _client(fake)
    counted = client.messages.count_tokens(model="m", messages=[{"role": "user", "content": "hi"}])
    assert counted.input_tokens > 0
    assert [m.id for m in client.models.list()][:1] == ["claude-opus-4-8"]
    assert httpx.head(fake.base_url + "/").status_code == 200
    assert httpx.get(f"{fake.base_url}/v1/nope", headers={"x-api-key": "k"}).status_code == 404
    assert fake.pending == 0
    assert {r.kind for r in fake.requests} == {"count_tokens", "models", "preflight", "other"}


def test_tool_results_helper() -> None:
    body = {
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "no"}]},
        ]
    }
    assert [r["tool_use_id"] for r in tool_results(body)] == ["t1"]
