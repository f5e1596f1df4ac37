"""Python handlers for the audit tests (``tests.integration.audit_funcs:NAME``)."""

from __future__ import annotations

from typing import Any


def notify(event: dict[str, Any]) -> dict[str, Any]:
    """No decision, one side effect."""
    return {"side_effects": [f"notified #sec about {event.get('tool_name')}"]}


def approve(event: dict[str, Any]) -> Any:
    """An allow that an approval decided: meta["approval"] as the approval handler sets it."""
    from gateway.decision import Verdict

    return Verdict(permission="allow", permission_reason="approved by alice", side_effects=["approval 7 granted"])


def deny_why(event: dict[str, Any]) -> Any:
    """A deny whose reason is the tool input's ``why`` (text an agent chose)."""
    from gateway.decision import Verdict

    return Verdict(permission="deny", permission_reason=str(event["tool_input"].get("why")))


def _nested(depth: int) -> dict[str, Any]:
    top: dict[str, Any] = {}
    level = top
    for _ in range(depth):
        level["a"] = {}
        level = level["a"]
    return top


UNENCODABLE: dict[str, Any] = {
    "tuple_key": lambda: {(1, 2): "kept", "b": 2},
    "deep": lambda: _nested(5000),
    "mixed_keys": lambda: {1: "one", "y": 2},
    "leaky": lambda: {(1,): "token ghp_" + "k" * 36, "password": "hunter2"},
}


def rewrites_unencodable(event: dict[str, Any]) -> Any:
    """An allow whose updatedInput is something JSON cannot carry (``UNENCODABLE[tool_name]``): Python
    handlers may put any object there."""
    from gateway.decision import Verdict

    return Verdict(permission="allow", updated_input=UNENCODABLE[event["tool_name"]]())
