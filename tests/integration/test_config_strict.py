"""Trust gaps in config loading and the command line: a policy never lapses silently.

Duplicate mapping keys are load-time errors (YAML, JSON, Claude Code settings.json; the config cache does not
hide them); ``validate`` reports every independent problem of a handler; a usage error of ``hookgate`` exits 2
(a block), also on the thin client's path; ``validate`` parses hook commands that run hookgate with the real
parser (at run time such a hook exits 2 itself: a block naming the typo).
Every test drives ``hookgate`` as a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_hookgate

RM_RF = {
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "rm -rf /"},
    "cwd": "/tmp",
    "session_id": "s1",
}
GUARD_GROUP = (
    "    - matcher: Bash\n      hooks:\n        - type: python\n"
    "          callable: configs.guards.shell_guard:check_event\n          failClosed: true\n"
)


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# ---- 1. duplicate keys


def test_a_second_event_key_in_yaml_is_an_error_naming_key_and_lines(tmp_path: Path) -> None:
    cfg = _write(
        tmp_path / "hookgate.yaml",
        "hooks:\n  PreToolUse:\n" + GUARD_GROUP + "  PreToolUse:\n    - matcher: Write\n      hooks: []\n",
    )
    proc = run_hookgate(["validate", str(cfg)])
    assert proc.returncode == 1
    assert f"{cfg}:8: duplicate key 'PreToolUse' (first at line 2)" in proc.stdout
    # the hook itself refuses the config: a block, never the first group silently dropped
    run = run_hookgate(["run", "--config", str(cfg)], RM_RF)
    assert run.returncode == 2 and "duplicate key 'PreToolUse'" in run.stderr


def test_a_guard_rule_written_twice_is_an_error_not_last_wins(tmp_path: Path) -> None:
    cfg = _write(
        tmp_path / "hookgate.yaml",
        "hooks:\n  PreToolUse:\n" + GUARD_GROUP + "guards:\n  rules:\n    rm.recursive: deny\n    rm.recursive: off\n",
    )
    proc = run_hookgate(["validate", str(cfg)])
    assert proc.returncode == 1 and f"{cfg}:11: duplicate key 'rm.recursive' (first at line 10)" in proc.stdout


def test_a_duplicated_matcher_is_an_error(tmp_path: Path) -> None:
    cfg = _write(
        tmp_path / "hookgate.yml",
        "PreToolUse:\n  - matcher: Bash\n    matcher: Write\n    hooks:\n      - {type: command, command: 'true'}\n",
    )
    proc = run_hookgate(["validate", str(cfg)])
    assert proc.returncode == 1 and f"{cfg}:3: duplicate key 'matcher' (first at line 2)" in proc.stdout


def test_yaml_merge_keys_may_still_override_what_they_merge(tmp_path: Path) -> None:
    cfg = _write(
        tmp_path / "hookgate.yaml",
        "base: &base {type: command, command: 'true', timeout: 5}\n"
        "hooks:\n  PreToolUse:\n    - hooks:\n        - <<: *base\n          timeout: 9\n",
    )
    proc = run_hookgate(["validate", str(cfg)])
    assert proc.returncode == 0, proc.stdout


def test_duplicate_keys_in_json_name_the_line(tmp_path: Path) -> None:
    cfg = _write(
        tmp_path / "hookgate.json",
        '{"hooks": {\n  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}],\n'
        '  "PreToolUse": []\n}}\n',
    )
    proc = run_hookgate(["validate", str(cfg)])
    assert proc.returncode == 1 and f"{cfg}:3: duplicate key 'PreToolUse' (first at line 2)" in proc.stdout
    inner = _write(
        tmp_path / "inner.json",
        '{"hooks": {"PreToolUse": [{"hooks": [{"type": "command",\n "command": "true",\n\t"command": "false"}]}]}}',
    )
    proc = run_hookgate(["validate", str(inner)])
    assert proc.returncode == 1 and f"{inner}:3: duplicate key 'command' (first at line 2)" in proc.stdout


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_or_infinity_in_a_json_config_is_an_error(tmp_path: Path, constant: str) -> None:
    """Python's json reads them; Claude Code's JSON.parse refuses the whole settings file, so the same
    file pasted in must not load here either (at run time: a broken policy, exit 2 on PreToolUse)."""
    cfg = _write(
        tmp_path / "settings.json",
        f'{{"hooks": {{"PreToolUse": [{{"hooks": [{{"type": "command", "command": "true", "timeout": {constant}}}]}}]}}}}',
    )
    proc = run_hookgate(["validate", str(cfg)])
    assert proc.returncode == 1 and f"{cfg}: {constant} is not a JSON value" in proc.stdout
    ran = run_hookgate(["run", "--config", str(cfg)], {"hook_event_name": "PreToolUse", "tool_name": "Bash"})
    assert ran.returncode == 2 and "is not a JSON value" in ran.stderr


def test_a_claude_code_settings_file_with_two_hooks_keys_is_an_error(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(
        json.dumps({"permissions": {"allow": []}})[:-1]
        + ', "hooks": {"PreToolUse": []},\n "hooks": {"Stop": []}, "model": "x"}'
    )
    proc = run_hookgate(["validate", str(settings)])
    assert proc.returncode == 1 and f"{settings}:2: duplicate key 'hooks' (first at line 1)" in proc.stdout


def test_the_config_cache_does_not_hide_a_duplicate(tmp_path: Path) -> None:
    cfg = _write(tmp_path / "hookgate.yaml", "hooks:\n  PreToolUse:\n" + GUARD_GROUP)
    assert run_hookgate(["run", "--config", str(cfg)], RM_RF).returncode == 2  # denied, and now cached
    cache = Path(os.environ["HOOKGATE_CACHE_DIR"])
    assert list(cache.glob("config-*.json"))
    cfg.write_text(cfg.read_text() + "  PreToolUse: []\n")  # the guard group would be dropped
    for _ in range(2):  # a failed validation is never cached as a pass
        run = run_hookgate(["run", "--config", str(cfg)], RM_RF)
        assert run.returncode == 2 and "duplicate key 'PreToolUse'" in run.stderr


# ---- 2. every problem of a handler


def test_validate_reports_the_missing_script_next_to_a_type_error(tmp_path: Path) -> None:
    cfg = _write(
        tmp_path / "hookgate.json",
        json.dumps(
            {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "./nope.sh", "timeout": "10"}]}]}}
        ),
    )
    proc = run_hookgate(["validate", str(cfg)])
    assert proc.returncode == 1
    assert "hooks[0].timeout: Input should be a valid number, got str" in proc.stdout
    assert "'./nope.sh' does not exist" in proc.stdout
    assert "2 error(s)" in proc.stdout


def test_validate_keeps_a_handlers_warnings_next_to_its_errors(tmp_path: Path) -> None:
    entry = {"type": "command", "command": "true", "timeout": 30000, "failClosed": "yes", "colour": "red"}
    cfg = _write(tmp_path / "hookgate.json", json.dumps({"hooks": {"PreToolUse": [{"hooks": [entry]}]}}))
    proc = run_hookgate(["validate", str(cfg)])
    assert proc.returncode == 1
    assert "failClosed: Input should be a valid boolean, got str" in proc.stdout
    assert "warning: " in proc.stdout and "timeout: in seconds: 30000 s is 500 minutes" in proc.stdout
    assert "colour: unknown field" in proc.stdout


def test_a_yaml_exponent_read_as_text_gets_a_hint_and_a_huge_timeout_a_short_warning(tmp_path: Path) -> None:
    cfg = _write(
        tmp_path / "hookgate.yaml",
        "hooks:\n  Stop:\n    - hooks:\n        - {type: command, command: 'true', timeout: 1e3}\n",
    )
    proc = run_hookgate(["validate", str(cfg)])
    assert proc.returncode == 1
    assert "timeout: Input should be a valid number, got str '1e3' (YAML reads an exponent" in proc.stdout
    assert "write 1.0e+3)" in proc.stdout
    for text, hint in (("1.5e3", "write 1.5e+3)"), ("1e400", None)):
        cfg.write_text(
            f"hooks:\n  Stop:\n    - hooks:\n        - {{type: command, command: 'true', timeout: {text}}}\n"
        )
        proc = run_hookgate(["validate", str(cfg)])
        assert proc.returncode == 1 and "got str" in proc.stdout
        assert (hint in proc.stdout) if hint else "write" not in proc.stdout, proc.stdout
    entry = {"type": "command", "command": "true", "timeout": 1e308}
    cfg = _write(tmp_path / "big.json", json.dumps({"hooks": {"Stop": [{"hooks": [entry]}]}}))
    proc = run_hookgate(["validate", str(cfg)])
    assert proc.returncode == 0 and "1e+308 s is 1.667e+306 minutes" in proc.stdout and len(proc.stdout) < 400


def test_audit_retention_must_be_finite(tmp_path: Path) -> None:
    """``maxMB: .inf`` once passed validate, then every ``hookgate audit`` command failed (OverflowError)."""
    cfg = _write(tmp_path / "c.yaml", "hooks: {}\naudit:\n  record: all\n  maxMB: .inf\n  keepDays: .nan\n")
    proc = run_hookgate(["validate", str(cfg)])
    assert proc.returncode == 1
    assert "audit.maxMB: Input should be a finite number" in proc.stdout
    assert "audit.keepDays: Input should be a finite number" in proc.stdout


def test_audit_retention_past_a_64_bit_integer_reads_as_no_limit(tmp_path: Path) -> None:
    """A finite ``maxMB`` passes validate; one over 2**63 bytes made every ``hookgate audit`` command an internal
    error (OverflowError converting it for the store) instead of meaning "no limit"."""
    state = tmp_path / "state"
    for max_mb in ("1.0e+308", "1.0e+13"):
        cfg = _write(
            tmp_path / "c.yaml",
            f"settings: {{stateDir: {state}}}\nhooks:\n  Stop:\n    - hooks: [{{type: command, command: 'true'}}]\n"
            f"audit:\n  maxMB: {max_mb}\n  keepDays: 1.0e+308\n",
        )
        assert run_hookgate(["validate", str(cfg)]).returncode == 0
        assert (
            run_hookgate(["run", "--config", str(cfg)], {"hook_event_name": "Stop", "session_id": "s"}).returncode == 0
        )
        proc = run_hookgate(["audit", "tail", "--config", str(cfg)])
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
        assert proc.stdout.count("Stop") >= 1
    assert run_hookgate(["audit", "verify", "--config", str(cfg)]).returncode == 0


def test_audit_record_off_unquoted_in_yaml_turns_recording_off(tmp_path: Path) -> None:
    """``record: off`` as the README writes it is YAML's false: it was an invalid config, so every PreToolUse
    call was blocked (exit 2) instead of recording nothing; ``on`` is an error that says why."""
    state = tmp_path / "state"
    body = (
        f"settings: {{stateDir: {state}}}\nhooks:\n  PreToolUse:\n    - hooks: [{{type: command, command: 'true'}}]\n"
    )
    cfg = _write(tmp_path / "c.yaml", body + "audit:\n  record: off\n")
    assert run_hookgate(["validate", str(cfg)]).returncode == 0
    proc = run_hookgate(["run", "--config", str(cfg)], RM_RF)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert not state.exists()  # nothing recorded, no store made
    cfg = _write(tmp_path / "c.yaml", body + "audit:\n  record: on\n")
    proc = run_hookgate(["validate", str(cfg)])
    assert proc.returncode == 1 and "audit.record: true is not a record mode: write handled, all or off" in proc.stdout


def test_validate_reports_errors_of_both_the_common_and_the_type_fields(tmp_path: Path) -> None:
    entry = {"type": "command", "command": "true", "timeout": "10", "shell": 5, "if": "Bash(rm"}
    cfg = _write(tmp_path / "hookgate.json", json.dumps({"hooks": {"PreToolUse": [{"hooks": [entry]}]}}))
    proc = run_hookgate(["validate", str(cfg)])
    errors = [line for line in proc.stdout.splitlines() if line.startswith("error:")]
    assert proc.returncode == 1 and len(errors) == 3, proc.stdout
    assert any(".timeout:" in e for e in errors) and any(".shell:" in e for e in errors)
    assert any(".if:" in e for e in errors)


# ---- 3. usage errors fail closed


@pytest.mark.parametrize(
    "argv",
    [
        ["runn"],
        ["run", "--on-server-down", "maybe"],
        ["run", "--dialect", "cursor"],
        ["run", "--bogus"],
        ["run", "--server", "http://127.0.0.1:1", "--on-server-down", "maybe"],  # the thin client's words
        ["validate", "--nope"],
        ["audit", "tial"],
        [],
    ],
    ids=" ".join,
)
def test_a_usage_error_exits_2_in_one_line(argv: list[str]) -> None:
    proc = run_hookgate(argv, RM_RF)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("hookgate") and proc.stdout == ""


def test_a_bad_server_down_policy_in_the_environment_is_said_and_falls_back(tmp_path: Path) -> None:
    cfg = _write(tmp_path / "hookgate.yaml", "hooks:\n  PreToolUse:\n" + GUARD_GROUP)
    env = {"HOOKGATE_SERVER": "http://127.0.0.1:9", "HOOKGATE_ON_SERVER_DOWN": "maybe"}
    proc = run_hookgate(["run", "--config", str(cfg)], RM_RF, env=env)
    assert proc.returncode == 2  # decided in-process: the guard denies
    assert "warning: HOOKGATE_ON_SERVER_DOWN='maybe' is not fallback, open or closed; using fallback" in proc.stderr


def test_the_installed_script_exits_2_on_a_typo_and_0_on_help() -> None:
    script = Path(sys.executable).parent / "hookgate"
    if not script.exists():
        pytest.skip("hookgate script not installed next to this interpreter")
    typo = subprocess.run([str(script), "run", "--on-server-down", "maybe"], input=b"{}", capture_output=True)
    assert typo.returncode == 2 and typo.stderr.count(b"\n") == 1
    for argv in (["--help"], ["run", "--help"], ["--version"]):
        assert subprocess.run([str(script), *argv], capture_output=True).returncode == 0


def test_validate_parses_hookgate_commands_in_a_settings_file(tmp_path: Path) -> None:
    hooks = [
        {"type": "command", "command": "hookgate runn"},
        {"type": "command", "command": "hookgate run --on-server-down maybe 2>/dev/null || true"},
        {"type": "command", "command": "HOOKGATE_X=1 hookgate run --config x.yaml --dialect claude"},
        {"type": "command", "command": "hookgate validate"},
        {"type": "command", "command": sys.executable, "args": ["-m", "gateway", "run", "--help"]},
        {"type": "command", "command": "hookgate  run --config builtin:defualt"},
        {"type": "command", "command": "HOOKGATE_CONFIG=builtin:default:builtin:nope hookgate run"},
        {"type": "command", "command": "cd /tmp && exec hookgate run --config /nonexistent/hookgate.yaml"},
        {"type": "command", "command": "bash -c 'env HOOKGATE_X=1 nice hookgate run --config BUILTIN:default'"},
        {"type": "command", "command": "HOOKGATE_CONFIG=builtin:default hookgate run --dialect claude"},
    ]
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": hooks}]}}))
    proc = run_hookgate(["validate", str(settings)])
    lines = proc.stdout.splitlines()

    def about(i: int, level: str) -> list[str]:  # errors: "where: command: ...", warnings: "where.command: ..."
        sep = ": " if level == "error" else "."
        return [line for line in lines if line.startswith(level) and f"hooks[{i}]{sep}command: '" in line]

    assert proc.returncode == 1
    assert "invalid choice: 'runn'" in about(0, "error")[0]
    assert "invalid choice: 'maybe'" in about(1, "error")[0] and "exits 2 on every call" in about(1, "error")[0]
    assert about(2, "error") == [] and about(2, "warning") == []
    assert "answers no hook event" in about(3, "warning")[0]
    assert "prints a help or version text" in about(4, "error")[0]
    assert "builtin:defualt: no such built-in config" in about(5, "error")[0]
    assert "HOOKGATE_CONFIG: builtin:nope: no such built-in config" in about(6, "error")[0]
    assert "--config /nonexistent/hookgate.yaml: no such file" in about(7, "error")[0]
    assert "BUILTIN:default: no such built-in config" in about(8, "error")[0]
    assert about(9, "error") == []


# ---- 4. a bad value is echoed; a bad size limit is said out loud


def test_a_bad_guard_decision_names_the_path_and_the_value(tmp_path: Path) -> None:
    cfg = _write(tmp_path / "hookgate.yaml", "hooks: {}\nguards:\n  rules:\n    exec.download: maybe\n")
    proc = run_hookgate(["validate", str(cfg)])
    assert proc.returncode == 1
    assert (
        f"error: {cfg}: guards.rules.exec.download: Input should be 'deny', 'ask' or 'off', got 'maybe'" in proc.stdout
    )


def test_a_bad_choice_in_a_handler_echoes_the_value(tmp_path: Path) -> None:
    entry = {"type": "command", "command": "true", "shell": "zsh"}
    cfg = _write(tmp_path / "hookgate.json", json.dumps({"hooks": {"PreToolUse": [{"hooks": [entry]}]}}))
    proc = run_hookgate(["validate", str(cfg)])
    assert proc.returncode == 1 and ".shell: Input should be 'bash', 'sh' or 'powershell', got 'zsh'" in proc.stdout


def test_an_unreadable_event_size_limit_is_a_warning_and_the_default(tmp_path: Path) -> None:
    env = {"HOOKGATE_MAX_EVENT_BYTES": "64k"}
    cfg = _write(tmp_path / "hookgate.yaml", "hooks:\n  PreToolUse:\n" + GUARD_GROUP)
    run = run_hookgate(["run", "--config", str(cfg)], RM_RF, env=env)
    assert run.returncode == 2  # the policy still runs
    assert "hookgate: warning: HOOKGATE_MAX_EVENT_BYTES='64k' is not a positive integer (bytes)" in run.stderr
    big = {**RM_RF, "tool_input": {"command": "echo " + "x" * 100_000}}  # over 64k, under the default
    passed = run_hookgate(["run", "--config", str(cfg)], big, env=env)
    assert passed.returncode == 0 and passed.stderr.count("\n") == 1, passed.stderr
    proc = run_hookgate(["validate", str(cfg)], env=env)
    assert proc.returncode == 0 and "warning: HOOKGATE_MAX_EVENT_BYTES='64k'" in proc.stdout
    serve = run_hookgate(["serve", "--port", "0", "--config", str(cfg)], env=env)
    assert serve.returncode == 1 and serve.stderr.count("\n") == 1 and "--max-body" in serve.stderr
    quiet = run_hookgate(["run", "--config", str(cfg)], RM_RF, env={"HOOKGATE_MAX_EVENT_BYTES": "4096"})
    assert quiet.returncode == 2 and "warning" not in quiet.stderr


def test_a_policy_hook_with_a_hookgate_typo_fails_closed_naming_it(tmp_path: Path) -> None:
    hook = {"type": "command", "command": sys.executable, "args": ["-m", "gateway", "runn"]}
    cfg = _write(tmp_path / "hookgate.json", json.dumps({"hooks": {"PreToolUse": [{"hooks": [hook]}]}}))
    run = run_hookgate(["run", "--config", str(cfg)], {**RM_RF, "tool_input": {"command": "ls"}})
    assert run.returncode == 2 and "invalid choice: 'runn'" in run.stderr


def test_an_error_of_the_whole_handler_is_reported_at_the_handler(tmp_path: Path) -> None:
    entry = {"type": "python"}  # neither callable nor hook: the model's own check, on no one field
    cfg = _write(tmp_path / "hookgate.json", json.dumps({"hooks": {"PreToolUse": [{"hooks": [entry]}]}}))
    proc = run_hookgate(["validate", str(cfg)])
    assert proc.returncode == 1 and "hooks.PreToolUse[0].hooks[0]: a python handler names either" in proc.stdout


# ---- whitespace-only commands and hosts no resolver finds: refused by validate, as at run time


@pytest.mark.parametrize("command", ["   ", "\t", " \n "])
def test_a_whitespace_only_command_is_refused_at_load_time(tmp_path: Path, command: str) -> None:
    entry = {"type": "command", "command": command, "failClosed": True}
    config = _write(tmp_path / "hookgate.json", json.dumps({"hooks": {"PreToolUse": [{"hooks": [entry]}]}}))
    check = run_hookgate(["validate", str(config)])
    assert check.returncode == 1, check.stdout
    assert f"hooks.PreToolUse[0].hooks[0].command: only whitespace ({command!r})" in check.stdout
    proc = run_hookgate(["run", "--config", str(config)], RM_RF)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "only whitespace" in proc.stderr


def test_a_whitespace_only_command_in_gemini_and_kiro_configs_is_refused(tmp_path: Path) -> None:
    gemini = {"hooks": {"BeforeTool": [{"hooks": [{"type": "command", "command": "  "}]}]}}
    kiro = {"hooks": {"preToolUse": [{"command": " "}]}}
    for name, doc in (("gemini.json", gemini), ("kiro.json", kiro)):
        check = run_hookgate(["validate", str(_write(tmp_path / name, json.dumps(doc)))])
        assert check.returncode == 1 and "command: only whitespace" in check.stdout, check.stdout


@pytest.mark.parametrize("url", ["http://exa mple.com/x", "http://exa\u00a0mple.com/x", "https://a<b.example/x"])
def test_validate_refuses_a_url_whose_host_no_name_can_hold(tmp_path: Path, url: str) -> None:
    entry = {"type": "http", "url": url, "failClosed": True}
    config = _write(tmp_path / "hookgate.json", json.dumps({"hooks": {"PreToolUse": [{"hooks": [entry]}]}}))
    check = run_hookgate(["validate", str(config)])
    assert check.returncode == 1 and "in its host" in check.stdout, check.stdout
    proc = run_hookgate(["run", "--config", str(config)], RM_RF)
    assert proc.returncode == 2 and "in its host" in proc.stdout  # the same rule at delivery: failClosed denies


def test_a_space_in_a_url_path_is_still_fine(tmp_path: Path) -> None:
    entry = {"type": "http", "url": "http://127.0.0.1:9/a b"}
    config = _write(tmp_path / "hookgate.json", json.dumps({"hooks": {"PreToolUse": [{"hooks": [entry]}]}}))
    check = run_hookgate(["validate", str(config)])
    assert check.returncode == 0, check.stdout


# ---- a handler's type: missing, or given as something else; every valid type listed

ALL_TYPES = "one of command, http, mcp_tool, prompt, agent, python, builtin, approval"


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ({}, f"type: required, {ALL_TYPES}"),
        ({"type": 5}, f"type: expected a string, {ALL_TYPES}; got int 5"),
        ({"type": ["command"]}, f"type: expected a string, {ALL_TYPES}; got list ['command']"),
        ({"type": None}, f"type: expected a string, {ALL_TYPES}; got nothing (null)"),
    ],
)
def test_a_missing_or_wrong_typed_handler_type_says_which(tmp_path: Path, entry: dict[str, object], said: str) -> None:
    config = _write(tmp_path / "hookgate.json", json.dumps({"hooks": {"PreToolUse": [{"hooks": [entry]}]}}))
    check = run_hookgate(["validate", str(config)])
    assert check.returncode == 1, check.stdout
    assert f"hooks.PreToolUse[0].hooks[0].{said}\n" in check.stdout
    if "type" in entry:
        assert "required" not in check.stdout
