"""The ``slack`` channel (official ``slack_sdk``; ``pip install 'hookgate[slack]'``).

post: ``chat.postMessage`` to ``channel`` with a header, the message, the request's details and two
buttons (``action_id`` ``hookgate_approve`` / ``hookgate_reject``, ``value`` = the request id); the ref is
``{"channel": ..., "ts": ...}``. update: ``chat.update`` of that message, the buttons replaced by the
outcome and who decided. callback (``POST /approvals/slack``, the app's Interactivity Request URL): the
form-encoded ``payload=`` JSON, verified with ``slack_sdk.signature.SignatureVerifier`` (the
``X-Slack-Signature`` / ``X-Slack-Request-Timestamp`` HMAC with the app's signing secret, at most 5
minutes old); answered with an empty 200 at once (Slack wants an answer within 3 s), the message is
updated afterwards. ``baseUrl`` points ``WebClient`` at another API host (tests use a loopback fake).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import parse_qs

from gateway.approvals.channels.base import Answer, Channel, Decide, Reply, details, outcome_text, title
from gateway.errors import CallbackRejected, ChannelError

if TYPE_CHECKING:
    from slack_sdk import WebClient

    from gateway.approvals.record import ApprovalRecord

APPROVE, REJECT = "hookgate_approve", "hookgate_reject"
MAX_TEXT = 2900  # Block Kit section text limit is 3000 characters


def _cut(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class SlackChannel(Channel):
    """Approve/Reject buttons in a Slack channel (see module docstring)."""

    type: ClassVar[str] = "slack"
    _client: WebClient | None = None

    def client(self) -> WebClient:
        if self._client is None:
            from slack_sdk import WebClient

            self._client = WebClient(
                token=self.secret("token_env"), base_url=self.spec["base_url"], timeout=int(self.spec["timeout"])
            )
        return self._client

    def blocks(self, record: ApprovalRecord, note: str | None = None) -> list[dict[str, Any]]:
        """The Block Kit blocks for ``record``: buttons while pending, the outcome after."""
        fields = [{"type": "mrkdwn", "text": _cut(f"*{label}*\n{value}", 1900)} for label, value in details(record)]
        blocks: list[dict[str, Any]] = [
            {"type": "header", "text": {"type": "plain_text", "text": _cut(title(record), 150)}},
            {"type": "section", "text": {"type": "plain_text", "text": _cut(record.message or title(record))}},
            {"type": "section", "fields": fields[:10]},
        ]
        if record.status == "pending":
            blocks.append(
                {
                    "type": "actions",
                    "block_id": "hookgate_approval",
                    "elements": [
                        {
                            "type": "button",
                            "action_id": APPROVE,
                            "style": "primary",
                            "value": record.id,
                            "text": {"type": "plain_text", "text": "Approve"},
                        },
                        {
                            "type": "button",
                            "action_id": REJECT,
                            "style": "danger",
                            "value": record.id,
                            "text": {"type": "plain_text", "text": "Reject"},
                        },
                    ],
                }
            )
        if record.status != "pending" or note:
            blocks.append(
                {"type": "context", "elements": [{"type": "mrkdwn", "text": _cut(outcome_text(record, note))}]}
            )
        return blocks

    def post(self, record: ApprovalRecord) -> dict[str, Any]:
        from slack_sdk.errors import SlackClientError

        try:
            response = self.client().chat_postMessage(
                channel=self.spec["channel"], text=_cut(title(record)), blocks=self.blocks(record)
            )
        except (SlackClientError, OSError) as exc:
            raise ChannelError(f"channel {self.name!r}: chat.postMessage failed: {exc}") from None
        return {"channel": response["channel"], "ts": response["ts"]}

    def update(self, record: ApprovalRecord, note: str | None = None) -> None:
        from slack_sdk.errors import SlackClientError

        try:
            self.client().chat_update(
                channel=record.ref["channel"],
                ts=record.ref["ts"],
                text=_cut(f"{title(record)}: {outcome_text(record, note)}"),
                blocks=self.blocks(record, note),
            )
        except (SlackClientError, OSError, KeyError) as exc:
            raise ChannelError(f"channel {self.name!r}: chat.update failed: {exc}") from None

    def callback(self, headers: Mapping[str, str], body: bytes, decide: Decide) -> Reply:
        from slack_sdk.signature import SignatureVerifier

        verifier = SignatureVerifier(self.secret("signing_secret_env"))
        text = body.decode("utf-8", "replace")
        stamp = headers.get("x-slack-request-timestamp", "")
        if not verifier.is_valid(text, stamp, headers.get("x-slack-signature", "")):
            age = _age(stamp)
            if age is not None and abs(age) > STALE_SECONDS:  # what slack_sdk refuses first: say which
                raise CallbackRejected(
                    f"Slack request timestamp is {age:.0f} s {'old' if age > 0 else 'in the future'} (more than "
                    f"{STALE_SECONDS // 60} minutes): a replayed or delayed callback (X-Slack-Request-Timestamp)"
                )
            raise CallbackRejected("Slack signature check failed (X-Slack-Signature)")
        try:
            payload = json.loads(parse_qs(text).get("payload", [""])[0])
            action = payload["actions"][0]
            user = payload.get("user") or {}
            approval_id, action_id = str(action["value"]), action["action_id"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise CallbackRejected("not a Slack block_actions payload", 400) from None
        if action_id not in (APPROVE, REJECT):
            return 200, "text/plain", b""  # another app's button: nothing to do
        identities = [str(v) for v in (user.get("id"), user.get("username"), user.get("name")) if v]
        decide(Answer(approval_id, action_id == APPROVE, f"slack:{user.get('id') or 'unknown'}", identities))
        return 200, "text/plain", b""


STALE_SECONDS = 300
"""How far ``X-Slack-Request-Timestamp`` may be from now (slack_sdk's ``SignatureVerifier`` rule: 5 minutes)."""


def _age(stamp: str) -> float | None:
    """Seconds since ``stamp`` (epoch seconds as text), or None when it is not a number."""
    import time

    try:
        return time.time() - float(stamp)
    except ValueError:
        return None
