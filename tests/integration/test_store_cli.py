"""Selecting the shared store and administering it, through real `hookgate` subprocesses and a real
PostgreSQL: `store migrate` / `store status`, `settings.store` vs `HOOKGATE_STORE_URL`, the schema
check of `serve` and `run`, and that no password ever reaches an output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

from tests.conftest import HOOKGATE, ROOT, run_hookgate
from tests.fakes.mcp_helpers import event
from tests.integration.serve_helpers import ServeProcess
from tests.pg_server import PASSWORD, free_port


def _config(tmp_path: Path, hooks: dict[str, Any] | None = None, **settings: Any) -> Path:
    path = tmp_path / "hookgate.json"
    path.write_text(json.dumps({"hooks": hooks or {}, "settings": settings}))
    return path


def _no_secret(*texts: str) -> None:
    for text in texts:
        assert PASSWORD not in text


def test_migrate_then_status(tmp_path: Path, pg_url: str) -> None:
    env = {"HOOKGATE_STORE_URL": pg_url}
    config = str(_config(tmp_path))
    before = run_hookgate(["store", "status", "--config", config], env=env)
    assert before.returncode == 1
    assert "schema version: 0" in before.stdout and "run 'hookgate store migrate'" in before.stderr
    first = run_hookgate(["store", "migrate", "--config", config], env=env)
    assert first.returncode == 0 and "migrated to schema version" in first.stdout
    again = run_hookgate(["store", "migrate", "--config", config], env=env)
    assert again.returncode == 0 and "is current; nothing to apply" in again.stdout
    status = run_hookgate(["store", "status", "--json", "--config", config], env=env)
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    assert data["kind"] == "postgresql" and data["version"] == data["required"] >= 2
    assert {"cache", "counters", "flags"} <= set(data["tables"])
    assert data["store"].startswith("postgresql://hookgate:***@127.0.0.1:")
    _no_secret(before.stdout, before.stderr, first.stdout, again.stdout, status.stdout)


def test_settings_store_selects_postgresql_and_env_wins(tmp_path: Path, pg_url: str) -> None:
    config = str(_config(tmp_path, store=pg_url))
    migrated = run_hookgate(["store", "migrate", "--config", config])
    assert migrated.returncode == 0 and "postgresql://hookgate:***@" in migrated.stdout
    lite = run_hookgate(["store", "status", "--config", config], env={"HOOKGATE_STORE_URL": "sqlite"})
    assert lite.returncode == 0 and "(sqlite)" in lite.stdout
    valid = run_hookgate(["validate", config])
    assert valid.returncode == 0, valid.stdout
    _no_secret(migrated.stdout, lite.stdout, valid.stdout)


def test_a_bad_store_url_is_a_config_error_without_the_password(tmp_path: Path) -> None:
    config = str(_config(tmp_path, store=f"mysql://root:{PASSWORD}@db/x"))
    proc = run_hookgate(["validate", config])
    assert proc.returncode == 1
    assert "settings.store: store URL mysql://root:***@db/x: expected 'sqlite'" in proc.stdout
    env_bad = run_hookgate(
        ["store", "status", "--config", str(_config(tmp_path))],
        env={"HOOKGATE_STORE_URL": f"postgresql://u:{PASSWORD}@h:notaport/db"},
    )
    assert env_bad.returncode == 1 and "not a valid PostgreSQL URL" in env_bad.stderr
    _no_secret(proc.stdout, proc.stderr, env_bad.stdout, env_bad.stderr)


def test_a_libpq_key_value_string_is_never_printed_with_its_password(tmp_path: Path) -> None:
    config = str(_config(tmp_path, store=f"host=db user=hookgate password={PASSWORD} dbname=hookgate"))
    proc = run_hookgate(["validate", config])
    assert proc.returncode == 1 and "password=***" in proc.stdout
    event = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}})
    ran = run_hookgate(["run", "--config", config], event)
    _no_secret(proc.stdout, proc.stderr, ran.stdout, ran.stderr)


def test_unreachable_store_commands_fail_in_one_line(tmp_path: Path) -> None:
    url = f"postgresql://hookgate:{PASSWORD}@127.0.0.1:{free_port()}/db"
    for command in ("migrate", "status"):
        proc = run_hookgate(["store", command, "--config", str(_config(tmp_path))], env={"HOOKGATE_STORE_URL": url})
        assert proc.returncode == 1
        assert proc.stderr.count("\n") == 1 and "is unreachable" in proc.stderr and "Traceback" not in proc.stderr
        _no_secret(proc.stdout, proc.stderr)


def test_serve_refuses_an_old_schema_naming_the_command(tmp_path: Path, pg_url: str) -> None:
    proc = subprocess.run(
        [*HOOKGATE, "serve", "--port", "0", "--config", str(_config(tmp_path))],
        env={**_env(), "HOOKGATE_STORE_URL": pg_url},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "schema version 0" in lines[0] and "run 'hookgate store migrate'" in lines[0]
    _no_secret(proc.stderr)


def test_serve_starts_while_the_store_is_down_and_says_so(tmp_path: Path) -> None:
    url = f"postgresql://hookgate:{PASSWORD}@127.0.0.1:{free_port()}/db"
    with ServeProcess(_config(tmp_path), env={"HOOKGATE_STORE_URL": url}) as serve:
        line = serve.wait_log("is unreachable")
        assert "starting anyway" in line
    _no_secret(*serve.lines)


def test_run_on_an_old_schema_names_the_command_only_when_state_is_used(tmp_path: Path, pg_url: str) -> None:
    """A stateless event never touches the store; a cached handler (the store is only its cache) still
    runs, and the one-line schema error naming the command is on stderr."""
    script = tmp_path / "ok.sh"
    script.write_text("#!/bin/sh\necho checked\n")
    script.chmod(0o755)
    hooks = {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": str(script), "cacheTtl": 60}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}],
    }
    config = str(_config(tmp_path, hooks))
    env = {"HOOKGATE_STORE_URL": pg_url}
    stateless = run_hookgate(["run", "--config", config], event("Bash", command="ls"), env=env)
    assert stateless.returncode == 0 and stateless.stderr == ""
    cached = run_hookgate(
        ["run", "--config", config],
        {"hook_event_name": "UserPromptSubmit", "prompt": "hi", "session_id": "s", "cwd": str(tmp_path)},
        env=env,
    )
    assert cached.returncode == 0 and "checked" in cached.stdout
    assert cached.stderr.count("\n") == 1 and "run 'hookgate store migrate'" in cached.stderr
    _no_secret(stateless.stdout, stateless.stderr, cached.stdout, cached.stderr)


PROBE = """
import sys
from gateway.cli import main
code = main(["run", "--config", sys.argv[1]])
sys.stderr.write("\\nPSYCOPG=" + str("psycopg" in sys.modules) + "\\n")
raise SystemExit(code)
"""


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)


def _psycopg_loaded(config: Path, payload: dict[str, Any], env: dict[str, str]) -> bool:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(config)],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=ROOT,
        timeout=60,
        check=False,
        env={**_env(), **env},
    )
    line = next(ln for ln in proc.stderr.decode().splitlines() if ln.startswith("PSYCOPG="))
    return line == "PSYCOPG=True"


def test_psycopg_is_imported_only_when_postgresql_is_configured_and_state_is_used(tmp_path: Path, pg_url: str) -> None:
    hooks = {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo hi", "cacheTtl": 60}]}],
    }
    config = _config(tmp_path, hooks)
    prompt = {"hook_event_name": "UserPromptSubmit", "prompt": "x", "session_id": "s", "cwd": str(tmp_path)}
    assert not _psycopg_loaded(config, prompt, {"HOOKGATE_STORE_URL": ""})  # SQLite: never
    run_hookgate(["store", "migrate", "--config", str(config)], env={"HOOKGATE_STORE_URL": pg_url})
    assert not _psycopg_loaded(config, event("Bash", command="ls"), {"HOOKGATE_STORE_URL": pg_url})
    assert _psycopg_loaded(config, prompt, {"HOOKGATE_STORE_URL": pg_url})


def test_status_of_an_sqlite_store_creates_and_changes_nothing(tmp_path: Path) -> None:
    """`store status` only looks: no folder, no file, no migration; it says there is no store yet."""
    target = tmp_path / "not-here" / "state"
    config = str(_config(tmp_path))
    env = {"HOOKGATE_STORE_URL": f"sqlite://{target}"}  # sqlite:///ABS/DIR
    shown = run_hookgate(["store", "status", "--config", config], env=env)
    assert shown.returncode == 0, shown.stderr
    assert (
        shown.stdout.strip()
        == f"store: {target / 'state.sqlite3'} (sqlite): not created yet (the first event that keeps state creates it)"
    )
    as_json = run_hookgate(["store", "status", "--json", "--config", config], env=env)
    assert json.loads(as_json.stdout)["exists"] is False and as_json.returncode == 0
    assert not (tmp_path / "not-here").exists()
    # the default store (under $XDG_STATE_HOME) alike
    default = run_hookgate(["store", "status", "--config", config])
    assert default.returncode == 0 and "not created yet" in default.stdout
    import os

    assert not os.path.exists(os.path.join(os.environ["XDG_STATE_HOME"], "hookgate"))
    # an existing file is read as it is (read-only: its bytes do not change)
    hooks = {"PreToolUse": [{"hooks": [{"type": "builtin", "name": "rateLimit", "limit": 5, "window": 60}]}]}
    stateful = str(_config(tmp_path, hooks))
    assert run_hookgate(["run", "--config", stateful], event("Bash", command="ls"), env=env).returncode == 0
    db = target / "state.sqlite3"
    before = db.read_bytes()
    again = run_hookgate(["store", "status", "--json", "--config", stateful], env=env)
    assert again.returncode == 0 and json.loads(again.stdout)["tables"]["counters"] == 1
    assert db.read_bytes() == before


def test_the_sqlite_store_is_private_to_its_user(tmp_path: Path) -> None:
    """The state folder is created 0700 and the database with its WAL files 0600 (approval requests, cached
    verdicts and audit records are for this user only), whatever the umask lets through."""
    import os
    import stat

    target = tmp_path / "state"
    hooks = {"PreToolUse": [{"hooks": [{"type": "builtin", "name": "rateLimit", "limit": 5, "window": 60}]}]}
    config = str(_config(tmp_path, hooks))
    env = {"HOOKGATE_STORE_URL": f"sqlite://{target}"}
    old = os.umask(0o022)
    try:
        assert run_hookgate(["run", "--config", config], event("Bash", command="ls"), env=env).returncode == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(target.stat().st_mode) == 0o700
    files = [p for p in target.iterdir() if p.name.startswith("state.sqlite3")]
    assert {p.name for p in files} >= {"state.sqlite3"}
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_a_password_with_url_delimiters_is_refused_whole_and_works_percent_encoded(
    tmp_path: Path, pg_server: Any, pg_url: str
) -> None:
    """A password holding '@' or '/' written as is: no part of it is ever shown (a URL parser would end
    the userinfo at the first '@' or '/', and the rest leaked into the message as a host or a port), and
    the line says to percent-encode it; percent-encoded it connects."""
    secret = "Xq7@zz/Wk9#pp"
    db = pg_url.rsplit("/", 1)[1]
    pg_server.psql(f"CREATE ROLE odd LOGIN PASSWORD '{secret}'; GRANT ALL ON DATABASE \"{db}\" TO odd")
    config = str(_config(tmp_path))
    for raw in (secret, "Xq7@zz", "Xq7/Wk9"):
        url = f"postgresql://odd:{raw}@127.0.0.1:{pg_server.port}/{db}"
        named = tmp_path / "named.json"
        named.write_text(json.dumps({"settings": {"store": url}}))
        for args in (["store", "status", "--config", config], ["validate", str(named)]):
            proc = run_hookgate(args, env={"HOOKGATE_STORE_URL": url} if args[0] == "store" else None)
            out = proc.stdout + proc.stderr
            assert proc.returncode == 1 and "percent-encode" in out and "Traceback" not in out, out
            assert f"postgresql://odd:***@127.0.0.1:{pg_server.port}/{db}" in out
            for part in ("Xq7", "zz", "Wk9", "pp"):
                assert part not in out
    encoded = f"postgresql://odd:{quote(secret, safe='')}@127.0.0.1:{pg_server.port}/{db}"
    ok = run_hookgate(["store", "status", "--config", config], env={"HOOKGATE_STORE_URL": encoded})
    assert "schema version: 0" in ok.stdout and "Xq7" not in ok.stdout + ok.stderr, ok.stderr


def test_a_multi_host_url_fails_over_to_the_host_that_answers(tmp_path: Path, pg_server: Any, pg_url: str) -> None:
    """libpq's failover form ``host1:port1,host2:port2`` (one primary behind several addresses) is a
    valid store URL: the first host refuses, the second answers."""
    url = pg_url.replace("@127.0.0.1:", f"@127.0.0.1:{free_port()},127.0.0.1:")
    config = str(_config(tmp_path))
    named = tmp_path / "named.json"
    named.write_text(json.dumps({"settings": {"store": url}}))
    valid = run_hookgate(["validate", str(named)])
    assert valid.returncode == 0, valid.stdout
    migrated = run_hookgate(["store", "migrate", "--config", config], env={"HOOKGATE_STORE_URL": url})
    assert migrated.returncode == 0 and "migrated to schema version" in migrated.stdout, migrated.stderr
    _no_secret(valid.stdout, migrated.stdout, migrated.stderr)


def test_a_role_without_create_rights_gets_one_line_and_may_run_migrate_once_current(
    tmp_path: Path, pg_server: Any, pg_url: str
) -> None:
    """A least-privilege role (no CREATE on the schema): `store migrate` on an empty database says what
    is wrong in one line (not the SQL quoted back); once the owner migrated and granted the role its
    rows, the role's `store migrate` (a replica's deploy step) has nothing to do and exits 0, and events
    keep their state through it."""
    db = pg_url.rsplit("/", 1)[1]
    pg_server.psql("CREATE ROLE replica LOGIN PASSWORD 'replica-pw-9'")
    pg_server.psql("REVOKE CREATE ON SCHEMA public FROM PUBLIC", db)
    url = f"postgresql://replica:replica-pw-9@127.0.0.1:{pg_server.port}/{db}"
    config = str(
        _config(
            tmp_path, {"PreToolUse": [{"hooks": [{"type": "builtin", "name": "rateLimit", "limit": 1, "window": 60}]}]}
        )
    )
    denied = run_hookgate(["store", "migrate", "--config", config], env={"HOOKGATE_STORE_URL": url})
    assert denied.returncode == 1 and denied.stderr.count("\n") == 1, denied.stderr
    assert "permission denied for schema public" in denied.stderr and "as the database's owner" in denied.stderr
    assert "LINE 1" not in denied.stderr and "CREATE TABLE" not in denied.stderr
    owner = run_hookgate(["store", "migrate", "--config", config], env={"HOOKGATE_STORE_URL": pg_url})
    assert owner.returncode == 0, owner.stderr
    pg_server.psql(
        "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO replica; "
        "GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO replica",
        db,
    )
    again = run_hookgate(["store", "migrate", "--config", config], env={"HOOKGATE_STORE_URL": url})
    assert again.returncode == 0 and "is current; nothing to apply" in again.stdout, again.stderr
    first = run_hookgate(["run", "--config", config], event("Bash", command="ls"), env={"HOOKGATE_STORE_URL": url})
    second = run_hookgate(["run", "--config", config], event("Bash", command="ls"), env={"HOOKGATE_STORE_URL": url})
    assert first.returncode == 0 and first.stderr == "", first.stderr
    assert second.returncode == 2 and "rate limit" in second.stdout + second.stderr, second.stdout


def test_migrate_on_a_newer_schema_says_it_is_newer(tmp_path: Path, pg_server: Any, pg_url: str) -> None:
    config = str(_config(tmp_path))
    env = {"HOOKGATE_STORE_URL": pg_url}
    assert run_hookgate(["store", "migrate", "--config", config], env=env).returncode == 0
    pg_server.psql(
        "INSERT INTO hookgate_schema (version, name) VALUES (99, 'from the future')", pg_url.rsplit("/", 1)[1]
    )
    proc = run_hookgate(["store", "migrate", "--config", config], env=env)
    assert proc.returncode == 0 and "schema version 99 is newer than this hookgate's" in proc.stdout, proc.stdout
    status = run_hookgate(["store", "status", "--config", config], env=env)
    assert status.returncode == 0 and "schema version: 99" in status.stdout, status.stderr
