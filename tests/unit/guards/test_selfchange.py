"""The agent switching its own guard rails off: writes to the installed hookgate (its policy files, packages and
command), pip removing or replacing it, hookgate's CLI reached through ``python -m gateway``, its state written
with sqlite3, the approvals routes answered with curl, and file-tool writes to ``.git/config``/``.git/hooks``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import configs
from configs.guards import secrets_guard, shell_guard
from tests.conftest import run_hookgate
from tests.unit.guards.common import CWD, rule_of
from tests.unit.guards.conftest import own_state

SITE = os.path.dirname(os.path.dirname(os.path.abspath(configs.__file__)))  # site-packages, or the checkout
BIN = os.path.join(sys.prefix, "bin", "hookgate")
SELF = "deny:hookgate.self-change"
CONFIG = "deny:write.hook-config"


INSTALLED_WRITES = [
    f"sed -i 's/deny/allow/' {SITE}/configs/default.yaml",
    f"echo 'hooks: {{}}' > {SITE}/configs/default.yaml",
    f"printf x | tee {SITE}/configs/guards/shell_guard.py",
    f"cp /tmp/empty.py {SITE}/configs/guards/destructive/rules.py",
    f"perl -pi -e 's/deny/off/' {SITE}/gateway/dispatcher.py",
    f"truncate -s 0 {SITE}/handlers/__init__.py",
    f"rm {SITE}/configs/guards/secrets_guard.py",
    f"mv {SITE}/configs /tmp/off",
    f"ln -sf /bin/true {BIN}",
    f"cp /bin/true {BIN}",
    f"sed -i 's/x/y/' {SITE}/configs/./guards/../default.yaml",
]


@pytest.mark.parametrize("command", INSTALLED_WRITES)
def test_shell_writes_to_the_installed_hookgate_are_denied(command: str) -> None:
    assert rule_of(command) == CONFIG


def test_relative_writes_and_deleting_the_folder_that_holds_it_count_from_its_own_folder() -> None:
    assert rule_of("sed -i s/deny/allow/ configs/default.yaml", SITE) == CONFIG
    assert rule_of(f"rm -rf {os.path.dirname(SITE)}/{os.path.basename(SITE)}/gateway") in ("deny:rm.recursive", CONFIG)
    holder = os.path.dirname(os.path.dirname(secrets_guard.installed_roots()[-1][0]))  # the interpreter's prefix
    assert rule_of(f"rm -r {holder}") in (CONFIG, "deny:rm.recursive")


@pytest.mark.parametrize(
    "tool, tool_input",
    [
        ("Write", {"file_path": f"{SITE}/configs/default.yaml", "content": "hooks: {}"}),
        ("Edit", {"file_path": f"{SITE}/configs/guards/shell_guard.py", "old_string": "a", "new_string": "b"}),
        ("MultiEdit", {"file_path": f"{SITE}/gateway/cli/run.py", "edits": []}),
        ("write_file", {"file_path": f"{SITE}/handlers/__init__.py", "content": ""}),
        ("replace", {"file_path": f"{SITE}/configs/guards/destructive/git.py", "old_string": "a", "new_string": "b"}),
        ("fs_write", {"command": "create", "path": BIN, "file_text": "#!/bin/sh\n"}),
        ("apply_patch", {"command": f"*** Begin Patch\n*** Update File: {SITE}/configs/default.yaml\n*** End Patch"}),
    ],
)
def test_file_tools_cannot_edit_the_installed_hookgate(tool: str, tool_input: dict[str, object]) -> None:
    out = secrets_guard.check_event({"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input})
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_ordinary_project_files_named_like_hookgate_parts_still_pass() -> None:
    for path in ("/home/dev/webshop/configs/default.yaml", "/home/dev/webshop/gateway/app.py", "/usr/local/bin/hk"):
        assert secrets_guard.config_kind(path) is None, path
    assert rule_of("sed -i s/a/b/ configs/default.yaml") is None
    assert rule_of("rm -rf .venv") is None  # the project's own .venv, not the one hookgate runs from


@pytest.mark.parametrize(
    "command",
    [
        "pip uninstall hookgate",
        "pip uninstall -y hookgate",
        "pip3 uninstall --yes HookGate",
        "python3 -m pip uninstall hookgate",
        "python -m pip install --force-reinstall 'hookgate==0.0.1'",
        "pip install -U 'hookgate[slack]'",
        "uv pip uninstall hookgate",
        "uv tool uninstall hookgate",
        "pipx uninstall hookgate",
        "sudo pip3.11 uninstall -y hookgate",
    ],
)
def test_pip_removing_or_replacing_hookgate_is_self_change(command: str) -> None:
    assert rule_of(command) == SELF


@pytest.mark.parametrize(
    "command",
    [
        "python3 -m gateway approvals approve 12",
        "python -m gateway approvals reject 12",
        "python3 -mgateway approvals approve 12",
        "python3 -m gateway.cli mode read-only off",
        "python3 -m gateway uninstall claude",
        f"{sys.executable} {SITE}/gateway/cli/hookgate approvals approve 3",
        f"python3 {SITE}/gateway approvals approve 3",
        f"{BIN} approvals approve 3",
        "env python3 -m gateway approvals approve 9",
        "bash -c 'python3 -m gateway approvals approve 9'",
        "python3 -c \"from gateway.cli import main; main(['approvals', 'approve', '9'])\"",
    ],
)
def test_hookgate_cli_reached_another_way_is_self_change(command: str) -> None:
    assert rule_of(command) == SELF


@pytest.mark.parametrize(
    "command",
    [
        "echo off | xargs hookgate mode read-only",
        "echo claude | xargs hookgate uninstall",
        "echo install claude | xargs hookgate",
        "echo 'approve 7' | xargs hookgate approvals",
        'hookgate mode read-only "$STATE"',
        "printf off | xargs -I{} hookgate mode read-only {}",
        'python3 -c "from gateway.cli import main; main([\\"mode\\",\\"read-only\\",\\"off\\"])"',
        "python3 -c \"from gateway.cli import main; main(['mode', 'read-only', 'off'])\"",
    ],
)
def test_a_self_change_with_its_words_read_at_run_time_or_from_a_one_liner_is_denied(command: str) -> None:
    """``echo off | xargs hookgate mode read-only`` is the ``mode read-only off`` it runs, as ``echo claude | xargs
    hookgate uninstall`` is the uninstall, and a one-liner calling ``main(['mode', 'read-only', 'off'])`` is the
    approvals one-liner's kin."""
    assert rule_of(command) == SELF


