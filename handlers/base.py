"""The one abstract base for handlers, and the registry that maps a config ``type`` to a class.

Contract: ``await handler.run(event, ctx) -> Verdict``. A handler raises ``HandlerError`` (or
``HandlerTimeout``) when it cannot produce an answer; the dispatcher turns any exception into a
failed ``HandlerResult``, so nothing escapes to the agent. Deadlines are enforced by the dispatcher
(``asyncio.timeout``); a handler that owns resources (a process group, a connection) releases them
when cancelled.

Registry: the built-in types load lazily by module path (``import anthropic`` alone costs over
a second, so a handler module is imported only when a handler of its type runs or is validated).
Other types come from ``register_handler(cls)`` (in-process classes, Python API) or from the
entry-point group ``hookgate.handlers`` (``name = "package.module:Class"``).

Config sections: a handler family that needs a top-level config section of its own (``llm`` for the
judgment handlers, ``mcpServers``/``mcpConfig`` for ``mcp_tool``) declares a ``ConfigSection`` in
``SECTIONS`` (or with ``register_section``); ``gateway.config`` validates every registered section at
load time without importing a concrete handler by name.
"""

from __future__ import annotations

import sys
from abc import ABC, abstractmethod
from collections.abc import Hashable

from gateway.errors import ConfigError, HookgateError

TYPE_CHECKING = False  # importing typing costs a hook process ~2 ms
if TYPE_CHECKING:
    from collections.abc import Awaitable
    from typing import Any, ClassVar, TypeAlias

    from gateway.config.schema import Compilation
    from gateway.config.specs import HandlerSpec
    from gateway.context import RunContext
    from gateway.decision import Verdict
    from gateway.events import HookEvent

    Outcome: TypeAlias = "Verdict | tuple[Verdict, dict[str, Any]]"

BUILTIN: dict[str, str] = {
    "command": "handlers.command:CommandHandler",
    "http": "handlers.http:HttpHandler",
    "mcp_tool": "handlers.mcp_tool:McpToolHandler",
    "prompt": "handlers.prompt:PromptHandler",
    "agent": "handlers.agent:AgentHandler",
    "python": "handlers.python:PythonHandler",
    "builtin": "handlers.builtin:BuiltinHandler",
    "approval": "handlers.approval:ApprovalHandler",
}
ENTRY_POINT_GROUP = "hookgate.handlers"
SECTIONS: tuple[str, ...] = ("handlers.llm.section:LlmSection", "handlers.mcp_config:McpSection")
"""The built-in config sections, by ``module:Class`` (imported when a config is compiled)."""

_registered: dict[str, type[Handler]] = {}
_sections: list[type[ConfigSection]] = []


