"""Claude Code's matcher algorithm, Kiro matchers, and `if` permission rules."""

from __future__ import annotations

import pytest

from gateway.bash_split import command_matches, split_commands
from gateway.errors import ConfigError
from gateway.events import HookEvent
from gateway.matching import (
    IfRule,
    backtracks,
    claude_matcher,
    kiro_matcher,
    matcher_problem,
    matcher_warning,
    path_matches,
)


@pytest.mark.parametrize(
    ("pattern", "value", "expected"),
    [
        (None, "Bash", True),
        ("", "Bash", True),
        ("*", "anything", True),
        ("Bash", "Bash", True),
        ("Bash", "bash", False),
        ("Bash", "BashOutput", False),
        ("Write|Edit", "Edit", True),
        ("Write|Edit", "MultiEdit", False),
        ("Write, Edit", "Edit", True),
        ("Write,Edit", "Write", True),
        ("code-reviewer", "senior-code-reviewer", False),
        ("mcp__brave-search", "mcp__brave-search__x", False),
        ("mcp__memory", "mcp__memory__create", False),
        ("Edit.*", "NotebookEdit", True),
        ("^Edit$", "NotebookEdit", False),
        ("^Edit$", "Edit", True),
        ("mcp__memory__.*", "mcp__memory__create", True),
        ("mcp__.*__write", "mcp__fs__write_file", True),
        ("^my-plugin:reviewer$", "my-plugin:reviewer", True),
        (r"\d", "٣", False),  # JavaScript's \d is ASCII only
    ],
)
def test_claude_matcher(pattern: str | None, value: str, expected: bool) -> None:
    assert claude_matcher(pattern)(value) is expected


def test_filechanged_uses_the_narrow_exact_set() -> None:
    narrow = "A-Za-z0-9_|"
    assert claude_matcher(".envrc|.env", narrow)(".env")  # regex path: '.' is any char, unanchored
    assert claude_matcher("a-b", narrow)("xa-by")  # '-' sends it down the regex path
    assert not claude_matcher("a,b", narrow)("a")  # ',' is not a separator there


@pytest.mark.parametrize("pattern", ["(?P<x>Bash)", "(?i)bash", r"Bash\Z", "(?>Bash)"])
def test_python_only_regex_is_rejected(pattern: str) -> None:
    with pytest.raises(ConfigError, match="JavaScript"):
        claude_matcher(pattern)


def test_permission_rule_in_matcher_is_a_problem() -> None:
    problem = matcher_problem("Bash(git commit*)")
    assert problem is not None and "if" in problem and "never fires" in problem
    assert matcher_problem("Bash|Write") is None
    assert "not a valid regular expression" in (matcher_problem("Bash[") or "")


@pytest.mark.parametrize(
    ("pattern", "risky"),
    [
        ("(a+)+$", True),
        ("(a|aa)+$", True),
        ("(.*a){20}", True),
        ("a*a*a*b", True),
        ("x{2,}y{3,}z+", True),
        ("mcp__.*__write", False),
        ("^mcp__(github|gitlab)__.*", False),
        ("(Write|Edit)", False),
        ("x{2,5}y+", False),
        (r"foo\*bar\*baz\*", False),
    ],
)
def test_matchers_that_can_backtrack_are_told_apart(pattern: str, risky: bool) -> None:
    assert backtracks(pattern) is risky
    assert (matcher_warning(pattern) is not None) is risky


def test_a_backtracking_matcher_is_bounded_and_counts_as_a_match_when_it_runs_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """(a|aa)+$ on 40 a's and a '!' takes minutes in any backtracking engine: bounded, it matches."""
    import time

    accepts = claude_matcher("(a|aa)+$")
    started = time.perf_counter()
    assert accepts("a" * 40 + "!") is True
    assert time.perf_counter() - started < 2
    assert "counted as a match" in caplog.text
    assert accepts("aaaa") is True and accepts("b") is False  # an ordinary search answers as before
    assert matcher_warning("Write|Edit") is None


@pytest.mark.parametrize(
    ("pattern", "name", "expected"),
    [
        ("fs_write", "fs_write", True),
        ("fs_write", "fs_read", False),
        ("fs_*", "fs_read", True),
        ("@git", "@git/status", True),
        ("@git", "@github/x", False),
        ("@git/status", "@git/status", True),
        ("@builtin", "execute_bash", True),
        ("@builtin", "@git/status", False),
        ("*", "@git/status", True),
    ],
)
def test_kiro_matcher(pattern: str, name: str, expected: bool) -> None:
    assert kiro_matcher(pattern)(name) is expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("npm run build && rm -rf dist/tmp", ["npm run build", "rm -rf dist/tmp"]),
        ("a || b; c | d |& e & f\ng", ["a", "b", "c", "d", "e", "f", "g"]),
        ("FOO=bar BAZ=1 git push", ["git push"]),
        ("echo $(rm -rf /)", ["echo $(rm -rf /)", "rm -rf /"]),
        ("echo `rm x`", ["echo `rm x`", "rm x"]),
    ],
)
def test_split_commands(command: str, expected: list[str]) -> None:
    assert split_commands(command) == expected


