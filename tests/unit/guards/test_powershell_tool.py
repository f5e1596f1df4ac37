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


WRITES = [
    ("Set-Content -Path .claude/settings.json -Value '{}'", "deny:write.hook-config"),
    ("Set-Content .env 'A=1'", "deny:write.secrets"),
    ("sc -Path:.env -Value x", "deny:write.secrets"),
    ("Add-Content ~/.ssh/authorized_keys 'ssh-ed25519 AAAA'", "deny:write.secrets"),
    ("Out-File -FilePath hookgate.yaml", "deny:write.hook-config"),
    ("'x' | Out-File .env -Encoding utf8", "deny:write.secrets"),
    ("Get-Date | Tee-Object -FilePath .env", "deny:write.secrets"),
    ("Clear-Content .claude/settings.local.json", "deny:write.hook-config"),
    ("echo hi > .env", "deny:write.secrets"),
    ("Write-Output '{}' *>> .claude/settings.json", "deny:write.hook-config"),
    ("New-Item -ItemType File -Force .claude/settings.json", "deny:write.hook-config"),
    ("New-Item -Path .claude -Name settings.json -ItemType File", "deny:write.hook-config"),
    ("Copy-Item x.json .claude/settings.json", "deny:write.hook-config"),
    ("Copy-Item -Path x.json -Destination C:\\proj\\.claude\\settings.json", "deny:write.hook-config"),
    ("Move-Item hookgate.yaml old.yaml", "deny:write.hook-config"),
    ("Rename-Item .claude/settings.json s.bak", "deny:write.hook-config"),
    ("Set-Content .git/hooks/pre-commit 'exit 0'", "deny:write.git-config"),
    ("[IO.File]::WriteAllText('.env', 'A=1')", "deny:write.secrets"),
    ("[System.IO.File]::Copy('x', 'C:\\proj\\.claude\\settings.json')", "deny:write.hook-config"),
    ("if ($true) { Set-Content .env x }", "deny:write.secrets"),
]


@pytest.mark.parametrize(("script", "rule"), WRITES)
def test_powershell_writes_to_secrets_and_hook_config_are_denied_as_the_shell_ones(script: str, rule: str) -> None:
    """``Set-Content .env``, ``Copy-Item x .claude/settings.json``, ``> hookgate.yaml``: the PowerShell tool
    once wrote them all (only deletes were read); each is judged as the ``tee``/``cp``/``mv`` line it is."""
    assert ps_rule(script) == rule
    out = shell_guard.check_event(ps_event(script))
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"


@pytest.mark.parametrize(
    "script",
    [
        "Set-Content notes.txt '.env'",  # the value is not a path
        "Set-Content -Path:.gitignore -Value 'node_modules'",
        "echo hi >> notes.txt",
        "Get-ChildItem 2>&1 > out.txt",
        "New-Item -ItemType Directory build/out",
        "Copy-Item -Path .env -Destination backup.env",  # reading a secret is never blocked
        "Rename-Item notes.txt notes2.txt",
        "Set-Content -WhatIf .env 'x'",
        "Write-Output 'a > .env'",
        "Get-Content .env",
    ],
)
def test_ordinary_powershell_writes_pass(script: str) -> None:
    assert ps_rule(script) is None
