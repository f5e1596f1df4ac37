"""What the Python host API records when a tool call's arguments are something JSON cannot carry (a
tuple key, nesting thousands deep): the deny is recorded, the value shown by a placeholder, and
``hookgate audit`` (another process) reads and verifies it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gateway import Gateway, ToolCallDenied
from tests.conftest import run_hookgate

FAIL_CLOSED = {"type": "command", "id": "guard", "command": "cat > /dev/null; echo '{}'", "failClosed": True}


def write_config(tmp_path: Path) -> str:
    doc = {
        "hooks": {"PreToolUse": [{"hooks": [FAIL_CLOSED]}], "PostToolUse": [{"hooks": [FAIL_CLOSED]}]},
        "settings": {"stateDir": str(tmp_path / "state")},
    }
    path = tmp_path / "hookgate.json"
    path.write_text(json.dumps(doc))
    return str(path)


def nested(depth: int) -> dict[str, Any]:
    top: dict[str, Any] = {}
    level = top
    for _ in range(depth):
        level["a"] = {}
        level = level["a"]
    return top


def stored(config: str) -> dict[str, dict[str, Any]]:
    """The PreToolUse records by tool name, as ``hookgate audit query --json`` gives them."""
    listed = run_hookgate(["audit", "query", "--json", "--event", "PreToolUse", "-c", config])
    assert listed.returncode == 0, listed.stderr
    return {r["tool_name"]: r for r in json.loads(listed.stdout)}


async def test_a_deny_of_arguments_json_cannot_carry_is_recorded_with_a_placeholder(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = write_config(tmp_path)
    calls: list[tuple[str, Any]] = [("tuple_key", {(1, 2): "kept", "b": 2}), ("deep", nested(5000))]
    mixed: Any = {1: "one", "y": 2}  # (an untyped caller's arguments: not the dict[str, Any] declared)
    async with Gateway.from_file(config) as gw:
        for name, args in calls:
            with pytest.raises(ToolCallDenied):
                async with gw.tool_call(name, args, session_id="s") as call:
                    call.result = 1
        async with gw.tool_call("mixed_keys", mixed, session_id="s") as call:
            call.result = 1
    assert "cannot record" not in caplog.text
    records = stored(config)
    assert set(records) == {"tuple_key", "deep", "mixed_keys"}
    tuple_key = records["tuple_key"]
    assert tuple_key["decision"] == "deny" and "failClosed" in tuple_key["reason"]
    assert tuple_key["tool_input"] == {"[unencodable: key of type tuple: (1, 2)]": "kept", "b": 2}
    deep = records["deep"]
    assert deep["decision"] == "deny"
    level, levels = deep["tool_input"], 0
    while isinstance(level, dict):
        level, levels = level["a"], levels + 1
    assert level == "[unencodable: nested deeper than 100 levels: dict]" and levels > 90
    assert records["mixed_keys"]["tool_input"] == {"1": "one", "y": 2}
    verified = run_hookgate(["audit", "verify", "-c", config])
    assert verified.returncode == 0, verified.stderr


async def test_an_unencodable_argument_with_a_secret_is_still_redacted(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    key = "ghp_" + "k" * 36
    args: Any = {(1,): f"token {key}", "password": "hunter2"}
    async with Gateway.from_file(config) as gw:
        with pytest.raises(ToolCallDenied):
            async with gw.tool_call("leaky", args, session_id="s"):
                pass
    record = stored(config)["leaky"]
    assert record["tool_input"] == {
        "[unencodable: key of type tuple: (1,)]": "token [REDACTED:api_key]",
        "password": "[REDACTED:key]",
    }
    assert key not in json.dumps(record) and "hunter2" not in json.dumps(record)
