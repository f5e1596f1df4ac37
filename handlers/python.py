"""The ``python`` handler: a function called in-process (a hookgate extension to Claude Code's five types).

Config: ``{type: python, callable: "package.module:function"}``. The function receives the event as a
command hook would read it on stdin (a dict in the config's host format) and returns the hook's
answer: a dict in Claude Code's output schema (what a command would print), a string (parsed with
the same ``{`` rule as a command's stdout), or None (no decision). It may be ``async def``. An
exception is a handler failure (a deny/block when ``failClosed``).

No process is started, so a check costs microseconds instead of a Python start-up, and ``hookgate run``
with only synchronous python handlers never imports asyncio. The price: an in-process function cannot
be killed at its deadline, so keep it a pure, fast check over the event (no I/O, no network). The
built-in default policy (``configs/guards``) runs this way. Raises ConfigError at load time when the
callable cannot be imported.
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar

from gateway.answers import parse_text, verdict_from_json
from gateway.decision import Verdict
from gateway.errors import HandlerError
from handlers.base import Handler

if TYPE_CHECKING:
    from gateway.config import HandlerSpec
    from gateway.context import RunContext
    from gateway.events import HookEvent


_CO_COROUTINE = 0x80  # inspect.CO_COROUTINE: the function is ``async def``


@cache
def load_callable(path: str) -> Callable[[dict[str, Any]], Any]:
    """Import ``package.module:function``. Raises HandlerError naming what is missing."""
    module_name, sep, attr = path.partition(":")
    if not sep or not module_name or not attr:
        raise HandlerError(f"callable {path!r} must look like 'package.module:function'")
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as exc:  # ImportError, or an error raised while the module runs
        raise HandlerError(f"callable {path!r}: cannot import {module_name}: {type(exc).__name__}: {exc}") from None
    for part in attr.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise HandlerError(f"callable {path!r}: {module_name} has no attribute {attr!r}")
    if not callable(obj):
        raise HandlerError(f"callable {path!r} is not callable")
    fn: Callable[[dict[str, Any]], Any] = obj
    return fn


def answer_to_verdict(answer: Any, event: HookEvent) -> Verdict:
    """A python handler's return value as a Verdict (dict: output schema; str: the ``{`` rule)."""
    if answer is None:
        return Verdict()
    if isinstance(answer, Verdict):
        return answer
    if isinstance(answer, dict):
        return verdict_from_json(answer, event)
    if isinstance(answer, str):
        return parse_text(answer, event)
    raise HandlerError(f"returned {type(answer).__name__}; expected a dict, a string or None")


class PythonHandler(Handler):
    """Calls ``callable`` in-process (see module docstring)."""

    type: ClassVar[str] = "python"
    default_timeout: ClassVar[float] = 10.0

    def _function(self) -> Callable[[dict[str, Any]], Any]:
        return load_callable(self.spec.options["callable"])

    def _payload(self, event: HookEvent) -> dict[str, Any]:
        from gateway.dialects import host_payload

        return copy.deepcopy(host_payload(event, self.spec.dialect))  # the function cannot alter the event

    def can_run_sync(self) -> bool:
        try:
            function = self._function()
        except HandlerError:
            return True  # run_sync reports the error
        code = getattr(function, "__code__", None)  # inspect costs ~4 ms to import on this hot path
        return code is None or not code.co_flags & _CO_COROUTINE

    def run_sync(self, event: HookEvent, ctx: RunContext) -> Verdict:
        return answer_to_verdict(self._function()(self._payload(event)), event)

    async def run(self, event: HookEvent, ctx: RunContext) -> Verdict:
        answer = self._function()(self._payload(event))
        if hasattr(answer, "__await__"):
            answer = await answer
        return answer_to_verdict(answer, event)

    def describe(self) -> str:
        return f"python {self.spec.options['callable']}"

    @classmethod
    def options_model(cls) -> Any:
        return _options_model()

    @classmethod
    def check(cls, spec: HandlerSpec, base_dir: str) -> list[str]:
        try:
            load_callable(spec.options["callable"])
        except HandlerError as exc:
            return [f"callable: {exc}"]
        return []


@cache
def _options_model() -> Any:
    from pydantic import BaseModel, ConfigDict, Field

    class PythonOptions(BaseModel):
        model_config = ConfigDict(extra="allow")
        callable: str = Field(min_length=3, pattern=r"^[\w.]+:[\w.]+$")

    return PythonOptions
