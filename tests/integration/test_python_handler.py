"""The in-process `python` handler: answers, failures, fail-closed, and no asyncio on the sync path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gateway.api import Gateway
from gateway.config import load_config
from gateway.errors import ConfigError
from tests.conftest import ROOT

PRE = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "rm -rf x"}, "cwd": "/tmp"}


def _config(tmp_path: Path, *handlers: dict[str, Any], event: str = "PreToolUse") -> Path:
    path = tmp_path / "hookgate.json"
    path.write_text(json.dumps({"hooks": {event: [{"hooks": list(handlers)}]}}))
    return path


def _py(name: str, **kw: Any) -> dict[str, Any]:
    return {"type": "python", "callable": f"tests.integration.policy_funcs:{name}", **kw}


async def test_dict_string_async_and_none_answers(tmp_path: Path) -> None:
    async with Gateway.from_file(str(_config(tmp_path, _py("deny_rm"), _py("async_ask")))) as gw:
        d = await gw.dispatch(PRE)
        assert (d.permission, d.permission_reason) == ("deny", "no rm")
        ok = await gw.dispatch({**PRE, "tool_input": {"command": "ls"}})
        assert ok.permission == "ask"
    async with Gateway.from_file(str(_config(tmp_path, _py("context"), event="UserPromptSubmit"))) as gw:
        d = await gw.dispatch({"hook_event_name": "UserPromptSubmit", "prompt": "hi"})
        assert d.additional_context == ["prompt was 'hi'"]


async def test_failures_fail_closed_and_the_event_is_not_mutated(tmp_path: Path) -> None:
    path = _config(tmp_path, _py("crash", failClosed=True), _py("mutate"), _py("bad_answer"))
    async with Gateway.from_file(str(path)) as gw:
        d = await gw.dispatch(PRE)
    assert d.permission == "deny" and "policy bug" in (d.permission_reason or "")
    assert [r.status for r in d.results] == ["error", "ok", "error"]
    assert d.updated_input is None and "expected a dict" in (d.results[2].message or "")


async def test_a_function_that_declares_itself_readonly_gets_the_event_itself(tmp_path: Path) -> None:
    from tests.integration import policy_funcs

    policy_funcs.SEEN.clear()
    event = {**PRE, "tool_input": dict(PRE["tool_input"])}
    path = _config(tmp_path, _py("seen_copy"), _py("mutate"), _py("seen_readonly"))
    async with Gateway.from_file(str(path)) as gw:
        await gw.dispatch(event)
    copied, given = policy_funcs.SEEN
    assert given is event and copied is not event and copied == event  # a copy for the undeclared one
    assert event["tool_input"]["command"] == "rm -rf x"  # mutate changed only its own copy
    policy_funcs.SEEN.clear()  # a functools.wraps wrapper inherits the flag, not the promise: it gets a copy
    path = _config(tmp_path, _py("wrapped_mutator"), _py("deny_rm"))
    async with Gateway.from_file(str(path)) as gw:
        d = await gw.dispatch(event)
    assert event["tool_input"]["command"] == "rm -rf x" and d.permission == "deny"


async def test_missing_callable_is_reported_and_fails_closed(tmp_path: Path) -> None:
    path = _config(tmp_path, _py("nope"), {"type": "python", "callable": "no_such_mod:f"})
    broken = load_config([str(path)], use_cache=False).broken
    assert any("has no attribute 'nope'" in i for i in broken)
    assert any("cannot import no_such_mod" in i for i in broken)
    with pytest.raises(ConfigError, match="2 hook\\(s\\) cannot be built"):  # the Python API refuses it outright
        Gateway.from_file(str(path))
    async with Gateway.from_file(str(path), strict=False) as gw:  # as hookgate run/serve: fails closed
        d = await gw.dispatch(PRE)
    assert d.permission == "deny" and "cannot run" in (d.permission_reason or "")


def test_sync_path_imports_no_asyncio(tmp_path: Path) -> None:
    path = _config(tmp_path, _py("deny_rm", failClosed=True))
    code = (
        f"import sys, io, json; sys.argv=['hookgate','run','--config',{str(path)!r}]; "
        f"sys.stdin=io.TextIOWrapper(io.BytesIO(json.dumps({PRE!r}).encode()));"
        "from gateway.cli import main; rc=main(); "
        "print('ASYNCIO' if 'asyncio' in sys.modules else 'NOASYNCIO', rc, file=sys.stderr)"
    )
    for _ in range(2):  # the first run validates and caches the config; the second is the hot path
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert "NOASYNCIO 2" in proc.stderr, proc.stderr
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_an_answer_json_cannot_carry_is_a_handler_failure_never_invalid_output(tmp_path: Path) -> None:
    """A dict answer with NaN in updatedInput: a command could never have printed it, and ``json`` would
    write ``NaN`` (not JSON) to the host. It is a handler error naming the field (a deny with
    failClosed); the host gets valid output either way."""
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(ROOT),
        "XDG_STATE_HOME": str(tmp_path / "s"),
        "HOOKGATE_CACHE_DIR": str(tmp_path / "c"),
    }
    event = json.dumps({**PRE, "session_id": "s"})
    for fail_closed, code in ((False, 0), (True, 2)):
        path = _config(tmp_path, _py("nan_rewrite", failClosed=fail_closed))
        done = subprocess.run(
            [sys.executable, str(ROOT / "gateway" / "cli" / "hookgate"), "run", "--config", str(path)],
            input=event,
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert done.returncode == code, done.stderr
        assert "NaN" not in done.stdout
        if done.stdout.strip():
            answer = json.loads(done.stdout)
            assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert "'hookSpecificOutput.updatedInput.timeout' holds nan" in done.stderr
