"""The ``feishu`` channel (official ``lark-oapi``; ``pip install 'hookgate[feishu]'``), for Feishu and Lark.

post: an interactive card (``msg_type: interactive``, ``update_multi``) to ``chatId`` through
``im.v1.message.create``; the ref is ``{"message_id": ...}``. update: ``im.v1.message.patch`` of that
card, the buttons replaced by the outcome and who decided. callback (``POST /approvals/feishu``, the
app's card request URL): the ``card.action.trigger`` callback, handled by the SDK's
``EventDispatcherHandler``, which decrypts it with the app's encrypt key and checks the verification
token and the ``X-Lark-Signature`` (sha256 of timestamp, nonce, encrypt key and body); the reply carries
a toast with the outcome. ``domain`` points the client at another API host (``https://open.larksuite.com``
for Lark; tests use a loopback fake).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from gateway.approvals.channels.base import Answer, Channel, Decide, Outcome, Reply, details, outcome_text, title
from gateway.errors import CallbackRejected, ChannelError

if TYPE_CHECKING:
    import lark_oapi

    from gateway.approvals.record import ApprovalRecord


class FeishuChannel(Channel):
    """An interactive approval card in a Feishu/Lark chat (see module docstring)."""

    type: ClassVar[str] = "feishu"
    _client: lark_oapi.Client | None = None

    def client(self) -> lark_oapi.Client:
        if self._client is None:
            import lark_oapi

            try:
                self._client = (
                    lark_oapi.Client.builder()
                    .app_id(self.secret("app_id_env"))
                    .app_secret(self.secret("app_secret_env"))
                    .domain(self.spec["domain"])
                    .timeout(self.spec["timeout"])
                    .log_level(lark_oapi.LogLevel.WARNING)
                    .build()
                )
            except ValueError as exc:
                raise ChannelError(f"channel {self.name!r}: {exc}") from None
        return self._client

    def card(self, record: ApprovalRecord, note: str | None = None) -> dict[str, Any]:
        """The card JSON (message card schema 1.0): buttons while pending, the outcome after."""
        fields = [
            {"is_short": True, "text": {"tag": "lark_md", "content": f"**{label}**\n{value}"}}
            for label, value in details(record)
        ]
        elements: list[dict[str, Any]] = [
            {"tag": "div", "text": {"tag": "plain_text", "content": record.message or title(record)}},
            {"tag": "div", "fields": fields},
        ]
        pending = record.status == "pending"
        if pending:
            elements.append(
                {
                    "tag": "action",
                    "actions": [
                        {
                            "tag": "button",
                            "type": "primary",
                            "text": {"tag": "plain_text", "content": "Approve"},
                            "value": {"approval_id": record.id, "decision": "approve"},
                        },
                        {
                            "tag": "button",
                            "type": "danger",
                            "text": {"tag": "plain_text", "content": "Reject"},
                            "value": {"approval_id": record.id, "decision": "reject"},
                        },
                    ],
                }
            )
        if not pending or note:
            elements.append({"tag": "note", "elements": [{"tag": "plain_text", "content": outcome_text(record, note)}]})
        colour = {"approved": "green", "rejected": "red"}.get(record.status, "orange" if pending else "grey")
        return {
            "config": {"wide_screen_mode": True, "update_multi": True},
            "header": {"template": colour, "title": {"tag": "plain_text", "content": title(record)}},
            "elements": elements,
        }

    def post(self, record: ApprovalRecord) -> dict[str, Any]:
        from lark_oapi.api.im.v1 import CreateMessageRequest, CreateMessageRequestBody

        request = (
            CreateMessageRequest.builder()
            .receive_id_type("chat_id")
            .request_body(
                CreateMessageRequestBody.builder()
                .receive_id(self.spec["chat_id"])
                .msg_type("interactive")
                .content(json.dumps(self.card(record)))
                .build()
            )
            .build()
        )
        try:
            response = self.client().im.v1.message.create(request)
        except Exception as exc:  # the SDK raises requests/httpx errors of its own
            raise ChannelError(f"channel {self.name!r}: im.v1.message.create failed: {exc}") from None
        if not response.success() or response.data is None:
            raise ChannelError(f"channel {self.name!r}: im.v1.message.create: code {response.code}: {response.msg}")
        return {"message_id": response.data.message_id}

    def update(self, record: ApprovalRecord, note: str | None = None) -> None:
        from lark_oapi.api.im.v1 import PatchMessageRequest, PatchMessageRequestBody

        message_id = record.ref.get("message_id")
        if not message_id:
            return
        request = (
            PatchMessageRequest.builder()
            .message_id(message_id)
            .request_body(PatchMessageRequestBody.builder().content(json.dumps(self.card(record, note))).build())
            .build()
        )
        try:
            response = self.client().im.v1.message.patch(request)
        except Exception as exc:  # the SDK raises requests/httpx errors of its own
            raise ChannelError(f"channel {self.name!r}: im.v1.message.patch failed: {exc}") from None
        if not response.success():
            raise ChannelError(f"channel {self.name!r}: im.v1.message.patch: code {response.code}: {response.msg}")

    def callback(self, headers: Mapping[str, str], body: bytes, decide: Decide) -> Reply:
        import lark_oapi
        from lark_oapi.core.model import RawRequest
        from lark_oapi.event.callback.model.p2_card_action_trigger import (
            P2CardActionTrigger,
            P2CardActionTriggerResponse,
        )

        token = os.environ.get(self.spec["verification_token_env"], "")
        key = os.environ.get(self.spec["encrypt_key_env"], "")
        if not token and not key:
            raise CallbackRejected(
                f"channel {self.name!r}: neither {self.spec['verification_token_env']} nor "
                f"{self.spec['encrypt_key_env']} is set: callbacks cannot be verified",
                503,
            )
        outcomes: list[Outcome] = []
        problems: list[str] = []

        def on_click(data: P2CardActionTrigger) -> P2CardActionTriggerResponse:
            event = data.event
            value = (event.action.value if event and event.action else None) or {}
            operator = event.operator if event else None
            approval_id, decision = value.get("approval_id"), value.get("decision")
            if not isinstance(approval_id, str) or decision not in ("approve", "reject") or operator is None:
                problems.append("not a hookgate approval card action")
                return P2CardActionTriggerResponse({"toast": {"type": "error", "content": "not a hookgate card"}})
            who = operator.open_id or operator.user_id or "unknown"
            identities = [v for v in (operator.open_id, operator.user_id, operator.union_id) if v]
            outcome = decide(Answer(approval_id, decision == "approve", f"feishu:{who}", identities))
            outcomes.append(outcome)
            if outcome.refused:
                return P2CardActionTriggerResponse({"toast": {"type": "error", "content": outcome.refused}})
            record = outcome.record
            text = outcome_text(record) if record is not None else decision
            return P2CardActionTriggerResponse({"toast": {"type": "success", "content": text}})

        builder = lark_oapi.EventDispatcherHandler.builder(key, token, lark_oapi.LogLevel.CRITICAL)
        handler = builder.register_p2_card_action_trigger(on_click).build()
        request = RawRequest()
        request.uri = "/approvals/feishu"
        request.body = body
        request.headers = {
            name: headers.get(name.lower(), "")
            for name in ("X-Lark-Request-Timestamp", "X-Lark-Request-Nonce", "X-Lark-Signature", "X-Request-Id")
        }
        response = handler.do(request)
        if response.status_code != 200:  # the SDK refused it before our handler ran: forged or garbled
            try:
                detail = json.loads(response.content or b"{}").get("msg", "verification failed")
            except ValueError:
                detail = "verification failed"
            raise CallbackRejected(f"Feishu callback refused: {detail}")
        return 200, "application/json", response.content or b"{}"  # our toast, or the URL check's challenge
