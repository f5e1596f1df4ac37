"""``hookgate install`` / ``uninstall``: idempotent, backed up, reversible, dry-run; Codex trust entries."""

from __future__ import annotations

import json
import os
import shlex
import tomllib
from pathlib import Path
from typing import Any

import pytest

from gateway import install
from gateway.install import InstallError, Options, apply, is_hookgate_command, plan
from gateway.install.codex_trust import edit_state, trust_hash
from tests.conftest import run_hookgate
from tests.e2e.hosts import codex_trust_hashes

HG = ["/opt/hg/bin/hookgate"]
USER_GROUP = {"matcher": "run_shell_command", "hooks": [{"name": "mine", "type": "command", "command": "./mine.sh"}]}


def opts(host: str, project: Path | None, action: str = "install", **kw: Any) -> Options:
    events = kw.pop("events", None)
    o = Options(host=host, action=action, project=str(project) if project else None, executable=HG, **kw)
    if action == "install":
        o.events = events if events is not None else install.host_events(host)
    return o


def run(o: Options, *, dry_run: bool = False) -> list[str]:
    lines: list[str] = []
    assert apply(plan(o), dry_run=dry_run, out=lines.append) == 0
    return lines


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".hookgate-backup-*"))


def ours(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [h for g in groups for h in g["hooks"] if is_hookgate_command(h.get("command"))]


def test_gemini_install_keeps_user_hooks_backs_up_and_is_idempotent(tmp_path: Path) -> None:
    settings = tmp_path / ".gemini" / "settings.json"
    settings.parent.mkdir()
    original = {"general": {"vimMode": True}, "hooks": {"BeforeTool": [USER_GROUP]}}
    settings.write_text(json.dumps(original, indent=4) + "\n")
    out = run(opts("gemini", tmp_path))
    assert out[0].startswith(f"wrote {settings} (backup: ")
    [backup] = backups(settings)
    assert json.loads(backup.read_text()) == original
    doc = json.loads(settings.read_text())
    assert doc["general"] == {"vimMode": True}
    assert set(doc["hooks"]) == set(install.host_events("gemini"))
    assert doc["hooks"]["BeforeTool"][0] == USER_GROUP  # the user's group first, untouched
    [entry] = ours(doc["hooks"]["BeforeTool"])
    assert entry == {
        "name": "hookgate",
        "type": "command",
        "command": "/opt/hg/bin/hookgate run --dialect gemini",
        "timeout": 600000,
        "description": "hookgate: one hook policy for every agent",
    }
    assert settings.read_text().startswith('{\n    "general"')  # the file's own indentation is kept
    before = settings.read_text()
    assert run(opts("gemini", tmp_path)) == [f"hookgate is already installed for gemini ({settings}): nothing to do"]
    assert settings.read_text() == before and len(backups(settings)) == 1


def test_dry_run_prints_the_diff_and_writes_nothing(tmp_path: Path) -> None:
    out = run(opts("claude", tmp_path), dry_run=True)
    target = tmp_path / ".claude" / "settings.json"
    assert out[0].startswith("--- /dev/null\n+++ " + str(target))
    assert '+            "command": "/opt/hg/bin/hookgate run --dialect claude",' in out[0]
    assert out[-1] == "dry run: 1 file(s) would change; nothing written"
    assert not target.exists()


def test_uninstall_removes_only_hookgate(tmp_path: Path) -> None:
    settings = tmp_path / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {"BeforeTool": [USER_GROUP]}}))
    run(opts("gemini", tmp_path))
    # the user also copied install's own entry into their group: it goes (it is what install writes), their
    # hook stays; a hookgate hook install does not write (no absolute path) is theirs and stays too
    doc = json.loads(settings.read_text())
    mine = {"type": "command", "command": "hookgate run --dialect gemini"}
    doc["hooks"]["BeforeTool"][0]["hooks"].append(
        {"type": "command", "command": "/opt/hg/bin/hookgate run --dialect gemini"}
    )
    doc["hooks"]["AfterTool"].insert(0, {"hooks": [mine]})
    settings.write_text(json.dumps(doc))
    run(opts("gemini", tmp_path, action="uninstall"))
    assert json.loads(settings.read_text()) == {"hooks": {"BeforeTool": [USER_GROUP], "AfterTool": [{"hooks": [mine]}]}}
    assert run(opts("gemini", tmp_path, action="uninstall"))[0].startswith("hookgate is already not installed")


