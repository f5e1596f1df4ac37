"""Provider settings, API keys, and the small provider base the judgment handlers talk to.

Settings come from the config's ``llm`` section, normalized by ``handlers.llm.section``::

    llm:
      default: anthropic                      # provider used when a handler names none
      providers:
        anthropic: {type: anthropic, model: claude-haiku-4-5}          # built in
        local: {type: openai, model: qwen3, baseUrl: http://127.0.0.1:11434/v1, keyRequired: false}

A ``Provider`` wraps one SDK client (``anthropic.AsyncAnthropic`` or ``openai.AsyncOpenAI``, built
with ``max_retries=0``) and exposes one provider-neutral call, ``complete()``: a system prompt,
messages, optional tools, optional structured output -> a ``Turn`` (text, tool calls, stop reason,
tokens). hookgate owns the retries: tenacity retries 429, 5xx and connection errors with
exponential backoff and jitter (``Retry-After`` honoured up to 10 s), for at most
``maxRetries + 1`` attempts and never past the handler's deadline (``stop_before_delay``).

The SDKs are imported only by ``get_provider`` (in a worker thread, so a slow ``import anthropic``
does not stall other handlers under ``hookgate serve``); this module itself is cheap to import.
Clients are shared per provider name through ``ctx.get_resource`` and closed with the context.
"""

from __future__ import annotations

import os
import random
import sys
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from gateway.errors import HandlerError, HandlerTimeout

if TYPE_CHECKING:
    from gateway.config.specs import RuntimeConfig
    from gateway.context import RunContext

ToolChoice = str | None
"""``None``: the model may answer in text; ``"any"``: it must call some tool; a tool name: that tool."""
Structured = Literal["tool", "json_schema", "json_object", "none"]

PROVIDER_MODULES = {
    "anthropic": "handlers.llm.anthropic:AnthropicProvider",
    "openai": "handlers.llm.openai:OpenAIProvider",
}
DEFAULT_MODEL = {"anthropic": "claude-haiku-4-5"}
"""Model used when a provider names none (an openai provider must name its model)."""
DEFAULT_KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
DEFAULT_STRUCTURED: dict[str, Structured] = {"anthropic": "tool", "openai": "json_schema"}
BUILTIN_PROVIDERS: dict[str, dict[str, Any]] = {
    "anthropic": {
        "type": "anthropic",
        "model": DEFAULT_MODEL["anthropic"],
        "base_url": None,
        "api_key_env": DEFAULT_KEY_ENV["anthropic"],
        "key_required": True,
        "max_tokens": 1024,
        "max_retries": 2,
        "structured_output": "tool",
        "stream": False,
        "headers": {},
    },
}
"""Providers every config has, normalized (a config may redefine them by name)."""
PLACEHOLDER_KEY = "hookgate-no-key"
"""Sent when ``keyRequired: false`` and no key is set (the SDKs refuse an empty key)."""
MAX_RETRY_AFTER = 10.0
"""Longest ``Retry-After`` (seconds) hookgate waits for; the handler deadline caps it further."""


@dataclass(frozen=True, slots=True)
class ProviderSettings:
    """One provider, normalized. ``max_tokens`` caps each answer; ``max_retries`` counts retries
    after the first attempt; ``structured_output`` is how a verdict is requested (``tool``: a forced
    tool call; ``json_schema``: Anthropic ``output_config`` / OpenAI ``response_format``;
    ``json_object``: OpenAI JSON mode; ``none``: plain text, parsed tolerantly)."""

    name: str
    type: str
    model: str
    base_url: str | None = None
    api_key_env: str = "ANTHROPIC_API_KEY"
    key_required: bool = True
    max_tokens: int = 1024
    max_retries: int = 2
    structured_output: Structured = "tool"
    stream: bool = False
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, name: str, data: dict[str, Any]) -> ProviderSettings:
        kind = str(data.get("type") or name)
        return cls(
            name=name,
            type=kind,
            model=str(data.get("model") or DEFAULT_MODEL.get(kind, "")),
            base_url=data.get("base_url"),
            api_key_env=str(data.get("api_key_env") or DEFAULT_KEY_ENV.get(kind, "")),
            key_required=bool(data.get("key_required", True)),
            max_tokens=int(data.get("max_tokens") or 1024),
            max_retries=int(data.get("max_retries", 2)),
            structured_output=data.get("structured_output") or DEFAULT_STRUCTURED.get(kind, "none"),
            stream=bool(data.get("stream", False)),
            headers=dict(data.get("headers") or {}),
        )


def provider_settings(llm: dict[str, Any], name: str | None) -> ProviderSettings:
    """The settings of provider ``name`` (None: ``llm.default``). Raises HandlerError if unknown."""
    providers: dict[str, Any] = {**BUILTIN_PROVIDERS, **(llm.get("providers") or {})}
    chosen = name or llm.get("default") or "anthropic"
    if chosen not in providers:
        raise HandlerError(f"unknown LLM provider {chosen!r} (configured: {', '.join(sorted(providers))})")
    return ProviderSettings.from_dict(chosen, providers[chosen])


