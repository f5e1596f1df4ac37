"""A fake OpenAI Responses API (``POST /v1/responses``) for driving the real Codex CLI.

A request that offers ``tools`` is a *main* request and takes the next scripted step; any other
``/responses`` request (a title or summary side call, should a CLI make one) gets ``side_text``.
With ``"stream": true`` the answer is the SSE event sequence Codex parses
(``response.created`` ... ``response.output_item.done`` ... ``response.completed``), otherwise
one JSON response object. Other paths are logged and get 404.

    with FakeOpenAIResponses() as fake:
        fake.script(ToolCall("exec_command", {"cmd": "rm -r victim"}), "done")
        ... base_url = fake.base_url  (ends in /v1) ...
        tool_outputs(fake.main_requests[1].json)  # what Codex reported for the call
"""

from __future__ import annotations

import json
import time
import uuid
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
    sse_event,
)

__all__ = [
    "Calls",
    "CustomToolCall",
    "FakeOpenAIResponses",
    "HttpError",
    "Text",
    "ToolCall",
    "last_user_text",
    "tool_names",
    "tool_outputs",
]


def tool_names(body: JsonDict) -> list[str]:
    return [str(t.get("name") or t.get("type")) for t in body.get("tools") or []]


def tool_outputs(body: JsonDict) -> list[JsonDict]:
    """``function_call_output`` / ``custom_tool_call_output`` items in ``input``, oldest first."""
    return [
        item
        for item in body.get("input") or []
        if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output")
    ]


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [c.get("text", "") for c in content or [] if isinstance(c, dict)]
    return "\n".join(p for p in parts if p)


def last_user_text(body: JsonDict) -> str:
    """Text of the newest ``role: user`` message in ``input`` (the prompt or hook feedback)."""
    for item in reversed(body.get("input") or []):
        if isinstance(item, dict) and item.get("role") == "user":
            return _content_text(item.get("content"))
    return ""


def _new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:20]}"


class FakeOpenAIResponses(FakeModelServer):
    api_name: ClassVar[str] = "openai-responses"

    # Codex POSTs <base_url>/responses.
    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    def route(
        self,
        method: str,
        path: str,
        query: dict[str, list[str]],
        headers: dict[str, str],
        body: Any,
    ) -> tuple[str, Reply | None, Answer]:
        if method == "POST" and path.rstrip("/") in ("/v1/responses", "/responses"):
            payload: JsonDict = body if isinstance(body, dict) else {}
            kind = "main" if payload.get("tools") else "side"
            reply = self._next_reply(payload) if kind == "main" else Text(self.side_text)
            if isinstance(reply, HttpError):
                err = {"error": {"message": reply.message, "type": "server_error", "code": None}}
                return kind, reply, Answer.json(err, reply.status)
            model = str(payload.get("model") or "fake-model")
            if payload.get("stream"):
                return kind, reply, Answer.sse(self._stream(reply, model))
            return kind, reply, Answer.json(self._response(_new_id("resp"), model, self._items(reply)))
        return "other", None, Answer.json({"error": {"message": f"no route {method} {path}"}}, 404)

    # -- building the answer -------------------------------------------------------------------
    @staticmethod
    def _items(reply: Reply) -> list[JsonDict]:
        if isinstance(reply, Text):
            return [
                {
                    "type": "message",
                    "id": _new_id("msg"),
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
                }
            ]
        items: list[JsonDict] = []
        for call in reply_calls(reply):
            call_id = call.call_id or _new_id("call")
            if isinstance(call, ToolCall):
                items.append(
                    {
                        "type": "function_call",
                        "id": _new_id("fc"),
                        "status": "completed",
                        "name": call.name,
                        "call_id": call_id,
                        "arguments": json.dumps(dict(call.args)),
                    }
                )
            else:
                items.append(
                    {
                        "type": "custom_tool_call",
                        "id": _new_id("ctc"),
                        "status": "completed",
                        "name": call.name,
                        "call_id": call_id,
                        "input": call.input,
                    }
                )
        return items

    @staticmethod
    def _response(resp_id: str, model: str, output: list[JsonDict], status: str = "completed") -> JsonDict:
        return {
            "id": resp_id,
            "object": "response",
            "created_at": int(time.time()),
            "status": status,
            "model": model,
            "output": output,
            "usage": {
                "input_tokens": 100,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 5,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 105,
            },
        }

    def _stream(self, reply: Reply, model: str) -> str:
        resp_id = _new_id("resp")
        items = self._items(reply)
        seq = 0
        events: list[str] = []

        def emit(kind: str, **data: Any) -> None:
            nonlocal seq
            events.append(sse_event({"type": kind, "sequence_number": seq, **data}, event=kind))
            seq += 1

        emit("response.created", response=self._response(resp_id, model, [], status="in_progress"))
        for index, item in enumerate(items):
            item_id = item["id"]
            if item["type"] == "message":
                text = item["content"][0]["text"]
                emit(
                    "response.output_item.added",
                    output_index=index,
                    item={**item, "status": "in_progress", "content": []},
                )
                part = {"type": "output_text", "text": "", "annotations": []}
                emit(
                    "response.content_part.added",
                    item_id=item_id,
                    output_index=index,
                    content_index=0,
                    part=part,
                )
                emit(
                    "response.output_text.delta",
                    item_id=item_id,
                    output_index=index,
                    content_index=0,
                    delta=text,
                )
                emit(
                    "response.output_text.done",
                    item_id=item_id,
                    output_index=index,
                    content_index=0,
                    text=text,
                )
                emit(
                    "response.content_part.done",
                    item_id=item_id,
                    output_index=index,
                    content_index=0,
                    part={**part, "text": text},
                )
            elif item["type"] == "function_call":
                emit(
                    "response.output_item.added",
                    output_index=index,
                    item={**item, "status": "in_progress", "arguments": ""},
                )
                emit(
                    "response.function_call_arguments.delta",
                    item_id=item_id,
                    output_index=index,
                    delta=item["arguments"],
                )
                emit(
                    "response.function_call_arguments.done",
                    item_id=item_id,
                    output_index=index,
                    arguments=item["arguments"],
                )
            else:
                emit(
                    "response.output_item.added",
                    output_index=index,
                    item={**item, "status": "in_progress", "input": ""},
                )
                emit(
                    "response.custom_tool_call_input.delta",
                    item_id=item_id,
                    output_index=index,
                    delta=item["input"],
                )
                emit(
                    "response.custom_tool_call_input.done",
                    item_id=item_id,
                    output_index=index,
                    input=item["input"],
                )
            emit("response.output_item.done", output_index=index, item=item)
        emit("response.completed", response=self._response(resp_id, model, items))
        return "".join(events)
