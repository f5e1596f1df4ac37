"""One table of tool names: a matcher or ``if`` rule written once in Claude Code's names fits every host."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.config import GroupSpec
from gateway.dialects import parse_event
from gateway.matching import IfRule
from gateway.selection import group_matches
from gateway.tool_names import to_canonical, to_host

GEMINI = {"session_id": "s", "transcript_path": "/t", "cwd": "/p", "timestamp": "2026-11-29T12:00:00.000Z"}
CODEX = {"session_id": "s", "turn_id": "t", "transcript_path": "/h/sessions/rollout-1.jsonl", "cwd": "/p"}


@pytest.mark.parametrize(
    ("host", "name", "canonical"),
    [
        ("gemini", "run_shell_command", "Bash"),
        ("gemini", "write_file", "Write"),
        ("gemini", "replace", "Edit"),
        ("gemini", "read_file", "Read"),
        ("gemini", "grep_search", "Grep"),
        ("gemini", "list_directory", "LS"),
        ("gemini", "google_web_search", "WebSearch"),
        ("gemini", "mcp_git_status", "mcp__git__status"),
        ("codex", "Bash", "Bash"),
        ("codex", "exec_command", "Bash"),
        ("codex", "apply_patch", "Edit"),
        ("codex", "mcp__git__status", "mcp__git__status"),
        ("kiro", "execute_bash", "Bash"),
        ("kiro", "fs_write", "Write"),
        ("kiro", "@git/status", "mcp__git__status"),
        ("claude", "Bash", "Bash"),
        ("gemini", "some_new_tool", "some_new_tool"),
    ],
)
def test_to_canonical(host: str, name: str, canonical: str) -> None:
    assert to_canonical(host, name) == canonical


@pytest.mark.parametrize(
    ("host", "canonical", "name"),
    [
        ("gemini", "Bash", "run_shell_command"),
        ("gemini", "Edit", "replace"),
        ("gemini", "Read", "read_file"),
        ("gemini", "mcp__git__status", "mcp_git_status"),
        ("codex", "Bash", "Bash"),
        ("codex", "Write", "apply_patch"),
        ("kiro", "Bash", "execute_bash"),
        ("kiro", "mcp__git__status", "@git/status"),
        ("claude", "Edit", "Edit"),
    ],
)
def test_to_host(host: str, canonical: str, name: str) -> None:
    assert to_host(host, canonical) == name


def test_gemini_mcp_split_uses_the_server_name_when_given() -> None:
    assert to_canonical("gemini", "mcp_my_server_do_it", mcp_server="my_server") == "mcp__my_server__do_it"
    assert to_canonical("gemini", "mcp_my_server_do_it") == "mcp__my__server_do_it"  # best effort without it


def events() -> dict[str, Any]:
    """The same shell call and file writes as three hosts send them."""
    return {
        "claude-bash": {
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "cwd": "/p",
            "tool_input": {"command": "ls && rm -rf build"},
        },
        "gemini-bash": {
            **GEMINI,
            "hook_event_name": "BeforeTool",
            "tool_name": "run_shell_command",
            "tool_input": {"command": "ls && rm -rf build"},
        },
        "codex-bash": {
            **CODEX,
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "ls && rm -rf build"},
        },
        "kiro-bash": {
            "hook_event_name": "preToolUse",
            "tool_name": "execute_bash",
            "cwd": "/p",
            "tool_input": {"command": "ls && rm -rf build"},
        },
        "claude-write": {
            "hook_event_name": "PreToolUse",
            "tool_name": "Write",
            "cwd": "/p",
            "tool_input": {"file_path": "/p/.env", "content": "X=1"},
        },
        "gemini-write": {
            **GEMINI,
            "hook_event_name": "BeforeTool",
            "tool_name": "write_file",
            "tool_input": {"file_path": "/p/.env", "content": "X=1"},
        },
        "gemini-edit": {
            **GEMINI,
            "hook_event_name": "BeforeTool",
            "tool_name": "replace",
            "tool_input": {"file_path": "/p/.env", "old_string": "a", "new_string": "b"},
        },
        "codex-patch": {
            **CODEX,
            "hook_event_name": "PreToolUse",
            "tool_name": "apply_patch",
            "tool_input": {
                "command": "*** Begin Patch\n*** Update File: a.py\n@@\n-a\n+b\n*** Add File: .env\n+X=1\n*** End Patch\n"
            },
        },
    }


def group(matcher: str, dialect: str = "claude") -> GroupSpec:
    return GroupSpec(matcher=matcher, handlers=[], where="test", dialect=dialect)


@pytest.mark.parametrize("name", ["claude-bash", "gemini-bash", "codex-bash", "kiro-bash"])
def test_bash_rule_written_once_fits_every_shell(name: str) -> None:
    event = parse_event(events()[name])
    assert event.tool_name == "Bash"
    assert group_matches(group("Bash"), event)[0]
    assert IfRule.parse("Bash(rm *)").matches(event)
    assert not IfRule.parse("Bash(git push *)").matches(event)


@pytest.mark.parametrize("name", ["claude-write", "gemini-write", "gemini-edit", "codex-patch"])
def test_write_edit_matcher_and_file_rule_fit_every_file_tool(name: str) -> None:
    event = parse_event(events()[name])
    assert group_matches(group("Write|Edit"), event)[0]
    assert IfRule.parse("Edit(//**/.env)").matches(event)  # a patch matches when any of its files does
    assert not IfRule.parse("Edit(//**/*.pem)").matches(event)


def test_host_names_still_match_and_the_event_keeps_them() -> None:
    patch = parse_event(events()["codex-patch"])
    assert patch.host_tool_name == "apply_patch"
    ok, why = group_matches(group("apply_patch"), patch)  # a matcher from a Codex hooks.json
    assert ok and "host's tool name" in why
    gemini = parse_event(events()["gemini-bash"])
    assert group_matches(group("run_shell_command"), gemini)[0]
    assert not group_matches(group("Write"), gemini)[0]


def test_gemini_format_matchers() -> None:
    shell = parse_event(events()["gemini-bash"])
    assert group_matches(group("run_shell.*", "gemini"), shell)[0]
    assert not group_matches(group("write_file|replace", "gemini"), shell)[0]
    claude_bash = parse_event(events()["claude-bash"])  # a Gemini hook sees Claude's Bash as run_shell_command
    assert group_matches(group("run_shell_command", "gemini"), claude_bash)[0]
    start = parse_event({**GEMINI, "hook_event_name": "SessionStart", "source": "resume"})
    assert group_matches(group("resume", "gemini"), start)[0]
    assert not group_matches(group("startup", "gemini"), start)[0]
    assert group_matches(
        group("(", "gemini"),
        parse_event({**GEMINI, "hook_event_name": "BeforeTool", "tool_name": "(", "tool_input": {}}),
    )[0]


def test_default_policy_guards_apply_to_gemini_and_codex_payloads() -> None:
    from gateway.config import default_config_path, load_config
    from gateway.dispatcher import Dispatcher

    config = load_config([default_config_path()], use_cache=False)
    dispatcher = Dispatcher(config)
    for name, handler in (
        ("gemini-bash", "destructive-shell"),
        ("codex-bash", "destructive-shell"),
        ("gemini-write", "secrets-files"),
        ("codex-patch", "secrets-files"),
    ):
        selected = [s.spec.id for s in dispatcher.select(parse_event(events()[name]))]
        assert selected == [handler], name
