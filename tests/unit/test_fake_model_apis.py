"""The fake Gemini and OpenAI Responses servers used by the e2e harness, checked without a CLI."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import openai

from tests.fakes.gemini_api import Calls, FakeGemini, HttpError, ToolCall, function_responses
from tests.fakes.openai_responses_api import CustomToolCall, FakeOpenAIResponses, tool_outputs

TOOLS_BODY: dict[str, Any] = {
    "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
    "tools": [{"functionDeclarations": [{"name": "run_shell_command"}]}],
}


def _post(url: str, body: dict[str, Any]) -> tuple[int, str]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _sse_payloads(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]


def test_gemini_script_side_calls_and_log() -> None:
    with FakeGemini() as fake:
        fake.script(
            ToolCall("run_shell_command", {"command": "ls"}),
            Calls((ToolCall("a", {}), ToolCall("b", {"x": 1}))),
            lambda body: f"saw {len(function_responses(body))} responses",
            HttpError(503, "busy"),
        )
        stream = f"{fake.base_url}/v1beta/models/m:streamGenerateContent?alt=sse"
        router = {
            "contents": [],
            "generationConfig": {
                "responseJsonSchema": {
                    "type": "object",
                    "properties": {"complexity_reasoning": {"type": "string"}, "complexity_score": {}},
                }
            },
        }

        _, first = _post(stream, TOOLS_BODY)
        _, side = _post(f"{fake.base_url}/v1beta/models/router:generateContent", router)
        _, second = _post(stream, TOOLS_BODY)
        answered = {**TOOLS_BODY, "contents": [{"role": "user", "parts": [{"functionResponse": {}}]}]}
        _, third = _post(stream, answered)
        status, _ = _post(stream, TOOLS_BODY)
        _, fifth = _post(stream, TOOLS_BODY)

        [chunk] = _sse_payloads(first)
        assert chunk["candidates"][0]["content"]["parts"] == [
            {"functionCall": {"name": "run_shell_command", "args": {"command": "ls"}}}
        ]
        router_answer = json.loads(json.loads(side)["candidates"][0]["content"]["parts"][0]["text"])
        assert router_answer == {"complexity_reasoning": "ok", "complexity_score": 1}
        assert len(_sse_payloads(second)[0]["candidates"][0]["content"]["parts"]) == 2
        assert _sse_payloads(third)[0]["candidates"][0]["content"]["parts"] == [{"text": "saw 1 responses"}]
        assert status == 503
        assert _sse_payloads(fifth)[0]["candidates"][0]["content"]["parts"] == [{"text": "done"}]
        assert fake.exhausted == 1 and fake.pending == 0
        assert [r.kind for r in fake.requests] == ["main", "side", "main", "main", "main", "main"]


def test_openai_responses_with_the_sdk() -> None:
    tools: list[Any] = [
        {"type": "function", "name": "exec_command", "parameters": {"type": "object", "properties": {}}}
    ]
    with FakeOpenAIResponses() as fake:
        fake.script(ToolCall("exec_command", {"cmd": "ls"}, call_id="call_1"), CustomToolCall("apply_patch", "P"))
        fake.respond_with(lambda body: f"{len(tool_outputs(body))} outputs")
        client = openai.OpenAI(base_url=fake.base_url, api_key="sk-test")

        with client.responses.stream(model="m", input="hi", tools=tools) as stream:
            call = stream.get_final_response().output[0]
        patch = client.responses.create(model="m", input="hi", tools=tools).output[0]
        answered: Any = [{"type": "function_call_output", "call_id": "call_1", "output": "x"}]
        with client.responses.stream(model="m", input=answered, tools=tools) as stream:
            text = stream.get_final_response().output_text
        side = client.responses.create(model="m", input="title please").output_text

        assert call.type == "function_call" and call.call_id == "call_1"
        assert json.loads(call.arguments) == {"cmd": "ls"}
        assert patch.type == "custom_tool_call" and patch.input == "P"
        assert text == "1 outputs"
        assert side == "ok"
        assert [r.kind for r in fake.requests] == ["main", "main", "main", "side"]
        assert fake.requests[0].headers["authorization"] == "***"
