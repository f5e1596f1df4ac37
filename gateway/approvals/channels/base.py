"""``Channel``: the one small base every approval channel implements (a chat platform, a webhook).

Contract: ``post(record) -> ref`` sends the request (the returned dict is stored as ``record.ref``);
``update(record, note)`` shows the record's current state on what was posted (outcome, who, when, or
``note`` such as "answer refused: the request had expired"); ``callback(headers, body, decide)``
checks an inbound callback (signature), turns it into an ``Answer``, calls ``decide(answer)`` and
returns the platform's reply ``(status, content_type, body)``. Every call is synchronous (SDK clients
are); async callers use ``asyncio.to_thread``. Errors: ``ChannelError`` (post/update failed),
``CallbackRejected`` (forged or malformed callback). The state machine is not here: channels only
carry requests and answers (``gateway.approvals.desk`` owns the transitions).
"""

from __future__ import annotations

import os
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from gateway.errors import ChannelError

if TYPE_CHECKING:
    from gateway.approvals.record import ApprovalRecord


@dataclass(slots=True)
class Answer:
    """A person's answer from a channel. approval_id: the request. approve: True = approve.
    by: who, prefixed with the channel type (``slack:U024BE7LH``). identities: the ids and names the
    ``approvers`` list is checked against. reason: optional text."""

    approval_id: str
    approve: bool
    by: str
    identities: list[str] = field(default_factory=list)
    reason: str | None = None


@dataclass(slots=True)
class Outcome:
    """What ``decide`` did with an answer: the record as it now is, and ``refused`` (why the answer was not
    taken: already answered, expired, not an approver) or None when it made the transition."""

    record: ApprovalRecord | None
    refused: str | None = None


Decide = Callable[[Answer], Outcome]
Reply = tuple[int, str, bytes]


class Channel(ABC):
    """Base of the approval channels (see module docstring). ``name``: the ``channels:`` key;
    ``spec``: its normalized entry."""

    type: ClassVar[str]

    def __init__(self, name: str, spec: dict[str, Any]) -> None:
        self.name = name
        self.spec = spec

    def secret(self, field_name: str) -> str:
        """The value of the environment variable ``spec[field_name]`` names. Raises ChannelError when unset."""
        env = self.spec[field_name]
        value = os.environ.get(env)
        if not value:
            raise ChannelError(f"channel {self.name!r}: environment variable {env} is not set")
        return value

    @abstractmethod
    def post(self, record: ApprovalRecord) -> dict[str, Any]:
        """Send ``record`` to approvers; returns the handle to update it later. Raises ChannelError."""

    @abstractmethod
    def update(self, record: ApprovalRecord, note: str | None = None) -> None:
        """Show ``record``'s current status (and ``note``) where it was posted. Raises ChannelError."""

    @abstractmethod
    def callback(self, headers: Mapping[str, str], body: bytes, decide: Decide) -> Reply:
        """Verify and answer one inbound callback. Raises CallbackRejected (forged, malformed)."""


def title(record: ApprovalRecord) -> str:
    """The one-line headline of a request."""
    return f"Approval needed: {record.tool_name or record.event}"


def details(record: ApprovalRecord) -> list[tuple[str, str]]:
    """(label, value) lines shown under the message on every channel."""
    rows = [("Request", record.id), ("Tool", record.tool_name or "-")]
    if record.cwd:
        rows.append(("Folder", record.cwd))
    if record.session_id:
        rows.append(("Session", record.session_id))
    rows.append(("Expires", time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(record.expires_at))))
    return rows


def outcome_text(record: ApprovalRecord, note: str | None = None) -> str:
    """``Approved by slack:U1 at 12:00:03 UTC: looks fine`` (or Rejected / Expired / Cancelled / Pending)."""
    if record.status == "pending":
        text = "Pending"
    else:
        when = time.strftime("%H:%M:%S UTC", time.gmtime(record.decided_at or time.time()))
        text = f"{record.status.capitalize()} by {record.decided_by or 'unknown'} at {when}"
        if record.reason:
            text += f": {record.reason}"
    return f"{text} ({note})" if note else text