@pytest.mark.parametrize(
    ("pattern", "command", "expected"),
    [
        ("rm *", "rm -rf /", True),
        ("rm *", "rm", True),
        ("rm *", "npm run build && rm -rf dist", True),
        ("rm *", "echo $(rm -rf /)", True),
        ("rm *", "echo $(date)", False),
        ("rm *", "rmdir x", False),
        ("ls *", "lsof", False),
        ("ls*", "lsof", True),
        ("ls:*", "ls -la", True),
        ("ls:*", "lsof", False),
        ("git *", "FOO=bar git push", True),
        ("git *", "npm test && git push", True),
        ("git push *", "git push $REMOTE", True),  # names more than the command: $VAR -> the hook runs
        ("git push *", "git pull", False),
        ("npm test", "npm test", True),
        ("npm test", "npm test -- -x", False),
        ("rm *", "echo 'unterminated", True),  # unparseable fails open
    ],
)
def test_bash_if_rules(pattern: str, command: str, expected: bool) -> None:
    assert command_matches(pattern, command) is expected


def _event(tool: str, tool_input: dict, cwd: str = "/repo") -> HookEvent:
    return HookEvent({"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input, "cwd": cwd})


@pytest.mark.parametrize(
    ("rule", "tool", "tool_input", "expected"),
    [
        ("Bash(rm *)", "Bash", {"command": "ls && rm -r x"}, True),
        ("Bash(rm *)", "Write", {"file_path": "/repo/rm"}, False),
        ("Bash", "Bash", {"command": "anything"}, True),
        ("Edit(src/**/*.ts)", "Edit", {"file_path": "/repo/src/a/b.ts"}, True),
        ("Edit(src/**/*.ts)", "Edit", {"file_path": "/repo/lib/src/b.ts"}, False),
        ("Edit(src/**)", "Write", {"file_path": "/repo/src/x.py"}, True),
        ("Edit(*.ts)", "Edit", {"file_path": "/repo/deep/x.ts"}, True),
        ("Edit(**/.env)", "Write", {"file_path": "/repo/a/.env"}, True),
        ("Edit(//etc/**)", "Write", {"file_path": "/etc/passwd"}, True),
        ("Edit(src/**)", "Edit", {"file_path": "/elsewhere/src/x"}, False),
        ("Read(*.md)", "Read", {"file_path": "/repo/README.md"}, True),
        ("mcp__github__create_issue", "mcp__github__create_issue", {}, True),
        ("mcp__github", "mcp__github__create_issue", {}, True),
        ("mcp__github__*", "mcp__github__list", {}, True),
        ("mcp__github__create_issue", "mcp__github__list", {}, False),
        ("WebFetch(domain:example.com)", "WebFetch", {"url": "https://docs.example.com/x"}, True),
        ("WebFetch(domain:example.com)", "WebFetch", {"url": "https://evil.com/example.com"}, False),
        # the host as a browser reaches it: case folded, user info and trailing dot dropped, a backslash
        # read as a slash; a url that is not a string runs the hook (the rule cannot judge it)
        ("WebFetch(domain:example.com)", "WebFetch", {"url": "https://EXAMPLE.com/x"}, True),
        ("WebFetch(domain:example.com)", "WebFetch", {"url": "HTTPS://example.com/x"}, True),
        ("WebFetch(domain:example.com)", "WebFetch", {"url": "https://user:pw@example.com/x"}, True),
        ("WebFetch(domain:example.com)", "WebFetch", {"url": "https://example.com./x"}, True),
        ("WebFetch(domain:example.com)", "WebFetch", {"url": "https://example.com\\@evil.test/"}, True),
        ("WebFetch(domain:Example.COM)", "WebFetch", {"url": "https://docs.example.com/"}, True),
        ("WebFetch(domain:example.com)", "WebFetch", {"url": ["https://example.com/"]}, True),
    ],
)
def test_if_rules(rule: str, tool: str, tool_input: dict, expected: bool) -> None:
    assert IfRule.parse(rule).matches(_event(tool, tool_input)) is expected


def test_if_rule_syntax_error() -> None:
    with pytest.raises(ConfigError, match="permission rule"):
        IfRule.parse("Bash(rm *")


def test_project_relative_and_home_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/u")
    assert path_matches("~/.ssh/**", "/home/u/.ssh/id_rsa", cwd="/repo")
    assert path_matches("/docs/*.md", "/proj/docs/a.md", cwd="/proj/sub", project_dir="/proj")
    assert not path_matches("/docs/*.md", "/proj/sub/docs/a.md", cwd="/proj/sub", project_dir="/proj")


@pytest.mark.parametrize(
    "pattern",
    [
        "^mcp__.+__",
        "^Edit$",
        "^Edit",
        "^Edit|Write",
        "^ab?c",
        "^a{0,2}b",
        "^a+x",
        "^mcp__(fs|git)__",
        r"^\w+$",
        "Edit.*",
        "^my-plugin:x$",
    ],
)
@pytest.mark.parametrize(
    "value", ["mcp__fs__write", "Edit", "NotebookEdit", "Write", "ac", "abc", "bc", "aax", "my-plugin:x", ""]
)
def test_validated_matcher_answers_as_the_compiled_regex(pattern: str, value: str) -> None:
    # the dispatcher's matcher skips compiling an anchored regex when the value lacks its literal prefix
    assert claude_matcher(pattern, validated=True)(value) is claude_matcher(pattern)(value)


def test_a_posix_like_class_compiles_without_a_warning_and_as_javascript_reads_it() -> None:
    """``[[:alpha:]]+`` is no POSIX class in JavaScript either: the set ``[:alph`` then ``]+``. Python's
    engine reads it the same, and its FutureWarning about nested sets (printed on every ``hookgate run``)
    is not shown."""
    import warnings

    claude_matcher.cache_clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        matches = claude_matcher("[[:alpha:]]+")
    assert matches("a]") and matches("p]]") and not matches("Bash")
