"""Claude Code's ``PowerShell`` tool under the default policy (F6): its ``command`` is a PowerShell script, read
as ``pwsh -c`` text is, so the same script gets the same verdict through either door."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from configs.guards import shell_guard
from configs.guards.destructive import analyse, analyse_powershell
from tests.conftest import run_hookgate

from .common import CWD, RM
from .conftest import own_state


def ps_rule(script: str) -> str | None:
    found = analyse_powershell(script, CWD)
    return None if found is None else f"{found.decision}:{found.rule}"


def ps_event(script: str) -> dict[str, object]:
    return {"hook_event_name": "PreToolUse", "tool_name": "PowerShell", "tool_input": {"command": script}, "cwd": CWD}


DENIED = [
    ("Remove-Item ~ -Recurse -Force", RM),
    ("Remove-Item -Recurse -Force src", RM),
    ("rm -r -fo $HOME", RM),
    ("Get-ChildItem ~ | Remove-Item -Recurse -Force", RM),
    ("if ($true) { Remove-Item -Recurse ~ }", RM),
    ("iex 'Remove-Item -Recurse ~'", RM),
    ("[System.IO.Directory]::Delete('/home/user', $true)", RM),
    ("Start-Process rm -ArgumentList '-rf','~'", RM),
    ("git push --force", "deny:git.push-force"),
    ("cd repo; git push -f origin main", "deny:git.push-force"),
    ("git reset --hard HEAD~3", "deny:git.reset-hard"),
]


@pytest.mark.parametrize(("script", "rule"), DENIED)
def test_the_powershell_tool_is_read_as_a_powershell_script(script: str, rule: str) -> None:
    assert ps_rule(script) == rule
    assert analyse(f"pwsh -c {shlex.quote(script)}", CWD) is not None  # the same script through pwsh -c


@pytest.mark.parametrize(
    "script",
    ["Get-ChildItem -Recurse", "git status", "Remove-Item -Recurse -Force node_modules", "Write-Output 'rm -rf ~'"],
)
def test_harmless_powershell_passes(script: str) -> None:
    assert ps_rule(script) is None
    assert shell_guard.check_event(ps_event(script)) is None


def test_check_event_reads_a_powershell_tool_call_as_powershell() -> None:
    out = shell_guard.check_event(ps_event("Remove-Item ~ -Recurse -Force"))
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "[rule rm.recursive]" in out["hookSpecificOutput"]["permissionDecisionReason"]
    # as Bash the same text is bash: Remove-Item is an unknown program there, not a delete
    bash = {**ps_event("Remove-Item ~ -Recurse -Force"), "tool_name": "Bash"}
    assert shell_guard.check_event(bash) is None


@pytest.mark.parametrize(("script", "rule"), [DENIED[0], DENIED[8]])
def test_the_default_policy_guards_the_powershell_tool(tmp_path: Path, script: str, rule: str) -> None:
    proc = run_hookgate(["run"], {**ps_event(script), "session_id": "s1"}, env=own_state(tmp_path))
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert f"[rule {rule.split(':', 1)[1]}]" in proc.stdout + proc.stderr
