"""Pieces of the LLM handlers that need no server: verdict parsing, effects, $ARGUMENTS, the sandbox,
the transcript reader, provider settings, and the Stop-loop guard's bookkeeping."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from gateway.config import RuntimeConfig, load_config
from gateway.context import RunContext
from gateway.decision import HandlerResult, Verdict
from gateway.errors import ConfigError, HandlerError
from gateway.events import HookEvent
from gateway.stopguard import StopGuard, guard_key
from handlers.llm.base import ProviderSettings, key_problems, provider_settings, retry_after
from handlers.llm.sandbox import Sandbox, glob_regex
from handlers.llm.transcript import render_entry, transcript_tail
from handlers.llm.verdict import LlmVerdict, effects, parse_verdict
from handlers.prompt import substitute_arguments

# ------------------------------------------------------------------------------------ verdict parsing


@pytest.mark.parametrize(
    "answer",
    [
        '{"ok": false, "reason": "no tests"}',
        '  ```json\n{"ok": false, "reason": "no tests"}\n```  ',
        'Sure. Here it is:\n```\n{"ok": false, "reason": "no tests"}\n```\nAnything else?',
        'My verdict is {"ok": false, "reason": "no tests"} based on the transcript.',
        '{"note": "first"} then {"ok": "false", "reason": "no tests"}',
    ],
)
def test_verdict_is_found_in_prose_and_fences(answer: str) -> None:
    assert parse_verdict(answer) == LlmVerdict(ok=False, reason="no tests")


def test_verdict_from_an_object_and_defaults() -> None:
    assert parse_verdict({"ok": True, "reason": "fine", "impossible": None}) == LlmVerdict(True, "fine")
    assert parse_verdict({"ok": False}).reason.startswith("the check found the condition not met")
    assert parse_verdict({"ok": False, "reason": "x", "impossible": True}).impossible


@pytest.mark.parametrize(
    "answer",
    ["", "no json here", '{"reason": "no ok field"}', '{"ok": 1, "reason": ""}', '```json\n{"ok": tru}\n```', "[1, 2]"],
)
def test_malformed_verdicts_raise(answer: str) -> None:
    with pytest.raises(HandlerError, match="unparseable verdict"):
        parse_verdict(answer)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ('{"ok": true, "reason": "fine"} {"ok": false, "reason": "second"}', LlmVerdict(False, "second")),
        ('{"ok": false, "reason": "first"}\n\n{"ok": true, "reason": "then"}', LlmVerdict(False, "first")),
        ('{"ok": false, "reason": "x", "ok": true}', LlmVerdict(False, "x")),  # an ok written twice
        ('{"ok": true, "ok": "false", "reason": "y"}', LlmVerdict(False, "y")),
        ('{"ok": true, "reason": "r", "evidence": {"ok": false}}', LlmVerdict(True, "r")),  # nested: not a verdict
        ('Here: {"verdict": {"ok": false, "reason": "inner"}}', LlmVerdict(False, "inner")),  # no outer verdict
        ('I wrote {"ok": "maybe"} first, then {"ok": true, "reason": "b"}', LlmVerdict(True, "b")),
    ],
)
def test_several_verdicts_in_one_answer_the_most_restrictive_stands(answer: str, expected: LlmVerdict) -> None:
    """An LLM may tighten a decision, never loosen it: a false among the model's verdicts is not dropped."""
    assert parse_verdict(answer) == expected


# ------------------------------------------------------------------------------------ effects


def _event(name: str, **fields: Any) -> HookEvent:
    return HookEvent({"hook_event_name": name, **fields})


NO = LlmVerdict(ok=False, reason="because")


