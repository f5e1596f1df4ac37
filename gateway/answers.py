"""The one parser for handler answers (command stdout, http bodies, mcp_tool text/structured content).

Semantics follow Claude Code's hooks reference, section 5: text is JSON only if its first
non-whitespace character is ``{`` (after JavaScript's ``trim()``, as Claude Code reads it: a leading
UTF-8 byte order mark, U+FEFF, counts as whitespace); otherwise it is plain text, which becomes context only on
events that take plain stdout as context (SessionStart, UserPromptSubmit, UserPromptExpansion).
A JSON object is validated against the hook output schema (pydantic; imported on first use) and
normalized into a ``Verdict``. Every output string is capped at ``MAX_TEXT`` characters.

Besides Claude Code's fields, an answer may carry ``"side_effects": ["notified #sec", ...]`` (a list of
strings, FIM One's name for what the hook did besides answering): kept in ``Verdict.side_effects`` for
the audit record, never part of the decision (Claude Code ignores the unknown key). It is read apart
from the schema, so a wrong shape never voids the answer: a string is a one-item list, an item that is
not a string (or a value that is not a list) is kept as its JSON text, and a value that cannot be
written as text is dropped with a warning on stderr (``hookgate.answers``).

The common answers (a permission decision, a block, context, a message: only the schema's plain fields,
each of exactly its declared type) skip pydantic: ``_plain`` recognises them and reads them directly,
since importing pydantic and building the models costs a hook process ~70 ms. Anything else (another
key, a type pydantic would have to coerce or reject, nested ``decision``, tool
output rewrites) goes through the pydantic model, which stays the schema's one authority; a test checks
that both paths agree.

Raises ``HandlerError`` (one line naming the field) for JSON that is not an object or fails the schema.
"""

from __future__ import annotations

import json
from functools import cache

from gateway.decision import Verdict
from gateway.errors import HandlerError

TYPE_CHECKING = False  # importing typing costs a hook process ~2 ms
if TYPE_CHECKING:
    from typing import Any

    from gateway.events import HookEvent

MAX_TEXT = 10_000
"""Cap (characters) on every output string; longer text is cut with a marker, as Claude Code does."""


MAX_SIDE_EFFECTS = 100
"""At most this many ``side_effects`` entries are kept from one answer."""
MAX_SIDE_EFFECT = 1_000
"""Cap (characters) on one ``side_effects`` entry."""


def trim(text: str) -> str:
    """``text`` without leading and trailing whitespace, a byte order mark (U+FEFF) included, as
    JavaScript's ``String.prototype.trim`` (Claude Code's) removes it; Python's ``strip`` keeps it."""
    text = text.strip()
    while text[:1] == "\ufeff" or text[-1:] == "\ufeff":
        text = text.strip("\ufeff").strip()
    return text


