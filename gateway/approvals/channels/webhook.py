"""The ``webhook`` channel: a Standard Webhooks-signed POST of the request and the URL to answer it at.

post / update: ``POST url`` with ``webhook-id``, ``webhook-timestamp`` and ``webhook-signature``
(``standardwebhooks``, the channel's ``signingSecretEnv`` secret, ``whsec_<base64>``), body::

    {"type": "approval.requested",            approval.<status> on every later transition
     "approval": {...the request: id, status, tool_name, tool_input, message, expires_at, ...},
     "note": null,                            e.g. "answer refused: the request is already expired"
     "callback_url": "<callbackUrl>/approvals/<id>",
     "answer": {"method": "POST",
                "body": {"id": "<id>", "decision": "approve | reject", "by": "<who>", "reason": "..."},
                "signing": "Standard Webhooks, the same secret"}}

Up to 3 attempts (tenacity) on connection errors and 5xx; redirects are not followed; any other non-2xx
is a ChannelError. callback (``POST /approvals/{id}``): the answer body, signed the same way with the
same secret (or sent with the serve token, see ``gateway.serve.approvals``); a signature older than 5
minutes or from another secret is refused, and so is a signed body whose ``"id"`` is missing or names
another request (``signed_for``: the signature covers the body, not the URL, so an answer signed for one
request cannot be replayed to another's URL).
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, ClassVar

from gateway.approvals.channels.base import Answer, Channel, Decide, Reply
from gateway.errors import CallbackRejected, ChannelError

if TYPE_CHECKING:
    from gateway.approvals.record import ApprovalRecord

ATTEMPTS = 3


class WebhookChannel(Channel):
    """A signed POST to ``url`` (see module docstring)."""

    type: ClassVar[str] = "webhook"

    def _webhook(self) -> Any:
        from standardwebhooks.webhooks import Webhook

        try:
            return Webhook(self.secret("signing_secret_env"))
        except Exception as exc:  # binascii.Error, EmptyWebhookSecretError
            raise ChannelError(
                f"channel {self.name!r}: {self.spec['signing_secret_env']} is not a whsec_<base64> secret ({exc})"
            ) from None

    def callback_url(self, record: ApprovalRecord) -> str:
        return f"{self.spec['callback_url'].rstrip('/')}/approvals/{record.id}"

    def body(self, record: ApprovalRecord, note: str | None = None) -> dict[str, Any]:
        return {
            "type": f"approval.{'requested' if record.status == 'pending' and not record.ref else record.status}",
            "approval": record.to_dict() | {"ref": None},
            "note": note,
            "callback_url": self.callback_url(record),
            "answer": {
                "method": "POST",
                "body": {"id": record.id, "decision": "approve | reject", "by": "<who>", "reason": "<optional>"},
                "signing": "Standard Webhooks, the same secret",
            },
        }

    def _send(self, payload: dict[str, Any]) -> int:
        import httpx2
        from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_exponential

        webhook = self._webhook()
        data = json.dumps(payload, ensure_ascii=False, default=str)

        class _Retry(Exception):
            pass

        @retry(
            stop=stop_after_attempt(ATTEMPTS),
            wait=wait_exponential(multiplier=0.2, max=2),
            retry=retry_if_exception_type((_Retry, httpx2.TransportError)),
            reraise=True,
        )
        def attempt(client: httpx2.Client, msg_id: str) -> int:
            now = datetime.now(tz=UTC)
            headers = {
                "content-type": "application/json",
                "webhook-id": msg_id,
                "webhook-timestamp": str(int(now.timestamp())),
                "webhook-signature": webhook.sign(msg_id, now, data),
            }
            response = client.post(self.spec["url"], content=data.encode(), headers=headers)
            if response.status_code >= 500:
                raise _Retry(f"HTTP {response.status_code}")
            return response.status_code

        msg_id = "msg_" + secrets.token_hex(12)
        try:
            with httpx2.Client(timeout=self.spec["timeout"], follow_redirects=False, trust_env=False) as client:
                status = attempt(client, msg_id)
        except (_Retry, httpx2.HTTPError) as exc:
            raise ChannelError(
                f"channel {self.name!r}: POST {self.spec['url']} failed after {ATTEMPTS} attempt(s): {exc}"
            ) from None
        if not 200 <= status < 300:
            raise ChannelError(f"channel {self.name!r}: POST {self.spec['url']} answered HTTP {status}")
        return status

    def post(self, record: ApprovalRecord) -> dict[str, Any]:
        return {"url": self.spec["url"], "status": self._send(self.body(record))}

    def update(self, record: ApprovalRecord, note: str | None = None) -> None:
        self._send(self.body(record, note))

    def verify(self, headers: Mapping[str, str], body: bytes) -> dict[str, Any]:
        """The answer body, when signed with this channel's secret. Raises CallbackRejected."""
        from standardwebhooks.webhooks import WebhookVerificationError

        try:
            webhook = self._webhook()
        except ChannelError as exc:
            raise CallbackRejected(str(exc), 503) from None
        try:
            data = webhook.verify(body, {k: v for k, v in headers.items() if k.startswith("webhook-")})
        except (WebhookVerificationError, ValueError, UnicodeDecodeError) as exc:
            raise CallbackRejected(f"webhook signature check failed: {exc}") from None
        if not isinstance(data, dict):
            raise CallbackRejected("the answer must be a JSON object", 400)
        return data

    def callback(self, headers: Mapping[str, str], body: bytes, decide: Decide) -> Reply:
        data = self.verify(headers, body)
        approval_id = data.get("id")
        signed_for(data, str(approval_id or ""))
        answer = parse_answer(data, str(approval_id), "webhook")
        outcome = decide(answer)
        return outcome_reply(outcome)


