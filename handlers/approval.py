"""The ``approval`` handler: a person decides whether the call runs (deterministic: no model).

Config::

    - type: approval
      if: "Bash(git push *)"          # optional, as on every handler
      channel: ops                    # a name under `channels:`; omit it for the built-in inbox only
      timeout: 120                    # seconds to wait for an answer
      onTimeout: deny                 # deny (default) | ask
      approvers: ["U024BE7LH"]        # who may answer through a channel (user ids or names); empty: anyone
      message: "Run ${tool_input.command} in ${cwd}?"

One run: expire what is due (the sweeper) -> find the call's open request (by ``(session_id,
tool_use_id)``, else by the hash of (session, tool, input): see ``gateway.approvals.record``) -> an
answer already given (while nobody waited) is consumed and returned at once; a pending request is
waited on; otherwise a new request is stored and posted to the channel -> wait, without polling, until
it is answered or ``timeout`` runs out -> expired: ``onTimeout``.

The wait always ends before the handler's own deadline (``timeout`` minus ``MARGIN``), so the answer
is given before the dispatcher, and the host above it, would cut the hook off: a killed hook is an
allow on most hosts. Answers: approved -> ``allow`` (another handler's deny still wins the merge);
rejected -> ``deny`` naming who and why; expired or never posted -> ``deny`` or ``ask``. On events
without a permission decision (no host prompt, so ``ask`` is a deny there too) the deny is a block, and
on events that cannot be blocked (SessionStart) ``continue: false``. ``meta["approval"]`` = ``{"id", "decided_by",
"status"}`` (the audit record reads it).

One approval releases one call: identical calls waiting on one request take the answer through
``Desk.consume``; only the first runs, each other one opens a request of its own. Under ``hookgate
serve`` a wait whose HTTP caller hung up (``gateway.caller``: looked at every ``CALLER_RECHECK`` s and
before consuming) ends without consuming, so the approval waits for the retry.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from gateway import caller
from gateway.decision import Verdict
from handlers.base import Handler

if TYPE_CHECKING:
    from gateway.approvals.desk import Desk
    from gateway.approvals.record import ApprovalRecord
    from gateway.config import HandlerSpec
    from gateway.context import RunContext
    from gateway.events import HookEvent

MARGIN = 0.5
"""Seconds the wait leaves before the handler's deadline, for the answer to be written."""
UPDATE_BUDGET = 2.0
"""Seconds at most kept back at the end of a wait to update the channel message (a quarter of a short timeout)."""
CLOCK_SLACK = 0.25
"""Seconds by which the loop's clock and the wall clock may disagree at the end of a wait."""
CALLER_RECHECK = 2.0
"""Under ``hookgate serve``, how often a wait looks whether its HTTP caller hung up (``gateway.caller``)."""
DEFAULT_MESSAGE = "Allow ${tool_name} ${tool_input}?"
T = TypeVar("T")


def desk_for(ctx: RunContext) -> Desk:
    """The ``Desk`` shared by every approval handler of ``ctx`` (store, channels, wake-ups)."""
    from gateway.approvals.desk import Desk
    from gateway.approvals.trail import audit_trail
    from gateway.store import default_state_dir

    config = ctx.config
    state_dir = os.path.expanduser(config.settings.get("state_dir") or default_state_dir())
    redact = (config.audit or {}).get("redact") or ()
    desk: Desk = ctx.get_resource(
        "approvals", lambda: Desk(ctx.state, config.channels, state_dir, trail=audit_trail(config), redact=redact)
    )
    if desk.channels_config is not config.channels:  # serve reloaded the config and kept its resources
        desk.reconfigure(config.channels, trail=audit_trail(config), redact=redact)
    return desk


