"""The audit record: one JSON object per recorded event, built after merge from the same ``Decision``
and ``HandlerResult``s the host gets.

Shape (every key always present; absent values are ``null``; README "Audit" has the same table)::

    {"time": "2026-12-01T07:12:03.418Z",      ISO 8601 UTC, milliseconds
     "host": "claude",                         the event's dialect (claude | kiro | gemini | codex)
     "event": "PreToolUse",                    canonical event name
     "session_id": "...", "tool_use_id": "...", "prompt_id": "...",
     "tool_name": "Bash",                      canonical tool name
     "tool_input": {...},                      as received (redacted)
     "updated_input": {...} | null,            as rewritten by the merge (redacted)
     "handlers": [{"id": "guard", "type": "python", "status": "ok",       ok|error|timeout|skipped|cached
                   "verdict": "deny",          allow|deny|ask|defer|block|stop|context|rewrite|none
                   "reason": "...",            the handler's reason, or its failure message
                   "duration_ms": 0.4, "side_effects": ["..."]}],
     "decision": "deny",                       allow|deny|ask|defer|block|stop|none (merged)
     "reason": "...",                          the merged reason (permission reason, block reason or stop reason)
     "approval": {"id": "...", "decided_by": "..."} | null,   from a handler's meta["approval"]
     "version": "0.1.0",                       hookgate version
     "config_hash": "..."}                     SHA-256 (16 hex) of the normalized config

``build_record`` does not redact; ``gateway.audit.recorder`` redacts the whole record before any
sink sees it. ``canonical(record)`` is the exact text that is stored and hashed.
"""

from __future__ import annotations

import json
import time

TYPE_CHECKING = False  # typing costs ~2 ms to import; `hookgate run` loads this module on every record
if TYPE_CHECKING:
    from typing import Any

    from gateway.audit.redact import Redactor
    from gateway.decision import Decision, HandlerResult, Verdict
    from gateway.events import HookEvent

FIELDS = (
    "time",
    "host",
    "event",
    "session_id",
    "tool_use_id",
    "prompt_id",
    "tool_name",
    "tool_input",
    "updated_input",
    "handlers",
    "decision",
    "reason",
    "approval",
    "version",
    "config_hash",
)
"""Top-level record keys, in documented order."""
HANDLER_FIELDS = ("id", "type", "status", "verdict", "reason", "duration_ms", "side_effects")
DECISIONS = ("allow", "deny", "ask", "defer", "block", "stop", "none")


_second: tuple[int, str] = (-1, "")
"""The last whole second ``iso_time`` formatted, and its text (a record writer formats many per second)."""


def iso_time(seconds: float) -> str:
    """``seconds`` (epoch) as ISO 8601 UTC with milliseconds: ``2026-12-01T07:12:03.418Z``."""
    global _second
    whole, millis = divmod(round(seconds * 1000), 1000)
    cached = _second
    if cached[0] != whole:
        cached = _second = (whole, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)))
    return f"{cached[1]}.{millis:03d}Z"


def decision_label(decision: Decision) -> str:
    """The merged decision: the permission (allow|deny|ask|defer), else ``block``, else ``stop``
    (``continue: false``), else ``none``."""
    if decision.permission is not None:
        return decision.permission
    if decision.block:
        return "block"
    return "none" if decision.continue_ else "stop"


def verdict_label(verdict: Verdict | None) -> str:
    """One handler's own answer as one word (see module docstring)."""
    if verdict is None:
        return "none"
    if verdict.permission is not None:
        return verdict.permission
    if verdict.block:
        return "block"
    if not verdict.continue_:
        return "stop"
    if verdict.updated_input is not None or verdict.updated_output is not None:
        return "rewrite"
    if verdict.additional_context or verdict.system_message:
        return "context"
    return "none"


def side_effects(result: HandlerResult) -> list[str]:
    """What a handler reported it did: ``HandlerResult.side_effects``, else its verdict's, else
    ``meta["side_effects"]`` (strings only, in order)."""
    found: Any = getattr(result, "side_effects", None)
    if not found and result.verdict is not None:
        found = getattr(result.verdict, "side_effects", None)
    if not found:
        found = result.meta.get("side_effects")
    if not isinstance(found, (list, tuple)):
        return []
    return [item if isinstance(item, str) else json.dumps(item, sort_keys=True) for item in found]


def handler_parts(result: HandlerResult) -> tuple[Any, ...]:
    """One handler's entry of the record's ``handlers``: its values in ``HANDLER_FIELDS`` order
    (``record_of`` pairs them with the names)."""
    verdict = result.verdict
    reason = None
    if verdict is not None:
        reason = verdict.permission_reason or verdict.reason or verdict.stop_reason
    if reason is None and (result.failed or result.status == "skipped"):
        reason = result.message
    return (
        result.id,
        result.type,
        result.status,
        verdict_label(verdict),
        reason,
        round(result.duration_ms, 3),
        side_effects(result),
    )


def approval_of(results: list[HandlerResult]) -> dict[str, Any] | None:
    """``{"id", "decided_by"}`` from the first result whose ``meta["approval"]`` is a dict."""
    for result in results:
        approval = result.meta.get("approval")
        if isinstance(approval, dict):
            return {"id": approval.get("id"), "decided_by": approval.get("decided_by")}
    return None


