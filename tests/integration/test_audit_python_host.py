"""What the audit record holds when a python handler's ``updatedInput`` is something JSON cannot carry (a
tuple key, nesting thousands deep, mixed key types; the event itself cannot: the Python API refuses such
arguments): the record is written, the value shown by a placeholder, and ``hookgate audit`` (another
process) reads and verifies it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gateway import Gateway
from tests.conftest import run_hookgate

REWRITER = {"type": "python", "id": "rewriter", "callable": "tests.integration.audit_funcs:rewrites_unencodable"}


def write_config(tmp_path: Path) -> str:
    doc = {"hooks": {"PreToolUse": [{"hooks": [REWRITER]}]}, "settings": {"stateDir": str(tmp_path / "state")}}
    path = tmp_path / "hookgate.json"
    path.write_text(json.dumps(doc))
    return str(path)


def stored(config: str) -> dict[str, dict[str, Any]]:
    """The PreToolUse records by tool name, as ``hookgate audit query --json`` gives them."""
    listed = run_hookgate(["audit", "query", "--json", "--event", "PreToolUse", "-c", config])
    assert listed.returncode == 0, listed.stderr
    return {r["tool_name"]: r for r in json.loads(listed.stdout)}


async def test_a_rewrite_json_cannot_carry_is_recorded_with_a_placeholder(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = write_config(tmp_path)
    async with Gateway.from_file(config) as gw:
        for name in ("tuple_key", "deep", "mixed_keys"):
            async with gw.tool_call(name, {"a": 1}, session_id="s") as call:
                call.result = 1
    assert "cannot record" not in caplog.text
    records = stored(config)
    assert set(records) == {"tuple_key", "deep", "mixed_keys"}
    tuple_key = records["tuple_key"]
    assert tuple_key["decision"] == "allow" and tuple_key["tool_input"] == {"a": 1}
    assert tuple_key["updated_input"] == {"a": 1, "[unencodable: key of type tuple: (1, 2)]": "kept", "b": 2}
    level, levels = records["deep"]["updated_input"], 0
    while isinstance(level, dict):
        level, levels = level["a"], levels + 1
    assert level == "[unencodable: nested deeper than 100 levels: dict]" and levels > 90
    assert records["mixed_keys"]["updated_input"] == {"a": 1, "1": "one", "y": 2}
    verified = run_hookgate(["audit", "verify", "-c", config])
    assert verified.returncode == 0, verified.stderr


async def test_an_unencodable_rewrite_with_a_secret_is_still_redacted(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    async with Gateway.from_file(config) as gw, gw.tool_call("leaky", {"a": 1}, session_id="s") as call:
        call.result = 1
    record = stored(config)["leaky"]
    assert record["updated_input"] == {
        "a": 1,
        "[unencodable: key of type tuple: (1,)]": "token [REDACTED:api_key]",
        "password": "[REDACTED:key]",
    }
    assert "ghp_" + "k" * 36 not in json.dumps(record) and "hunter2" not in json.dumps(record)