def render_message(template: str | None, event: HookEvent) -> str:
    """``message`` with ``${path}`` placeholders filled from the event as text (``handlers.mcp_tool.fill_text``:
    objects as JSON). A path the event lacks is replaced by the problem in brackets and every other
    placeholder is still filled: a message never fails the gate, nor loses what it was meant to show."""
    from gateway.approvals.record import printable
    from handlers.mcp_tool import fill_text

    return printable(fill_text(template or DEFAULT_MESSAGE, event))


class ApprovalHandler(Handler):
    """Asks a person and waits for the answer (see module docstring)."""

    type: ClassVar[str] = "approval"
    default_timeout: ClassVar[float] = 120.0
    fails_closed: ClassVar[bool] = True  # a gate that crashed or timed out must not let the call through

    async def run(self, event: HookEvent, ctx: RunContext) -> tuple[Verdict, dict[str, Any]]:
        import asyncio

        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(self.spec.timeout - MARGIN, 0.0)
        # time kept back at the end for the channel message ("Expired"), when there is one
        reserve = min(UPDATE_BUDGET, self.spec.timeout / 4) if self.spec.options.get("channel") else 0.0
        desk = desk_for(ctx)
        done: list[str] = []
        while True:
            record, created = await asyncio.to_thread(self._open, desk, event, deadline - reserve - loop.time())
            if record.unreadable:
                return await asyncio.to_thread(self._damaged, desk, record, event, done)
            if created:
                done.append(f"created approval request {record.id}")
            if created and record.channel is not None:
                posted = await _bounded(desk.post, record, seconds=deadline - reserve - loop.time())
                record = (
                    posted
                    if posted is not None
                    else await asyncio.to_thread(
                        desk.cancel, record, f"channel {record.channel!r} did not answer in time"
                    )
                )
                if record.ref:
                    done.append(f"posted it to channel {record.channel}")
            if record.status == "pending":
                record = await self._wait(desk, record, deadline - reserve)
                if record.unreadable:
                    return await asyncio.to_thread(self._damaged, desk, record, event, done)
                if record.status == "expired" and record.decided_by == "hookgate:timeout" and reserve:
                    await _bounded(desk.show, record, seconds=deadline - loop.time())
            if record.status == "approved" and await caller.gone():
                # hookgate serve, and the host hung up (its http hook timed out): the approval waits,
                # unconsumed, for the retry (the model calls the tool again), which gets it at once
                done.append(f"approval {record.id} kept for the retry: the caller stopped waiting")
                return self._unreleased(
                    event, record, "was given after the caller stopped waiting; the retry gets it", "kept", done
                )
            if record.status != "approved" or await asyncio.to_thread(desk.consume, record):
                break
            # an identical call waiting beside this one took the approval (one approval, one call): ask anew
            done.append(f"approval {record.id} went to another identical call")
            if deadline - reserve - loop.time() <= 1.0:
                return self._unreleased(
                    event, record, "went to another identical call; this one needs its own", "taken", done
                )
        verdict, meta = self._verdict(desk, record, event)
        verdict.side_effects = done
        return verdict, meta

    def _open(self, desk: Desk, event: HookEvent, budget: float) -> tuple[ApprovalRecord, bool]:
        """The call's request and whether it is new: found (an answer given earlier, or still pending) or
        created (not yet posted)."""
        from gateway.approvals.record import ApprovalRecord, fingerprint, gate_of, new_id, request_key

        payload = event.payload
        options = self.spec.options
        tool_use_id = payload.get("tool_use_id") if isinstance(payload.get("tool_use_id"), str) else None
        gate = gate_of(self.spec.id, options)
        print_ = fingerprint(event.session_id, event.tool_name, event.tool_input, gate, event.cwd)
        key = request_key(event.session_id, tool_use_id, print_)
        found = desk.lookup(key, print_)  # expires what is due first (one store step)
        if found is not None:
            return found, False
        now = time.time()
        record = ApprovalRecord(
            id=new_id(),
            key=key,
            fingerprint=print_,
            status="pending",
            created_at=now,
            expires_at=now + max(budget, 0.0),
            session_id=event.session_id,
            tool_use_id=tool_use_id,
            tool_name=event.tool_name,
            tool_input=event.tool_input,
            event=event.name,
            message=render_message(options.get("message"), event),
            channel=options.get("channel"),
            approvers=list(options.get("approvers") or []),
            on_timeout=options.get("on_timeout") or "deny",
            cwd=event.cwd,
        )
        return desk.create(record)

    async def _wait(self, desk: Desk, record: ApprovalRecord, deadline: float) -> ApprovalRecord:
        """Wait for ``record`` to leave pending, until it expires or the handler's deadline."""
        import asyncio

        from gateway.approvals.wake import recheck_interval, stopping

        loop = asyncio.get_running_loop()
        recheck = recheck_interval(desk.store.kind)
        if caller.watched():  # hookgate serve: look every few seconds whether the host still waits
            recheck = min(recheck, CALLER_RECHECK)
        async with desk.waker.listen(record.id) as listener:
            while True:
                current = await asyncio.to_thread(desk.store.approval_get, record.id)
                record = current or record
                if record.status != "pending" or stopping():  # answered, or serve is shutting down
                    return record
                if await caller.gone():  # the host gave up: the request stays pending for its retry
                    return record
                left = min(record.expires_at - time.time(), deadline - loop.time())
                if left <= 0:
                    break
                await listener.wait(min(left, recheck))
        if time.time() >= record.expires_at - CLOCK_SLACK:
            return await asyncio.to_thread(desk.expire, record, update_channel=False)
        return record  # this process's time is up, the request's is not: a retried call finds it

    def _verdict(self, desk: Desk, record: ApprovalRecord, event: HookEvent) -> tuple[Verdict, dict[str, Any]]:
        meta = {"approval": {"id": record.id, "decided_by": record.decided_by, "status": record.status}}
        why = f" ({record.reason})" if record.reason else ""
        if record.status == "approved":  # consumed by ``run`` (the first consumer only gets here)
            return Verdict(
                permission="allow",
                permission_reason=f"hookgate: approved by {record.decided_by}{why} [approval {record.id}]",
            ), meta
        if record.status == "rejected":
            desk.consume(record)
            return self._no(event, f"rejected by {record.decided_by}{why} [approval {record.id}]", "deny"), meta
        if record.status == "pending":
            from gateway.approvals.wake import stopping

            why_pending = "hookgate serve is shutting down" if stopping() else "nobody answered in time"
            text = (
                f"approval {record.id} is still pending ({why_pending}); once it is approved, "
                "the same call will be allowed"
            )
        elif record.status == "expired":
            text = f"approval {record.id} expired with no answer"
        else:
            text = f"approval {record.id} was {record.status}{why}"
        return self._no(event, text, record.on_timeout), meta

    def _damaged(
        self, desk: Desk, record: ApprovalRecord, event: HookEvent, done: list[str]
    ) -> tuple[Verdict, dict[str, Any]]:
        """The answer when the call's request is a row damaged in the database (``record.unreadable``): a
        deny, whatever its status says. An answered one is consumed, so the next call asks anew; a pending
        one stays until someone rejects it (``hookgate approvals reject ID``) or it expires."""
        if record.status in ("approved", "rejected") and desk.consume(record):
            done.append(f"approval {record.id} is damaged: consumed without releasing the call")
            after = "the next call asks anew"
        else:
            after = f"reject it (hookgate approvals reject {record.id}), then the call asks anew"
        verdict = self._no(event, f"approval {record.id}: {record.unreadable}; {after}", "deny")
        verdict.side_effects = done
        return verdict, {"approval": {"id": record.id, "decided_by": record.decided_by, "status": "unreadable"}}

    def _unreleased(
        self, event: HookEvent, record: ApprovalRecord, what: str, status: str, done: list[str]
    ) -> tuple[Verdict, dict[str, Any]]:
        """The answer when an approval was given but is not this call's: ``onTimeout``'s verdict saying
        ``approval ID <what>``; ``meta["approval"]`` with ``status`` ("kept" for the retry, "taken" by
        another identical call)."""
        verdict = self._no(
            event, f"approval {record.id} {what}; this call needs an approval of its own", record.on_timeout
        )
        verdict.side_effects = done
        return verdict, {"approval": {"id": record.id, "decided_by": record.decided_by, "status": status}}

    @staticmethod
    def _no(event: HookEvent, text: str, how: str) -> Verdict:
        """The gate closed: deny, or ``ask`` (``how``) where the host has a permission prompt to hand the call
        to. Elsewhere there is no prompt, so ``ask`` closes the gate as a deny does: a block, or on an event
        that cannot be blocked (SessionStart) ``continue: false``, as a class hook stops a session; never a
        message alone, which would let the action go on with nobody's approval."""
        from gateway.events import PERMISSION_EVENTS

        if event.name in PERMISSION_EVENTS:
            return Verdict(permission="ask" if how == "ask" else "deny", permission_reason=f"hookgate: {text}")
        if event.spec.blocks:
            return Verdict(block=True, reason=f"hookgate: {text}")
        return Verdict(continue_=False, stop_reason=f"hookgate: {text}", system_message=f"hookgate: {text}")

    def dedup_key(self) -> Any:
        return (self.spec.type, self.spec.id, repr(sorted(self.spec.options.items())))

    def describe(self) -> str:
        channel = self.spec.options.get("channel")
        return f"approval via {channel}" if channel else "approval (inbox)"

    @classmethod
    def options_model(cls) -> Any:
        return _options_model()

    @classmethod
    def check(cls, spec: HandlerSpec, base_dir: str) -> list[str]:
        """The message's placeholders; and the settings that would open the gate without a person's answer
        for each call (an error for ``validate``; at run time the handler fails closed: a deny)."""
        from handlers.mcp_tool import placeholder_problems

        problems = placeholder_problems(spec.options.get("message") or "", "message")
        if spec.cache_ttl:
            problems.append(
                "cacheTtl: not allowed on an approval handler: one approval releases one call, and a cached "
                f"answer would release every identical call for {spec.cache_ttl:g} s"
            )
        if spec.async_:
            problems.append(
                "async: not allowed on an approval handler: a handler in the background cannot decide, so the "
                "call would run before anyone answered"
            )
        return problems

    @classmethod
    def event_advice(cls, spec: HandlerSpec, event: str) -> list[str]:
        from handlers.mcp_tool import placeholder_roots

        return placeholder_roots(spec.options.get("message") or "", event, "message")


