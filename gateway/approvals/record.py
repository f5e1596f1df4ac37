"""``ApprovalRecord``: one approval request, as the state store keeps it, and the keys that find it.

Key: ``tool:<ids>:<fingerprint>`` (ids: 32 hex digits of the sha256 of session_id and tool_use_id, so
the key keeps no event text verbatim) when the host gives a tool_use_id, else ``input:<fingerprint>``.
Fingerprint: always the hash of the unredacted (session, tool, input, folder), so a call retried with a new
tool_use_id (the model asking again) still finds its open request instead of posting a second one, and an
answer is bound to the exact input and folder the approver saw (the same command in another ``cwd`` is a
new request): a second call that reuses a tool_use_id with other
arguments (a Python host's model-chosen ids can repeat) is a new request, never the approved one.
Times are ``time.time()`` seconds. This module imports the standard library only (the store uses it).
"""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Status = Literal["pending", "approved", "rejected", "expired", "cancelled"]
STATUSES: tuple[Status, ...] = ("pending", "approved", "rejected", "expired", "cancelled")

ANSWER_KEEP_SECONDS = 600.0
"""How long an approval that no call took stays usable (from its answer, and never before the request's
own expiry): a retry within it runs at once; after it the sweep expires the approval, so an answer given
today cannot release the same call next week."""
UNUSED_REASON = "approved, but no call took the approval in time"


_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"


def printable(text: str, keep: str = "\n\t") -> str:
    """``text`` with every character that is not printable (CR, ESC, U+2028, the bidirectional overrides such
    as U+202E, zero-width ones; those in ``keep`` excepted) written as its ``\\xNN`` / ``\\uNNNN`` escape, so a
    tool input cannot redraw the approver's terminal or chat line, nor, with ``keep=""`` (the CLI's
    one-line rows), add a fake row or hide what follows."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else c.encode("unicode_escape").decode("ascii") for c in text)


def new_id() -> str:
    """A short id a person can type: ``apr-`` and 8 characters (no 0/o, 1/l/i)."""
    return "apr-" + "".join(secrets.choice(_ALPHABET) for _ in range(8))


def fingerprint(
    session_id: str | None, tool_name: str | None, tool_input: Any, gate: str = "", cwd: str | None = None
) -> str:
    """sha256 hex of the canonical JSON of (session, tool, input), and of ``gate`` and ``cwd`` when given.
    gate: which approval handler asks (``gate_of``), so two gates on one call (ops and security) are two
    requests, and one team's answer never releases the other team's gate. cwd: the folder the call runs
    in, which every channel shows the approver (``rm -rf *`` approved in a scratch folder must not release
    ``rm -rf *`` after the agent moved to another one)."""
    blob = json.dumps(
        [session_id or "", tool_name or "", tool_input, gate, cwd or ""]
        if gate or cwd
        else [session_id or "", tool_name or "", tool_input],
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


def gate_of(handler_id: str, options: dict[str, Any]) -> str:
    """What names one approval gate in a request's fingerprint: the handler's id, channel, approvers and
    message (canonical JSON)."""
    return json.dumps(
        [handler_id, options.get("channel"), sorted(options.get("approvers") or []), options.get("message")],
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )


# Why two columns. ``key`` names the call (its tool_use_id plus the input's fingerprint) and carries the
# store's unique index of open requests (``approvals_open_key``): two hook processes for the same call
# (a host retrying the hook, ``serve`` replicas) insert one row. ``fingerprint`` names the input: a
# retry under a new tool_use_id finds the open request through it (``approval_find`` tries the key,
# then the newest open request with the fingerprint). The lookup falls back to the fingerprint, so
# requests are in effect shared per input; an index on ``fingerprint`` alone would differ only when
# two new calls with the same input and different tool_use_ids race (two requests posted under the key
# index, one under a fingerprint index, which is the better answer). Folding the key into the
# fingerprint needs a schema migration on both stores (a unique index of open requests per
# fingerprint, the key column dropped); until that migration lands, both are kept.
def request_key(session_id: str | None, tool_use_id: str | None, print_: str) -> str:
    """The key of a tool call's request (see module docstring)."""
    if tool_use_id:
        ids = hashlib.sha256(f"{session_id or ''}\0{tool_use_id}".encode("utf-8", "surrogatepass")).hexdigest()
        return f"tool:{ids[:32]}:{print_}"
    return f"input:{print_}"


