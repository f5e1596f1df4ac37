"""``readOnly``: deny write-class tool calls while read-only mode is on.

On when the state store's ``readOnly`` flag is set (``hookgate mode read-only on|off|status``, any
process, any host sharing the store) or ``settings.readOnly: true``. What counts as a write is
``handlers.builtin.writes.write_reason`` (file writes and edits, shell commands that may write, tools
whose names or SQL arguments write); options ``writeTools``, ``readTools``, ``writeVerbs``,
``sqlFields``, ``readCommands`` tune it. Off: no decision at all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gateway.decision import Verdict
from handlers.builtin.writes import WriteRules, write_reason

if TYPE_CHECKING:
    from gateway.context import RunContext
    from gateway.events import HookEvent

FLAG = "readOnly"
"""The state-store flag (JSON true/false) that ``hookgate mode read-only`` sets."""


def is_on(ctx: RunContext) -> tuple[bool, str]:
    """Whether read-only mode is on, and where that comes from (``settings`` or ``flag``)."""
    if ctx.config.settings.get("read_only"):
        return True, "settings.readOnly"
    return bool(ctx.state.flag_get(FLAG)), "hookgate mode read-only on"


async def ais_on(ctx: RunContext) -> tuple[bool, str]:
    """``is_on`` through the store's async form (``hookgate serve``)."""
    if ctx.config.settings.get("read_only"):
        return True, "settings.readOnly"
    return bool(await ctx.state.aflag_get(FLAG)), "hookgate mode read-only on"


def rules_from(options: dict[str, Any]) -> WriteRules:
    rules = WriteRules()
    for name in ("write_tools", "read_tools", "write_verbs", "sql_fields", "read_commands"):
        if options.get(name) is not None:
            setattr(rules, name, list(options[name]))
    return rules


SHELL_TOOLS = frozenset({"Bash", "PowerShell"})
"""Tools whose input takes a parser to judge (bashlex alone costs a `hookgate run` about 100 ms to import):
under ``run`` the mode is read first, and a call made while it is off is never parsed."""


def run(options: dict[str, Any], event: HookEvent, ctx: RunContext, handler_id: str) -> Verdict:
    """Deny a write while the mode is on. A call that writes nothing never reads the store, except a shell
    command (``SHELL_TOOLS``): reading the flag (a few ms) is cheaper than loading the parser."""
    if event.tool_name in SHELL_TOOLS:
        from gateway.errors import StoreError

        try:
            on, source = is_on(ctx)
        except StoreError:  # the store cannot say: judge the command first, as for any tool (a read passes)
            pass
        else:
            if not on:
                return Verdict()
            why = write_reason(event.tool_name, event.tool_input, rules_from(options))
            return Verdict() if why is None else _answer(why, on, source)
    why = write_reason(event.tool_name, event.tool_input, rules_from(options))
    if why is None:
        return Verdict()
    return _answer(why, *is_on(ctx))


async def arun(options: dict[str, Any], event: HookEvent, ctx: RunContext, handler_id: str) -> Verdict:
    """``run`` through the store's async form (``hookgate serve``)."""
    why = write_reason(event.tool_name, event.tool_input, rules_from(options))
    if why is None:
        return Verdict()
    return _answer(why, *await ais_on(ctx))


def _answer(why: str, on: bool, source: str) -> Verdict:
    if not on:
        return Verdict()
    return Verdict(permission="deny", permission_reason=f"hookgate read-only mode is on ({source}): {why}")
