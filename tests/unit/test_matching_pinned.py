"""Pins matchers and ``if`` rules exactly as Claude Code reads them (hooks reference §2.1, §2.3):
exact lists, regexes, Kiro matchers, every rule family (shell, file, WebFetch ``domain:``,
``Task(...)``, ``WebSearch(...)``, MCP), the file rule with no path, and Bash command splitting."""

from __future__ import annotations

import os
from typing import Any

import pytest

from gateway.bash_split import command_matches, split_commands
from gateway.errors import ConfigError
from gateway.events import HookEvent
from gateway.matching import IfRule, claude_matcher, kiro_matcher, matcher_problem, path_matches

# --- Claude Code matchers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pattern,value,expected",
    [
        (None, "Bash", True),
        ("", "x", True),
        ("*", "anything", True),
        ("Bash", "Bash", True),
        ("Bash", "bash", False),
        ("Bash", "Bash2", False),
        ("Edit|Write", "Write", True),
        ("Edit|Write", "Edit|Write", False),
        ("Edit,Write", "Write", True),
        (" Edit , Write ", "Edit", True),
        ("Edit||Write", "", False),
        ("mcp__.*", "mcp__github__x", True),
        ("mcp__.*", "Bash", False),
        ("ash", "Bash", False),  # an exact name, not a substring
        ("B.sh", "xBashx", True),  # a regex is unanchored
        ("^Bash$", "Bash", True),
        ("^Bash$", "BashX", False),
        ("(?<n>Ba)sh", "Bash", True),  # JavaScript named group: the `regex` module reads it
        ("(?<=mcp__)git.*", "mcp__github", True),
    ],
)
def test_claude_matcher(pattern: str | None, value: str, expected: bool) -> None:
    assert claude_matcher(pattern)(value) is expected


def test_claude_matcher_is_ascii() -> None:
    assert claude_matcher(r"^\w+$")("Bash")
    assert not claude_matcher(r"^\w+$")("Bäsh")
    named = claude_matcher(r"(?<d>\d)x")  # JavaScript syntax the stdlib lacks: compiled by `regex`, ASCII too
    assert named("3x") and not named("\u0663x")


def test_narrow_exact_set_has_no_comma_or_space() -> None:
    narrow = "A-Za-z0-9_|"
    assert claude_matcher("a|b", narrow)("b")
    assert claude_matcher("a,b", narrow)("a,b")  # a regex there
    assert not claude_matcher("a,b", narrow)("a")


@pytest.mark.parametrize("pattern", [r"(?P<x>a)", r"(?i)bash", r"\Abash", r"a*+", r"(?#c)"])
def test_python_only_syntax_is_a_config_error(pattern: str) -> None:
    with pytest.raises(ConfigError) as err:
        claude_matcher(pattern)
    assert str(err.value) == f"matcher {pattern!r} uses Python-only regex syntax that JavaScript rejects"


def test_invalid_regex_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as err:
        claude_matcher("Bash(")
    assert str(err.value).startswith("matcher 'Bash(' is not a valid regular expression: ")


def test_matcher_problem() -> None:
    assert matcher_problem("Bash") is None
    assert matcher_problem("mcp__.*") is None
    assert matcher_problem("Bash(rm *)") == (
        "'Bash(rm *)' is a permission rule, not a matcher: as a regex it is tested against the tool name "
        "and never fires; use matcher 'Bash' with \"if\": 'Bash(rm *)'"
    )
    assert matcher_problem("a[") is not None and "not a valid regular expression" in str(matcher_problem("a["))
    assert matcher_problem("x|y", "A-Za-z0-9_|") is None
    assert str(matcher_problem("Bash(rm\n-rf x)")).startswith("'Bash(rm\\n-rf x)' is a permission rule")


