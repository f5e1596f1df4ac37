"""The thin client's server URL reading (``gateway.client._split_url``): a malformed URL is a
misconfiguration named in one line, never a guess at what was meant."""

from __future__ import annotations

import pytest

from gateway.client import ServerMisconfigured, _split_url


@pytest.mark.parametrize(
    ("url", "parts"),
    [
        ("http://127.0.0.1:8787", ("http", "127.0.0.1", 8787, "")),
        ("https://gate.example/base/", ("https", "gate.example", 443, "/base")),
        ("http://[::1]:8787", ("http", "::1", 8787, "")),
        ("http://[::1]", ("http", "::1", 80, "")),
    ],
)
def test_good_urls(url: str, parts: tuple[str, str, int, str]) -> None:
    assert _split_url(url) == parts


@pytest.mark.parametrize(
    "url",
    ["http://[::1", "http://[::1]x", "http://[::1]:", "http://[::1]:99999", "http://:8787", "http://u@h:1", "ftp://h"],
)
def test_malformed_urls_are_misconfigurations(url: str) -> None:
    with pytest.raises(ServerMisconfigured):
        _split_url(url)