@pytest.mark.parametrize(
    ("name", "kw", "expected"),
    [
        ("Stop", {}, Verdict(block=True, reason="because")),
        ("SubagentStop", {}, Verdict(block=True, reason="because")),
        (
            "PreToolUse",
            {},
            Verdict(
                permission="deny",
                permission_reason="because",
                continue_=False,
                stop_reason="hookgate check 'c': because",
            ),
        ),
        ("PreToolUse", {"continue_on_block": True}, Verdict(permission="deny", permission_reason="because")),
        ("PreToolUse", {"on_reject": "ask"}, Verdict(permission="ask", permission_reason="because")),
        (
            "PostToolUse",
            {},
            Verdict(block=True, reason="because", continue_=False, stop_reason="hookgate check 'c': because"),
        ),
        ("PostToolUse", {"continue_on_block": True}, Verdict(block=True, reason="because")),
        ("UserPromptSubmit", {}, Verdict(block=True, reason="because")),
        ("PostToolUseFailure", {}, Verdict(block=True, reason="because")),
        ("TaskCreated", {}, Verdict(block=True, reason="because")),
        ("TeammateIdle", {}, Verdict(continue_=False, stop_reason="hookgate check 'c': because")),
        ("TeammateIdle", {"continue_on_block": True}, Verdict(block=True, reason="because")),
        ("PermissionRequest", {}, Verdict()),
        ("PermissionDenied", {}, Verdict()),
    ],
)
def test_effects_follow_the_prompt_hook_table(name: str, kw: dict[str, Any], expected: Verdict) -> None:
    assert effects(_event(name), NO, check="c", **kw) == expected


def test_ok_never_allows_and_impossible_lets_a_stop_through() -> None:
    assert effects(_event("PreToolUse"), LlmVerdict(True, "fine"), check="c").is_empty()
    v = effects(_event("Stop"), LlmVerdict(False, "no suite", impossible=True), check="c")
    assert not v.block and "impossible" in (v.system_message or "")


# ------------------------------------------------------------------------------------ $ARGUMENTS


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("Check $ARGUMENTS now", "Check {J} now"),
        ("No placeholder", "No placeholder\n\n{J}"),
        (r"Price \$5, input $ARGUMENTS", "Price $5, input {J}"),
        (r"Literal \$ARGUMENTS only", "Literal $ARGUMENTS only\n\n{J}"),
        ("$ARGUMENTS and $ARGUMENTS", "{J} and {J}"),
    ],
)
def test_arguments_substitution(template: str, expected: str) -> None:
    assert substitute_arguments(template, "{J}") == expected


# ------------------------------------------------------------------------------------ sandbox


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "pkg" / "deep").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("import os\nVALUE = 1\n")
    (root / "pkg" / "deep" / "b.py").write_text("value = 2\n" * 3)
    (root / "notes.txt").write_text("\n".join(f"line {i}" for i in range(1, 11)))
    (root / "blob.bin").write_bytes(b"\0\1\2")
    (root / "node_modules").mkdir()
    (root / "node_modules" / "x.py").write_text("VALUE = 3\n")
    (tmp_path / "outside.txt").write_text("secret")
    (root / "link_out").symlink_to(tmp_path / "outside.txt")
    (root / "link_in").symlink_to(root / "notes.txt")
    return root


def test_read_pages_and_numbers_lines(tree: Path) -> None:
    box = Sandbox(str(tree))
    assert box.run("Read", {"path": "notes.txt", "offset": 9})[0] == "     9\tline 9\n    10\tline 10"
    out, err = box.run("Read", {"path": "notes.txt", "limit": 2})
    assert not err and out.endswith("[8 more lines; use offset=3]")
    assert box.run("Read", {"path": str(tree / "pkg" / "a.py")}) == ("     1\timport os\n     2\tVALUE = 1", False)
    assert box.run("Read", {"path": "link_in", "limit": 1}) == ("     1\tline 1\n[9 more lines; use offset=2]", False)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"path": "../../etc/passwd"}, "contains '..'"),
        ({"path": "pkg/../../outside.txt"}, "contains '..'"),
        ({"path": "/etc/passwd"}, "outside the project"),
        ({"path": "link_out"}, "symlink"),
        ({"path": "pkg"}, "is a directory"),
        ({"path": "missing.txt"}, "does not exist"),
        ({"path": "blob.bin"}, "binary"),
        ({"path": "notes.txt", "offset": 0}, "at least 1"),
        ({"path": "notes.txt", "limit": "many"}, "integer"),
        ({}, "path is required"),
    ],
)
def test_read_refusals_are_tool_errors(tree: Path, args: dict[str, Any], message: str) -> None:
    out, is_error = Sandbox(str(tree)).run("Read", args)
    assert is_error and message in out