# --- Kiro matchers -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pattern,name,expected",
    [
        (None, "fs_write", True),
        ("", "x", True),
        ("*", "@git/status", True),
        ("@builtin", "fs_write", True),
        ("@builtin", "@git/status", False),
        ("@git", "@git/status", True),
        ("@git", "@git", True),
        ("@git", "@gitlab/x", False),
        ("@git/status", "@git/status", True),
        ("@git/status", "@git/log", False),
        ("fs_*", "fs_read", True),
        ("fs_*", "execute_bash", False),
        ("fs_?ead", "fs_read", True),
        ("fs_[rw]*", "fs_write", True),
        ("@git*", "@github/x", True),
        ("fs_write", "fs_write", True),
        ("fs_write", "fs_writer", False),
        ("FS_write", "fs_write", False),
    ],
)
def test_kiro_matcher(pattern: str | None, name: str, expected: bool) -> None:
    assert kiro_matcher(pattern)(name) is expected


# --- if rules: parsing and tools -----------------------------------------------------------------


def test_if_rule_parse() -> None:
    assert IfRule.parse("Bash(rm *)") == IfRule(text="Bash(rm *)", tool="Bash", content="rm *")
    assert IfRule.parse("  Edit  ") == IfRule(text="  Edit  ", tool="Edit", content=None)
    assert IfRule.parse("Bash()").content is None
    assert IfRule.parse("Bash( * )").content is None
    assert IfRule.parse("mcp__srv__*").tool == "mcp__srv__*"
    assert IfRule.parse("my-tool(a\nb)").content == "a\nb"
    rule = IfRule.parse(" Bash(rm *)")
    assert (rule.text, repr(rule)) == (" Bash(rm *)", "IfRule(text=' Bash(rm *)', tool='Bash', content='rm *')")


@pytest.mark.parametrize("text", ["", "Bash(", "(rm)", "1Bash", "Bash rm"])
def test_if_rule_syntax_errors(text: str) -> None:
    with pytest.raises(ConfigError) as err:
        IfRule.parse(text)
    assert str(err.value).startswith(f"if rule {text!r} is not a permission rule (expected Tool or Tool(pattern)")


@pytest.mark.parametrize(
    "rule,tool,expected",
    [
        ("Edit", "Edit", True),
        ("Edit", "Write", True),
        ("Edit", "MultiEdit", True),
        ("Edit", "NotebookEdit", True),
        ("Edit", "Read", False),
        ("Read", "Grep", True),
        ("Read", "Glob", True),
        ("Read", "LS", True),
        ("Read", "Write", False),
        ("Write", "Edit", False),
        ("Agent", "Task", True),
        ("Task", "Agent", True),
        ("Bash", "PowerShell", False),
        ("mcp__srv", "mcp__srv__tool", True),
        ("mcp__srv", "mcp__srvx__tool", False),
        ("mcp__srv", "mcp__srv", True),
        ("mcp__srv__*", "mcp__srv__tool", True),
        ("mcp__srv__*", "mcp__other__tool", False),
        ("mcp__srv__tool", "mcp__srv__tool", True),
        ("mcp__srv__tool", "mcp__srv__tool2", False),
        ("mcp__srv__tool", "mcp__srv__", False),
    ],
)
def test_if_rule_tool_matches(rule: str, tool: str, expected: bool) -> None:
    assert IfRule.parse(rule).tool_matches(tool) is expected


