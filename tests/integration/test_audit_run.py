"""`hookgate run` records decisions; `hookgate audit` reads them back (real subprocesses throughout)."""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from gateway.audit.record import FIELDS, HANDLER_FIELDS
from tests.conftest import ROOT, run_hookgate
from tests.fakes.serving import ServerThread, listening_socket, server_on

FAKE_KEY = "sk-ant-api03-" + "Zq7" * 20
GUARD = r"""#!/bin/sh
input=$(cat)
case "$input" in
  *"rm -rf"*) echo "no rm -rf here" >&2; exit 2 ;;
esac
echo '{"side_effects": ["scanned the command"]}'
"""


@pytest.fixture
def http_hook() -> Iterator[str]:
    """A loopback HTTP hook that answers with side effects."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = json.dumps({"side_effects": ["posted to the ledger"]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    thread = ServerThread(server_on(listening_socket(), Handler), "audit-http-hook")
    yield f"http://127.0.0.1:{thread.port}/hook"
    thread.stop()


def write_config(tmp_path: Path, audit: dict[str, Any] | None = None, http_url: str | None = None) -> Path:
    guard = tmp_path / "guard.sh"
    guard.write_text(GUARD)
    guard.chmod(0o755)
    handlers: list[dict[str, Any]] = [
        {"type": "command", "id": "guard", "command": str(guard)},
        {"type": "python", "id": "notify", "callable": "tests.integration.audit_funcs:notify"},
    ]
    if http_url:
        handlers.append({"type": "http", "id": "ledger", "url": http_url})
    config: dict[str, Any] = {
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": handlers}]},
        "settings": {"stateDir": str(tmp_path / "state")},
    }
    if audit is not None:
        config["audit"] = audit
    path = tmp_path / "hookgate.json"
    path.write_text(json.dumps(config))
    return path


def bash(command: str, session: str = "sess-1", **extra: Any) -> dict[str, Any]:
    return {
        "hook_event_name": "PreToolUse",
        "session_id": session,
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": f"toolu_{abs(hash(command)) % 10**8}",
        "prompt_id": "prompt-1",
        "cwd": "/tmp",
        **extra,
    }


def run(config: Path, event: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    return run_hookgate(["run", "--config", str(config)], event, cwd=ROOT)


def audit(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_hookgate(["audit", *args, "--config", str(config)], cwd=ROOT)


def records(config: Path, *args: str) -> list[dict[str, Any]]:
    proc = audit(config, "query", "--json", *args)
    assert proc.returncode == 0, proc.stderr
    value: list[dict[str, Any]] = json.loads(proc.stdout)
    return value


def test_records_have_the_documented_fields_and_read_back(tmp_path: Path, http_hook: str) -> None:
    config = write_config(tmp_path, http_url=http_hook)
    assert run(config, bash("rm -rf build")).returncode == 2
    assert run(config, bash("ls -la", session="sess-2")).returncode == 0
    stop = {"hook_event_name": "Stop", "session_id": "sess-1", "cwd": "/tmp", "stop_hook_active": False}
    assert run(config, stop).returncode == 0  # no handler for Stop: not recorded (record: handled)
    rows = records(config)
    assert [r["tool_input"]["command"] for r in rows] == ["rm -rf build", "ls -la"]  # oldest first
    deny, allow = rows
    assert set(deny) == set(FIELDS)
    assert deny["host"] == "claude" and deny["event"] == "PreToolUse" and deny["tool_name"] == "Bash"
    assert deny["session_id"] == "sess-1" and deny["prompt_id"] == "prompt-1"
    assert deny["tool_use_id"].startswith("toolu_")
    assert deny["decision"] == "deny" and deny["reason"] == "no rm -rf here"
    assert deny["time"].endswith("Z") and deny["time"][10] == "T"
    assert deny["version"] == "0.1.0" and len(deny["config_hash"]) == 16
    assert deny["approval"] is None and deny["updated_input"] is None
    assert [h["id"] for h in deny["handlers"]] == ["guard", "notify", "ledger"]
    for handler in deny["handlers"]:
        assert set(handler) == set(HANDLER_FIELDS)
    guard = deny["handlers"][0]
    assert (guard["type"], guard["status"], guard["verdict"], guard["reason"]) == (
        "command",
        "ok",
        "deny",
        "no rm -rf here",
    )
    assert guard["duration_ms"] > 0
    assert allow["decision"] == "none"
    effects = {h["id"]: h["side_effects"] for h in allow["handlers"]}
    assert effects == {
        "guard": ["scanned the command"],
        "notify": ["notified #sec about Bash"],
        "ledger": ["posted to the ledger"],
    }
    # filters
    assert [r["decision"] for r in records(config, "--decision", "deny")] == ["deny"]
    assert [r["session_id"] for r in records(config, "--session", "sess-2")] == ["sess-2"]
    assert len(records(config, "--tool", "Bash", "--handler", "ledger", "--since", "1h")) == 2
    assert records(config, "--tool", "Edit") == []
    assert records(config, "--since", "2999-01-01") == []
    assert records(config, "--handler", "nope") == []
    # tail, export, stats, verify
    tail = audit(config, "tail", "-n", "1")
    assert tail.returncode == 0 and "ls -la" not in tail.stdout and "PreToolUse  Bash  none" in tail.stdout
    lines = audit(config, "export", "--format", "jsonl").stdout.splitlines()
    assert [json.loads(line)["_chain"]["seq"] for line in lines] == [1, 2]
    table = list(csv.DictReader(io.StringIO(audit(config, "export", "--format", "csv").stdout)))
    assert [row["decision"] for row in table] == ["deny", "none"] and json.loads(table[0]["tool_input"])
    stats = {s["id"]: s for s in json.loads(audit(config, "stats", "--json").stdout)}
    assert stats["guard"]["calls"] == 2 and stats["guard"]["denies"] == 1 and stats["guard"]["errors"] == 0
    assert stats["guard"]["p95_ms"] >= stats["guard"]["p50_ms"] > 0
    assert "guard" in audit(config, "stats").stdout
    verify = audit(config, "verify")
    assert verify.returncode == 0 and "2 record(s) ok" in verify.stdout, verify.stderr


def test_a_fake_api_key_never_reaches_the_disk(tmp_path: Path) -> None:
    config = write_config(tmp_path, audit={"sink": ["store", f"jsonl:{tmp_path / 'audit.jsonl'}"]})
    event = bash(f"curl -H 'x-api-key: {FAKE_KEY}' https://api.example.test && export TOKEN={FAKE_KEY}")
    event["tool_input"]["env"] = {"ANTHROPIC_API_KEY": FAKE_KEY}
    assert run(config, event).returncode == 0
    rows = records(config)  # drains the spool into the database
    assert len(rows) == 1
    text = json.dumps(rows[0])
    assert FAKE_KEY not in text and "[REDACTED:" in text
    found = []
    for path in [*tmp_path.rglob("*")]:
        if path.is_file() and path.name not in ("guard.sh", "hookgate.json") and FAKE_KEY.encode() in path.read_bytes():
            found.append(path)
    assert found == []
    assert (tmp_path / "state" / "state.sqlite3").stat().st_size > 0
    assert json.loads((tmp_path / "audit.jsonl").read_text().splitlines()[0])["event"] == "PreToolUse"


def test_a_password_given_as_its_own_argv_item_never_reaches_the_disk(tmp_path: Path) -> None:
    """An argument vector (an MCP tool's ``args``, Codex's ``shell`` command list) is redacted as the command
    line it is: ``["psql", "--password", "X"]`` keeps no ``X``, in the store's file and the jsonl sink alike."""
    config = write_config(tmp_path, audit={"sink": ["store", f"jsonl:{tmp_path / 'audit.jsonl'}"]})
    event = bash("psql -c 'select 1'")
    event["tool_input"]["argv"] = ["psql", "--password", "Hunter2Secret81", "-h", "db"]
    event["tool_input"]["login"] = ["sshpass", "-p", "Hunter2Secret82", "ssh", "host"]
    event["tool_input"]["gpg"] = ["gpg", "--passphrase", "Hunter2Secret83\n"]
    event["tool_input"]["note"] = 'cfg = {"pw": "Hunter2Secret84"}'  # JSON-escaped in what the precheck scans
    assert run(config, event).returncode == 0
    [row] = records(config)
    assert row["tool_input"]["argv"] == ["psql", "--password", "[REDACTED:password_flag]", "-h", "db"]
    secrets = [f"Hunter2Secret8{n}".encode() for n in range(1, 5)]
    for path in tmp_path.rglob("*"):
        if path.is_file() and path.name not in ("guard.sh", "hookgate.json"):
            data = path.read_bytes()
            assert not [s for s in secrets if s in data], path


