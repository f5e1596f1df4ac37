"""How the console shows what it lists, in a real headless Chromium: characters that are not printable
(the bidirectional overrides above all) as escapes, in the Decisions rows, the full record and the
Approvals panel, so a tool input cannot show a person another command than the one it holds; and every
column of the Decisions table within reach, never painted under the record pane beside it."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ROOT
from tests.fakes.browser import chromium, sign_in
from tests.integration import approvals_helpers
from tests.integration.approvals_helpers import Waiting, bash_event, wait_for_pending
from tests.integration.serve_helpers import ServeProcess
from tests.integration.test_console import TOKEN, bash, post, write_config

RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: "git push \u202eevil" is drawn as "git push live"
SPOOF = f"git push {RLO}evil\u200b\u2066 ok"
SHOWN = "git push \\u202eevil\\u200b\\u2066 ok"


def test_decisions_show_hidden_characters_as_escapes_and_every_column(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    with ServeProcess(config, env={"HOOKGATE_TOKEN": TOKEN}, cwd=ROOT) as server, chromium() as browser:
        from playwright.sync_api import expect

        url = server.url
        assert post(url, bash(SPOOF)) == 200
        assert post(url, bash("rm -rf build " + "x" * 300)) == 200  # a denied one: reason and handlers
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{url}/ui")
        sign_in(page, url, TOKEN, server_log=server.lines)
        rows = page.locator("#records-body tr.record")
        expect(rows).to_have_count(2, timeout=20_000)

        spoof = rows.filter(has_text="git push")
        assert spoof.locator("td.input").inner_text() == SHOWN
        assert spoof.locator("td.input").get_attribute("title") == SHOWN
        spoof.click()
        expect(page.locator("#record-detail")).to_contain_text("git push")
        detail = page.inner_text("#record-detail")
        assert RLO not in detail and '"command": "git push \\\\u202eevil' not in detail
        assert SHOWN in detail

        # the denied row: its reason and verdicts are on screen (the table scrolls inside its column),
        # not under the record pane
        denied = rows.filter(has=page.locator(".badge.deny"))
        denied.click()
        expect(page.locator("#record-detail")).to_contain_text("no rm -rf here")
        for cell in ("td.reason", "td:nth-child(6)"):
            target = denied.locator(cell)
            target.scroll_into_view_if_needed()
            box = target.bounding_box()
            assert box is not None
            hit = page.evaluate(
                "([x, y]) => { const e = document.elementFromPoint(x, y); return e && e.closest('td, pre')?.tagName; }",
                [box["x"] + 4, box["y"] + box["height"] / 2],
            )
            assert hit == "TD", f"{cell} is covered by {hit}"
        expect(denied.locator("td.reason")).to_contain_text("no rm -rf here")
        table = page.locator("#records").bounding_box()
        pane = page.locator("#record-detail").bounding_box()
        wrap = page.locator("#panel-decisions .table-wrap").bounding_box()
        assert table and pane and wrap and wrap["x"] + wrap["width"] <= pane["x"]
        assert errors == []


def test_approvals_panel_shows_hidden_characters_as_escapes(tmp_path: Path) -> None:
    config = approvals_helpers.write_config(tmp_path, {"timeout": 90})
    with ServeProcess(config, env={"HOOKGATE_TOKEN": TOKEN}, cwd=ROOT) as server, chromium() as browser:
        from playwright.sync_api import expect

        waiting = Waiting(["run", "--config", str(config)], bash_event(SPOOF))
        [request] = wait_for_pending(config)
        page = browser.new_page()
        page.goto(f"{server.url}/ui")
        sign_in(page, server.url, TOKEN, server_log=server.lines)
        page.click("#tab-approvals")
        row = page.locator(f"#approvals-body tr[data-id='{request['id']}']")
        expect(row).to_contain_text("git push")
        cells = row.locator("td").all_inner_texts()
        assert cells[3] == SHOWN  # the input column: what the approver decides on
        assert all(RLO not in c for c in cells)
        waiting.proc.kill()
        waiting.finish(timeout=30)


def test_a_record_edited_in_the_store_does_not_empty_the_list(tmp_path: Path) -> None:
    """A record whose body was edited (no ``time``, a number where text belongs, handlers that are not
    a list) or broken (not JSON) is listed with what it has, beside the others: one such row used to
    stop the whole Decisions list from being drawn."""
    import json
    import sqlite3

    config = write_config(tmp_path)
    with ServeProcess(config, env={"HOOKGATE_TOKEN": TOKEN}, cwd=ROOT) as server, chromium() as browser:
        from playwright.sync_api import expect

        url = server.url
        for command in ("ls", "pwd", "whoami"):
            assert post(url, bash(command)) == 200
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{url}/ui")
        sign_in(page, url, TOKEN, server_log=server.lines)
        rows = page.locator("#records-body tr.record")
        expect(rows).to_have_count(3, timeout=20_000)

        db = sqlite3.connect(tmp_path / "state" / "state.sqlite3")
        bodies = {
            json.loads(body)["tool_input"]["command"]: n for n, body in db.execute("SELECT n, body FROM audit_records")
        }
        edited = json.loads(db.execute("SELECT body FROM audit_records WHERE n = ?", (bodies["ls"],)).fetchone()[0])
        del edited["time"]
        edited.update(handlers="gone", decision=7)
        db.execute("UPDATE audit_records SET body = ? WHERE n = ?", (json.dumps(edited), bodies["ls"]))
        db.execute("UPDATE audit_records SET body = 'not json{' WHERE n = ?", (bodies["pwd"],))
        db.commit()
        db.close()

        page.reload()
        expect(rows).to_have_count(3, timeout=20_000)
        expect(rows.filter(has_text="whoami")).to_have_count(1)
        expect(rows.filter(has_text="its stored body is not JSON")).to_have_count(1)
        assert rows.filter(has_text="ls").locator(".badge").inner_text() == "7"
        assert errors == []


def test_a_store_that_cannot_be_opened_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    """The console's data routes on a state store that cannot be opened (``stateDir`` under a file):
    503 with the store's one-line error as JSON, which the page shows in its status line; the log gets
    that line once, never a traceback per refresh."""
    import json
    import urllib.error
    import urllib.request

    (tmp_path / "file").write_text("")
    config = write_config(tmp_path)
    doc = json.loads(config.read_text())
    doc["settings"]["stateDir"] = str(tmp_path / "file" / "state")
    config.write_text(json.dumps(doc))
    with ServeProcess(config, env={"HOOKGATE_TOKEN": TOKEN}, cwd=ROOT) as server, chromium() as browser:
        from playwright.sync_api import expect

        url = server.url
        for path in ("/ui/api/records", "/ui/api/stats", "/ui/api/records/x", "/ui/api/approvals"):
            request = urllib.request.Request(url + path, headers={"Authorization": f"Bearer {TOKEN}"})
            try:
                urllib.request.urlopen(request, timeout=30)
                raise AssertionError(f"{path} answered 2xx")
            except urllib.error.HTTPError as exc:
                assert exc.code == 503, (path, exc.code)
                error = json.loads(exc.read())["error"]
            assert error.startswith("state store ") and "Not a directory" in error and "\n" not in error
        page = browser.new_page()
        page.goto(f"{url}/ui")
        sign_in(page, url, TOKEN, server_log=server.lines)
        expect(page.locator("#status")).to_contain_text("Not a directory")
        page.wait_for_timeout(2500)  # a refresh or two more
        assert not any("Traceback" in line for line in server.lines), server.lines
        said = [line for line in server.lines if "GET /ui/api/records: state store" in line]
        assert len(said) == 1, said


def test_a_long_handler_id_does_not_run_under_the_bars(tmp_path: Path) -> None:
    import json

    long_id = "payments-gate-verify-the-invoice-before-any-transfer"
    config = tmp_path / "hookgate.json"
    hooks = [
        {"type": "command", "id": long_id, "command": "exit 0"},
        {"type": "command", "id": "检查" * 20, "command": "true"},
    ]
    doc = {
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": hooks}]},
        "settings": {"stateDir": str(tmp_path / "s")},
    }
    config.write_text(json.dumps(doc))
    with ServeProcess(config, env={"HOOKGATE_TOKEN": TOKEN}, cwd=ROOT) as server, chromium() as browser:
        from playwright.sync_api import expect

        assert post(server.url, bash("ls")) == 200
        page = browser.new_page()
        page.goto(f"{server.url}/ui")
        sign_in(page, server.url, TOKEN, server_log=server.lines)
        page.click("#tab-handlers")
        for chart in ("#handler-chart", "#latency-chart"):
            expect(page.locator(f"{chart} rect")).not_to_have_count(0)
            overrun = page.evaluate(
                """(chart) => {
                  const svg = document.querySelector(chart + " svg");
                  const barsStart = Math.min(...[...svg.querySelectorAll("rect")].map((r) => r.getBBox().x));
                  return [...svg.querySelectorAll("text")].filter((t) => t.getBBox().x < barsStart)
                    .map((t) => [t.textContent, t.getBBox().x + t.getBBox().width, barsStart])
                    .filter(([, right, start]) => right > start);
                }""",
                chart,
            )
            assert overrun == [], overrun
        titles = page.locator("#handler-chart svg > text > title").all_text_contents()
        assert long_id in titles  # the whole id on hover, and in the table
        expect(page.locator(f"#stats-body tr[data-handler='{long_id}']")).to_have_count(1)


def test_a_lone_surrogate_in_a_session_id_does_not_jam_the_trail(tmp_path: Path) -> None:
    """A ``session_id`` holding a lone surrogate (valid JSON, ``"\\ud800"``) made its record's filter
    column text that no store takes: the record failed its batch, and a ``hookgate run`` record stayed in
    the spool, so every later record, every ``hookgate audit`` command and every console request failed
    (500) from then on. Now the column holds the escape; the record, and every one after it, is listed."""
    import json

    from tests.conftest import run_hookgate

    config = write_config(tmp_path)
    odd = {**bash("echo odd", session="sur\ud800"), "tool_use_id": "toolu_odd"}
    run = run_hookgate(["run", "--config", str(config)], odd, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    with ServeProcess(config, env={"HOOKGATE_TOKEN": TOKEN}, cwd=ROOT) as server, chromium() as browser:
        from playwright.sync_api import expect

        assert post(server.url, bash("after it", session="s-9")) == 200
        assert post(server.url, bash("echo odd again", session="sur\udfff")) == 200
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{server.url}/ui")
        sign_in(page, server.url, TOKEN, server_log=server.lines)
        rows = page.locator("#records-body tr.record")
        expect(rows).to_have_count(3, timeout=20_000)
        rows.filter(has_text="echo odd again").click()
        expect(page.locator("#record-detail")).to_contain_text('"session_id": "sur\\udfff"')
        assert errors == []
        assert not any("Traceback" in line or "cannot record" in line for line in server.lines), server.lines
    for args in (["audit", "query", "--json"], ["audit", "verify"]):
        done = run_hookgate([*args, "--config", str(config)], cwd=ROOT)
        assert done.returncode == 0, done.stderr
    query = run_hookgate(["audit", "query", "--json", "--session", "s-9", "--config", str(config)], cwd=ROOT)
    assert [r["tool_input"]["command"] for r in json.loads(query.stdout)] == ["after it"]


def test_the_empty_list_says_when_the_config_writes_records_elsewhere(tmp_path: Path) -> None:
    """The console reads the store: with ``audit.sink`` a JSON-lines file only (or ``audit.record: off``)
    it said "No records yet." however many events came, with no hint why; it now says where they go, and
    after a reload that adds the store back, says nothing and lists the new records."""
    import json

    config = write_config(tmp_path)
    doc = json.loads(config.read_text())
    doc["audit"] = {"sink": f"jsonl:{tmp_path / 'audit.jsonl'}"}
    config.write_text(json.dumps(doc))
    with ServeProcess(config, env={"HOOKGATE_TOKEN": TOKEN}, cwd=ROOT) as server, chromium() as browser:
        from playwright.sync_api import expect

        assert post(server.url, bash("ls")) == 200
        page = browser.new_page()
        page.goto(f"{server.url}/ui")
        sign_in(page, server.url, TOKEN, server_log=server.lines)
        note = page.locator("#records-note")
        expect(note).to_contain_text(f"writes its records to jsonl:{tmp_path / 'audit.jsonl'} (audit.sink)")
        expect(note).to_contain_text("add store to audit.sink")

        doc["audit"] = {"record": "off"}
        config.write_text(json.dumps(doc))
        server.wait_log("config reloaded", timeout=30)
        expect(note).to_contain_text("records nothing (audit.record: off)", timeout=10_000)

        doc["audit"] = {"sink": ["store", f"jsonl:{tmp_path / 'audit.jsonl'}"]}
        config.write_text(json.dumps(doc))
        server.wait_log("config reloaded", after=len(server.lines), timeout=30)
        assert post(server.url, bash("pwd")) == 200
        expect(page.locator("#records-body tr.record")).to_have_count(1, timeout=10_000)
        expect(note).to_be_hidden()


def test_the_record_pane_is_in_view_beside_a_long_list(tmp_path: Path) -> None:
    """A click on a row far down a long list showed its record at the top of the page, thousands of
    pixels above the row: nothing seemed to happen. The pane now stays in view. And with more records
    than the list shows, the status line says so (it said "200 record(s)", as if that were all)."""
    config = write_config(tmp_path)
    with ServeProcess(config, env={"HOOKGATE_TOKEN": TOKEN}, cwd=ROOT) as server, chromium() as browser:
        from playwright.sync_api import expect

        for i in range(201):
            assert post(server.url, bash(f"echo {i}")) == 200
        page = browser.new_page(viewport={"width": 1280, "height": 600})
        page.goto(f"{server.url}/ui")
        sign_in(page, server.url, TOKEN, server_log=server.lines)
        rows = page.locator("#records-body tr.record")
        expect(rows).to_have_count(200, timeout=20_000)
        # 201 records match: the status says more match than the 200 listed, not "200 record(s)"
        expect(page.locator("#status")).to_contain_text("the latest 200 records (more match")
        rows.last.click()  # the oldest listed: echo 1
        expect(page.locator("#record-detail")).to_contain_text('"command": "echo 1"')
        assert page.evaluate("() => window.scrollY") > 600  # the click scrolled down to the row
        box = page.locator("#record-detail").bounding_box()
        assert box is not None and box["y"] > -2 and box["y"] + 100 <= 600, box
