"""FIM One-style class hooks: ``PreToolUseHook``, ``PostToolUseHook``, ``SessionStartHook``.

A class hook is an in-process Python object run by the ``python`` handler type (``{type: python,
hook: "package.module:ClassName"}`` in config, ``gateway.register_hook(hook)`` from code, or an entry
of an ``agents:`` section). Field names and semantics are FIM One's, mapped onto hookgate's decision
model::

    class Redact(PreToolUseHook):
        name = "redact"
        priority = 10                       # lower runs earlier (FIM One's rule)
        tool_filter = "db__*"               # fnmatch glob on the tool name (None: every tool)

        def should_trigger(self, ctx: HookContext) -> bool:      # sync, default True
            return "sql" in ctx.tool_args

        async def execute(self, ctx: HookContext) -> HookResult:  # may also be a plain ``def``
            return HookResult(modified_args={**ctx.tool_args, "limit": 100}, side_effects=["capped"])

Mapping (``verdict_for``), per event:

- PreToolUse: ``allow=False`` denies (``permissionDecision: deny``) with ``error`` as the reason
  (default ``Blocked by hook '<name>'``); ``modified_args`` becomes ``updatedInput``.
- PostToolUse: ``modified_result`` becomes ``updatedToolOutput`` (the rewritten tool output);
  ``allow=False`` blocks (Claude Code's PostToolUse block: ``error`` is fed back to the model).
- SessionStart: ``allow=False`` stops the session (``continue: false``, ``error`` as stop reason).
- every event: ``additional_context`` (a hookgate extension) is context for the model;
  ``side_effects`` (list of str) reach ``Verdict.side_effects`` and so the audit record.

Class hooks of one event run one after another in ``priority`` order (lower first; ties keep
registration/config order), each seeing the arguments (or result) the hooks before it rewrote; the
first ``allow=False`` stops the chain. A hook's ``priority`` p is hookgate handler priority -p (higher
runs earlier there), so class hooks and other handlers share one order. An exception raised by
``execute`` is a handler failure, and so is a malformed answer: anything but a ``HookResult`` (``None``
too: a hook that forgot its ``return`` does not allow) or an ``allow`` that is not a bool. Class hooks
are ``fail_closed = True`` unless the class says otherwise (a hook that breaks denies rather than
silently letting the call through).
"""

from __future__ import annotations

import fnmatch
from abc import ABC, abstractmethod
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from gateway.errors import ConfigError

if TYPE_CHECKING:
    from gateway.decision import Verdict
    from gateway.events import HookEvent

HOOK_POINTS = ("PreToolUse", "PostToolUse", "SessionStart")
"""The events a class hook can attach to (FIM One's ``HookPoint`` values, in Claude Code's names)."""


@dataclass(slots=True)
class HookContext:
    """What a class hook sees (FIM One's ``HookContext``).

    hook_point: the event name (``PreToolUse``, ``PostToolUse``, ``SessionStart``). tool_name / tool_args:
    the tool and its arguments as rewritten by earlier hooks (None / {} on SessionStart). tool_result: the
    tool's output on PostToolUse (Claude Code's ``tool_response``; any JSON value), else None. agent_id,
    user_id: who is calling (None when the host did not say). conversation_id: the session id.
    metadata: filled by the engine: ``session_id``, ``cwd``, ``tool_use_id``, ``dialect`` (host format),
    ``host_tool_name`` and ``event`` (the whole event payload, a copy).
    """

    hook_point: str
    tool_name: str | None = None
    tool_args: dict[str, Any] = field(default_factory=dict)
    tool_result: Any = None
    agent_id: str | None = None
    user_id: str | None = None
    conversation_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def session_id(self) -> str | None:
        """Alias of ``conversation_id`` (Claude Code's name)."""
        return self.conversation_id


@dataclass(slots=True)
class HookResult:
    """What a class hook answers (FIM One's ``HookResult``).

    allow: False denies (PreToolUse), blocks (PostToolUse) or stops the session (SessionStart); it must
    be a bool (anything else is a malformed result, a handler failure, not a truth test).
    error: the reason shown to the model when not allowed. modified_args: replaces the tool arguments
    (PreToolUse; merged over the arguments, so a partial dict keeps the other keys). modified_result:
    replaces the tool output (PostToolUse). side_effects: what the hook did, one line each (audit
    trail). additional_context: text for the model (a hookgate extension; Claude Code's
    ``additionalContext``).
    """

    allow: bool = True
    error: str | None = None
    modified_args: dict[str, Any] | None = None
    modified_result: Any = None
    side_effects: list[str] = field(default_factory=list)
    additional_context: str | None = None


class ClassHook(ABC):
    """Base of the three class-hook kinds. Subclass one of them, not this.

    Class attributes: ``name`` (unique, used in reasons and results; default the class name),
    ``description``, ``priority`` (int, lower runs earlier, default 50 as in FIM One), ``tool_filter``
    (an ``fnmatch`` glob on the tool name, None for every tool), ``fail_closed`` (an exception denies;
    default True). ``hook_point`` is fixed by the subclass.
    """

    hook_point: ClassVar[str]
    name: str = ""
    description: str = ""
    priority: int = 50
    tool_filter: str | None = None
    fail_closed: bool = True

    def should_trigger(self, ctx: HookContext) -> bool:
        """Whether this hook runs for ``ctx`` (synchronous; default True)."""
        return True

    @abstractmethod
    def execute(self, ctx: HookContext) -> Awaitable[HookResult] | HookResult:
        """Answer one event (``async def`` or plain ``def``). Raise to fail (see ``fail_closed``)."""

    @property
    def hook_name(self) -> str:
        return self.name or type(self).__name__

    def applies(self, ctx: HookContext) -> bool:
        """``tool_filter`` and ``should_trigger`` together."""
        if (
            self.tool_filter is not None
            and ctx.tool_name is not None
            and not fnmatch.fnmatchcase(ctx.tool_name, self.tool_filter)
        ):
            return False
        return bool(self.should_trigger(ctx))