@dataclass(slots=True)
class ApprovalRecord:
    """One approval request.

    id: ``apr-...``. key/fingerprint: see module docstring. status: pending | approved | rejected |
    expired | cancelled. session_id, tool_use_id, tool_name, tool_input: the call it is about. event:
    the hook event name. message: the text shown to approvers. channel: the ``channels:`` name it was
    posted to (None: the built-in inbox only). approvers: who may answer through a channel (empty:
    anyone who reaches it). on_timeout: deny | ask. created_at/expires_at/decided_at/consumed_at: seconds.
    decided_by: who answered (``slack:U024BE7LH``, ``cli:alice``, ``hookgate:timeout``, ...). reason: why.
    ref: the channel's handle on the posted message (Slack channel + ts, Feishu message_id, ...).
    cwd: the call's working folder.
    """

    id: str
    key: str
    fingerprint: str
    status: Status
    created_at: float
    expires_at: float
    session_id: str | None = None
    tool_use_id: str | None = None
    tool_name: str | None = None
    tool_input: Any = None
    event: str = "PreToolUse"
    message: str = ""
    channel: str | None = None
    approvers: list[str] = field(default_factory=list)
    on_timeout: str = "deny"
    cwd: str | None = None
    decided_at: float | None = None
    decided_by: str | None = None
    reason: str | None = None
    consumed_at: float | None = None
    ref: dict[str, Any] = field(default_factory=dict)
    unreadable: str | None = None
    """Why the stored row could not be read as it was written (a row edited by hand in the database), or
    None. Its fields then hold what could be read (see ``from_row``); no call is ever released by it."""

    PAYLOAD_FIELDS = ("tool_input", "event", "message", "approvers", "on_timeout", "cwd")
    """Kept in the store's JSON ``payload`` column; every other field is a column of its own."""

    def to_dict(self) -> dict[str, Any]:
        """Every field (JSON-ready); ``hookgate approvals list --json`` prints these. ``unreadable`` only
        when set."""
        data = asdict(self)
        if data["unreadable"] is None:
            del data["unreadable"]
        return data

    def to_row(self) -> dict[str, Any]:
        """The column values a store writes: plain fields, ``payload`` and ``ref`` as JSON text."""
        data = self.to_dict()
        data.pop("unreadable", None)
        payload = {name: data.pop(name) for name in self.PAYLOAD_FIELDS}
        data["payload"] = json.dumps(payload, ensure_ascii=False, default=str)
        data["ref"] = json.dumps(data["ref"])
        return data

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> ApprovalRecord:
        """The record a store row (``to_row`` shape) stands for. Never raises: a row damaged by hand (a
        ``payload`` or ``ref`` that is not a JSON object, a time that is no number, a status that is none of
        ``STATUSES``, a blob where text was, payload values of the wrong type) gives a record with what
        could be read (text that was not text as its ``repr``, a time that was no number as 0 or None, the
        rest at its default) and ``unreadable`` naming the columns, so that one damaged row cannot stop
        ``hookgate approvals list``."""
        data = dict(row)
        problems: list[str] = []
        for name in ("id", "key", "fingerprint", "status", *_TEXT_OR_NONE):
            value = data.get(name)
            if not isinstance(value, str) and not (value is None and name in _TEXT_OR_NONE):
                problems.append(f"{name} {value!r} is not text")
                data[name] = None if value is None else repr(value)
        if data["status"] not in STATUSES and isinstance(row.get("status"), str):
            problems.append(f"status {data['status']!r} is none of {', '.join(STATUSES)}")
        for name in ("created_at", "expires_at", "decided_at", "consumed_at"):
            value = data.get(name)
            if not _is_number(value) and not (value is None and name in ("decided_at", "consumed_at")):
                problems.append(f"{name} {value!r} is no time")
                data[name] = 0.0 if name in ("created_at", "expires_at") else None
        payload = _json_object(data.pop("payload", None), "payload", problems)
        for name, fits in _PAYLOAD_TYPES.items():
            if name in payload and not fits(payload[name]):
                problems.append(f"payload {name} {payload[name]!r} has the wrong type")
                del payload[name]
        ref = _json_object(data.pop("ref", None), "ref", problems)
        unreadable = None
        if problems:
            shown = "; ".join(problems[:3]) + (f"; and {len(problems) - 3} more" if len(problems) > 3 else "")
            unreadable = f"its stored row is damaged: {shown[:300]}"
        return cls(
            **data,
            **{k: v for k, v in payload.items() if k in cls.PAYLOAD_FIELDS},
            ref=ref,
            unreadable=unreadable,
        )


_TEXT_OR_NONE = ("session_id", "tool_use_id", "tool_name", "channel", "decided_by", "reason")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_PAYLOAD_TYPES: dict[str, Any] = {
    "event": lambda v: isinstance(v, str),
    "message": lambda v: isinstance(v, str),
    "approvers": lambda v: isinstance(v, list) and all(isinstance(a, str) for a in v),
    "on_timeout": lambda v: v in ("deny", "ask"),
    "cwd": lambda v: v is None or isinstance(v, str),
}
"""What each ``payload`` value must be (``tool_input`` may be anything JSON holds)."""


def _json_object(text: Any, name: str, problems: list[str]) -> dict[str, Any]:
    """The JSON object in a column (``None`` and ``""``: empty), or ``{}`` with a line in ``problems``."""
    if text is None or text == "":
        return {}
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        value = None
    if isinstance(value, dict):
        return value
    problems.append(f"{name} is not a JSON object")
    return {}


COLUMNS = (
    "id",
    "key",
    "fingerprint",
    "status",
    "created_at",
    "expires_at",
    "session_id",
    "tool_use_id",
    "tool_name",
    "channel",
    "decided_at",
    "decided_by",
    "reason",
    "consumed_at",
    "payload",
    "ref",
)
"""The store's ``approvals`` columns, in table order."""
