"""``Desk``: the one place approval requests are created, found, answered, expired and consumed.

Every transition goes ``store.approval_decide`` (atomic, once) -> wake the waiters (``wake.Waker``) ->
the audit trail (``gateway.audit.record_approval``) -> the channel's message is
updated (``update_channel=False`` leaves that to the caller, e.g. a callback route that must answer the
platform within 3 s). An answer to a request that is no longer pending is refused: ``Outcome.refused``
says why, and the channel's message says so too.

Who decided, as recorded in ``decided_by``: ``<channel type>:<user id>`` for a channel answer,
``cli:<login>`` for ``hookgate approvals approve``, ``console:ui`` for the console, ``api:<by>`` for an
answer over serve's token API (``api:anonymous`` when it gives no ``by``),
``hookgate:timeout`` / ``hookgate:sweeper`` for expiry, ``hookgate:channel`` for a request whose
channel could not post it.

Nothing event-derived is stored verbatim: ``create`` keeps the request's ``tool_input``, ``tool_name``,
``message``, ``cwd``, ``session_id`` and ``tool_use_id`` redacted with the audit trail's redaction
(``gateway.audit.redact``: the default patterns plus ``audit.redact``; no truncation, so an approver
sees the whole redacted call), and every answer's or cancellation's ``reason`` too (also with its
non-printable characters written as escapes: ``gateway.approvals.record.printable``). The request's key and
fingerprint are computed by the caller from the unredacted call, so an answer stays bound to exactly the
input that was asked about. Channels post the stored (redacted) request.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from gateway.approvals.channels.base import Answer, Outcome
from gateway.approvals.record import printable
from gateway.approvals.wake import Waker
from gateway.audit.redact import Redactor
from gateway.errors import ChannelError, HookgateError
from gateway.plain import utf8_text

if TYPE_CHECKING:
    from gateway.approvals.channels.base import Channel
    from gateway.approvals.record import ApprovalRecord
    from gateway.store.base import Store

log = logging.getLogger("hookgate.approvals")

MAX_REASON = 1000
"""Characters of an answer's reason kept (it is quoted in the agent's permissionDecisionReason): the
answer routes' limit, for the CLI's ``--reason`` as for the HTTP routes and channels."""
UNCUT = 1 << 40
"""``max_value`` of the approvals' redactor: requests are redacted, never truncated."""


def wake_dir(state_dir: str) -> str:
    """Where waiters' FIFOs live: ``<state_dir>/approvals-wake``."""
    return os.path.join(state_dir, "approvals-wake")


def storable(value: Any) -> Any:
    """``value`` (a str, or JSON-like data: keys and values) with every lone surrogate written as its
    ``\\udXXX`` escape. A JSON event can hold one (``"\\ud800"``, a model's output cut inside a surrogate
    pair), and neither SQLite nor PostgreSQL can store it as text: the request could never be created,
    so the call could never be approved. The request's key and fingerprint hash the call as it came."""
    if isinstance(value, str):
        return utf8_text(value)
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [storable(v) for v in value]
    return value


