"""The console at ``/ui`` in ``hookgate serve``: the audit trail in a browser (plain HTML, a little
JavaScript, no asset from outside: everything comes from ``gateway/audit/console/``).

Routes (all behind ``RequestGuard``: the same Host, Origin and token rules as the API, see
``gateway.serve.guard``; a browser signs in once and then sends an HttpOnly, ``SameSite=Strict``
cookie that stands for the token)::

    GET  /ui                     the console (tabs: Decisions, Handlers, Approvals, and any panel plugged in)
    GET  /ui/login               the sign-in form (no data; served without the token)
    POST /ui/session             {"token": "..."} -> 204 and the session cookie; 401 when wrong
    GET  /ui/assets/NAME         the console's own files (NAME from ``ASSETS``)
    GET  /ui/api/records         latest records, newest first: {"records": [summary, ...], "note": why
                                 this config's records are not shown here, or null}; query
                                 parameters session, tool, decision, handler, event, since (30m, 1h,
                                 2d, ISO time), limit (1-1000, default 100). summary: id, n, time,
                                 event, tool_name, input (the tool input in one short line),
                                 session_id, decision, reason, handlers[{id, type, status, verdict}],
                                 unreadable (a row whose stored body is broken: why; else null)
    GET  /ui/api/records/{id}    {"record": {...the full record...}, "chain": {id, n, chain, seq, ...}}
    GET  /ui/api/stats           {"handlers": [{id, type, calls, denies, errors, timeouts, p50_ms,
                                 p95_ms}]}; query parameter since
    GET  /ui/api/approvals       the Approvals panel's data, and POST /ui/api/approvals/{id} its answers
                                 (``gateway.serve.approvals``)

Every page carries a Content-Security-Policy that allows only this server (``default-src 'self'``,
no inline script or style), so a record's text can never run as code, and ``frame-ancestors 'none'``.

How a panel plugs in (the Approvals panel, ``approvals.js``, is one that did):

1. Put its script in ``gateway/audit/console/`` (e.g. ``approvals.js``) and add the name to
   ``PANEL_SCRIPTS`` here (and to ``ASSETS`` if it has a stylesheet too). The console page loads the
   scripts in that order after ``console.js``.
2. The script calls ``HookgateConsole.registerPanel({id, title, order, mount(section, api),
   refresh()})``: ``mount`` fills its ``<section>`` once; ``refresh`` (optional, returns a promise)
   runs when its tab is shown and every 2 s while it is. ``api.get(path, params)`` and
   ``api.post(path, body)`` call this server with the session cookie (JSON in and out; a POST from the
   console is same-origin, which the guard allows on ``/ui`` paths); ``api.el(tag, attrs, ...children)``
   builds DOM nodes (children as text, never HTML); ``api.status(text)`` sets the header's status line.
   ``order`` sorts the tabs (Decisions 10, Handlers 20, Approvals 30).
3. Its data routes go in its own module under ``gateway/serve/`` (e.g. ``gateway/serve/approvals.py``)
   under ``/ui/api/<panel>/...`` and are added in ``create_app`` next to ``ui_routes``; they are behind
   the same guard, and ``html_headers``/``api_headers`` give them the console's response headers.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import os
from typing import TYPE_CHECKING, Any

from gateway.serve.guard import UI_SESSION_SECONDS, ui_cookie_name, ui_cookie_value

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from gateway.config import RuntimeConfig

PANEL_SCRIPTS: list[str] = ["decisions.js", "handlers.js", "approvals.js"]
"""Panel scripts the console page loads, in order (see module docstring)."""
ASSETS: dict[str, str] = {
    "console.js": "text/javascript",
    "console.css": "text/css",
    "login.js": "text/javascript",
    **{name: "text/javascript" for name in PANEL_SCRIPTS},
}
"""Files served under ``/ui/assets/`` with their media types; anything else is a 404."""
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
MAX_LIMIT = 1000


def console_dir() -> str:
    """The folder of the console's files (``gateway/audit/console``)."""
    import gateway.audit

    return os.path.join(os.path.dirname(os.path.abspath(gateway.audit.__file__)), "console")


def html_headers() -> dict[str, str]:
    """Headers of every console response: CSP, no framing, no sniffing, no referrer, no caching."""
    return {
        "Content-Security-Policy": CSP,
        "X-Frame-Options": "DENY",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    }


