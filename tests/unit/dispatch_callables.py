"""In-process hook callables for tests/unit/test_dispatcher.py (``type: python`` handlers)."""

from __future__ import annotations

import functools
from typing import Any

from gateway.decision import Verdict
from gateway.hooks import HookContext, HookResult, PreToolUseHook

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
    await asyncio.sleep(5)  # far past any test timeout, short enough when a broken deadline lets it run


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


def block(event: dict[str, Any]) -> dict[str, Any]:
    CALLS.append("block")
    return {"decision": "block", "reason": "not yet"}


def store_down(event: dict[str, Any]) -> None:
    """A check whose state store cannot be reached."""
    from gateway.errors import StoreUnavailable

    CALLS.append("store_down")
    raise StoreUnavailable("state store unreachable: connection refused")


def silent_crash(event: dict[str, Any]) -> None:
    CALLS.append("silent_crash")
    raise RuntimeError()


def crash_with_details(event: dict[str, Any]) -> None:
    from gateway.errors import HandlerError

    CALLS.append("crash_with_details")
    raise HandlerError("exit 3: bad input", meta={"exit_code": 3})


def with_details(event: dict[str, Any]) -> dict[str, Any]:
    """An answer with a ``hookgate`` object: details for explain and the audit, not hook output."""
    CALLS.append("with_details")
    return {
        "hookgate": {"rule": "no-force-push"},
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"},
    }


def redact_output(event: dict[str, Any]) -> dict[str, Any]:
    CALLS.append("redact_output")
    return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": "[redacted]"}}


def saw_output(event: dict[str, Any]) -> dict[str, Any]:
    CALLS.append("saw_output")
    return {
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": f"saw {event['tool_response']}"}
    }


def background_probe(event: dict[str, Any]) -> None:
    """Write this process's id and session id to ``$HOOKGATE_TEST_MARK`` and print to both streams (a
    detached background handler must be in its own session and must not write into the hook's answer)."""
    import json
    import os
    import sys

    print("noise on stdout")
    print("noise on stderr", file=sys.stderr)
    with open(os.environ["HOOKGATE_TEST_MARK"] + ".tmp", "w", encoding="utf-8") as fh:
        json.dump({"pid": os.getpid(), "sid": os.getsid(0)}, fh)
    os.replace(os.environ["HOOKGATE_TEST_MARK"] + ".tmp", os.environ["HOOKGATE_TEST_MARK"])


def nap(event: dict[str, Any]) -> None:
    import time

    CALLS.append("nap")
    time.sleep(0.05)


class Flag(PreToolUseHook):
    """A class hook (a chained handler): adds ``--safe`` to the command."""

    priority = 10

    def execute(self, ctx: HookContext) -> HookResult:
        CALLS.append("Flag")
        return HookResult(modified_args={"command": f"{ctx.tool_args['command']} --safe"})


class RefuseUnsafe(PreToolUseHook):
    """A class hook that runs after ``Flag`` (higher priority number) and denies a command without it."""

    priority = 20

    def execute(self, ctx: HookContext) -> HookResult:
        CALLS.append("RefuseUnsafe")
        if ctx.tool_args["command"].endswith("--safe"):
            return HookResult()
        return HookResult(allow=False, error="unsafe")


def deny_later(event: dict[str, Any]) -> Any:
    """A plain ``def`` that hands back a coroutine (a sync wrapper of an ``async def``): ``run`` awaits it."""

    async def later() -> dict[str, Any]:
        return deny(event)

    return later()


deny_via_partial = functools.partial(deny_later)
"""A callable without code of its own that hands back an awaitable: ``run`` awaits it."""


def echo_secret(event: dict[str, Any]) -> dict[str, Any]:
    """Denies with ``tool_input["secret"]`` in its reason and its rewrite (a handler that leaks what it saw)."""
    CALLS.append("echo_secret")
    secret = event["tool_input"]["secret"]
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": f"found {secret}",
            "updatedInput": {"command": "true", "note": secret},
        }
    }