def truncate(text: str, limit: int = MAX_TEXT) -> str:
    """Cut ``text`` to ``limit`` characters with a visible marker naming how much was dropped."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... truncated by hookgate: {len(text) - limit} more characters]"


@cache
def _schema() -> Any:
    """Build the pydantic models lazily: pydantic costs ~60 ms to import, paid only when JSON arrives."""
    from typing import Any, Literal  # noqa: F401  (pydantic resolves the annotations below at run time)

    from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

    class _Model(BaseModel):
        model_config = ConfigDict(extra="allow", populate_by_name=True)

    class PermissionRequestDecision(_Model):
        behavior: Literal["allow", "deny"]
        updatedInput: dict[str, Any] | None = None
        updatedPermissions: list[Any] | None = None
        message: str | None = None
        interrupt: bool | None = None

    class HookSpecificOutput(_Model):
        hookEventName: str
        permissionDecision: Literal["allow", "deny", "ask", "defer"] | None = None
        permissionDecisionReason: str | None = None
        updatedInput: dict[str, Any] | None = None
        additionalContext: str | None = None
        updatedToolOutput: Any = None
        updatedMCPToolOutput: Any = None
        decision: PermissionRequestDecision | None = None

    class HookOutput(_Model):
        continue_: bool = Field(True, alias="continue")
        stopReason: str | None = None
        suppressOutput: bool | None = None
        systemMessage: str | None = None
        decision: Literal["block", "approve", "allow", "deny"] | None = None
        reason: str | None = None
        hookSpecificOutput: HookSpecificOutput | None = None

    return TypeAdapter(HookOutput)


_SPECIFIC_KNOWN = frozenset(
    {
        "hookEventName",
        "permissionDecision",
        "permissionDecisionReason",
        "updatedInput",
        "additionalContext",
        "updatedToolOutput",
        "updatedMCPToolOutput",
        "decision",
    }
)


def _validation_message(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        loc = ".".join(str(p) for p in first.get("loc", ())) or "(root)"
        return f"invalid hook output at {loc}: {first.get('msg', 'invalid')}"
    return f"invalid hook output: {exc}"


def _text(value: str | None) -> str | None:
    return truncate(value) if value else value


_STR, _BOOL, _DICT = (str, type(None)), (bool, type(None)), (dict, type(None))
_PLAIN_TOP: dict[str, tuple[type, ...]] = {
    "continue": (bool,),
    "stopReason": _STR,
    "suppressOutput": _BOOL,
    "systemMessage": _STR,
    "reason": _STR,
    "decision": _STR,
    "hookSpecificOutput": _DICT,
}
_PLAIN_SPECIFIC: dict[str, tuple[type, ...]] = {
    "hookEventName": (str,),
    "permissionDecision": _STR,
    "permissionDecisionReason": _STR,
    "updatedInput": _DICT,
    "additionalContext": _STR,
}
_DECISIONS = frozenset({"block", "approve", "allow", "deny", None})
_PERMISSIONS = frozenset({"allow", "deny", "ask", "defer", None})


class _PlainSpecific:
    """``hookSpecificOutput`` read without pydantic (see ``_plain``): the attributes the model has."""

    __slots__ = ("additionalContext", "hookEventName", "permissionDecision", "permissionDecisionReason", "updatedInput")
    updatedToolOutput = updatedMCPToolOutput = decision = model_extra = None

    def __init__(self, obj: dict[str, Any]) -> None:
        self.hookEventName: str = obj["hookEventName"]
        self.permissionDecision: str | None = obj.get("permissionDecision")
        self.permissionDecisionReason: str | None = obj.get("permissionDecisionReason")
        updated = obj.get("updatedInput")
        self.updatedInput: dict[str, Any] | None = dict(updated) if updated is not None else None
        self.additionalContext: str | None = obj.get("additionalContext")


class _PlainOutput:
    """A hook output read without pydantic (see ``_plain``): the attributes the model has."""

    __slots__ = ("continue_", "decision", "hookSpecificOutput", "reason", "stopReason", "systemMessage")

    def __init__(self, obj: dict[str, Any], specific: _PlainSpecific | None) -> None:
        self.continue_: bool = obj.get("continue", True)
        self.stopReason: str | None = obj.get("stopReason")
        self.systemMessage: str | None = obj.get("systemMessage")
        self.decision: str | None = obj.get("decision")
        self.reason: str | None = obj.get("reason")
        self.hookSpecificOutput = specific


def _fits(obj: dict[Any, Any], fields: dict[str, tuple[type, ...]]) -> bool:
    """Every key is one of ``fields`` and every value exactly of one of its types (no subclasses)."""
    for key, value in obj.items():
        types = fields.get(key) if type(key) is str else None
        if types is None or type(value) not in types:
            return False
    return True


def _plain(obj: dict[Any, Any]) -> _PlainOutput | None:
    """``obj`` as the validated model would read it, when it is a plain answer (see module docstring);
    None when pydantic must look at it."""
    if not _fits(obj, _PLAIN_TOP) or obj.get("decision") not in _DECISIONS:
        return None
    specific = obj.get("hookSpecificOutput")
    if specific is None:
        return _PlainOutput(obj, None)
    if (
        "hookEventName" not in specific
        or not _fits(specific, _PLAIN_SPECIFIC)
        or specific.get("permissionDecision") not in _PERMISSIONS
    ):
        return None
    updated = specific.get("updatedInput")
    if updated is not None and not all(type(key) is str for key in updated):
        return None
    return _PlainOutput(obj, _PlainSpecific(specific))


def _validated(obj: dict[Any, Any]) -> Any:
    """``obj`` validated by the pydantic model. Raises HandlerError naming the first bad field."""
    try:
        return _schema().validate_python(obj)
    except Exception as exc:  # pydantic.ValidationError, imported lazily
        raise HandlerError(_validation_message(exc)) from None


def verdict_from_json(obj: Any, event: HookEvent) -> Verdict:
    """Validate a decoded JSON answer against the hook output schema and normalize it.

    Raises HandlerError when ``obj`` is not an object, fails the schema, or carries a
    ``hookSpecificOutput`` for another event.
    """
    if not isinstance(obj, dict):
        raise HandlerError(f"hook output must be a JSON object, got {type(obj).__name__}")
    if "side_effects" not in obj:
        return _normalize(_plain(obj) or _validated(obj), event)
    effects = _side_effects(obj["side_effects"])  # read apart: a bad shape never voids the decision
    rest = {key: value for key, value in obj.items() if key != "side_effects"}
    verdict = _normalize(_plain(rest) or _validated(rest), event)
    verdict.side_effects = effects
    return verdict


def _side_effects(value: Any) -> list[str]:
    """An answer's ``side_effects`` as a list of strings (see module docstring), at most
    ``MAX_SIDE_EFFECTS`` entries of at most ``MAX_SIDE_EFFECT`` characters."""
    if value is None:
        return []
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    effects: list[str] = []
    for item in items[:MAX_SIDE_EFFECTS]:
        if isinstance(item, str):
            text = item
        else:
            try:
                text = json.dumps(item, ensure_ascii=False, sort_keys=True, default=str)
            except (ValueError, TypeError, RecursionError) as exc:
                import logging

                logging.getLogger("hookgate.answers").warning(
                    "hookgate: dropped a side_effects entry that cannot be written as text: %s", exc
                )
                continue
        effects.append(truncate(text, MAX_SIDE_EFFECT))
    return effects


def _normalize(out: Any, event: HookEvent) -> Verdict:
    """The ``Verdict`` of a validated hook output (the model, or ``_plain``'s view of it)."""
    verdict = Verdict(
        continue_=out.continue_, stop_reason=_text(out.stopReason), system_message=_text(out.systemMessage)
    )
    tool_event = event.spec.tool
    if out.decision in ("block", "deny"):
        if event.name == "PreToolUse":
            verdict.permission, verdict.permission_reason = "deny", _text(out.reason)
        else:
            verdict.block, verdict.reason = True, _text(out.reason)
    elif out.decision in ("approve", "allow") and event.name == "PreToolUse":
        verdict.permission, verdict.permission_reason = "allow", _text(out.reason)
    specific = out.hookSpecificOutput
    if specific is not None:
        if specific.hookEventName != event.name:
            raise HandlerError(
                f"hookSpecificOutput.hookEventName is {specific.hookEventName!r} but the event is {event.name!r}"
            )
        if specific.permissionDecision is not None:
            verdict.permission = specific.permissionDecision
            verdict.permission_reason = _text(specific.permissionDecisionReason)
        if specific.updatedInput is not None and tool_event:
            verdict.updated_input = specific.updatedInput
        if specific.additionalContext:
            verdict.additional_context = _text(specific.additionalContext)
        output = specific.updatedToolOutput if specific.updatedToolOutput is not None else specific.updatedMCPToolOutput
        if output is not None:
            verdict.updated_output = output
        if specific.decision is not None:
            verdict.permission = specific.decision.behavior
            verdict.permission_reason = _text(specific.decision.message)
            if specific.decision.updatedInput is not None:
                verdict.updated_input = specific.decision.updatedInput
            if specific.decision.updatedPermissions:
                verdict.extra["updatedPermissions"] = specific.decision.updatedPermissions
            if specific.decision.interrupt:
                verdict.extra["interrupt"] = True
        for key, value in (specific.model_extra or {}).items():
            if key not in _SPECIFIC_KNOWN:
                verdict.extra[key] = value
        legacy_block = out.decision in ("block", "deny") and verdict.permission not in (None, "deny")
        if legacy_block and event.name in ("PreToolUse", "PermissionRequest"):
            # the legacy block is a deny (Claude Code keeps it as a blocking error): a permissionDecision
            # (or PermissionRequest behavior) of allow, ask or defer beside it cannot loosen it
            verdict.permission = "deny"
            verdict.permission_reason = _text(out.reason) or verdict.permission_reason
            verdict.updated_input = None
            verdict.extra.pop("updatedPermissions", None)
    return verdict


def parse_text(text: str, event: HookEvent) -> Verdict:
    """Parse a text answer with the ``{`` rule: JSON object -> ``verdict_from_json``; else plain text.

    Plain text becomes ``additional_context`` on events that take plain stdout as context and is
    ignored elsewhere (Claude Code sends it to the debug log). Raises HandlerError on bad JSON.
    """
    stripped = trim(text)
    if stripped.startswith("{"):
        try:
            obj = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise HandlerError(
                f"hook output starts with '{{' but is not valid JSON: {exc.msg} (line {exc.lineno} column {exc.colno})"
            ) from None
        return verdict_from_json(obj, event)
    if stripped and event.spec.plain_context:
        return Verdict(additional_context=truncate(stripped))
    return Verdict()


def first_line(text: str) -> str:
    """The first non-empty line of ``text`` (for one-line messages), capped at 500 characters."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:500]
    return ""
