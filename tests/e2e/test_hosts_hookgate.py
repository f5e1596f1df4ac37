"""One policy, three real agents: ``tests/e2e/policy/hookgate.yaml`` wired with ``hookgate install``.

The same policy file (Claude Code vocabulary: ``matcher: Bash``, ``if: "Bash(rm *)"``, ``Stop``) is
installed into Claude Code (2.1.197), Gemini CLI (0.61.0) and Codex CLI (0.171.0) with the real
``hookgate install HOST --config <policy>`` (Gemini and Claude: project level; Codex: user level,
trust entries included), and each CLI runs offline against its fake model API:

- control: without hookgate the model's ``rm -r victim`` really deletes the victim folder;
- deny: with hookgate the policy's ``safe-rm`` guard denies it; the victim survives and the reason
  reaches the model as the tool's error;
- rewrite: ``rm notes.txt`` is rewritten to a move into ``.trash/`` (``updatedInput``), and that is
  what really runs;
- end of turn: the ``report-before-stop`` check blocks the first stop (Gemini's AfterAgent, Codex's
  and Claude's Stop) until REPORT.md exists; the agent continues once, writes it, and stops.

Evidence is files on disk and what the CLI sent back to the fake model, never the CLI's wording.
Codex refuses ``rm -f``/``rm -rf`` by itself, so the scripts use ``rm -r``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.hosts import Workspace, hookgate_install, run_codex, run_gemini
from tests.fakes import gemini_api, openai_responses_api

pytest_plugins = ["tests.e2e.fixtures_hosts"]
pytestmark = pytest.mark.e2e

HOSTS = ["claude", "gemini", "codex"]
DENY_REASON = "deletes a whole directory tree with no undo"
STOP_REASON = "Write REPORT.md"


@dataclass
class Outcome:
    """One agent run, reduced to what every host can show."""

    returncode: int
    bodies: list[dict[str, Any]]  # the main-loop model requests the CLI made, in order
    describe: Callable[[], str]

    def said_to_model(self, index: int) -> str:
        return json.dumps(self.bodies[index]) if index < len(self.bodies) else ""


class Agent:
    """Runs one host CLI with a scripted model: ``steps`` are shell commands (str starting with '$ ')
    or plain answers."""

    def __init__(self, host: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
        self.host = host
        self.request = request
        self.tmp_path = tmp_path
        if host == "claude":
            self.run_claude = request.getfixturevalue("run_claude")
        else:
            request.getfixturevalue(f"{host}_cli")

    def _steps(self, steps: Sequence[str]) -> list[Any]:
        out: list[Any] = []
        for step in steps:
            command = step[2:] if step.startswith("$ ") else None
            if self.host == "claude":
                from tests.fakes.anthropic_api import bash, text

                out.append(bash(command) if command is not None else text(step))
            elif self.host == "gemini":
                out.append(
                    gemini_api.ToolCall("run_shell_command", {"command": command}) if command is not None else step
                )
            else:
                out.append(
                    openai_responses_api.ToolCall("exec_command", {"cmd": command}) if command is not None else step
                )
        return out

    def run(self, ws: Workspace, steps: Sequence[str], prompt: str, *, hookgate: bool) -> Outcome:
        script = self._steps(steps)
        project = ws.project
        if self.host == "claude":
            if hookgate:
                hookgate_install("claude", project=project)
            env = {"HOOKGATE_CACHE_DIR": str(ws.root / "hookgate-cache"), "XDG_STATE_HOME": str(ws.root / "state")}
            run = self.run_claude(project, None, script, prompt, env=env)
            bodies = [r.body for r in run.requests if r.kind in ("scripted", "exhausted") and isinstance(r.body, dict)]
            return Outcome(run.returncode, bodies, run.describe)
        if self.host == "gemini":
            if hookgate:
                hookgate_install("gemini", project=project)
            grun = run_gemini(project, None, script, prompt, home=ws.root / "gemini-home")
            return Outcome(grun.returncode, [r.json for r in grun.main_requests], grun.describe)

        def install(codex_home: Path) -> None:
            hookgate_install("codex", env={"CODEX_HOME": str(codex_home)})

        crun = run_codex(
            project, None, script, prompt, codex_home=ws.root / "codex-home", prepare=install if hookgate else None
        )
        return Outcome(crun.returncode, [r.json for r in crun.main_requests], crun.describe)


@pytest.fixture(params=HOSTS)
def agent(request: pytest.FixtureRequest, tmp_path: Path) -> Agent:
    return Agent(request.param, request, tmp_path)


def fresh(tmp_path: Path, name: str, *, report: bool = True) -> Workspace:
    """A workspace with ``proj/victim``; ``report``: REPORT.md already exists (the stop check passes)."""
    ws = Workspace(tmp_path / name)
    ws.make_victim()
    if report:
        (ws.project / "REPORT.md").write_text("nothing to report yet\n")
    return ws


def test_the_same_policy_denies_recursive_rm_where_the_control_run_deletes(agent: Agent, tmp_path: Path) -> None:
    control_ws = fresh(tmp_path, "control")
    control = agent.run(control_ws, [f"$ rm -r {control_ws.victim}", "done"], "clean up", hookgate=False)
    assert not control_ws.victim.exists(), control.describe()
    assert DENY_REASON not in control.said_to_model(1)

    ws = fresh(tmp_path, "hookgate")
    outcome = agent.run(ws, [f"$ rm -r {ws.victim}", "done"], "clean up", hookgate=True)
    assert ws.victim_alive, outcome.describe()
    assert outcome.returncode == 0, outcome.describe()
    assert len(outcome.bodies) == 2, outcome.describe()
    assert DENY_REASON in outcome.said_to_model(1), outcome.describe()  # the tool's error names the policy


def test_the_same_policy_rewrites_rm_into_a_move_to_trash(agent: Agent, tmp_path: Path) -> None:
    ws = fresh(tmp_path, "rewrite")
    notes = ws.project / "notes.txt"
    notes.write_text("keep me\n")
    outcome = agent.run(ws, [f"$ rm {notes}", "done"], "tidy up", hookgate=True)
    assert not notes.exists(), outcome.describe()  # the rewritten command ran ...
    assert (ws.project / ".trash" / "notes.txt").read_text() == "keep me\n", outcome.describe()  # ... a move
    assert ws.victim_alive


def test_the_same_stop_check_makes_the_agent_continue_once(agent: Agent, tmp_path: Path) -> None:
    ws = fresh(tmp_path, "stop", report=False)
    report = ws.project / "REPORT.md"
    steps = ["all done", f"$ echo 'cleaned up' > {report}", "report written"]
    outcome = agent.run(ws, steps, "do the work", hookgate=True)
    assert report.read_text() == "cleaned up\n", outcome.describe()
    # first answer, blocked stop -> the tool call -> the final answer; no further continuation
    assert len(outcome.bodies) == 3, outcome.describe()
    assert STOP_REASON in outcome.said_to_model(1), outcome.describe()  # the check's reason went to the model
    assert STOP_REASON not in outcome.said_to_model(0)


@pytest.mark.parametrize("host", ["gemini", "codex"])
def test_user_level_install_guards_and_uninstall_restores_the_files(
    host: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """``hookgate install HOST`` with no --project edits $HOME/.gemini/settings.json or
    $CODEX_HOME/{hooks.json,config.toml}; ``hookgate uninstall HOST`` puts them back byte for byte."""
    request.getfixturevalue(f"{host}_cli")

    def files(home: Path) -> list[Path]:
        return [home / ".gemini" / "settings.json"] if host == "gemini" else [home / "hooks.json", home / "config.toml"]

    def env(home: Path) -> dict[str, str]:
        return {"HOME": str(home)} if host == "gemini" else {"CODEX_HOME": str(home)}

    def runner(ws: Workspace, prepare: Callable[[Path], None]) -> Any:
        command = f"rm -r {ws.victim}"
        if host == "gemini":
            return run_gemini(
                ws.project,
                None,
                [gemini_api.ToolCall("run_shell_command", {"command": command}), "done"],
                "clean up",
                home=ws.root / "home",
                prepare=prepare,
            )
        return run_codex(
            ws.project,
            None,
            [openai_responses_api.ToolCall("exec_command", {"cmd": command}), "done"],
            "clean up",
            codex_home=ws.root / "home",
            prepare=prepare,
        )

    def install(home: Path) -> None:
        hookgate_install(host, env=env(home))

    ws = fresh(tmp_path, "installed")
    run = runner(ws, install)
    assert ws.victim_alive, run.describe()
    assert any(DENY_REASON in json.dumps(r.json) for r in run.main_requests), run.describe()

    originals: dict[Path, str] = {}

    def install_then_uninstall(home: Path) -> None:
        originals.update({f: f.read_text() for f in files(home) if f.exists()})
        hookgate_install(host, env=env(home))
        hookgate_install(host, env=env(home), action="uninstall")
        for path, text in originals.items():
            assert path.read_text() == text, path
        if host == "codex":
            assert json.loads((home / "hooks.json").read_text()) == {}

    ws = fresh(tmp_path, "uninstalled")
    run = runner(ws, install_then_uninstall)
    assert not ws.victim.exists(), run.describe()  # no hook left: the control behaviour is back
    assert originals, "the harness wrote no host config"
