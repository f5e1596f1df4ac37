"""``gateway.events.decode_event_bytes``: the nesting cap (``MAX_DEPTH``)."""

from __future__ import annotations

import json

import pytest

from gateway.errors import EventUndecodable
from gateway.events import MAX_DEPTH, decode_event_bytes


def _event(levels: int) -> bytes:
    """An event nested ``levels`` deep: the event object, tool_input, then arrays."""
    inner = levels - 2
    return b'{"hook_event_name": "PreToolUse", "tool_input": {"a": ' + b"[" * inner + b"]" * inner + b"}}"


def test_nesting_is_capped_well_below_the_recursion_limit() -> None:
    assert decode_event_bytes(_event(MAX_DEPTH))["hook_event_name"] == "PreToolUse"
    for levels in (MAX_DEPTH + 1, 990):
        with pytest.raises(EventUndecodable, match="nested too deeply"):
            decode_event_bytes(_event(levels))


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"hook_event_name": "PreToolUse", "tool_input": {"content": "[" * 5000 + "{" * 5000}})
    assert decode_event_bytes(text.encode())["tool_input"]["content"].startswith("[[[")


def test_many_shallow_containers_pass() -> None:
    rows = [{"id": n, "tags": [str(n)]} for n in range(2000)]
    text = json.dumps({"hook_event_name": "PostToolUse", "tool_response": {"rows": rows}})
    assert len(decode_event_bytes(text.encode())["tool_response"]["rows"]) == 2000
