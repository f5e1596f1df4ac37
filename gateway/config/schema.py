"""The config's pydantic models (strict: a config says what it means) and the helpers every section's
validation shares: reading a JSON/YAML document, turning a ``ValidationError`` into ``file: path: what``
issues, and "did you mean" suggestions. ``gateway.config.compiler`` uses them to compile a file."""

from __future__ import annotations

import difflib
import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

KIRO_EVENTS = {
    "agentSpawn": "SessionStart",
    "userPromptSubmit": "UserPromptSubmit",
    "preToolUse": "PreToolUse",
    "postToolUse": "PostToolUse",
    "stop": "Stop",
}
MS_LIKE_TIMEOUT = 1000.0
GATEWAY_SECTIONS = ("hooks", "settings", "hooksConfig", "guards", "agents", "channels", "audit")
"""Top-level keys the config package reads itself; handler families add theirs (``ConfigSection.keys``)."""


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
    """``settings``: ``stopBlockLimit``; ``stateDir`` (the SQLite store and local files); ``store``: which
    state store (``sqlite``, ``sqlite:///DIR`` or ``postgresql://...``; ``$HOOKGATE_STORE_URL`` wins),
    checked here, named in errors without its password (``gateway.store.url``)."""

    stop_block_limit: int = Field(3, alias="stopBlockLimit", ge=0)
    state_dir: str | None = Field(None, alias="stateDir")
    read_only: bool = Field(False, alias="readOnly")
    store: str | None = None

    @field_validator("store")
    @classmethod
    def _store_url(cls, value: str | None) -> str | None:
        from gateway.store.url import parse

        parse(value)  # ValueError: one line, password redacted
        return value


COMMON_KEYS = {f.alias or name for name, f in CommonFields.model_fields.items()}


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


_YAML_NUMBER = re.compile(r"[-+]?[0-9]+(?:\.[0-9]*)?[eE][-+]?[0-9]+")
"""A number YAML 1.1 (PyYAML) takes for a string: an exponent without a dot or without a sign (``1e3``,
``1.5e3``; ``1.0e+3`` is a float)."""


def _yaml_float(text: str) -> str | None:
    """``text`` as YAML 1.1 reads a float (``1e3`` -> ``1.0e+3``), or None when it is no finite number."""
    import math

    if not math.isfinite(float(text)):
        return None
    mantissa, _, exponent = text.lower().partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    sign = "" if exponent[:1] in "+-" else "+"
    return f"{mantissa}e{sign}{exponent}"


def issues_under(where: str, exc: ValidationError) -> list[str]:
    """``pydantic_issues`` of ``exc`` as fields of ``where`` (``where.field: ...``); an error of the whole
    object (a model validator's: no field) as ``where: ...``."""
    return [f"{where}{i}" if i.startswith(":") else f"{where}.{i}" for i in pydantic_issues(exc, "")]


def pydantic_issues(exc: ValidationError, prefix: str) -> list[str]:
    """One ``prefix.path.inside: what was expected`` line per pydantic error."""
    issues = []
    for err in exc.errors():
        loc = list(err["loc"])
        path = _loc((prefix, *loc)) if prefix else _loc(tuple(loc))
        got = err.get("input")
        kind = type(got).__name__ if got is not None else "nothing"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] in (
            "string_type",
            "bool_type",
            "int_type",
            "float_type",
            "list_type",
            "dict_type",
            "model_type",
            "int_parsing",
            "float_parsing",
            "bool_parsing",
        ):
            msg = f"{msg}, got {kind}"
            if err["type"] in ("float_type", "int_type") and isinstance(got, str) and _YAML_NUMBER.fullmatch(got):
                written = _yaml_float(got)  # YAML 1.1 (PyYAML) reads 1e3 or 1.5e3 as text
                if written is not None:
                    msg += f" {got!r} (YAML reads an exponent without a dot and a sign as text: write {written})"
        elif err["type"] in ("literal_error", "enum") and isinstance(got, str | int | float):
            shown = repr(got) if len(repr(got)) <= 60 else f"{repr(got)[:57]}..."
            msg = f"{msg}, got {shown}"  # one of fixed choices: the bad value is a typo, never a secret
        issues.append(f"{path}: {msg}")
    return issues