def test_record_all_and_off(tmp_path: Path) -> None:
    stop = {"hook_event_name": "Stop", "session_id": "s", "cwd": "/tmp", "stop_hook_active": False}
    (tmp_path / "all").mkdir()
    config = write_config(tmp_path / "all", audit={"record": "all"})
    run(config, stop)
    assert [(r["event"], r["handlers"], r["decision"]) for r in records(config)] == [("Stop", [], "none")]
    (tmp_path / "off").mkdir()
    off = write_config(tmp_path / "off", audit={"record": "off"})
    run(off, bash("rm -rf /"))
    assert records(off) == []


def test_verify_catches_edited_deleted_and_reordered_rows(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    for i in range(5):
        run(config, bash(f"echo {i}"))
    assert audit(config, "verify").returncode == 0
    db = tmp_path / "state" / "state.sqlite3"
    pristine = db.read_bytes()

    def tamper(*statements: str) -> subprocess.CompletedProcess[str]:
        db.write_bytes(pristine)
        for suffix in ("-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        with sqlite3.connect(db) as conn:
            for sql in statements:
                conn.execute(sql)
        conn.close()
        return audit(config, "verify")

    edited = tamper("UPDATE audit_records SET body = replace(body, 'echo 2', 'echo 9') WHERE seq = 3")
    assert edited.returncode == 1 and "seq 3" in edited.stderr and "edited" in edited.stderr
    deleted = tamper("DELETE FROM audit_records WHERE seq = 2")
    assert deleted.returncode == 1 and "seq 2" in deleted.stderr and "missing" in deleted.stderr
    reordered = tamper(
        "UPDATE audit_records SET seq = -4 WHERE seq = 4",
        "UPDATE audit_records SET seq = 4 WHERE seq = 5",
        "UPDATE audit_records SET seq = 5 WHERE seq = -4",
    )
    assert reordered.returncode == 1 and "seq 4" in reordered.stderr, reordered.stderr
    assert "does not follow" in reordered.stderr
    assert tamper().returncode == 0


def run_at_once(config: Path, count: int) -> None:
    """``count`` ``hookgate run`` processes at once on ``echo 0`` ... ``echo count-1``; each must exit 0."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "gateway", "run", "--config", str(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
        )
        for _ in range(count)
    ]
    for i, proc in enumerate(procs):
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(bash(f"echo {i}")).encode())
        proc.stdin.close()
    for proc in procs:
        assert proc.wait(60) == 0


def test_concurrent_runs_share_one_chain(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    run_at_once(config, 8)
    rows = records(config)
    assert sorted(r["tool_input"]["command"] for r in rows) == sorted(f"echo {i}" for i in range(8))
    assert audit(config, "verify").returncode == 0


def test_the_spool_drains_itself_when_it_grows(tmp_path: Path) -> None:
    config = write_config(tmp_path, audit={"maxValue": 200_000})
    big = "x" * 150_000
    run(config, bash(f"echo {big}"))
    run(config, bash(f"echo {big}"))  # past 256 KiB: this run moves the spool into the database
    with sqlite3.connect(tmp_path / "state" / "state.sqlite3") as conn:
        assert conn.execute("SELECT COUNT(*) FROM audit_records").fetchone()[0] == 2
    conn.close()
    assert not (tmp_path / "state" / "audit" / "spool.jsonl").exists()


def test_large_values_are_truncated_with_size_and_hash(tmp_path: Path) -> None:
    config = write_config(tmp_path, audit={"maxValue": 64})
    run(config, bash("echo " + "y" * 5000))
    command = records(config)[0]["tool_input"]["command"]
    assert command.startswith("echo yyy") and "…[truncated: 5005 bytes, sha256 " in command and len(command) < 200


def test_a_nan_or_infinity_in_an_event_is_denied_and_every_record_stays_valid_json(tmp_path: Path) -> None:
    """Python's json reads NaN and Infinity; JSON has neither, so such an event is undecodable (denied, not
    handed to hooks), and every export, query --json and jsonl line stays JSON that strict parsers (jq,
    PostgreSQL's jsonb) accept."""
    config = write_config(tmp_path, audit={"sink": ["store", f"jsonl:{tmp_path / 'audit.jsonl'}"]})
    event = json.dumps(bash("echo hi")).replace('"cwd": "/tmp"', '"cwd": "/tmp", "n": [NaN, Infinity, -Infinity]')
    proc = run_hookgate(["run", "--config", str(config)], event, cwd=ROOT)
    assert proc.returncode == 2 and "NaN is not a JSON number" in proc.stderr, proc.stderr
    run(config, bash("echo hi"))

    def strict(text: str) -> Any:
        return json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in {text[:200]}"))

    [record] = strict(audit(config, "query", "--json").stdout)
    assert record["tool_input"] == {"command": "echo hi"}
    for line in (tmp_path / "audit.jsonl").read_text().splitlines():
        strict(line)
    assert audit(config, "verify").returncode == 0


def test_retention_by_age(tmp_path: Path) -> None:
    config = write_config(tmp_path, audit={"keepDays": 0.0001})  # 8.64 s
    run(config, bash("echo old"))
    assert len(records(config)) == 1
    import time

    time.sleep(9)
    run(config, bash("echo new"))
    rows = records(config)
    assert [r["tool_input"]["command"] for r in rows if r["event"] == "PreToolUse"] == ["echo new"]
    [vouch] = [r for r in rows if r["event"] == "AuditRetention"]  # retention leaves its evidence in the chain
    assert vouch["retention"]["first_seq"] == 1 and vouch["retention"]["last_seq"] == 1
    verify = audit(config, "verify")
    assert verify.returncode == 0 and "pruned by retention (retention record seq" in verify.stdout, verify.stdout


PROBE = """
import json, sys
from gateway.cli import main
code = main(["run", "--config", sys.argv[1]])
sys.stderr.write("\\nLOADED=" + json.dumps(sorted(m for m in sys.modules if m.startswith("gateway.audit") or m == "sqlite3")) + "\\n")
raise SystemExit(code)
"""


def _loaded(config: Path, payload: dict[str, Any]) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(config)],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    line = next(ln for ln in proc.stderr.decode().splitlines() if ln.startswith("LOADED="))
    loaded: list[str] = json.loads(line.removeprefix("LOADED="))
    return loaded


def test_run_imports_no_audit_when_no_handler_ran_and_no_sqlite_when_it_did(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    stop = {"hook_event_name": "Stop", "session_id": "s", "cwd": "/tmp", "stop_hook_active": False}
    _loaded(config, stop)  # compiles the config (the compiler loads gateway.audit.config)
    assert _loaded(config, stop) == []  # the cached config: nothing of the audit
    assert _loaded(config, bash("ls")) == [  # the one-shot recorder: no sinks, spans, thread or store
        "gateway.audit",
        "gateway.audit.hints",
        "gateway.audit.oneshot",
        "gateway.audit.record",
        "gateway.audit.redact",
        "gateway.audit.spool",
    ]
    assert os.path.exists(tmp_path / "state" / "audit" / "spool.jsonl")


def test_bad_audit_config_is_caught_by_validate(tmp_path: Path) -> None:
    config = write_config(
        tmp_path, audit={"record": "sometimes", "sink": "syslog", "redact": ["("], "keepDays": 0, "colour": "red"}
    )
    proc = run_hookgate(["validate", str(config)], cwd=ROOT)
    assert proc.returncode == 1
    out = proc.stdout + proc.stderr
    for needle in ("audit.record", "audit.sink", "audit.redact", "audit.keepDays"):
        assert needle in out, out
    good = write_config(tmp_path, audit={"record": "all", "sink": "jsonl:audit.jsonl", "colour": "red"})
    proc = run_hookgate(["validate", str(good)], cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "audit.colour: unknown field" in proc.stdout + proc.stderr


def test_side_effects_from_an_mcp_tool_answer(tmp_path: Path) -> None:
    from tests.fakes.mcp_helpers import stdio_server

    answer = json.dumps({"side_effects": ["opened ticket SEC-1"]})
    config = tmp_path / "hookgate.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {"fake": stdio_server()},
                "hooks": {
                    "PreToolUse": [
                        {
                            "matcher": "Bash",
                            "hooks": [
                                {
                                    "type": "mcp_tool",
                                    "id": "ticket",
                                    "server": "fake",
                                    "tool": "text_answer",
                                    "input": {"text": answer},
                                }
                            ],
                        }
                    ]
                },
                "settings": {"stateDir": str(tmp_path / "state")},
            }
        )
    )
    assert run(config, bash("ls")).returncode == 0
    (record,) = records(config)
    assert record["handlers"][0]["type"] == "mcp_tool"
    assert record["handlers"][0]["side_effects"] == ["opened ticket SEC-1"]


