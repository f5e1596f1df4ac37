"""The decision model: one handler's ``Verdict``, its ``HandlerResult``, and the merged ``Decision``.

Vocabulary is Claude Code's (``permissionDecision``, ``additionalContext``, ``updatedInput``,
``continue``/``stopReason``, ``systemMessage``). ``merge`` is a pure function of the results in
config order, so the answer never depends on which handler finished first.

Merge rules (see README, "Decision rules"):

- permission: most restrictive wins, deny > defer > ask > allow > none; the reasons of the
  winning level are joined in config order.
- block: any handler blocks; reasons joined in config order.
- updated_input: each rewrite is merged over the original ``tool_input`` in config order, so a
  partial rewrite keeps the other fields and the host always gets a complete object.
- additional_context and system_message: all kept, in config order. ``continue_=False`` wins.
- judgment handlers (prompt, agent): their ``allow`` is dropped; a failure adds a system message
  and never blocks or allows.
- a failed deterministic handler with ``failClosed`` denies (tool events) or blocks, naming it;
  without it the failure is only in ``results``, except a check that could not reach the state store
  (``meta["store_error"]``): its system message says the call went through without it.
"""

from __future__ import annotations

from gateway.events import PERMISSION_EVENTS
from gateway.records import Fields, fresh

TYPE_CHECKING = False  # typing costs a hook process ~2 ms to import
if TYPE_CHECKING:
    from typing import Any, Literal

    Permission = Literal["allow", "deny", "ask", "defer"]
    Status = Literal["ok", "error", "timeout", "skipped", "cached"]

PERMISSION_RANK: dict[str | None, int] = {None: 0, "allow": 1, "ask": 2, "defer": 3, "deny": 4}


class Verdict(Fields):
    """What one handler answered, normalized (all fields optional).

    permission/permission_reason: PreToolUse ``permissionDecision`` and its reason (PermissionRequest
    ``behavior`` maps here too). block/reason: top-level ``decision: "block"`` (or exit code 2).
    updated_input: a full or partial ``tool_input`` rewrite. updated_output: PostToolUse
    ``updatedToolOutput``. extra: other ``hookSpecificOutput`` fields kept verbatim (sessionTitle,
    watchPaths, worktreePath, updatedPermissions, ...). side_effects: what the handler did besides
    answering, one short line each (FIM One's name; e.g. ``notified #sec``, ``approval 42 requested``),
    for the audit record; never part of the decision.
    """

    permission: Permission | None = None
    permission_reason: str | None = None
    block: bool = False
    reason: str | None = None
    updated_input: dict[str, Any] | None = None
    updated_output: Any = None
    additional_context: str | None = None
    system_message: str | None = None
    continue_: bool = True
    stop_reason: str | None = None
    extra: dict[str, Any] = fresh(dict)
    side_effects: list[str] = fresh(list)

    def is_empty(self) -> bool:
        return self == Verdict()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in self.__slots__:
            value = getattr(self, name)
            if name == "continue_":
                if value is False:
                    out["continue"] = False
            elif name == "side_effects":
                if value:
                    out[name] = list(value)
            elif value is not None and value is not False and value != {}:
                out[name] = value
        return out


class HandlerResult(Fields):
    """The outcome of one handler run: a value or a failure, never an exception.

    id: the handler's stable name. type: its ``type``. status: ok | error | timeout | skipped | cached.
    duration_ms: wall time in milliseconds. verdict: its answer (None on failure). message: the error
    or note (one line). fail_closed: the handler's ``failClosed`` setting. order: its position in
    config order (after ``priority``). meta: type-specific details (exit code, HTTP status, model,
    tokens, ...). judgment: the handler is an LLM soft check, as its class says (``Handler.judgment``:
    prompt, agent, or a registered class with ``judgment = True``; the dispatcher sets it).
    side_effects: what the handler did besides answering (its verdict's ``side_effects``, kept here even
    when the verdict is dropped by the merge rules).
    """

    id: str
    type: str
    status: Status = "ok"
    duration_ms: float = 0.0
    verdict: Verdict | None = None
    message: str | None = None
    fail_closed: bool = False
    order: int = 0
    meta: dict[str, Any] = fresh(dict)
    judgment: bool = False
    side_effects: list[str] = fresh(list)

    @property
    def failed(self) -> bool:
        return self.status in ("error", "timeout")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "type": self.type,
            "status": self.status,
            "duration_ms": round(self.duration_ms, 1),
        }
        if self.verdict is not None and not self.verdict.is_empty():
            out["verdict"] = self.verdict.to_dict()
        if self.message:
            out["message"] = self.message
        if self.meta:
            out["meta"] = self.meta
        if self.side_effects:
            out["side_effects"] = list(self.side_effects)
        return out


