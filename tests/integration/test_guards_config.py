"""The config's ``guards`` section end to end: ``hookgate validate`` checks it, ``hookgate run`` applies it to the
default policy's shell guard, ``hookgate explain`` shows it and names the rule and the part of the command that
triggered a deny. Real subprocesses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import ROOT, run_hookgate

GUARD = {
    "type": "python",
    "id": "destructive-shell",
    "callable": "configs.guards.shell_guard:check_event",
    "failClosed": True,
}


def write_config(tmp_path: Path, guards: Any, name: str = "hookgate.yaml") -> Path:
    config = tmp_path / name
    doc: dict[str, Any] = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [GUARD]}]}}
    if guards is not None:
        doc["guards"] = guards
    config.write_text(json.dumps(doc))
    return config


def bash(command: str, cwd: str = "/srv/app") -> dict[str, Any]:
    return {"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": cwd, "tool_input": {"command": command}}


def test_validate_accepts_the_section_and_lists_it(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {
            "rules": {"rm.recursive": "ask", "git.*": "deny"},
            "allowPaths": ["/srv/x"],
            "allowCommands": ["git clean -fdx"],
            "buildDirs": ["gen"],
        },
    )
    proc = run_hookgate(["validate", "--config", str(config)])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "guards: rule rm.recursive: ask" in proc.stdout and "guards: allowPaths: /srv/x" in proc.stdout
    assert "guards: buildDirs: gen" in proc.stdout


def test_validate_reports_bad_tuning_at_load_time(tmp_path: Path) -> None:
    for guards, words in [
        ({"rules": {"rm.recursiv": "off"}}, "did you mean 'rm.recursive'"),
        ({"rules": {"rm.recursive": "maybe"}}, "guards.rules.rm.recursive"),
        ({"allowPaths": "/srv"}, "guards.allowPaths"),
        ("yes", "guards"),
        ({"buildDirs": [1]}, "guards.buildDirs"),
    ]:
        config = write_config(tmp_path, guards)
        proc = run_hookgate(["validate", "--config", str(config)])
        assert proc.returncode == 1 and words in proc.stdout, (guards, proc.stdout)
        run = run_hookgate(["run", "--config", str(config)], bash("ls"))
        assert run.returncode == 2 and "guards" in run.stderr  # a broken config blocks (fails closed)
    config = write_config(tmp_path, {"rules": {}, "allowPath": []})
    proc = run_hookgate(["validate", "--config", str(config)])
    assert proc.returncode == 0 and "guards.allowPath: unknown field" in proc.stdout and "allowPaths" in proc.stdout


def test_run_applies_the_tuning(tmp_path: Path) -> None:
    plain = write_config(tmp_path, None, "plain.yaml")
    denied = run_hookgate(["run", "--config", str(plain)], bash("rm -rf /srv/app/src"))
    assert denied.returncode == 2 and "[rule rm.recursive]" in denied.stderr
    off = write_config(tmp_path, {"rules": {"rm.recursive": "off"}}, "off.yaml")
    assert run_hookgate(["run", "--config", str(off)], bash("rm -rf /srv/app/src")).returncode == 0
    ask = write_config(tmp_path, {"rules": {"rm.recursive": "ask"}}, "ask.yaml")
    asked = run_hookgate(["run", "--config", str(ask)], bash("rm -rf /srv/app/src"))
    assert asked.returncode == 0
    assert json.loads(asked.stdout)["hookSpecificOutput"]["permissionDecision"] == "ask"
    allowed = write_config(tmp_path, {"allowPaths": ["/srv/app/src"], "allowCommands": ["git clean -fdx"]}, "a.yaml")
    assert (
        run_hookgate(["run", "--config", str(allowed)], bash("rm -rf /srv/app/src/x && git clean -fdx")).returncode == 0
    )
    assert run_hookgate(["run", "--config", str(allowed)], bash("git clean -f")).returncode == 2
    # two configs: the later one's rules win, the allow lists add up
    both = run_hookgate(["run", "--config", str(ask), "--config", str(off)], bash("rm -rf /srv/app/src"))
    assert both.returncode == 0 and both.stdout == ""
    # the default decision of an ask rule, and where the host cannot ask (Kiro), ask becomes a block
    stash = run_hookgate(["run", "--config", str(plain)], bash("git stash drop"))
    assert json.loads(stash.stdout)["hookSpecificOutput"]["permissionDecision"] == "ask"
    kiro = {
        "hook_event_name": "preToolUse",
        "cwd": "/srv/app",
        "tool_name": "execute_bash",
        "tool_input": {"command": "git stash drop"},
    }
    assert run_hookgate(["run", "--dialect", "kiro", "--config", str(plain)], kiro).returncode == 2


def test_explain_names_the_rule_and_the_triggering_part(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"rules": {"git.stash-drop": "deny"}})
    proc = run_hookgate(["explain", "--config", str(config)], bash("npm test && sudo -u root rm -rf ~/projects"))
    assert proc.returncode == 0, proc.stderr
    assert "rule: rm.recursive (deny), triggered by: `rm -rf ~/projects`" in proc.stdout
    assert "guards (the default policy's tuning): rule git.stash-drop: deny" in proc.stdout
    default = run_hookgate(["explain", "--config", "builtin:default"], bash("echo $((1+$(git reset --hard)))"))
    assert "rule: git.reset-hard (deny), triggered by: `git reset --hard`" in default.stdout


def test_the_command_hook_keeps_claude_codes_output_schema() -> None:
    script = ROOT / "configs" / "guards" / "shell_guard.py"
    proc = subprocess.run(
        [sys.executable, "-I", "-S", str(script)],
        input=json.dumps(bash("rm -rf ~")),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    out = json.loads(proc.stdout)
    assert (
        set(out) == {"hookSpecificOutput"}
        and "[rule rm.recursive]" in out["hookSpecificOutput"]["permissionDecisionReason"]
    )