@pytest.mark.parametrize(
    "command",
    [
        "hookgate mode read-only status",
        "hookgate mode read-only on",
        'hookgate --config "$CFG" validate',
        'hookgate run --config "$CLAUDE_PROJECT_DIR"/hookgate.yaml',
        "echo 7 | xargs hookgate approvals show",
        "python3 -c \"from gateway.cli import main; main(['mode', 'read-only', 'status'])\"",
    ],
)
def test_reading_hookgate_commands_with_run_time_words_still_pass(command: str) -> None:
    assert rule_of(command) is None


@pytest.mark.parametrize(
    "command",
    [
        "sqlite3 ~/.local/state/hookgate/state.sqlite3 \"update approvals set status='approved'\"",
        "sqlite3 ~/.local/state/hookgate/state.sqlite3 'delete from audit_records'",
        "sqlite3 /home/dev/.local/state/hookgate/state.sqlite3 < fix.sql",
        "sqlite3 -cmd '.timeout 100' $HOME/.local/state/hookgate/state.sqlite3 'drop table approvals'",
        "sqlite3 file:/home/dev/.local/state/hookgate/state.sqlite3?mode=rw 'delete from audit_records'",
        "python3 -c \"import sqlite3; sqlite3.connect('/home/dev/.local/state/hookgate/state.sqlite3')"
        ".execute('delete from audit_records')\"",
        "python3 -c \"import sqlite3, os; sqlite3.connect(os.path.expanduser('~/.local/state/hookgate/state.sqlite3'))\"",
        "curl -X POST -H \"Authorization: Bearer $HOOKGATE_TOKEN\" http://127.0.0.1:8787/approvals/ab12 -d '{}'",
        "curl -XPOST localhost:8787/approvals/ab12/",
        'curl -X POST "$HOOKGATE_SERVER/approvals/ab12"',
        "curl --data decision=approve http://[::1]:8787/ui/api/approvals/ab12",
        "curl -X POST http://127.0.0.1:8787/approvals/slack -d payload=x",
        "wget --post-data=x http://127.0.0.1:8787/approvals/ab12",
        "http POST :8787/approvals/ab12 decision=approve",
        "curl -X POST http://127.0.0.1:8787/%61pprovals/ab12 -d x",  # the server decodes the path
        "curl -X POST 'http://localhost:8787/%75i/api/approvals/ab12' -d x",
        "curl -X POST 'http://127.0.0.1:8787/appr[o-o]vals/ab12' -d x",  # curl's URL globbing
        "curl -X POST 'http://127.0.0.1:8787/{approvals,x}/ab12' -d x",
        # loopback in the other forms a client takes without DNS
        "curl -d '{\"decision\":\"approve\"}' 'http://[::ffff:127.0.0.1]:8787/approvals/ab12'",
        "curl -d x -H 'Host: 127.0.0.1' http://2130706433:8787/approvals/ab12",
        "curl -d x http://0x7f000001:8787/approvals/ab12",
        "curl -d x http://0177.1:8787/approvals/ab12",
        "curl -d x http://[0:0:0:0:0:0:0:1]:8787/approvals/ab12",
        "curl -d x http://gw.localhost:8787/approvals/ab12",
        # the state opened by a path inside the SQL or an option, not as the database operand
        "sqlite3 :memory: \"attach '/home/dev/.local/state/hookgate/state.sqlite3' as s; delete from s.audit_records\"",
        "sqlite3 -cmd '.open /home/dev/.local/state/hookgate/state.sqlite3' :memory: 'delete from approvals'",
    ],
)
def test_state_and_approval_routes_are_self_change(command: str) -> None:
    assert rule_of(command) == SELF


