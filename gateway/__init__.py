"""hookgate: a hook gateway for AI coding agents.

One event in (Claude Code, Kiro, ... JSON), the configured hooks whose matcher and ``if`` rule fit
it run, one decision out. The public API is imported lazily so that ``hookgate run`` stays cheap::

    from gateway import Gateway, Decision, HookEvent, register_handler
"""

from __future__ import annotations

from gateway.wire import VERSION as __version__  # noqa: F401  (the package version, re-exported)

TYPE_CHECKING = False  # importing typing costs ~2 ms, paid by every thin-client hook call
__all__ = [
    "ActionDenied",
    "ConfigError",
    "Decision",
    "EventError",
    "Gateway",
    "HandlerError",
    "HandlerResult",
    "HookContext",
    "HookEvent",
    "HookResult",
    "HookgateError",
    "PostToolUseHook",
    "PreToolUseHook",
    "SessionStartHook",
    "ToolCallDenied",
    "Verdict",
    "register_handler",
]

if TYPE_CHECKING:
    from typing import Any

    from gateway.api import Gateway
    from gateway.decision import Decision, HandlerResult, Verdict
    from gateway.errors import ActionDenied, ConfigError, EventError, HandlerError, HookgateError, ToolCallDenied
    from gateway.events import HookEvent
    from gateway.hooks import HookContext, HookResult, PostToolUseHook, PreToolUseHook, SessionStartHook
    from handlers.base import register_handler

_LAZY = {
    "Gateway": "gateway.api",
    "Decision": "gateway.decision",
    "HandlerResult": "gateway.decision",
    "Verdict": "gateway.decision",
    "HookEvent": "gateway.events",
    "ConfigError": "gateway.errors",
    "EventError": "gateway.errors",
    "HandlerError": "gateway.errors",
    "HookgateError": "gateway.errors",
    "register_handler": "handlers.base",
    "ActionDenied": "gateway.errors",
    "ToolCallDenied": "gateway.errors",
    "HookContext": "gateway.hooks",
    "HookResult": "gateway.hooks",
    "PreToolUseHook": "gateway.hooks",
    "PostToolUseHook": "gateway.hooks",
    "SessionStartHook": "gateway.hooks",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'gateway' has no attribute {name!r}")
