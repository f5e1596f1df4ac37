"""The HTTP plumbing every fake model server shares: a loopback socket and a server thread."""

from __future__ import annotations

import contextlib
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def listening_socket(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A listening socket with TCP_NODELAY, which accepted connections inherit on Linux: a reply written
    as headers then body is not held back by Nagle's algorithm against the client's delayed ACK (~40 ms
    per request otherwise)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(64)
    return sock


def server_on(
    sock: socket.socket,
    handler: type[BaseHTTPRequestHandler],
    server_class: type[ThreadingHTTPServer] = ThreadingHTTPServer,
) -> ThreadingHTTPServer:
    """An HTTP server that serves ``sock`` (already bound, e.g. inside a network namespace)."""
    server = server_class(sock.getsockname()[:2], handler, bind_and_activate=False)
    server.socket.close()
    server.socket = sock
    server.server_address = sock.getsockname()[:2]
    return server


class ServerThread:
    """Serves ``server`` from a daemon thread until ``stop()``."""

    def __init__(self, server: ThreadingHTTPServer, name: str) -> None:
        self.server = server
        self.thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name=name, daemon=True
        )
        self.thread.start()

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def stop(self) -> None:
        """Stop serving, drop open keep-alive connections (when the server tracks them), close, join."""
        self.server.shutdown()
        close_connections = getattr(self.server, "close_connections", None)
        if close_connections is not None:
            with contextlib.suppress(OSError):
                close_connections()
        self.server.server_close()
        self.thread.join(timeout=5)
