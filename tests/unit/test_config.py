"""Config loading and the validation errors Claude Code would silently get wrong."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from gateway.config import load_config
from gateway.errors import ConfigError
from tests.conftest import CASES


def _write(tmp_path: Path, data: Any, name: str = "hookgate.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data) if name.endswith(".json") else str(data))
    return str(path)


def _issues(tmp_path: Path, hooks: dict[str, Any], **extra: Any) -> list[str]:
    """What `hookgate validate` reports: schema errors (ConfigError), else handlers that cannot run."""
    path = _write(tmp_path, {"hooks": hooks, **extra})
    try:
        broken = load_config([path], use_cache=False).broken
    except ConfigError as exc:
        return exc.issues
    assert broken, "expected validation problems"
    return broken


def _cmd(**kw: Any) -> dict[str, Any]:
    return {"type": "command", "command": "true", **kw}


def test_guards_json_loads_verbatim() -> None:
    config = load_config([str(CASES / "configs" / "guards.json")], use_cache=False)
    assert [len(g.handlers) for g in config.hooks["PreToolUse"]] == [2, 1]
    assert config.hooks["PreToolUse"][0].handlers[0].if_rule == "Bash(rm *)"
    assert config.hooks["PreToolUse"][0].handlers[0].timeout == 600


def test_kiro_agent_config(tmp_path: Path) -> None:
    config = load_config([str(CASES / "configs" / "kiro-agent.json")], use_cache=False)
    pre = config.hooks["PreToolUse"]
    assert [g.matcher for g in pre] == ["fs_write", "execute_bash"]
    assert pre[0].handlers[0].timeout == 5.0 and pre[1].handlers[0].timeout == 30.0
    assert {g.dialect for g in pre} == {"kiro"}
    assert set(config.hooks) == {"SessionStart", "PreToolUse", "Stop"}


def test_kiro_cache_ttl_seconds(tmp_path: Path) -> None:
    path = _write(tmp_path, {"hooks": {"preToolUse": [{"command": "true", "cache_ttl_seconds": 60}]}})
    assert load_config([path], use_cache=False).hooks["PreToolUse"][0].handlers[0].cache_ttl == 60


def test_whole_settings_json_other_keys_ignored(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {"permissions": {"allow": ["Bash(ls)"]}, "model": "x", "hooks": {"Stop": [{"hooks": [_cmd()]}]}},
        "settings.json",
    )
    config = load_config([path], use_cache=False)
    assert list(config.hooks) == ["Stop"] and config.warnings == []


def test_bare_hooks_block_and_yaml(tmp_path: Path) -> None:
    path = tmp_path / "hooks.yaml"
    path.write_text("PreToolUse:\n  - matcher: Bash\n    hooks:\n      - {type: command, command: 'true'}\n")
    assert load_config([str(path)], use_cache=False).hooks["PreToolUse"][0].matcher == "Bash"


def test_several_files_concatenate(tmp_path: Path) -> None:
    a = _write(tmp_path, {"hooks": {"Stop": [{"hooks": [_cmd()]}]}}, "a.json")
    b = _write(tmp_path, {"hooks": {"Stop": [{"hooks": [_cmd(command="echo hi")]}]}}, "b.json")
    assert len(load_config([a, b], use_cache=False).hooks["Stop"]) == 2


def test_matcher_not_a_string(tmp_path: Path) -> None:
    issues = _issues(tmp_path, {"PreToolUse": [{"matcher": {"type": "x"}, "hooks": [_cmd()]}]})
    assert any("hooks.PreToolUse[0].matcher" in i and "valid string" in i for i in issues)
    assert issues[0].startswith(str(tmp_path))


def test_permission_rule_in_matcher(tmp_path: Path) -> None:
    issues = _issues(tmp_path, {"PreToolUse": [{"matcher": "Bash(git commit*)", "hooks": [_cmd()]}]})
    assert any("hooks.PreToolUse[0].matcher" in i and "permission rule" in i for i in issues)


def test_if_on_a_non_tool_event_is_a_warning_and_that_handler_never_runs(tmp_path: Path) -> None:
    config = load_config(
        [_write(tmp_path, {"hooks": {"Stop": [{"hooks": [_cmd(**{"if": "Bash(rm *)"}), _cmd()]}]}})], use_cache=False
    )
    assert any("hooks.Stop[0].hooks[0].if" in w and "never runs" in w for w in config.warnings)
    assert [h.where for g in config.hooks["Stop"] for h in g.handlers] == [
        f"{tmp_path / 'hookgate.json'}: hooks.Stop[0].hooks[1]"
    ]


def test_prompt_on_session_start(tmp_path: Path) -> None:
    issues = _issues(tmp_path, {"SessionStart": [{"hooks": [{"type": "prompt", "prompt": "x"}]}]})
    assert any("hooks.SessionStart[0].hooks[0].type" in i and "prompt" in i for i in issues)


def test_unknown_event_with_suggestion(tmp_path: Path) -> None:
    issues = _issues(tmp_path, {"PreToolUSe": [{"hooks": [_cmd()]}]})
    assert any("unknown event 'PreToolUSe'" in i and "'PreToolUse'" in i for i in issues)


def test_a_kiro_event_name_among_claude_ones_is_named_for_what_it_is(tmp_path: Path) -> None:
    """``preToolUse`` in a Claude Code block once got "did you mean 'preToolUse'?", the name it rejected."""
    issues = _issues(tmp_path, {"PreToolUse": [{"hooks": [_cmd()]}], "preToolUse": [{"hooks": [_cmd()]}]})
    [issue] = [i for i in issues if "preToolUse" in i]
    assert "a Kiro event name" in issue and "Claude Code calls it 'PreToolUse'" in issue
    assert "did you mean 'preToolUse'" not in issue


def test_claude_matcher_groups_under_kiro_event_names_say_so(tmp_path: Path) -> None:
    """All-lower-case event names make the block Kiro's; Claude Code's ``{matcher, hooks}`` entries there
    once got only ``command: Field required``."""
    issues = _issues(tmp_path, {"preToolUse": [{"matcher": "Bash", "hooks": [_cmd()]}], "stop": [{"hooks": [_cmd()]}]})
    assert len(issues) == 2, issues
    assert all("a Claude Code matcher group ({matcher, hooks}) under a Kiro event name" in i for i in issues)
    assert "the event is 'PreToolUse'" in issues[0] and "the event is 'Stop'" in issues[1]


def test_millisecond_timeout_is_a_warning_and_used_as_written(tmp_path: Path) -> None:
    config = load_config([_write(tmp_path, {"hooks": {"Stop": [{"hooks": [_cmd(timeout=5000)]}]}})], use_cache=False)
    assert any("hooks.Stop[0].hooks[0].timeout" in w and "did you mean 5" in w for w in config.warnings)
    assert config.hooks["Stop"][0].handlers[0].timeout == 5000


@pytest.mark.parametrize("key", ["async", "asyncRewake"])
def test_fail_closed_in_the_background_is_a_warning(tmp_path: Path, key: str) -> None:
    # found by a tester: failClosed beside async validated clean, yet a background handler never denies
    config = load_config(
        [_write(tmp_path, {"hooks": {"Stop": [{"hooks": [_cmd(failClosed=True, **{key: True})]}]}})], use_cache=False
    )
    assert any(
        "hooks.Stop[0].hooks[0].failClosed: has no effect with " + key in w and "drop " + key in w
        for w in config.warnings
    ), config.warnings


def test_missing_executable_and_script(tmp_path: Path) -> None:
    issues = _issues(
        tmp_path,
        {
            "Stop": [
                {
                    "hooks": [
                        _cmd(command="/nonexistent/hook.sh"),
                        _cmd(command="python3 /nonexistent/hook.py"),
                        _cmd(command="no-such-binary-xyz --flag"),
                        _cmd(command="$UNSET_HOOKGATE_VAR/x.sh"),
                    ]
                }
            ]
        },
    )
    assert any("hooks[0]" in i and "does not exist" in i for i in issues)
    assert any("hooks[1]" in i and "script file" in i for i in issues)
    assert any("hooks[2]" in i and "not on PATH" in i for i in issues)
    assert any("hooks[3]" in i and "UNSET_HOOKGATE_VAR" in i for i in issues)


def test_not_executable_script(tmp_path: Path) -> None:
    script = tmp_path / "hook.sh"
    script.write_text("#!/bin/sh\n")
    issues = _issues(tmp_path, {"Stop": [{"hooks": [_cmd(command=str(script))]}]})
    assert any("not executable" in i for i in issues)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    path = _write(tmp_path, {"hooks": {"Stop": [{"hooks": [_cmd(command=str(script))]}]}})
    assert load_config([path], use_cache=False).broken == []


def test_relative_script_resolves_against_the_project(tmp_path: Path) -> None:
    (tmp_path / ".claude" / "hooks").mkdir(parents=True)
    hook = tmp_path / ".claude" / "hooks" / "h.sh"
    hook.write_text("#!/bin/sh\n")
    hook.chmod(0o755)
    path = _write(
        tmp_path / ".claude", {"hooks": {"Stop": [{"hooks": [_cmd(command=".claude/hooks/h.sh")]}]}}, "settings.json"
    )
    assert load_config([path], use_cache=False).broken == []


def test_failclosed_on_a_judgment_handler(tmp_path: Path) -> None:
    issues = _issues(tmp_path, {"Stop": [{"hooks": [{"type": "prompt", "prompt": "x", "failClosed": True}]}]})
    assert any("failClosed" in i and "soft check" in i for i in issues)


def test_unknown_type_and_wrong_field_types(tmp_path: Path) -> None:
    issues = _issues(
        tmp_path, {"Stop": [{"hooks": [{"type": "shell", "command": "x"}, _cmd(priority="high"), {"command": "x"}]}]}
    )
    assert any("hooks[0].type" in i and "unknown handler type 'shell'" in i for i in issues)
    assert any("hooks[1].priority" in i for i in issues)
    assert any("hooks[2].type" in i and "required" in i for i in issues)


def test_unknown_fields_are_warnings(tmp_path: Path) -> None:
    path = _write(tmp_path, {"hooks": {"Stop": [{"hooks": [_cmd(failclosed=True)]}]}})
    config = load_config([path], use_cache=False)
    assert any("failclosed" in w and "failClosed" in w for w in config.warnings)


def test_matcher_on_an_event_without_matchers_is_a_warning(tmp_path: Path) -> None:
    path = _write(tmp_path, {"hooks": {"Stop": [{"matcher": "Bash", "hooks": [_cmd()]}]}})
    assert any("no matcher field" in w for w in load_config([path], use_cache=False).warnings)


def test_every_error_is_reported(tmp_path: Path) -> None:
    issues = _issues(tmp_path, {"Nope": [], "Stop": [{"hooks": [_cmd(timeout="9"), _cmd(command="/no/such")]}]})
    assert len(issues) == 3


def test_invalid_json_and_yaml_name_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"hooks": {\n  "Stop": [,]\n}}')
    with pytest.raises(ConfigError, match=r"bad\.json:2:\d+: invalid JSON"):
        load_config([str(bad)], use_cache=False)
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("hooks:\n  Stop: [\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml:\d+:\d+: invalid YAML"):
        load_config([str(bad_yaml)], use_cache=False)


def test_cache_is_used_and_invalidated(tmp_path: Path) -> None:
    path = _write(tmp_path, {"hooks": {"Stop": [{"hooks": [_cmd()]}]}})
    load_config([path])
    assert os.listdir(os.environ["HOOKGATE_CACHE_DIR"])
    data = {"hooks": {"Stop": [{"hooks": [_cmd(), _cmd(command="echo x")]}]}}
    Path(path).write_text(json.dumps(data) + "\n\n")
    assert len(load_config([path]).hooks["Stop"][0].handlers) == 2


def test_default_config_is_valid() -> None:
    from gateway.config import default_config_path

    config = load_config([default_config_path()], use_cache=False)
    assert config.warnings == []
    assert all(h.fail_closed for g in config.hooks["PreToolUse"] for h in g.handlers)


def test_dollar_claude_project_dir_without_braces(tmp_path: Path) -> None:
    (tmp_path / "hook.sh").write_text("#!/bin/sh\n")
    (tmp_path / "hook.sh").chmod(0o755)
    path = _write(tmp_path, {"hooks": {"Stop": [{"hooks": [_cmd(command='"$CLAUDE_PROJECT_DIR"/hook.sh')]}]}})
    assert load_config([path], use_cache=False).broken == []


@pytest.mark.parametrize(
    ("timeout", "named"),
    [
        ("10", "hooks.Stop[0].hooks[0].timeout"),
        (True, "hooks.Stop[0].hooks[0].timeout"),
        (-1, "hooks.Stop[0].hooks[0].timeout"),
        (0, "hooks.Stop[0].hooks[0].timeout"),
        (1e400, "Infinity is not a JSON value"),  # json.dumps writes Infinity, which no JSON parser reads
    ],
)
def test_timeout_types_are_strict(tmp_path: Path, timeout: object, named: str) -> None:
    issues = _issues(tmp_path, {"Stop": [{"hooks": [_cmd(timeout=timeout)]}]})
    assert any(named in i for i in issues), issues


def test_builtin_default_in_config_paths_and_in_hookgate_config(monkeypatch: pytest.MonkeyPatch) -> None:
    from gateway.config import default_config_path, find_config_paths

    assert find_config_paths(["builtin:default", "x.yaml"]) == [default_config_path(), os.path.abspath("x.yaml")]
    monkeypatch.setenv("HOOKGATE_CONFIG", os.pathsep.join(["/a.yaml", "builtin:default"]))
    assert find_config_paths() == ["/a.yaml", default_config_path()]


def test_default_ids_hold_no_secret_from_a_url_or_an_assignment(tmp_path: Path) -> None:
    path = tmp_path / "ids.json"
    hooks = [
        {"type": "http", "url": "https://bob:pw1@hooks.example/check?token=Zq9sEcret#frag"},
        {"type": "command", "command": "API_TOKEN=s3cr3t DEBUG=1 ./guard.sh --strict"},
    ]
    path.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": hooks}]}}))
    ids = [h.id for h in load_config([str(path)], use_cache=False).hooks["PreToolUse"][0].handlers]
    assert ids == ["http:hooks.example/check", "command:guard.sh"]


def test_an_unknown_builtin_config_is_a_config_error_not_a_relative_path(monkeypatch: pytest.MonkeyPatch) -> None:
    from gateway.config import find_config_paths

    with pytest.raises(
        ConfigError, match=r"builtin:nope: no such built-in config \(the built-in one is builtin:default\)"
    ):
        find_config_paths(["builtin:nope"])
    monkeypatch.setenv("HOOKGATE_CONFIG", os.pathsep.join(["builtin:default", "builtin:strict"]))
    with pytest.raises(ConfigError, match="builtin:strict: no such built-in config"):
        find_config_paths()


@pytest.mark.parametrize("command", [["validate"], ["approvals", "list"], ["audit", "tail"]])
def test_the_cli_names_an_unknown_builtin_config_in_one_line(command: list[str], tmp_path: Path) -> None:
    from tests.conftest import run_hookgate

    env = {"HOOKGATE_CONFIG": "builtin:nope"}
    result = run_hookgate(command, env=env, cwd=tmp_path)
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "builtin:nope: no such built-in config" in out
    assert "internal error" not in out and "Traceback" not in out
    assert str(tmp_path / "builtin") not in out  # not read as a relative path


def test_the_handler_types_listed_come_from_the_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from handlers import base
    from handlers.command import CommandHandler

    monkeypatch.setitem(base._registered, "myshell", CommandHandler)
    [issue] = _issues(tmp_path, {"PreToolUse": [{"hooks": [{"type": 7}]}]})
    assert "hooks[0].type: expected a string, one of " in issue and issue.endswith("; got int 7")
    listed = issue.split("one of ", 1)[1].removesuffix("; got int 7").split(", ")
    assert listed[: len(base.BUILTIN)] == list(base.BUILTIN) and "myshell" in listed  # other tests register more
    [unknown] = _issues(tmp_path, {"PreToolUse": [{"hooks": [{"type": "shel"}]}]})
    assert "approval, " in unknown and "myshell" in unknown and "or a type registered" in unknown
