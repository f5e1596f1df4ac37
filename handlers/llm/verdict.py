"""The LLM verdict ``{ok, reason, impossible?}``: its JSON schema, a tolerant parser, and what it means
for each event (Claude Code's prompt-hook table, hooks reference §3.5).

Parsing accepts the object itself (from a tool call or structured output) or text: a bare JSON
object, one inside a Markdown code fence, or one inside prose (the first object with an ``ok``
field wins). ``ok`` must be a boolean (``"true"``/``"false"`` strings are accepted); a missing
``reason`` on ``ok: false`` becomes a generic one. Anything else raises ``HandlerError``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gateway.answers import first_line, truncate
from gateway.decision import Verdict
from gateway.errors import HandlerError

if TYPE_CHECKING:
    from gateway.events import HookEvent

VERDICT_TOOL = "submit_verdict"
_PROPERTIES: dict[str, Any] = {
    "ok": {"type": "boolean", "description": "true when the condition holds, false when it does not"},
    "reason": {"type": "string", "description": "one or two sentences citing the evidence"},
    "impossible": {"type": "boolean", "description": "true only if the condition can never be met in this session"},
}
VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": _PROPERTIES,
    "required": ["ok", "reason"],
    "additionalProperties": False,
}
"""The prompt handler's verdict (``impossible`` optional)."""
STRICT_VERDICT_SCHEMA: dict[str, Any] = {**VERDICT_SCHEMA, "required": ["ok", "reason", "impossible"]}
"""The same for OpenAI strict mode, where every property must be required."""
AGENT_VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {k: _PROPERTIES[k] for k in ("ok", "reason")},
    "required": ["ok", "reason"],
    "additionalProperties": False,
}
"""The ``agent`` handler's ``submit_verdict`` arguments (no ``impossible``)."""
MAX_SCAN = 200_000
"""Characters of model text searched for a verdict."""

_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)


@dataclass(frozen=True, slots=True)
class LlmVerdict:
    """A parsed verdict: ``ok``; ``reason`` (never empty when ok is false); ``impossible``."""

    ok: bool
    reason: str
    impossible: bool = False


def _candidates(text: str) -> list[dict[str, Any]]:
    """JSON objects in ``text``, most likely first: the whole text, fenced blocks, then any ``{``."""
    found: list[dict[str, Any]] = []
    stripped = text.strip()
    pieces = [stripped, *(m.group(1).strip() for m in _FENCE.finditer(stripped))]
    for piece in pieces:
        if piece.startswith("{"):
            try:
                value = json.loads(piece)
            except ValueError:
                continue
            if isinstance(value, dict):
                found.append(value)
    decoder = json.JSONDecoder()
    start = stripped.find("{")
    while start != -1 and len(found) < 20:
        try:
            value, _ = decoder.raw_decode(stripped, start)
        except ValueError:
            value = None
        if isinstance(value, dict):
            found.append(value)
        start = stripped.find("{", start + 1)
    return found


def _as_bool(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise HandlerError(f"unparseable verdict: {name!r} must be true or false, got {json.dumps(value)[:80]}")


def parse_verdict(value: Any) -> LlmVerdict:
    """A verdict from a decoded object or from model text (see module docstring).

    Raises HandlerError("unparseable verdict: ...") when no object with a boolean ``ok`` is found.
    """
    if isinstance(value, str):
        text = value[:MAX_SCAN]
        objects = _candidates(text)
        chosen = next((o for o in objects if "ok" in o), None)
        if chosen is None:
            shown = first_line(text)[:200] or "(empty answer)"
            raise HandlerError(
                f"unparseable verdict: no JSON object with an 'ok' field in the model's answer: {shown!r}"
            )
        value = chosen
    if not isinstance(value, dict) or "ok" not in value:
        raise HandlerError("unparseable verdict: expected an object with 'ok' and 'reason'")
    ok = _as_bool(value["ok"], "ok")
    raw_impossible = value.get("impossible")
    impossible = False if raw_impossible is None else _as_bool(raw_impossible, "impossible")
    reason = value.get("reason")
    reason = truncate(reason.strip()) if isinstance(reason, str) else ""
    if not ok and not reason:
        reason = "the check found the condition not met (no reason given)"
    return LlmVerdict(ok=ok, reason=reason, impossible=impossible)


def effects(
    event: HookEvent, verdict: LlmVerdict, *, check: str, on_reject: str = "deny", continue_on_block: bool = False
) -> Verdict:
    """What ``verdict`` does on ``event`` (Claude Code's prompt-hook table, hooks reference §3.5).

    ok: nothing (an LLM never allows). Not ok: Stop/SubagentStop block with the reason (the stop goes
    through with a notice when ``impossible``); PreToolUse denies (``ask`` with ``on_reject="ask"``)
    and ends the turn unless ``continue_on_block``; PostToolUse blocks with the reason as feedback
    and ends the turn unless ``continue_on_block``; TeammateIdle stops the teammate, or with
    ``continue_on_block`` keeps it working on the reason; PermissionRequest and PermissionDenied:
    no effect; every other judgment event (UserPromptSubmit, UserPromptExpansion, PostToolBatch,
    PostToolUseFailure, TaskCreated, TaskCompleted): block with the reason.
    """
    if verdict.ok:
        return Verdict()
    reason = verdict.reason
    stop_reason = f"hookgate check {check!r}: {reason}"
    name = event.name
    if name in ("Stop", "SubagentStop"):
        if verdict.impossible:
            return Verdict(
                system_message=f"hookgate: check {check!r} judged its condition impossible in this "
                f"session, so the stop goes through: {reason}"
            )
        return Verdict(block=True, reason=reason)
    if name == "PreToolUse":
        if on_reject == "ask":
            return Verdict(permission="ask", permission_reason=reason)
        if continue_on_block:
            return Verdict(permission="deny", permission_reason=reason)
        return Verdict(permission="deny", permission_reason=reason, continue_=False, stop_reason=stop_reason)
    if name == "PostToolUse":
        if continue_on_block:
            return Verdict(block=True, reason=reason)
        return Verdict(block=True, reason=reason, continue_=False, stop_reason=stop_reason)
    if name == "TeammateIdle":
        if continue_on_block:
            return Verdict(block=True, reason=reason)
        return Verdict(continue_=False, stop_reason=stop_reason)
    if name in ("PermissionRequest", "PermissionDenied"):
        return Verdict()
    return Verdict(block=True, reason=reason)
