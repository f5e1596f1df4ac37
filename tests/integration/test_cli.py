"""`hookgate` as a subprocess: bad input, config errors at run time, explain, validate, demo."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import CASES, load_case, run_hookgate

GUARDS = str(CASES / "configs" / "guards.json")


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "must be a JSON object, got list"),
        (b"\xff\xfe{}", "not valid UTF-8"),
        (b"", "event is empty"),
        (b'{"hook_event_name": "PreToolUze"}', "unknown event 'PreToolUze'"),
        (b'{"hook_event_name": "PreToolUse", "tool_input": "rm"}', "'tool_input' must be an object"),
        (b'{"hook_event_name": "PreToolUse", "cwd": "/tmp\\u0000x"}', "'cwd' must be a path, without NUL"),
        (b'{"hook_event_name": "Stop", "transcript_path": "/t\\u0000"}', "'transcript_path' must be a path"),
        (b'{"tool_name": "Bash"}', "no hook_event_name"),
        (b'{"hook_event_name": ["x"]}', "no hook_event_name"),
        (b'{"hook_event_name": "Stop", "n": ' + b"9" * 5000 + b"}", "cannot be decoded"),
    ],
)
def test_bad_input_is_one_line_exit_1(stdin: bytes, message: str) -> None:
    proc = run_hookgate(["run", "--config", GUARDS], stdin)
    assert proc.returncode == 1 and proc.stdout == ""
    assert message in proc.stderr and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        (b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deeply"),  # no name: a PreToolUse
        (
            b'{"hook_event_name": "PreToolUse", "tool_name": "mcp__box__exec", "tool_input": {"command": "rm -rf ~",'
            b' "pad": ' + b"[" * 5000 + b"]" * 5000 + b"}}",
            "nested too deeply",
        ),
        (b'{"hook_event_name": "PreToolUse", "tool_name": "Bash", "n": ' + b"9" * 5000 + b"}", "cannot be decoded"),
        *(  # just under Python's recursion limit: decodes, but re-encoding it for the hook failed (fail open)
            (
                b'{"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/tmp", "tool_name": "mcp__db__query",'
                b' "tool_input": {"sql": "DROP TABLE users", "params": ' + b"[" * depth + b"]" * depth + b"}}",
                "nested too deeply",
            )
            for depth in (199, 500, 980)
        ),
    ],
)
def test_an_event_shaped_past_decoding_is_denied_not_let_through(stdin: bytes, message: str) -> None:
    """Valid JSON that hookgate cannot decode (the agent writes tool inputs, so it can pad them) is answered
    like an oversized event: a deny, never exit 1, which every host reads as "go ahead"."""
    proc = run_hookgate(["run", "--config", GUARDS], stdin)
    assert proc.returncode == 2, proc.stderr
    output = json.loads(proc.stdout)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny" and message in output["permissionDecisionReason"]
    assert "Traceback" not in proc.stderr


def test_invalid_config_at_run_time_blocks(tmp_path: Path) -> None:
    bad = tmp_path / "hookgate.json"
    bad.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": 3, "hooks": []}]}}))
    event = load_case("claude", "pretooluse-bash-safe.json")
    proc = run_hookgate(["run", "--config", str(bad)], event)
    assert proc.returncode == 2 and "hooks.PreToolUse[0].matcher" in proc.stderr
    assert proc.stderr.count("\n") == 1
    proc = run_hookgate(["run", "--config", str(bad)], event, env={"HOOKGATE_ON_CONFIG_ERROR": "open"})
    assert proc.returncode == 1


def test_config_lookup_env_then_local_file_then_default(tmp_path: Path) -> None:
    event = {"hook_event_name": "UserPromptSubmit", "prompt": "hi"}
    local = tmp_path / "hookgate.yaml"
    local.write_text("hooks:\n  UserPromptSubmit:\n    - hooks: [{type: command, command: 'echo from-local'}]\n")
    assert "from-local" in run_hookgate(["run"], event, cwd=tmp_path).stdout
    other = tmp_path / "other.json"
    other.write_text(
        json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo from-env"}]}]}})
    )
    assert "from-env" in run_hookgate(["run"], event, cwd=tmp_path, env={"HOOKGATE_CONFIG": str(other)}).stdout
    # no local file: the built-in default denies rm -rf
    proc = run_hookgate(
        ["run"],
        {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}},
        cwd=tmp_path / "..",
    )
    assert proc.returncode == 2 and "rm -rf" in proc.stderr


def test_validate_lists_every_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            {
                "hooks": {
                    "Stop": [
                        {
                            "hooks": [
                                {"type": "command", "command": "true", "timeout": "10"},
                                {"type": "command", "command": "/missing/hook.sh"},
                            ]
                        }
                    ],
                    "Nope": [],
                }
            }
        )
    )
    proc = run_hookgate(["validate", str(bad)])
    assert proc.returncode == 1
    errors = [line for line in proc.stdout.splitlines() if line.startswith("error:")]
    assert len(errors) == 3 and "3 error(s)" in proc.stdout
    proc = run_hookgate(["validate", GUARDS])
    assert proc.returncode == 0 and proc.stdout.startswith("ok: 5 handler(s)")


def test_explain_shows_groups_handlers_results_and_decision() -> None:
    path = CASES / "claude" / "pretooluse-bash-compound.json"
    proc = run_hookgate(["explain", "--config", GUARDS, str(path)])
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "matcher 'Bash' matches tool_name='Bash'" in out
    assert "if 'Bash(rm *)' matches" in out
    assert "matcher 'Write|Edit' does not match" in out
    assert '"permission": "deny"' in out and "rendered for claude: exit 2" in out


def test_demo_prints_a_table() -> None:
    proc = run_hookgate(["demo"])
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line.split()[-1] for line in proc.stdout.splitlines() if line[:2].isdigit()}
    assert rows["02-bash-rm-rf"] == "deny" and rows["01-bash-npm-test"] == "none"
    assert rows["04-bash-force-push"] == "deny" and rows["07-write-env"] == "deny"
    assert rows["08-write-env-example"] == "none"
    assert "ask the user to run it." in proc.stdout  # reasons are printed in full


def test_no_traceback_on_unexpected_subcommand_input() -> None:
    proc = run_hookgate(["explain", "/no/such/event.json"])
    assert proc.returncode == 1 and "cannot read event file" in proc.stderr and "Traceback" not in proc.stderr


def test_a_byte_order_mark_is_tolerated() -> None:
    proc = run_hookgate(
        ["run", "--config", GUARDS],
        b"\xef\xbb\xbf" + json.dumps(load_case("claude", "pretooluse-bash-rm-rf.json")).encode(),
    )
    assert proc.returncode == 2


def test_an_internal_error_denies_when_the_event_has_a_fail_closed_handler(tmp_path: Path) -> None:
    from gateway.config import load_config
    from gateway.dialects import parse_event
    from gateway.dispatcher import internal_failure
    from gateway.events import HookEvent

    config_path = tmp_path / "hookgate.json"
    config_path.write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [{"hooks": [{"type": "command", "command": "true", "failClosed": True}]}],
                    "Stop": [{"hooks": [{"type": "command", "command": "true"}]}],
                }
            }
        )
    )
    config = load_config([str(config_path)], use_cache=False)
    pre = parse_event({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "x"}})
    stop = parse_event({"hook_event_name": "Stop"})
    assert isinstance(pre, HookEvent) and isinstance(stop, HookEvent)
    decision = internal_failure(config, pre, "boom")
    assert decision is not None and decision.permission == "deny" and "boom" in (decision.permission_reason or "")
    assert internal_failure(config, stop, "boom") is None


def test_invalid_config_on_stop_does_not_make_the_agent_loop(tmp_path: Path) -> None:
    bad = tmp_path / "hookgate.json"
    bad.write_text(json.dumps({"hooks": {"Nope": []}}))
    proc = run_hookgate(["run", "--config", str(bad)], {"hook_event_name": "Stop", "stop_hook_active": False})
    assert proc.returncode == 1 and "invalid config" in proc.stderr


def test_usage_errors_exit_2_in_one_line() -> None:
    proc = run_hookgate(["run", "--dialect", "bogus"], load_case("claude", "pretooluse-bash-rm-rf.json"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "invalid choice" in proc.stderr


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            ["audit", "tail", "-n", "99999999999999999999"],
            "'99999999999999999999': too large (at most 9223372036854775807)",
        ),
        (["audit", "query", "--limit", "0"], "'0': expected an integer greater than 0"),
        (["approvals", "list", "--limit", "-1"], "'-1': expected an integer greater than 0"),
        (["approvals", "list", "--limit", "99999999999999999999"], "too large"),
    ],
)
def test_counts_out_of_range_are_usage_errors_before_any_store_is_read(args: list[str], error: str) -> None:
    """Once a store error ("datatype mismatch") or an internal error (an OverflowError from sqlite3)."""
    proc = run_hookgate(args)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and error in proc.stderr, proc.stderr


def test_an_explicitly_empty_config_is_valid_but_warned_about(tmp_path: Path) -> None:
    empty = tmp_path / "hookgate.json"
    empty.write_text('{"hooks": {}}')
    proc = run_hookgate(["validate", str(empty)])
    assert proc.returncode == 0 and "no hooks configured" in proc.stdout
    empty.write_text("{}")  # says nothing at all: taken for a broken policy (see test_trust_config.py)
    proc = run_hookgate(["validate", str(empty)])
    assert proc.returncode == 1 and "the config is empty" in proc.stdout


def test_a_damaged_cache_entry_is_revalidated(tmp_path: Path) -> None:

    event = load_case("claude", "pretooluse-bash-rm-rf.json")
    assert run_hookgate(["run", "--config", GUARDS], event).returncode == 2
    cache = Path(os.environ["HOOKGATE_CACHE_DIR"])
    for entry in cache.glob("config-*.json"):
        entry.write_text(json.dumps({"format": json.loads(entry.read_text())["format"]}))
    proc = run_hookgate(["run", "--config", GUARDS], event)
    assert proc.returncode == 2 and "Destructive command blocked by hook" in proc.stderr


def test_a_compile_cached_by_another_hookgate_install_is_not_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache key holds the install (the loading module's path and mtime): an upgrade or reinstall,
    which writes hookgate's files anew, compiles the config again instead of trusting the old compile."""
    from gateway.config import loading

    config = tmp_path / "hookgate.json"
    config.write_text(json.dumps({"hooks": {}}))
    installed = tmp_path / "loading.py"
    installed.write_text("")
    os.utime(installed, ns=(1_000_000_000, 1_000_000_000))
    monkeypatch.setattr(loading, "__file__", str(installed))
    before = loading._cache_key([str(config)])
    assert before is not None and loading._cache_key([str(config)]) == before
    os.utime(installed, ns=(2_000_000_000, 2_000_000_000))  # the files a reinstall writes
    after = loading._cache_key([str(config)])
    assert after is not None and after != before and loading._cache_file(after) != loading._cache_file(before)


