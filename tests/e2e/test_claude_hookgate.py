"""hookgate driven by the real Claude Code CLI (pinned 2.1.197), offline, against the fake Messages API.

Each scenario runs the same model script twice: once with no hook (the control: the tool really
runs, the victim is really deleted) and once with hookgate wired in as Claude Code users wire it.
The evidence is files on disk, ``permission_denials``, the CLI's own hook log (``hook_response``
events of ``--include-hook-events``: exit code and what hookgate printed) and the fake's request
log; never the CLI's wording. hookgate's config cache and state live in the test's tmp dir.
"""

from __future__ import annotations

import json
import shlex
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from gateway.config import default_config_path
from tests.e2e.hook_settings import (
    DEFAULT_HOOKGATE_EVENTS,
    command_hook_settings,
    hookgate_command_settings,
    hookgate_http_settings,
)
from tests.e2e.hookgate_harness import (
    STREAM_ARGS,
    HookgateServer,
    StreamRun,
    free_port,
    hookgate_env,
    state_dir,
    write_config,
    write_script,
)
from tests.e2e.netns import Sandbox
from tests.e2e.scenarios import RunClaude, make_victim
from tests.fakes.anthropic_api import FakeAnthropic, Reply, ScriptItem, bash, text, tool_use, verdict

pytestmark = pytest.mark.e2e


def claude(
    run_claude: RunClaude,
    tmp_path: Path,
    settings: dict[str, Any] | None,
    script: Sequence[ScriptItem],
    *,
    args: Sequence[str] = STREAM_ARGS,
    env: dict[str, str] | None = None,
) -> StreamRun:
    """One stream-json run; each call gets its own project dir (settings never leak between runs)."""
    index = len(list(tmp_path.glob("project-*")))
    run = run_claude(
        tmp_path / f"project-{index}", settings, script, args=args, env={**hookgate_env(tmp_path), **(env or {})}
    )
    return StreamRun(run)


def control(run_claude: RunClaude, tmp_path: Path, script: Sequence[ScriptItem]) -> StreamRun:
    """The same script with no hook at all: every tool call must really run."""
    run = claude(run_claude, tmp_path, None, script)
    assert run.run.returncode == 0, run.describe()
    assert run.permission_denials == [], run.describe()
    assert run.hook_responses() == [], run.describe()
    return run


def assert_denied(run: StreamRun, command: str) -> None:
    """``permission_denials`` names exactly the tool call that asked for ``command``."""
    assert run.run.returncode == 0 and run.result.get("is_error") is False, run.describe()
    uses = [u for u in run.tool_uses if u["input"].get("command") == command]
    assert len(uses) == 1, run.describe()
    (denial,) = [d for d in run.permission_denials if d["tool_use_id"] == uses[0]["id"]]
    assert denial["tool_name"] == "Bash" and denial["tool_input"]["command"] == command
    (result,) = [r for r in run.tool_results if r["tool_use_id"] == uses[0]["id"]]
    assert result.get("is_error") is True


def hookgate_pre_tool(run: StreamRun) -> list[dict[str, Any]]:
    """hookgate's PreToolUse answers as the CLI logged them, one per Bash call."""
    return run.hook_responses("PreToolUse")


def hookgate_run_settings(
    hookgate_bin: Path, *, config: Path | None = None, events: Sequence[str] = DEFAULT_HOOKGATE_EVENTS
) -> dict[str, Any]:
    """``hookgate run`` as a command hook on ``events``, exactly as the README wires it."""
    if config is not None:
        return hookgate_command_settings(config, events=events, executable=hookgate_bin)
    return command_hook_settings(shlex.join([str(hookgate_bin), "run"]), events=events, matcher="*", timeout=30)


def _echo_then_rm(tmp_path: Path) -> tuple[Path, Path, str, list[ScriptItem]]:
    """(victim, marker, the rm command, a script: an ordinary ``echo`` into marker, then ``rm -rf victim``)."""
    victim = make_victim(tmp_path)  # tmp_path is outside the temp roots (conftest): rm -rf there is denied
    marker = Path(tempfile.mkdtemp(prefix="hookgate-e2e-marker-")) / "marker.txt"  # where every policy lets echo write
    rm = f"rm -rf {victim}"
    return (
        victim,
        marker,
        rm,
        [bash(f"echo built > {marker}", "an ordinary command"), bash(rm, "remove the old build dir"), text("done")],
    )