def api_key(settings: ProviderSettings) -> str:
    """The key from ``$<apiKeyEnv>``. Raises HandlerError when it is required and unset."""
    key = os.environ.get(settings.api_key_env, "").strip()
    if key:
        return key
    if settings.key_required:
        raise HandlerError(f"LLM provider {settings.name!r} needs an API key: ${settings.api_key_env} is not set")
    return PLACEHOLDER_KEY


def key_problems(config: RuntimeConfig) -> list[str]:
    """One line per prompt/agent handler whose provider is unknown or lacks its API key
    (``hookgate validate`` reports these; at event time they are a failed, non-blocking check)."""
    from handlers.base import is_judgment_type

    problems: list[str] = []
    for groups in config.hooks.values():
        for group in groups:
            for spec in group.handlers:
                if not is_judgment_type(spec.type):
                    continue
                try:
                    settings = provider_settings(config.llm, spec.options.get("provider"))
                except HandlerError as exc:
                    problems.append(f"{spec.where}.provider: {exc}")
                    continue
                if settings.key_required and not os.environ.get(settings.api_key_env, "").strip():
                    problems.append(
                        f"{spec.where}: LLM provider {settings.name!r} needs an API key in "
                        f"${settings.api_key_env}, which is not set (export it, point "
                        f"llm.providers.{settings.name}.apiKeyEnv at another variable, or set "
                        "keyRequired: false for a local server that needs none)"
                    )
    return problems


# ---------------------------------------------------------------------------- neutral shapes


@dataclass(frozen=True, slots=True)
class ToolDef:
    """A tool offered to the model: ``parameters`` is a JSON schema of its arguments object."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(slots=True)
class ToolCall:
    """A tool call from the model. ``arguments`` is None when the model sent something that is not a
    JSON object (``problem`` says what)."""

    id: str
    name: str
    arguments: dict[str, Any] | None
    problem: str | None = None


@dataclass(slots=True)
class Turn:
    """One model answer. ``stop_reason``: end_turn | tool_use | max_tokens | refusal | other."""

    text: str
    calls: list[ToolCall]
    stop_reason: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(slots=True)
class Usage:
    """What a handler spent: requests, attempts (retries included), tokens, time in the API (ms)."""

    provider: str
    model: str
    requests: int = 0
    attempts: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    api_ms: float = 0.0

    def add(self, turn: Turn, elapsed_ms: float) -> None:
        self.requests += 1
        self.input_tokens += turn.input_tokens
        self.output_tokens += turn.output_tokens
        self.api_ms += elapsed_ms
        if turn.model:
            self.model = turn.model

    def meta(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "tokens_in": self.input_tokens,
            "tokens_out": self.output_tokens,
            "requests": self.requests,
            "attempts": self.attempts,
            "latency_ms": round(self.api_ms, 1),
        }


# ---------------------------------------------------------------------------- the provider base


class Provider(ABC):
    """One configured provider with its SDK client. Subclasses adapt one API."""

    type: ClassVar[str]

    def __init__(self, settings: ProviderSettings, client: Any) -> None:
        self.settings = settings
        self.client = client

    # --- what a subclass implements
    @classmethod
    @abstractmethod
    def make_client(cls, settings: ProviderSettings, key: str) -> Any:
        """Build the SDK client (``max_retries=0``: retries are hookgate's)."""

    @abstractmethod
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
        """One request. ``schema``: ask for a JSON object of this schema (json_schema/json_object modes)."""

    @abstractmethod
    def user_message(self, text: str) -> Any:
        """A user message in the API's shape."""

    @abstractmethod
    def assistant_message(self, turn: Turn) -> Any:
        """The model's own turn, replayed in the next request."""

    @abstractmethod
    def tool_result_messages(self, results: list[tuple[ToolCall, str, bool]]) -> list[Any]:
        """Messages carrying ``(call, output, is_error)`` results back to the model."""

    @abstractmethod
    def is_transient(self, exc: BaseException) -> bool:
        """True for 429, 5xx and connection errors (retried)."""

    async def aclose(self) -> None:
        await self.client.close()

    # --- shared
    def describe_error(self, exc: BaseException) -> str:
        """One line naming the provider and what went wrong."""
        status = getattr(exc, "status_code", None)
        if status is not None:
            detail = getattr(exc, "api_message", None) or _body_message(getattr(exc, "body", None)) or ""
            return f"LLM provider {self.settings.name!r}: HTTP {status}{': ' + detail if detail else ''}"[:500]
        name = type(exc).__name__
        if "Timeout" in name:
            return f"LLM provider {self.settings.name!r}: request timed out"
        if "Connection" in name:
            where = self.settings.base_url or "the default endpoint"
            cause = exc.__cause__ or exc.__context__
            extra = f" ({type(cause).__name__}: {cause})" if cause else ""
            return f"LLM provider {self.settings.name!r}: cannot connect to {where}{extra}"[:500]
        text = str(exc).splitlines()[0] if str(exc) else ""
        return f"LLM provider {self.settings.name!r}: {name}{': ' + text if text else ''}"[:500]

    async def complete(
        self,
        *,
        deadline: float,
        usage: Usage,
        model: str,
        system: str,
        messages: list[Any],
        tools: list[ToolDef] | None = None,
        tool_choice: ToolChoice = None,
        max_tokens: int | None = None,
        schema: dict[str, Any] | None = None,
    ) -> Turn:
        """One model turn with hookgate's retries, within ``deadline`` (a ``time.monotonic()`` value).

        Raises HandlerError (with ``usage.meta()``) when the API fails for good or the model refuses,
        HandlerTimeout when the deadline has passed before a request could start.
        """
        if deadline - time.monotonic() <= 0:
            raise HandlerTimeout("no time left for an LLM request", usage.meta())

        async def attempt() -> Turn:
            usage.attempts += 1
            started = time.perf_counter()
            # The SDK's own timeout sits just past the deadline: the handler's deadline (asyncio) is
            # what ends a slow request, cleanly and with a "timeout" status.
            turn = await self._complete(
                model=model,
                system=system,
                messages=messages,
                tools=tools or [],
                tool_choice=tool_choice,
                max_tokens=max_tokens or self.settings.max_tokens,
                schema=schema,
                timeout=max(0.5, deadline - time.monotonic()) + 1.0,
            )
            usage.add(turn, (time.perf_counter() - started) * 1000)
            return turn

        try:
            turn = await attempt()  # the common case: no retry machinery on the hot path
        except Exception as exc:
            if not self.is_transient(exc) or self.settings.max_retries <= 0:
                raise HandlerError(self.describe_error(exc), usage.meta()) from None
            turn = await self._retry(attempt, exc, deadline, usage)
        if turn.stop_reason == "refusal":
            raise HandlerError(f"LLM provider {self.settings.name!r}: the model refused to answer", usage.meta())
        return turn

    async def _retry(
        self, attempt: Callable[[], Awaitable[Turn]], first: Exception, deadline: float, usage: Usage
    ) -> Turn:
        """Attempts 2 .. ``maxRetries + 1`` after a transient failure, with tenacity: backoff with
        jitter before each, never sleeping past ``deadline``; the last error surfaces as HandlerError."""
        import asyncio

        from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, stop_before_delay

        delay = backoff(first, 1)
        if time.monotonic() + delay >= deadline:
            raise HandlerError(self.describe_error(first), usage.meta())
        await asyncio.sleep(delay)
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.settings.max_retries) | stop_before_delay(deadline - time.monotonic()),
            wait=lambda state: backoff(state.outcome.exception() if state.outcome else None, state.attempt_number + 1),
            retry=retry_if_exception(self.is_transient),
            reraise=True,
        )
        turn: Turn | None = None
        try:
            async for retry in retrying:
                with retry:
                    turn = await attempt()
        except Exception as exc:
            raise HandlerError(self.describe_error(exc), usage.meta()) from None
        assert turn is not None
        return turn


