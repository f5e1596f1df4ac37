"""A loopback fake of the Slack Web API and of a person clicking a message button.

``FakeSlack(token, signing_secret)`` serves ``POST /api/<method>`` on 127.0.0.1 (``base_url`` for
``slack_sdk.WebClient``): ``chat.postMessage`` and ``chat.update`` (JSON or form bodies, bearer token
checked, ``invalid_auth`` otherwise, as Slack answers). Messages are kept in ``messages`` by ``ts``; every
call is in ``calls`` as ``(method, params)``; ``delay`` stalls every answer (a platform that hangs).

``click(url, ts, action)`` plays Slack's side of a button press: it finds the button in the stored
message's blocks (as the Slack client would render it), and POSTs a signed ``block_actions``
interactivity payload (``payload=<json>``, ``X-Slack-Signature: v0=HMAC-SHA256(secret, "v0:ts:body")``)
to ``url``. ``secret=`` signs with another secret (a forged callback).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlencode

from tests.fakes.serving import ServerThread, listening_socket, server_on


class FakeSlack:
    def __init__(self, token: str = "xoxb-fake-token", signing_secret: str = "slack-signing-secret") -> None:
        self.token = token
        self.signing_secret = signing_secret
        self.messages: dict[str, dict[str, Any]] = {}
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.delay = 0.0  # seconds to stall before answering (a platform that hangs)
        self._lock = threading.Lock()
        self._seq = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                if "json" in (self.headers.get("content-type") or ""):
                    params = json.loads(raw or b"{}")
                else:
                    params = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
                method = self.path.split("?")[0].rsplit("/", 1)[-1]
                time.sleep(fake.delay)
                answer = fake.answer(method, params, self.headers.get("authorization") or "")
                body = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json; charset=utf-8")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._thread = ServerThread(server_on(listening_socket(), Handler), "fake-slack")

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._thread.port}/api/"

    def answer(self, method: str, params: dict[str, Any], authorization: str) -> dict[str, Any]:
        with self._lock:
            self.calls.append((method, params))
            if authorization != f"Bearer {self.token}":
                return {"ok": False, "error": "invalid_auth"}
            blocks = params.get("blocks")
            if isinstance(blocks, str):
                blocks = json.loads(blocks)
            if method == "chat.postMessage":
                self._seq += 1
                ts = f"{int(time.time())}.{self._seq:06d}"
                self.messages[ts] = {
                    "channel": params["channel"],
                    "ts": ts,
                    "text": params.get("text"),
                    "blocks": blocks,
                    "updates": [],
                }
                return {
                    "ok": True,
                    "channel": params["channel"],
                    "ts": ts,
                    "message": {"text": params.get("text"), "blocks": blocks},
                }
            if method == "chat.update":
                message = self.messages.get(params.get("ts", ""))
                if message is None or message["channel"] != params.get("channel"):
                    return {"ok": False, "error": "message_not_found"}
                message.update(text=params.get("text"), blocks=blocks)
                message["updates"].append({"text": params.get("text"), "blocks": blocks})
                return {"ok": True, "channel": params["channel"], "ts": params["ts"], "text": params.get("text")}
            return {"ok": False, "error": "unknown_method"}

    def button(self, ts: str, label: str) -> dict[str, Any]:
        """The button labelled ``label`` ("Approve" / "Reject") in message ``ts``. KeyError when absent."""
        for block in self.messages[ts]["blocks"] or []:
            for element in block.get("elements", []):
                if element.get("type") == "button" and element["text"]["text"] == label:
                    return dict(element)
        raise KeyError(f"no {label!r} button in message {ts}")

    def click(
        self,
        url: str,
        ts: str,
        label: str = "Approve",
        *,
        user_id: str = "U024BE7LH",
        username: str = "alice",
        secret: str | None = None,
        age: float = 0,
    ) -> tuple[int, bytes]:
        """Press button ``label`` of message ``ts`` as user ``user_id``; POST the signed callback to ``url``.
        Returns ``(HTTP status, body)``."""
        button = self.button(ts, label)
        message = self.messages[ts]
        payload = {
            "type": "block_actions",
            "user": {"id": user_id, "username": username, "name": username},
            "api_app_id": "A0FAKE",
            "container": {"type": "message", "message_ts": ts, "channel_id": message["channel"]},
            "channel": {"id": message["channel"]},
            "message": {"ts": ts, "blocks": message["blocks"]},
            "actions": [
                {
                    "type": "button",
                    "action_id": button["action_id"],
                    "block_id": "hookgate_approval",
                    "value": button["value"],
                    "action_ts": str(time.time()),
                }
            ],
        }
        return self.send_callback(url, payload, secret=secret, age=age)

    def send_callback(
        self, url: str, payload: dict[str, Any], *, secret: str | None = None, age: float = 0
    ) -> tuple[int, bytes]:
        body = urlencode({"payload": json.dumps(payload)})
        timestamp = str(int(time.time() - age))
        digest = hmac.new(
            (secret or self.signing_secret).encode(), f"v0:{timestamp}:{body}".encode(), hashlib.sha256
        ).hexdigest()
        request = urllib.request.Request(
            url,
            data=body.encode(),
            method="POST",
            headers={
                "content-type": "application/x-www-form-urlencoded",
                "x-slack-request-timestamp": timestamp,
                "x-slack-signature": f"v0={digest}",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def stop(self) -> None:
        self._thread.stop()
