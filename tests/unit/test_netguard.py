"""The SSRF policy (handlers.netguard): address classes, names resolved through a static table.

``vet`` never opens a connection, so private and metadata addresses can be tested here by name.
"""

from __future__ import annotations

import ipaddress

import pytest

from handlers.netguard import AddressBlocked, ResolveError, StaticResolver, address_problem, is_loopback_host, vet


@pytest.mark.parametrize(
    ("address", "label"),
    [
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("127.0.0.1", "loopback"),
        ("169.254.169.254", "cloud metadata"),
        ("100.100.100.200", "carrier-grade NAT"),
        ("100.64.0.1", "carrier-grade NAT"),
        ("0.0.0.0", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("198.18.0.1", "benchmarking"),
        ("192.0.2.1", "documentation"),
        ("::1", "loopback"),
        ("fd00:ec2::254", "private"),
        ("fe80::1", "link-local"),
        ("::", "unspecified"),
        ("::ffff:10.0.0.1", "private"),
        ("64:ff9b::a9fe:a9fe", "cloud metadata"),
        ("2002:0a00:0001::", "private"),
        ("2001:db8::1", "documentation"),
        ("ff02::1", "multicast"),
    ],
)
def test_non_public_addresses_are_refused(address: str, label: str) -> None:
    problem = address_problem(ipaddress.ip_address(address))
    assert problem is not None and label in problem


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
def test_public_addresses_pass(address: str) -> None:
    assert address_problem(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("localhost", True),
        ("api.localhost", True),
        ("127.9.9.9", True),
        ("[::1]", True),
        ("localhost.example.com", False),
        ("10.0.0.1", False),
    ],
)
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback_host(host) is loopback


HOSTS = StaticResolver(
    {
        "hooks.corp.internal": ["10.20.30.40"],
        "metadata.corp.internal": ["169.254.169.254"],
        "split.example.com": ["93.184.215.14", "192.168.0.10"],
        "public.example.com": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
        "localhost": ["127.0.0.1", "::1"],
        "evil.localhost": ["93.184.215.14"],
    }
)


@pytest.mark.parametrize(
    ("host", "why"),
    [
        ("hooks.corp.internal", "10.20.30.40 is a private address"),
        ("metadata.corp.internal", "cloud metadata"),
        ("split.example.com", "192.168.0.10"),  # one bad answer refuses the whole name
        ("evil.localhost", "not a loopback address"),
    ],
)
async def test_names_resolving_to_refused_addresses(host: str, why: str) -> None:
    with pytest.raises(AddressBlocked, match=r"allowPrivateNetworks|loopback") as info:
        await vet(host, 443, allow_private=False, resolver=HOSTS)
    assert why in str(info.value)


async def test_vet_returns_the_checked_addresses() -> None:
    assert await vet("public.example.com", 443, allow_private=False, resolver=HOSTS) == [
        "93.184.215.14",
        "2606:2800:21f:cb07:6820:80da:af6b:8b2c",
    ]
    assert await vet("localhost", 80, allow_private=False, resolver=HOSTS) == ["127.0.0.1", "::1"]
    assert await vet("hooks.corp.internal", 80, allow_private=True, resolver=HOSTS) == ["10.20.30.40"]
    assert await vet("10.0.0.1", 80, allow_private=True, resolver=HOSTS) == ["10.0.0.1"]
    assert await vet("127.0.0.1", 80, allow_private=False, resolver=HOSTS) == ["127.0.0.1"]


async def test_literal_private_address_is_refused_without_resolving() -> None:
    resolver = StaticResolver({})
    with pytest.raises(AddressBlocked, match=r"169\.254\.169\.254"):
        await vet("169.254.169.254", 80, allow_private=False, resolver=resolver)
    assert resolver.calls == []


async def test_unknown_name_is_a_resolve_error() -> None:
    with pytest.raises(ResolveError, match=r"nowhere\.invalid"):
        await vet("nowhere.invalid", 80, allow_private=False, resolver=HOSTS)


def test_refusals_read_as_english() -> None:
    from handlers.http import _attempts

    assert address_problem(ipaddress.ip_address("0.0.0.0")) == "0.0.0.0 is an unspecified address"
    assert (_attempts(1), _attempts(2)) == ("1 attempt", "2 attempts")
