"""The console's Approvals panel in a real headless Chromium: a pending request listed with Approve and
Reject buttons; Approve releases the waiting ``hookgate run``; the answer is recorded as the console's."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ROOT
from tests.fakes.browser import chromium, sign_in
from tests.integration.approvals_helpers import Waiting, bash_event, decision_of, listed, wait_for_pending, write_config
from tests.integration.serve_helpers import ServeProcess

TOKEN = "approvals-console-token"


def test_console_approve_button_releases_the_call(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"timeout": 90})
    with ServeProcess(config, env={"HOOKGATE_TOKEN": TOKEN}, cwd=ROOT) as server, chromium() as browser:
        from playwright.sync_api import expect

        url = server.url
        first = Waiting(["run", "--config", str(config)], bash_event("git push origin main"))
        second = Waiting(["run", "--config", str(config)], bash_event("git push --force", tool_use_id="toolu_02"))
        pending = wait_for_pending(config, 2)
        by_command = {p["tool_input"]["command"]: p["id"] for p in pending}
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{url}/ui")
        sign_in(page, url, TOKEN, server_log=server.lines)
        page.click("#tab-approvals")
        rows = page.locator("#approvals-body tr")
        expect(rows).to_have_count(2)
        push = page.locator(f"#approvals-body tr[data-id='{by_command['git push origin main']}']")
        expect(push).to_contain_text("Run git push origin main in /repo?")
        push.locator("input.reason").fill("release window")
        push.locator("button.approve").click()
        code, out, err = first.finish(timeout=30)
        assert code == 0, err
        reason = decision_of(out)["permissionDecisionReason"]
        assert "approved by console:ui (release window)" in reason
        expect(rows).to_have_count(1)
        page.locator(f"#approvals-body tr[data-id='{by_command['git push --force']}'] button.reject").click()
        code, out, _ = second.finish(timeout=30)
        assert code == 2 and "rejected by console:ui" in decision_of(out)["permissionDecisionReason"]
        expect(page.locator("#approvals-empty")).to_be_visible()
        assert {r["status"] for r in listed(config)} == {"approved", "rejected"}
        assert errors == []
        expect(page.locator("#approvals-read-only")).to_be_hidden()


def test_without_a_token_the_panel_lists_but_cannot_answer(tmp_path: Path) -> None:
    """A server with no token has a console without sign-in, which cannot tell a person from the agent's
    shell: the panel lists the request, says why it cannot answer, and its buttons are disabled."""
    config = write_config(tmp_path, {"timeout": 90})
    with ServeProcess(config, env={"HOOKGATE_TOKEN": ""}, cwd=ROOT) as server, chromium() as browser:
        from playwright.sync_api import expect

        waiting = Waiting(["run", "--config", str(config)], bash_event("git push origin main"))
        [request] = wait_for_pending(config)
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{server.url}/ui")
        page.click("#tab-approvals")
        row = page.locator(f"#approvals-body tr[data-id='{request['id']}']")
        expect(row).to_contain_text("git push origin main")
        expect(page.locator("#approvals-read-only")).to_be_visible()
        expect(page.locator("#approvals-read-only")).to_contain_text("HOOKGATE_TOKEN")
        expect(row.locator("button.approve")).to_be_disabled()
        expect(row.locator("button.reject")).to_be_disabled()
        assert waiting.running() and listed(config)[0]["status"] == "pending"
        waiting.proc.kill()
        waiting.finish(timeout=30)
        assert errors == []