def _control_echo_then_rm(run_claude: RunClaude, tmp_path: Path) -> None:
    """Without hooks both commands of ``_echo_then_rm`` really run."""
    victim, marker, _, script = _echo_then_rm(tmp_path)
    plain = control(run_claude, tmp_path, script)
    assert not victim.exists() and marker.exists(), plain.describe()


# --------------------------------------------------------------------------- 1. hookgate run, default config


def test_hookgate_run_default_config_denies_rm_rf_and_lets_the_rest_run(
    run_claude: RunClaude, hookgate_bin: Path, tmp_path: Path
) -> None:
    _control_echo_then_rm(run_claude, tmp_path)
    victim, marker, rm, script = _echo_then_rm(tmp_path)
    # No --config and no hookgate.yaml in the project: the built-in default policy answers.
    run = claude(run_claude, tmp_path, hookgate_run_settings(hookgate_bin), script)

    assert (victim / "file.txt").read_text() == "precious\n", run.describe()
    assert marker.read_text() == "built\n", "hookgate blocked an ordinary command"
    assert_denied(run, rm)
    assert run.denied_commands == [rm]
    echo_hook, rm_hook = hookgate_pre_tool(run)
    assert (echo_hook["exit_code"], echo_hook["stdout"]) == (0, ""), run.describe()  # nothing to say
    assert rm_hook["exit_code"] == 2, run.describe()  # deny = exit 2 + reason on stderr ...
    assert rm_hook["stderr"].strip()
    (answer,) = run.hook_answers("PreToolUse")[1:]  # ... and the JSON answer on stdout
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    for event in ("UserPromptSubmit", "Stop"):  # wired but nothing configured: silent, exit 0
        assert [(h["exit_code"], h["stdout"]) for h in run.hook_responses(event)] == [(0, "")], run.describe()
    assert run.hook_responses("PostToolUse") and all(h["exit_code"] == 0 for h in run.hook_responses("PostToolUse"))
    assert len(run.main_requests) == 3


# --------------------------------------------------------------------------- 2. hookgate serve: http hook, thin client


@pytest.fixture
def hookgate_server(
    hookgate_bin: Path, e2e_sandbox: Sandbox, tmp_path: Path
) -> Iterator[Callable[[Path], HookgateServer]]:
    """``start(config)``: ``hookgate serve`` in the sandbox, stopped after the test."""
    servers: list[HookgateServer] = []

    def start(config: Path) -> HookgateServer:
        server = HookgateServer(
            hookgate_bin,
            e2e_sandbox,
            config,
            hookgate_env(tmp_path),
            tmp_path / f"serve-{len(servers)}.log",
            cwd=tmp_path,
        )
        servers.append(server.start())
        return server

    yield start
    for server in servers:
        server.stop()


def test_hookgate_serve_as_claude_code_http_hook_denies_rm_rf(
    run_claude: RunClaude, hookgate_server: Callable[[Path], HookgateServer], tmp_path: Path
) -> None:
    _control_echo_then_rm(run_claude, tmp_path)
    server = hookgate_server(Path(default_config_path()))
    victim, marker, rm, script = _echo_then_rm(tmp_path)

    run = claude(run_claude, tmp_path, hookgate_http_settings(server.port), script)  # POST /hooks

    assert (victim / "file.txt").exists() and marker.exists(), run.describe()
    assert_denied(run, rm)
    assert run.denied_commands == [rm]
    assert [h["exit_code"] for h in run.hook_responses("PreToolUse")] == [200, 200], run.describe()  # HTTP status
    echo_answer, rm_answer = run.hook_answers("PreToolUse")
    assert echo_answer == {}  # nothing to say
    assert rm_answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    # hookgate's own log of what it answered (GET /metrics), one event per hook the CLI fired
    assert server.metric("hookgate_events_total", event="PreToolUse", decision="deny") == 1
    assert server.metric("hookgate_events_total", event="PreToolUse", decision="none") == 1
    assert server.metric("hookgate_events_total", event="UserPromptSubmit", decision="none") == 1
    assert server.metric("hookgate_events_total", event="Stop", decision="none") == 1


