"""The ``llm`` config section (providers for the judgment handlers ``prompt`` and ``agent``), declared
through the handler registry (``handlers.base.SECTIONS``), so the config package never imports it by
name. Validated at load time into ``Compilation.llm``: ``{"default": name, "providers": {name: {...}}}``
(snake_case; see ``handlers.llm.base.provider_settings``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from handlers.base import ConfigSection, is_judgment_type
from handlers.llm.base import BUILTIN_PROVIDERS, DEFAULT_KEY_ENV, DEFAULT_MODEL, DEFAULT_STRUCTURED

if TYPE_CHECKING:
    from gateway.config.schema import Compilation


def _llm_models() -> tuple[Any, Any]:
    from typing import Literal

    from pydantic import BaseModel, ConfigDict, Field

    class Provider(BaseModel):
        """One ``llm.providers.<name>`` entry (camelCase in the file, snake_case once normalized)."""

        model_config = ConfigDict(extra="allow", populate_by_name=True)
        type: Literal["anthropic", "openai"] | None = None
        model: str | None = Field(None, min_length=1)
        base_url: str | None = Field(None, alias="baseUrl", pattern=r"^https?://")
        api_key_env: str | None = Field(None, alias="apiKeyEnv", min_length=1)
        key_required: bool = Field(True, alias="keyRequired")
        max_tokens: int = Field(1024, alias="maxTokens", gt=0, le=200_000)
        max_retries: int = Field(2, alias="maxRetries", ge=0, le=10)
        structured_output: Literal["tool", "json_schema", "json_object", "none"] | None = Field(
            None, alias="structuredOutput"
        )
        stream: bool = False
        headers: dict[str, str] = Field(default_factory=dict)

    class Llm(BaseModel):
        model_config = ConfigDict(extra="allow", populate_by_name=True)
        default: str | None = Field(None, min_length=1)
        providers: dict[str, dict[str, Any]] = Field(default_factory=dict)

    return Llm, Provider


class LlmSection(ConfigSection):
    """``llm``: providers by name, later files win; every judgment handler names one that exists."""

    keys: ClassVar[tuple[str, ...]] = ("llm",)

    def compile(self, compiler: Compilation, path: str, base_dir: str, doc: dict[str, Any]) -> None:
        """Validate one file's ``llm`` section and merge it (providers by name; later files win)."""
        raw = doc["llm"]
        if not isinstance(raw, dict):
            compiler.issues.append(f"{path}: llm: expected an object with 'default' and 'providers'")
            return
        llm_model, provider_model = _llm_models()
        section = compiler.validated(llm_model, raw, f"{path}: llm", known=["default", "providers"])
        if section is None:
            return
        llm = compiler.llm or {"default": "anthropic", "providers": {**BUILTIN_PROVIDERS}}
        if section.default is not None:
            llm["default"] = section.default
        for name, entry in section.providers.items():
            where = f"{path}: llm.providers.{name}"
            provider = compiler.validated(provider_model, entry, where, unknown="provider field")
            if provider is None:
                continue
            kind = provider.type or (name if name in DEFAULT_KEY_ENV else None)
            if kind is None:
                compiler.issues.append(
                    f"{where}.type: required (anthropic or openai; an OpenAI-compatible "
                    "server such as Ollama, vLLM or llama.cpp is type openai with a baseUrl)"
                )
                continue
            model = provider.model or DEFAULT_MODEL.get(kind)
            if model is None:
                compiler.issues.append(
                    f"{where}.model: required for an openai provider (e.g. gpt-5-mini, "
                    "or the model name your local server serves)"
                )
                continue
            if provider.stream and kind != "anthropic":
                compiler.issues.append(f"{where}.stream: only anthropic providers stream; remove it")
                continue
            structured = provider.structured_output or DEFAULT_STRUCTURED[kind]
            if structured == "json_object" and kind != "openai":
                compiler.issues.append(
                    f"{where}.structuredOutput: json_object is an OpenAI mode; use tool, json_schema or none"
                )
                continue
            llm["providers"][name] = {
                "type": kind,
                "model": model,
                "base_url": provider.base_url,
                "api_key_env": provider.api_key_env or DEFAULT_KEY_ENV[kind],
                "key_required": provider.key_required,
                "max_tokens": provider.max_tokens,
                "max_retries": provider.max_retries,
                "structured_output": structured,
                "stream": provider.stream,
                "headers": dict(provider.headers),
            }
        compiler.llm = llm

    def finish(self, compiler: Compilation) -> None:
        """Cross-file checks, run once every file is read: each judgment handler names a provider that
        exists. (A missing API key is checked by ``hookgate validate``, not here: the loaded config is
        cached and must not depend on the environment.)"""
        if not compiler.llm:
            compiler.llm = {"default": "anthropic", "providers": {**BUILTIN_PROVIDERS}}
        providers = compiler.llm["providers"]
        default = compiler.llm["default"]
        for groups in compiler.hooks.values():
            for group in groups:
                for handler in group["handlers"]:
                    if not is_judgment_type(handler["type"]):
                        continue
                    name = handler["options"].get("provider")
                    if name is None and default not in providers:
                        compiler.issues.append(
                            f"{handler['where']}: uses the default LLM provider, but "
                            f"llm.default names {default!r}, which is not in llm.providers "
                            f"({', '.join(sorted(providers))})"
                        )
                    elif name is not None and name not in providers:
                        compiler.issues.append(
                            f"{handler['where']}.provider: unknown LLM provider {name!r} "
                            f"(expected one of: {', '.join(sorted(providers))})"
                        )
