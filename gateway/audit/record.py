"""The audit record: one JSON object per recorded event, built after merge from the same ``Decision``
and ``HandlerResult``s the host gets.

Shape (every key always present; absent values are ``null``; README "Audit" has the same table)::

    {"id": "18a3f...-3e8-0000002a",           the record's id (``gateway.audit.spool.new_id``)
     "time": "2026-12-01T07:12:03.418Z",      ISO 8601 UTC, milliseconds
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
sink sees it. ``canonical(record)`` is the exact text that is stored and hashed. The ``id`` is in that
text, so the hash chain covers it (``gateway.audit.chain``); records written by a hookgate from before
it was have no ``id`` key (their id is only the store's column, or the JSON line's ``_chain.id``).
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
    "id",
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
    event: HookEvent,
    decision: Decision,
    *,
    record_id: str,
    config_hash: str | None,
    version: str,
    now: float | None = None,
) -> dict[str, Any]:
    """The (unredacted) record ``record_id`` for ``event`` answered with ``decision`` (see module
    docstring)."""
    parts = record_parts(event, decision)
    return record_of(parts, record_id=record_id, config_hash=config_hash, version=version, now=now)


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


_PART_FIELDS = FIELDS[FIELDS.index("host") : FIELDS.index("approval") + 1]
"""The fields ``record_parts`` gives, in order."""


def record_of(
    parts: tuple[Any, ...] | list[Any],
    *,
    record_id: str,
    config_hash: str | None,
    version: str,
    now: float | None = None,
) -> dict[str, Any]:
    """The record ``record_id`` from ``record_parts`` (a tuple, or the list its JSON gives back), at ``now``
    (epoch seconds; default: the current time). Raises ValueError when ``parts`` has not 12 values."""
    if len(parts) != len(_PART_FIELDS):
        raise ValueError(f"record parts: expected {len(_PART_FIELDS)} values, got {len(parts)}")
    record: dict[str, Any] = {"id": record_id, "time": iso_time(time.time() if now is None else now)}
    record.update(zip(_PART_FIELDS, parts, strict=True))
    record["handlers"] = [dict(zip(HANDLER_FIELDS, h, strict=True)) for h in record["handlers"]]
    record["version"] = version
    record["config_hash"] = config_hash
    return record


OWN_FIELDS = frozenset(("id", "time", "host", "event", "handlers", "decision", "version", "config_hash"))
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
    scanning the outside text does. A record holding something JSON cannot carry (a Python host's
    tuple key, a value nested thousands deep) is first made ``plain``, so the walk and the stored text
    show the same placeholders."""
    outside = _encoded(outside_text(record))
    if outside is None:
        from gateway.plain import plain  # (a value JSON cannot carry: rare)

        record = plain(record)
        outside = canonical(outside_text(record))
    if redactor.clean(outside):
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


_OPTIONS: dict[str, Any] = {
    "sort_keys": True,
    "separators": (",", ":"),
    "default": str,
    "allow_nan": False,
    "check_circular": False,  # a cycle ends in RecursionError, which `canonical` handles as `plain` says
}
_ENCODE = json.JSONEncoder(ensure_ascii=False, **_OPTIONS).encode
_ENCODE_ASCII = json.JSONEncoder(ensure_ascii=True, **_OPTIONS).encode


def canonical(record: Any) -> str:
    """The record's stored and hashed text: compact JSON, sorted keys, UTF-8 as is (lone surrogates
    escaped), always valid JSON, and never an exception: what JSON cannot carry is replaced as
    ``plain`` says (a NaN or an infinity, which Python's ``json`` reads in an event and no JSON parser
    has to, becomes the string ``"NaN"``, ``"Infinity"`` or ``"-Infinity"``)."""
    text = _encoded(record)
    if text is not None:
        return text
    from gateway.plain import plain  # (a value JSON cannot carry: rare)

    return _text(plain(record))


def _text(value: Any) -> str:
    """``value`` encoded with ``_OPTIONS``; raises what ``json`` raises (TypeError, ValueError,
    RecursionError, or whatever an object's ``str`` raises), except for a lone surrogate, escaped."""
    try:
        text: str = _ENCODE(value)
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = _ENCODE_ASCII(value)
    return text


def _encoded(value: Any) -> str | None:
    """``_text(value)``, or None when ``value`` holds something JSON cannot carry (see ``plain``)."""
    try:
        return _text(value)
    except Exception:  # TypeError, ValueError, RecursionError, or an object's own str() failing
        return None
