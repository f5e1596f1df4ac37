"""The config's pydantic models (strict: a config says what it means) and the helpers every section's
validation shares: reading a JSON/YAML document, turning a ``ValidationError`` into ``file: path: what``
issues, and "did you mean" suggestions. ``gateway.config.compiler`` uses them to compile a file."""

from __future__ import annotations

import difflib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from gateway.errors import ConfigError

KIRO_EVENTS = {"agentSpawn": "SessionStart", "userPromptSubmit": "UserPromptSubmit",
               "preToolUse": "PreToolUse", "postToolUse": "PostToolUse", "stop": "Stop"}
MS_LIKE_TIMEOUT = 1000.0
GATEWAY_SECTIONS = ("hooks", "mcpServers", "mcpConfig", "llm", "settings", "hooksConfig")


class _Model(BaseModel):
    """Strict: a config says what it means (``timeout: "10"`` or ``true`` is an error, not a coercion)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, strict=True)


class CommonFields(_Model):
    """Fields every handler type accepts (Claude Code's, plus hookgate's ``id``, ``failClosed``,
    ``priority``, ``cacheTtl``). ``timeout`` is in seconds."""

    type: str
    if_: str | list[str] | None = Field(None, alias="if")
    timeout: float | None = Field(None, gt=0, allow_inf_nan=False)
    status_message: str | None = Field(None, alias="statusMessage")
    once: bool | None = None
    id: str | None = Field(None, min_length=1)
    fail_closed: bool = Field(False, alias="failClosed")
    priority: int = 0
    async_: bool = Field(False, alias="async")
    async_rewake: bool = Field(False, alias="asyncRewake")
    cache_ttl: float | None = Field(None, alias="cacheTtl", ge=0)

    @field_validator("timeout")
    @classmethod
    def _seconds(cls, value: float | None) -> float | None:
        if value is not None and value >= MS_LIKE_TIMEOUT:
            raise ValueError(f"timeout is in seconds: {value:g} s is {value / 60:.0f} minutes; "
                             f"did you mean {value / 1000:g}?")
        return value


class Group(_Model):
    matcher: str | None = None
    hooks: list[dict[str, Any]]
    sequential: bool = False


class KiroHook(_Model):
    command: str
    matcher: str | None = None
    timeout_ms: int | None = Field(None, gt=0)
    cache_ttl_seconds: float | None = Field(None, ge=0)
    max_output_size: int | None = Field(None, gt=0)


class Settings(_Model):
    stop_block_limit: int = Field(3, alias="stopBlockLimit", ge=0)
    state_dir: str | None = Field(None, alias="stateDir")


COMMON_KEYS = {f.alias or name for name, f in CommonFields.model_fields.items()}


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def pydantic_issues(exc: ValidationError, prefix: str) -> list[str]:
    """One ``prefix.path.inside: what was expected`` line per pydantic error."""
    issues = []
    for err in exc.errors():
        loc = [p for p in err["loc"] if p not in ("function-after[_seconds(), union[float,none]]",)]
        path = _loc((prefix, *loc)) if prefix else _loc(tuple(loc))
        got = err.get("input")
        kind = type(got).__name__ if got is not None else "nothing"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] in ("string_type", "bool_type", "int_type", "float_type", "list_type", "dict_type",
                           "model_type", "int_parsing", "float_parsing", "bool_parsing"):
            msg = f"{msg}, got {kind}"
        issues.append(f"{path}: {msg}")
    return issues


def read_document(path: str) -> Any:
    """Read a JSON or YAML file. Raises ConfigError naming the file and the line."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: config is not valid UTF-8") from None
    if path.endswith(".json") or text.lstrip().startswith("{"):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            if path.endswith(".json"):
                raise ConfigError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{path}{where}: invalid YAML: {problem}") from None


def suggest(name: str, choices: list[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``choices``, else ``""``."""
    close = difflib.get_close_matches(name, choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
