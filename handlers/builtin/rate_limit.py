"""``rateLimit``: at most ``limit`` calls per ``window`` seconds per key; deny (or ask) past it.

Key: the handler's id plus one value per entry of ``per`` (default ``[session, tool]``): ``session``
(``session_id``), ``user`` (the event's ``user_id``, else the OS user running hookgate), ``agent``
(``agent_id``, else ``agent_type``, else ``main``), ``tool`` (canonical tool name), ``server`` (the MCP
server of ``mcp__server__tool``, ``-`` for other tools). Windows are fixed: the key carries
``floor(now / window)``, and the count goes through ``Store.counter_add_capped`` (atomic +1 only
while below ``limit``), so the limit holds exactly across concurrent ``hookgate run`` processes and,
with a shared store, across machines. Past the limit: ``onLimit: deny`` (default) denies with a
reason naming the limit and when the window ends; ``onLimit: ask`` asks instead.
"""

from __future__ import annotations

import getpass
import json
import time
from typing import TYPE_CHECKING, Any

from gateway.decision import Verdict

if TYPE_CHECKING:
    from gateway.context import RunContext
    from gateway.events import HookEvent

SCOPE = "rateLimit"
DEFAULT_PER = ("session", "tool")


def _user(event: HookEvent) -> str:
    value = event.get("user_id")
    if isinstance(value, str) and value:
        return value
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "-"


def key_part(name: str, event: HookEvent) -> str:
    """One key value for ``per`` entry ``name``."""
    if name == "session":
        return event.session_id or "-"
    if name == "user":
        return _user(event)
    if name == "agent":
        agent = event.get("agent_id") or event.get("agent_type")
        return agent if isinstance(agent, str) and agent else "main"
    tool = event.tool_name or "-"
    if name == "tool":
        return tool
    parts = tool.split("__")
    return parts[1] if tool.startswith("mcp__") and len(parts) >= 3 else "-"


class _Window:
    """One call's place: the counter key of its window (and of the window before), and the answers."""

    def __init__(self, options: dict[str, Any], event: HookEvent, handler_id: str) -> None:
        self.options = options
        self.limit: int = options["limit"]
        self.window: float = options["window"]
        self.per = list(options.get("per") or DEFAULT_PER)
        self.now = time.time()
        self.bucket = int(self.now // self.window)
        self.values = [key_part(name, event) for name in self.per]
        self.key = self._key(self.bucket, handler_id)
        self.previous = self._key(self.bucket - 1, handler_id)

    def _key(self, bucket: int, handler_id: str) -> str:
        return json.dumps([handler_id, self.values, self.window, bucket], separators=(",", ":"))

    def verdict(self, count: int | None) -> Verdict:
        if count is not None:
            return Verdict()
        resets = (self.bucket + 1) * self.window - self.now
        who = ", ".join(f"{n}={v}" for n, v in zip(self.per, self.values, strict=True))
        reason = (
            f"hookgate rate limit: {self.limit} calls per {self.window:g} s reached for {who}; "
            f"the window ends in {resets:.0f} s"
        )
        return Verdict(permission="ask" if self.options.get("on_limit") == "ask" else "deny", permission_reason=reason)


def run(options: dict[str, Any], event: HookEvent, ctx: RunContext, handler_id: str) -> Verdict:
    """The sync form (``hookgate run``'s loop-free path): one round trip, two on a window's first call."""
    w = _Window(options, event, handler_id)
    count = ctx.state.counter_add_capped(SCOPE, w.key, w.limit)
    if count == 1:  # a new window: the previous one's count is no longer needed
        ctx.state.counter_reset(SCOPE, w.previous)
    return w.verdict(count)


async def arun(options: dict[str, Any], event: HookEvent, ctx: RunContext, handler_id: str) -> Verdict:
    """The same through the store's async forms (``hookgate serve``: the event loop never waits on it)."""
    w = _Window(options, event, handler_id)
    count = await ctx.state.acounter_add_capped(SCOPE, w.key, w.limit)
    if count == 1:
        await ctx.state.acounter_reset(SCOPE, w.previous)
    return w.verdict(count)
