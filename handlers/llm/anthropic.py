"""Anthropic Messages API adapter (``anthropic`` 2.x SDK, ``AsyncAnthropic``).

- The client is built with ``max_retries=0`` (hookgate retries) and the provider's ``baseUrl``
  (the SDK appends ``/v1/messages``); the key goes out as ``Authorization: Bearer``.
- No sampling parameters are sent (``messages.create`` in 2.x has no ``temperature``).
- Structured verdicts: ``tool`` mode forces a ``submit_verdict`` tool call (``tool_choice``);
  ``json_schema`` mode sends ``output_config.format`` (constrained decoding); the text answer is
  parsed tolerantly either way.
- ``stream: true`` uses ``messages.stream()`` and its final message (same result, SSE transport).
- Transient: 429, 5xx (529 overloaded included), connection errors and timeouts.
"""

from __future__ import annotations

from typing import Any, ClassVar

import anthropic

from handlers.llm.base import Provider, ProviderSettings, ToolCall, ToolChoice, ToolDef, Turn


class AnthropicProvider(Provider):
    """``type: anthropic``."""

    type: ClassVar[str] = "anthropic"

    @classmethod
    def make_client(cls, settings: ProviderSettings, key: str) -> Any:
        return anthropic.AsyncAnthropic(
            api_key=key, base_url=settings.base_url, max_retries=0, default_headers=settings.headers or None
        )

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
        kwargs: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": messages, "timeout": timeout}
        if system:
            kwargs["system"] = system
        if tools:
            kwargs["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools
            ]
            if tool_choice == "any":
                kwargs["tool_choice"] = {"type": "any"}
            elif tool_choice is not None:
                kwargs["tool_choice"] = {"type": "tool", "name": tool_choice}
        if schema is not None:
            kwargs["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
        if self.settings.stream:
            async with self.client.messages.stream(**kwargs) as stream:
                message = await stream.get_final_message()
        else:
            message = await self.client.messages.create(**kwargs)
        texts: list[str] = []
        calls: list[ToolCall] = []
        for block in message.content:
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                args = block.input if isinstance(block.input, dict) else None
                calls.append(
                    ToolCall(
                        id=block.id,
                        name=block.name,
                        arguments=args,
                        problem=None if args is not None else "input is not a JSON object",
                    )
                )
        stop = message.stop_reason or "end_turn"
        usage = message.usage
        return Turn(
            text="".join(texts),
            calls=calls,
            stop_reason=stop if stop in ("end_turn", "tool_use", "max_tokens", "refusal") else "other",
            model=str(message.model or model),
            input_tokens=int(usage.input_tokens or 0),
            output_tokens=int(usage.output_tokens or 0),
        )

    def user_message(self, text: str) -> Any:
        return {"role": "user", "content": text}

    def assistant_message(self, turn: Turn) -> Any:
        content: list[dict[str, Any]] = []
        if turn.text.strip():
            content.append({"type": "text", "text": turn.text})
        content.extend({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments or {}} for c in turn.calls)
        return {"role": "assistant", "content": content or [{"type": "text", "text": "(no answer)"}]}

    def tool_result_messages(self, results: list[tuple[ToolCall, str, bool]]) -> list[Any]:
        return [
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": call.id, "content": output, "is_error": is_error}
                    for call, output, is_error in results
                ],
            }
        ]

    def is_transient(self, exc: BaseException) -> bool:
        if isinstance(exc, anthropic.APIConnectionError):  # includes APITimeoutError
            return True
        if isinstance(exc, anthropic.APIStatusError):
            return exc.status_code == 429 or exc.status_code >= 500
        return False
