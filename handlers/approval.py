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
without a permission decision the deny is a block. ``meta["approval"]`` = ``{"id", "decided_by",
"status"}`` (the audit record reads it).
"""

from __future__ import annotations

import os
import time
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar

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
CLOCK_SLACK = 0.25
"""Seconds by which the loop's clock and the wall clock may disagree at the end of a wait."""
DEFAULT_MESSAGE = "Allow ${tool_name} ${tool_input}?"


def desk_for(ctx: RunContext) -> Desk:
    """The ``Desk`` shared by every approval handler of ``ctx`` (store, channels, wake-ups)."""
    from gateway.approvals.desk import Desk
    from gateway.approvals.trail import audit_trail
    from gateway.store import default_state_dir

    config = ctx.config
    state_dir = os.path.expanduser(config.settings.get("state_dir") or default_state_dir())
    desk: Desk = ctx.get_resource("approvals", lambda: Desk(ctx.state, config.channels, state_dir,
                                                            trail=audit_trail(config)))
    if desk.channels_config is not config.channels:  # serve reloaded the config and kept its resources
        desk.reconfigure(config.channels, trail=audit_trail(config))
    return desk


def render_message(template: str | None, event: HookEvent) -> str:
    """``message`` with ``${path}`` placeholders filled from the event (a path the event lacks renders as
    ``<no path>``, so a message never fails the gate)."""
    from gateway.errors import HandlerError
    from handlers.mcp_tool import substitute

    try:
        text = substitute(template or DEFAULT_MESSAGE, event, "message")
    except HandlerError as exc:
        text = f"{template} [{exc}]"
    return text if isinstance(text, str) else str(text)


class ApprovalHandler(Handler):
    """Asks a person and waits for the answer (see module docstring)."""

    type: ClassVar[str] = "approval"
    default_timeout: ClassVar[float] = 120.0

    async def run(self, event: HookEvent, ctx: RunContext) -> tuple[Verdict, dict[str, Any]]:
        import asyncio

        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(self.spec.timeout - MARGIN, 0.0)
        desk = desk_for(ctx)
        record = await asyncio.to_thread(self._open, desk, event, deadline - loop.time())
        if record.status == "pending":
            record = await self._wait(desk, record, deadline)
        return self._verdict(desk, record, event)

    def _open(self, desk: Desk, event: HookEvent, budget: float) -> ApprovalRecord:
        """The call's request: found (an answer given earlier, or still pending) or created and posted."""
        from gateway.approvals.record import ApprovalRecord, fingerprint, new_id, request_key

        desk.sweep()
        payload = event.payload
        tool_use_id = payload.get("tool_use_id") if isinstance(payload.get("tool_use_id"), str) else None
        print_ = fingerprint(event.session_id, event.tool_name, event.tool_input)
        key = request_key(event.session_id, tool_use_id, print_)
        found = desk.find(key, print_)
        if found is not None:
            return found
        now = time.time()
        options = self.spec.options
        record = ApprovalRecord(
            id=new_id(), key=key, fingerprint=print_, status="pending", created_at=now,
            expires_at=now + max(budget, 0.0), session_id=event.session_id,
            tool_use_id=tool_use_id, tool_name=event.tool_name, tool_input=event.tool_input, event=event.name,
            message=render_message(options.get("message"), event), channel=options.get("channel"),
            approvers=list(options.get("approvers") or []), on_timeout=options.get("on_timeout") or "deny",
            cwd=event.cwd)
        stored, created = desk.create(record)
        return desk.post(stored) if created else stored

    async def _wait(self, desk: Desk, record: ApprovalRecord, deadline: float) -> ApprovalRecord:
        """Wait for ``record`` to leave pending, until it expires or the handler's deadline."""
        import asyncio

        from gateway.approvals.wake import RECHECK

        loop = asyncio.get_running_loop()
        async with desk.waker.listen(record.id) as listener:
            while True:
                current = await asyncio.to_thread(desk.store.approval_get, record.id)
                record = current or record
                if record.status != "pending":
                    return record
                left = min(record.expires_at - time.time(), deadline - loop.time())
                if left <= 0:
                    break
                await listener.wait(min(left, RECHECK))
        if time.time() >= record.expires_at - CLOCK_SLACK:
            return await asyncio.to_thread(desk.expire, record)
        return record  # this process's time is up, the request's is not: a retried call finds it

    def _verdict(self, desk: Desk, record: ApprovalRecord, event: HookEvent) -> tuple[Verdict, dict[str, Any]]:
        meta = {"approval": {"id": record.id, "decided_by": record.decided_by, "status": record.status}}
        why = f" ({record.reason})" if record.reason else ""
        if record.status == "approved":
            desk.consume(record)
            return Verdict(permission="allow", permission_reason=f"approved by {record.decided_by}{why} "
                                                                 f"[approval {record.id}]"), meta
        if record.status == "rejected":
            desk.consume(record)
            return self._no(event, f"rejected by {record.decided_by}{why} [approval {record.id}]", "deny"), meta
        if record.status == "pending":
            text = (f"approval {record.id} is still pending (nobody answered in time); once it is approved, "
                    "the same call will be allowed")
        elif record.status == "expired":
            text = f"approval {record.id} expired with no answer"
        else:
            text = f"approval {record.id} was {record.status}{why}"
        return self._no(event, text, record.on_timeout), meta

    @staticmethod
    def _no(event: HookEvent, text: str, how: str) -> Verdict:
        from gateway.events import PERMISSION_EVENTS

        if event.name in PERMISSION_EVENTS:
            return Verdict(permission="ask" if how == "ask" else "deny", permission_reason=f"hookgate: {text}")
        if event.spec.blocks and how != "ask":
            return Verdict(block=True, reason=f"hookgate: {text}")
        return Verdict(system_message=f"hookgate: {text}")

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
        from handlers.mcp_tool import placeholder_problems

        return placeholder_problems(spec.options.get("message") or "", "message")


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