def test_hookgate_thin_client_forwards_to_serve_and_denies_rm_rf(
    run_claude: RunClaude, hookgate_bin: Path, hookgate_server: Callable[[Path], HookgateServer], tmp_path: Path
) -> None:
    _control_echo_then_rm(run_claude, tmp_path)
    server = hookgate_server(Path(default_config_path()))
    victim, marker, rm, script = _echo_then_rm(tmp_path)
    # --on-server-down closed: if the thin client could not reach the server, every call would be
    # denied (the echo too), so the echo running proves the server answered.
    argv = [str(hookgate_bin), "run", "--server", server.url, "--on-server-down", "closed"]
    settings = command_hook_settings(shlex.join(argv), events=DEFAULT_HOOKGATE_EVENTS, matcher="*", timeout=30)

    run = claude(run_claude, tmp_path, settings, script)

    assert (victim / "file.txt").exists() and marker.exists(), run.describe()
    assert_denied(run, rm)
    assert run.denied_commands == [rm]
    assert [h["exit_code"] for h in run.hook_responses("PreToolUse")] == [0, 2], run.describe()
    assert run.hook_answers("PreToolUse")[1]["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert server.metric("hookgate_events_total", event="PreToolUse", decision="deny") == 1
    assert server.metric("hookgate_events_total", event="PreToolUse", decision="none") == 1
    assert server.metric("hookgate_events_total", event="Stop", decision="none") == 1


@pytest.mark.parametrize("on_down", ["fallback", "closed"])
def test_hookgate_thin_client_with_the_server_down(
    run_claude: RunClaude, hookgate_bin: Path, e2e_sandbox: Sandbox, tmp_path: Path, on_down: str
) -> None:
    _control_echo_then_rm(run_claude, tmp_path)
    victim, marker, rm, script = _echo_then_rm(tmp_path)
    dead = f"http://127.0.0.1:{free_port(e2e_sandbox)}"  # nothing listens there
    argv = [str(hookgate_bin), "run", "--server", dead, "--on-server-down", on_down]

    run = claude(run_claude, tmp_path, command_hook_settings(shlex.join(argv), timeout=30), script)

    assert (victim / "file.txt").exists(), run.describe()
    assert_denied(run, rm)
    if on_down == "fallback":  # in-process dispatch with the built-in default policy
        assert marker.exists() and run.denied_commands == [rm], run.describe()
        assert [h["exit_code"] for h in run.hook_responses("PreToolUse")] == [0, 2]
    else:  # fail closed: every call is denied, the ordinary one too
        assert not marker.exists() and len(run.denied_commands) == 2, run.describe()
        assert [h["exit_code"] for h in run.hook_responses("PreToolUse")] == [2, 2]


# --------------------------------------------------------------------------- 3. updatedInput


SOFT_DELETE = """#!{python}
# A hookgate command rule: `rm -rf DIR` becomes `mv DIR DIR.trash` (partial updatedInput: command only).
import json, shlex, sys
event = json.load(sys.stdin)
words = shlex.split(event["tool_input"]["command"])
target = words[-1]
answer = {{"updatedInput": {{"command": shlex.join(["mv", target, target + ".trash"])}}}}
if {allow}:
    answer["permissionDecision"] = "allow"
print(json.dumps({{"hookSpecificOutput": {{"hookEventName": "PreToolUse", **answer}}}}))
"""


@pytest.mark.parametrize("with_allow", [True, False], ids=["allow+updatedInput", "updatedInput-only"])
def test_updated_input_rewrites_the_command_that_really_runs(
    run_claude: RunClaude, hookgate_bin: Path, tmp_path: Path, with_allow: bool
) -> None:
    import sys

    victim = make_victim(tmp_path)
    trash = tmp_path / "victim.trash"
    rm = f"rm -rf {victim}"
    script = [bash(rm, "remove the old build dir"), text("done")]

    plain = control(run_claude, tmp_path, script)
    assert not victim.exists() and not trash.exists(), plain.describe()

    victim = make_victim(tmp_path)
    rule = write_script(
        tmp_path / "rules" / "soft_delete.py", SOFT_DELETE.format(python=sys.executable, allow=with_allow)
    )
    config = write_config(
        tmp_path / "hookgate.json",
        {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        {
                            "type": "command",
                            "id": "soft-delete",
                            "if": "Bash(rm *)",
                            "command": str(rule),
                            "timeout": 10,
                        }
                    ],
                }
            ]
        },
    )
    run = claude(
        run_claude, tmp_path, hookgate_run_settings(hookgate_bin, config=config, events=("PreToolUse",)), script
    )

    assert not victim.exists(), run.describe()
    assert (trash / "file.txt").read_text() == "precious\n", run.describe()  # the rewritten command ran
    assert run.permission_denials == []
    (hook,) = hookgate_pre_tool(run)
    assert hook["exit_code"] == 0, run.describe()
    (answer,) = run.hook_answers("PreToolUse")
    specific = answer["hookSpecificOutput"]
    # hookgate merged the partial rewrite over the original input: the CLI got a complete object.
    assert specific["updatedInput"] == {
        "command": shlex.join(["mv", str(victim), str(trash)]),
        "description": "remove the old build dir",
    }
    assert specific.get("permissionDecision") == ("allow" if with_allow else None)
    (result,) = run.tool_results
    assert result.get("is_error") is not True, run.describe()


