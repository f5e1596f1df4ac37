"""Functions used by the `python` handler tests (imported as tests.integration.policy_funcs)."""

from __future__ import annotations

from typing import Any


def deny_rm(event: dict[str, Any]) -> dict[str, Any] | None:
    if "rm" in event.get("tool_input", {}).get("command", ""):
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "no rm",
            }
        }
    return None


def context(event: dict[str, Any]) -> str:
    return f"prompt was {event['prompt']!r}"


async def async_ask(event: dict[str, Any]) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}}


def crash(event: dict[str, Any]) -> None:
    raise RuntimeError("policy bug")


def mutate(event: dict[str, Any]) -> None:
    event["tool_input"]["command"] = "changed"


def bad_answer(event: dict[str, Any]) -> int:
    return 42


SEEN: list[dict[str, Any]] = []


def seen_readonly(event: dict[str, Any]) -> None:
    SEEN.append(event)


seen_readonly.hookgate_readonly = True  # type: ignore[attr-defined]


def seen_copy(event: dict[str, Any]) -> None:
    SEEN.append(event)


def _mutating(function: Any) -> Any:
    import functools

    @functools.wraps(function)  # copies hookgate_readonly from what it wraps
    def wrapper(event: dict[str, Any]) -> Any:
        event["tool_input"]["command"] = "echo hi"
        return function(event)

    return wrapper


wrapped_mutator = _mutating(seen_readonly)


# BaseExceptions raised by a check's own code: handler failures like any exception, never an exit


def exits(event: dict[str, Any]) -> None:
    import sys

    sys.exit(0)


def argparse_help(event: dict[str, Any]) -> None:
    import argparse

    argparse.ArgumentParser(prog="check").parse_args(["-h"])  # prints usage, raises SystemExit(0)


def interrupted(event: dict[str, Any]) -> None:
    raise KeyboardInterrupt


def generator_exit(event: dict[str, Any]) -> None:
    raise GeneratorExit


def self_cancelled(event: dict[str, Any]) -> None:
    import asyncio

    raise asyncio.CancelledError  # not the dispatcher cancelling it


async def async_exits(event: dict[str, Any]) -> None:
    import asyncio
    import sys

    await asyncio.sleep(0)
    sys.exit(3)


def threaded_exits(event: dict[str, Any]) -> None:
    import sys

    sys.exit(0)


threaded_exits.hookgate_threadsafe = True  # type: ignore[attr-defined]


def noisy_ask(event: dict[str, Any]) -> dict[str, Any]:
    print("checking", event.get("tool_name"))  # a check's debug print must not end up in the hook's answer
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "updatedInput": {"command": "ls -l"},
        }
    }


async def async_noisy(event: dict[str, Any]) -> None:
    import asyncio
    import sys

    print("async check")
    await asyncio.sleep(0)
    sys.stdout.write("still checking\n")


def noisy_threaded(event: dict[str, Any]) -> None:
    print("threaded check")


noisy_threaded.hookgate_threadsafe = True  # type: ignore[attr-defined]


from gateway.hooks import HookContext, HookResult, PreToolUseHook  # noqa: E402


class ExitingHook(PreToolUseHook):
    fail_closed = False

    def execute(self, ctx: HookContext) -> HookResult:
        raise SystemExit(0)


class AsyncExitingHook(PreToolUseHook):
    fail_closed = False

    async def execute(self, ctx: HookContext) -> HookResult:
        raise SystemExit(0)


class ExitingFilterHook(PreToolUseHook):
    fail_closed = False

    def should_trigger(self, ctx: HookContext) -> bool:
        raise SystemExit(0)

    def execute(self, ctx: HookContext) -> HookResult:
        return HookResult()


def sleeps(event: dict[str, Any]) -> None:
    import os
    import time

    with open(os.environ["HOOKGATE_TEST_MARK"], "w", encoding="utf-8") as fh:
        fh.write("started")
    time.sleep(30)


def writes_fd1(event: dict[str, Any]) -> dict[str, Any]:
    """Writes to descriptor 1 below sys.stdout, as a C library or a child process would, then denies."""
    import os
    import subprocess

    os.write(1, b"raw fd write\n")
    subprocess.run(["echo", "child output"], check=True)  # inherits descriptor 1
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "no raw writes",
        }
    }


def raises_secret(event: dict[str, Any]) -> None:
    raise RuntimeError("upstream refused key sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345 for this call")


SEEN_RESPONSES: list[Any] = []


def seen_response(event: dict[str, Any]) -> None:
    """Keeps what a PostToolUse hook was handed as ``tool_response``."""
    SEEN_RESPONSES.append(event.get("tool_response"))


def nan_rewrite(event: dict[str, Any]) -> dict[str, Any]:
    """A rewrite no JSON host could read: NaN in updatedInput."""
    out = {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "updatedInput": {"command": "ls", "timeout": float("nan")},
    }
    return {"hookSpecificOutput": out}
