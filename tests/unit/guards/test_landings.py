"""Hook configuration reached where a write lands rather than where it is named: a directory copied, moved or
linked into place under its own name (``cp -a /tmp/evil/.claude ./``), a directory's contents copied into a
config folder (``cp -r evil/.claude/. .claude/``), git's own deletes and moves (``git rm``, ``git mv``), archives
extracted into a config folder or with a config member named (``tar -C .claude -xf x.tar``, ``unzip x.zip
.claude/settings.json``), and the folder that holds the hook configuration moved away (``mv ~ /tmp/x``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from configs.guards.destructive import analyse
from tests.conftest import run_hookgate
from tests.unit.guards.common import CWD, cases, rule_of
from tests.unit.guards.conftest import own_state

CONFIG = "deny:write.hook-config"
GIT = "deny:write.git-config"
SECRETS = "deny:write.secrets"

PLACED = [
    *cases(
        CONFIG,
        "cp -a /tmp/evil/.claude ./",
        "cp -R /tmp/evil/.claude/ .",
        "cp -r evil/.claude/. .claude/",
        "cp -r /tmp/evil/.kiro .",
        "cp -r /tmp/evil/.codex .",
        "cp -r /tmp/evil/.gemini .",
        "rsync -a evil/.claude/ .claude/",
        "rsync -a evil/.claude .",
        "mv /tmp/evil/.claude .",
        "ln -s /tmp/evil/.claude .",
        "cp -r ~/.claude .",
        "cp -r /tmp/evil/.claude ~/",
        "cp -r /tmp/evil/.claude ~",
        "cp -r /tmp/evil/.claude $HOME",
        f"cp -r /tmp/evil/.claude {CWD}",  # the project: a directory that exists, slash or not
        "cp -r /tmp/evil/.claude ..",  # a folder holding the project
        "cp -r -t . /tmp/evil/.claude",
        "cp -r a /tmp/evil/.claude .",
        "cp -r agents .kiro/",  # a config folder put inside another: .kiro/agents
        "cp -r /tmp/evil/.c* .",  # a glob that can name one
        "cd ~ && cp -r /tmp/evil/.claude .",
    ),
    *cases(GIT, "cp -r /tmp/evil/.git .", "cp -a x/.git ./", "rsync -a x/.git .", "cp -r x/. .git/"),
    # .git named without a trailing slash: a directory wherever a repository is, so what lands is .git/NAME
    # (cp -r hooks .git -> .git/hooks); where it is not, or with -T, the copy writes .git itself, and a
    # gitdir: file or a link there points git at another config and hooks
    *cases(
        GIT,
        "cp -r hooks .git",
        "cp config .git",
        "cp -r hooks ./.git",
        "rsync -a hooks .git",
        "cp -rT /tmp/evil .git",
        "ln -s /tmp/evil .git",
        "mv /tmp/evil .git",
        "cp -r x sub/.git",
        "echo 'gitdir: /tmp/evil' > .git",
        f"cp -r hooks {CWD}/.git",
    ),
]


@pytest.mark.parametrize(("command", "expected"), PLACED)
def test_a_directory_that_lands_as_hook_configuration_is_denied(command: str, expected: str) -> None:
    assert rule_of(command) == expected


def test_the_reason_names_where_the_directory_lands() -> None:
    found = analyse("cp -a /tmp/evil/.claude ./", CWD)
    assert found is not None and "./.claude" in found.reason and "guard rails" in found.reason
    found = analyse("cp -r evil/.claude/. .claude/", CWD)
    assert found is not None and "contents into .claude" in found.reason
    found = analyse("cp -r /tmp/evil/.git .", CWD)
    assert found is not None and ".git folder" in found.reason


GIT_AND_ARCHIVES = [
    *cases(
        CONFIG,
        "git rm .claude/settings.json",
        "git rm -r .claude",
        "git rm -q hookgate.yaml",
        "git -C sub rm .claude/settings.json",
        "git mv -f x .claude/settings.json",
        "git mv hookgate.yaml x",
        "git mv .claude old/",
        "tar xf evil.tar .claude/settings.json",
        "tar -C .claude -xf evil.tar",
        "tar -xf evil.tar -C .claude",
        "tar --extract --file=evil.tar --directory=.claude",
        "tar xfC evil.tar .claude",
        "tar -xzf evil.tgz .claude",
        "tar -xf evil.tar -C ~/.codex",
        "gtar -xf evil.tar hookgate.yaml",
        "bsdtar -xf evil.tar -C .kiro/agents",
        "unzip -o evil.zip -d .claude",
        "unzip evil.zip .claude/settings.json",
        "unzip -o evil.zip -d ~/.claude",
        "unzip -j evil.zip a/settings.json -d .claude/",
    ),
    *cases(SECRETS, "git rm .env", "tar xf x.tar .env", "unzip x.zip .ssh/authorized_keys -d ~"),
    *cases(GIT, "tar -xf x.tar -C .git", "tar xf x.tar .git/hooks/pre-commit", "git mv hooks .git/"),
]


@pytest.mark.parametrize(("command", "expected"), GIT_AND_ARCHIVES)
def test_git_deletes_and_moves_and_archive_extraction_reach_hook_configuration(command: str, expected: str) -> None:
    assert rule_of(command) == expected


MOVED_AWAY = [
    ("mv ~ /tmp/x", CWD),
    ("mv $HOME /tmp/x", CWD),
    ("mv . ../x", CWD),
    ("mv ./ ../x", CWD),
    ("mv .. /tmp/x", CWD),
    ('mv "$PWD" /tmp/x', CWD),
    ("mv /home /x", CWD),
    ("mv /srv/proj /srv/x", "/srv/proj"),
    ("mv /srv /x", "/srv/proj/sub"),
    ("cd /tmp && mv proj x", "/tmp/proj"),
    ("git mv . ../x", CWD),
]


@pytest.mark.parametrize(("command", "cwd"), MOVED_AWAY)
def test_moving_the_home_or_project_folder_away_moves_its_hook_configuration(command: str, cwd: str) -> None:
    assert rule_of(command, cwd) == CONFIG
    found = analyse(command, cwd)
    assert found is not None and "hook configuration it holds" in found.reason


EVERYDAY = [
    "cp -r src/ build/",
    "cp -a assets dist/",
    "cp -r .claude backup/",  # a backup of one's configuration, not a configuration in place
    "cp -r ~/.claude /tmp/claude-backup/",
    "cp -r x/.git /tmp/backup/",
    "cp -r x/.git /tmp/backup",
    "cp -r .git backup",
    "cp x.txt notes.git",
    "cp -r hooks gitstuff",
    "cp ignore .git/info/exclude",
    f"cp -r /tmp/evil/.claude {CWD}/sub",
    "cp notes.md .claude/",
    "cp -r commands .claude/",
    "cp -r /tmp/template/. .",  # what the folder holds cannot be known, as for a plain tar xf
    "rsync -a ../template/ ./",
    "rsync -a src/ build/",
    "rsync -a .claude host:backup/",
    "git rm old.txt",
    "git rm --cached hookgate.yaml",
    "git rm -r --cached .",
    "git rm -n hookgate.yaml",
    "git mv a.py b.py",
    "git mv -n hookgate.yaml x",
    "tar xzf node.tar.gz",
    "tar xf x.tar",
    "tar -xf x.tar -C /tmp/out",
    "tar -tf x.tar .claude/settings.json",
    "tar -xOf x.tar hookgate.yaml",
    "tar -czf backup.tgz .claude",
    "unzip data.zip -d data",
    "unzip x.zip",
    "unzip -l x.zip .claude/settings.json",
    "unzip -p x.zip hookgate.yaml",
    "mv build old-build",
    "mv ~/projects/a ~/projects/b",
    "mv ./build ../other/build",
]


@pytest.mark.parametrize("command", EVERYDAY)
def test_everyday_copies_moves_and_extractions_pass(command: str) -> None:
    assert rule_of(command) is None


def test_hookgate_run_denies_a_config_folder_copied_into_the_project(tmp_path: Path) -> None:
    for command, code in (("cp -a /tmp/evil/.claude ./", 2), ("cp -r src/ build/", 0)):
        event = {
            "hook_event_name": "PreToolUse",
            "session_id": "s",
            "cwd": "/tmp/proj",
            "tool_name": "Bash",
            "tool_input": {"command": command},
        }
        proc = run_hookgate(["run", "--config", "builtin:default"], event, env=own_state(tmp_path))
        assert proc.returncode == code, (command, proc.stdout, proc.stderr)
        assert ("write.hook-config" in proc.stdout) == (code == 2)
