"""Commands a command line defines for itself (functions, aliases, start-up and prompt commands) and one-liners
whose delete target is the home directory computed at run time: known-home targets, denied like ``rm -rf ~``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_hookgate
from tests.unit.guards.common import RM, rule_of
from tests.unit.guards.conftest import own_state


@pytest.mark.parametrize(
    "command, rule",
    [
        ('f(){ "$@"; }; f rm -rf ~', RM),
        ("function g { $@; }; g rm -rf /", RM),
        ('function g() { command "$@"; }\ng rm -rf ~', RM),
        ("f() { eval \"$*\"; }\nf 'rm -rf ~'", RM),
        ("bash -O expand_aliases -c $'alias x=rm\\nx -rf ~'", RM),
        ("shopt -s expand_aliases; alias x='rm -rf'; x ~", RM),
        ("alias nuke='rm -rf /'; nuke", RM),
        ("BASH_ENV=/tmp/x.sh bash -c ls", "deny:exec.unseen"),
        ("env BASH_ENV=./setup.sh bash -c 'make'", "deny:exec.unseen"),
        ("ENV=/tmp/x sh -c ls", "deny:exec.unseen"),
        ("BASH_ENV='$(rm -rf ~)' bash -c ls", RM),
        ("PROMPT_COMMAND='rm -rf ~' bash -i", RM),
        ("export PROMPT_COMMAND='rm -rf ~'", RM),
    ],
)
def test_functions_aliases_and_startup_commands(command: str, rule: str) -> None:
    assert rule_of(command) == rule


@pytest.mark.parametrize(
    "command",
    [
        'python3 -c "import shutil, pathlib; shutil.rmtree(pathlib.Path.home())"',
        "python3 -c \"import shutil, os; shutil.rmtree(os.environ['HOME'])\"",
        "python3 -c \"import shutil, os; shutil.rmtree(os.path.expanduser('~'))\"",
        "python3 -c \"import shutil, os; shutil.rmtree(os.getenv('HOME'))\"",
        'python3 -c "from pathlib import Path; import shutil; shutil.rmtree(Path.home())"',
        "node -e \"require('fs').rmSync(require('os').homedir(), {recursive: true})\"",
        "node -e \"const fs = require('fs'); fs.rmSync(process.env.HOME, {recursive: true, force: true})\"",
        "perl -MFile::Path=rmtree -e 'rmtree($ENV{HOME})'",
        "perl -MFile::Path=remove_tree -e 'remove_tree(\"$ENV{HOME}\")'",
        "ruby -rfileutils -e 'FileUtils.rm_rf(Dir.home)'",
        "ruby -rfileutils -e \"FileUtils.rm_rf(ENV['HOME'])\"",
    ],
)
def test_one_liners_deleting_the_computed_home(command: str) -> None:
    assert rule_of(command) == RM


@pytest.mark.parametrize(
    "command",
    [
        "f(){ echo hi; }; f there",
        'f() { make "$@"; }; f test',
        "alias ll='ls -l'; ll",
        "ENV=production npm start",
        "BASH_ENV=/dev/null bash -c ls",
        "PROMPT_COMMAND='history -a' bash -i",
        "python3 -c \"import os; print(os.environ['HOME'])\"",
        "node -e \"console.log(require('os').homedir())\"",
        "python3 -c \"import shutil, pathlib; shutil.rmtree(pathlib.Path.home() / 'proj' / 'build')\"",
    ],
)
def test_near_misses_pass(command: str) -> None:
    assert rule_of(command) is None


def test_through_hookgate_run(tmp_path: Path) -> None:
    for command in (
        'f(){ "$@"; }; f rm -rf ~',
        'python3 -c "import shutil, pathlib; shutil.rmtree(pathlib.Path.home())"',
    ):
        event = {
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "cwd": "/srv/app",
            "tool_input": {"command": command},
        }
        proc = run_hookgate(["run"], event, env=own_state(tmp_path))
        assert proc.returncode == 2 and "rm.recursive" in proc.stderr, (command, proc.stderr)