class Desk:
    """Approval requests over ``store`` (see module docstring).

    channels: the normalized ``channels:`` section. state_dir: the local state folder (FIFOs for
    wake-ups). trail: called as ``trail(record, transition)`` after each transition (the audit hook;
    ``transition`` is created | approved | rejected | expired | cancelled | consumed). redact: the
    ``audit.redact`` patterns (the default patterns always apply).
    """

    def __init__(
        self,
        store: Store,
        channels: dict[str, dict[str, Any]],
        state_dir: str,
        trail: Any = None,
        redact: tuple[str, ...] | list[str] = (),
    ) -> None:
        self.store = store
        self.redactor = Redactor(redact, max_value=UNCUT)
        self.channels_config = channels
        self.waker = Waker(wake_dir(state_dir))
        self._channels: dict[str, Channel] = {}
        self._trail = trail

    def reconfigure(
        self, channels: dict[str, dict[str, Any]], trail: Any = None, redact: tuple[str, ...] | list[str] = ()
    ) -> None:
        """Use a reloaded ``channels:`` section (channel clients are built again on next use) and ``audit.redact``."""
        self.channels_config = channels
        self.redactor = Redactor(redact, max_value=UNCUT)
        self._channels = {}
        self._trail = trail

    # ------------------------------------------------------------------ channels

    def channel(self, name: str) -> Channel:
        """The channel ``name`` (built once). Raises ChannelError when it is not configured."""
        if name not in self._channels:
            spec = self.channels_config.get(name)
            if spec is None:
                raise ChannelError(f"channel {name!r} is not defined under channels:")
            from gateway.approvals.channels import open_channel

            self._channels[name] = open_channel(name, spec)
        return self._channels[name]

    def show(self, record: ApprovalRecord, note: str | None = None) -> None:
        """Update the channel message of ``record`` (no-op without a channel or before it was posted);
        a failure is logged, never raised: the transition already happened."""
        if record.channel is None or not record.ref:
            return
        try:
            self.channel(record.channel).update(record, note)
        except HookgateError as exc:
            log.warning("approval %s: could not update the %s message: %s", record.id, record.channel, exc)

    # ------------------------------------------------------------------ lifecycle

    def lookup(self, key: str, fingerprint: str) -> ApprovalRecord | None:
        """The open request for a call (pending, or answered and not yet consumed), or None, after expiring
        every request whose time is up (as ``sweep``): one store step (``Store.approval_lookup``)."""
        expired, found = self.store.approval_lookup(key, fingerprint, time.time(), "hookgate:sweeper")
        for record in expired:
            self._after(record, "expired")
            self.show(record)
        return found

    def create(self, record: ApprovalRecord) -> tuple[ApprovalRecord, bool]:
        """Store ``record`` as pending; returns ``(record, created)``: when another process created the
        request for the same key first, that one and False. What is stored (and returned) is ``redacted(record)``."""
        stored = self.store.approval_create(self.redacted(record))
        created = stored.id == record.id
        if created:
            self._note(stored, "created")
        return stored, created

    def redacted(self, record: ApprovalRecord) -> ApprovalRecord:
        """A copy of ``record`` whose event-derived text is redacted (key and fingerprint kept) and storable
        (``storable``: a lone surrogate, which a JSON event may hold, written as its escape)."""

        def text(value: str) -> str:
            kept: str = storable(self.redactor.text(value))
            return kept

        return replace(
            record,
            tool_input=storable(self.redactor.apply(record.tool_input)),
            tool_name=None if record.tool_name is None else text(record.tool_name),
            message=text(record.message),
            cwd=None if record.cwd is None else text(record.cwd),
            session_id=None if record.session_id is None else text(record.session_id),
            tool_use_id=None if record.tool_use_id is None else text(record.tool_use_id),
            reason=None if record.reason is None else text(record.reason),
        )

    def post(self, record: ApprovalRecord) -> ApprovalRecord:
        """Send a new request to its channel and keep the message handle. When the channel fails, the
        request is cancelled (nobody could answer it) and returned so."""
        if record.channel is None:
            return record
        try:
            ref = self.channel(record.channel).post(record)
        except Exception as exc:  # ChannelError, or an SDK's surprise: nobody can answer either way
            log.warning("approval %s: channel %s could not post it: %s", record.id, record.channel, exc)
            return self.cancel(record, f"channel {record.channel!r} could not post it: {exc}")
        self.store.approval_set_ref(record.id, ref)
        record.ref = ref
        return record

    def decide(
        self,
        approval_id: str,
        approve: bool,
        by: str,
        reason: str | None = None,
        *,
        identities: list[str] | None = None,
        update_channel: bool = True,
    ) -> Outcome:
        """Answer a pending request. ``identities`` (a channel answer): who answered, checked against the
        request's ``approvers``; None (CLI, console, webhook): not checked. Expired requests past their
        time are expired first, so a late answer is refused rather than taken; so is approving a request
        whose stored row is damaged (``ApprovalRecord.unreadable``; rejecting it is taken)."""
        self.sweep()
        record = self.store.approval_get(approval_id)
        if record is None:
            return Outcome(None, f"no approval request {approval_id!r}")
        if approve and record.unreadable:  # a row damaged by hand: no call is released through it
            return Outcome(record, f"answer refused: {record.unreadable}; it can be rejected, not approved")
        if (
            record.status == "pending"
            and identities is not None
            and record.approvers
            and not set(identities) & set(record.approvers)
        ):
            return Outcome(record, f"{by} is not one of this request's approvers")
        status = "approved" if approve else "rejected"
        decided = self._transition(approval_id, status, by, reason)
        if decided is None:
            current = self.store.approval_get(approval_id) or record
            refused = f"answer refused: the request is already {current.status}"
            if current.decided_by:
                refused += f" (by {current.decided_by})"
            if update_channel:
                self.show(current, refused)
            return Outcome(current, refused)
        if update_channel:
            self.show(decided)
        return Outcome(decided)

    def answer(self, answer: Answer, *, update_channel: bool = True) -> Outcome:
        """``decide`` for a channel ``Answer``."""
        return self.decide(
            answer.approval_id,
            answer.approve,
            answer.by,
            answer.reason,
            identities=answer.identities,
            update_channel=update_channel,
        )

    def expire(
        self, record: ApprovalRecord, by: str = "hookgate:timeout", *, update_channel: bool = True
    ) -> ApprovalRecord:
        """Mark ``record`` expired (when still pending) and return it as it now is."""
        expired = self._transition(record.id, "expired", by, "no answer before it expired")
        if expired is not None:
            if update_channel:
                self.show(expired)
            return expired
        return self.store.approval_get(record.id) or record

    def cancel(self, record: ApprovalRecord, reason: str) -> ApprovalRecord:
        """Cancel ``record`` (when still pending: ``hookgate:channel``, nobody could answer it); returns it."""
        cancelled = self._transition(record.id, "cancelled", "hookgate:channel", reason)
        return cancelled or self.store.approval_get(record.id) or record

    def sweep(self, now: float | None = None) -> list[ApprovalRecord]:
        """Expire every pending request whose time is up (``hookgate:sweeper``); returns them."""
        expired = self.store.approval_expire_due(time.time() if now is None else now, "hookgate:sweeper")
        for record in expired:
            self._after(record, "expired")
            self.show(record)
        return expired

    def consume(self, record: ApprovalRecord) -> bool:
        """Mark an answered request as delivered to its tool call (once); True for the first consumer."""
        consumed = self.store.approval_consume(record.id, time.time())
        if consumed:
            self._note(record, "consumed")
        return consumed

    # ------------------------------------------------------------------ internals

    def _transition(self, approval_id: str, status: str, by: str, reason: str | None) -> ApprovalRecord | None:
        # redacted, and with CR, ESC, bidi overrides and other non-printables written as escapes: the reason
        # goes into the agent's permissionDecisionReason, which the host shows in the user's terminal
        reason = None if reason is None else printable(self.redactor.text(reason))
        if reason is not None and len(reason) > MAX_REASON:  # every route alike (the CLI's --reason too)
            reason = reason[: MAX_REASON - 1] + "…"
        record = self.store.approval_decide(approval_id, status, by, reason, time.time())
        if record is not None:
            self._after(record, status)
        return record

    def _after(self, record: ApprovalRecord, transition: str) -> None:
        self.waker.notify(record.id)
        self._note(record, transition)

    def _note(self, record: ApprovalRecord, transition: str) -> None:
        log.info(
            "approval %s %s%s",
            record.id,
            transition,
            f" by {record.decided_by}" if transition not in ("created", "consumed") and record.decided_by else "",
        )
        if self._trail is not None:
            self._trail(record, transition)
