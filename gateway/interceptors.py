"""The AGENT-HOOKS-0.1 seam of the Python host: standard interceptors next to hookgate's own hooks.

``gateway.use_interceptors([...])`` (or ``use_interceptor_declaration(document, registry)``) makes the
host calls (``session_start``, ``user_input``, ``model_call``, ``tool_call``, ``output``, ``session_end``)
also emit AGENT-HOOKS interception points (``agent_startup``, ``input``, ``pre_model_call``,
``post_model_call``, ``pre_tool_call``, ``post_tool_call``, ``output``, ``agent_shutdown``) to those
interceptors, through the SDK's ``InterceptionEmitter`` (``agent-hooks-sdk``, the ``hookgate[agent-hooks]``
extra, imported only here). The emitter applies the standard's composition profiles, enforcement
modes, approval seam, identities and interception records; hookgate does not re-implement them.

Order inside one host call: before an action the interceptors run first (a transform they make is
what hookgate's hooks then see), after it hookgate's hooks run first (a ``modified_result`` they make
is what the interceptors see). A deny from either side stops the action the same way
(``gateway.ActionDenied`` / ``gateway.ToolCallDenied``).

One emitter and one ``AgentContextBuilder`` per session id (sequence numbers are per session);
``session_end`` emits ``agent_shutdown`` and forgets the session. Built at configuration time, so a
seam that cannot be built (a bad declaration, an unknown identity provider) raises there (fail closed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gateway.errors import ActionDenied, ConfigError

FRAMEWORK = "hookgate"


@dataclass(slots=True)
class _Session:
    builder: Any  # agent_hooks.AgentContextBuilder
    emitter: Any  # agent_hooks.InterceptionEmitter


class InterceptorSeam:
    """Per-session emitters built by ``factory`` (see module docstring)."""

    def __init__(self, factory: Callable[[], Any]) -> None:
        self._factory = factory
        self._first: Any = factory()  # fail closed now, not on the first tool call
        self._sessions: dict[str, _Session] = {}

    @classmethod
    def from_interceptors(
        cls,
        interceptors: list[Any],
        *,
        mode: str = "enforce",
        composition: Any = None,
        resolver: Any = None,
        identity_provider: Any = "jcs-sha256",
        redactor: Callable[[Any], Any] | None = None,
        timeout: float | None = 5.0,
    ) -> InterceptorSeam:
        """A seam whose emitters run ``interceptors`` in registration order.

        mode: ``enforce`` or ``evaluate_only``. composition: an ``agent_hooks.CompositionConfig`` or its
        wire dict (None: ``sequential/first_deny``). resolver: the approval seam (``ApprovalResolver``).
        identity_provider: ``"jcs-sha256"``, an ``agent_hooks.IdentityProvider`` or None. redactor: the
        approval redaction seam. timeout: seconds per interceptor call. Raises ConfigError.
        """
        try:
            from agent_hooks import CompositionConfig, EnforcementMode, InterceptionEmitter
        except ImportError:
            raise ConfigError("interceptors need the agent-hooks SDK: pip install 'hookgate[agent-hooks]'") from None
        try:
            enforcement = EnforcementMode(mode)
            profile = CompositionConfig.from_wire(composition) if isinstance(composition, dict) else composition
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"interceptors: {exc}") from None

        def build() -> Any:
            emitter = InterceptionEmitter(
                mode=enforcement,
                resolver=resolver,
                timeout=timeout,
                composition=profile,
                identity_provider=identity_provider,
            )
            if redactor is not None:
                emitter.set_approval_redactor(redactor)
            for interceptor in interceptors:
                emitter.register(interceptor)
            return emitter

        try:
            return cls(build)
        except ConfigError:
            raise
        except Exception as exc:  # the SDK's own errors (unknown provider, bad composition)
            raise ConfigError(f"interceptors: {type(exc).__name__}: {exc}") from None

    @classmethod
    def from_declaration(cls, document: Any, registry: Any) -> InterceptorSeam:
        """A seam whose emitters are built from a host declaration document (spec §7.7) and a
        ``HostRegistry``. Raises the SDK's ``DeclarationError`` when the document is refused."""
        from agent_hooks import InterceptionEmitter

        return cls(lambda: InterceptionEmitter.from_declaration_value(document, registry))

    def session(self, session_id: str, agent_id: str | None) -> _Session:
        """The session's builder and emitter, created on first use."""
        found = self._sessions.get(session_id)
        if found is None:
            from agent_hooks import AgentContextBuilder

            emitter, self._first = (self._first, None) if self._first is not None else (self._factory(), None)
            found = _Session(
                AgentContextBuilder(agent_id=agent_id or "agent", framework=FRAMEWORK, session_id=session_id), emitter
            )
            self._sessions[session_id] = found
        return found

    async def emit(self, session_id: str, agent_id: str | None, point: str, **fields: Any) -> dict[str, Any]:
        """Emit ``point`` (a builder method name) with ``fields``; the (possibly transformed) context.

        Raises ActionDenied (``ToolCallDenied`` at the tool points) when the action must not proceed.
        """
        from agent_hooks import InterceptionBlocked, InterceptionSuspended

        from gateway.errors import ToolCallDenied

        state = self.session(session_id, agent_id)
        ctx: dict[str, Any] = getattr(state.builder, point)(**fields)
        try:
            await state.emitter.emit(ctx)
        except (InterceptionBlocked, InterceptionSuspended) as exc:
            record = exc.result
            reason = record.verdict.reason or f"denied at {point}"
            error = ToolCallDenied if point in ("pre_tool_call", "post_tool_call") else ActionDenied
            raise error(reason, point=point, source="interceptor", record=record) from None
        return ctx

    async def shutdown(self, session_id: str, agent_id: str | None, reason: str) -> list[Any]:
        """Emit ``agent_shutdown`` (recorded, never blocking), forget the session's emitter, and return
        the session's ``InterceptionRecord`` objects (``record.to_wire()`` gives §10.3 JSON)."""
        state = self.session(session_id, agent_id)
        await state.emitter.emit_unchecked(state.builder.agent_shutdown(reason=reason))
        self._sessions.pop(session_id, None)
        return list(state.emitter.results)

    def records(self, session_id: str) -> list[Any]:
        """The session's ``InterceptionRecord`` objects so far (``record.to_wire()`` gives §10.3 JSON)."""
        state = self._sessions.get(session_id)
        return list(state.emitter.results) if state is not None else []
