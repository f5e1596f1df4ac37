"""The console's refreshes in a real headless Chromium against a slow network (a fetch the page makes is
held back in the browser, as a slow link or a slow store would hold it): an answer that comes back after
a newer one is not drawn over it, and the 2 s timer does not pile up requests while one is under way;
a server gone, said on the sign-in form and in the status line; the keyboard, and filters that match
nothing."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ROOT
from tests.fakes.browser import chromium, sign_in
from tests.integration.serve_helpers import ServeProcess
from tests.integration.test_console import TOKEN, bash, post, write_config

SLOW_FETCH = """
(() => {
  const fetch = window.fetch.bind(window);
  window.__asked = [];
  window.fetch = async (url, init) => {
    const text = String(url);
    window.__asked.push(text);
    const delay = (window.__slow || []).find(([part]) => text.includes(part));
    const response = await fetch(url, init);
    if (delay) await new Promise((resolve) => setTimeout(resolve, delay[1]));
    return response;
  };
})();
"""


def test_a_late_answer_for_an_older_filter_is_not_drawn(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    with ServeProcess(config, env={"HOOKGATE_TOKEN": TOKEN}, cwd=ROOT) as server, chromium() as browser:
        from playwright.sync_api import expect

        url = server.url
        assert post(url, bash("ls", session="s-1")) == 200
        assert post(url, bash("pwd", session="s-2")) == 200
        page = browser.new_page()
        page.add_init_script(SLOW_FETCH)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{url}/ui")
        sign_in(page, url, TOKEN, server_log=server.lines)
        rows = page.locator("#records-body tr.record")
        expect(rows).to_have_count(2, timeout=20_000)
        page.evaluate("() => { window.__slow = [['session=s-1', 1500]]; }")
        page.fill("#f-session", "s-1")  # its answer comes back 1.5 s late ...
        page.fill("#f-session", "s-2")  # ... after this one's
        expect(rows).to_have_count(1)
        expect(rows.first).to_contain_text("pwd")
        page.wait_for_timeout(1700)  # the late answer is in
        assert rows.locator("td.input").all_inner_texts() == ["pwd"]
        assert page.input_value("#f-session") == "s-2"
        assert errors == []


def test_the_timer_waits_for_a_slow_refresh(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    with ServeProcess(config, env={"HOOKGATE_TOKEN": TOKEN}, cwd=ROOT) as server, chromium() as browser:
        from playwright.sync_api import expect

        url = server.url
        assert post(url, bash("ls")) == 200
        page = browser.new_page()
        page.add_init_script(SLOW_FETCH)
        page.goto(f"{url}/ui")
        sign_in(page, url, TOKEN, server_log=server.lines)
        page.evaluate("() => { window.__slow = [['/ui/api/stats', 5000]]; }")
        page.click("#tab-handlers")
        expect(page.locator("#stats-body tr[data-handler='guard']")).to_have_count(1, timeout=20_000)
        page.evaluate("() => { window.__asked = []; }")
        page.wait_for_timeout(7000)
        asked = [u for u in page.evaluate("() => window.__asked") if "/ui/api/stats" in u]
        # one refresh at a time, each taking 5 s: two at most in 7 s (the timer's 2 s would make four)
        assert 1 <= len(asked) <= 2, asked


def test_a_server_gone_is_said_on_the_sign_in_form_and_in_the_console(tmp_path: Path) -> None:
    """The server stops under an open page: the sign-in form says it cannot reach it (it said nothing: the
    click did nothing at all), and the console's status line says so in one line."""
    config = write_config(tmp_path)
    with chromium() as browser:
        from playwright.sync_api import expect

        with ServeProcess(config, env={"HOOKGATE_TOKEN": TOKEN}, cwd=ROOT) as server:
            url = server.url
            console = browser.new_page()
            console.goto(f"{url}/ui")
            sign_in(console, url, TOKEN, server_log=server.lines)
            console.wait_for_selector("#records-body td.empty")
            login = browser.new_page()
            login.goto(f"{url}/ui/login")
            assert server.stop() == 0
        errors: list[str] = []
        login.on("pageerror", lambda exc: errors.append(str(exc)))
        login.fill("#token", TOKEN)
        login.click("#sign-in")
        expect(login.locator("#login-error")).to_contain_text(f"Cannot reach hookgate serve at {url[len('http://') :]}")
        expect(console.locator("#status")).to_contain_text("cannot reach hookgate serve", timeout=10_000)
        assert errors == []


def test_keyboard_and_an_empty_filter(tmp_path: Path) -> None:
    """A row opens from the keyboard (Tab, Enter), not only with a mouse; filters that match nothing say
    so, not "No records yet." (which reads as: nothing was recorded)."""
    config = write_config(tmp_path)
    with ServeProcess(config, env={"HOOKGATE_TOKEN": TOKEN}, cwd=ROOT) as server, chromium() as browser:
        from playwright.sync_api import expect

        assert post(server.url, bash("ls -la")) == 200
        page = browser.new_page()
        page.goto(f"{server.url}/ui")
        sign_in(page, server.url, TOKEN, server_log=server.lines)
        rows = page.locator("#records-body tr.record")
        expect(rows).to_have_count(1, timeout=20_000)
        page.focus("#f-since")
        page.keyboard.press("Tab")  # from the last filter to the first row
        expect(rows.first).to_be_focused()
        page.keyboard.press("Enter")
        expect(page.locator("#record-detail")).to_contain_text('"command": "ls -la"')

        page.fill("#f-tool", "Nothing")
        expect(page.locator("#records-body td.empty")).to_have_text("No record matches these filters.")
        page.fill("#f-tool", "")
        expect(rows).to_have_count(1)
