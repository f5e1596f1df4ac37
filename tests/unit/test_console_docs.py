"""README's console section lists every panel the console ships (``gateway.serve.ui.PANEL_SCRIPTS``) and
does not call a shipped one "next" (it once said the approvals panel was still to come)."""

from __future__ import annotations

import re

from gateway.serve.ui import PANEL_SCRIPTS, console_dir
from tests.conftest import ROOT


def _console_section() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("### The console: `hookgate serve` at `/ui`")
    return readme[start : readme.index("\n### ", start + 1)]


def _panel_titles() -> list[str]:
    titles = []
    for name in PANEL_SCRIPTS:
        with open(f"{console_dir()}/{name}", encoding="utf-8") as script:
            found = re.search(r'registerPanel\(\{[^}]*title:\s*"([^"]+)"', script.read())
        assert found, f"{name} registers no panel"
        titles.append(found.group(1))
    return titles


def test_readme_lists_every_shipped_panel() -> None:
    section = _console_section()
    titles = _panel_titles()
    assert "Approvals" in titles
    for title in titles:
        assert f"- **{title}**" in section, f"README's console section does not describe the {title} panel"


def test_readme_does_not_announce_a_shipped_panel_as_coming() -> None:
    section = _console_section().lower()
    for title in _panel_titles():
        assert not re.search(rf"{title.lower()} panel is (next|planned|coming)", section), title