def test_reinstall_updates_in_place_and_events_can_be_narrowed(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    run(opts("claude", tmp_path))
    doc = json.loads(settings.read_text())
    doc["hooks"]["PreToolUse"].append({"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]})
    settings.write_text(json.dumps(doc))
    run(
        opts(
            "claude", tmp_path, config="/etc/policy.yaml", server="http://127.0.0.1:8787", events=["PreToolUse", "Stop"]
        )
    )
    doc = json.loads(settings.read_text())
    assert set(doc["hooks"]) == {"PreToolUse", "Stop"}
    first, second = doc["hooks"]["PreToolUse"]
    assert first["hooks"][0]["command"] == (
        "/opt/hg/bin/hookgate run --dialect claude --config /etc/policy.yaml --server http://127.0.0.1:8787"
    )
    assert second["hooks"][0]["command"] == "./guard.sh"  # still after hookgate's group


def test_claude_user_level_and_event_choices(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-home"))
    run(opts("claude", None))
    doc = json.loads((tmp_path / "claude-home" / "settings.json").read_text())
    assert "WorktreeCreate" not in doc["hooks"] and "MessageDisplay" not in doc["hooks"]
    assert "timeout" not in doc["hooks"]["SessionEnd"][0]["hooks"][0]  # SessionEnd keeps Claude's short budget
    assert doc["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] == 600
    assert install.select_events("gemini", "PreToolUse,AfterAgent") == ["BeforeTool", "AfterAgent"]
    with pytest.raises(InstallError, match="no event 'BeforeModel'"):
        install.select_events("gemini", "BeforeModel")


@pytest.mark.parametrize("text", ['{"hooks": {}, // comment\n}', "[]", '{"hooks": []}'])
def test_files_hookgate_cannot_edit_safely_are_left_alone(tmp_path: Path, text: str) -> None:
    settings = tmp_path / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(text)
    with pytest.raises(InstallError):
        plan(opts("gemini", tmp_path))
    assert settings.read_text() == text


# ---------------------------------------------------------------------------- Codex

CONFIG_TOML = """model = "gpt-5.5"  # keep this comment

[model_providers.fake]
base_url = "http://127.0.0.1:1/v1"

[hooks.state."/elsewhere/hooks.json:stop:0:0"]
trusted_hash = "sha256:abc"
"""


def codex_setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text(CONFIG_TOML)
    monkeypatch.setenv("CODEX_HOME", str(home))
    return home


def state(home: Path) -> dict[str, Any]:
    data = tomllib.loads((home / "config.toml").read_text())
    result: dict[str, Any] = data.get("hooks", {}).get("state", {})
    return result


def test_codex_install_writes_hooks_and_the_trust_codex_expects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = codex_setup(tmp_path, monkeypatch)
    out = run(opts("codex", None))
    assert [line.split(" ")[1] for line in out] == [str(home / "hooks.json"), str(home / "config.toml")]
    doc = json.loads((home / "hooks.json").read_text())
    assert list(doc["hooks"]) == install.host_events("codex")
    assert doc["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"] == 3
    expected = codex_trust_hashes(home / "hooks.json", doc["hooks"])  # the e2e harness's own implementation
    got = {k: v["trusted_hash"] for k, v in state(home).items() if not k.startswith("/elsewhere")}
    assert got == expected and len(got) == len(install.host_events("codex"))
    text = (home / "config.toml").read_text()
    assert text.startswith(CONFIG_TOML)  # every other byte kept
    assert run(opts("codex", None))[0].startswith("hookgate is already installed")
    run(opts("codex", None, action="uninstall"))
    assert (home / "config.toml").read_text() == CONFIG_TOML
    assert json.loads((home / "hooks.json").read_text()) == {}


def test_codex_uninstall_carries_the_trust_of_hooks_that_move_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = codex_setup(tmp_path, monkeypatch)
    run(opts("codex", None, events=["PreToolUse"]))
    doc = json.loads((home / "hooks.json").read_text())
    user = {"type": "command", "command": "./audit.sh", "timeout": 10}
    doc["hooks"]["PreToolUse"].append({"matcher": "Bash", "hooks": [user]})
    (home / "hooks.json").write_text(json.dumps(doc))
    user_key_before = f"{home / 'hooks.json'}:pre_tool_use:1:0"
    user_hash = trust_hash("PreToolUse", "Bash", user)
    (home / "config.toml").write_text(
        (home / "config.toml").read_text() + f'\n[hooks.state."{user_key_before}"]\ntrusted_hash = "{user_hash}"\n'
    )
    run(opts("codex", None, action="uninstall"))
    assert json.loads((home / "hooks.json").read_text()) == {
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [user]}]}
    }
    entries = state(home)
    assert entries[f"{home / 'hooks.json'}:pre_tool_use:0:0"] == {"trusted_hash": user_hash}  # moved with it
    assert user_key_before not in entries and "/elsewhere/hooks.json:stop:0:0" in entries


def test_codex_project_install_notes_project_trust(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = codex_setup(tmp_path, monkeypatch)
    project = tmp_path / "proj"
    project.mkdir()
    out = run(opts("codex", project, events=["PreToolUse"]))
    key = f"{project / '.codex' / 'hooks.json'}:pre_tool_use:0:0"
    assert key in state(home)
    assert any(line.startswith("note: Codex loads") and "trusted" in line for line in out)


def test_codex_trust_in_a_form_hookgate_does_not_edit_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = codex_setup(tmp_path, monkeypatch)
    key = f"{home / 'hooks.json'}:pre_tool_use:0:0"
    inline = f'[hooks]\nstate = {{ "{key}" = {{ trusted_hash = "sha256:old" }} }}\n'
    (home / "config.toml").write_text(inline)
    with pytest.raises(InstallError, match="add the trust entries by hand"):
        plan(opts("codex", None, events=["PreToolUse"]))
    assert (home / "config.toml").read_text() == inline and not (home / "hooks.json").exists()


def test_edit_state_keeps_everything_else() -> None:
    text = 'a = 1\n\n[hooks.state."k1"]\ntrusted_hash = "sha256:1"\n\n[other]\nb = 2\n'
    new = edit_state(text, {"k1"}, {"k2": {"trusted_hash": "sha256:2"}})
    assert tomllib.loads(new) == {"a": 1, "other": {"b": 2}, "hooks": {"state": {"k2": {"trusted_hash": "sha256:2"}}}}


# ---------------------------------------------------------------------------- Kiro


def test_kiro_agent_config(tmp_path: Path) -> None:
    run(opts("kiro", tmp_path))
    agent = tmp_path / ".kiro" / "agents" / "hookgate.json"
    doc = json.loads(agent.read_text())
    assert doc["name"] == "hookgate" and doc["tools"] == ["*"]
    assert doc["hooks"]["preToolUse"] == [{"command": "/opt/hg/bin/hookgate run --dialect kiro", "timeout_ms": 600000}]
    assert set(doc["hooks"]) == {"agentSpawn", "userPromptSubmit", "preToolUse", "postToolUse", "stop"}
    doc["hooks"]["preToolUse"].insert(0, {"matcher": "fs_write", "command": "./protect.sh"})
    agent.write_text(json.dumps(doc))
    run(opts("kiro", tmp_path, action="uninstall"))  # the only agent there: picked without --agent
    assert json.loads(agent.read_text())["hooks"] == {
        "preToolUse": [{"matcher": "fs_write", "command": "./protect.sh"}]
    }
    (agent.parent / "other.json").write_text("{}")
    with pytest.raises(InstallError, match="several Kiro agents"):
        plan(opts("kiro", tmp_path))
    run(opts("kiro", tmp_path, agent="other"))
    assert "hooks" in json.loads((agent.parent / "other.json").read_text())


def test_recognizing_hookgate_commands() -> None:
    assert is_hookgate_command("/x/.venv/bin/hookgate run --dialect codex")
    assert is_hookgate_command("hookgate run")
    assert is_hookgate_command("'/usr/bin/python3' -m gateway run --dialect gemini --server http://h:1")
    assert not is_hookgate_command("echo hookgate run")
    assert not is_hookgate_command("hookgate validate")
    assert not is_hookgate_command("./hook.sh 'unbalanced")


# ---------------------------------------------------------------------------- the CLI


def test_cli_install_validates_the_config_and_uses_this_hookgate(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": 3, "hooks": []}]}}))
    proc = run_hookgate(["install", "gemini", "--project", str(tmp_path), "--config", str(bad)])
    assert proc.returncode == 1 and "is invalid" in proc.stderr and not (tmp_path / ".gemini").exists()
    good = tmp_path / "hookgate.yaml"
    good.write_text("hooks: {}\n")
    proc = run_hookgate(
        ["install", "gemini", "--project", str(tmp_path), "--config", str(good), "--events", "BeforeTool"]
    )
    assert proc.returncode == 0, proc.stderr
    command = json.loads((tmp_path / ".gemini" / "settings.json").read_text())["hooks"]["BeforeTool"][0]["hooks"][0]
    words = command["command"].split()
    assert os.path.isabs(words[0]) and os.access(words[0], os.X_OK)
    assert words[1:] == ["run", "--dialect", "gemini", "--config", str(good)]
    proc = run_hookgate(["uninstall", "gemini", "--project", str(tmp_path)])
    assert proc.returncode == 0 and json.loads((tmp_path / ".gemini" / "settings.json").read_text()) == {}
    assert run_hookgate(["install", "gemini", "--project", str(tmp_path / "nope")]).returncode == 1


@pytest.mark.parametrize(
    "name",
    ["../../evil", "../evil", "a/b", "..", ".", ".hidden", "a..b", "x" * 129, "/abs", "a\\b", "é", "a b", "a\nb"],
)
def test_kiro_agent_name_must_be_a_plain_file_name(tmp_path: Path, name: str) -> None:
    with pytest.raises(InstallError, match="expected a plain agent name"):
        plan(opts("kiro", tmp_path, agent=name))
    assert not (tmp_path / ".kiro").exists()


def test_kiro_agent_names_that_are_fine(tmp_path: Path) -> None:
    for name in ("my-agent_2", "v1.2", "A"):
        run(opts("kiro", tmp_path, agent=name))
        assert (tmp_path / ".kiro" / "agents" / f"{name}.json").is_file()


def test_cli_install_refuses_a_path_as_agent_or_a_bad_server(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    for action in ("install", "uninstall"):
        proc = run_hookgate([action, "kiro", "--project", str(project), "--agent", "../../evil"])
        assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "plain agent name" in proc.stderr
    assert not list(tmp_path.rglob("*.json"))
    proc = run_hookgate(["install", "claude", "--project", str(project), "--server", "http://h:1/\nx"])
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "--server" in proc.stderr
    assert not (project / ".claude").exists()


def test_install_pins_several_configs_including_the_builtin_default(tmp_path: Path) -> None:
    good = tmp_path / "hookgate.yaml"
    good.write_text("hooks:\n  Stop:\n    - hooks: [{type: command, command: 'true'}]\n")
    proc = run_hookgate(
        [
            "install",
            "claude",
            "--project",
            str(tmp_path),
            "--config",
            "builtin:default",
            "--config",
            str(good),
            "--events",
            "PreToolUse",
        ]
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    words = shlex.split(doc["hooks"]["PreToolUse"][0]["hooks"][0]["command"])
    assert words[1:] == ["run", "--dialect", "claude", "--config", "builtin:default", "--config", str(good)]


# ---------------------------------------------------------------------------- whose entries, links, empties


def test_install_recognizes_only_the_commands_it_writes() -> None:
    assert install.is_install_command("/opt/hg/bin/hookgate run --dialect claude", "claude")
    assert install.is_install_command(
        "/opt/hg/bin/hookgate run --dialect claude --config /etc/p.yaml --config builtin:default "
        "--server http://127.0.0.1:8787",
        "claude",
    )
    assert install.is_install_command("/usr/bin/python3 -m gateway run --dialect kiro", "kiro")
    assert not install.is_install_command("/opt/hg/bin/hookgate run --dialect claude", "gemini")
    assert not install.is_install_command("hookgate run --dialect claude", "claude")  # not an absolute path
    assert not install.is_install_command('/opt/hg/bin/hookgate run --config "$CLAUDE_PROJECT_DIR"/p.yaml', "claude")
    assert not install.is_install_command("/opt/hg/bin/hookgate run --dialect claude --config p.yaml", "claude")
    assert not install.is_install_command("/opt/hg/bin/hookgate run --dialect claude --verbose", "claude")
    assert not install.is_install_command('"/opt/hg/bin/hookgate" run --dialect claude', "claude")  # not as quoted


def test_a_hand_written_hookgate_hook_is_left_alone_on_every_host(tmp_path: Path) -> None:
    mine = "/opt/hg/bin/hookgate run --config /etc/strict.yaml"
    grouped = '{"hooks": {"%s": [{"matcher": "x", "hooks": [{"type": "command", "command": "%s"}]}]}}'
    for host, event, text in [
        ("claude", "PreToolUse", grouped),
        ("gemini", "BeforeTool", grouped),
        ("kiro", "preToolUse", '{"name": "a", "hooks": {"%s": [{"command": "%s"}]}}'),
    ]:
        project = tmp_path / host
        project.mkdir()
        agent = "a" if host == "kiro" else None
        path = Path(install.target_file(opts(host, project, agent=agent)))
        path.parent.mkdir(parents=True)
        path.write_text(text % (event, mine))
        other = {"claude": "Stop", "gemini": "AfterAgent", "kiro": "stop"}[host]
        result = plan(opts(host, project, agent=agent, events=[event, other]))
        assert result.warnings == [
            f"{path}: {event} already runs hookgate through a hook install did not write ({mine}); install leaves "
            f"it as it is and adds no second one for {event}: to let install manage {event}, remove that hook "
            "and run install again"
        ]
        apply(result, dry_run=False, out=lambda line: None, warn=lambda line: None)
        doc = json.loads(path.read_text())
        assert json.dumps(doc["hooks"][event]).count("hookgate") == 1  # still only the user's
        run(opts(host, project, "uninstall", agent=agent))
        assert path.read_text() == text % (event, mine)


@pytest.mark.parametrize(
    "original",
    ['{"hooks": {}}', '{"hooks": {"Stop": []}}\n', '{\n  "hooks": {\n    "Stop": [],\n    "x": []\n  }\n}\n'],
)
def test_empty_hooks_and_event_lists_come_back_after_uninstall(tmp_path: Path, original: str) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(original)
    run(opts("claude", tmp_path, events=["PreToolUse", "Stop"]))
    assert json.loads(settings.read_text())["hooks"]["PreToolUse"]
    run(opts("claude", tmp_path, events=["PreToolUse"]))  # narrowed: Stop is given back empty already
    assert json.loads(settings.read_text())["hooks"].get("Stop", []) == []
    run(opts("claude", tmp_path, action="uninstall"))
    assert settings.read_text() == original
    # nothing installed: uninstall leaves an empty hooks object (or list) alone
    assert run(opts("claude", tmp_path, action="uninstall"))[0].startswith("hookgate is already not installed")


def test_every_hosts_files_are_written_through_a_symlink(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = codex_setup(tmp_path, monkeypatch)
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    for name in ("hooks.json", "config.toml"):
        real = dotfiles / f"codex-{name}"
        real.write_text((home / name).read_text() if (home / name).exists() else "{}\n")
        (home / name).unlink(missing_ok=True)
        (home / name).symlink_to(real)
    out = run(opts("codex", None, events=["PreToolUse"]))
    assert out[0] == (
        f"wrote {home / 'hooks.json'} (through the link to {dotfiles / 'codex-hooks.json'}; "
        f"backup: {backups(home / 'hooks.json')[0]})"
    )
    for name in ("hooks.json", "config.toml"):
        assert (home / name).is_symlink() and os.readlink(home / name) == str(dotfiles / f"codex-{name}")
    assert "PreToolUse" in json.loads((dotfiles / "codex-hooks.json").read_text())["hooks"]
    assert f'[hooks.state."{home / "hooks.json"}:pre_tool_use:0:0"]' in (dotfiles / "codex-config.toml").read_text()
    run(opts("codex", None, action="uninstall"))
    assert (home / "hooks.json").is_symlink() and (dotfiles / "codex-hooks.json").read_text() == "{}\n"
    assert (dotfiles / "codex-config.toml").read_text() == CONFIG_TOML


def test_a_hooks_event_that_is_not_a_list_is_named_with_its_file(tmp_path: Path) -> None:
    settings = tmp_path / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {"BeforeTool": {}}}')
    with pytest.raises(InstallError) as info:
        plan(opts("gemini", tmp_path))
    assert str(info.value) == f"{settings}: hooks.BeforeTool is not a list; fix it by hand first"