# --------------------------------------------------------------------------- 4. Stop check: prompt handler

JUDGE_KEY = "sk-test-hookgate-judge"
STOP_CONDITION = "Did the assistant run the tests and report the result? $ARGUMENTS"


class Judge:
    """``fake.responder`` for LLM checks: every Messages call that offers no Bash tool (hookgate's
    ``prompt`` handler, or a native Claude Code ``prompt`` hook) gets the next verdict; main-loop calls
    fall through to the script. Answers with the forced tool when one is forced, else JSON text."""

    def __init__(self, verdicts: Callable[[int], tuple[bool, str]]) -> None:
        self.verdicts = verdicts
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, body: dict[str, Any]) -> Reply | None:
        if any(t.get("name") == "Bash" for t in body.get("tools") or []):
            return None
        ok, reason = self.verdicts(len(self.bodies))
        self.bodies.append(body)
        choice = body.get("tool_choice") or {}
        if choice.get("type") == "tool":
            return tool_use(choice["name"], {"ok": ok, "reason": reason})
        return verdict(ok, reason)

    def prompts(self) -> list[str]:
        return [json.dumps(b.get("messages")) for b in self.bodies]


def judge_config(tmp_path: Path, fake: FakeAnthropic, *, settings: dict[str, Any] | None = None) -> Path:
    """A Stop check through hookgate's ``prompt`` handler; its provider is the same fake server."""
    return write_config(
        tmp_path / "hookgate.json",
        {"Stop": [{"hooks": [{"type": "prompt", "id": "tests-ran", "prompt": STOP_CONDITION, "timeout": 20}]}]},
        llm={
            "default": "e2e",
            "providers": {
                "e2e": {
                    "type": "anthropic",
                    "baseUrl": fake.base_url,
                    "apiKeyEnv": "HOOKGATE_E2E_JUDGE_KEY",
                    "maxRetries": 0,
                }
            },
        },
        settings=settings,
    )


def judge_requests(run: StreamRun) -> list[Any]:
    """The Messages calls made by hookgate's prompt handler (the anthropic SDK, not the CLI)."""
    return [
        r
        for r in run.run.requests
        if r.path == "/v1/messages" and not r.headers.get("user-agent", "").startswith("claude-cli/")
    ]


def test_stop_prompt_check_sends_claude_back_to_work_once(
    run_claude: RunClaude, fake_api: FakeAnthropic, hookgate_bin: Path, tmp_path: Path
) -> None:
    tests_log = tmp_path / "tests.log"
    reason = "The transcript shows no test run; run the test suite and report its result."
    script = [text("done"), bash(f"echo '3 passed' > {tests_log}", "run the tests"), text("3 tests passed")]

    plain = control(run_claude, tmp_path, script)  # no Stop check: the model stops after "done"
    assert not tests_log.exists() and len(plain.main_requests) == 1, plain.describe()

    judge = Judge(lambda i: (False, reason) if i == 0 else (True, "The tests ran: 3 passed."))
    fake_api.responder = judge
    config = judge_config(tmp_path, fake_api)
    run = claude(
        run_claude,
        tmp_path,
        hookgate_run_settings(hookgate_bin, config=config),
        script,
        env={"HOOKGATE_E2E_JUDGE_KEY": JUDGE_KEY},
    )

    assert tests_log.read_text() == "3 passed\n", run.describe()  # Claude Code went back to work
    assert run.run.returncode == 0 and run.result.get("result") == "3 tests passed", run.describe()
    assert len(run.main_requests) == 3, run.describe()
    # the judge's reason reached the model as the Stop feedback
    assert reason in json.dumps(run.main_requests[1].body["messages"])
    first, second = run.hook_responses("Stop")
    assert first["exit_code"] == 2, run.describe()  # block = exit 2 + JSON {"decision": "block"}
    assert run.hook_answers("Stop")[0]["decision"] == "block"
    assert (second["exit_code"], second["stdout"]) == (0, ""), run.describe()  # ok: nothing to say
    calls = judge_requests(run)
    assert len(calls) == 2 and all(r.api_key == JUDGE_KEY for r in calls), run.describe()
    assert '\\"stop_hook_active\\":false' in judge.prompts()[0]  # $ARGUMENTS: the Stop event itself
    assert '\\"stop_hook_active\\":true' in judge.prompts()[1]
    assert '\\"last_assistant_message\\":\\"3 tests passed\\"' in judge.prompts()[1]
    # hookgate read the CLI's real transcript file: the tool call is only there, not in the event
    assert str(tests_log) in judge.prompts()[1] and str(tests_log) not in judge.prompts()[0]