class Decision(Fields):
    """The one answer for an event, merged from every handler's result (see module docstring)."""

    event: str
    permission: Permission | None = None
    permission_reason: str | None = None
    block: bool = False
    reason: str | None = None
    updated_input: dict[str, Any] | None = None
    updated_output: Any = None
    additional_context: list[str] = fresh(list)
    system_message: str | None = None
    continue_: bool = True
    stop_reason: str | None = None
    extra: dict[str, Any] = fresh(dict)
    results: list[HandlerResult] = fresh(list)

    @property
    def denied(self) -> bool:
        return self.permission == "deny" or self.block

    @property
    def is_empty(self) -> bool:
        """True when there is nothing to tell the host (no decision, no context, no message)."""
        return (
            self.permission is None
            and not self.block
            and self.updated_input is None
            and self.updated_output is None
            and not self.additional_context
            and self.system_message is None
            and self.continue_
            and not self.extra
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"event": self.event}
        for name in (
            "permission",
            "permission_reason",
            "reason",
            "updated_input",
            "updated_output",
            "system_message",
            "stop_reason",
        ):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.block:
            out["block"] = True
        if self.additional_context:
            out["additional_context"] = list(self.additional_context)
        if not self.continue_:
            out["continue"] = False
        if self.extra:
            out["extra"] = dict(self.extra)
        out["results"] = [r.to_dict() for r in self.results]
        return out


def failure_verdict(result: HandlerResult, *, tool_event: bool, blocks: bool) -> Verdict:
    """The verdict a ``failClosed`` handler's failure turns into: deny on events that take a permission
    decision (``tool_event``: PreToolUse, PermissionRequest), block on events that can block, else a
    system message."""
    detail = result.message or "no detail"
    why = (
        f"hookgate: handler {result.id!r} {detail}"
        if detail.startswith("cannot run")
        else f"hookgate: handler {result.id!r} failed ({result.status}: {detail}) and is failClosed"
    )
    if tool_event:
        return Verdict(permission="deny", permission_reason=why)
    if blocks:
        return Verdict(block=True, reason=why)
    return Verdict(system_message=why)


def _effective(result: HandlerResult, *, tool_event: bool, blocks: bool) -> Verdict | None:
    """The verdict that takes part in the merge, after the fail-closed and soft-check rules."""
    if result.failed:
        if result.judgment:
            return Verdict(
                system_message=f"hookgate: check {result.id!r} could not run "
                f"({result.status}: {result.message or 'no detail'}); "
                "it neither blocked nor allowed"
            )
        if result.fail_closed:
            return failure_verdict(result, tool_event=tool_event, blocks=blocks)
        # fail open; a check that could not reach the state store says so (gateway.dispatcher._fail)
        return result.verdict if result.meta.get("store_error") else None
    verdict = result.verdict
    if verdict is None or result.status == "skipped":
        return verdict
    if result.judgment and (verdict.permission == "allow" or verdict.updated_input is not None):
        # An LLM may tighten a decision, never loosen one (nor rewrite what runs).
        verdict = verdict.replace(
            permission=None if verdict.permission == "allow" else verdict.permission,
            permission_reason=None if verdict.permission == "allow" else verdict.permission_reason,
            updated_input=None,
        )
    return verdict


def _join(parts: list[str]) -> str | None:
    parts = [p for p in parts if p]
    return "\n".join(parts) if parts else None


def merge(
    event: str, results: list[HandlerResult], *, tool_input: dict[str, Any] | None = None, blocks: bool = False
) -> Decision:
    """Merge handler results into one ``Decision`` (pure; results are sorted by ``order`` first).

    tool_input: the event's original ``tool_input`` (rewrites are merged over it). blocks: whether the
    event can block (see ``EventSpec``); with the event name it decides what a fail-closed failure becomes.
    """
    ordered = sorted(results, key=lambda r: r.order)
    for result in ordered:  # what a handler did is recorded even when its verdict takes no part
        if result.verdict is not None and result.verdict.side_effects and not result.side_effects:
            result.side_effects = list(result.verdict.side_effects)
    decision = Decision(event=event, results=ordered)
    reasons_by_level: dict[str, list[str]] = {}
    block_reasons: list[str] = []
    messages: list[str] = []
    stop_reasons: list[str] = []
    rewritten: dict[str, Any] | None = None
    for result in ordered:
        verdict = _effective(result, tool_event=event in PERMISSION_EVENTS, blocks=blocks)
        if verdict is None:
            continue
        if verdict.permission is not None:
            if PERMISSION_RANK[verdict.permission] > PERMISSION_RANK[decision.permission]:
                decision.permission = verdict.permission
            reasons_by_level.setdefault(verdict.permission, []).append(verdict.permission_reason or "")
        if verdict.block:
            decision.block = True
            block_reasons.append(verdict.reason or "")
        if verdict.updated_input is not None:
            base = rewritten if rewritten is not None else dict(tool_input or {})
            rewritten = {**base, **verdict.updated_input}
        if verdict.updated_output is not None:
            decision.updated_output = verdict.updated_output
        if verdict.additional_context:
            decision.additional_context.append(verdict.additional_context)
        if verdict.system_message:
            messages.append(verdict.system_message)
        if not verdict.continue_:
            decision.continue_ = False
            stop_reasons.append(verdict.stop_reason or "")
        decision.extra.update(verdict.extra)
    if decision.permission is not None:
        decision.permission_reason = _join(reasons_by_level.get(decision.permission, []))
    decision.reason = _join(block_reasons)
    decision.system_message = _join(messages)
    decision.stop_reason = _join(stop_reasons)
    if rewritten is not None and decision.permission not in ("deny", "defer") and not decision.block:
        decision.updated_input = rewritten
    return decision