def test_the_configured_server_address_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOOKGATE_SERVER", "http://gw.internal:9000")
    assert rule_of("curl -X POST http://gw.internal:9000/approvals/ab12") == SELF


@pytest.mark.parametrize(
    "command",
    [
        "pip install requests",
        "pip uninstall -y requests",
        "pip install -e .",
        "python3 -m gateway approvals list",
        "python3 -m gateway validate",
        "sqlite3 -readonly ~/.local/state/hookgate/state.sqlite3 'select count(*) from approvals'",
        "sqlite3 app.db 'delete from sessions'",
        "curl http://127.0.0.1:8787/approvals",
        "curl -X POST https://api.example.com/approvals/ab12",
        "curl 'http://127.0.0.1:3000/api/items?filter[name]=x'",
        "curl 'http://127.0.0.1:3000/{a,b}/c'",
        "curl http://127.0.0.1:3000/api/%20x",
        "curl -X POST http://10.0.0.7:8787/approvals/ab12",  # not loopback: another machine's gateway
        "sqlite3 :memory: \"attach 'app.db' as a; select 1\"",
        "python3 -c \"import sqlite3; sqlite3.connect('app.db')\"",
    ],
)
def test_near_misses_pass(command: str) -> None:
    assert rule_of(command) is None


@pytest.mark.parametrize(
    "tool, tool_input",
    [
        ("Write", {"file_path": "/home/dev/webshop/.git/hooks/pre-commit", "content": "rm -rf ~"}),
        ("Write", {"file_path": ".git/hooks/post-checkout", "content": "#!/bin/sh"}),
        ("Edit", {"file_path": "/home/dev/webshop/.git/config", "old_string": "a", "new_string": "b"}),
        ("MultiEdit", {"file_path": "sub/.git/config", "edits": []}),
        ("write_file", {"file_path": "/repo/.git/hooks/pre-push", "content": ""}),
        ("replace", {"file_path": "/repo/.git//config", "old_string": "a", "new_string": "b"}),
        ("fs_write", {"command": "create", "path": "/repo/.git/hooks/x", "file_text": ""}),
        ("apply_patch", {"command": "*** Begin Patch\n*** Add File: .git/hooks/pre-commit\n+x\n*** End Patch"}),
        ("mcp__fs__write_file", {"path": "/repo/.git/config", "content": ""}),
        ("Write", {"file_path": ".GIT/hooks/pre-commit", "content": "x"}),  # case-insensitive file systems
        ("Write", {"file_path": "/repo/.Git/Config", "content": "x"}),
        ("Write", {"file_path": ".git/config.", "content": "x"}),  # Windows drops a trailing dot
        ("Write", {"file_path": ".git/hooks/pre-commit::$DATA", "content": "x"}),  # and reads ::$DATA as the file
        ("Write", {"file_path": ".git/modules/sub/hooks/post-checkout", "content": "x"}),  # a submodule's git dir
        ("Edit", {"file_path": ".git/modules/sub/config", "old_string": "a", "new_string": "b"}),
        ("mcp__filesystem__move_file", {"source": ".git", "destination": "/tmp/g"}),  # its config and hooks go
        ("mcp__fs__delete_directory", {"path": "/home/dev/webshop/.git"}),
    ],
)
def test_file_tools_cannot_write_git_config_or_hooks(tool: str, tool_input: dict[str, object]) -> None:
    event = {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input, "cwd": CWD}
    out = secrets_guard.check_event(event)
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert ".git" in out["hookSpecificOutput"]["permissionDecisionReason"].lower()


