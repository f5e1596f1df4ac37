"""Real headless Chromium for the console tests: Debian's ``chromium`` driven by Playwright's Python
package (never ``playwright install``; ``.ci/run`` installs the Debian package when it is missing).

    with chromium() as browser:          # skips (or, in CI, fails) when chromium or playwright is missing
        page = browser.new_page()
"""

from __future__ import annotations

import contextlib
import os
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
def chromium() -> Iterator[Any]:
    """A launched headless Chromium (``playwright.sync_api.Browser``), closed afterwards."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the playwright package is not installed (pip install -e '.[test]')")
    if not (os.path.exists(EXECUTABLE) or shutil.which("chromium")):
        _missing(f"{EXECUTABLE} is missing (apt-get install chromium)")
    executable = EXECUTABLE if os.path.exists(EXECUTABLE) else str(shutil.which("chromium"))
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=FLAGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()
