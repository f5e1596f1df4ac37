"""A class hook the conformance harness's gateway config runs on every tool call.

It changes nothing (so the standard's vectors decide every outcome) but proves each CTK tool call
went through hookgate's dispatcher too: it counts what it saw in ``SEEN``.
"""

from __future__ import annotations

from gateway.hooks import HookContext, HookResult, PostToolUseHook, PreToolUseHook

SEEN: list[tuple[str, str | None]] = []


class ObservePre(PreToolUseHook):
    name = "ctk-observe-pre"

    def execute(self, ctx: HookContext) -> HookResult:
        SEEN.append((ctx.hook_point, ctx.tool_name))
        return HookResult(side_effects=["observed by hookgate"])


class ObservePost(PostToolUseHook):
    name = "ctk-observe-post"

    def execute(self, ctx: HookContext) -> HookResult:
        SEEN.append((ctx.hook_point, ctx.tool_name))
        return HookResult()
