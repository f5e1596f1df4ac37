"""Class hooks used by the example agent (``configs/examples/python_agent.py``, ``python-agent.yaml``).

They show FIM One's contract as hookgate runs it: priorities (lower first), rewrites that chain,
a deny, a rewritten result, side effects for the audit trail and context at session start.
"""

from __future__ import annotations

import re

from gateway.hooks import HookContext, HookResult, PostToolUseHook, PreToolUseHook, SessionStartHook

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")


class BlockDrop(PreToolUseHook):
    """Runs first: no DROP statements, whatever other hooks would make of the query."""

    name = "block-drop"
    priority = 5
    tool_filter = "run_sql"

    def execute(self, ctx: HookContext) -> HookResult:
        if "drop " in str(ctx.tool_args.get("sql", "")).lower():
            return HookResult(
                allow=False,
                error="DROP statements are not allowed for this agent",
                side_effects=["refused a DROP statement"],
            )
        return HookResult()


class CapRows(PreToolUseHook):
    """Adds ``LIMIT 100`` to queries that have no limit."""

    name = "cap-rows"
    priority = 10
    tool_filter = "run_sql"

    def should_trigger(self, ctx: HookContext) -> bool:
        return "limit" not in str(ctx.tool_args.get("sql", "")).lower()

    async def execute(self, ctx: HookContext) -> HookResult:
        sql = str(ctx.tool_args["sql"]).rstrip("; ")
        return HookResult(
            modified_args={**ctx.tool_args, "sql": f"{sql} LIMIT 100"}, side_effects=["capped the query at 100 rows"]
        )


class TagQuery(PreToolUseHook):
    """Runs after CapRows and sees its rewrite: tags the query with who asked for it."""

    name = "tag-query"
    priority = 20
    tool_filter = "run_sql"

    async def execute(self, ctx: HookContext) -> HookResult:
        sql = str(ctx.tool_args["sql"])
        return HookResult(
            modified_args={**ctx.tool_args, "sql": f"{sql} /* user={ctx.user_id} */"},
            side_effects=[f"tagged the query for {ctx.user_id}"],
        )


class RedactEmails(PostToolUseHook):
    """Replaces e-mail addresses in every tool result before the model sees it."""

    name = "redact-emails"
    priority = 10

    async def execute(self, ctx: HookContext) -> HookResult:
        if not isinstance(ctx.tool_result, str) or not _EMAIL.search(ctx.tool_result):
            return HookResult()
        count = len(_EMAIL.findall(ctx.tool_result))
        return HookResult(
            modified_result=_EMAIL.sub("[email]", ctx.tool_result),
            side_effects=[f"redacted {count} e-mail address(es)"],
        )


class Briefing(SessionStartHook):
    """Tells the model the house rules when a session starts."""

    name = "briefing"

    async def execute(self, ctx: HookContext) -> HookResult:
        return HookResult(
            additional_context=f"You are {ctx.agent_id}, working for {ctx.user_id}. Queries are capped at 100 rows.",
            side_effects=["briefed the agent"],
        )