class Handler(ABC):
    """Base of every handler type.

    Class attributes: ``type`` (the config ``type`` string), ``judgment`` (True for LLM handlers:
    soft checks whose ``allow`` is dropped and whose failures never block), ``default_timeout``
    (seconds), ``fails_closed`` (True: always ``failClosed``). ``spec`` is the validated config entry;
    type-specific fields are in ``spec.options`` (snake_case keys).
    """

    type: ClassVar[str]
    judgment: ClassVar[bool] = False
    default_timeout: ClassVar[float] = 600.0
    fails_closed: ClassVar[bool] = False
    """True: the type is always ``failClosed`` (an approval gate that failed must not let the call through)."""

    def __init__(self, spec: HandlerSpec) -> None:
        self.spec = spec

    @abstractmethod
    async def run(self, event: HookEvent, ctx: RunContext) -> Outcome:
        """Answer one event: a ``Verdict``, or ``(Verdict, meta)`` where ``meta`` is a dict of details
        for the result (exit code, model, tokens, ...). Raises HandlerError when no answer can be made."""

    def can_run_sync(self) -> bool:
        """True when ``run_sync`` can answer without an event loop (in-process, synchronous handlers);
        ``hookgate run`` then skips importing asyncio altogether."""
        return False

    def run_sync(self, event: HookEvent, ctx: RunContext) -> Outcome:
        """Synchronous ``run`` for handlers whose ``can_run_sync()`` is True."""
        raise NotImplementedError

    def start(self, event: HookEvent, ctx: RunContext) -> Outcome | Awaitable[Outcome]:
        """Begin ``run`` under a running loop: the answer itself when the handler could give it at once
        without waiting on anything (a plain in-process function: the dispatcher then needs no deadline,
        since nothing could interrupt it), else an awaitable of it, which the dispatcher awaits under
        the handler's deadline. Default: the coroutine ``run(event, ctx)``. Raises what ``run`` raises."""
        return self.run(event, ctx)

    @classmethod
    def options_model(cls) -> Any:
        """The pydantic model of this type's own fields (None: no extra fields). Imported lazily."""
        return None

    @classmethod
    def check(cls, spec: HandlerSpec, base_dir: str) -> list[str]:
        """Load-time checks beyond the schema (e.g. the executable exists): one line per problem."""
        return []

    @classmethod
    def advice(cls, spec: HandlerSpec) -> list[str]:
        """Load-time warnings beyond the schema (the handler runs, but probably not as meant): one line each."""
        return []

    @classmethod
    def environment(cls, spec: HandlerSpec) -> list[str]:
        """What this handler needs from the environment and does not find (an unset secret variable):
        one line per problem, by the same rule the handler applies when it runs. ``hookgate validate``
        reports them as errors for a ``failClosed`` handler (it would deny every call) and as warnings
        otherwise (it would fail open)."""
        return []

    @classmethod
    def implied_event(cls, entry: dict[str, Any]) -> str | None:
        """The event a config entry of this type belongs to when it does not say (``agents:`` entries;
        class hooks and built-ins know theirs). None: the entry must name its event. Raises ConfigError
        when the entry cannot be resolved (an unimportable class hook)."""
        return None

    @classmethod
    def event_problems(cls, spec: HandlerSpec, event: str) -> list[str]:
        """Config errors for this entry on ``event`` (e.g. a PostToolUse-only check placed elsewhere)."""
        return []

    @classmethod
    def event_advice(cls, spec: HandlerSpec, event: str) -> list[str]:
        """Load-time warnings for this entry on ``event`` (a placeholder naming a field that event does
        not have): one ``field: what`` line each."""
        return []

    def chained(self) -> bool:
        """True for in-process hooks that compose as middleware (class hooks, built-ins): the chained
        handlers of one event run one after another in priority order, each seeing the rewrites of the
        ones before, and the first deny or block stops the chain (see ``gateway.dispatcher``)."""
        return False

    def dedup_key(self) -> Hashable:
        """Identical handlers in one event run once: two specs with equal keys are identical."""
        return (self.spec.type, self.spec.dialect, repr(sorted(self.spec.options.items())))

    def describe(self) -> str:
        """A short human description for ``hookgate explain``."""
        return self.spec.type


def import_module(name: str) -> Any:
    """``importlib.import_module`` for an absolute ``name`` without importing ``importlib`` (whose package
    imports ``warnings``: ~0.4 ms of every hook call). Raises ImportError as it does."""
    __import__(name)
    return sys.modules[name]


def register_handler(cls: type[Handler]) -> type[Handler]:
    """Register an in-process handler class under ``cls.type`` (usable as a decorator)."""
    _registered[cls.type] = cls
    return cls