def test_grep_and_glob_stay_inside_and_skip_noise(tree: Path) -> None:
    box = Sandbox(str(tree))
    out, err = box.run("Grep", {"pattern": "^value", "ignore_case": True})
    assert not err and out.splitlines() == [
        "pkg/a.py:2: VALUE = 1",
        "pkg/deep/b.py:1: value = 2",
        "pkg/deep/b.py:2: value = 2",
        "pkg/deep/b.py:3: value = 2",
    ]
    assert box.run("Grep", {"pattern": "VALUE", "path": "pkg", "glob": "a.py"}) == ("pkg/a.py:2: VALUE = 1", False)
    assert box.run("Grep", {"pattern": "secret"}) == ("(no matches)", False)
    assert box.run("Grep", {"pattern": "("})[1]
    assert box.run("Glob", {"pattern": "*.py"}) == ("pkg/a.py\npkg/deep/b.py", False)
    assert box.run("Glob", {"pattern": "pkg/*.py"}) == ("pkg/a.py", False)
    assert box.run("Glob", {"pattern": "*.py", "path": "pkg/deep"}) == ("pkg/deep/b.py", False)
    assert box.run("Glob", {"pattern": str(tree / "pkg" / "**" / "b.py")}) == ("pkg/deep/b.py", False)
    assert box.run("Glob", {"pattern": "/etc/*"})[1]
    assert box.run("Glob", {"pattern": "link_*"}) == ("link_in", False)  # link_out leads outside
    assert box.run("Rm", {})[1] and box.run("Read", None)[1]


def test_no_cwd_means_no_file_access() -> None:
    out, is_error = Sandbox(None).run("Read", {"path": "x"})
    assert is_error and "no usable cwd" in out


def test_glob_regex() -> None:
    assert glob_regex("**/*.py").match("a/b/c.py") and glob_regex("**/*.py").match("c.py")
    assert not glob_regex("src/*.py").match("src/a/b.py")
    assert glob_regex("src/[!x]?.ts").match("src/ab.ts") and not glob_regex("src/[!x]?.ts").match("src/xb.ts")


# ------------------------------------------------------------------------------------ transcript


def test_transcript_rendering_and_tail(tmp_path: Path) -> None:
    assert render_entry({"type": "user", "message": {"role": "user", "content": "hi"}}) == "user: hi"
    assert render_entry({"type": "summary", "summary": "s"}) is None
    assert (
        render_entry(
            {
                "type": "response_item",
                "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]},
            }
        )
        == "assistant: ok"
    )
    long = {
        "type": "assistant",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hidden"},
                {"type": "tool_use", "name": "Write", "input": {"content": "x" * 5000}},
            ],
        },
    }
    rendered = render_entry(long) or ""
    assert "hidden" not in rendered and "[tool call Write]" in rendered and "more characters]" in rendered
    path = tmp_path / "t.jsonl"
    path.write_text(
        "\n".join(json.dumps({"type": "user", "message": {"role": "user", "content": f"msg {i}"}}) for i in range(100))
        + "\nnot json\n"
    )
    tail = transcript_tail(str(path), 60) or ""
    assert tail.startswith("[") and tail.endswith("user: msg 99") and "msg 0\n" not in tail
    assert transcript_tail(str(tmp_path / "missing.jsonl"), 100) is None
    box = Sandbox(str(tmp_path), str(path))
    out, err = box.run("Transcript", {"offset": -2})
    assert not err and out.startswith("(entries 98-99 of 100)") and "[99] user: msg 99" in out
    assert Sandbox(str(tmp_path)).run("Transcript", {})[1]


# ------------------------------------------------------------------------------------ providers and keys


def _load(tmp_path: Path, doc: dict[str, Any]) -> RuntimeConfig:
    path = tmp_path / "hookgate.json"
    path.write_text(json.dumps(doc))
    return load_config([str(path)], use_cache=False)


