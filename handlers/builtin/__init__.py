"""The ``builtin`` handler type: checks shipped with hookgate, usable from YAML on every host.

``{type: builtin, name: readOnly}``, ``{type: builtin, name: truncateOutput, maxChars: 8000}``,
``{type: builtin, name: rateLimit, limit: 5, window: 60, per: [session, tool], onLimit: deny}``.
Each name lives in its own module (``read_only``, ``truncate_output``, ``rate_limit``) with a
``run(options, event, ctx, handler_id) -> Verdict`` function (and, where it uses the state store, an
``arun`` coroutine doing the same through the store's async forms, used under an event loop);
``EVENTS`` lists where each may be placed. Built-ins are chained handlers (they run in priority order
with class hooks; see ``DEFAULT_PRIORITY``). Options are validated at load time (unknown or misplaced
fields are errors, naming the built-in); state (the read-only flag, rate-limit counts) goes through the
state store, so it is shared by every ``hookgate run`` process, ``hookgate serve`` and Python hosts
using the same store. Deterministic: ``failClosed`` applies.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar

from gateway.errors import HandlerError
from handlers.base import Handler

if TYPE_CHECKING:
    from gateway.config.specs import HandlerSpec
    from gateway.context import RunContext
    from gateway.decision import Verdict
    from gateway.events import HookEvent

MODULES = {
    "readOnly": "handlers.builtin.read_only",
    "truncateOutput": "handlers.builtin.truncate_output",
    "rateLimit": "handlers.builtin.rate_limit",
}
EVENTS = {
    "readOnly": ("PreToolUse", "PermissionRequest"),
    "truncateOutput": ("PostToolUse",),
    "rateLimit": ("PreToolUse", "PermissionRequest"),
}
"""The events each built-in answers (anywhere else it is a config error)."""
DEFAULT_PRIORITY = {"readOnly": 1000, "truncateOutput": -1000, "rateLimit": -1000}
"""Where each built-in sits in the chain unless its entry sets ``priority`` (higher runs earlier):
readOnly first (cheap, denies early), rateLimit last (it counts only calls the other chained checks
let through), truncateOutput last (it cuts the output the other rewrites produced)."""
FIELDS = {
    "readOnly": {"write_tools", "read_tools", "write_verbs", "sql_fields", "read_commands"},
    "truncateOutput": {"max_chars"},
    "rateLimit": {"limit", "window", "per", "on_limit"},
}


def event_problem(name: str, event: str) -> str | None:
    """Why built-in ``name`` cannot run on ``event`` (None: it can)."""
    events = EVENTS.get(name, ())
    if event in events:
        return None
    return f"builtin {name} runs on {' or '.join(events)}, not on {event}"


class BuiltinHandler(Handler):
    """Runs the built-in named by ``name`` (see module docstring)."""

    type: ClassVar[str] = "builtin"
    default_timeout: ClassVar[float] = 10.0

    async def run(self, event: HookEvent, ctx: RunContext) -> Verdict:
        """The module's ``arun`` when it has one (it awaits the store's async forms, so ``serve``'s
        event loop never waits on a database round trip), else its ``run``."""
        name = self.spec.options["name"]
        problem = event_problem(name, event.name)
        if problem is not None:
            raise HandlerError(problem)
        module = importlib.import_module(MODULES[name])
        if hasattr(module, "arun"):
            verdict: Verdict = await module.arun(self.spec.options, event, ctx, self.spec.id)
            return verdict
        return self.run_sync(event, ctx)

    def can_run_sync(self) -> bool:
        return True

    def run_sync(self, event: HookEvent, ctx: RunContext) -> Verdict:
        name = self.spec.options["name"]
        problem = event_problem(name, event.name)
        if problem is not None:
            raise HandlerError(problem)
        module = importlib.import_module(MODULES[name])
        verdict: Verdict = module.run(self.spec.options, event, ctx, self.spec.id)
        return verdict

    def chained(self) -> bool:
        return True

    def describe(self) -> str:
        return f"builtin {self.spec.options['name']}"

    @classmethod
    def check(cls, spec: HandlerSpec, base_dir: str) -> list[str]:
        if spec.priority == 0:  # an entry's own ``priority`` wins
            spec.priority = DEFAULT_PRIORITY[spec.options["name"]]
        return []

    @classmethod
    def implied_event(cls, entry: dict[str, Any]) -> str | None:
        name = entry.get("name")
        events = EVENTS.get(name) if isinstance(name, str) else None
        return events[0] if events else None

    @classmethod
    def event_problems(cls, spec: HandlerSpec, event: str) -> list[str]:
        problem = event_problem(spec.options["name"], event)
        return [problem] if problem else []

    @classmethod
    def options_model(cls) -> Any:
        return _options_model()


@cache
def _options_model() -> Any:
    from typing import Literal

    from pydantic import BaseModel, ConfigDict, Field, model_validator

    class BuiltinOptions(BaseModel):
        """Every built-in's fields (camelCase in the file); ``name`` says which apply."""

        model_config = ConfigDict(extra="allow", populate_by_name=True, strict=True)
        name: Literal["readOnly", "truncateOutput", "rateLimit"]
        # readOnly
        write_tools: list[str] | None = Field(None, alias="writeTools")
        read_tools: list[str] | None = Field(None, alias="readTools")
        write_verbs: list[str] | None = Field(None, alias="writeVerbs")
        sql_fields: list[str] | None = Field(None, alias="sqlFields")
        read_commands: list[str] | None = Field(None, alias="readCommands")
        # truncateOutput
        max_chars: int | None = Field(None, alias="maxChars", gt=0)
        # rateLimit
        limit: int | None = Field(None, gt=0)
        window: float | None = Field(None, gt=0, allow_inf_nan=False)
        per: list[Literal["session", "user", "agent", "tool", "server"]] | None = Field(None, min_length=1)
        on_limit: Literal["deny", "ask"] | None = Field(None, alias="onLimit")

        @model_validator(mode="after")
        def _fields_of_name(self) -> BuiltinOptions:
            alias = {n: f.alias or n for n, f in type(self).model_fields.items()}
            given = {n for n in type(self).model_fields if n != "name" and getattr(self, n) is not None}
            stray = sorted(alias[n] for n in given - FIELDS[self.name])
            if stray:
                raise ValueError(f"{', '.join(stray)}: not a field of builtin {self.name}")
            if self.name == "rateLimit":
                missing = [f for f in ("limit", "window") if getattr(self, f) is None]
                if missing:
                    raise ValueError(f"builtin rateLimit needs {' and '.join(missing)} (calls per window seconds)")
                if self.per is not None and len(set(self.per)) != len(self.per):
                    raise ValueError("per: each key at most once")
            return self

    return BuiltinOptions
