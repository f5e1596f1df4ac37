"""OpenAI Chat Completions adapter (``openai`` 3.x SDK, ``AsyncOpenAI``), also for any
OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio, ...) through ``baseUrl`` (ending in
``/v1``).

- The client is built with ``max_retries=0`` (hookgate retries).
- Answer length: ``max_completion_tokens`` for api.openai.com (no ``baseUrl``), ``max_tokens`` for
  other servers (what OpenAI-compatible servers implement).
- Structured verdicts: ``json_schema`` mode sends ``response_format`` with a strict schema;
  ``json_object`` sends JSON mode; ``tool`` forces a ``submit_verdict`` function call; the text
  answer is parsed tolerantly in every mode. A ``refusal`` is a failed check.
- Transient: 429, 5xx, connection errors and timeouts.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import openai

from handlers.llm.base import Provider, ProviderSettings, ToolCall, ToolChoice, ToolDef, Turn

_FINISH = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


class OpenAIProvider(Provider):
    """``type: openai``."""

    type: ClassVar[str] = "openai"

    @classmethod
    def make_client(cls, settings: ProviderSettings, key: str) -> Any:
        kwargs: dict[str, Any] = {"api_key": key, "max_retries": 0, "default_headers": settings.headers or None}
        if settings.base_url:
            kwargs["base_url"] = settings.base_url
        return openai.AsyncOpenAI(**kwargs)

    async def _complete(
        self,
        *,
        model: str,
        system: str,
        messages: list[Any],
        tools: list[ToolDef],
        tool_choice: ToolChoice,
        max_tokens: int,
        schema: dict[str, Any] | None,
        timeout: float,
    ) -> Turn:
        body = ([{"role": "system", "content": system}] if system else []) + messages
        kwargs: dict[str, Any] = {"model": model, "messages": body, "timeout": timeout}
        kwargs["max_tokens" if self.settings.base_url else "max_completion_tokens"] = max_tokens
        if tools:
            kwargs["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
                }
                for t in tools
            ]
            if tool_choice == "any":
                kwargs["tool_choice"] = "required"
            elif tool_choice is not None:
                kwargs["tool_choice"] = {"type": "function", "function": {"name": tool_choice}}
        if schema is not None:
            if self.settings.structured_output == "json_object":
                kwargs["response_format"] = {"type": "json_object"}
            else:
                kwargs["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "verdict", "strict": True, "schema": schema},
                }
        completion = await self.client.chat.completions.create(**kwargs)
        if not completion.choices:
            return Turn(text="", calls=[], stop_reason="other", model=str(completion.model or model))
        choice = completion.choices[0]
        message = choice.message
        if getattr(message, "refusal", None):
            return Turn(text=str(message.refusal), calls=[], stop_reason="refusal", model=str(completion.model))
        calls: list[ToolCall] = []
        for call in message.tool_calls or []:
            function = getattr(call, "function", None)
            if function is None:
                continue
            try:
                args = json.loads(function.arguments or "{}")
            except ValueError:
                args = None
            ok = isinstance(args, dict)
            calls.append(
                ToolCall(
                    id=call.id,
                    name=function.name,
                    arguments=args if ok else None,
                    problem=None if ok else "arguments are not a JSON object",
                )
            )
        usage = completion.usage
        stop = _FINISH.get(choice.finish_reason or "stop", "other")
        if calls and stop == "end_turn":
            stop = "tool_use"
        return Turn(
            text=message.content or "",
            calls=calls,
            stop_reason=stop,
            model=str(completion.model or model),
            input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        )

    def user_message(self, text: str) -> Any:
        return {"role": "user", "content": text}

    def assistant_message(self, turn: Turn) -> Any:
        message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
        if turn.calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.arguments or {})},
                }
                for c in turn.calls
            ]
        return message

    def tool_result_messages(self, results: list[tuple[ToolCall, str, bool]]) -> list[Any]:
        return [
            {"role": "tool", "tool_call_id": call.id, "content": f"Error: {output}" if is_error else output}
            for call, output, is_error in results
        ]

    def is_transient(self, exc: BaseException) -> bool:
        if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
            return True
        if isinstance(exc, openai.APIStatusError):
            return exc.status_code == 429 or exc.status_code >= 500
        return False