def api_headers() -> dict[str, str]:
    return {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"}


def _read(name: str) -> bytes:
    with open(os.path.join(console_dir(), name), "rb") as fh:
        return fh.read()


def _json(content: Any, status: int = 200) -> Response:
    """A console API answer: JSON with every non-ASCII character escaped, so a record holding a lone
    surrogate (an agent's tool input can) is still valid JSON in valid UTF-8 (Starlette's ``JSONResponse``
    would fail to encode it, a 500)."""
    from starlette.responses import Response

    body = json.dumps(content, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return Response(body, status_code=status, media_type="application/json", headers=api_headers())


def _error(status: int, message: str) -> Response:
    return _json({"error": message}, status)


def summary(row: Any) -> dict[str, Any]:
    """A record as the Decisions list shows it (see module docstring)."""
    record = row.record
    handlers = [
        {"id": h.get("id"), "type": h.get("type"), "status": h.get("status"), "verdict": h.get("verdict")}
        for h in record.get("handlers") or []
        if isinstance(h, dict)
    ]
    return {
        "id": row.id,
        "n": row.n,
        "time": record.get("time"),
        "event": record.get("event"),
        "tool_name": record.get("tool_name"),
        "input": input_text(record.get("tool_input")),
        "session_id": record.get("session_id"),
        "decision": record.get("decision"),
        "reason": record.get("reason"),
        "handlers": handlers,
        "unreadable": record.get("unreadable"),  # a row whose stored body is broken: why
    }


def unseen_note(audit: dict[str, Any]) -> str | None:
    """Why the console shows none of this config's new records, or None when it does: the console reads
    the store, and a config may record nothing or write its records elsewhere."""
    if audit.get("record") == "off":
        return "this server's config records nothing (audit.record: off)"
    sinks = list(audit.get("sinks", ["store"]))
    if "store" in sinks:
        return None
    if not sinks:
        return "this server's config keeps no records (audit.sink: [], spans only); the console reads the store"
    return (
        f"this server's config writes its records to {', '.join(sinks)} (audit.sink), not to the store "
        "the console reads; add store to audit.sink to see them here"
    )


def input_text(tool_input: Any, limit: int = 160) -> str:
    """A tool input in one short line: its ``command``, ``file_path``, ``url`` or ``pattern`` when it has
    one, else compact JSON; at most ``limit`` characters."""
    if not tool_input:
        return ""
    text = None
    if isinstance(tool_input, dict):
        for key in ("command", "file_path", "url", "pattern", "query", "prompt"):
            if isinstance(tool_input.get(key), str):
                text = tool_input[key]
                break
    if text is None:
        text = json.dumps(tool_input, ensure_ascii=False, separators=(",", ":"))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Console:
    """The console's endpoints over the server's current config (``config()``) and token."""

    def __init__(self, config: Any, token: str | None) -> None:
        self._config = config
        self.token = token

    @property
    def config(self) -> RuntimeConfig:
        value: RuntimeConfig = self._config()
        return value

    def _with_store(self, action: Any) -> Any:
        """Run ``action(store)`` on a fresh store connection after moving the spool in (a thread)."""
        from gateway.audit.recorder import default_chain
        from gateway.audit.spool import drain
        from gateway.store import default_state_dir, open_store

        config = self.config
        store = open_store(config)
        try:
            state_dir = os.path.expanduser(config.settings.get("state_dir") or default_state_dir())
            drain(state_dir, store, config.audit.get("chain") or default_chain())
            return action(store)
        finally:
            store.close()

    async def page(self, request: Request) -> Response:
        from starlette.responses import Response

        scripts = "\n".join(f'<script src="/ui/assets/{name}"></script>' for name in PANEL_SCRIPTS)
        html = _read("index.html").decode().replace("<!-- PANEL SCRIPTS -->", scripts)
        return Response(html, media_type="text/html; charset=utf-8", headers=html_headers())

    async def login(self, request: Request) -> Response:
        from starlette.responses import Response

        return Response(_read("login.html"), media_type="text/html; charset=utf-8", headers=html_headers())

    async def asset(self, request: Request) -> Response:
        from starlette.responses import Response

        name = request.path_params["name"]
        if name not in ASSETS:
            return _error(404, f"no console asset {name[:100]!r}")
        return Response(_read(name), media_type=ASSETS[name], headers=html_headers())

    async def session(self, request: Request) -> Response:
        """Exchange the token for the session cookie (204), or 401."""
        from starlette.responses import Response

        media = request.headers.get("content-type", "").partition(";")[0].strip().lower()
        if media != "application/json":
            return _error(415, "Content-Type must be application/json")
        try:
            body = await request.json()
        except ValueError:
            return _error(400, 'body must be JSON: {"token": "..."}')
        given = body.get("token") if isinstance(body, dict) else None
        if not isinstance(given, str):
            return _error(400, 'body must be JSON: {"token": "..."}')
        if self.token is None:
            return Response(status_code=204, headers=api_headers())
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            from gateway.serve.guard import WRONG_TOKENS

            if not await WRONG_TOKENS.pause():  # one guess at a time, paced (see WrongTokens)
                return _error(429, "too many wrong tokens at once; try again later")
            return _error(401, "wrong token")
        response = Response(status_code=204, headers=api_headers())
        response.set_cookie(
            ui_cookie_name(self.token),
            ui_cookie_value(self.token),
            max_age=UI_SESSION_SECONDS,
            path="/ui",
            httponly=True,
            samesite="strict",
        )
        return response

    def _filter(self, request: Request, *, with_limit: bool) -> Any:
        """An ``AuditFilter`` from the query string. Raises ValueError with a one-line message."""
        from gateway.audit.record import DECISIONS
        from gateway.audit.report import event_name, parse_since
        from gateway.store.audit_types import AuditFilter

        q = request.query_params
        event = event_name(q["event"]) if q.get("event") else None  # in any case, as the CLI's --event
        decision = q.get("decision") or None
        if decision is not None and decision not in DECISIONS:
            raise ValueError(f"decision {decision[:40]!r}: expected one of {', '.join(DECISIONS)}")
        try:  # parse_since speaks of the command line's --since; here it is the query parameter since
            since = parse_since(q["since"]) if q.get("since") else None
        except ValueError as exc:
            raise ValueError(str(exc).removeprefix("--")) from None
        limit = None
        if with_limit:
            try:
                limit = int(q.get("limit") or 100)
            except ValueError:
                raise ValueError("limit: expected an integer 1-1000") from None
            if not 1 <= limit <= MAX_LIMIT:
                raise ValueError("limit: expected an integer 1-1000")
        return AuditFilter(
            since=since,
            session=q.get("session") or None,
            tool=q.get("tool") or None,
            decision=decision,
            handler=q.get("handler") or None,
            event=event,
            limit=limit,
        )

    async def records(self, request: Request) -> Response:
        try:
            flt = self._filter(request, with_limit=True)
        except ValueError as exc:
            return _error(400, str(exc))
        rows = await asyncio.to_thread(self._with_store, lambda store: store.audit_records(flt))
        return _json({"records": [summary(r) for r in rows], "note": unseen_note(self.config.audit)})

    async def record(self, request: Request) -> Response:
        record_id = request.path_params["id"]
        row = await asyncio.to_thread(self._with_store, lambda store: store.audit_record(record_id))
        if row is None:
            return _error(404, f"no record {record_id[:100]!r}")
        from gateway.audit.record import ordered

        return _json({"record": ordered(row.record), "chain": row.chain_info()})

    async def stats(self, request: Request) -> Response:
        from gateway.audit.report import handler_stats

        try:
            flt = self._filter(request, with_limit=False)
        except ValueError as exc:
            return _error(400, str(exc))
        # streamed from the store in the thread: the Handlers panel asks every 2 s, and loading every record
        # each time held a large trail whole in the server's memory
        entries = await asyncio.to_thread(self._with_store, lambda store: handler_stats(store.audit_handler_lists(flt)))
        return _json({"handlers": entries})


def ui_routes(config: Any, token: str | None) -> list[Any]:
    """The console's routes; ``config``: a callable returning the server's current ``RuntimeConfig``."""
    from starlette.routing import Route

    console = Console(config, token)
    return [
        Route("/ui", console.page, methods=["GET"]),
        Route("/ui/", console.page, methods=["GET"]),
        Route("/ui/login", console.login, methods=["GET"]),
        Route("/ui/session", console.session, methods=["POST"]),
        Route("/ui/assets/{name}", console.asset, methods=["GET"]),
        Route("/ui/api/records", console.records, methods=["GET"]),
        Route("/ui/api/records/{id}", console.record, methods=["GET"]),
        Route("/ui/api/stats", console.stats, methods=["GET"]),
    ]
