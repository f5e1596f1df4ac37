"""The console behind a TLS-terminating reverse proxy that passes the browser's Host on (what README's
security notes advise for a server reached from elsewhere): a real TLS proxy in front of ``hookgate serve
--allow-host``, and a real headless Chromium that signs in through it. The browser's POSTs carry
``Origin: https://<name>``, the console's own origin there."""

from __future__ import annotations

import json
import socket
import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from urllib.parse import urlparse

from tests.conftest import ROOT
from tests.fakes.browser import chromium, sign_in
from tests.fakes.webhooks import self_signed
from tests.integration.serve_helpers import ServeProcess
from tests.integration.test_console import TOKEN, bash, post, write_config

NAME = "hooks.console.test"


def _pipe(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (source, target):
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


@contextmanager
def tls_proxy(tmp_path: Path, backend: str) -> Iterator[int]:
    """A TLS-terminating TCP proxy on 127.0.0.1 for ``NAME`` in front of ``backend`` (``http://host:port``):
    bytes go through as they are (the Host header included). Yields its port."""
    certfile, keyfile = self_signed(str(tmp_path), NAME)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certfile, keyfile)
    target = urlparse(backend)
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                raw, _ = listener.accept()
            except OSError:
                return
            try:
                client = context.wrap_socket(raw, server_side=True)
                upstream = socket.create_connection((target.hostname, target.port))
            except (OSError, ssl.SSLError):
                raw.close()
                continue
            threading.Thread(target=_pipe, args=(client, upstream), daemon=True).start()
            threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        listener.close()


def test_sign_in_and_answers_through_a_tls_proxy(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    serve = ServeProcess(config, args=["--allow-host", NAME], env={"HOOKGATE_TOKEN": TOKEN}, cwd=ROOT)
    with serve as server, tls_proxy(tmp_path, server.url) as port:
        assert post(server.url, bash("ls")) == 200
        flags = (f"--host-resolver-rules=MAP {NAME} 127.0.0.1", "--ignore-certificate-errors")
        with chromium(*flags) as browser:
            from playwright.sync_api import expect

            url = f"https://{NAME}:{port}"
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(f"{url}/ui")
            assert page.url == f"{url}/ui/login"
            sign_in(page, url, TOKEN, server_log=server.lines)
            expect(page.locator("#records-body tr.record")).to_have_count(1, timeout=20_000)
            assert errors == []
        # another origin is still refused: another name, or the name on another port
        for origin in ("https://evil.example", f"https://{NAME}:1", f"https://{NAME}", "null"):
            request = urllib.request.Request(
                f"{server.url}/ui/session",
                data=json.dumps({"token": TOKEN}).encode(),
                headers={"Content-Type": "application/json", "Host": f"{NAME}:{port}", "Origin": origin},
            )
            try:
                urllib.request.urlopen(request, timeout=30)
                raise AssertionError(f"{origin} was let in")
            except urllib.error.HTTPError as exc:
                assert exc.code == 403, (origin, exc.code)
