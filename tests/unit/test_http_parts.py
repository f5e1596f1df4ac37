"""Pieces of the http handler: interpolation, URL checks, Standard Webhooks signing."""

from __future__ import annotations

import base64
import datetime

import pytest
from standardwebhooks import Webhook

from gateway import client, events, wire
from handlers.http import decode_secret, interpolate, sign, url_problem, variables


def test_interpolation_resolves_only_allowed_names() -> None:
    env = {"A": "1", "B": "2"}
    assert interpolate("x$A-${A}-$B-${C}-$$", ["A", "C"], env) == "x1-1---$$"
    assert variables("a $X ${Y_1} $1 ${z}") == ["X", "Y_1", "z"]


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("http://127.0.0.1:8080/x", True),
        ("https://h.example/x?q=1", True),
        ("ftp://h/", False),
        ("h.example/x", False),
        ("http://u:p@h/", False),
        ("http://[::1/", False),
    ],
)
def test_url_problem(url: str, ok: bool) -> None:
    assert (url_problem(url) is None) is ok


def test_signature_matches_the_reference_library() -> None:
    raw = b"0123456789abcdef0123456789abcdef"
    secret = "whsec_" + base64.b64encode(raw).decode()
    body = b'{"hook_event_name":"Stop"}'
    stamp = int(datetime.datetime.now(datetime.UTC).timestamp())
    header = sign(decode_secret(secret), "msg_1", stamp, body)
    assert header == Webhook(secret).sign("msg_1", datetime.datetime.fromtimestamp(stamp, datetime.UTC), body.decode())
    Webhook(secret).verify(body, {"webhook-id": "msg_1", "webhook-timestamp": str(stamp), "webhook-signature": header})


def test_secret_decoding() -> None:
    assert decode_secret("whsec_" + base64.b64encode(b"abc").decode()) == b"abc"
    assert decode_secret("YWJjZA") == b"abcd"  # unpadded base64, as the reference library accepts
    for bad in ("whsec_!!!", "whsec_"):
        with pytest.raises(ValueError):
            decode_secret(bad)


def test_thin_client_event_cap_matches_the_gateway() -> None:
    assert client.MAX_EVENT_BYTES == events.MAX_EVENT_BYTES == wire.MAX_EVENT_BYTES


@pytest.mark.parametrize(
    ("header", "ok"),
    [
        (b"Bearer t0k", True),
        (b"bearer t0k", True),
        (b"BeArEr   t0k", True),
        (b" Bearer t0k ", True),
        (b"Bearer t0K", False),
        (b"Basic t0k", False),
        (b"Bearer", False),
        (b"Bearert0k", False),
        (b"t0k", False),
        (b"", False),
    ],
)
def test_serve_token_check_reads_the_bearer_scheme_case_insensitively(header: bytes, ok: bool) -> None:
    from gateway.serve.guard import bearer_matches

    assert bearer_matches(header, b"t0k") is ok
