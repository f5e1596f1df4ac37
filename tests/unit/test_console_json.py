"""The console API answers valid JSON in valid UTF-8 even for a record holding a lone surrogate (an agent's
tool input can carry one); Starlette's JSONResponse fails to encode that (a 500, an empty Decisions panel)."""

from __future__ import annotations

import json

from gateway.serve.ui import _json


def test_a_lone_surrogate_is_escaped_not_a_500() -> None:
    response = _json({"records": [{"tool_input": "ls \ud800", "name": "café"}]})
    assert response.status_code == 200 and response.media_type == "application/json"
    body = bytes(response.body)
    body.decode("utf-8")  # valid UTF-8
    assert json.loads(body) == {"records": [{"tool_input": "ls \ud800", "name": "café"}]}
    assert response.headers["cache-control"]  # the API's headers are kept


def test_errors_use_the_same_encoding() -> None:
    from gateway.serve.ui import _error

    response = _error(404, "no record '\ud800'")
    assert response.status_code == 404 and json.loads(bytes(response.body)) == {"error": "no record '\ud800'"}


def test_console_session_cookies_expire_and_are_bound_to_the_token() -> None:
    import time

    from gateway.serve.guard import UI_SESSION_SECONDS, ui_cookie_valid, ui_cookie_value

    now = time.time()
    fresh = ui_cookie_value("tok").encode()
    assert ui_cookie_valid(fresh, "tok", now)
    assert not ui_cookie_valid(fresh, "other-token", now)
    assert not ui_cookie_valid(fresh, "tok", now + UI_SESSION_SECONDS + 1)  # expired
    stale = ui_cookie_value("tok", int(now) - 1).encode()
    assert not ui_cookie_valid(stale, "tok", now)
    far = ui_cookie_value("tok", int(now) + 10 * UI_SESSION_SECONDS).encode()  # a made-up long expiry
    assert not ui_cookie_valid(far, "tok", now)
    stamp, _, mac = fresh.partition(b".")
    assert not ui_cookie_valid(str(int(stamp) + 60).encode() + b"." + mac, "tok", now)  # expiry edited
    for junk in (b"", b"forged", b".", b"123", b"x.y", b"9" * 40 + b".ab"):
        assert not ui_cookie_valid(junk, "tok", now)