def backoff(exc: BaseException | None, failures: int) -> float:
    """Seconds to wait after the ``failures``-th failed attempt: exponential with jitter (0.25 s,
    0.5 s, 1 s, ... capped at 2 s, plus up to 0.25 s), or the server's ``Retry-After`` when longer
    (capped at ``MAX_RETRY_AFTER``)."""
    delay = min(0.25 * 2.0 ** (failures - 1) + random.uniform(0, 0.25), 2.0)
    after = retry_after(exc)
    return min(max(delay, after), MAX_RETRY_AFTER) if after is not None else delay


def retry_after(exc: BaseException | None) -> float | None:
    """Seconds from a ``retry-after-ms`` or ``retry-after`` (seconds) response header, if any."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        if headers.get("retry-after-ms"):
            return float(headers["retry-after-ms"]) / 1000
        if headers.get("retry-after"):
            return float(headers["retry-after"])
    except (TypeError, ValueError):
        return None
    return None


def _body_message(body: Any) -> str | None:
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(body.get("message"), str):
            return str(body["message"])
    return None


async def get_provider(ctx: RunContext, name: str | None) -> Provider:
    """The shared ``Provider`` for ``name`` (None: ``llm.default``), created on first use.

    Raises HandlerError for an unknown provider or a missing API key.
    """
    import asyncio
    import importlib

    settings = provider_settings(ctx.config.llm, name)
    resource = f"llm-provider:{settings.name}"
    key = api_key(settings)
    path = PROVIDER_MODULES.get(settings.type)
    if path is None:
        raise HandlerError(f"LLM provider {settings.name!r} has unknown type {settings.type!r}")
    module_name, _, attr = path.partition(":")
    module = sys.modules.get(module_name)
    if module is None or not hasattr(module, attr):
        # not imported yet, or still being imported by a concurrent event (sys.modules holds a partially
        # initialized module meanwhile): import_module waits for that import to finish
        module = await asyncio.to_thread(importlib.import_module, module_name)
    cls: type[Provider] = getattr(module, attr)

    async def close(provider: Provider) -> None:
        await provider.aclose()

    provider: Provider = ctx.get_resource(resource, lambda: cls(settings, cls.make_client(settings, key)), close)
    return provider