def test_file_tools_near_misses_for_git() -> None:
    for path in (
        "/repo/.github/workflows/ci.yml",
        "/repo/.gitignore",
        "/repo/.git-hooks/x",
        "/repo/docs/.git.md",
        "/repo/.git/modules/sub/HEAD",
        "/repo/.GITIGNORE",
        "/repo/notes.",
    ):
        event = {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"file_path": path}}
        assert secrets_guard.check_event(event) is None, path
    assert shell_guard.check_event({"tool_name": "Write", "tool_input": {"file_path": "/r/.git/config"}}) is None


def test_through_hookgate_run(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    cases = [
        ("Write", {"file_path": f"{SITE}/configs/default.yaml", "content": "hooks: {}"}),
        ("Edit", {"file_path": f"{tmp_path}/.git/hooks/pre-commit", "old_string": "a", "new_string": "b"}),
        ("Bash", {"command": f"sed -i 's/deny/allow/' {SITE}/configs/default.yaml"}),
        ("Bash", {"command": "python3 -m gateway approvals approve 1"}),
        ("Bash", {"command": "pip uninstall -y hookgate"}),
        ("Bash", {"command": f"sqlite3 {tmp_path}/.local/state/hookgate/state.sqlite3 'delete from audit_records'"}),
    ]
    for tool, tool_input in cases:
        event = {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input, "cwd": str(tmp_path)}
        proc = run_hookgate(["run"], event, env=env)
        assert proc.returncode == 2, (tool, tool_input, proc.stdout, proc.stderr)
    ls = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}
    ok = run_hookgate(["run"], ls, env=own_state(tmp_path))
    assert ok.returncode == 0


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (f"cp -t {SITE} notes.txt", None),
        (f"cp notes.txt {SITE}/notes.txt", None),
        (f"cp -t {SITE} .env", "deny:write.secrets"),
        (f"cp -r build {SITE}/configs", CONFIG),
    ],
)
def test_copying_into_the_folder_that_holds_hookgate_is_not_replacing_it(command: str, expected: str | None) -> None:
    # The guard's answer must not depend on where hookgate happens to be installed (a checkout under /tmp made
    # `cp -t /tmp .env` read as replacing hookgate): only replacing the installed folders themselves is self-change.
    assert rule_of(command) == expected
