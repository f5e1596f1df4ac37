"""The LLM verdict ``{ok, reason, impossible?}``: its JSON schema, a tolerant parser, and what it means
for each event (Claude Code's prompt-hook table, hooks reference §3.5).

Parsing accepts the object itself (from a tool call or structured output) or text: a bare JSON
object, one inside a Markdown code fence, or one inside prose (objects nested in another count only
when no outer one has an ``ok`` field). ``ok`` must be a boolean (``"true"``/``"false"`` strings are
accepted); a missing ``reason`` on ``ok: false`` becomes a generic one. Anything else raises
``HandlerError``. When the answer holds several verdicts (two objects, an ``ok`` written twice, two
``submit_verdict`` calls, a call beside a verdict in the text) and they disagree, the most restrictive
stands (``most_restrictive``: an LLM may tighten a decision, never loosen it).
"""

from __future__ import annotations

import contextlib
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


def _restrictive_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object from its members; an ``ok`` written twice keeps its most restrictive value (a
    ``false`` among them wins: an LLM may tighten a decision, never loosen it)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key == "ok" and "ok" in out and _is_false(out["ok"]):
            continue
        out[key] = value
    return out


def _is_false(value: Any) -> bool:
    return value is False or (isinstance(value, str) and value.strip().lower() == "false")


_DECODER = json.JSONDecoder(object_pairs_hook=_restrictive_pairs)


def _candidates(text: str, nested: bool = False) -> list[dict[str, Any]]:
    """JSON objects in ``text``, most likely first: the whole text, fenced blocks, then the objects that
    start at a ``{`` outside the objects found before (``nested``: at every ``{``, inner objects too)."""
    found: list[dict[str, Any]] = []
    stripped = text.strip()
    pieces = [stripped, *(m.group(1).strip() for m in _FENCE.finditer(stripped))]
    for piece in pieces:
        if piece.startswith("{"):
            try:
                value = _DECODER.decode(piece)
            except ValueError:
                continue
            if isinstance(value, dict):
                found.append(value)
    start = stripped.find("{")
    while start != -1 and len(found) < 20:
        try:
            value, end = _DECODER.raw_decode(stripped, start)
        except ValueError:
            value, end = None, start + 1
        if isinstance(value, dict):
            found.append(value)
        start = stripped.find("{", start + 1 if nested else end)
    return found


def most_restrictive(verdicts: list[LlmVerdict]) -> LlmVerdict:
    """The verdict that stands when a model gave several (``ok`` objects in its text, several
    ``submit_verdict`` calls): the first that is not ok, else the first. ``verdicts`` is not empty."""
    return next((v for v in verdicts if not v.ok), verdicts[0])


def with_text_verdict(verdicts: list[LlmVerdict], text: str) -> LlmVerdict:
    """The verdict that stands when a turn submitted ``verdicts`` (``submit_verdict`` calls, not empty)
    and also wrote ``text``: a verdict in the text counts too, so a not-ok written beside an ok call is
    not dropped (an LLM may tighten a decision, never loosen it); text without one is prose."""
    found = list(verdicts)
    if "{" in text:
        with contextlib.suppress(HandlerError):
            found.append(parse_verdict(text))
    return most_restrictive(found)


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
        objects = [o for o in _candidates(text) if "ok" in o] or [o for o in _candidates(text, True) if "ok" in o]
        if not objects:
            shown = first_line(text)[:200] or "(empty answer)"
            raise HandlerError(
                f"unparseable verdict: no JSON object with an 'ok' field in the model's answer: {shown!r}"
            )
        parsed: list[LlmVerdict] = []
        problem: HandlerError | None = None
        for obj in objects:
            try:
                parsed.append(parse_verdict(obj))
            except HandlerError as exc:  # {"ok": "maybe"} beside a well-formed verdict: that one counts
                problem = problem or exc
        if not parsed:
            assert problem is not None
            raise problem
        return most_restrictive(parsed)
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
