"""A network namespace with only loopback, shared by the CLI under test and the in-process fakes.

``unshare -n <cli>`` alone would cut the CLI off from a fake server living in the pytest process
(a new namespace has its own, separate loopback). So instead:

* a short-lived thread calls ``unshare(CLONE_NEWNET)`` (what ``unshare -n`` does), brings ``lo``
  up and keeps an fd on the namespace; the namespace lives as long as that fd;
* ``bind_loopback()`` creates listening sockets *inside* the namespace (from a thread that
  ``setns``-es into it); servers in this process then serve on them as usual;
* ``wrap(argv)`` prefixes a command with ``nsenter --net=...`` so the child runs inside it.

The namespace has no interface but ``lo`` and no route, so any non-loopback connect fails in the
kernel (ENETUNREACH) and nothing can leave the machine. Needs root (CAP_SYS_ADMIN) and ``nsenter``.
``Sandbox`` falls back to the host network (loopback only by convention) when that is unavailable.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import shutil
import socket
import struct
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1
_IFREQ = "16sH22x"

T = TypeVar("T")


class NetnsUnavailable(RuntimeError):
    """The machine can't make a private network namespace (not root, no nsenter, ...)."""


def _libc_call(name: str, *args: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if getattr(libc, name)(*args) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{name}: {os.strerror(errno)}")


def _in_thread(fn: Callable[[], T]) -> T:
    """Run ``fn`` in a fresh OS thread (namespace changes stay with that thread) and return its result."""
    box: dict[str, T | BaseException] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # re-raised in the caller
            box["error"] = exc

    thread = threading.Thread(target=target, name="netns", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        current = fcntl.ioctl(sock, SIOCGIFFLAGS, struct.pack(_IFREQ, b"lo", 0))
        flags = struct.unpack(_IFREQ, current)[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack(_IFREQ, b"lo", flags | IFF_UP))


def _interfaces_and_routes() -> tuple[list[str], list[str]]:
    net = Path("/proc/thread-self/net")
    devices = [line.split(":")[0].strip() for line in (net / "dev").read_text().splitlines()[2:]]
    routes = (net / "route").read_text().splitlines()[1:]
    return devices, routes


def _new_namespace() -> int:
    _libc_call("unshare", CLONE_NEWNET)
    _loopback_up()
    devices, routes = _interfaces_and_routes()
    if devices != ["lo"] or routes:
        raise NetnsUnavailable(f"new netns is not loopback-only: devices={devices} routes={routes}")
    return os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)


@dataclass
class NetNamespace:
    fd: int

    @classmethod
    def create(cls) -> NetNamespace:
        if shutil.which("nsenter") is None:
            raise NetnsUnavailable("nsenter not found")
        try:
            return cls(_in_thread(_new_namespace))
        except OSError as exc:
            raise NetnsUnavailable(f"cannot create a network namespace: {exc}") from exc

    @property
    def path(self) -> str:
        return f"/proc/{os.getpid()}/fd/{self.fd}"

    def run_inside(self, fn: Callable[[], T]) -> T:
        def entered() -> T:
            _libc_call("setns", self.fd, CLONE_NEWNET)
            return fn()

        return _in_thread(entered)

    def close(self) -> None:
        os.close(self.fd)


def _listen(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    return sock


class Sandbox:
    """Where the CLI and the fakes meet: a private netns when possible, else the host's loopback."""

    def __init__(self, netns: NetNamespace | None, reason: str = "") -> None:
        self.netns = netns
        self.reason = reason  # why there is no netns

    @classmethod
    def create(cls) -> Sandbox:
        if os.environ.get("HOOKGATE_E2E_NETNS", "").lower() in ("0", "off", "no"):
            return cls(None, "HOOKGATE_E2E_NETNS=off")
        try:
            return cls(NetNamespace.create())
        except NetnsUnavailable as exc:
            return cls(None, str(exc))

    @property
    def isolated(self) -> bool:
        return self.netns is not None

    def bind_loopback(self, port: int = 0) -> socket.socket:
        """A listening TCP socket on 127.0.0.1 that processes run via ``wrap()`` can reach."""
        if self.netns is None:
            return _listen(port)
        return self.netns.run_inside(lambda: _listen(port))

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """``argv`` run inside the sandbox's network namespace (unchanged without one)."""
        if self.netns is None:
            return list(argv)
        return ["nsenter", f"--net={self.netns.path}", "--", *argv]

    def close(self) -> None:
        if self.netns is not None:
            self.netns.close()
