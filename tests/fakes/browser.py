"""Real headless Chromium for the console tests: Debian's ``chromium`` driven by Playwright's Python
package (never ``playwright install``; ``.ci/run`` installs the Debian package when it is missing).

    with chromium() as browser:          # skips (or, in CI, fails) when chromium or playwright is missing
        page = browser.new_page()
        sign_in(page, url, token)         # the console's sign-in form, waited for step by step
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

EXECUTABLE = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def _missing(why: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"console test cannot run in CI: {why}")
    pytest.skip(why)


@contextlib.contextmanager
def chromium(*extra: str) -> Iterator[Any]:
    """A launched headless Chromium (``playwright.sync_api.Browser``), closed afterwards; ``extra``: more
    command-line flags (``--host-resolver-rules=...``)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the playwright package is not installed (pip install -e '.[test]')")
    if not (os.path.exists(EXECUTABLE) or shutil.which("chromium")):
        _missing(f"{EXECUTABLE} is missing (apt-get install chromium)")
    executable = EXECUTABLE if os.path.exists(EXECUTABLE) else str(shutil.which("chromium"))
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=[*FLAGS, *extra], headless=True)
        try:
            yield browser
        finally:
            browser.close()


def sign_in(page: Any, url: str, token: str, *, server_log: list[str] | None = None, timeout_ms: int = 60_000) -> None:
    """Sign in to the console at ``url`` (``page`` on ``/ui/login``) with ``token``: waits for the
    ``POST /ui/session`` answer (204), then for the page to be at ``/ui``, with or without the ``#panel``
    the console adds once loaded (it may be there before this looks, and a plain ``"/ui"`` would then wait
    for a navigation that never comes), from the commit, not the load event (callers wait for the rows
    they need). Fails with what the page and the server showed: the sign-in error, the URL, and
    ``server_log`` (serve's stderr lines)."""

    def failed(what: str) -> AssertionError:
        shown = page.locator("#login-error").all_inner_texts()
        log = "\n".join((server_log or [])[-30:])
        return AssertionError(f"console sign-in: {what} (at {page.url}, sign-in error {shown}); serve log:\n{log}")

    page.fill("#token", token)
    try:
        with page.expect_response(lambda r: r.url == f"{url}/ui/session", timeout=timeout_ms) as answer:
            page.click("#sign-in")
        status = answer.value.status
    except Exception as exc:
        raise failed(f"no answer to POST /ui/session in {timeout_ms} ms") from exc
    if status != 204:
        raise failed(f"POST /ui/session answered {status}")
    try:
        page.wait_for_url(re.compile(re.escape(f"{url}/ui") + "(#.*)?$"), wait_until="commit", timeout=timeout_ms)
    except Exception as exc:
        raise failed(f"no navigation to /ui in {timeout_ms} ms") from exc