def test_tail_follow_prints_new_records(tmp_path: Path) -> None:
    import selectors
    import time

    config = write_config(tmp_path)
    run(config, bash("echo first"))
    follower = subprocess.Popen(
        [sys.executable, "-m", "gateway", "audit", "tail", "-n", "5", "--follow", "--json", "--config", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    try:
        assert follower.stdout is not None
        selector = selectors.DefaultSelector()
        selector.register(follower.stdout, selectors.EVENT_READ)

        def next_line(timeout: float = 30.0) -> dict[str, Any]:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if selector.select(timeout=0.5):
                    line = follower.stdout.readline()  # type: ignore[union-attr]
                    if line:
                        value: dict[str, Any] = json.loads(line)
                        return value
            raise AssertionError("tail --follow printed nothing")

        assert next_line()["tool_input"]["command"] == "echo first"
        run(config, bash("echo second"))
        assert next_line()["tool_input"]["command"] == "echo second"
    finally:
        follower.terminate()
        follower.wait(10)


def test_a_broken_audit_store_never_changes_the_answer(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    data = json.loads(config.read_text())
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the state dir should be")
    data["settings"]["stateDir"] = str(blocker / "state")
    config.write_text(json.dumps(data))
    denied = run(config, bash("rm -rf /"))
    assert denied.returncode == 2 and "no rm -rf here" in denied.stderr
    assert "hookgate: audit: cannot record:" in denied.stderr
    allowed = run(config, bash("ls"))
    assert allowed.returncode == 0


@pytest.mark.usefixtures("store_backend")
def test_run_records_into_either_store_and_verifies(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    for command in ("rm -rf /", "ls", "echo hi"):
        run(config, bash(command))
    rows = records(config)
    assert [r["decision"] for r in rows] == ["deny", "none", "none"]
    verify = audit(config, "verify")
    assert verify.returncode == 0 and "3 record(s) ok" in verify.stdout, verify.stdout + verify.stderr
    stats = {s["id"]: s for s in json.loads(audit(config, "stats", "--json").stdout)}
    assert stats["guard"]["calls"] == 3 and stats["guard"]["denies"] == 1
    # --handler is exact on both stores: SQLite's LIKE ignored ASCII case (GUARD listed guard's records)
    assert len(records(config, "--handler", "guard")) == 3
    assert records(config, "--handler", "GUARD") == records(config, "--handler", "g%") == []


def test_a_lone_surrogate_in_a_tool_input_does_not_break_reading_the_trail(tmp_path: Path) -> None:
    """An agent can put a lone surrogate (`"\\ud800"` in the event's JSON) into a tool input: query, tail and
    export still work, and the JSON output is the same string again."""
    config = write_config(tmp_path)
    assert run(config, bash("ls \ud800")).returncode == 0
    [record] = [r for r in records(config) if r["event"] == "PreToolUse"]
    assert record["tool_input"]["command"] == "ls \ud800"
    for args in (["tail", "-n", "5"], ["export", "--format", "csv"], ["export", "--format", "jsonl"], ["verify"]):
        proc = audit(config, *args)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, (args, proc.stderr)


def test_a_user_redact_pattern_that_backtracks_cannot_hold_back_the_deny(tmp_path: Path) -> None:
    """``audit.redact: ['(a+)+$']`` (validate accepts it) once held ``hookgate run`` in the record step, before
    the deny reached the host, until the host timed the hook out and the call went ahead. Each string gets
    ``CUSTOM_SECONDS``, then is stored as ``[REDACTED:custom-timeout]``. The command is data: judged, not run."""
    cfg = tmp_path / "audit.yaml"
    cfg.write_text("audit:\n  record: all\n  redact: ['(a+)+$']\n")
    event = {
        "session_id": "s",
        "cwd": "/proj",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_use_id": "toolu_1",
        "tool_input": {"command": "rm -rf / " + "a" * 28 + "!"},
    }
    proc = run_hookgate(["run", "--config", "builtin:default", "--config", str(cfg)], event, timeout=30)
    assert proc.returncode == 2, proc.stderr
    shown = run_hookgate(["audit", "tail", "--json", "--config", "builtin:default", "--config", str(cfg)])
    assert "[REDACTED:custom-timeout]" in shown.stdout and "a" * 28 not in shown.stdout, shown.stdout


def test_a_lock_held_on_a_jsonl_sink_cannot_hold_back_the_deny(tmp_path: Path) -> None:
    """Any process of the user that holds ``flock`` on the sink (``flock PATH sleep 86400 &`` is an ordinary
    command) once made every ``hookgate run`` wait for the lock before its answer: the host timed the hook
    out and the call went ahead. The record step gets ``RECORD_SECONDS``; the store's record is kept."""
    import fcntl

    from gateway.record_step import RECORD_SECONDS

    sink = tmp_path / "audit.jsonl"
    sink.write_text("")
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(f"audit:\n  record: all\n  sink: [store, 'jsonl:{sink}']\n")
    event: dict[str, Any] = {"session_id": "s", "cwd": "/proj", "hook_event_name": "PreToolUse", "tool_name": "Bash"}
    event["tool_input"] = {"command": "rm -rf /"}  # data: judged, not run
    with open(sink, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        proc = run_hookgate(["run", "--config", "builtin:default", "--config", str(cfg)], event, timeout=30)
    assert proc.returncode == 2, proc.stderr
    assert f"the record step took longer than {RECORD_SECONDS:g} s" in proc.stderr
    assert proc.stderr.count("hookgate: audit:") == 1, proc.stderr
    shown = run_hookgate(["audit", "tail", "--json", "--config", "builtin:default", "--config", str(cfg)])
    assert '"decision": "deny"' in shown.stdout or '"decision":"deny"' in shown.stdout, shown.stdout


HOSTILE = "ok\x1b[1A\x1b[2K\rFAKE  allow  \u202eevil\x07 \u2028next\u200b\x00\x9b line\nsecond"


def test_tail_and_query_escape_what_is_not_printable_in_every_field(tmp_path: Path) -> None:
    """An agent's text (a reason, a tool name, a handler id from a record) cannot redraw the auditor's
    terminal: ESC, CR, BEL, NUL, C1 controls, U+2028, bidi overrides and zero-width characters are printed as
    escapes, as `hookgate approvals list` prints them; a newline in the reason stays ` | `."""
    deny = {"type": "python", "id": "why\u202e", "callable": "tests.integration.audit_funcs:deny_why"}
    config = tmp_path / "hookgate.json"
    config.write_text(
        json.dumps({"hooks": {"PreToolUse": [{"hooks": [deny]}]}, "settings": {"stateDir": str(tmp_path / "state")}})
    )
    event = {**bash("echo", session="sess\x1b[2J"), "tool_name": "Bash\u202e\u200b"}
    event["tool_input"]["why"] = HOSTILE
    assert run(config, event).returncode == 2
    for args in (("tail",), ("query",), ("query", "--decision", "deny")):
        shown = audit(config, *args)
        assert shown.returncode == 0, shown.stderr
        [row] = shown.stdout.splitlines()
        assert row.isprintable(), (args, row)
        assert "Bash\\u202e\\u200b" in row and "why\\u202e=deny" in row, row
        assert "ok\\x1b[1A\\x1b[2K\\rFAKE  allow  \\u202eevil\\x07 \\u2028next\\u200b\\x00\\x9b line | second" in row
    [record] = records(config)  # --json stays JSON: the stored text comes back as it was
    assert record["reason"] == HOSTILE and record["tool_name"] == "Bash\u202e\u200b"
    stats = audit(config, "stats")
    assert stats.returncode == 0 and all(r.isprintable() for r in stats.stdout.splitlines()), stats.stdout
    assert "why\\u202e" in stats.stdout


def test_a_store_locked_by_another_process_holds_back_no_hook_call(tmp_path: Path) -> None:
    """Past 256 KiB of spool, `hookgate run` moves the spool into the store. With another process holding
    the store's write lock, it waited SQLite's 5 s for it (a C-level wait the record step's 2 s deadline
    cannot cut short), and then said `cannot record: ... the answer goes out without it` though its record
    was safe in the spool. Now it leaves the spool to the next drain at once, and says nothing."""
    config = write_config(tmp_path, audit={"maxValue": 1_000_000})
    assert run(config, bash("echo first")).returncode == 0
    assert audit(config, "verify").returncode == 0  # the store exists
    holder = sqlite3.connect(tmp_path / "state" / "state.sqlite3", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        proc = run(config, bash("echo " + "a" * 300_000))
        took = time.monotonic() - started
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert took < 2.0, took
    rows = records(config)  # the spooled record is moved now
    assert len(rows) == 2 and rows[1]["tool_input"]["command"].startswith("echo aaa")


def test_an_event_filter_takes_any_case_and_names_a_typo(tmp_path: Path) -> None:
    """Records hold canonical event names: `--event pretooluse` and `--event PreTool` listed nothing with exit 0,
    as if no such event had been recorded. Now the case does not matter and a name that is no event is a usage
    error that suggests the one meant."""
    config = write_config(tmp_path)
    run(config, bash("ls"))
    assert len(records(config, "--event", "pretooluse")) == len(records(config, "--event", "PreToolUse")) == 1
    for action in ("query", "export"):
        proc = audit(config, action, "--event", "PreTool")
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
        assert "argument --event: 'PreTool' is no event name (did you mean 'PreToolUse'?)" in proc.stderr
