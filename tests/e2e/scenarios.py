"""Reusable e2e scenarios. Each takes a Claude Code settings dict, so the same scenario runs with
no hooks (control), a native shell hook, or hookgate (``hook_settings.hookgate_*_settings``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from tests.e2e.claude_cli import ClaudeRun
from tests.fakes.anthropic_api import ScriptItem, bash, text

DEFAULT_PROMPT = "Clean up the old build directory."


class RunClaude(Protocol):
    """The ``run_claude`` fixture: one ``claude -p`` run in ``project_dir`` with ``settings``."""

    def __call__(
        self,
        project_dir: Path,
        settings: Mapping[str, Any] | None,
        script: Sequence[ScriptItem],
        prompt: str = DEFAULT_PROMPT,
        *,
        args: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 90.0,
    ) -> ClaudeRun: ...


@dataclass
class RmVictim:
    run: ClaudeRun
    victim: Path
    command: str

    @property
    def survived(self) -> bool:
        return (self.victim / "file.txt").exists()

    @property
    def denied_commands(self) -> list[str]:
        return [d.get("tool_input", {}).get("command", "") for d in self.run.permission_denials]


def make_victim(workdir: Path) -> Path:
    victim = workdir / "victim"
    victim.mkdir(parents=True, exist_ok=True)
    (victim / "file.txt").write_text("precious\n")
    return victim


def rm_victim_scenario(run_claude: RunClaude, workdir: Path, settings: Mapping[str, Any] | None) -> RmVictim:
    """The model asks Bash for ``rm -rf <workdir>/victim``, then says "done"."""
    victim = make_victim(workdir)
    command = f"rm -rf {victim}"
    run = run_claude(workdir / "project", settings, [bash(command, "remove the old build dir"), text("done")])
    return RmVictim(run, victim, command)
