"""Console sign-ins to two ``hookgate serve`` on one machine, in one real headless Chromium: a browser keeps
cookies per host name, not per port, so each server's session cookie has a name of its own (from its
token), and signing in to one does not sign you out of the other; and the address (``/ui#panel``, Back)
picks the panel shown."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ROOT
from tests.fakes.browser import chromium, sign_in
from tests.integration.serve_helpers import ServeProcess
from tests.integration.test_console import bash, post, write_config


def test_two_servers_two_sessions(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    tokens = {"a": "console-token-of-server-a-0123", "b": "console-token-of-server-b-4567"}
    config_a, config_b = write_config(tmp_path / "a"), write_config(tmp_path / "b")
    with (
        ServeProcess(config_a, env={"HOOKGATE_TOKEN": tokens["a"]}, cwd=ROOT) as a,
        ServeProcess(config_b, env={"HOOKGATE_TOKEN": tokens["b"]}, cwd=ROOT) as b,
        chromium() as browser,
    ):
        from playwright.sync_api import expect

        assert post(a.url, bash("on a"), token=tokens["a"]) == 200
        assert post(b.url, bash("on b"), token=tokens["b"]) == 200
        context = browser.new_context()
        pages = {}
        for name, server in (("a", a), ("b", b)):
            page = context.new_page()
            page.goto(f"{server.url}/ui")
            sign_in(page, server.url, tokens[name], server_log=server.lines)
            expect(page.locator("#records-body tr.record")).to_have_count(1, timeout=20_000)
            pages[name] = page
        assert len({c["name"] for c in context.cookies()}) == 2
        for name, server in (("a", a), ("b", b)):
            page = pages[name]
            page.bring_to_front()
            page.reload()  # with the cookies as they are now, both sign-ins done
            expect(page.locator("#records-body tr.record")).to_contain_text(f"on {name}", timeout=20_000)
            page.wait_for_timeout(2500)  # a refresh or two: still signed in
            assert page.url.startswith(f"{server.url}/ui") and "/ui/login" not in page.url, page.url


def test_the_address_bar_picks_the_panel(tmp_path: Path) -> None:
    """``/ui#handlers`` typed or pasted into an open console, and Back, showed the address's panel only
    after a reload: the URL said one panel while another was shown."""
    from tests.integration.test_console import TOKEN

    config = write_config(tmp_path)
    with ServeProcess(config, env={"HOOKGATE_TOKEN": TOKEN}, cwd=ROOT) as server, chromium() as browser:
        from playwright.sync_api import expect

        page = browser.new_page()
        page.goto(f"{server.url}/ui")
        sign_in(page, server.url, TOKEN, server_log=server.lines)
        expect(page.locator("#panel-decisions")).to_be_visible()
        page.goto(f"{server.url}/ui#handlers")
        expect(page.locator("#panel-handlers")).to_be_visible()
        expect(page.locator("#tab-handlers")).to_have_attribute("aria-selected", "true")
        expect(page.locator("#panel-decisions")).to_be_hidden()
        page.go_back()
        expect(page).to_have_url(f"{server.url}/ui#decisions")
        expect(page.locator("#panel-decisions")).to_be_visible()
        expect(page.locator("#panel-handlers")).to_be_hidden()
