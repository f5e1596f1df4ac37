"""The config's ``guards`` section end to end: ``hookgate validate`` checks it, ``hookgate run`` applies it to the
default policy's shell guard, ``hookgate explain`` shows it and names the rule and the part of the command that
triggered a deny. Real subprocesses."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2

from tests.conftest import ROOT, run_hookgate
from tests.integration.serve_helpers import ServeProcess, isolated_env

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


# ---------------------------------------------------------------------------- tuning: wording, YAML, names, scope


def yaml_config(tmp_path: Path, guards_yaml: str, name: str = "hookgate.yaml") -> Path:
    config = tmp_path / name
    config.write_text(
        "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n"
        "        - {type: python, callable: 'configs.guards.shell_guard:check_event', failClosed: true}\n"
        f"guards:\n{guards_yaml}"
    )
    return config


def test_the_reason_says_what_the_tuned_decision_does(tmp_path: Path) -> None:
    to_deny = yaml_config(tmp_path, "  rules: {git.stash-drop: deny}\n", "deny.yaml")
    denied = run_hookgate(["run", "--config", str(to_deny)], bash("git stash drop"))
    assert denied.returncode == 2 and "blocks it" in denied.stderr and "asks first" not in denied.stderr
    to_ask = yaml_config(tmp_path, "  rules: {rm.recursive: ask}\n", "ask.yaml")
    asked = run_hookgate(["run", "--config", str(to_ask)], bash("rm -rf /srv/app/src"))
    reason = json.loads(asked.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "asks first" in reason and "blocks" not in reason, reason
    explained = run_hookgate(["explain", "--config", str(to_ask)], bash("rm -rf /srv/app/src"))
    assert "rule: rm.recursive (ask), triggered by: `rm -rf /srv/app/src`" in explained.stdout
    assert "asks first" in explained.stdout


def test_an_unquoted_yaml_off_means_off_and_true_is_named(tmp_path: Path) -> None:
    off = yaml_config(tmp_path, "  rules:\n    rm.recursive: off\n    git.*: no\n", "off.yaml")
    checked = run_hookgate(["validate", "--config", str(off)])
    assert (
        checked.returncode == 0 and "rule rm.recursive: off" in checked.stdout and "rule git.*: off" in checked.stdout
    )
    assert run_hookgate(["run", "--config", str(off)], bash("rm -rf /srv/app/src && git reset --hard")).returncode == 0
    on = yaml_config(tmp_path, "  rules:\n    rm.recursive: on\n", "on.yaml")
    proc = run_hookgate(["validate", "--config", str(on)])
    line = next(x for x in proc.stdout.splitlines() if "rm.recursive" in x)
    assert proc.returncode == 1 and "guards.rules.rm.recursive: true is not a decision" in line and "quote it" in line
    assert "Traceback" not in proc.stdout + proc.stderr


def test_validate_lists_every_bad_rule_name(tmp_path: Path) -> None:
    config = yaml_config(
        tmp_path, "  rules:\n    rm.recursiv: deny\n    git.nope: ask\n    foo.bar: off\n    git.reset-hard: maybe\n"
    )
    proc = run_hookgate(["validate", "--config", str(config)])
    assert proc.returncode == 1
    for name in ("rm.recursiv", "git.nope", "foo.bar"):
        assert f"guards.rules.{name}: no rule of the default policy has this name" in proc.stdout, proc.stdout
    assert "did you mean 'rm.recursive'" in proc.stdout and "guards.rules.git.reset-hard" in proc.stdout
    assert "4 error(s)" in proc.stdout


TWO_GATEWAYS = """
import asyncio, json, sys
from gateway.api import Gateway

def event(command):
    return {"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": "/srv/app", "tool_input": {"command": command}}

async def main():
    tuned, plain = Gateway.from_file(sys.argv[1]), Gateway.from_file(sys.argv[2])
    out = []
    for gateway in (tuned, plain, tuned, plain):
        out.append((await gateway.dispatch(event("rm -rf /srv/app/src"))).permission)
    both = await asyncio.gather(*(g.dispatch(event("rm -rf /srv/app/src")) for g in (plain, tuned, plain, tuned)))
    out += [d.permission for d in both]
    print(json.dumps(out))

