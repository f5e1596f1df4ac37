"""``GatewayHarness``: the AGENT-HOOKS-0.1 CTK adapter for hookgate's Python agent host.

The CTK (``agent-hooks-sdk[ctk]``, pytest plugin ``--agent-hooks-harness=module:Class``) hands each
vector's scripted interceptors, resolver, mode, composition and identity provider to ``setup`` (or a
host declaration to ``setup_declared``). The harness attaches them to a ``Gateway`` with the public
host API (``use_interceptors`` / ``use_interceptor_declaration``) and ``run`` drives one scripted agent
session through the production host calls (``session_start``, ``user_input``, ``model_call``,
``tool_call``, ``stop``, ``output``, ``session_end``), the same calls a real Python agent makes. No
dispatch is re-implemented here: the loop below is the agent, not the host. The gateway runs
``tests/conformance/hookgate.yaml`` (hooks that observe but never decide), so every tool call also
goes through hookgate's dispatcher.

Capabilities: model_calls, tool_calls, int64_json, bigint_json (Python ints are exact),
host_declaration. Not declared: incremental_output (the host buffers model output; those vectors skip).
"""

from __future__ import annotations

import os
import uuid
from typing import Any, ClassVar

from agent_hooks import AgentContext, IdentityProvider
from agent_hooks._types import EnforcementMode
from agent_hooks.approval import ApprovalResolver
from agent_hooks.composition import CompositionConfig
from agent_hooks.ctk.harness import Capability, RunOutcome, RunRecord, Scenario
from agent_hooks.ctk.scripted import redact_paths
from agent_hooks.declaration import HostRegistry
from agent_hooks.interceptor import Interceptor

from gateway import ActionDenied, Gateway, ToolCallDenied

CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hookgate.yaml")
AGENT_ID = "ctk-agent"


def _fault_provider() -> IdentityProvider:
    """The CTK's ``ctk-fault`` identity provider (spec §13.2): it raises, pinning the §10.1 rule."""

    def boom(_ctx: AgentContext) -> str:
        raise RuntimeError("ctk scripted provider fault")

    return IdentityProvider("ctk-fault", boom)


class GatewayHarness:
    """The CTK ``Harness`` for hookgate's Python host (see module docstring)."""

    name = "hookgate-python-host"
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {
            Capability.MODEL_CALLS,
            Capability.TOOL_CALLS,
            Capability.INT64_JSON,
            Capability.BIGINT_JSON,
            Capability.HOST_DECLARATION,
        }
    )
    tool_seam_host_error = "continue"

    def __init__(self) -> None:
        self.gateway: Gateway | None = None
        self.scenario: Scenario | None = None

    def setup(
        self,
        scenario: Scenario,
        interceptors: list[Interceptor],
        resolver: ApprovalResolver | None,
        mode: EnforcementMode,
        composition: CompositionConfig | None = None,
        identity_provider: str | None = "jcs-sha256",
        redact_for_approval: list[str] | None = None,
    ) -> None:
        paths = list(redact_for_approval or [])
        provider: Any = _fault_provider() if identity_provider == "ctk-fault" else identity_provider
        self.gateway = Gateway.from_file(CONFIG)
        self.gateway.use_interceptors(
            list(interceptors),
            mode=mode.value,
            composition=composition,
            resolver=resolver,
            identity_provider=provider,
            redactor=(lambda ctx: redact_paths(ctx, paths)) if paths else None,
        )
        self.scenario = scenario

    def setup_declared(self, scenario: Scenario, document: dict[str, Any], registry: HostRegistry) -> None:
        self.gateway = Gateway.from_file(CONFIG)
        self.gateway.use_interceptor_declaration(document, registry)  # a refusal propagates to the runner
        self.scenario = scenario

    async def run(self) -> RunRecord:
        assert self.gateway is not None and self.scenario is not None
        gw, scenario = self.gateway, self.scenario
        sid = str(uuid.uuid4())
        ids: dict[str, Any] = {"session_id": sid, "agent_id": AGENT_ID}
        tool_log: list[dict[str, Any]] = []
        outcome, final = RunOutcome.COMPLETED, None
        try:
            await gw.session_start(tools=sorted(scenario.tools), **ids)
            prompt = await gw.user_input(scenario.input["content"], role=scenario.input["role"], **ids)
            messages: list[dict[str, Any]] = [{"role": scenario.input["role"], "content": prompt.content}]
            for scripted in scenario.model_script:
                async with gw.model_call(messages, model_id="mock", **ids) as turn:
                    turn.response = {
                        "content": scripted.content,
                        "tool_calls": scripted.tool_calls,
                        "finish_reason": scripted.finish_reason,
                    }
                messages = turn.messages
                reply = turn.response
                if not reply["tool_calls"]:
                    final = reply["content"]
                    break
                for request in reply["tool_calls"]:
                    messages.append(await self._tool(request, ids, tool_log))
                messages.append({"role": "assistant", "content": reply["content"] or ""})
            if final is not None:
                await gw.stop(last_assistant_message=str(final), **ids)
                final = await gw.output(final, **ids)
        except ActionDenied:
            outcome, final = RunOutcome.BLOCKED, None
        records = await gw.session_end(reason="completed" if outcome is RunOutcome.COMPLETED else "error", **ids)
        return RunRecord(
            outcome=outcome,
            final_output=final,
            tool_invocations=tool_log,
            identities=[(r.input_identity, r.enforced_identity) for r in records],
            records=[r.to_wire() for r in records],
        )

    async def _tool(self, request: dict[str, Any], ids: dict[str, Any], log: list[dict[str, Any]]) -> dict[str, Any]:
        assert self.gateway is not None and self.scenario is not None
        try:
            async with self.gateway.tool_call(
                request["name"], dict(request["args"]), tool_use_id=request["id"], **ids
            ) as call:
                value, is_error = self.scenario.tools[request["name"]].invoke(call.args)
                log.append({"name": request["name"], "args": dict(call.args)})
                if is_error:
                    call.fail(value)
                else:
                    call.result = value
        except ToolCallDenied as denied:
            return {"role": "tool", "content": f"blocked: {denied.reason}"}
        return {"role": "tool", "content": call.result}

    def teardown(self) -> None:
        self.gateway = self.scenario = None
