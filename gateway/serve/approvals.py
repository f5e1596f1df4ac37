"""Approval routes of ``hookgate serve``: the chat platforms' callbacks, webhook and console answers,
and the sweeper that expires stale requests.

Routes::

    POST /approvals/slack   Slack interactivity callback (form ``payload=``), verified with the signing
                            secret of a configured slack channel (``X-Slack-Signature``) -> 200 empty
    POST /approvals/feishu  Feishu/Lark ``card.action.trigger`` callback, verified by lark-oapi (encrypt
                            key, verification token, ``X-Lark-Signature``) -> 200 with a toast
    POST /approvals/{id}    {"decision": "approve" | "reject", "by": "...", "reason": "..."} signed with
                            the Standard Webhooks secret of the webhook channel the request went to, or
                            sent with ``Authorization: Bearer $HOOKGATE_TOKEN`` (scripts; recorded as
                            ``api:<by>``, ``api:anonymous`` without ``by``), as ``application/json``
                            -> 200 {"id", "status", "decided_by", "reason"}; 409 the same plus "error"
                            when the answer is refused (already answered, expired); 404 no such request
    GET  /approvals         (bearer token) the requests, newest first: {"approvals": [...]};
                            ``?status=pending`` filters (one of ``STATUSES``; anything else is a 400)
    GET  /ui/api/approvals  the console's Approvals panel (``gateway/audit/console/approvals.js``): the
                            pending requests, oldest first: {"approvals": [{id, tool_name, message, input,
                            session_id, channel, created_at, expires_at}]}
    POST /ui/api/approvals/{id}  {"decision": "approve" | "reject", "reason": "..."} from the panel,
                            recorded as ``console:ui``; replies as ``POST /approvals/{id}``. Both /ui
                            routes are behind the console's rules (session cookie or token, same origin)

Errors: 401 a callback whose signature or token does not check out (a forged callback changes
nothing), 400 a malformed body or query, 415 a POST that is not ``application/json`` (``RequestGuard``;
Slack's form callback excepted, ``FORM_CALLBACKS``), 503 a channel whose secrets are not set. These
paths check their own credentials (a chat platform cannot send the serve token), so ``RequestGuard``
leaves the token check to them (``SELF_AUTHENTICATED``); the Host, Origin and Content-Type checks still
apply.

The platform is answered at once (Slack wants an answer within 3 s); the channel message is updated
afterwards, in the background. The sweeper expires pending requests whose time is up every
``SWEEP_INTERVAL`` seconds and updates their messages ("Expired"), when the config has approval handlers
or channels.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any

from gateway.approvals.record import STATUSES
from gateway.errors import CallbackRejected, HookgateError
from gateway.serve.guard import bearer_matches

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from gateway.approvals.channels.base import Answer, Outcome
    from gateway.approvals.desk import Desk
    from gateway.context import RunContext

log = logging.getLogger("hookgate.server")

SWEEP_INTERVAL = 15.0
"""Seconds between sweeps of expired requests."""
SELF_AUTHENTICATED = ("/approvals/",)
"""Path prefixes whose routes check credentials themselves (see module docstring)."""
FORM_CALLBACKS = frozenset({"/approvals/slack", "/approvals/slack/"})
"""The one POST route whose body is not JSON: Slack sends its interactivity callback as a form
(``payload=``), authenticated by its signature. Every other POST must be ``application/json``."""
MAX_CALLBACK = 256 * 1024
API_VIA = "api"
"""How a token-authenticated answer on ``POST /approvals/{id}`` is recorded: ``api:<by>`` (``api:anonymous``
without ``by``); the console's own answers are ``console:ui``."""


NO_TOKEN = (
    "; this server has no token: start it with HOOKGATE_TOKEN set, or answer with "
    "`hookgate approvals approve|reject ID` (the same store)"
)
"""Said when a route needs the token and the server was started without one."""


def _reply(status: int, content_type: str, body: bytes, background: Any = None) -> Response:
    from starlette.responses import Response

    return Response(body, status_code=status, media_type=content_type, background=background)


