"""The re-check of a rewrite: the tool input a PreToolUse (or PermissionRequest) decision hands the host
(``updatedInput``) is what runs, so the deterministic handlers that did not write it judge it too.

Handlers of one event run side by side on the event as it came (Claude Code's model): a guard that
passed ``ls`` never sees that another handler, in another group or config, rewrote it to ``rm -rf ~``.
So after the merge, when the decision rewrites the tool input and neither denies nor blocks, the
dispatcher selects the handlers again for the rewritten event (an ``if`` rule may fit it now:
``Bash(rm *)``) and runs, once more and on it, every one that is deterministic (command, http, mcp_tool,
python, class hooks, built-ins) and did not already see it (did not write it, nor ran after its writer in
one ``sequential`` group or chain). Their deny, ask, block or stop joins the decision (most restrictive
wins, as always); nothing else of theirs counts: not an allow, not context or messages (the first pass
gave those), not a rewrite (a rewrite is checked once, so two handlers that rewrite each other's output
cannot loop). LLM checks (prompt, agent) are not asked
again (a second model call for every rewrite), nor are approvals (the person would be asked twice) nor
``async`` handlers (they never decide). Costs nothing when no rewrite happens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gateway.context import RunContext
    from gateway.decision import Decision, HandlerResult, Verdict
    from gateway.events import HookEvent

REWRITE_EVENTS = frozenset({"PreToolUse", "PermissionRequest"})
NOT_AGAIN = frozenset({"prompt", "agent", "approval"})
"""Handler types not run again on a rewrite (see module docstring)."""


def wanted(event: HookEvent, decision: Decision) -> bool:
    """True when ``decision`` rewrites ``event``'s tool input into something else and lets it run (or asks)."""
    return (
        decision.updated_input is not None
        and event.name in REWRITE_EVENTS
        and decision.permission != "deny"
        and not decision.block
        and decision.updated_input != event.tool_input
    )


async def recheck(
    dispatcher: Any,
    event: HookEvent,
    decision: Decision,
    selected: list[Any],
    results: list[HandlerResult],
    ctx: RunContext,
) -> list[HandlerResult]:
    """The results of the handlers that judge the rewritten input (see module docstring), each marked
    ``meta["recheck"] = True`` and with its own rewrite dropped; [] when none is to run. ``dispatcher``: the
    ``gateway.dispatcher.Dispatcher`` that made ``results`` from ``selected`` (its ``Selected`` items)."""
    assert decision.updated_input is not None
    rewriters = [r for r in results if r.verdict is not None and r.verdict.updated_input is not None]
    saw_it = _saw_the_rewrite(dispatcher, event.name, selected, rewriters)
    names = {r.id for r in rewriters}
    rewritten = event.with_fields(tool_input=dict(decision.updated_input))
    again = [
        item
        for item in dispatcher.select(rewritten)
        if item.spec.type not in NOT_AGAIN
        and not item.spec.async_
        and item.spec.id not in names
        and item.spec.id not in saw_it
        and not dispatcher.handler(item.spec).judgment
    ]
    if not again:
        return []
    checked: list[HandlerResult] = await dispatcher.executor_for(again).run(dispatcher, rewritten, again, ctx)
    for result in checked:
        result.meta["recheck"] = True
        if result.verdict is not None:
            result.verdict = _restrictive_part(result.verdict)
    return checked


def _restrictive_part(verdict: Verdict) -> Verdict:
    """What of a second look counts: a deny, ask or defer, a block, a stop (never an allow, a rewrite,
    context or a message: those were the first pass's to give)."""
    from gateway.decision import Verdict

    holds = verdict.permission in ("deny", "ask", "defer")
    return Verdict(
        permission=verdict.permission if holds else None,
        permission_reason=verdict.permission_reason if holds else None,
        block=verdict.block,
        reason=verdict.reason if verdict.block else None,
        continue_=verdict.continue_,
        stop_reason=None if verdict.continue_ else verdict.stop_reason,
        side_effects=list(verdict.side_effects),
    )


def _saw_the_rewrite(dispatcher: Any, name: str, selected: list[Any], rewriters: list[HandlerResult]) -> set[str]:
    """Ids of the handlers that already ran on the rewrite: with one rewriter in a ``sequential`` group or
    in the event's chain of class hooks and built-ins, the ones after it there (each saw what it wrote)."""
    if len(rewriters) != 1:
        return set()
    writer = next((item for item in selected if item.order == rewriters[0].order), None)
    key = None if writer is None else _sequence(dispatcher, name, writer)
    if writer is None or key is None:
        return set()
    return {item.spec.id for item in selected if item.order > writer.order and _sequence(dispatcher, name, item) == key}


def _sequence(dispatcher: Any, name: str, item: Any) -> object:
    """Which sequence ``item`` ran in: its group's index (``sequential``), ``"chain"``, or None (side by side),
    as ``Executor.run`` forms them."""
    if dispatcher.config.hooks[name][item.group].sequential:
        return item.group
    if dispatcher.handler(item.spec).chained():
        return "chain"
    return None
