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


def run(options: dict[str, Any], event: HookEvent, ctx: RunContext, handler_id: str) -> Verdict:
    limit: int = options["limit"]
    window: float = options["window"]
    per = list(options.get("per") or DEFAULT_PER)
    now = time.time()
    bucket = int(now // window)
    values = [key_part(name, event) for name in per]
    key = json.dumps([handler_id, values, window, bucket], separators=(",", ":"))
    count = ctx.state.counter_add_capped(SCOPE, key, limit)
    if count == 1:  # a new window: the previous one's count is no longer needed
        ctx.state.counter_reset(SCOPE, json.dumps([handler_id, values, window, bucket - 1], separators=(",", ":")))
    if count is not None:
        return Verdict()
    resets = (bucket + 1) * window - now
    who = ", ".join(f"{n}={v}" for n, v in zip(per, values, strict=True))
    reason = (f"hookgate rate limit: {limit} calls per {window:g} s reached for {who}; "
              f"the window ends in {resets:.0f} s")
    return Verdict(permission="ask" if options.get("on_limit") == "ask" else "deny", permission_reason=reason)