async def _bounded(fn: Callable[..., T], *args: Any, seconds: float) -> T | None:
    """``fn(*args)`` in a daemon thread, awaited for at most ``seconds``: its result, or None when it took
    longer or raised. A channel call stuck in its SDK never holds the answer (nor, being a daemon thread,
    the process's exit) past the handler's deadline."""
    import asyncio
    import threading

    loop = asyncio.get_running_loop()
    future: asyncio.Future[T | None] = loop.create_future()

    def settle(value: T | None) -> None:
        if not future.done():
            future.set_result(value)

    def work() -> None:
        try:
            value: T | None = fn(*args)
        except Exception:  # the desk logs channel failures itself
            value = None
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(settle, value)

    threading.Thread(target=work, name="hookgate-approval-channel", daemon=True).start()
    try:
        return await asyncio.wait_for(asyncio.shield(future), max(seconds, 0.01))
    except TimeoutError:
        return None


@cache
def _options_model() -> Any:
    from typing import Literal

    from pydantic import BaseModel, ConfigDict, Field

    class ApprovalOptions(BaseModel):
        model_config = ConfigDict(extra="allow", populate_by_name=True)
        channel: str | None = Field(None, min_length=1)
        on_timeout: Literal["deny", "ask"] = Field("deny", alias="onTimeout")
        approvers: list[str] = Field(default_factory=list)
        message: str | None = None

    return ApprovalOptions
