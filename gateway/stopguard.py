"""The Stop-loop guard: an LLM check may keep an agent from stopping only so many times in a row.

On Stop and SubagentStop, every time a judgment handler (prompt, agent) blocks, a counter in the
state store (``settings.stateDir``, SQLite, safe for concurrent hook processes) goes up by one. The
counter is kept per session: Stop events count under their ``session_id``, SubagentStop events under
``session_id/agent_id`` (each subagent has its own count). Once it reaches
``settings.stopBlockLimit`` (default 3), further judgment checks on that session's stops are skipped
(``HandlerResult`` status ``skipped``) and the stop goes through with a ``systemMessage`` saying so.

The count is of *consecutive* blocks, like Claude Code's own cap: it goes back to zero when a stop is
not held back by a judgment check, that is when no judgment handler blocked and either one of them
answered ok (status ok/cached without a block: the check is satisfied) or no handler blocked at all
(the stop goes through; this includes the guard's own skip). So the next turn's Stop is checked again.
A judgment check that failed (error, timeout) while a deterministic handler blocked the stop leaves the
count as it is; so does the guard's skip when a deterministic handler blocks (the loop is still on).
Deterministic handlers (command, http, mcp_tool) are never skipped and never counted.
``stopBlockLimit: 0`` turns the guard off. Events without a ``session_id`` are not guarded.

Parallel Stops of one session (several hook processes, or concurrent requests to ``hookgate serve``)
cannot all block: before the judgment handlers run, ``skip`` *reserves* a block atomically in the state
store (``Store.counter_add_capped``: +1 only while below the limit), so at most ``stopBlockLimit``
events get to run their LLM checks; the others are skipped at once. ``record`` then keeps the
reservation when a judgment check blocked, resets the count when one answered ok, and gives the
reservation back when they failed. The reset that a skipped stop makes (the stop went through) waits
until no reserved check of that session is still running (an in-flight counter in the store, kept in
ten-minute buckets so a process killed mid-call cannot hold it for ever); else the stops of one burst
would reset the count for each other.

Cost: two store steps per guarded stop, whatever happens: ``Store.counter_reserve`` before the
handlers (the capped +1 and, when it added, the in-flight +1; else the count for the message) and
``Store.counter_settle`` after them (keep, reset or give back the reservation, or reset when no
reserved check is running, together with the in-flight -1); on PostgreSQL each is one statement.

When the state store cannot be reached the checks run as usual (the guard only ever lets a stop
through; Claude Code's own cap still ends a loop) and a system message says so.

The dispatcher calls ``StopGuard.for_event`` and ``skip`` before running handlers, ``record`` after,
and ``done`` in any case; the merge itself stays a pure function of the results.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeVar

from gateway.decision import HandlerResult, Verdict
from gateway.events import STOP_EVENTS

if TYPE_CHECKING:
    from collections.abc import Callable

    from gateway.config.specs import HandlerSpec
    from gateway.context import RunContext
    from gateway.events import HookEvent


class Chosen(Protocol):
    """What the guard reads of a selected handler (``gateway.dispatcher.Selected``)."""

    spec: HandlerSpec
    order: int


S = TypeVar("S", bound=Chosen)

SCOPE = "stop-guard"
INFLIGHT_SCOPE = "stop-guard-inflight"
INFLIGHT_BUCKET_S = 600
DEFAULT_LIMIT = 3


def _bucket(offset: int = 0) -> int:
    import time

    return int(time.time() // INFLIGHT_BUCKET_S) - offset


def guard_key(event: HookEvent) -> str | None:
    """The counter key for ``event``: ``session_id`` (Stop) or ``session_id/agent_id`` (SubagentStop)."""
    if event.name not in STOP_EVENTS or not event.session_id:
        return None
    agent = event.get("agent_id")
    if event.name == "SubagentStop" and isinstance(agent, str) and agent:
        return f"{event.session_id}/{agent}"
    return event.session_id


class StopGuard:
    """The guard for one Stop/SubagentStop event (see module docstring)."""

    def __init__(self, ctx: RunContext, key: str, limit: int, event_name: str, judgment_ids: set[str]) -> None:
        self.ctx = ctx
        self.key = key
        self.limit = limit
        self.event_name = event_name
        self.judgment_ids = judgment_ids
        self.unavailable: str | None = None  # the store's error, when it could not be used
        self.reserved = False
        self.inflight_key: str | None = None

    @classmethod
    def for_event(
        cls, event: HookEvent, ctx: RunContext, selected: list[S], is_judgment: Callable[[S], bool]
    ) -> StopGuard | None:
        """A guard when ``event`` is a Stop/SubagentStop with a session and a judgment handler runs."""
        key = guard_key(event)
        judgment_ids = {s.spec.id for s in selected if is_judgment(s)} if key is not None else set()
        if key is None or not judgment_ids:
            return None
        limit = int(ctx.config.settings.get("stop_block_limit", DEFAULT_LIMIT))
        if limit <= 0:
            return None
        return cls(ctx, key, limit, event.name, judgment_ids)

    def blocks_so_far(self) -> int:
        """The session's consecutive judgment blocks (sync: tests, CLI)."""
        return self.ctx.state.counter_get(SCOPE, self.key)

    async def skip(self, selected: list[S]) -> tuple[list[S], list[HandlerResult]]:
        """Reserve this stop's block, or, when the limit is reached, split ``selected`` into handlers to
        run and skipped results. When the state store cannot be reached the checks run as usual and
        ``record`` says so."""
        from gateway.errors import StoreError

        try:
            state = self.ctx.state  # opening the store may fail too
            inflight_key = f"{self.key}@{_bucket()}"
            added, count = await state.acounter_reserve(SCOPE, self.key, self.limit, (INFLIGHT_SCOPE, inflight_key))
            self.reserved = added is not None
            if self.reserved:
                self.inflight_key = inflight_key
                return selected, []
        except StoreError as exc:
            self.unavailable = str(exc)
            return selected, []
        run = [s for s in selected if s.spec.id not in self.judgment_ids]
        skipped = [s for s in selected if s.spec.id in self.judgment_ids]
        names = ", ".join(repr(s.spec.id) for s in skipped)
        message = (
            f"hookgate: {self.event_name} check(s) {names} skipped: LLM checks already blocked this "
            f"session's stop {count} time(s) (settings.stopBlockLimit = {self.limit}), so the stop "
            "goes through"
        )
        results = [
            HandlerResult(
                id=s.spec.id,
                type=s.spec.type,
                status="skipped",
                order=s.order,
                judgment=True,
                message="stopBlockLimit reached for this session",
                verdict=Verdict(system_message=message) if i == 0 else None,
            )
            for i, s in enumerate(skipped)
        ]
        return run, results

    async def record(self, results: list[HandlerResult]) -> list[HandlerResult]:
        """Settle the count after the handlers ran (``results``: the ones that ran, not the skipped ones):
        a reserved block stays when a judgment handler blocked this stop; the count goes back to 0 when no
        judgment handler blocked and one said ok, or when nothing held the stop back at all (see module
        docstring); a reservation whose checks all failed is given back. Returns a skipped result
        carrying a system message when the store could not be used, else nothing."""
        from gateway.errors import StoreError

        answered = [r for r in results if r.id in self.judgment_ids and r.status in ("ok", "cached")]
        blocked = any(r.verdict is not None and r.verdict.block for r in answered)
        goes_through = not any(_holds_back(r) for r in results)
        action: str | None = None
        busy: tuple[tuple[str, str], ...] = ()
        if self.unavailable is not None:
            pass
        elif self.reserved:
            action = "keep" if blocked else ("reset" if answered or goes_through else "release")
        elif goes_through:  # a skipped stop went through: reset, unless a reserved check is still running
            action = "reset_if_idle"
            busy = tuple((INFLIGHT_SCOPE, f"{self.key}@{_bucket(offset)}") for offset in (0, 1))
        if action is not None:
            # one step settles the count and ends this event's in-flight mark (``done`` has nothing left;
            # never sent twice: a lost reply may hide a commit)
            inflight, self.inflight_key = self.inflight_key, None
            try:
                await self.ctx.state.acounter_settle(
                    SCOPE, self.key, action, inflight=(INFLIGHT_SCOPE, inflight) if inflight else None, busy=busy
                )
            except StoreError as exc:
                self.unavailable = str(exc)
        if self.unavailable is None:
            return []
        message = (
            f"hookgate: the Stop-loop guard (settings.stopBlockLimit = {self.limit}) could not count this "
            f"session's stops: {self.unavailable}"
        )
        return [
            HandlerResult(
                id="stop-guard",
                type="builtin",
                status="skipped",
                message=self.unavailable,
                order=len(results) + 1000,
                verdict=Verdict(system_message=message),
            )
        ]

    async def done(self) -> None:
        """This event's reserved checks are over (called in any case, also when they were cancelled)."""
        import contextlib

        from gateway.errors import StoreError

        key, self.inflight_key = self.inflight_key, None
        if key is not None:
            with contextlib.suppress(StoreError):  # else the bucket expires on its own
                await self.ctx.state.acounter_add(INFLIGHT_SCOPE, key, -1)


def _holds_back(result: HandlerResult) -> bool:
    """True when ``result`` keeps the agent from stopping: a block, or a failed ``failClosed`` handler."""
    if result.status in ("ok", "cached"):
        return result.verdict is not None and result.verdict.block
    return result.fail_closed and result.status in ("error", "timeout")
