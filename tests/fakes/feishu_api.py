"""A loopback fake of the Feishu/Lark Open API and of a person pressing a card button.

``FakeFeishu(app_id, app_secret, verification_token, encrypt_key)`` serves, on 127.0.0.1 (``domain`` for
``lark_oapi.Client.builder().domain(...)``):

- ``POST /open-apis/auth/v3/tenant_access_token/internal``: a tenant token for the right app id/secret
- ``POST /open-apis/im/v1/messages?receive_id_type=chat_id``: stores the card (bearer token checked)
- ``PATCH /open-apis/im/v1/messages/{message_id}``: replaces the card's content

Cards are kept in ``messages`` by ``message_id`` (``content`` parsed, ``updates`` appended on PATCH);
``calls`` lists ``(method, path)``. ``click(url, message_id, label)`` plays Feishu's side of a button
press: the button's ``value`` from the stored card, in a ``card.action.trigger`` callback (schema 2.0),
encrypted with the encrypt key (AES-256-CBC, key sha256(encrypt_key)) and signed with
``X-Lark-Signature = sha256(timestamp + nonce + encrypt_key + body)``; ``token=`` / ``encrypt_key=``
override the credentials used (a forged callback).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes.serving import ServerThread, listening_socket, server_on

TENANT_TOKEN = "t-fake-tenant-token"


def encrypt(key: str, plaintext: bytes) -> str:
    """What Feishu puts in ``{"encrypt": ...}``: base64(iv + AES-256-CBC(PKCS7(plaintext)))."""
    from Crypto.Cipher import AES

    iv = os.urandom(16)
    pad = 16 - len(plaintext) % 16
    cipher = AES.new(hashlib.sha256(key.encode()).digest(), AES.MODE_CBC, iv)
    return base64.b64encode(iv + cipher.encrypt(plaintext + bytes([pad]) * pad)).decode()


class FakeFeishu:
    def __init__(
        self,
        app_id: str = "cli_fake",
        app_secret: str = "fake-app-secret",
        verification_token: str = "fake-verification-token",
        encrypt_key: str = "fake-encrypt-key",
    ) -> None:
        self.app_id, self.app_secret = app_id, app_secret
        self.verification_token, self.encrypt_key = verification_token, encrypt_key
        self.messages: dict[str, dict[str, Any]] = {}
        self.calls: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        self._seq = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self, method: str) -> None:
                length = int(self.headers.get("content-length") or 0)
                data = json.loads(self.rfile.read(length) or b"{}")
                status, answer = fake.answer(method, self.path, data, self.headers.get("authorization") or "")
                body = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json; charset=utf-8")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                self._serve("POST")

            def do_PATCH(self) -> None:
                self._serve("PATCH")

        self._thread = ServerThread(server_on(listening_socket(), Handler), "fake-feishu")

    @property
    def domain(self) -> str:
        return f"http://127.0.0.1:{self._thread.port}"

    def answer(self, method: str, path: str, data: dict[str, Any], authorization: str) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.calls.append((method, path))
            route = path.split("?")[0]
            if route == "/open-apis/auth/v3/tenant_access_token/internal":
                if data.get("app_id") != self.app_id or data.get("app_secret") != self.app_secret:
                    return 200, {"code": 10014, "msg": "app secret invalid"}
                return 200, {"code": 0, "msg": "ok", "tenant_access_token": TENANT_TOKEN, "expire": 7200}
            if authorization != f"Bearer {TENANT_TOKEN}":
                return 200, {"code": 99991663, "msg": "Invalid access token for authorization"}
            if method == "POST" and route == "/open-apis/im/v1/messages":
                if "receive_id_type=chat_id" not in path or data.get("msg_type") != "interactive":
                    return 200, {"code": 230001, "msg": "invalid receive_id_type or msg_type"}
                self._seq += 1
                message_id = f"om_fake{self._seq:04d}"
                self.messages[message_id] = {
                    "chat_id": data["receive_id"],
                    "content": json.loads(data["content"]),
                    "updates": [],
                }
                return 200, {
                    "code": 0,
                    "msg": "success",
                    "data": {
                        "message_id": message_id,
                        "chat_id": data["receive_id"],
                        "msg_type": "interactive",
                        "create_time": str(int(time.time() * 1000)),
                        "body": {"content": data["content"]},
                    },
                }
            if method == "PATCH" and route.startswith("/open-apis/im/v1/messages/"):
                message = self.messages.get(route.rsplit("/", 1)[-1])
                if message is None:
                    return 200, {"code": 230011, "msg": "message not found"}
                message["content"] = json.loads(data["content"])
                message["updates"].append(message["content"])
                return 200, {"code": 0, "msg": "success", "data": {}}
            return 404, {"code": 404, "msg": "not found"}

    def button(self, message_id: str, label: str) -> dict[str, Any]:
        """The button labelled ``label`` on card ``message_id``. KeyError when absent."""
        for element in self.messages[message_id]["content"].get("elements", []):
            for action in element.get("actions", []):
                if action.get("tag") == "button" and action["text"]["content"] == label:
                    return dict(action)
        raise KeyError(f"no {label!r} button on card {message_id}")

    def click(
        self,
        url: str,
        message_id: str,
        label: str = "Approve",
        *,
        open_id: str = "ou_fake_alice",
        token: str | None = None,
        encrypt_key: str | None = None,
    ) -> tuple[int, bytes]:
        """Press ``label`` on card ``message_id`` as ``open_id``; POST the callback to ``url``."""
        button = self.button(message_id, label)
        callback = {
            "schema": "2.0",
            "header": {
                "event_id": os.urandom(8).hex(),
                "token": token or self.verification_token,
                "create_time": str(int(time.time() * 1000)),
                "event_type": "card.action.trigger",
                "tenant_key": "fake-tenant",
                "app_id": self.app_id,
            },
            "event": {
                "operator": {"tenant_key": "fake-tenant", "open_id": open_id, "user_id": open_id + "_uid"},
                "token": "c-" + os.urandom(6).hex(),
                "host": "im_message",
                "delivery_type": "url",
                "action": {"tag": "button", "value": button["value"]},
                "context": {"open_message_id": message_id, "open_chat_id": self.messages[message_id]["chat_id"]},
            },
        }
        key = encrypt_key or self.encrypt_key
        body = json.dumps({"encrypt": encrypt(key, json.dumps(callback).encode())}).encode()
        timestamp, nonce = str(int(time.time())), os.urandom(8).hex()
        signature = hashlib.sha256((timestamp + nonce + key).encode() + body).hexdigest()
        request = urllib.request.Request(
            url,
            data=body,
            method="POST",
            headers={
                "content-type": "application/json",
                "X-Lark-Request-Timestamp": timestamp,
                "X-Lark-Request-Nonce": nonce,
                "X-Lark-Signature": signature,
            },
        )
        try:
            with urllib.request.urlopen(
                request, timeout=60
            ) as response:  # the first callback imports lark-oapi (seconds)
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def stop(self) -> None:
        self._thread.stop()
