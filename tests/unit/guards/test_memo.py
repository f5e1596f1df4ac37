"""The shell guard remembers a verdict only when it came from the command's text alone: a remembered
verdict is always what a fresh analysis gives, and a verdict that read the environment or the file
system (``destructive.outside``) is found afresh each time."""

from __future__ import annotations

import random

import pytest

from configs.guards import destructive
from configs.guards.destructive import _MEMO, MEMO_SIZE, Settings, _analyse, active, analyse, configure

from .common import CWD

WORDS = [
    "rm", "-rf", "-r", "~", "/", "build", "git", "push", "--force", "origin", "main", "reset", "--hard", "npm",
    "test", "ls", "-la", "echo", "hi", ">", "/tmp/x", "&&", "|", "sh", "-c", "'rm -rf /'", "$HOME", "cat",
    ".env", "sed", "-i", "s/a/b/", "x.py", "curl", "http://127.0.0.1:8787/mode", "chmod", "-R", "777", ".",
    "find", "-delete", "dd", "of=/dev/sda", "tar", "--remove-files", "mkfs.ext4", "/dev/sdb1", ";", "$(rm -rf ~)",
]  # fmt: skip


@pytest.fixture(autouse=True)
def _fresh_memo() -> None:
    _MEMO.clear()


def shape(found: object) -> object:
    return None if found is None else (found.rule, found.decision, found.reason, found.part)  # type: ignore[attr-defined]


def test_remembered_verdicts_are_what_a_fresh_analysis_gives() -> None:
    rng = random.Random(7)
    commands = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6))) for _ in range(3000)]
    for command in commands * 2:  # the second round answers from the memo where it may
        assert shape(analyse(command, CWD)) == shape(_analyse(command, CWD, active())), command
    assert 0 < len(_MEMO) < len(set(commands))  # some were remembered, and some were not


def test_a_text_only_verdict_is_remembered_per_command_and_cwd() -> None:
    first = analyse("git push --force origin main", CWD)
    assert first is not None and first.rule == "git.push-force"
    assert analyse("git push --force origin main", CWD) is first
    assert analyse("git push --force origin main", "/elsewhere") is not first
    assert analyse("npm test", CWD) is None and ("npm test", CWD) in _MEMO


def test_a_verdict_that_read_home_follows_home(monkeypatch: pytest.MonkeyPatch) -> None:
    command = "rm -rf /tmp/alice"  # in a temp directory: allowed, unless it is the home directory
    monkeypatch.setenv("HOME", "/tmp/alice")
    assert shape(analyse(command, CWD)) is not None
    assert (command, CWD) not in _MEMO
    monkeypatch.setenv("HOME", "/home/bob")
    assert analyse(command, CWD) is None


def test_a_verdict_that_read_tmpdir_follows_tmpdir(monkeypatch: pytest.MonkeyPatch) -> None:
    command = "rm -rf /scratch/t/build-cache"
    monkeypatch.setenv("TMPDIR", "/scratch/t")
    assert analyse(command, CWD) is None  # inside the temp directory
    monkeypatch.setenv("TMPDIR", "/var/other")
    assert shape(analyse(command, CWD)) is not None
    assert (command, CWD) not in _MEMO


@pytest.mark.parametrize(
    ("command", "in_home", "in_temp"),
    [
        ("shred -u ~/notes.txt", "shred.outside", None),
        ("pwsh -c 'Remove-Item -Recurse $HOME/build'", "rm.recursive", None),
        ("bwrap --bind ~ /x rm -rf /x", "rm.recursive", "rm.recursive"),
    ],
)
def test_verdicts_through_the_new_launchers_and_interpreters_follow_home(
    command: str, in_home: str, in_temp: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", CWD)  # the project is the home directory: neither a file nor a build folder may go
    first = analyse(command, CWD)
    assert first is not None and first.rule == in_home
    monkeypatch.setenv("HOME", "/tmp/alice")  # below a temp root: they may go
    second = analyse(command, CWD)
    assert (second.rule if second else None) == in_temp
    assert (command, CWD) not in _MEMO


def test_a_verdict_is_not_reused_under_other_tuning() -> None:
    assert analyse("git push --force origin main", CWD) is not None
    relaxed = Settings(rules={"git.push-force": "off"})
    assert analyse("git push --force origin main", CWD, relaxed) is None
    configure(relaxed)
    try:
        assert analyse("git push --force origin main", CWD) is None
    finally:
        configure(None)
    assert analyse("git push --force origin main", CWD) is not None


def test_the_memo_keeps_the_latest_entries() -> None:
    for n in range(MEMO_SIZE + 50):
        analyse(f"echo {n}", CWD)
    assert len(_MEMO) == MEMO_SIZE
    assert ("echo 0", CWD) not in _MEMO and (f"echo {MEMO_SIZE + 49}", CWD) in _MEMO
    assert ("x" * (destructive.MEMO_CHARS + 1), CWD) not in _MEMO
    analyse("echo " + "x" * destructive.MEMO_CHARS, CWD)
    assert ("echo " + "x" * destructive.MEMO_CHARS, CWD) not in _MEMO  # too long to remember


def test_the_memo_is_safe_under_threads() -> None:
    """Threads analysing (and so evicting) at once: every verdict right, none raises, the memo bounded."""
    import sys
    import threading

    errors: list[BaseException] = []
    wrong: list[str] = []

    def work(n: int) -> None:
        try:
            for i in range(3000):
                command = f"git push --force origin main # {n} {i}"
                found = analyse(command, CWD)
                if found is None or found.rule != "git.push-force":
                    wrong.append(command)
        except BaseException as exc:
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == [] and wrong == []
    assert len(_MEMO) <= 2 * MEMO_SIZE