def salvaged(model: Any, raw: Any) -> Any:
    """``model`` validated from ``raw`` without the top-level keys its validation failed on (so they take
    their defaults), or None when that fails too (a required field is wrong). Only for reporting: the
    failed keys are already reported, and the checks of the other fields can still run."""
    if not isinstance(raw, dict):
        return None
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        bad = {err["loc"][0] for err in exc.errors() if err["loc"]}
    try:
        return model.model_validate({k: v for k, v in raw.items() if k not in bad})
    except ValidationError:
        return None


def suggest(name: str, choices: list[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``choices``, else ``""``."""
    close = difflib.get_close_matches(name, choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


CommandCheck = Callable[[dict[str, Any]], tuple[list[str], list[str]]]
"""An extra check of a command handler's options: ``(problems, warnings)``, each line ``field: what``
(``gateway.cli.validate.hookgate_usage``: a hook that runs hookgate with words its parser refuses)."""


class Compilation(ABC):
    """What compiling config files collects: ``issues`` (errors), ``warnings``, ``broken`` (handlers that
    cannot run), the normalized ``hooks``, the sections' results (``mcp_servers``, ``llm``, ``settings``)
    and ``depends`` (other files read). The Gemini form and the sections write into it;
    ``gateway.config.compiler.Compiler`` reads the files."""

    def __init__(self) -> None:
        self.issues: list[str] = []
        self.warnings: list[str] = []
        self.broken: list[str] = []  # handlers whose load-time check failed (see HandlerSpec.problem)
        self.command_check: CommandCheck | None = None  # validate's extra check of command handlers
        self.hooks: dict[str, list[dict[str, Any]]] = {}
        self.ids: dict[str, int] = {}
        self.mcp_servers: dict[str, Any] = {}
        self.mcp_invalid: set[str] = set()  # server entries already reported as invalid (not "missing" again)
        self.depends: list[str] = []  # other files read (mcpConfig): the cache is stale when they change
        self.llm: dict[str, Any] = {}
        self.guards: dict[str, Any] = {}  # the default policy's tuning (gateway.config.guards)
        self.channels: dict[str, Any] = {}  # approval channels (gateway.approvals.config)
        self.settings: dict[str, Any] = Settings.model_validate({}).model_dump()
        from gateway.audit.config import defaults as audit_defaults

        self.audit: dict[str, Any] = audit_defaults()  # the audit section (gateway.audit.config)

    def validated(
        self, model: Any, raw: Any, where: str, *, unknown: str | None = "field", known: list[str] | None = None
    ) -> Any:
        """``model.model_validate(raw)``, or None after adding each problem to ``issues`` (prefixed with
        ``where``). Unknown keys become warnings, ``where.key: unknown <unknown>, ignored`` with a
        did-you-mean among ``known`` (default: the model's field names); ``unknown=None`` skips them."""
        try:
            value = model.model_validate(raw)
        except ValidationError as exc:
            self.issues.extend(issues_under(where, exc))
            return None
        if unknown is not None:
            choices = known if known is not None else sorted(f.alias or n for n, f in model.model_fields.items())
            for key in value.model_extra or {}:
                self.warnings.append(f"{where}.{key}: unknown {unknown}, ignored{suggest(key, choices)}")
        return value

    @abstractmethod
    def add_group(self, event: str, where: str, base_dir: str, raw: Any, dialect: str) -> None:
        """Validate one matcher group of ``event`` (``raw``: Claude Code's group shape, from a ``dialect``
        config) and add it to ``hooks``; problems go to ``issues``."""