STOP_PROMPT = {"Stop": [{"hooks": [{"type": "prompt", "prompt": "x"}]}]}


def test_provider_defaults_and_overrides(tmp_path: Path) -> None:
    config = _load(
        tmp_path,
        {
            "hooks": STOP_PROMPT,
            "llm": {
                "providers": {
                    "anthropic": {"baseUrl": "http://127.0.0.1:9/"},
                    "openai": {"model": "gpt-5-mini"},
                    "ollama": {
                        "type": "openai",
                        "model": "qwen3",
                        "baseUrl": "http://127.0.0.1:11434/v1",
                        "keyRequired": False,
                        "structuredOutput": "json_object",
                        "temprature": 0,
                    },
                }
            },
        },
    )
    default = provider_settings(config.llm, None)
    assert (default.name, default.type, default.model, default.structured_output) == (
        "anthropic",
        "anthropic",
        "claude-haiku-4-5",
        "tool",
    )
    assert default.base_url == "http://127.0.0.1:9/" and default.api_key_env == "ANTHROPIC_API_KEY"
    assert provider_settings(config.llm, "openai").api_key_env == "OPENAI_API_KEY"
    local = provider_settings(config.llm, "ollama")
    assert not local.key_required and local.structured_output == "json_object"
    assert any("temprature" in w for w in config.warnings)
    with pytest.raises(HandlerError, match="unknown LLM provider 'nope'"):
        provider_settings(config.llm, "nope")
    assert provider_settings({}, None) == ProviderSettings(name="anthropic", type="anthropic", model="claude-haiku-4-5")


def test_provider_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        _load(
            tmp_path,
            {
                "hooks": STOP_PROMPT,
                "llm": {
                    "default": "gone",
                    "providers": {
                        "x": {"model": "m"},
                        "o": {"type": "openai", "model": "m", "stream": True},
                        "a": {"type": "anthropic", "structuredOutput": "json_object", "maxTokens": 0},
                    },
                },
            },
        )
    issues = "\n".join(info.value.issues)
    assert "llm.providers.x.type: required" in issues
    assert "llm.providers.o.stream: only anthropic" in issues
    assert "llm.providers.a.maxTokens" in issues
    assert "hooks.Stop[0].hooks[0]: uses the default LLM provider, but llm.default names 'gone'" in issues


def test_key_problems_only_for_providers_in_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("MY_KEY", "k")
    llm = {"default": "mine", "providers": {"mine": {"type": "openai", "model": "m", "apiKeyEnv": "MY_KEY"}}}
    assert key_problems(_load(tmp_path, {"hooks": STOP_PROMPT, "llm": llm})) == []
    assert (
        key_problems(_load(tmp_path, {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}})) == []
    )
    problems = key_problems(_load(tmp_path, {"hooks": STOP_PROMPT}))
    assert len(problems) == 1 and "$ANTHROPIC_API_KEY" in problems[0] and "keyRequired: false" in problems[0]


