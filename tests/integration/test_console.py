"""The console at /ui in a real headless Chromium: sign-in, rows appearing as events arrive, filters,
the full record on click, the per-handler chart, no outside assets, no script from record text."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, run_hookgate
from tests.fakes.browser import chromium, sign_in
from tests.integration.serve_helpers import ServeProcess

TOKEN = "console-test-token-1234"
GUARD = r"""#!/bin/sh
input=$(cat)
case "$input" in
  *"rm -rf"*) echo "no rm -rf here" >&2; exit 2 ;;
esac
exit 0
"""
XSS = '<img src=x onerror="window.__pwned=1">'


def write_config(tmp_path: Path) -> Path:
    guard = tmp_path / "guard.sh"
    guard.write_text(GUARD)
    guard.chmod(0o755)
    config = {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        {"type": "command", "id": "guard", "command": str(guard)},
                        {"type": "python", "id": "notify", "callable": "tests.integration.audit_funcs:notify"},
                    ],
                }
            ]
        },
        "settings": {"stateDir": str(tmp_path / "state")},
    }
    path = tmp_path / "hookgate.json"
    path.write_text(json.dumps(config))
    return path


def post(url: str, event: dict[str, Any], token: str | None = TOKEN) -> int:
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    request = urllib.request.Request(f"{url}/hooks", data=json.dumps(event).encode(), headers=headers)
    with urllib.request.urlopen(request, timeout=30) as response:
        return int(response.status)


def status(url: str, path: str, headers: dict[str, str] | None = None) -> int:
    request = urllib.request.Request(url + path, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def bash(command: str, session: str = "s-1") -> dict[str, Any]:
    return {
        "hook_event_name": "PreToolUse",
        "session_id": session,
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "cwd": "/tmp",
    }


def test_guard_rules_on_ui_routes(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    with ServeProcess(config, env={"HOOKGATE_TOKEN": TOKEN}, cwd=ROOT) as server:
        url = server.url
        auth = {"Authorization": f"Bearer {TOKEN}"}
        assert status(url, "/ui/api/records") == 401
        assert status(url, "/ui/api/records", auth) == 200
        assert status(url, "/ui/api/records", {**auth, "Origin": "http://evil.example"}) == 403
        assert status(url, "/ui/api/records", {**auth, "Host": "evil.example"}) == 421
        assert status(url, "/ui/api/records", {"Cookie": "hookgate_ui=forged"}) == 401
        assert status(url, "/ui/api/records?decision=maybe", auth) == 400
        assert status(url, "/ui/api/records?since=whenever", auth) == 400
        request = urllib.request.Request(url + "/ui/api/stats?since=whenever", headers=auth)
        with pytest.raises(urllib.error.HTTPError) as refused:  # the parameter by its name, not the CLI's --since
            urllib.request.urlopen(request, timeout=30)
        assert json.loads(refused.value.read()) == {
            "error": "since 'whenever': expected a duration (30m, 1h, 2d) or an ISO 8601 time"
        }
        assert post(url, bash("ls")) == 200
        counted: list[tuple[str, int]] = []
        for _ in range(100):  # serve writes its records every 250 ms
            request = urllib.request.Request(url + "/ui/api/stats?since=1h", headers=auth)
            with urllib.request.urlopen(request, timeout=30) as response:  # counted from the streamed handlers
                counted = [(h["id"], h["calls"]) for h in json.loads(response.read())["handlers"]]
            if counted:
                break
            time.sleep(0.1)
        assert counted == [("guard", 1), ("notify", 1)]
        for name, found in (("PreToolUse", 1), ("pretooluse", 1), ("Stop", 0)):  # any case, as the CLI's --event
            request = urllib.request.Request(url + f"/ui/api/records?event={name}", headers=auth)
            with urllib.request.urlopen(request, timeout=30) as response:
                assert len(json.loads(response.read())["records"]) == found, name
        request = urllib.request.Request(url + "/ui/api/records?event=PreTool", headers=auth)
        with pytest.raises(urllib.error.HTTPError) as refused:  # no such event: said, not an empty list
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 400 and "is no event name" in json.loads(refused.value.read())["error"]
        assert status(url, "/ui/assets/../../etc/passwd", auth) == 404
        assert status(url, "/ui/login") == 200


def test_console_in_headless_chromium(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    with ServeProcess(config, env={"HOOKGATE_TOKEN": TOKEN}, cwd=ROOT) as server, chromium() as browser:
        url = server.url
        from playwright.sync_api import expect

        page = browser.new_page()
        rows = page.locator("#records-body tr.record")
        requested: list[str] = []
        page.on("request", lambda request: requested.append(request.url))
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))

        page.goto(f"{url}/ui")
        assert page.url == f"{url}/ui/login"  # no session yet: the sign-in form
        page.fill("#token", "wrong")
        page.click("#sign-in")
        page.wait_for_selector("#login-error:has-text('Wrong token.')")
        sign_in(page, url, TOKEN, server_log=server.lines)
        page.wait_for_selector("#records-body td.empty")

        # events arrive: through serve, and through `hookgate run` beside it (the spool)
        assert post(url, bash("rm -rf build")) == 200
        assert post(url, bash("ls -la", session="s-2")) == 200
        assert post(url, bash(f"echo '{XSS}'")) == 200
        run = run_hookgate(["run", "--config", str(config)], bash("git status", session="s-3"), cwd=ROOT)
        assert run.returncode == 0, run.stderr
        expect(rows).to_have_count(4, timeout=20_000)
        assert rows.locator("td:nth-child(3)").all_inner_texts() == ["Bash"] * 4
        inputs = rows.locator("td.input").all_inner_texts()
        assert sorted(inputs) == sorted(["git status", f"echo '{XSS}'", "ls -la", "rm -rf build"])
        decisions = page.locator("#records-body tr.record .badge").all_inner_texts()
        assert sorted(decisions) == ["deny", "none", "none", "none"]

        # filters
        page.select_option("#f-decision", "deny")
        expect(rows).to_have_count(1)
        expect(rows.first).to_contain_text("no rm -rf here")
        page.select_option("#f-decision", "")
        page.fill("#f-session", "s-3")
        expect(rows).to_have_count(1)
        page.fill("#f-session", "")
        expect(rows).to_have_count(4)

        # the full record on click
        rows.filter(has=page.locator(".badge.deny")).click()
        expect(page.locator("#record-detail")).to_contain_text("no rm -rf here")
        detail = json.loads(page.inner_text("#record-detail"))
        assert detail["tool_input"] == {"command": "rm -rf build"}
        assert [h["id"] for h in detail["handlers"]] == ["guard", "notify"]
        assert detail["handlers"][1]["side_effects"] == ["notified #sec about Bash"]
        assert detail["_chain"]["seq"] >= 1 and len(detail["_chain"]["hash"]) == 64

        # record text is text, never markup or script
        rows.filter(has_text="onerror").click()
        expect(page.locator("#record-detail")).to_contain_text("onerror")
        assert json.loads(page.inner_text("#record-detail"))["tool_input"]["command"] == f"echo '{XSS}'"
        assert page.evaluate("() => window.__pwned") is None
        assert page.locator("#panel-decisions img").count() == 0

        # the per-handler chart
        page.click("#tab-handlers")
        page.wait_for_selector("#handler-chart svg rect[data-handler='guard'][data-series='calls']")
        bar = page.locator("#handler-chart rect[data-handler='guard'][data-series='calls']")
        assert bar.get_attribute("data-value") == "4"
        denies = page.locator("#handler-chart rect[data-handler='guard'][data-series='denies']")
        assert denies.get_attribute("data-value") == "1"
        assert page.locator("#latency-chart rect[data-handler='notify'][data-series='p95_ms']").count() == 1
        cells = page.locator("#stats-body tr[data-handler='guard'] td").all_inner_texts()
        assert cells[:6] == ["guard", "command", "4", "1", "0", "0"]

        # only this server was ever asked for anything
        assert requested and all(r.startswith(url + "/") for r in requested), requested
        assert errors == []
    # the same records through `hookgate audit`, after serve stopped (its writer flushed on the way out)
    query = run_hookgate(["audit", "query", "--json", "--config", str(config)], cwd=ROOT)
    assert query.returncode == 0, query.stderr
    assert sorted(r["tool_input"]["command"] for r in json.loads(query.stdout)) == sorted(
        ["rm -rf build", "ls -la", f"echo '{XSS}'", "git status"]
    )
    verify = run_hookgate(["audit", "verify", "--config", str(config)], cwd=ROOT)
    assert verify.returncode == 0 and "4 record(s) ok" in verify.stdout, verify.stdout + verify.stderr