def _ev(tool: str, tool_input: dict[str, Any], cwd: str = "/work/proj") -> HookEvent:
    return HookEvent({"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input, "cwd": cwd})


# --- if rules: content ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rule,tool,tool_input,expected",
    [
        ("Bash", "Bash", {"command": "anything"}, True),
        ("Bash", "Edit", {"file_path": "a"}, False),
        ("Bash(rm *)", "Bash", {"command": "ls && rm -rf x"}, True),
        ("Bash(rm *)", "Bash", {"command": "ls -la"}, False),
        ("Bash(rm *)", "Bash", {}, True),  # no command to judge: the hook runs
        ("Bash(rm *)", "Bash", {"command": ["rm"]}, True),
        ("PowerShell(Remove-Item *)", "PowerShell", {"command": "Remove-Item x"}, True),
        ("Edit(src/**)", "Edit", {"file_path": "/work/proj/src/a.py"}, True),
        ("Edit(src/**)", "Write", {"file_path": "/work/proj/docs/a.md"}, False),
        ("Edit(src/**)", "Edit", {}, True),  # a file rule with no path: the hook runs
        ("Edit(src/**)", "Edit", {"file_path": 3}, True),
        ("Edit(src/**)", "NotebookEdit", {"notebook_path": "src/n.ipynb"}, True),
        ("Read(src/**)", "Grep", {"path": "src/x"}, True),
        ("Read(src/**)", "Glob", {"dir_path": "src"}, False),  # the folder itself is not under src/**
        ("Edit(*.py)", "Edit", {"file_paths": ["docs/a.md", "lib/b.py"]}, True),
        ("Edit(*.py)", "Edit", {"file_paths": ["docs/a.md"], "file_path": "x.py"}, False),
        ("Edit(*.py)", "Edit", {"file_paths": [], "file_path": "x.py"}, True),
        ("Edit(*.py)", "Edit", {"file_paths": ["a.md", 3], "file_path": "x.py"}, True),
        ("Edit(*.py)", "Edit", {"file_path": "x.py", "path": "y.md"}, True),  # file_path comes first
        ("WebFetch(domain:example.com)", "WebFetch", {"url": "https://example.com/a"}, True),
        ("WebFetch(domain:example.com)", "WebFetch", {"url": "https://docs.example.com:8443/a"}, True),
        ("WebFetch(domain:example.com)", "WebFetch", {"url": "https://badexample.com/"}, False),
        ("WebFetch(domain:example.com)", "WebFetch", {"url": "http://example.com.evil.io/"}, False),
        ("WebFetch(domain:*.example.com)", "WebFetch", {"url": "https://a.example.com"}, True),
        ("WebFetch(domain:example.com)", "WebFetch", {}, False),
        ("WebFetch(https://example.com/*)", "WebFetch", {"url": "https://example.com/x"}, True),
        ("WebSearch(domain:x.com)", "WebSearch", {"query": "domain:x.com"}, True),  # not special outside WebFetch
        ("WebSearch(domain:x.com)", "WebSearch", {"query": "x.com"}, False),
        ("WebSearch(claude *)", "WebSearch", {"query": "claude hooks"}, True),
        ("WebSearch(claude *)", "WebSearch", {"query": "gpt hooks"}, False),
        ("Task(Explore)", "Task", {"subagent_type": "Explore", "prompt": "x"}, True),
        ("Agent(Explore)", "Task", {"subagent_type": "Plan", "prompt": "Explore"}, False),
        ("Task(*review*)", "Agent", {"subagent_type": "code-review"}, True),
        ("Grep(TODO*)", "Grep", {"pattern": "TODO: x"}, True),  # a Grep pattern is a path-less file tool
        ("mcp__db__query(SELECT*)", "mcp__db__query", {"query": "SELECT 1"}, True),
        ("mcp__db__query(SELECT*)", "mcp__db__query", {"query": "DROP x"}, False),
        ("mcp__db__query(SELECT*)", "mcp__db__query", {"sql": "SELECT 1"}, False),
        ("Other(a*c)", "Other", {"prompt": "a\nb\nc"}, True),
        ("Other(a*c)", "Other", {"url": "abcd"}, False),
    ],
)
def test_if_rule_content(rule: str, tool: str, tool_input: dict[str, Any], expected: bool) -> None:
    assert IfRule.parse(rule).matches(_ev(tool, tool_input)) is expected


def test_primary_value_order() -> None:
    rule = IfRule.parse("X(first)")
    both = {"subagent_type": "first", "query": "q", "url": "u", "pattern": "p", "prompt": "pr"}
    assert rule.matches(_ev("X", both))
    for key in ("query", "url", "pattern", "prompt"):
        assert IfRule.parse(f"X({key})").matches(_ev("X", {key: key, "prompt" if key != "prompt" else "url": 1}))
    assert not IfRule.parse("X(u)").matches(_ev("X", {"query": "q", "url": "u"}))


def test_file_rule_uses_cwd_when_event_has_none(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    event = HookEvent({"hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_input": {"file_path": "src/a"}})
    assert IfRule.parse("Edit(src/**)").matches(event)


def test_file_rule_project_dir_from_env(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path))
    sub = os.path.join(str(tmp_path), "sub")
    assert IfRule.parse("Edit(/src/**)").matches(_ev("Edit", {"file_path": f"{tmp_path}/src/x"}, cwd=sub))
    assert not IfRule.parse("Edit(src/**)").matches(_ev("Edit", {"file_path": f"{tmp_path}/src/x"}, cwd=sub))


# --- path rules ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pattern,path,expected",
    [
        ("//etc/**", "/etc/passwd", True),
        ("//etc/**", "/work/proj/etc/x", False),
        ("/src/**", "/work/proj/src/a", True),
        ("/src/**", "/work/proj/sub/src/a", False),
        ("src/**", "/work/proj/sub/src/a", False),
        ("src/**", "src/a", True),
        ("*.env", "/work/proj/deep/x.env", True),
        (".env", "/work/proj/a/.env", True),
        ("a/b.txt", "/work/proj/x/a/b.txt", False),  # a slash inside anchors at the root
        ("**/b.txt", "/work/proj/x/a/b.txt", True),
        ("*.py", "/elsewhere/x.py", False),
        ("*.py", "../x.py", False),
        ("*", "/work", False),
        ("docs/", "/work/proj/docs/a.md", True),
    ],
)
def test_path_matches(pattern: str, path: str, expected: bool) -> None:
    assert path_matches(pattern, path, cwd="/work/proj", project_dir=None) is expected


