"""Bypasses a security review found in the default shell guard, each with several disguises and the near misses
that must still pass: git subcommands that run a shell command, a ``cd`` hidden in ``sh -c``/``eval`` or done by
``env -C``/``sudo -D``, and ``allowCommands`` used outside the project directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from configs.guards.destructive import Settings
from tests.conftest import run_hookgate
from tests.unit.guards.common import RM, rule_of
from tests.unit.guards.conftest import own_state

EXT = "ask:git.ext-command"


GIT_RUNS = [
    "git bisect run rm -rf ~",
    "git bisect run sh -c 'rm -rf /'",
    "git submodule foreach 'rm -rf ~'",
    "git submodule foreach --recursive rm -rf /",
    "git submodule --quiet foreach 'rm -rf $toplevel/..'",
    "git filter-branch --tree-filter 'rm -rf ~' HEAD",
    "git filter-branch --index-filter='rm -rf /' -- --all",
    "git filter-branch -f --msg-filter 'rm -rf ~' HEAD",
    "git filter-branch --env-filter 'rm -rf ~'",
    "git filter-branch --commit-filter 'rm -rf ~; git commit-tree \"$@\"'",
    "git difftool -x 'rm -rf ~'",
    "git difftool --extcmd='rm -rf ~'",
    "git difftool --extcmd 'rm -rf /' HEAD~1",
    "git grep -O'rm -rf ~' foo",
    "git grep --open-files-in-pager='rm -rf ~' foo",
    "git fetch --upload-pack='rm -rf ~' origin",
    "git ls-remote --upload-pack 'rm -rf ~' origin",
    "git pull --upload-pack='rm -rf ~'",
    "git clone -u 'rm -rf ~' https://example.com/x.git y",
    "git clone --upload-pack='rm -rf /' x",
    "git push --receive-pack='rm -rf ~' origin",
    "git archive --remote=origin --exec='rm -rf ~' HEAD",
    "git mergetool --tool-cmd='rm -rf ~'",
    "git send-email --to-cmd='rm -rf ~' x.patch",
    "git send-email --cc-cmd 'rm -rf /' x.patch",
    "git -c sendemail.tocmd='rm -rf ~' send-email x.patch",
    "git -c uploadpack.packObjectsHook='rm -rf ~' clone file:///srv/x y",
    "git clone 'ext::sh -c rm% -rf% ~' x",
    "git -c protocol.ext.allow=always fetch 'ext::rm -rf /'",
    "sudo git -C repo submodule foreach rm -rf ~",
]


@pytest.mark.parametrize("command", GIT_RUNS)
def test_git_commands_that_run_a_command_are_checked_like_a_shell(command: str) -> None:
    assert rule_of(command) == RM


@pytest.mark.parametrize(
    "command",
    [
        "git clone 'ext::ssh -o ProxyCommand=nc host' dir",
        "git -c protocol.ext.allow=always fetch 'ext::git-remote-x %S'",
        "git remote add x 'ext::sh -c true'",
        "git -c uploadpack.packObjectsHook=./pack.sh clone file:///srv/x y",
    ],
)
def test_ext_remotes_and_pack_objects_hooks_ask(command: str) -> None:
    assert rule_of(command) == EXT


@pytest.mark.parametrize(
    "command",
    [
        "git bisect run make test",
        "git bisect run pytest -x tests/",
        "git submodule foreach git pull",
        "git submodule update --init --recursive",
        "git filter-branch --tree-filter 'rm -f secrets.txt' HEAD",
        "git difftool -x meld",
        "git grep -O foo",
        "git grep -n upload-pack",
        "git fetch origin",
        "git clone https://example.com/x.git",
        "git push origin main",
        "git send-email --to=dev@example.com x.patch",
    ],
)
def test_everyday_git_still_passes(command: str) -> None:
    assert rule_of(command) is None


CD_HIDDEN = [
    "bash -c 'cd .. && rm -rf dist'",
    "sh -c 'cd ~ && rm -rf .cache'",
    "bash -c 'cd / && rm -rf build'",
    'bash -c "cd /; rm -rf node_modules"',
    "bash -c $'true\\ncd ..\\nrm -rf dist'",
    "eval 'cd ..' && rm -rf dist",
    'eval "cd .."; rm -rf build',
    "env -C / rm -rf build",
    "env --chdir=/ rm -rf build",
    "env -C .. rm -rf dist",
    'env -C "$DIR" rm -rf build',
    "sudo -D / rm -rf build",
    "sudo --chdir=/home/dev rm -rf .cache",
    "unshare --wd=/ rm -rf build",
    "env -C / find . -name node_modules -exec rm -rf {} +",
]


@pytest.mark.parametrize("command", CD_HIDDEN)
def test_a_build_folder_delete_counts_where_it_really_runs(command: str) -> None:
    assert rule_of(command) in (RM, "deny:find.delete")


@pytest.mark.parametrize(
    "command",
    [
        "bash -c 'rm -rf dist'",
        "bash -c 'rm -rf dist && cd ..'",
        "sh -c '(cd docs && make html) && rm -rf dist'",
        "env -C /tmp/scratch rm -rf build",
        "env -C packages/web rm -rf node_modules",
        "sudo -D /home/dev/webshop rm -rf build",
        "env FOO=1 rm -rf dist",
    ],
)
def test_build_folder_deletes_where_they_run_in_the_project_pass(command: str) -> None:
    assert rule_of(command) is None


ALLOWED = Settings(allow_commands=["git clean -fdx", "rm -rf ./generated/*"])


@pytest.mark.parametrize(
    "command, rule",
    [
        ("cd ~ && git clean -fdx", "deny:git.clean-force"),
        ("GIT_WORK_TREE=/ git clean -fdx", "deny:git.clean-force"),
        ("GIT_DIR=/srv/x/.git git clean -fdx", "deny:git.clean-force"),
        ("export GIT_WORK_TREE=/; git clean -fdx", "deny:git.clean-force"),
        ("env GIT_WORK_TREE=/ git clean -fdx", "deny:git.clean-force"),
        ("env -C / git clean -fdx", "deny:git.clean-force"),
        ("bash -c 'cd / && git clean -fdx'", "deny:git.clean-force"),
        ("cd / && rm -rf ./generated/*", RM),
        ("pushd /srv; rm -rf ./generated/*", RM),
        ("sudo -D / rm -rf ./generated/*", RM),
        ("HOME=/ git clean -fdx", "deny:git.clean-force"),
    ],
)
def test_allowed_commands_only_pass_in_the_project(command: str, rule: str) -> None:
    assert rule_of(command, settings=ALLOWED) == rule


@pytest.mark.parametrize(
    "command",
    [
        "git clean -fdx",
        "rm -rf ./generated/*",
        "FOO=1 git clean -fdx",
        "git clean -fdx && cd ..",
        "sh -c 'git clean -fdx'",
    ],
)
def test_allowed_commands_still_pass_where_allowed(command: str) -> None:
    assert rule_of(command, settings=ALLOWED) is None


@pytest.mark.parametrize(
    "command",
    ["git submodule foreach 'rm -rf ~'", "bash -c 'cd .. && rm -rf dist'", "env -C / rm -rf build"],
)
def test_through_hookgate_run(command: str, tmp_path: Path) -> None:
    event = {
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "cwd": "/srv/app",
        "tool_input": {"command": command},
    }
    proc = run_hookgate(["run"], event, env=own_state(tmp_path))
    assert proc.returncode == 2 and "rm.recursive" in proc.stderr, (proc.stdout, proc.stderr)


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("fd -t d node_modules -x rm -rf", RM),
        ("fd -t d build -x rm -rf {}", RM),
        ("fd . ~ -X rm -rf", RM),
        ("fdfind -e log --exec-batch rm -r", RM),
        ("fd x --exec sh -c 'rm -rf ~'", RM),
        ("fd -x git push --force", "deny:git.push-force"),
        ("fd -e py -x echo {} \\; -x rm -rf", RM),
        ("fd -e py -x wc -l", None),
        ("fd -e tmp -x rm", None),
        ("fd -e md", None),
        ("fd -x", None),
    ],
)
def test_fd_exec_runs_its_command_on_every_result(command: str, rule: str | None) -> None:
    assert rule_of(command) == rule


REVIEW_4 = [  # the fresh-eyes review of session 4: each passed before
    "/usr/bin/aw? 'BEGIN{system(\"rm -rf ~\")}'",  # a glob command name that can match awk
    "/usr/bin/f? . -x rm -rf",  # ... or fd
    "fd . --exec=rm -rf",
    "fd . -xrm -rf",
    "fd . --exec-batch=rm -rf",
    "env -a foo rm -rf ~",  # GNU env's -a/--argv0 takes a value
    "sudo -h host rm -rf ~",  # -h host is --host
    "setpriv --reuid=1000 rm -rf ~",
    "setpriv --reuid 1000 rm -rf ~",
    "prlimit --nofile=10 rm -rf ~",
    "numactl --interleave=all rm -rf ~",
    "numactl -i all rm -rf ~",
    "faketime '2020-01-01' rm -rf ~",
    "fakechroot rm -rf ~",
    "cpulimit -l 50 -- rm -rf ~",
    "cgexec -g cpu:x rm -rf ~",
    "chpst -u x rm -rf ~",
    "trickle -d 10 rm -rf ~",
    "catchsegv rm -rf ~",
    "ssh-agent rm -rf ~",
    "daemonize /bin/rm -rf ~",
    'f() { command rm "$@"; }; f -rf ~',  # a function's body run with the call's arguments
    'f() { rm "$1" "$2"; }; f -rf ~',
    "function g { command rm $*; }; g -rf /",
    'function g() {\n command rm "$@"\n}\ng -rf ~',
    'f()\n{\n command rm "$@"\n}\nf -rf ~',
]


@pytest.mark.parametrize("command", REVIEW_4)
def test_the_fourth_reviews_bypasses_are_denied(command: str) -> None:
    assert rule_of(command) == RM


@pytest.mark.parametrize(
    "command",
    [
        'f() { f "$@"; }; f x',  # a call of itself: checked as its arguments, no endless descent
        'f() { echo "$@"; }; f -rf ~',
        'f() { ls "$@"; }; f -la',
        'f() { command rm "$@"; }; f build.log',
        "setpriv --reuid=1000 ls",
        "numactl -H",
        "env -a x ls",
        "fd . --exec=wc -l",
    ],
)
def test_and_their_near_misses_pass(command: str) -> None:
    assert rule_of(command) is None


LAUNCHERS = [  # session 6: launchers the guard did not know ran their arguments (each passed before)
    "bwrap --bind / / rm -rf /home/user",
    "/usr/bin/bwrap --ro-bind /usr /usr --dev /dev --proc /proc rm -rf ~",
    "sudo bwrap --bind / / -- rm -rf /",
    "bash -c 'bwrap --bind / / rm -rf ~'",
    "bwrap --bind ~ /sandbox rm -rf /sandbox",  # a bind mount shows the home folder under another name
    "bwrap --bind / / --chdir / rm -rf build",  # run in /, not in the project
    "bwrap --setenv GIT_PAGER 'rm -rf ~' --bind / / git log",
    "bwrap --bind . /src rm -rf /src",  # the project itself
    "bwrap --bind . /src --chdir /src rm -rf .",
    "bwrap --bind /home/dev /src --chdir /src rm -rf webshop",
    "bwrap --bind /home/dev/webshop /src --chdir /src/x rm -rf ../..",
    "bwrap --bind /home/dev/webshop /src --chdir /elsewhere rm -rf build",  # not under the bind: not the project
    "bwrap --bind ~ /x bwrap --bind /x /y rm -rf /y",
    "capsh -- -c 'rm -rf /home/user'",
    "/usr/sbin/capsh --drop=cap_net_raw -- -c 'rm -rf ~'",
    "sudo capsh --user=bob -- -c 'rm -rf /'",
    "capsh --shell=/bin/rm -- -rf ~",
    "capsh == -- -c 'rm -rf ~'",
    "start-stop-daemon --start --exec /bin/rm -- -rf /home/user",
    "start-stop-daemon -S -x /bin/rm -- -rf ~",
    "start-stop-daemon --start --exec /usr/bin/env --startas /bin/sh -- -c 'rm -rf ~'",
    "start-stop-daemon --start --exec /bin/rm -- -rf build",  # it runs the program in /
    "rlwrap rm -rf /home/user",
    "rlwrap -a -H hist sudo rm -rf ~",
    "rlwrap -z 'rm -rf ~' cat",  # the filter runs too
    "sh -c 'rlwrap -c bash -c \"rm -rf ~\"'",
]


@pytest.mark.parametrize("command", LAUNCHERS)
def test_launchers_run_their_command(command: str) -> None:
    assert rule_of(command) == RM


def test_a_launcher_runs_the_rest_through_its_rules() -> None:
    assert rule_of("bwrap --overlay a b / --bind / / git reset --hard") == "deny:git.reset-hard"
    assert rule_of("rlwrap git push --force") == "deny:git.push-force"


@pytest.mark.parametrize(
    "command",
    [
        "bwrap --ro-bind / / ls",
        "bwrap --bind / / --dev /dev rm -rf node_modules",
        # the host's view of a bind mount: the project's build folder under another name
        "bwrap --bind /home/dev/webshop /src --chdir /src rm -rf build",
        "bwrap --bind . /src rm -rf /src/build",
        "bwrap --bind . /src --chdir /src/sub rm -rf build",
        "bwrap --ro-bind / / --bind /home/dev/webshop /w --chdir /w rm -rf node_modules dist",
        "bwrap --ro-bind / / --tmpfs /tmp bash -c 'echo hi'",
        "capsh --print",
        "capsh -- -c 'ls -la'",
        "capsh --decode=0x3",
        "start-stop-daemon --start --chdir /home/dev/webshop --exec /bin/rm -- -rf build",
        "start-stop-daemon --stop --exec /bin/rm",
        "start-stop-daemon --start --background --exec /usr/bin/myserver -- --port 80",
        "start-stop-daemon --start --test --exec /bin/rm -- -rf ~",
        "rlwrap python3",
        "rlwrap -aPassword: sqlplus",
        "rlwrap -f words.txt sqlite3 db.sqlite",
    ],
)
def test_launchers_running_ordinary_commands_pass(command: str) -> None:
    assert rule_of(command) is None
