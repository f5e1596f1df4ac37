"""In-process hook callables for tests/unit/test_dispatcher.py (``type: python`` handlers)."""

from __future__ import annotations

from typing import Any

from gateway.decision import Verdict

CALLS: list[str] = []


def allow(event: dict[str, Any]) -> dict[str, Any]:
    CALLS.append("allow")
    return {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionReason": "fine"}
    }


def deny(event: dict[str, Any]) -> dict[str, Any]:
    CALLS.append("deny")
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "no",
        }
    }


def add_flag(event: dict[str, Any]) -> dict[str, Any]:
    CALLS.append("add_flag")
    command = event["tool_input"]["command"]
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": f"{command} --safe"}}}


def crash(event: dict[str, Any]) -> None:
    CALLS.append("crash")
    raise ValueError("boom\nsecond line")


def with_effects(event: dict[str, Any]) -> Verdict:
    CALLS.append("with_effects")
    return Verdict(additional_context="noted", side_effects=["wrote audit line"])


def nothing(event: dict[str, Any]) -> None:
    CALLS.append("nothing")


def seen(event: dict[str, Any]) -> dict[str, Any]:
    CALLS.append("seen")
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "additionalContext": f"saw {event['tool_input']['command']}",
        }
    }


async def slow(event: dict[str, Any]) -> None:
    import asyncio  # here, not at the top: a test checks that synchronous runs never import asyncio

    CALLS.append("slow")
    await asyncio.sleep(30)


async def async_deny(event: dict[str, Any]) -> dict[str, Any]:
    import asyncio

    CALLS.append("async_deny")
    await asyncio.sleep(0)
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "no",
        }
    }


def mark(event: dict[str, Any]) -> None:
    """Write the command it saw to the file ``$HOOKGATE_TEST_MARK`` (a background handler's trace)."""
    import os

    CALLS.append("mark")
    with open(os.environ["HOOKGATE_TEST_MARK"], "w", encoding="utf-8") as fh:
        fh.write(event["tool_input"]["command"])