def test_path_matches_home_and_project_dir() -> None:
    home = os.path.expanduser("~")
    assert path_matches("~/.ssh/**", f"{home}/.ssh/id_rsa", cwd="/work/proj")
    assert not path_matches("~/.ssh/**", "/work/proj/.ssh/id_rsa", cwd="/work/proj")
    assert path_matches("/src/*", "/repo/src/a", cwd="/repo/sub", project_dir="/repo")
    assert not path_matches("/src/*", "/repo/src/a", cwd="/repo/sub")


# --- Bash splitting ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command,expected",
    [
        ("ls -la", ["ls -la"]),
        ("  ls   -la  ", ["ls -la"]),
        ("A=1 B=2 make", ["make"]),
        ("A=1", []),
        ("", []),
        ("ls && rm x || echo y; pwd", ["ls", "rm x", "echo y", "pwd"]),
        ("cat a | grep b |& tee c", ["cat a", "grep b", "tee c"]),
        ("sleep 1 & echo done", ["sleep 1", "echo done"]),
        ("ls\npwd", ["ls", "pwd"]),
        ("echo $(rm -rf x)", ["echo $(rm -rf x)", "rm -rf x"]),
        ("echo `whoami`", ["echo `whoami`", "whoami"]),
        ("diff <(ls a) <(ls b)", ["diff <(ls a) <(ls b)", "ls a", "ls b"]),
        ("echo hi > $(rm x)", ["echo hi > $(rm x)", "rm x"]),  # a redirect's target runs its substitution
        ("sort < <(ls a) 2>&1", ["sort < <(ls a) 2>&1", "ls a"]),
        ("(cd x && make)", ["cd x", "make"]),
        ("{ ls; pwd; }", ["ls", "pwd"]),
        ("for f in a b; do rm $f; done", ["rm $f"]),
        ("if true; then rm x; fi", ["true", "rm x"]),
        ("while false; do ls; done", ["false", "ls"]),
        ("FOO='a b' git   push  origin", ["git push origin"]),
        ("echo 'a  b'", ["echo 'a b'"]),
        ("echo 'unterminated", None),
    ],
)
def test_split_commands(command: str, expected: list[str] | None) -> None:
    assert split_commands(command) == expected


