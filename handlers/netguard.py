"""The SSRF policy of the ``http`` handler: which addresses a webhook may reach (stdlib only).

- A URL whose host is loopback (``127.0.0.0/8``, ``::1``, ``localhost``, ``*.localhost``) is allowed:
  local validators are the common case. A loopback *name* must resolve to loopback addresses only.
- Any other host must resolve only to public addresses. Refused (unless the handler sets
  ``allowPrivateNetworks: true``): loopback, private (RFC 1918, ``fc00::/7``), link-local
  (``169.254.0.0/16`` with the cloud metadata address ``169.254.169.254``, ``fe80::/10``), carrier-grade
  NAT (``100.64.0.0/10``, with Alibaba's metadata ``100.100.100.200``), AWS's ``fd00:ec2::254``,
  documentation, benchmarking, multicast, reserved and unspecified ranges. IPv4 carried inside IPv6
  (``::ffff:a.b.c.d``, NAT64 ``64:ff9b::/96``, 6to4, Teredo) is checked as IPv4. One refused answer
  refuses the whole name.

``vet`` applies the policy to a host and its resolver's answers; ``handlers.webhook_client`` uses it
as the only resolver of its connections (and checks literal IPs with it), and dials the vetted IP, so
nothing can re-resolve the name in between (DNS rebinding). Resolvers are injectable: ``system_resolver``
(``getaddrinfo``) or ``StaticResolver`` (an ``/etc/hosts``-style table, used by the tests).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable, Mapping

from gateway.errors import AddressBlocked as AddressBlocked
from gateway.errors import ResolveError as ResolveError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[list[str]]]
"""``await resolver(host, port) -> [ip, ...]``; raises OSError when the name does not resolve."""

_BLOCKED: tuple[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, str], ...] = tuple(
    (ipaddress.ip_network(net), label)
    for net, label in (
        ("0.0.0.0/8", "unspecified"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "carrier-grade NAT"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local (cloud metadata)"),
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "IETF protocol"),
        ("192.0.2.0/24", "documentation"),
        ("192.168.0.0/16", "private"),
        ("198.18.0.0/15", "benchmarking"),
        ("198.51.100.0/24", "documentation"),
        ("203.0.113.0/24", "documentation"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved"),
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("fc00::/7", "private (unique local)"),
        ("fe80::/10", "link-local"),
        ("ff00::/8", "multicast"),
        ("2001:db8::/32", "documentation"),
    )
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    return None


def address_problem(ip: IPAddress) -> str | None:
    """Why ``ip`` may not be contacted without ``allowPrivateNetworks`` (None: a public address)."""
    if isinstance(ip, ipaddress.IPv6Address):
        inner = _embedded_ipv4(ip)
        if inner is not None:
            problem = address_problem(inner)
            return f"{problem} (inside {ip})" if problem else None
    for network, label in _BLOCKED:
        if ip.version == network.version and ip in network:
            return f"{ip} is {'an' if label[:1] in 'aeiou' else 'a'} {label} address"
    if not ip.is_global or ip.is_multicast or ip.is_reserved:
        return f"{ip} is not a public address"
    return None


def parse_ip(host: str) -> IPAddress | None:
    """The literal IP in a URL host (``[::1]`` brackets allowed), or None for a name."""
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def legacy_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address a host spelled in a legacy numeric form stands for (``2130706433``, ``127.1``,
    ``0``, ``0x7f.0.0.1``, ``0177.0.0.1``: what ``inet_aton`` and so ``getaddrinfo`` read), or None for
    a name or a standard dotted quad."""
    name = host.rstrip(".").lower()
    if not name or any(c not in "0123456789abcdefx." for c in name) or not name[0].isdigit():
        return None
    try:
        ip = ipaddress.IPv4Address(socket.inet_aton(name))
    except (OSError, ValueError):
        return None
    return None if str(ip) == name else ip


def host_problem(host: str, *, allow_private: bool = False) -> str | None:
    """The one rule, for ``hookgate validate`` and for the handler at delivery time alike, on a URL's
    literal host: a legacy numeric IPv4 spelling is refused (write the dotted quad: the SSRF guard
    judges names by what they resolve to, so ``http://2130706433/`` would be refused at delivery);
    a literal address that is not loopback must be public unless ``allow_private``. None: fine (a name
    is vetted when it is resolved, see ``vet``)."""
    legacy = legacy_ipv4(host)
    if legacy is not None:
        return f"host {host!r} is the IPv4 address {legacy} in a non-standard numeric form; write it as {legacy}"
    ip = parse_ip(host)
    if ip is None or ip.is_loopback or allow_private:
        return None
    reason = address_problem(ip)
    if reason:
        return f"{reason}; the SSRF guard refuses it (set allowPrivateNetworks: true to allow private networks)"
    return None


def is_loopback_host(host: str) -> bool:
    """True for a loopback literal, ``localhost`` and ``*.localhost`` (RFC 6761)."""
    ip = parse_ip(host)
    if ip is not None:
        return ip.is_loopback
    name = host.lower().rstrip(".")
    return name == "localhost" or name.endswith(".localhost")


async def system_resolver(host: str, port: int) -> list[str]:
    """The system resolver (``getaddrinfo``): unique addresses in the order the system prefers."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class StaticResolver:
    """An ``/etc/hosts``-style resolver: ``{name: [ip, ...]}``; unknown names fail like NXDOMAIN.

    ``calls`` records every ``(host, port)`` asked, so a test can count resolutions.
    """

    def __init__(self, table: Mapping[str, Iterable[str]]) -> None:
        self.table = {name.lower(): list(ips) for name, ips in table.items()}
        self.calls: list[tuple[str, int]] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append((host, port))
        try:
            return list(self.table[host.lower()])
        except KeyError:
            raise socket.gaierror(socket.EAI_NONAME, f"{host}: name not in the static table") from None


def literal_refusal(ip: IPAddress, *, allow_private: bool) -> str | None:
    """Why a URL whose host is the literal ``ip`` is refused (the ``AddressBlocked`` message), or None."""
    problem = None if allow_private or ip.is_loopback else address_problem(ip)
    return (
        f"refusing to connect to {problem}; set allowPrivateNetworks: true to allow private networks"
        if problem
        else None
    )


async def vet(
    host: str, port: int, *, allow_private: bool, resolver: Resolver, timeout: float | None = None
) -> list[str]:
    """The addresses ``host`` may be reached at, resolved once. Raises AddressBlocked, ResolveError."""
    literal = parse_ip(host)
    if literal is not None:
        refusal = literal_refusal(literal, allow_private=allow_private)
        if refusal:
            raise AddressBlocked(refusal)
        return [str(literal)]
    try:
        async with asyncio.timeout(timeout):
            answers = await resolver(host, port)
    except TimeoutError:
        raise ResolveError(f"resolving {host} took longer than {timeout:g} s") from None
    except OSError as exc:
        raise ResolveError(f"cannot resolve {host}: {exc.strerror or exc}") from None
    ips = [ipaddress.ip_address(answer) for answer in answers]
    if not ips:
        raise ResolveError(f"cannot resolve {host}: no addresses")
    if is_loopback_host(host):
        for ip in ips:
            if not ip.is_loopback:
                raise AddressBlocked(
                    f"refusing to connect to {host}: it resolved to {ip}, which is not a loopback address"
                )
    elif not allow_private:
        for ip in ips:
            problem = address_problem(ip)
            if problem:
                raise AddressBlocked(
                    f"refusing to connect to {host}: it resolves to {problem}; set "
                    "allowPrivateNetworks: true to allow private networks"
                )
    return [str(ip) for ip in ips]