def _error(status: int, message: str) -> Response:
    return _reply(status, "application/json", json.dumps({"error": message}).encode())


class ApprovalRoutes:
    """The endpoints above, for a server whose current ``RunContext`` is ``context()`` and whose bearer
    token is ``token`` (None: token answers are not accepted)."""

    def __init__(self, context: Any, token: str | None) -> None:
        self._context = context
        self.token = token

    def desk(self) -> Desk:
        from handlers.approval import desk_for

        ctx: RunContext = self._context()
        return desk_for(ctx)

    def routes(self) -> list[Any]:
        from starlette.routing import Route

        endpoints = [
            ("/approvals", self.listing, "GET"),
            ("/approvals/slack", self.slack, "POST"),
            ("/approvals/feishu", self.feishu, "POST"),
            ("/approvals/{approval_id}", self.answer, "POST"),
        ]
        return [
            Route(path + slash, endpoint, methods=[method])
            for path, endpoint, method in endpoints
            for slash in ("", "/")
        ]

    async def _body(self, request: Request) -> bytes | Response:
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_CALLBACK:
                return _error(413, f"callback body over {MAX_CALLBACK} bytes")
        return body

    def _token_ok(self, request: Request) -> bool:
        if self.token is None:
            return False
        return bearer_matches(request.headers.get("authorization", "").encode("latin-1"), self.token.encode())

    async def _paced(self, request: Request) -> Response | None:
        """After a failed token check: a request that presented a bearer token waits its turn as every wrong
        guess does (``gateway.serve.guard.WrongTokens``); a 429 when too many wait already."""
        from gateway.serve.guard import WRONG_TOKENS

        if request.headers.get("authorization", "").strip() and not await WRONG_TOKENS.pause():
            return _error(429, "too many wrong tokens at once; try again later")
        return None

    # ------------------------------------------------------------------ chat platforms

    async def slack(self, request: Request) -> Response:
        return await self._platform(request, "slack")

    async def feishu(self, request: Request) -> Response:
        return await self._platform(request, "feishu")

    async def _platform(self, request: Request, kind: str) -> Response:
        """Try each configured channel of ``kind`` (each may belong to another app, with its own secret; or
        one app may post to several chats as several entries, with one secret): the first whose check
        passes and that the request was posted to decides."""
        from starlette.background import BackgroundTask

        body = await self._body(request)
        if not isinstance(body, bytes):
            return body
        desk = self.desk()
        names = [name for name, spec in desk.channels_config.items() if spec["type"] == kind]
        if not names:
            return _error(404, f"no {kind} channel is configured under channels:")
        headers = {k.lower(): v for k, v in request.headers.items()}
        last: CallbackRejected | None = None
        elsewhere: tuple[str, Response] | None = None  # checked out, but the request is another entry's
        for name in names:
            decided: list[Outcome] = []

            def decide(answer: Answer, name: str = name, decided: list[Outcome] = decided) -> Outcome:
                outcome = _decide_for(desk, answer, name)
                decided.append(outcome)
                return outcome

            try:
                channel = desk.channel(name)
                status, content_type, reply = await asyncio.to_thread(channel.callback, headers, body, decide)
            except CallbackRejected as exc:
                last = exc
                continue
            except HookgateError as exc:  # the SDK is missing, a secret is unset
                return _error(503, str(exc))
            outcome = decided[0] if decided else None
            if outcome is not None and outcome.refused is not None and outcome.record is not None:
                posted = outcome.record.channel
                if posted != name and posted in names:  # one app, several entries: the request's own decides
                    if elsewhere is None:
                        elsewhere = (outcome.refused, _reply(status, content_type, reply))
                    continue
            if outcome is not None and outcome.refused is not None:  # a click that decided nothing: say why
                log.warning("approval answer through %s channel %r refused: %s", kind, name, outcome.refused)
            task = None
            if (
                outcome is not None
                and outcome.record is not None
                and (outcome.refused is None or outcome.record.status != "pending")
            ):
                task = BackgroundTask(desk.show, outcome.record, outcome.refused)
            return _reply(status, content_type, reply, task)
        if elsewhere is not None:  # signed for one entry, about a request posted through another app
            log.warning("approval answer through %s channel refused: %s", kind, elsewhere[0])
            return elsewhere[1]
        assert last is not None
        log.warning("approval callback on /approvals/%s refused: %s", kind, last)
        return _error(last.status, str(last))

    # ------------------------------------------------------------------ webhook and console

    async def answer(self, request: Request) -> Response:
        from gateway.approvals.channels.webhook import parse_answer, signed_for

        approval_id = request.path_params["approval_id"]
        body = await self._body(request)
        if not isinstance(body, bytes):
            return body
        desk = self.desk()
        record = await asyncio.to_thread(desk.store.approval_get, approval_id)
        headers = {k.lower(): v for k, v in request.headers.items()}
        try:
            if self._token_ok(request):
                try:
                    data = json.loads(body or b"{}")
                except ValueError:
                    raise CallbackRejected("the answer must be JSON", 400) from None
                if not isinstance(data, dict):
                    raise CallbackRejected("the answer must be a JSON object", 400)
                if "id" in data and data["id"] != approval_id:  # optional here, but never another request's
                    raise CallbackRejected(
                        f"the answer names request {str(data['id'])[:100]!r}, not {approval_id!r}", 409
                    )
                answer = parse_answer(data, approval_id, API_VIA)
                identities = None
            elif "webhook-signature" in headers:
                if record is None:
                    return _error(404, f"no approval request {approval_id!r}")
                spec = desk.channels_config.get(record.channel or "")
                if spec is None or spec["type"] != "webhook":
                    raise CallbackRejected(f"request {approval_id} was not sent to a webhook channel")
                channel = desk.channel(record.channel or "")
                data = channel.verify(headers, body)  # type: ignore[attr-defined]
                signed_for(data, approval_id)
                answer = parse_answer(data, approval_id, "webhook")
                identities = answer.identities
            else:
                paced = await self._paced(request)
                if paced is not None:
                    return paced
                raise CallbackRejected(
                    "an answer needs a Standard Webhooks signature or the serve token "
                    f"(Authorization: Bearer $HOOKGATE_TOKEN){NO_TOKEN if self.token is None else ''}"
                )
        except CallbackRejected as exc:
            log.warning("approval answer for %s refused: %s", approval_id, exc)
            return _error(exc.status, str(exc))
        outcome = await asyncio.to_thread(
            desk.decide,
            answer.approval_id,
            answer.approve,
            answer.by,
            answer.reason,
            identities=identities,
            update_channel=False,
        )
        return self._answered(desk, outcome)

    @staticmethod
    def _answered(desk: Desk, outcome: Outcome) -> Response:
        """The JSON reply to an answer (``outcome_reply``); the channel message is updated afterwards."""
        from starlette.background import BackgroundTask

        from gateway.approvals.channels.webhook import outcome_reply

        status, content_type, reply = outcome_reply(outcome)
        task = None
        if outcome.record is not None and (outcome.refused is None or outcome.record.status != "pending"):
            task = BackgroundTask(desk.show, outcome.record, outcome.refused)
        return _reply(status, content_type, reply, task)

    async def listing(self, request: Request) -> Response:
        if not self._token_ok(request):
            paced = await self._paced(request)
            if paced is not None:
                return paced
            hint = NO_TOKEN if self.token is None else ""
            return _error(401, f"listing approvals needs the serve token (Authorization: Bearer $HOOKGATE_TOKEN){hint}")
        status = request.query_params.get("status") or None
        if status is not None and status not in STATUSES:
            return _error(400, f"status {status[:40]!r}: expected one of {', '.join(STATUSES)}")
        desk = self.desk()
        await asyncio.to_thread(desk.sweep)
        records = await asyncio.to_thread(desk.store.approval_list, [status] if status else None, 200)
        return _reply(
            200, "application/json", json.dumps({"approvals": [r.to_dict() for r in records]}, default=str).encode()
        )

    # ------------------------------------------------------------------ the console's panel (/ui)

    def ui_routes(self) -> list[Any]:
        """The console panel's data routes (behind the guard's /ui rules: the session cookie or the token)."""
        from starlette.routing import Route

        return [
            Route("/ui/api/approvals", self.ui_pending, methods=["GET"]),
            Route("/ui/api/approvals/{approval_id}", self.ui_answer, methods=["POST"]),
        ]

    async def ui_pending(self, request: Request) -> Response:
        """``GET /ui/api/approvals``: ``{"approvals": [{id, tool_name, message, input, session_id, channel,
        created_at, expires_at}]}``, the pending requests, oldest first."""
        from starlette.responses import JSONResponse

        from gateway.serve.ui import api_headers, input_text

        desk = self.desk()
        await asyncio.to_thread(desk.sweep)
        records = await asyncio.to_thread(desk.store.approval_list, ["pending"], 200)
        rows = [
            {
                "id": r.id,
                "tool_name": r.tool_name,
                "message": r.message,
                "input": input_text(r.tool_input),
                "session_id": r.session_id,
                "channel": r.channel,
                "created_at": r.created_at,
                "expires_at": r.expires_at,
            }
            for r in reversed(records)
        ]
        return JSONResponse({"approvals": rows, "can_answer": self.token is not None}, headers=api_headers())

    async def ui_answer(self, request: Request) -> Response:
        """``POST /ui/api/approvals/{id}`` ``{"decision": "approve" | "reject", "reason": "..."}``: answered
        as ``console:ui``; 200 / 409 / 404 as ``POST /approvals/{id}``. 403 on a server without a token:
        there the console needs no sign-in, so nothing would tell a person's answer from one that any
        process on the machine (the agent's own shell) sends."""
        from gateway.approvals.channels.webhook import parse_answer

        if self.token is None:
            return _error(403, f"answering from the console needs the console's sign-in{NO_TOKEN}")
        approval_id = request.path_params["approval_id"]
        try:
            data = await request.json()
            if not isinstance(data, dict):
                raise ValueError
            answer = parse_answer({**data, "by": "ui"}, approval_id, "console")
        except ValueError:
            return _error(400, 'body must be JSON: {"decision": "approve" | "reject", "reason": "..."}')
        except CallbackRejected as exc:
            return _error(exc.status, str(exc))
        desk = self.desk()
        outcome = await asyncio.to_thread(
            desk.decide, approval_id, answer.approve, answer.by, answer.reason, update_channel=False
        )
        return self._answered(desk, outcome)

    # ------------------------------------------------------------------ sweeper

    async def sweeper(self) -> None:
        """Expire stale requests every ``SWEEP_INTERVAL`` seconds until cancelled."""
        while True:
            try:
                if uses_approvals(self._context().config):
                    await asyncio.to_thread(self.desk().sweep)
            except Exception as exc:  # the sweeper never takes the server down
                log.warning("approval sweeper: %s: %s", type(exc).__name__, exc)
            await asyncio.sleep(SWEEP_INTERVAL)


def uses_approvals(config: Any) -> bool:
    """True when ``config`` has an approval handler or a channel (otherwise the sweeper has nothing to do)."""
    return bool(config.channels) or any(
        spec.type == "approval" for groups in config.hooks.values() for group in groups for spec in group.handlers
    )


def _decide_for(desk: Desk, answer: Answer, channel_name: str) -> Outcome:
    """``desk.answer`` for an answer that came through channel ``channel_name``: refused when the request
    was posted elsewhere (a Slack user cannot answer a request that went to Feishu; a request posted
    through another entry of the same kind is left to that entry's own check, see ``_platform``)."""
    from gateway.approvals.channels.base import Outcome

    record = desk.store.approval_get(answer.approval_id)
    if record is not None and record.channel != channel_name:
        return Outcome(record, f"request {record.id} was not posted to channel {channel_name!r}")
    return desk.answer(answer, update_channel=False)