@pytest.mark.parametrize(
    "pattern,command,expected",
    [
        ("rm *", "rm -rf x", True),
        ("rm *", "rm", True),
        ("rm *", "rmdir x", False),
        ("rm *", "xrm y", False),
        ("rm:*", "rm -f a", True),
        ("rm:*", "rm", True),
        ("rm:*", "rmx", False),
        ("git push *", "git push", True),
        ("git push *", "git push origin main", True),
        ("git push *", "git pushx", False),
        ("git push *", "git status", False),
        ("git push", "git push", True),
        ("git push", "git push origin", False),
        ("git * main", "git push origin main", True),
        ("git * main", "git push origin dev", False),
        ("npm run *", "cd a && npm run build", True),
        ("npm run *", "npm test", False),
        ("rm *", "echo ok", False),
        ("rm *", "echo 'ok'", False),
        ("rm *", "echo $(rm x)", True),
        ("rm *", "echo hi > $(rm x)", True),
        ("git push *", "git $(echo push)", True),  # arguments not knowable statically: the hook runs
        ("git push *", "git ${SUB} x", True),
        ("rm X", "rm $FILE", True),  # $FILE may be X
        ("git push *", "echo `x`", True),
        ("rm", "ls $(pwd)", False),
        ("rm *", "echo 'unterminated rm", True),  # unparseable: the hook runs
        ("* --force", "git push --force", True),
        ("* --force", "git push", False),
        ("ls*", "lsblk", True),
        ("  rm *  ", "rm a", True),
        ("rm *", "R=1 rm a", True),
    ],
)
def test_command_matches(pattern: str, command: str, expected: bool) -> None:
    assert command_matches(pattern, command) is expected


def test_cannot_match_never_hides_a_real_match() -> None:
    # the cheap pre-check only says "no" for plain commands that lack the command word
    assert not command_matches("terraform *", "ls -la")
    assert command_matches("rm *", "ls; rm x")
    assert command_matches("*", "anything at all")


def test_a_rule_whose_command_name_is_absent_parses_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.delitem(sys.modules, "bashlex", raising=False)
    assert not command_matches("terraform *", "ls | wc -l && cd /tmp")  # needs bashlex, were it parsed
    assert "bashlex" not in sys.modules  # the cheap pre-check answered: nothing was imported or parsed


def test_if_rule_syntax_error_message_is_exact() -> None:
    with pytest.raises(ConfigError) as err:
        IfRule.parse("Bash(")
    assert str(err.value) == (
        "if rule 'Bash(' is not a permission rule (expected Tool or Tool(pattern), "
        'e.g. "Bash(rm *)" or "Edit(src/**)")'
    )


def test_matcher_problem_names_the_tool_before_the_first_parenthesis() -> None:
    assert matcher_problem("Bash(echo (a))") == (
        "'Bash(echo (a))' is a permission rule, not a matcher: as a regex it is tested against the tool name "
        "and never fires; use matcher 'Bash' with \"if\": 'Bash(echo (a))'"
    )


@pytest.mark.parametrize(
    "rule,tool,tool_input,expected",
    [
        ("mcp__srv__*", "mcp__srv_x", {}, False),
        ("WebFetch(domain:example.com)", "WebFetch", {"url": "https://example.com/a/b"}, True),
        ("WebFetch(domain:example.com)", "WebFetch", {"url": "https://example.com:1:2/x"}, True),
        ("X(XXXX)", "X", {}, False),
        ("WebFetch(domain:?*)", "WebFetch", {}, False),  # no url, no host: no domain fits
    ],
)
def test_if_rule_edges(rule: str, tool: str, tool_input: dict[str, Any], expected: bool) -> None:
    assert IfRule.parse(rule).matches(_ev(tool, tool_input)) is expected


def test_a_trailing_slash_rule_is_not_anchored() -> None:
    assert path_matches("docs/", "/work/proj/x/docs/a.md", cwd="/work/proj")