def test_stop_check_that_never_passes_is_cut_off_by_stop_block_limit(
    run_claude: RunClaude, fake_api: FakeAnthropic, hookgate_bin: Path, tmp_path: Path
) -> None:
    limit = 2
    script = [text("done")]  # later main-loop calls get the fake's fallback text

    plain = control(run_claude, tmp_path, script)
    assert len(plain.main_requests) == 1, plain.describe()

    never = Judge(lambda i: (False, "The tests were not run."))
    fake_api.responder = never
    # The same check as a native Claude Code prompt hook: only the CLI's own cap ends the loop.
    native_hook = {"type": "prompt", "prompt": STOP_CONDITION, "timeout": 20}
    native = claude(run_claude, tmp_path, {"hooks": {"Stop": [{"hooks": [native_hook]}]}}, script)
    native_checks = len(never.bodies)
    assert native.run.returncode == 0, native.describe()
    assert native_checks >= 8, f"Claude Code's own cap: {native_checks} checks\n{native.describe()}"

    never.bodies.clear()
    config = judge_config(tmp_path, fake_api, settings={"stopBlockLimit": limit})
    run = claude(
        run_claude,
        tmp_path,
        hookgate_run_settings(hookgate_bin, config=config),
        script,
        env={"HOOKGATE_E2E_JUDGE_KEY": JUDGE_KEY},
    )

    assert run.run.returncode == 0 and run.result.get("is_error") is False, run.describe()
    assert len(judge_requests(run)) == len(never.bodies) == limit, run.describe()  # then hookgate stopped asking
    stops = run.hook_responses("Stop")
    assert [h["exit_code"] for h in stops] == [2] * limit + [0], run.describe()
    assert [a.get("decision") for a in run.hook_answers("Stop")] == ["block"] * limit + [None]
    assert run.hook_answers("Stop")[-1].get("systemMessage"), "the stop went through silently"
    assert len(run.main_requests) == limit + 1, run.describe()
    # the per-session counter lives in the test's own state dir
    assert (state_dir(tmp_path) / "state.sqlite3").exists()


# --------------------------------------------------------------------------- 5. failClosed

GUARD = """#!/bin/sh
# A policy guard: denies rm -rf, says nothing otherwise.
case "$(cat)" in
  *'rm -rf'*) printf '%s\\n' '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "guard says no"}}' ;;
esac
"""
CRASHING_GUARD = """#!/bin/sh
cat > /dev/null
echo '{"hookSpecificOutput": {"permissionDecision": "de'   # half a JSON answer ...
echo 'Traceback (most recent call last): guard exploded' >&2
exit 1                                                     # ... and a crash
"""
HANGING_GUARD = """#!/bin/sh
cat > /dev/null
exec sleep 30
"""


def _failing_guard(tmp_path: Path, failure: str) -> tuple[Path, list[ScriptItem], str]:
    """(guard script, model script, the rm command) for one way a guard can fail."""
    victim = make_victim(tmp_path)
    rm = f"rm -rf {victim}"
    hooks_dir = tmp_path / "guards"
    if failure == "crash":
        guard = write_script(hooks_dir / "guard.sh", CRASHING_GUARD)
        return guard, [bash(rm), text("done")], rm
    if failure == "hang":
        guard = write_script(hooks_dir / "guard.sh", HANGING_GUARD)
        return guard, [bash(rm), text("done")], rm
    # "deleted": the guard is valid when the config is first loaded (and cached), then the session
    # deletes it (a checkout, a cleanup...). The first Bash call does the deleting.
    guard = write_script(hooks_dir / "guard.sh", GUARD)
    return guard, [bash(f"unlink {guard}", "tidy up"), bash(rm), text("done")], rm


