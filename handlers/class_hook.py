"""The ``python`` handler's class-hook form: ``{type: python, hook: "package.module:ClassName"}``.

The class (a ``gateway.hooks`` ``PreToolUseHook``, ``PostToolUseHook`` or ``SessionStartHook``) is
imported and instantiated once per process at load time; ``Gateway.register_hook(instance)`` hands an
instance in directly (``options["instance"]``). Each event builds a ``HookContext``; when the hook's
``tool_filter`` and ``should_trigger`` accept it, ``execute`` runs (awaited when it is async) and its
``HookResult`` becomes a ``Verdict`` (``gateway.hooks.verdict_for``). Result meta: ``hook`` (its name),
``triggered`` (False when it chose not to run).

At load time (``prepare``) the spec takes the class's ordering and failure policy: handler priority
``-hook.priority`` (lower class priority runs earlier; a ``priority`` written on the entry itself, on
hookgate's higher-runs-earlier scale, wins) and ``failClosed`` when the class says
``fail_closed = True`` (the default). Class hooks are ``chained`` handlers: the dispatcher runs the
chained handlers of one event one after another in priority order, each seeing the rewrites of the
ones before, and stops at the first deny (FIM One's middleware semantics).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from gateway.errors import ConfigError, HandlerError
from gateway.hooks import ClassHook, context_for, load_hook, verdict_for

if TYPE_CHECKING:
    from gateway.config.specs import HandlerSpec
    from gateway.decision import Verdict
    from gateway.events import HookEvent

_CO_COROUTINE = 0x80  # inspect.CO_COROUTINE (inspect costs milliseconds to import on the hook path)


@cache
def _loaded(path: str) -> ClassHook:
    return load_hook(path)


def hook_of(spec: HandlerSpec) -> ClassHook:
    """The hook instance of ``spec``. Raises HandlerError when it cannot be loaded."""
    instance = spec.options.get("instance")
    if isinstance(instance, ClassHook):
        return instance
    try:
        return _loaded(spec.options["hook"])
    except ConfigError as exc:
        raise HandlerError(str(exc)) from None


def prepare(spec: HandlerSpec, event: str | None = None) -> list[str]:
    """Load the hook, give ``spec`` its priority and failure policy; the problems (one line each)."""
    try:
        hook = hook_of(spec)
    except HandlerError as exc:
        return [str(exc)]
    if spec.priority == 0:  # an entry's own ``priority`` (hookgate's scale) wins
        spec.priority = -hook.priority
    spec.fail_closed = spec.fail_closed or hook.fail_closed
    if event is not None and event != hook.hook_point:
        return [f"hook {hook.hook_name!r} is a {hook.hook_point} hook; it cannot run on {event}"]
    return []


def is_sync(hook: ClassHook) -> bool:
    """True when ``execute`` is a plain function (no event loop needed)."""
    code = getattr(type(hook).execute, "__code__", None)
    return code is not None and not code.co_flags & _CO_COROUTINE


def _start(hook: ClassHook, event: HookEvent) -> tuple[Any, dict[str, Any]]:
    if event.name != hook.hook_point:
        raise HandlerError(f"hook {hook.hook_name!r} is a {hook.hook_point} hook, not {event.name}")
    ctx = context_for(event)
    meta: dict[str, Any] = {"hook": hook.hook_name, "triggered": hook.applies(ctx)}
    return (ctx if meta["triggered"] else None), meta


def run_sync(hook: ClassHook, event: HookEvent) -> tuple[Verdict, dict[str, Any]]:
    """Run a synchronous hook for ``event``: ``(verdict, meta)``."""
    from gateway.decision import Verdict

    ctx, meta = _start(hook, event)
    if ctx is None:
        return Verdict(), meta
    return verdict_for(hook, hook.execute(ctx), event.name), meta


async def run(hook: ClassHook, event: HookEvent) -> tuple[Verdict, dict[str, Any]]:
    """Run ``hook`` for ``event`` (awaiting ``execute`` when it is async): ``(verdict, meta)``."""
    from gateway.decision import Verdict

    ctx, meta = _start(hook, event)
    if ctx is None:
        return Verdict(), meta
    answer = hook.execute(ctx)
    if hasattr(answer, "__await__"):
        answer = await answer
    return verdict_for(hook, answer, event.name), meta
