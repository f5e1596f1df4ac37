"""Variables a command line sets and then runs or passes on (``configs.guards.destructive.variables``):
``x='rm -rf ~'; eval "$x"`` is ``rm -rf ~``. Commands are data here: analysed, never run."""

from __future__ import annotations

import pytest

from configs.guards.destructive.lexer import Lexer
from configs.guards.destructive.variables import MAX_TEXTS, remember, substituted
from tests.unit.guards.common import RM, rule_of


@pytest.mark.parametrize(
    "command, rule",
    [
        ("x='rm -rf ~'; eval \"$x\"", RM),
        ("x='rm -rf /home/dev'; eval $x", RM),
        ("x='rm -rf /home/dev'; $x", RM),
        ("c=rm; $c -rf ~", RM),
        ('c=rm; "$c" -rf /home/dev', RM),
        ("c=rm\n${c} -rf /", RM),
        ("export CMD='git push -f'; bash -c \"$CMD\"", "deny:git.push-force"),
        ("local t='git reset --hard'; eval \"$t\"", "deny:git.reset-hard"),
        ("if test -f x; then c=rm; else c=ls; fi; $c -rf /home/dev", RM),  # either value may run
        ("if test -f x; then c=ls; else c=rm; fi; $c -rf /home/dev", RM),
        ("p=/; rm -rf ${p}", RM),
        ('p="/home/dev/my dir"; rm -rf "$p"', RM),
        ("g='*'; rm -rf $g", RM),  # unquoted: the value still globs
        ("a=rm; b=-rf; $a $b ~", RM),
        ("x='rm -rf ~'; sh -c \"$x\"", RM),
    ],
)
def test_what_a_variable_holds_is_checked_where_it_runs(command: str, rule: str) -> None:
    assert rule_of(command) == rule


@pytest.mark.parametrize(
    "command",
    [
        "x='ls -la'; eval \"$x\"",
        "x=1; echo $x",
        "msg='a; rm -rf ~'; echo \"$msg\"",  # printed, not run
        "msg='a; rm -rf ~'; echo $msg",  # split into words, not read as commands
        "x=$x:/usr/bin; echo $x",
        "d=build; make clean && ls $d",
        "c='npm test'; $c",
        "x='rm -rf ~'; echo '$x'",  # single quotes: no expansion
    ],
)
def test_harmless_values_pass(command: str) -> None:
    assert rule_of(command) is None


def _words(command: str) -> list:  # type: ignore[type-arg]
    from configs.guards.destructive.expand import commands

    return [cmd.words for cmd in commands(Lexer(command, 0).run())]


def test_remember_keeps_every_value_a_name_was_given_and_skips_self_references() -> None:
    variables: dict[str, list[str]] = {}
    for words in _words('a=1; a=2; a=1; b=$b:x; c="$HOME/x"'):
        remember(words, variables)
    assert variables == {"a": ["2", "1"], "c": ["$HOME/x"]}


def test_substituted_is_empty_without_a_known_variable_and_bounded_in_combinations() -> None:
    [words] = _words('rm -rf "$d" $e')
    assert substituted(words, {"other": ["x"]}) == []
    many = {name: [str(i) for i in range(4)] for name in ("d", "e")}
    texts = substituted(words, many)
    assert len(texts) == MAX_TEXTS and texts[0] == 'rm -rf "3" 3'


def test_substituted_takes_time_linear_in_the_names_it_fills_in() -> None:
    """A copied dict per name made this quadratic (40,000 names took seconds; these would take minutes). The
    alarm only catches a runaway: linear, this takes about a second."""
    import signal

    class Runaway(BaseException):
        pass

    def runaway(signum: int, frame: object) -> None:
        raise Runaway("substituted did not finish within 30 s")

    names = [f"v{i}" for i in range(200_000)]
    [words] = _words(" ".join("$" + name for name in names))
    previous = signal.signal(signal.SIGALRM, runaway)
    signal.alarm(30)
    try:
        texts = substituted(words, {name: [""] for name in names})
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert texts == [""]