def signed_for(data: dict[str, Any], approval_id: str) -> None:
    """Check that a signed answer names the request it answers (``"id"``): the signature covers the body,
    not the URL, so an answer signed for one request and sent to another's URL must not decide that one.
    Raises CallbackRejected (400 without an id, 409 for another request's)."""
    named = data.get("id")
    if not isinstance(named, str) or not named:
        raise CallbackRejected(
            f'a signed answer must name its request: {{"id": "{approval_id}", "decision": ...}} '
            "(the signature covers the body, not the URL)",
            400,
        )
    if named != approval_id:
        raise CallbackRejected(f"the answer is signed for request {named[:100]!r}, not {approval_id!r}", 409)


def parse_answer(data: dict[str, Any], approval_id: str, via: str) -> Answer:
    """An ``Answer`` from a ``{"decision", "by", "reason"}`` body, ``decided_by`` ``<via>:<by>`` (``by`` cut
    to 100 characters, letters, digits, ``_ . @ + -`` and spaces; anything else becomes ``_``). Raises
    CallbackRejected (400)."""
    decision = data.get("decision")
    if decision not in ("approve", "reject"):
        raise CallbackRejected('"decision" must be "approve" or "reject"', 400)
    by, reason = data.get("by"), data.get("reason")
    if (by is not None and not isinstance(by, str)) or (reason is not None and not isinstance(reason, str)):
        raise CallbackRejected('"by" and "reason" must be strings', 400)
    name = _NOT_NAME.sub("_", (by or "anonymous").strip()[:100]) or "anonymous"
    return Answer(approval_id, decision == "approve", f"{via}:{name}", [name], (reason or "").strip()[:1000] or None)


_NOT_NAME = re.compile(r"[^\w.@+\- ]")
"""What a self-given ``by`` may not hold (``:`` above all: ``console:slack:U024`` would pass for a Slack
answer, ``console:hookgate:timeout`` for the sweeper's): each such character becomes ``_``."""


def outcome_reply(outcome: Any) -> Reply:
    """The JSON reply to a callback: 200 with the record, 409 with ``error`` when the answer was refused,
    404 when there is no such request."""
    record = outcome.record
    if record is None:
        return 404, "application/json", json.dumps({"error": outcome.refused}).encode()
    body = {"id": record.id, "status": record.status, "decided_by": record.decided_by, "reason": record.reason}
    if outcome.refused:
        return 409, "application/json", json.dumps({**body, "error": outcome.refused}).encode()
    return 200, "application/json", json.dumps(body).encode()