def build_record(
    event: HookEvent, decision: Decision, *, config_hash: str | None, version: str, now: float | None = None
) -> dict[str, Any]:
    """The (unredacted) record for ``event`` answered with ``decision`` (see module docstring)."""
    return record_of(record_parts(event, decision), config_hash=config_hash, version=version, now=now)


def record_parts(event: HookEvent, decision: Decision) -> tuple[Any, ...]:
    """What the record of ``event`` answered with ``decision`` takes from them, as plain values (a tuple
    whose pickle is about half the record's: ``hookgate serve`` sends this to its audit writer process,
    which builds the record with ``record_of``): the fields from ``host`` to ``approval`` in ``FIELDS``
    order, each handler as ``handler_parts``. ``updated_input`` (a Python handler may put any object
    there) is taken as its stored JSON, so the parts always pickle and unpickle."""
    payload = event.payload
    reason = decision.permission_reason if decision.permission is not None else None
    if reason is None:
        reason = decision.reason if decision.block else None
    if reason is None and not decision.continue_:
        reason = decision.stop_reason
    return (
        event.dialect,
        event.name,
        payload.get("session_id"),
        payload.get("tool_use_id"),
        payload.get("prompt_id"),
        payload.get("tool_name"),
        payload.get("tool_input"),
        None if decision.updated_input is None else json.loads(canonical(decision.updated_input)),
        [handler_parts(r) for r in decision.results],
        decision_label(decision),
        reason,
        approval_of(decision.results),
    )


def record_of(
    parts: tuple[Any, ...] | list[Any], *, config_hash: str | None, version: str, now: float | None = None
) -> dict[str, Any]:
    """The record from ``record_parts`` (a tuple, or the list its JSON gives back), at ``now`` (epoch
    seconds; default: the current time)."""
    if len(parts) != 12:
        raise ValueError(f"record parts: expected 12 values, got {len(parts)}")
    record: dict[str, Any] = {"time": iso_time(time.time() if now is None else now)}
    record.update(zip(FIELDS[1:13], parts, strict=True))
    record["handlers"] = [dict(zip(HANDLER_FIELDS, h, strict=True)) for h in record["handlers"]]
    record["version"] = version
    record["config_hash"] = config_hash
    return record


OWN_FIELDS = frozenset(("time", "host", "event", "handlers", "decision", "version", "config_hash"))
"""Record fields whose values hookgate itself sets (names, labels, times, hashes): no outside text."""


def outside_text(record: dict[str, Any]) -> list[Any]:
    """The parts of ``record`` that carry text from outside hookgate: every field but ``OWN_FIELDS``,
    and each handler's ``reason`` and ``side_effects`` (its id, type, status, verdict and duration are
    hookgate's). Their JSON is what the redaction precheck scans (``Redactor.clean``): shorter than the
    record, and free of config-chosen names like a handler id ``secret-scan`` that would send every
    record through the full walk."""
    handlers = record.get("handlers") or ()
    return [
        [value for key, value in record.items() if key not in OWN_FIELDS],
        [(h.get("reason"), h.get("side_effects")) if isinstance(h, dict) else h for h in handlers],
    ]


def redacted(record: dict[str, Any], redactor: Redactor) -> tuple[dict[str, Any], str]:
    """``record`` redacted and truncated by ``redactor``, with its canonical text (what is stored and
    hashed). The walk (``Redactor.apply``) is skipped when the precheck (``Redactor.clean``) finds
    nothing in the record's outside text (``outside_text``: about a quarter of the record's text, and
    free of config-chosen names such as a handler id ``secret-scan``), the common case: the precheck
    scans for every hint, so it costs about 2.5 times as much over the whole text as encoding and
    scanning the outside text does."""
    if redactor.clean(canonical(outside_text(record))):
        return record, canonical(record)
    clean = redactor.apply(record)
    return clean, canonical(clean)


def ordered(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with its keys in documented order (``FIELDS``, then any others), for people to read
    (the stored text has sorted keys)."""
    out = {name: record[name] for name in FIELDS if name in record}
    out.update((k, v) for k, v in record.items() if k not in out)
    handlers = out.get("handlers")
    if isinstance(handlers, list):
        out["handlers"] = [
            {**{n: h[n] for n in HANDLER_FIELDS if n in h}, **h} if isinstance(h, dict) else h for h in handlers
        ]
    return out


_OPTIONS: dict[str, Any] = {"sort_keys": True, "separators": (",", ":"), "default": str, "allow_nan": False}
_ENCODE = json.JSONEncoder(ensure_ascii=False, **_OPTIONS).encode
_ENCODE_ASCII = json.JSONEncoder(ensure_ascii=True, **_OPTIONS).encode


def canonical(record: Any) -> str:
    """The record's stored and hashed text: compact JSON, sorted keys, UTF-8 as is (lone surrogates
    escaped), always valid JSON: a NaN or an infinity (which Python's ``json`` reads in an event, and no
    JSON parser has to) is stored as the string ``"NaN"``, ``"Infinity"`` or ``"-Infinity"``."""
    try:
        text: str = _ENCODE(record)
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = _ENCODE_ASCII(record)
    except ValueError:  # a float JSON has no number for
        return canonical(_finite(record))
    return text


def _finite(value: Any) -> Any:
    """``value`` with each non-finite float (in dicts, lists and tuples) as its JSON-ish name."""
    import math  # here: a shared library to load, and only a record with such a float needs it

    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value