asyncio.run(main())
"""


def test_one_configs_tuning_does_not_leak_into_another_in_the_same_process(tmp_path: Path) -> None:
    tuned = yaml_config(tmp_path, "  rules: {rm.recursive: off}\n", "tuned.yaml")
    plain = write_config(tmp_path, None, "plain.yaml")
    proc = subprocess.run(
        [sys.executable, "-c", TWO_GATEWAYS, str(tuned), str(plain)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [None, "deny", None, "deny", "deny", None, "deny", None]


def test_a_reload_in_serve_takes_the_new_configs_tuning_and_nothing_of_the_old(tmp_path: Path) -> None:
    config = yaml_config(tmp_path, "  rules: {rm.recursive: off}\n")

    def decision(url: str) -> str | None:
        body = httpx2.post(f"{url}/hooks", json=bash("rm -rf /srv/app/src"), timeout=30).json()
        value: str | None = body.get("hookSpecificOutput", {}).get("permissionDecision")
        return value

    with ServeProcess(config, args=["--reload-interval", "0"], env=isolated_env(tmp_path)) as server:
        assert decision(server.url) is None  # tuned off
        write_config(tmp_path, None)  # the same file, now without a guards section
        mark = len(server.lines)
        server.signal(signal.SIGHUP)
        assert "reloaded" in server.wait_log("config reload", after=mark)
        assert decision(server.url) == "deny"
        assert server.stop() == 0


def _decide(
    configs: list[str], cwd: Path, env: dict[str, str], tool: str, tool_input: dict[str, Any]
) -> tuple[int, str]:
    """``hookgate run`` with ``configs`` on a PreToolUse call of ``tool`` run in ``cwd``: exit code, stdout."""
    event = {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input, "cwd": str(cwd)}
    proc = run_hookgate(["run", *(a for c in configs for a in ("--config", c))], event, env=env)
    return proc.returncode, proc.stdout


def test_the_policy_files_hookgate_loaded_are_protected_whatever_their_name(tmp_path: Path) -> None:
    """`--config builtin:default --config policy.yaml`: the agent must not rewrite policy.yaml (a file
    tool, a shell write, a removal), as it must not rewrite a file named hookgate.yaml."""
    project = tmp_path / "proj"
    project.mkdir()
    policy = project / "policy.yaml"
    policy.write_text(
        "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - {type: command, command: 'true'}\n"
    )
    configs = ["builtin:default", str(policy)]
    env = isolated_env(tmp_path)

    def decide(tool: str, tool_input: dict[str, Any]) -> tuple[int, str]:
        return _decide(configs, project, env, tool, tool_input)

    for tool, tool_input in (
        ("Write", {"file_path": str(policy), "content": "hooks: {}"}),
        ("Edit", {"file_path": "policy.yaml", "old_string": "true", "new_string": "false"}),
        ("Bash", {"command": "echo 'hooks: {}' > policy.yaml"}),
        ("Bash", {"command": "rm policy.yaml"}),
        ("Bash", {"command": f"sed -i s/true/false/ {policy}"}),
    ):
        code, out = decide(tool, tool_input)
        assert code == 2 and "a policy file hookgate is running" in out, (tool, tool_input, out)
    for tool, tool_input in (
        ("Write", {"file_path": str(project / "notes.yaml"), "content": "x"}),
        ("Bash", {"command": "cat policy.yaml"}),
        ("Bash", {"command": "echo x > other.yaml"}),
    ):
        assert decide(tool, tool_input) == (0, ""), (tool, tool_input)


def test_a_link_to_a_protected_file_is_no_way_around_the_guard_rails(tmp_path: Path) -> None:
    """``ln -s ~/.ssh/authorized_keys notes.txt`` then a Write of notes.txt writes authorized_keys: the write
    is judged where it lands; a hard link (which cannot be followed back) and a link to hook configuration
    count as writing the file they link to."""
    import os

    home, project = tmp_path / "home", tmp_path / "proj"
    (home / ".ssh").mkdir(parents=True)
    (home / ".claude").mkdir()
    project.mkdir()
    (home / ".ssh" / "authorized_keys").write_text("")
    os.symlink(home / ".ssh" / "authorized_keys", project / "notes.txt")
    os.symlink(home / ".claude", project / "cfg")
    env = {**isolated_env(tmp_path), "HOME": str(home)}

    def decide(tool: str, tool_input: dict[str, Any]) -> tuple[int, str]:
        return _decide(["builtin:default"], project, env, tool, tool_input)

    for tool, tool_input in (
        ("Write", {"file_path": str(project / "notes.txt"), "content": "ssh-rsa AAAA attacker"}),
        ("Write", {"file_path": str(project / "cfg" / "settings.json"), "content": "{}"}),
        ("Bash", {"command": "echo 'ssh-rsa AAAA attacker' >> notes.txt"}),
        ("Bash", {"command": "ln ~/.ssh/authorized_keys keys.txt"}),
        ("Bash", {"command": "ln -sf ~/.claude/settings.json s.json"}),
        ("Bash", {"command": "cp -s ~/.claude/settings.json s.json"}),
    ):
        code, out = decide(tool, tool_input)
        assert code == 2 and "deny" in out, (tool, tool_input, out)
    for tool, tool_input in (
        ("Write", {"file_path": str(project / "plain.txt"), "content": "x"}),
        ("Bash", {"command": "ln -s src/main.py main.py"}),
        ("Bash", {"command": "echo hi >> plain.txt"}),
    ):
        assert decide(tool, tool_input) == (0, ""), (tool, tool_input)