def import_object(path: str, where: str, shape: str, error: type[HookgateError] = ConfigError) -> Any:
    """The object ``package.module:attr`` names (``attr`` may be dotted): the one loader of the
    ``callable`` and ``hook`` paths a config names. Raises ``error`` with a one-line message starting
    with ``where`` when ``path`` is not of the form ``shape``, its module cannot be imported (or fails
    while it runs), or it has no such attribute."""
    module_name, sep, attr = path.partition(":")
    if not sep or not module_name or not attr:
        raise error(f"{where} must look like {shape!r}")
    try:
        obj: Any = import_module(module_name)
    except Exception as exc:  # ImportError, or an error raised while the module runs
        raise error(f"{where}: cannot import {module_name}: {type(exc).__name__}: {exc}") from None
    for part in attr.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise error(f"{where}: {module_name} has no attribute {attr!r}")
    return obj


def _load(path: str, where: str) -> type[Handler]:
    module_name, _, attr = path.partition(":")
    try:
        obj = getattr(import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"handler type {where}: cannot load {path}: {exc}") from None
    if not (isinstance(obj, type) and issubclass(obj, Handler)):
        raise ConfigError(f"handler type {where}: {path} is not a hookgate Handler subclass")
    return obj


def handler_types() -> list[str]:
    """Every handler ``type`` a config may name: the built-in ones (in ``BUILTIN`` order), then those
    registered in this process (``register_handler``) and under the entry point group, each once."""
    from importlib.metadata import entry_points

    names = list(BUILTIN)
    for name in [*_registered, *sorted(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))]:
        if name not in names:
            names.append(name)
    return names


def handler_class(type_name: str) -> type[Handler]:
    """The class for a config ``type``. Raises ConfigError naming the known types."""
    if type_name in _registered:
        return _registered[type_name]
    if type_name in BUILTIN:
        cls = _load(BUILTIN[type_name], type_name)
        _registered[type_name] = cls
        return cls
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == type_name:
            cls = _load(ep.value, type_name)
            _registered[type_name] = cls
            return cls
    raise ConfigError(
        f"unknown handler type {type_name!r} (expected one of: {', '.join(handler_types())}, "
        f"or a type registered under the {ENTRY_POINT_GROUP!r} entry point)"
    )


def is_persistent_type(type_name: str) -> bool:
    """True for types every process can load (built-in or entry point), False for in-process ones."""
    if type_name in BUILTIN:
        return True
    from importlib.metadata import entry_points

    return any(ep.name == type_name for ep in entry_points(group=ENTRY_POINT_GROUP))


def is_judgment_type(type_name: str) -> bool:
    """True for LLM handler types: the class's ``judgment`` (the one source of truth; prompt, agent,
    or a registered class with ``judgment = True``). False for an unknown type."""
    try:
        return handler_class(type_name).judgment
    except ConfigError:
        return False


class ConfigSection(ABC):
    """A top-level config section owned by a family of handler types.

    ``keys``: the top-level keys it reads. ``compile`` runs for each config file that has one of them
    (problems go to ``compilation.issues`` / ``warnings``, each naming file and place); ``finish`` runs
    once after every file was read, whether or not any had the section (cross-file checks, defaults).
    """

    keys: ClassVar[tuple[str, ...]]

    @abstractmethod
    def compile(self, compiler: Compilation, path: str, base_dir: str, doc: dict[str, Any]) -> None:
        """Validate this section of the config document ``doc`` (read from ``path``) into ``compiler``."""

    @abstractmethod
    def finish(self, compiler: Compilation) -> None:
        """Checks across files, once every file is read (defaults the section when no file had it)."""


def register_section(cls: type[ConfigSection]) -> type[ConfigSection]:
    """Register a config section class (usable as a decorator)."""
    if cls not in _sections:
        _sections.append(cls)
    return cls


def config_sections() -> list[ConfigSection]:
    """One instance of every registered config section: the built-in ones, then ``register_section``'s.
    Raises ConfigError when a built-in section cannot be loaded."""
    classes: list[type[ConfigSection]] = []
    for path in SECTIONS:
        module_name, _, attr = path.partition(":")
        try:
            cls = getattr(import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(f"config section {path}: cannot load: {exc}") from None
        classes.append(cls)
    return [cls() for cls in classes + [c for c in _sections if c not in classes]]