def test_a_config_that_runs_hookgate_on_itself_stops_instead_of_forking_for_ever(tmp_path: Path) -> None:
    import sys

    config = tmp_path / "hookgate.json"
    config.write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [
                        {
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": sys.executable,
                                    "args": ["-m", "gateway", "run", "--config", str(config)],
                                }
                            ]
                        }
                    ]
                }
            }
        )
    )
    proc = run_hookgate(["run", "--config", str(config)], load_case("claude", "pretooluse-bash-safe.json"), timeout=60)
    assert proc.returncode == 2 and "nested" in proc.stderr


def test_sigterm_kills_the_hooks_process_group(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    pidfile = tmp_path / "child.pid"
    script = tmp_path / "h.sh"
    script.write_text(f"#!/bin/sh\nsleep 97 & echo $! > {pidfile}; wait\n")
    script.chmod(0o755)
    config = tmp_path / "hookgate.json"
    config.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": str(script)}]}]}}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "gateway", "run", "--config", str(config)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None
    proc.stdin.write(b'{"hook_event_name": "Stop"}')
    proc.stdin.close()
    for _ in range(100):
        if pidfile.exists() and pidfile.read_text().strip():
            break
        time.sleep(0.05)
    child = int(pidfile.read_text())
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    for _ in range(200):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    raise AssertionError(f"the hook's child {child} outlived hookgate")


def test_an_event_the_host_ended_by_sigterm_is_on_the_audit_trail(tmp_path: Path) -> None:
    """The host timing a hook out (SIGTERM) goes on without its answer: exactly the event a trail must not
    miss. Each handler that was to run is recorded as timed out, with no decision."""
    import signal
    import subprocess
    import sys
    import time

    started = tmp_path / "started"
    config = tmp_path / "hookgate.json"
    hook = {"type": "command", "id": "slow-check", "command": f"touch {started}; sleep 97"}
    config.write_text(
        json.dumps(
            {
                "settings": {"stateDir": str(tmp_path / "state")},
                "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]},
            }
        )
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "gateway", "run", "--config", str(config)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    event = {"hook_event_name": "PreToolUse", "session_id": "s1", "tool_name": "Bash", "cwd": str(tmp_path)}
    assert proc.stdin is not None
    proc.stdin.write(json.dumps({**event, "tool_input": {"command": "make"}, "tool_use_id": "t-ended"}).encode())
    proc.stdin.close()
    for _ in range(200):
        if started.exists():
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    assert proc.stdout is not None and proc.stdout.read() == b""  # no answer went out
    query = run_hookgate(["audit", "query", "--json", "--config", str(config)])
    assert query.returncode == 0, query.stderr
    (record,) = json.loads(query.stdout)
    assert record["tool_use_id"] == "t-ended" and record["decision"] == "none"
    (handler,) = record["handlers"]
    assert handler["id"] == "slow-check" and handler["status"] == "timeout"
    assert "ended by SIGTERM" in handler["reason"] and "went on without" in handler["reason"]
    verify = run_hookgate(["audit", "verify", "--config", str(config)])
    assert verify.returncode == 0, verify.stdout + verify.stderr


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("nul.yaml", "hooks: {}\n\x00", "unacceptable character #x0000"),  # a half-written file
        ("esc.yaml", "# a \x1b comment\nhooks: {}\n", "unacceptable character #x001b"),
        ("deep.json", '{"hooks": ' + "[" * 5000 + "]" * 5000 + "}", "nested too deeply"),
        ("deep.yaml", "hooks: " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
        ("big.yaml", "hooks: {}\nsettings: {x: " + "9" * 5000 + "}\n", "cannot be read"),
        ("big.json", '{"hooks": {}, "n": ' + "9" * 5000 + "}", "cannot be read"),
    ],
)
def test_an_unreadable_config_blocks_and_validate_names_it(tmp_path: Path, name: str, text: str, message: str) -> None:
    """A config PyYAML's reader or the JSON decoder cannot take (control characters, nesting past the
    recursion limit, a huge number) is an invalid config like any other: exit 2 on a PreToolUse, one line
    naming the file, never "internal error" with exit 1 (which lets the call through)."""
    bad = tmp_path / name
    bad.write_text(text)
    proc = run_hookgate(["run", "--config", str(bad)], load_case("claude", "pretooluse-bash-safe.json"))
    assert proc.returncode == 2 and f"invalid config: {bad}" in proc.stderr and message in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1
    checked = run_hookgate(["validate", str(bad)])
    assert checked.returncode != 0 and f"{bad}" in checked.stdout + checked.stderr
    assert "internal error" not in checked.stdout + checked.stderr and "Traceback" not in checked.stderr


def test_an_unexpected_failure_loading_the_config_fails_closed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Anything but a ConfigError while loading the config (seen: a project's own `handlers/` package ahead
    of hookgate's on PYTHONPATH, `ModuleNotFoundError: handlers.base`) blocks a PreToolUse like an invalid
    config (exit 2, one line), never an internal error with exit 1, which lets the call through."""
    from gateway.cli import RunArgs
    from gateway.cli import run as run_module

    def broken(configs: object) -> object:
        raise ModuleNotFoundError("No module named 'handlers.base'")

    monkeypatch.setattr(run_module, "_load", broken)
    event = json.dumps(load_case("claude", "pretooluse-bash-safe.json")).encode()
    args = RunArgs(None, "claude", None, None)
    args.preread = event
    assert run_module.cmd_run(args) == 2
    err = capsys.readouterr().err
    assert "cannot load the config: ModuleNotFoundError" in err and err.count("\n") == 1
    stop = json.dumps({"hook_event_name": "Stop", "session_id": "s"}).encode()
    args.preread = stop
    assert run_module.cmd_run(args) == 1  # where a block holds nothing back: non-blocking


@pytest.mark.parametrize("action", ["query", "stats"])
@pytest.mark.parametrize("form", [["--since", "-1h"], ["--since=-1h"], ["--since", "-30m"]])
def test_a_negative_since_is_one_line_saying_so(action: str, form: list[str]) -> None:
    """argparse once read `--since -1h` as an option and said "expected one argument"; both forms now
    say what is wrong, before any store is read."""
    proc = run_hookgate(["audit", action, *form])
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert f"hookgate audit {action}: argument --since: a negative duration is not accepted" in proc.stderr


@pytest.mark.parametrize("name", ["", "  ", "[]", ".", "a b"])
def test_serve_refuses_an_allow_host_that_can_match_no_host(name: str) -> None:
    proc = run_hookgate(["serve", "--port", "0", "--allow-host", name], timeout=20)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(f"hookgate serve: argument --allow-host: {name!r}: expected a host name")
