"""The ``audit`` config section (pydantic; validated at load time, reported by ``hookgate validate``).

::

    audit:
      record: handled          # handled (default): events on which a handler ran | all | off (unquoted `off` too)
      sink: store              # store (default) | "jsonl:PATH" | a list of both; [] = no records (OTel only)
      redact: ["acme_[0-9a-f]{32}"]   # more secret patterns (Python regular expressions)
      keepDays: 30             # retention by age (days, > 0; null: keep forever)
      maxMB: 200               # retention by size (MB of record text in the store; null: no limit)
      maxValue: 4096           # characters a string keeps before it is truncated (with size and hash)
      chain: build-7           # this writer's hash chain name (default: the machine's host name)
      otel:                    # OpenTelemetry spans (needs hookgate[otel]); also on when
        endpoint: http://127.0.0.1:4318   # OTEL_EXPORTER_OTLP_ENDPOINT is set; `otel: true` = env only
        headers: {x-team: infra}
        serviceName: hookgate

Normalized form (what ``RuntimeConfig.audit`` holds, snake_case, JSON-safe): ``record``, ``sinks``
(list of ``"store"`` / ``"jsonl:/abs/path"``), ``redact``, ``keep_days``, ``max_mb``, ``max_value``,
``chain``, ``otel`` (None, or ``{"endpoint", "headers", "service_name"}``).
"""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


def defaults() -> dict[str, Any]:
    """The normalized section when a config has no ``audit`` key (a fresh dict)."""
    return {
        "record": "handled",
        "sinks": ["store"],
        "redact": [],
        "keep_days": 30.0,
        "max_mb": 200.0,
        "max_value": 4096,
        "chain": None,
        "otel": None,
    }


class OtelSection(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, strict=True)
    endpoint: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    service_name: str = Field("hookgate", alias="serviceName", min_length=1)

    @field_validator("endpoint")
    @classmethod
    def _endpoint(cls, value: str | None) -> str | None:
        if value is not None and not value.lower().startswith(("http://", "https://")):
            raise ValueError(
                f"{value[:100]!r}: expected the collector's http:// or https:// base URL (http://127.0.0.1:4318)"
            )
        return value


class AuditSection(BaseModel):
    """``audit`` as written in a config file (camelCase keys; unknown keys are warnings)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, strict=True)
    record: Literal["handled", "all", "off"] = "handled"
    sink: str | list[str] = "store"
    redact: list[str] = Field(default_factory=list)
    keep_days: float | None = Field(30.0, alias="keepDays", gt=0, allow_inf_nan=False)
    max_mb: float | None = Field(200.0, alias="maxMB", gt=0, allow_inf_nan=False)
    max_value: int = Field(4096, alias="maxValue", ge=64, le=1_000_000)
    chain: str | None = Field(None, min_length=1, max_length=200, pattern=r"^[^\s]+$")
    otel: OtelSection | None = None
    """``true`` is an empty section (the ``OTEL_EXPORTER_OTLP_*`` variables say where), ``false`` none."""

    @field_validator("otel", mode="before")
    @classmethod
    def _otel(cls, value: Any) -> Any:
        # One validator, not a ``bool | OtelSection`` union: a union reports a mistake inside the mapping
        # (a bad endpoint) as an error of each member, and the first line read "audit.otel.bool: Input
        # should be a valid boolean, got dict".
        if value is True:
            return {}
        if value is False or value is None:
            return None
        if isinstance(value, dict):
            return value
        raise ValueError(
            f"expected true, false or a mapping (endpoint, headers, serviceName), got {type(value).__name__}"
        )

    @field_validator("record", mode="before")
    @classmethod
    def _record(cls, value: Any) -> Any:
        # YAML 1.1 reads an unquoted `off` (and `no`, `false`) as false: the README's own `record: off` is meant
        if value is False:
            return "off"
        if value is True:
            raise ValueError(
                "true is not a record mode: write handled, all or off (YAML reads an unquoted on/yes/true as true)"
            )
        return value

    @field_validator("sink")
    @classmethod
    def _sinks(cls, value: str | list[str]) -> str | list[str]:
        for item in [value] if isinstance(value, str) else value:
            if item != "store" and not (item.startswith("jsonl:") and len(item) > len("jsonl:")):
                raise ValueError(f"{item!r}: expected 'store' or 'jsonl:PATH'")
        return value

    @field_validator("redact")
    @classmethod
    def _patterns(cls, value: list[str]) -> list[str]:
        from gateway.audit.redact import check_pattern

        for i, pattern in enumerate(value):
            problem = check_pattern(pattern)
            if problem is not None:
                raise ValueError(f"redact[{i}] {pattern!r}: {problem}")
        return value


def normalize(section: AuditSection, base_dir: str) -> dict[str, Any]:
    """The normalized dict (see module docstring); relative ``jsonl:`` paths resolve against
    ``base_dir`` (the config file's folder), ``~`` expands."""
    sinks = []
    for item in [section.sink] if isinstance(section.sink, str) else section.sink:
        if item.startswith("jsonl:"):
            path = os.path.expanduser(item[len("jsonl:") :])
            item = "jsonl:" + os.path.normpath(os.path.join(base_dir, path))
        if item not in sinks:
            sinks.append(item)
    otel: dict[str, Any] | None = None
    if isinstance(section.otel, OtelSection):
        otel = {
            "endpoint": section.otel.endpoint,
            "headers": dict(section.otel.headers),
            "service_name": section.otel.service_name,
        }
    return {
        "record": section.record,
        "sinks": sinks,
        "redact": list(section.redact),
        "keep_days": section.keep_days,
        "max_mb": section.max_mb,
        "max_value": section.max_value,
        "chain": section.chain,
        "otel": otel,
    }


_NORMALIZED = {
    "record": "record",
    "sink": "sinks",
    "redact": "redact",
    "keep_days": "keep_days",
    "max_mb": "max_mb",
    "max_value": "max_value",
    "chain": "chain",
    "otel": "otel",
}


def compile_audit(compiler: Any, path: str, base_dir: str, raw: Any) -> None:
    """Validate one file's ``audit`` section into ``compiler.audit`` (``compiler``: the
    ``gateway.config.compiler.Compiler`` at work; not imported here, it imports this): the keys a later file sets
    replace an earlier file's; issues read ``FILE: audit.<field>: <problem>``, unknown keys warn."""
    if not isinstance(raw, dict):
        compiler.issues.append(f"{path}: audit: expected an object (record, sink, redact, keepDays, maxMB, ...)")
        return
    section = compiler.validated(AuditSection, raw, f"{path}: audit")
    if section is None:
        return
    normalized = normalize(section, base_dir)
    if normalized["otel"] is not None and not _otel_installed():
        compiler.warnings.append(
            f"{path}: audit.otel: the OpenTelemetry SDK is not installed, so no spans are "
            "sent (pip install 'hookgate[otel]')"
        )
    for name in section.model_fields_set:
        key = _NORMALIZED.get(name)
        if key is not None:
            compiler.audit[key] = normalized[key]


def _otel_installed() -> bool:
    import importlib.util

    try:
        return (
            importlib.util.find_spec("opentelemetry.sdk") is not None
            and importlib.util.find_spec("opentelemetry.exporter.otlp.proto.http") is not None
        )
    except ModuleNotFoundError:
        return False