@pytest.mark.parametrize("failure", ["crash", "deleted", "hang"])
def test_fail_closed_guard_failure_denies_where_a_native_hook_fails_open(
    run_claude: RunClaude, hookgate_bin: Path, tmp_path: Path, failure: str
) -> None:
    guard, script, rm = _failing_guard(tmp_path, failure)
    victim = Path(rm.split()[-1])
    plain = control(run_claude, tmp_path, script)
    assert not victim.exists(), plain.describe()

    # The same guard as a native Claude Code command hook: its failure lets the tool run.
    guard, script, rm = _failing_guard(tmp_path, failure)
    native = claude(run_claude, tmp_path, command_hook_settings(shlex.quote(str(guard)), timeout=1), script)
    assert not victim.exists(), f"native hook did not fail open: {native.describe()}"
    assert native.permission_denials == []
    assert len(native.hook_responses("PreToolUse")) == len(script) - 1

    # The same guard behind hookgate with failClosed: the tool is denied through exit 2.
    guard, script, rm = _failing_guard(tmp_path, failure)
    config = write_config(
        tmp_path / "hookgate.json",
        {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        {
                            "type": "command",
                            "id": "rm-guard",
                            "if": "Bash(rm *)",
                            "command": str(guard),
                            "timeout": 1,
                            "failClosed": True,
                        }
                    ],
                }
            ]
        },
    )
    run = claude(
        run_claude, tmp_path, hookgate_run_settings(hookgate_bin, config=config, events=("PreToolUse",)), script
    )
    assert (victim / "file.txt").exists(), run.describe()
    if failure == "deleted":
        assert not guard.exists(), "the session did not delete the guard"
    assert_denied(run, rm)
    assert run.denied_commands == [rm]
    rm_hook = hookgate_pre_tool(run)[-1]
    assert rm_hook["exit_code"] == 2, run.describe()
    answer = run.hook_answers("PreToolUse")[-1]["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert "rm-guard" in answer["permissionDecisionReason"]  # hookgate names the failed handler


# --------------------------------------------------------------------------- 6. mcp_tool: the shipped validator

MCP_POLICY_EXAMPLE = Path(default_config_path()).parent / "examples" / "mcp-policy.yaml"


@pytest.mark.parametrize("transport", ["run", "serve"])
def test_mcp_tool_handler_with_the_shipped_policy_validator_denies_rm_rf(
    run_claude: RunClaude,
    hookgate_bin: Path,
    hookgate_server: Callable[[Path], HookgateServer],
    tmp_path: Path,
    transport: str,
) -> None:
    _control_echo_then_rm(run_claude, tmp_path)
    victim, marker, rm, script = _echo_then_rm(tmp_path)
    # The shipped example config as it is: mcp_tool -> configs/validators/policy.py check_command (stdio MCP).
    if transport == "run":  # a fresh MCP session per hook call
        settings = hookgate_run_settings(hookgate_bin, config=MCP_POLICY_EXAMPLE, events=("PreToolUse",))
    else:  # one warm session in hookgate serve
        settings = hookgate_http_settings(hookgate_server(MCP_POLICY_EXAMPLE).port, events=("PreToolUse",))

    run = claude(run_claude, tmp_path, settings, script)

    assert (victim / "file.txt").exists() and marker.exists(), run.describe()
    assert_denied(run, rm)
    assert run.denied_commands == [rm]
    echo_answer, rm_answer = run.hook_answers("PreToolUse")
    assert echo_answer.get("hookSpecificOutput", {}).get("permissionDecision") in (None, "allow"), run.describe()
    assert rm_answer["hookSpecificOutput"]["permissionDecision"] == "deny", run.describe()
    codes = [0, 2] if transport == "run" else [200, 200]  # command hook exit codes / HTTP statuses
    assert [h["exit_code"] for h in run.hook_responses("PreToolUse")] == codes, run.describe()
