"""A fake Gemini API (``generativelanguage`` v1beta shape) for driving the real Gemini CLI.

Routes: ``POST /{v1beta|v1|v1alpha}/models/{model}:streamGenerateContent`` (SSE with ``alt=sse``,
else a JSON array), ``:generateContent``, ``:countTokens``, ``:embedContent``,
``:batchEmbedContents``; ``GET /{ver}/models[/{model}]``. Anything else is logged and gets 404.

A request offering ``tools`` (function declarations) and no JSON response schema is a *main*
request: it takes the next scripted step. Requests with a JSON schema (the model router, the
next-speaker and loop checks) get an object built from the schema; other requests get
``side_text``. Neither consumes the script.

    with FakeGemini() as fake:
        fake.script(ToolCall("run_shell_command", {"command": "rm -r victim"}), "done")
        ... GOOGLE_GEMINI_BASE_URL=fake.base_url ...
        function_responses(fake.main_requests[1].json)  # what the CLI reported for the call
"""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from tests.fakes._scripted import (
    Answer,
    Calls,
    CustomToolCall,
    FakeModelServer,
    HttpError,
    JsonDict,
    Reply,
    Text,
    ToolCall,
    reply_calls,
)

__all__ = [
    "Calls",
    "FakeGemini",
    "HttpError",
    "Text",
    "ToolCall",
    "function_responses",
    "last_user_text",
    "tool_names",
]

_MODEL_PATH = re.compile(r"^/(v1beta|v1alpha|v1)/models/([^/:]+):([A-Za-z]+)$")
_MODELS_LIST = re.compile(r"^/(v1beta|v1alpha|v1)/models(?:/([^/:]+))?$")

# Values for schema fields the CLI's side calls ask for; anything else gets a type default.
_SCHEMA_HINTS: dict[str, Any] = {
    "next_speaker": "user",
    "complexity_score": 1,
    "unproductive_state_confidence": 0,
}


def tool_names(body: JsonDict) -> list[str]:
    names: list[str] = []
    for tool in body.get("tools") or []:
        for decl in tool.get("functionDeclarations") or []:
            names.append(str(decl.get("name")))
    return names


def function_responses(body: JsonDict) -> list[JsonDict]:
    """All ``functionResponse`` parts in the request's history, oldest first."""
    found: list[JsonDict] = []
    for turn in body.get("contents") or []:
        for part in turn.get("parts") or []:
            if isinstance(part, dict) and "functionResponse" in part:
                found.append(part["functionResponse"])
    return found


def last_user_text(body: JsonDict) -> str:
    """The text of the newest user turn that carries text (prompts, hook feedback)."""
    for turn in reversed(body.get("contents") or []):
        if turn.get("role") != "user":
            continue
        texts = [p["text"] for p in turn.get("parts") or [] if isinstance(p, dict) and "text" in p]
        if texts:
            return "\n".join(texts)
    return ""


def _schema_value(schema: Any, name: str = "") -> Any:
    if name in _SCHEMA_HINTS:
        return _SCHEMA_HINTS[name]
    if not isinstance(schema, dict):
        return None
    kind = str(schema.get("type", "object")).lower()
    if schema.get("enum"):
        return schema["enum"][0]
    if kind == "object":
        props = schema.get("properties") or {}
        return {key: _schema_value(sub, key) for key, sub in props.items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 0
    if kind == "boolean":
        return False
    return "ok"


class FakeGemini(FakeModelServer):
    api_name: ClassVar[str] = "gemini"

    def __init__(self, *args: Any, model_version: str = "gemini-2.5-flash", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.model_version = model_version

    # GOOGLE_GEMINI_BASE_URL takes the origin; the SDK appends /v1beta/models/...
    @property
    def base_url(self) -> str:
        return self.origin

    def route(
        self,
        method: str,
        path: str,
        query: dict[str, list[str]],
        headers: dict[str, str],
        body: Any,
    ) -> tuple[str, Reply | None, Answer]:
        match = _MODEL_PATH.match(path)
        if method == "POST" and match:
            model, verb = match.group(2), match.group(3)
            payload: JsonDict = body if isinstance(body, dict) else {}
            if verb in ("streamGenerateContent", "generateContent"):
                return self._generate(payload, model, stream=verb == "streamGenerateContent", query=query)
            if verb == "countTokens":
                return "side", None, Answer.json({"totalTokens": 100})
            if verb == "embedContent":
                return "side", None, Answer.json({"embedding": {"values": [0.0] * 8}})
            if verb == "batchEmbedContents":
                count = len(payload.get("requests") or [])
                return "side", None, Answer.json({"embeddings": [{"values": [0.0] * 8}] * count})
        listing = _MODELS_LIST.match(path)
        if method == "GET" and listing:
            info = {"name": f"models/{listing.group(2) or self.model_version}", "inputTokenLimit": 1_048_576}
            return "other", None, Answer.json(info if listing.group(2) else {"models": [info]})
        return "other", None, Answer.json({"error": {"code": 404, "message": f"no route {path}"}}, 404)

    def _generate(
        self, body: JsonDict, model: str, *, stream: bool, query: dict[str, list[str]]
    ) -> tuple[str, Reply | None, Answer]:
        config = body.get("generationConfig") or {}
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        kind = "main" if tool_names(body) and schema is None else "side"
        reply: Reply
        if kind == "main":
            reply = self._next_reply(body)
        elif schema is not None:
            reply = Text(json.dumps(_schema_value(schema)))
        else:
            reply = Text(self.side_text)
        if isinstance(reply, HttpError):
            err = {"error": {"code": reply.status, "message": reply.message, "status": "INTERNAL"}}
            return kind, reply, Answer.json(err, reply.status)
        response = self._response(reply, model)
        if not stream:
            return kind, reply, Answer.json(response)
        if query.get("alt") == ["sse"]:
            # One event per answer: the CLI joins streamed text chunks with " " in AfterAgent.
            return kind, reply, Answer.sse(f"data: {json.dumps(response)}\r\n\r\n")
        return kind, reply, Answer.json([response])

    def _response(self, reply: Reply, model: str) -> JsonDict:
        parts: list[JsonDict]
        if isinstance(reply, Text):
            parts = [{"text": reply.text}]
        else:
            parts = []
            for call in reply_calls(reply):
                if isinstance(call, CustomToolCall):
                    raise TypeError("Gemini has no custom (freeform) tool calls")
                fc: JsonDict = {"name": call.name, "args": dict(call.args)}
                if call.call_id:
                    fc["id"] = call.call_id
                parts.append({"functionCall": fc})
        return {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 5, "totalTokenCount": 105},
            "modelVersion": model,
        }
