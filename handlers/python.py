"""The ``python`` handler: a function called in-process (a hookgate extension to Claude Code's five types).

Config: ``{type: python, callable: "package.module:function"}``. The function receives the event as a
command hook would read it on stdin (a dict in the config's host format) and returns the hook's answer: a
dict in Claude Code's output schema (what a command would print), a string (parsed with the same ``{``
rule as a command's stdout), or None (no decision). It gets a copy of the event, so nothing it does to
that dict reaches the other handlers; a function that never changes its argument may say so with
``function.hookgate_readonly = True`` and is handed the event itself, without the copy (the default
policy's guards do). One that is safe to call from another thread may say so with
``function.hookgate_threadsafe = True``: under a running loop (``hookgate serve``, the Python API) it then
runs in a worker thread when the text in ``tool_input`` is over ``THREAD_CHARS`` (a long check then does
not stop the server from answering other requests; the default policy's guards say so). A wrapper made
with ``functools.wraps`` (it has ``__wrapped__``) still gets a copy and runs in the loop's thread: ``wraps``
copies the flags of the function it wraps, whatever the wrapper does. It may be ``async def``. An
exception is a handler failure (a deny/block when ``failClosed``), a ``BaseException`` too (SystemExit,
KeyboardInterrupt, GeneratorExit: the dispatcher's ``attempt``). A dict answer may carry a ``hookgate``
object: details that become the result's ``meta`` (``explain`` prints them, the audit records them) and
are not part of the hook output (the default policy's guards put the rule and the triggering command
there).

No process is started, so a check costs microseconds instead of a Python start-up, and ``hookgate run``
with only synchronous python handlers never imports asyncio. The price: an in-process function cannot
be killed at its deadline, so keep it a pure, fast check over the event (no I/O, no network). The
built-in default policy (``configs/guards``) runs this way. Raises ConfigError at load time when the
callable cannot be imported.

Class-hook form: ``{type: python, hook: "package.module:ClassName"}`` runs a FIM One-style class hook
(``gateway.hooks``; see ``handlers.class_hook``): the class is instantiated once, its ``HookResult``
maps onto the decision, and class hooks chain in priority order.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable
from functools import cache

from gateway.decision import Verdict
from gateway.errors import HandlerError
from handlers.base import Handler, import_object

TYPE_CHECKING = False  # importing typing costs a hook process ~2 ms
if TYPE_CHECKING:
    from typing import Any, ClassVar

    from gateway.config.specs import HandlerSpec
    from gateway.context import RunContext
    from gateway.events import HookEvent
    from handlers.base import Outcome


_CO_COROUTINE = 0x80  # inspect.CO_COROUTINE: the function is ``async def``
THREAD_CHARS = 64 * 1024
"""Characters of text in ``tool_input`` from which a ``hookgate_threadsafe`` function runs in a worker thread
under a running loop (``PythonHandler.start``)."""


@cache
def load_callable(path: str) -> Callable[[dict[str, Any]], Any]:
    """Import ``package.module:function``. Raises HandlerError naming what is missing."""
    obj = import_object(path, f"callable {path!r}", "package.module:function", HandlerError)
    if not callable(obj):
        raise HandlerError(f"callable {path!r} is not callable")
    fn: Callable[[dict[str, Any]], Any] = obj
    return fn


_SCALARS = frozenset({str, int, float, bool, type(None)})


def json_copy(value: Any) -> Any:
    """A deep copy of a JSON value (dicts, lists, and immutable scalars), as ``copy.deepcopy`` makes it but
    without importing ``copy`` (and ``weakref``) on the hook path; anything else goes to ``copy.deepcopy``."""
    kind = type(value)
    if kind is dict:
        return {key: item if type(item) in _SCALARS else json_copy(item) for key, item in value.items()}
    if kind is list:
        return [item if type(item) in _SCALARS else json_copy(item) for item in value]
    if kind in _SCALARS:
        return value
    import copy

    return copy.deepcopy(value)


def _split_meta(answer: Any) -> tuple[Any, dict[str, Any]]:
    """A dict answer's ``hookgate`` object (details for ``explain`` and the audit, such as the default policy's
    rule and the part of the command that triggered it) apart from the hook output itself."""
    if isinstance(answer, dict) and isinstance(answer.get("hookgate"), dict):
        answer = dict(answer)
        return answer, dict(answer.pop("hookgate"))
    return answer, {}


def answer_to_verdict(answer: Any, event: HookEvent) -> Verdict:
    """A python handler's return value as a Verdict (dict: output schema; str: the ``{`` rule). Raises
    HandlerError for a dict that is not JSON (a NaN, an object: a command could not have printed it),
    naming the field, and for an answer that fails the schema."""
    if answer is None:
        return Verdict()
    if isinstance(answer, Verdict):
        return answer
    if isinstance(answer, dict):
        from gateway.answers import verdict_from_json  # here: an allow (None) never needs it
        from gateway.events import json_problem

        problem = json_problem(answer, "(answer)")  # what a JSON host could not read (NaN, an object)
        if problem is not None:
            raise HandlerError(f"answer field {problem}")
        return verdict_from_json(answer, event)
    if isinstance(answer, str):
        from gateway.answers import parse_text

        return parse_text(answer, event)
    raise HandlerError(f"returned {type(answer).__name__}; expected a dict, a string or None")


class PythonHandler(Handler):
    """Calls ``callable`` in-process, or runs the class hook named by ``hook`` (see module docstring)."""

    type: ClassVar[str] = "python"
    default_timeout: ClassVar[float] = 10.0

    def _function(self) -> Callable[[dict[str, Any]], Any]:
        return load_callable(self.spec.options["callable"])

    def _payload(self, event: HookEvent, function: Callable[..., Any]) -> dict[str, Any]:
        """The event as ``function`` gets it: a copy it cannot alter the event through, or the event itself
        when the function declares it never changes its argument (``hookgate_readonly = True``)."""
        from gateway.dialects import host_payload

        payload: dict[str, Any] = host_payload(event, self.spec.dialect)
        if getattr(function, "hookgate_readonly", False) is True and not hasattr(function, "__wrapped__"):
            return payload  # (a functools.wraps wrapper copies the flag of what it wraps: it gets a copy)
        copied: dict[str, Any] = json_copy(payload)
        return copied

    def _is_hook(self) -> bool:
        return self.spec.options.get("hook") is not None

    def chained(self) -> bool:
        return self._is_hook()

    def can_run_sync(self) -> bool:
        if self._is_hook():
            from handlers import class_hook

            try:
                return class_hook.is_sync(class_hook.hook_of(self.spec))
            except HandlerError:
                return True  # run_sync reports the error
        try:
            function = self._function()
        except HandlerError:
            return True  # run_sync reports the error
        code = getattr(function, "__code__", None)  # inspect costs ~4 ms to import on this hot path
        return code is None or not code.co_flags & _CO_COROUTINE

    def start(self, event: HookEvent, ctx: RunContext) -> Outcome | Awaitable[Outcome]:
        """A plain function (``def``, with code of its own) is called here and its answer read at once;
        an awaitable it hands back (a sync wrapper of an ``async def``) is awaited by the dispatcher,
        under the deadline. ``async def`` functions and class hooks go through ``run``."""
        if self._is_hook():
            return self.run(event, ctx)
        function = self._function()
        code = getattr(function, "__code__", None)
        if code is None or code.co_flags & _CO_COROUTINE:
            return self.run(event, ctx)
        if (
            getattr(function, "hookgate_threadsafe", False) is True
            and _text_size(event.tool_input) > THREAD_CHARS
            and not hasattr(function, "__wrapped__")
        ):
            return self._in_thread(function, event)
        answer = function(self._payload(event, function))
        if hasattr(answer, "__await__"):
            return self._later(answer, event)
        return self._outcome(answer, event)

    async def _in_thread(self, function: Callable[..., Any], event: HookEvent) -> Outcome:
        """``function`` called in a worker thread (``asyncio.to_thread``): a check of a large input takes the
        GIL in turns with the loop instead of stopping it, so ``hookgate serve`` goes on reading and answering
        other requests meanwhile. The dispatcher's deadline applies to the wait, not to the thread."""
        import asyncio

        answer = await asyncio.to_thread(function, self._payload(event, function))
        if hasattr(answer, "__await__"):
            answer = await answer
        return self._outcome(answer, event)

    async def _later(self, answer: Awaitable[Any], event: HookEvent) -> Outcome:
        return self._outcome(await answer, event)

    @staticmethod
    def _outcome(answer: Any, event: HookEvent) -> Outcome:
        """A function's answer as the handler's outcome (``Verdict``, or ``(Verdict, meta)``)."""
        answer, meta = _split_meta(answer)
        verdict = answer_to_verdict(answer, event)
        return (verdict, meta) if meta else verdict

    def run_sync(self, event: HookEvent, ctx: RunContext) -> Outcome:
        if self._is_hook():
            from handlers import class_hook

            return class_hook.run_sync(class_hook.hook_of(self.spec), event)
        function = self._function()
        return self._outcome(function(self._payload(event, function)), event)

    async def run(self, event: HookEvent, ctx: RunContext) -> Outcome:
        if self._is_hook():
            from handlers import class_hook

            return await class_hook.run(class_hook.hook_of(self.spec), event)
        function = self._function()
        answer = function(self._payload(event, function))
        if hasattr(answer, "__await__"):
            answer = await answer
        return self._outcome(answer, event)

    def dedup_key(self) -> Hashable:
        instance = self.spec.options.get("instance")
        if instance is not None:  # a hook registered in code: one per instance
            return (self.spec.type, "instance", id(instance))
        return super().dedup_key()

    def describe(self) -> str:
        if self._is_hook():
            return f"python class hook {self.spec.options['hook']}"
        return f"python {self.spec.options['callable']}"

    @classmethod
    def options_model(cls) -> Any:
        return _options_model()

    @classmethod
    def check(cls, spec: HandlerSpec, base_dir: str) -> list[str]:
        if spec.options.get("hook") is not None:
            from handlers import class_hook

            return [f"hook: {p}" for p in class_hook.prepare(spec)]
        try:
            load_callable(spec.options["callable"])
        except HandlerError as exc:
            return [f"callable: {exc}"]
        return []

    @classmethod
    def implied_event(cls, entry: dict[str, Any]) -> str | None:
        if not isinstance(entry.get("hook"), str):
            return None
        from gateway.hooks import load_hook

        return load_hook(entry["hook"]).hook_point

    @classmethod
    def event_problems(cls, spec: HandlerSpec, event: str) -> list[str]:
        if spec.options.get("hook") is None or spec.problem:
            return []
        from handlers import class_hook

        return [f"hook: {p}" for p in class_hook.prepare(spec, event)]


@cache
def _options_model() -> Any:
    from pydantic import BaseModel, ConfigDict, Field, model_validator

    class PythonOptions(BaseModel):
        model_config = ConfigDict(extra="allow")
        callable: str | None = Field(None, min_length=3, pattern=r"^[\w.]+:[\w.]+$")
        hook: str | None = Field(None, min_length=3, pattern=r"^[\w.]+:[\w.]+$")

        @model_validator(mode="after")
        def _one_of(self) -> PythonOptions:
            if (self.callable is None) == (self.hook is None):
                raise ValueError(
                    "a python handler names either callable (a function) or hook "
                    "(a PreToolUseHook/PostToolUseHook/SessionStartHook class), not "
                    + ("both" if self.callable else "neither")
                )
            return self

    return PythonOptions


def _text_size(tool_input: Any) -> int:
    """Characters in the string values of ``tool_input`` (top level only: a cheap size estimate)."""
    if not isinstance(tool_input, dict):
        return 0
    return sum(len(value) for value in tool_input.values() if isinstance(value, str))