class PreToolUseHook(ClassHook):
    """Runs before a tool call: may deny it or rewrite its arguments."""

    hook_point: ClassVar[str] = "PreToolUse"


class PostToolUseHook(ClassHook):
    """Runs after a tool call: may rewrite its result (``modified_result``)."""

    hook_point: ClassVar[str] = "PostToolUse"


class SessionStartHook(ClassHook):
    """Runs when a session starts: may add context or stop the session."""

    hook_point: ClassVar[str] = "SessionStart"


def check_hook(hook: Any, where: str) -> ClassHook:
    """``hook`` if it is a usable class hook, else ConfigError naming ``where`` and what is wrong."""
    if isinstance(hook, type):
        raise ConfigError(f"{where}: {hook.__name__} is a class; pass an instance (e.g. {hook.__name__}())")
    if not isinstance(hook, ClassHook):
        raise ConfigError(
            f"{where}: {type(hook).__name__} is not a PreToolUseHook, PostToolUseHook or SessionStartHook"
        )
    if getattr(type(hook), "hook_point", None) not in HOOK_POINTS:
        raise ConfigError(f"{where}: subclass PreToolUseHook, PostToolUseHook or SessionStartHook, not ClassHook")
    if not isinstance(hook.priority, int) or isinstance(hook.priority, bool):
        raise ConfigError(f"{where}: priority must be an integer, got {hook.priority!r}")
    if hook.tool_filter is not None and not isinstance(hook.tool_filter, str):
        raise ConfigError(f"{where}: tool_filter must be a glob string or None, got {hook.tool_filter!r}")
    return hook


def load_hook(path: str, where: str | None = None) -> ClassHook:
    """Import ``package.module:ClassName`` and instantiate it (no arguments).

    Raises ConfigError naming the path when the module or class is missing, the class is not a class
    hook, or its constructor fails.
    """
    from handlers.base import import_object

    where = f"hook {path!r}" if where is None else where
    obj = import_object(path, where, "package.module:ClassName")
    if not (isinstance(obj, type) and issubclass(obj, ClassHook)):
        raise ConfigError(f"{where}: {path} is not a PreToolUseHook, PostToolUseHook or SessionStartHook subclass")
    try:
        instance = obj()
    except Exception as exc:
        raise ConfigError(f"{where}: {path}() failed: {type(exc).__name__}: {exc}") from None
    return check_hook(instance, where)


def context_for(event: HookEvent) -> HookContext:
    """The ``HookContext`` for ``event`` (copies: a hook cannot alter the event it is given)."""
    import copy

    payload = event.payload
    tool_args = payload.get("tool_input")
    return HookContext(
        hook_point=event.name,
        tool_name=event.tool_name,
        tool_args=copy.deepcopy(tool_args) if isinstance(tool_args, dict) else {},
        tool_result=copy.deepcopy(payload.get("tool_response")),
        agent_id=_text(payload.get("agent_id")),
        user_id=_text(payload.get("user_id")),
        conversation_id=event.session_id,
        metadata={
            "session_id": event.session_id,
            "cwd": event.cwd,
            "tool_use_id": payload.get("tool_use_id"),
            "dialect": event.dialect,
            "host_tool_name": event.host_tool_name,
            "event": copy.deepcopy(payload),
        },
    )


def verdict_for(hook: ClassHook, result: Any, event_name: str) -> Verdict:
    """A hook's ``HookResult`` as a hookgate ``Verdict`` (see module docstring). Raises TypeError (a
    malformed result: a handler failure, a deny when the hook is ``fail_closed``) when ``execute``
    returned something else, ``None`` included (a hook that forgot its ``return`` is not an allow), or
    when ``allow`` is not a bool (``allow="no"`` is not truth-tested into an allow), or when
    ``modified_args`` is not a dict of JSON values (the message names the field)."""
    from gateway.decision import Verdict

    if not isinstance(result, HookResult):
        hint = " (return HookResult() to let the call through)" if result is None else ""
        raise TypeError(f"hook {hook.hook_name!r} returned {type(result).__name__}; expected a HookResult{hint}")
    if not isinstance(result.allow, bool):
        raise TypeError(
            f"hook {hook.hook_name!r}: HookResult.allow must be True or False, got "
            f"{type(result.allow).__name__} {_short(result.allow)}"
        )
    verdict = Verdict(additional_context=result.additional_context)
    verdict.side_effects = [str(s) for s in result.side_effects]
    reason = result.error or f"Blocked by hook '{hook.hook_name}'"
    if event_name == "PreToolUse":
        if not result.allow:
            verdict.permission, verdict.permission_reason = "deny", reason
        elif result.modified_args is not None:
            if not isinstance(result.modified_args, dict):
                raise TypeError(
                    f"hook {hook.hook_name!r}: modified_args must be a dict, got {type(result.modified_args).__name__}"
                )
            from gateway.events import json_problem

            problem = json_problem(result.modified_args, "modified_args")
            if problem is not None:  # a JSON host could not read the rewritten call (a NaN, an object)
                raise TypeError(f"hook {hook.hook_name!r}: modified_args field {problem}")
            verdict.updated_input = dict(result.modified_args)
    elif event_name in ("PostToolUse", "PostToolUseFailure"):
        if result.modified_result is not None:
            verdict.updated_output = result.modified_result
        if not result.allow:
            verdict.block, verdict.reason = True, reason
    elif not result.allow:
        verdict.continue_, verdict.stop_reason = False, reason
    return verdict


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