def test_retry_after_headers() -> None:
    class Response:
        def __init__(self, headers: dict[str, str]) -> None:
            self.headers = headers

    class Exc(Exception):
        def __init__(self, headers: dict[str, str]) -> None:
            self.response = Response(headers)

    assert retry_after(Exc({"retry-after": "2"})) == 2.0
    assert retry_after(Exc({"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    assert retry_after(Exc({"retry-after": "Wed, 21 Oct 2026 07:28:00 GMT"})) is None
    assert retry_after(ValueError()) is None


# ------------------------------------------------------------------------------------ stop guard


def test_guard_keys() -> None:
    assert guard_key(_event("Stop", session_id="s")) == "s"
    assert guard_key(_event("SubagentStop", session_id="s", agent_id="a1")) == "s/a1"
    assert guard_key(_event("Stop")) is None
    assert guard_key(_event("PreToolUse", session_id="s")) is None


async def _one_stop(ctx: RunContext, limit: int, *results: HandlerResult) -> StopGuard:
    """One Stop event through the guard as the dispatcher drives it: reserve, record, done."""
    guard = StopGuard(ctx, "s", limit, "Stop", {"llm", "llm2"})
    await guard.skip([])
    await guard.record(list(results))
    await guard.done()
    return guard


async def test_guard_counts_only_judgment_blocks(tmp_path: Path) -> None:
    config = RuntimeConfig(hooks={}, sources=[], settings={"stop_block_limit": 2, "state_dir": str(tmp_path)})
    ctx = RunContext(config)
    await _one_stop(ctx, 2, HandlerResult(id="cmd", type="command", verdict=Verdict(block=True)))
    guard = await _one_stop(ctx, 2, HandlerResult(id="llm", type="prompt", status="error"))
    assert guard.blocks_so_far() == 0
    await _one_stop(
        ctx,
        2,
        HandlerResult(id="llm", type="prompt", verdict=Verdict(block=True)),
        HandlerResult(id="llm2", type="prompt", verdict=Verdict(block=True)),
    )
    guard = await _one_stop(
        ctx, 2, HandlerResult(id="llm", type="prompt", status="cached", verdict=Verdict(block=True))
    )
    assert guard.blocks_so_far() == 2
    assert os.path.exists(tmp_path / "state.sqlite3")


async def test_guard_counts_consecutive_blocks(tmp_path: Path) -> None:
    config = RuntimeConfig(hooks={}, sources=[], settings={"stop_block_limit": 3, "state_dir": str(tmp_path)})
    ctx = RunContext(config)
    block, ok = Verdict(block=True), Verdict()

    async def after(*results: HandlerResult) -> int:
        return (await _one_stop(ctx, 3, *results)).blocks_so_far()

    assert await after(HandlerResult(id="llm", type="prompt", verdict=block)) == 1
    assert await after(HandlerResult(id="llm", type="prompt", verdict=block)) == 2
    # a command blocks, the LLM check failed: the loop goes on, the count stays
    assert (
        await after(
            HandlerResult(id="cmd", type="command", verdict=block),
            HandlerResult(id="llm", type="prompt", status="error"),
        )
        == 2
    )
    # a failClosed failure holds the stop back too
    assert await after(HandlerResult(id="cmd", type="command", status="timeout", fail_closed=True)) == 2
    # the LLM check is satisfied (even though a command still blocks): back to 0
    assert (
        await after(
            HandlerResult(id="cmd", type="command", verdict=block), HandlerResult(id="llm", type="prompt", verdict=ok)
        )
        == 0
    )
    assert await after(HandlerResult(id="llm", type="prompt", status="cached", verdict=block)) == 1
    # the LLM check failed and nothing else blocked: the stop goes through, back to 0
    assert await after(HandlerResult(id="llm", type="prompt", status="timeout")) == 0
    assert await after(HandlerResult(id="llm", type="prompt", verdict=block)) == 1
    # no check ran and nothing blocked: back to 0
    assert await after() == 0


async def test_guard_reserves_blocks_atomically_and_a_burst_does_not_reset_itself(tmp_path: Path) -> None:
    config = RuntimeConfig(hooks={}, sources=[], settings={"stop_block_limit": 2, "state_dir": str(tmp_path)})
    ctx = RunContext(config)
    guards = [StopGuard(ctx, "s", 2, "Stop", {"llm"}) for _ in range(5)]
    for guard in guards:
        await guard.skip([])
    assert [g.reserved for g in guards] == [True, True, False, False, False]
    for guard in guards[2:]:  # the skipped ones let their stop through while two checks still run
        await guard.record([])
        await guard.done()
    assert guards[0].blocks_so_far() == 2  # not reset: reserved checks are still in flight
    for guard in guards[:2]:
        await guard.record([HandlerResult(id="llm", type="prompt", verdict=Verdict(block=True))])
        await guard.done()
    assert guards[0].blocks_so_far() == 2
    late = StopGuard(ctx, "s", 2, "Stop", {"llm"})
    await late.skip([])
    await late.record([])
    await late.done()
    assert not late.reserved and late.blocks_so_far() == 0  # the next turn's stop is checked again
