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
