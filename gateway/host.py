"""The Python agent host: the few calls a home-grown agent loop makes to get the whole gateway.

Every call builds a canonical (Claude Code-shaped) event and runs it through ``Gateway.dispatch``,
the one path every event takes (select, run, merge, audit), so every handler type, class hooks,
built-ins, approvals and the audit record work for a Python agent exactly as for Claude Code::

    gw = Gateway.from_file("hookgate.yaml")          # raises ConfigError if a hook cannot be built
    context = await gw.session_start(session_id=sid, user_id="ana", agent_id="researcher")
    try:
        async with gw.tool_call("run_sql", {"sql": q}, session_id=sid, user_id="ana",
                                agent_id="researcher") as call:
            call.result = run_sql(**call.args)        # call.args: possibly rewritten by hooks
        observation = call.result                     # possibly rewritten by PostToolUse hooks
    except ToolCallDenied as denied:
        observation = f"blocked: {denied.reason}"
    answer = await gw.stop(session_id=sid, last_assistant_message=text)
    if answer:                                        # a Stop hook says the agent must go on
        messages.append({"role": "user", "content": answer.reason})

Event mapping: ``session_start`` -> SessionStart; ``user_input`` -> UserPromptSubmit; ``tool_call`` ->
PreToolUse, then PostToolUse (``call.result = value``; a block that ends cleanly without setting it
still fires PostToolUse, with ``tool_response: null``) or PostToolUseFailure (``call.fail(error)``,
or an exception raised inside the block); ``stop`` -> Stop; ``session_end`` -> SessionEnd. Payload
fields: ``session_id``, ``cwd``, ``tool_name``, ``tool_input``, ``tool_use_id``, ``tool_response``,
``agent_id`` and ``user_id`` (a hookgate field; class hooks see it as ``HookContext.user_id``).

Decisions: deny, ask and defer on PreToolUse raise ``ToolCallDenied`` (a Python agent has no one to
ask; an ``approval`` handler is how a person decides); ``updatedInput`` becomes ``call.args``;
``updatedToolOutput`` becomes ``call.result``; a PostToolUse block raises ``ToolCallDenied`` with
``after=True`` (the result is withheld from the model, which gets the reason instead);
``additionalContext`` is collected in ``call.context``. With AGENT-HOOKS-0.1 interceptors attached
(``use_interceptors``; see ``gateway.interceptors``) the same calls also emit the standard's
interception points, and ``model_call`` / ``output`` guard the model call and the final answer.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any

from gateway.errors import ActionDenied, ToolCallDenied
from gateway.events import json_safe

if TYPE_CHECKING:
    from gateway.decision import Decision
    from gateway.events import HookEvent
    from gateway.interceptors import InterceptorSeam

DEFAULT_SESSION = "default"


@dataclass(slots=True)
class StopAnswer:
    """What ``stop`` returns: true when the agent must go on (a Stop hook blocked the stop).

    go_on: keep working. reason: what to tell the model (the hooks' block reasons). decision: the
    merged ``Decision``.
    """

    go_on: bool
    reason: str | None = None
    decision: Decision | None = None

    def __bool__(self) -> bool:
        return self.go_on


@dataclass(slots=True)
class InputAnswer:
    """What ``user_input`` returns: the prompt to use (an interceptor may rewrite it) and context."""

    content: Any
    context: str = ""


def _joined(parts: list[str]) -> str:
    return "\n\n".join(p for p in parts if p)


def _denial(decision: Decision) -> tuple[str, str] | None:
    """``(reason, permission)`` when a PreToolUse decision stops the call, else None."""
    if decision.block:
        return decision.reason or "blocked by hookgate", "deny"
    if decision.permission in ("deny", "ask", "defer"):
        default = {
            "deny": "denied by hookgate",
            "ask": "needs a person's approval (ask)",
            "defer": "deferred (no one to decide)",
        }[decision.permission]
        return decision.permission_reason or default, decision.permission
    return None


class ToolCall:
    """One guarded tool call: ``async with gateway.tool_call(...) as call`` (see module docstring).

    args: the arguments to run the tool with (after rewrites). result: set it to the tool's output;
    after the block it holds the output as PostToolUse hooks rewrote it. A block that ends without an
    exception fires PostToolUse even when ``result`` was never set (the tool ran; hooks see
    ``tool_response: null``), as Claude Code fires it for every tool that ran and succeeded. context:
    additional context for the model (PreToolUse and PostToolUse). pre / post: the merged ``Decision``
    of each event (``post`` stays None when neither PostToolUse nor PostToolUseFailure ran: PreToolUse
    stopped the call, or the block raised ``ActionDenied`` or a non-``Exception`` such as
    ``asyncio.CancelledError``).
    """

    def __init__(
        self,
        host: AgentHost,
        tool_name: str,
        args: dict[str, Any],
        *,
        session_id: str | None,
        user_id: str | None,
        agent_id: str | None,
        tool_use_id: str | None,
    ) -> None:
        self.host = host
        self.tool_name = tool_name
        self.args: dict[str, Any] = dict(args)
        self.session_id = session_id
        self.user_id = user_id
        self.agent_id = agent_id
        self.tool_use_id = tool_use_id or f"toolu_{uuid.uuid4().hex[:24]}"
        self.context: list[str] = []
        self.pre: Decision | None = None
        self.post: Decision | None = None
        self.is_error = False
        self._result: Any = None

    @property
    def result(self) -> Any:
        return self._result

    @result.setter
    def result(self, value: Any) -> None:
        self._result = value

    def fail(self, error: Any) -> None:
        """Record that the tool failed with ``error`` (PostToolUseFailure instead of PostToolUse)."""
        self._result, self.is_error = error, True

    def _payload(self, event: str, **fields: Any) -> dict[str, Any]:
        return self.host._payload(
            event,
            session_id=self.session_id,
            user_id=self.user_id,
            agent_id=self.agent_id,
            tool_name=self.tool_name,
            tool_use_id=self.tool_use_id,
            **fields,
        )

    async def __aenter__(self) -> ToolCall:
        seam = self.host._seam
        if seam is not None:
            ctx = await seam.emit(
                self.session_id or DEFAULT_SESSION,
                self.agent_id,
                "pre_tool_call",
                call_id=self.tool_use_id,
                name=self.tool_name,
                args=dict(self.args),
            )
            self.args = dict(ctx["tool_call"]["args"])
        decision = self.pre = await self.host.dispatch(self._payload("PreToolUse", tool_input=dict(self.args)))
        stop = _denial(decision)
        if stop is not None:
            raise ToolCallDenied(stop[0], point="PreToolUse", permission=stop[1], decision=decision)
        if decision.updated_input is not None:
            self.args = dict(decision.updated_input)
        self.context.extend(decision.additional_context)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool:
        if exc is not None:
            if isinstance(exc, Exception) and not isinstance(exc, ActionDenied):
                self.fail(f"{type(exc).__name__}: {exc}")
                await self._after()  # hooks see the failure; the exception still reaches the loop
            return False
        await self._after()  # the tool ran: PostToolUse fires, with ``tool_response: null`` if no result was set
        return False

    async def _after(self) -> None:
        if self.is_error:
            error = self._result if isinstance(self._result, str) else repr(self._result)
            decision = await self.host.dispatch(
                self._payload("PostToolUseFailure", tool_input=json_safe(dict(self.args)), error=error)
            )
        else:
            decision = await self.host.dispatch(  # (a tool's result may be any object: hooks get JSON)
                self._payload(
                    "PostToolUse", tool_input=json_safe(dict(self.args)), tool_response=json_safe(self._result)
                )
            )
            if decision.updated_output is not None:
                self._result = decision.updated_output
        self.post = decision
        self.context.extend(decision.additional_context)
        if decision.block:
            raise ToolCallDenied(
                decision.reason or "tool result blocked by hookgate",
                point=decision.event,
                permission="deny",
                decision=decision,
                after=True,
            )
        seam = self.host._seam
        if seam is not None:
            ctx = await seam.emit(
                self.session_id or DEFAULT_SESSION,
                self.agent_id,
                "post_tool_call",
                call_id=self.tool_use_id,
                name=self.tool_name,
                args=dict(self.args),
                value=self._result,
                is_error=self.is_error,
            )
            self._result = ctx["tool_result"]["value"]


class ModelCall:
    """One guarded model call (only with interceptors attached; otherwise it passes through).

    messages: what to send (``pre_model_call`` may rewrite it). Set ``response`` to
    ``{"content": ..., "tool_calls": [...], "finish_reason": ...}``; after the block it holds the
    response as ``post_model_call`` left it.
    """

    def __init__(
        self,
        host: AgentHost,
        messages: list[dict[str, Any]],
        *,
        model_id: str,
        session_id: str | None,
        agent_id: str | None,
    ) -> None:
        self.host = host
        self.messages = messages
        self.model_id = model_id
        self.session_id = session_id or DEFAULT_SESSION
        self.agent_id = agent_id
        self.response: dict[str, Any] | None = None

    async def __aenter__(self) -> ModelCall:
        seam = self.host._seam
        if seam is not None:
            ctx = await seam.emit(
                self.session_id, self.agent_id, "pre_model_call", model_id=self.model_id, messages=list(self.messages)
            )
            self.messages = ctx["messages"]
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool:
        seam = self.host._seam
        if exc is None and seam is not None and self.response is not None:
            response = self.response
            ctx = await seam.emit(
                self.session_id,
                self.agent_id,
                "post_model_call",
                model_id=self.model_id,
                content=response.get("content"),
                tool_calls=list(response.get("tool_calls") or []),
                finish_reason=response.get("finish_reason", "stop"),
            )
            self.response = dict(ctx["response"])
        return False


class AgentHost:
    """The host calls, mixed into ``Gateway`` (which provides ``dispatch``)."""

    _seam: InterceptorSeam | None = None
    cwd: str | None = None

    async def dispatch(
        self, event: dict[str, Any] | HookEvent, *, dialect: str = "auto", trace: Any = None
    ) -> Decision:
        raise NotImplementedError

    def _payload(
        self, event: str, *, session_id: str | None, user_id: str | None, agent_id: str | None, **fields: Any
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {"hook_event_name": event, "cwd": self.cwd or os.getcwd()}
        if session_id:
            payload["session_id"] = session_id
        if agent_id:
            payload["agent_id"] = agent_id
        if user_id:
            payload["user_id"] = user_id
        payload.update({k: v for k, v in fields.items() if v is not None or k == "tool_response"})
        return payload

    # ---- AGENT-HOOKS-0.1 interceptors
    def use_interceptors(self, interceptors: list[Any], **options: Any) -> None:
        """Attach AGENT-HOOKS-0.1 interceptors (see ``InterceptorSeam.from_interceptors`` for ``options``).
        Raises ConfigError when the seam cannot be built."""
        from gateway.interceptors import InterceptorSeam

        self._seam = InterceptorSeam.from_interceptors(list(interceptors), **options)

    def use_interceptor_declaration(self, document: Any, registry: Any) -> None:
        """Attach interceptors from an AGENT-HOOKS host declaration document (spec §7.7) and its
        ``HostRegistry``. Raises the SDK's ``DeclarationError`` when the document is refused."""
        from gateway.interceptors import InterceptorSeam

        self._seam = InterceptorSeam.from_declaration(document, registry)

    # ---- host calls
    async def session_start(
        self,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        source: str = "startup",
        tools: list[str] | None = None,
    ) -> str:
        """Start a session: the context to inject into the model's first turn (may be "").

        Raises ActionDenied when a hook stops the session (``continue: false``) or an interceptor
        denies ``agent_startup``.
        """
        if self._seam is not None:
            await self._seam.emit(
                session_id or DEFAULT_SESSION, agent_id, "agent_startup", tools_registered=sorted(tools or [])
            )
        decision = await self.dispatch(
            self._payload("SessionStart", session_id=session_id, user_id=user_id, agent_id=agent_id, source=source)
        )
        if not decision.continue_:
            raise ActionDenied(
                decision.stop_reason or "session stopped by hookgate", point="SessionStart", decision=decision
            )
        return _joined(decision.additional_context)

    async def user_input(
        self,
        content: Any,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        role: str = "user",
    ) -> InputAnswer:
        """A user's prompt: the content to use and context to add. Raises ActionDenied when blocked."""
        if self._seam is not None:
            ctx = await self._seam.emit(session_id or DEFAULT_SESSION, agent_id, "input", content=content, role=role)
            content = ctx["input"]["content"]
        prompt = content if isinstance(content, str) else str(content)
        decision = await self.dispatch(
            self._payload("UserPromptSubmit", session_id=session_id, user_id=user_id, agent_id=agent_id, prompt=prompt)
        )
        if decision.block or not decision.continue_:
            raise ActionDenied(
                decision.reason or decision.stop_reason or "prompt blocked by hookgate",
                point="UserPromptSubmit",
                decision=decision,
            )
        return InputAnswer(content, _joined(decision.additional_context))

    def tool_call(
        self,
        tool_name: str,
        args: dict[str, Any],
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        tool_use_id: str | None = None,
    ) -> ToolCall:
        """A guarded tool call (``async with``); raises ToolCallDenied on entry when denied, TypeError
        at once when ``tool_name`` is not a non-empty str or ``args`` not a dict (a mapping)."""
        if not isinstance(tool_name, str) or not tool_name:
            given = "an empty str" if isinstance(tool_name, str) else type(tool_name).__name__
            raise TypeError(f"tool_call: tool_name must be a non-empty str (the tool's name), not {given}")
        if not isinstance(args, Mapping):
            raise TypeError(
                f"tool_call: args must be a dict of the tool's arguments (e.g. {{'command': 'ls'}}), "
                f"not {type(args).__name__}"
            )
        return ToolCall(
            self, tool_name, args, session_id=session_id, user_id=user_id, agent_id=agent_id, tool_use_id=tool_use_id
        )

    def model_call(
        self,
        messages: list[dict[str, Any]],
        *,
        model_id: str,
        session_id: str | None = None,
        agent_id: str | None = None,
    ) -> ModelCall:
        """A guarded model call (``async with``); only interceptors see model calls."""
        return ModelCall(self, messages, model_id=model_id, session_id=session_id, agent_id=agent_id)

    async def output(self, content: Any, *, session_id: str | None = None, agent_id: str | None = None) -> Any:
        """The final answer as it may be shown (interceptors may rewrite it). Raises ActionDenied."""
        if self._seam is None:
            return content
        ctx = await self._seam.emit(session_id or DEFAULT_SESSION, agent_id, "output", content=content)
        return ctx["output"]["content"]

    async def stop(
        self,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        last_assistant_message: str | None = None,
        stop_hook_active: bool = False,
    ) -> StopAnswer:
        """The agent wants to stop: true (``StopAnswer.go_on``) when a Stop hook says it must go on;
        ``reason`` is what to tell the model. Pass ``stop_hook_active=True`` when this stop follows one
        that was held back (Claude Code's loop flag). The Stop-loop guard (``settings.stopBlockLimit``)
        applies per session."""
        decision = await self.dispatch(
            self._payload(
                "Stop",
                session_id=session_id,
                user_id=user_id,
                agent_id=agent_id,
                stop_hook_active=stop_hook_active,
                last_assistant_message=last_assistant_message,
            )
        )
        go_on = decision.block and decision.continue_
        return StopAnswer(go_on, decision.reason if go_on else decision.stop_reason, decision)

    async def session_end(
        self,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        reason: str = "completed",
    ) -> list[Any]:
        """End a session (SessionEnd; ``agent_shutdown`` for interceptors). Returns the session's
        AGENT-HOOKS ``InterceptionRecord`` objects ([] without interceptors)."""
        await self.dispatch(
            self._payload("SessionEnd", session_id=session_id, user_id=user_id, agent_id=agent_id, reason=reason)
        )
        if self._seam is None:
            return []
        return await self._seam.shutdown(session_id or DEFAULT_SESSION, agent_id, reason)


__all__ = ["AgentHost", "InputAnswer", "ModelCall", "StopAnswer", "ToolCall"]
