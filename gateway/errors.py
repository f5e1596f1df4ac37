"""The one exception tree of hookgate.

::

    HookgateError                 base; ``str(err)`` is always one line fit for stderr
    ├── ConfigError               a config file is unreadable or invalid (``.issues`` lists each problem)
    ├── UsageError                a ``hookgate`` command line is wrong (exit 2: a typo in a hook fails closed)
    ├── EventError                an inbound event is malformed (bad JSON, not an object, unknown event)
    │   └── EventUndecodable      valid JSON hookgate cannot decode (nested too deeply, a huge number)
    ├── HandlerError              a handler could not produce an answer (crash, timeout, bad output);
    │   └── HandlerTimeout        the handler ran past its deadline
    ├── AddressBlocked            the SSRF guard refused a destination (``handlers.netguard``)
    ├── ResolveError              a host name did not resolve in time (``handlers.netguard``)
    ├── ToolFailure               an agent handler's sandboxed tool call was refused or failed; told to
    │                             the model as a tool error, never raised past the agent loop
    ├── ServerUnavailable         the thin client got no valid answer from ``hookgate serve``
    │   ├── ServerNotRunning      nothing listens at the URL (connection refused)
    │   └── ServerMisconfigured   a bad URL or token, a refused request, or not hookgate answering
    ├── StoreError                the state store (``gateway.store``) could not be opened, read or written
    │   ├── StoreUnavailable      the store cannot be reached now (stateful decisions follow failClosed)
    │   └── StoreSchemaError      the store's schema is older than this hookgate ('hookgate store migrate')
    ├── InstallError              ``hookgate install``/``uninstall`` cannot write (nothing is written)
    │   └── TomlEditError         Codex's config.toml cannot be edited safely; add the entries by hand
    ├── ActionDenied              the Python host (``gateway.host``): a hook stopped the agent's action
    │   └── ToolCallDenied        ... a tool call (``gateway.tool_call``); ``.reason`` says why
    ├── ChannelError              an approval channel could not post or update a request
    └── CallbackRejected          an approval callback failed its signature/token check (``.status``)

Lower-level errors (``OSError``, ``json.JSONDecodeError``, ``pydantic.ValidationError``,
``httpx2.HTTPError``, ``mcp`` errors, SDK errors) are mapped into this tree at the boundary where they
happen; nothing else escapes to the agent. Handlers never raise to the dispatcher: a failure becomes a
``HandlerResult`` with status ``error`` or ``timeout``. A module's private control-flow error (a retryable
HTTP status, an MCP server that failed to start) subclasses the nearest class here. Normal outcomes are
values, not exceptions (a passed-through host event is ``gateway.events.PassedThrough``).

This module imports nothing, so the stdlib-only thin client (``gateway.client``) can load it alone.
"""

from __future__ import annotations


class HookgateError(Exception):
    """Base of every error hookgate raises on purpose."""


class ConfigError(HookgateError):
    """A config is invalid. ``issues`` holds one line per problem: ``file: path.inside: what was expected``."""

    def __init__(self, message: str, issues: list[str] | None = None) -> None:
        self.issues = issues or [message]
        self.warnings: list[str] = []  # what validation also noticed (``hookgate validate`` prints them)
        super().__init__(message)


class UsageError(HookgateError):
    """A ``hookgate`` command line is wrong (an unknown subcommand or option, a bad value): one line,
    exit 2 (``gateway.cli``), which hosts read as a block: a typo in a hook command fails closed."""


class EventError(HookgateError):
    """An inbound event is malformed: not JSON, not an object, not UTF-8, too large, unknown event."""


class EventUndecodable(EventError):
    """An event that is valid JSON but beyond what hookgate decodes (nested deeper than the interpreter's
    recursion limit, an integer with more digits than Python converts). The agent shapes tool inputs, so
    such an event is answered like an oversized one (a deny where a block holds an action back), never
    let through as merely malformed."""


class HandlerError(HookgateError):
    """A handler failed to produce an answer. The dispatcher turns it into a failed ``HandlerResult``.

    ``meta`` carries details for the result (exit code, HTTP status, stderr line, ...).
    """

    def __init__(self, message: str, meta: dict[str, object] | None = None) -> None:
        self.meta = meta or {}
        super().__init__(message)


class HandlerTimeout(HandlerError):
    """A handler ran past its deadline (seconds, from the ``timeout`` field)."""


class ServerUnavailable(HookgateError):
    """``hookgate serve`` gave the thin client no valid answer (reset, timeout, 5xx, a cut-short answer)."""


class ServerNotRunning(ServerUnavailable):
    """Nothing listens at the server URL (connection refused): the one case ``fallback`` stays silent."""


class ServerMisconfigured(ServerUnavailable):
    """The server URL is invalid, or the server refused the request as misconfigured (401, 403, 404,
    405, 415, 421), or what answered is not ``hookgate serve``: a fix is needed, not a restart."""


class StoreError(HookgateError):
    """The state store failed: the file cannot be opened, the database is locked past its timeout, or
    its schema is newer than this hookgate's (``gateway.store``). Messages name a store by its redacted
    URL, never with its password."""


class StoreUnavailable(StoreError):
    """The store cannot be reached (server down, connection lost, pool timeout); retried on the next call.

    ``broken_connection``: an open connection failed (the server restarted or the network dropped it),
    as opposed to no connection being had at all."""

    def __init__(self, message: str, *, broken_connection: bool = False) -> None:
        self.broken_connection = broken_connection
        super().__init__(message)


class StoreBusy(StoreError):
    """Another process held the store's write lock past the wait this opening allowed (SQLite's
    "database is locked"): nothing is wrong with the store."""


class StoreNotFound(StoreError):
    """A look that must not create anything (``hookgate store status``) found no store there yet;
    ``where``: the path it looked at."""

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(message)
        self.where = where


class StoreSchemaError(StoreError):
    """The store's schema version is older than this hookgate needs; the message names the command to run."""


class AddressBlocked(HookgateError):
    """The SSRF guard refused a destination (one line naming the host, the address and the fix)."""


class ResolveError(HookgateError):
    """The name did not resolve (or took longer than the connect timeout)."""


class ToolFailure(HookgateError):
    """A refused or failed sandboxed tool call; the message goes back to the model as a tool error."""


class InstallError(HookgateError):
    """``hookgate install``/``uninstall``: nothing can be written; the message is one line."""


class TomlEditError(InstallError):
    """Codex's config.toml could not be edited safely; the message says what to add by hand."""


class ActionDenied(HookgateError):
    """The Python host's answer when a hook stops an action (a session start, a prompt, a model call,
    the final output). ``reason``: what to tell the model. ``point``: the event or interception point
    (``PreToolUse``, ``pre_model_call``, ...). ``permission``: ``deny``, or ``ask``/``defer`` (a Python
    agent has no one to ask). ``source``: ``hookgate`` (its hooks) or ``interceptor`` (AGENT-HOOKS-0.1).
    ``decision``: the merged ``Decision`` (hookgate) or None; ``record``: the AGENT-HOOKS
    ``InterceptionRecord`` (interceptor) or None. ``after``: the action had already run (its result is
    withheld).
    """

    def __init__(
        self,
        reason: str,
        *,
        point: str,
        permission: str = "deny",
        source: str = "hookgate",
        decision: object = None,
        record: object = None,
        after: bool = False,
    ) -> None:
        self.reason = reason
        self.point = point
        self.permission = permission
        self.source = source
        self.decision = decision
        self.record = record
        self.after = after
        super().__init__(f"{point}: {reason.splitlines()[0] if reason else permission}")


class ToolCallDenied(ActionDenied):
    """A tool call was denied before it ran (``after`` False) or its result was withheld (``after`` True)."""


class ChannelError(HookgateError):
    """An approval channel could not post or update a request (SDK missing, API error, bad secret)."""


class CallbackRejected(HookgateError):
    """An approval callback failed its check (signature, token, shape); ``status`` is the HTTP status."""

    def __init__(self, message: str, status: int = 401) -> None:
        self.status = status
        super().__init__(message)


class Terminated(SystemExit):
    """``hookgate run`` got SIGTERM (the host timing it out): raised by the signal handler to unwind the
    whole run, so hooks' process groups are killed and nothing more runs; never a handler failure."""


def is_cancellation(exc: BaseException) -> bool:
    """True when ``exc`` is the running task being cancelled (a deadline around a dispatch, a server shutting
    down) or ``Terminated``: it must go on up. False for every other exception, a ``BaseException`` a
    handler's code raised too (SystemExit from argparse or ``sys.exit``, KeyboardInterrupt, GeneratorExit, a
    CancelledError of its own): the dispatcher makes those a handler failure like any exception."""
    if isinstance(exc, Terminated):
        return True
    import sys

    asyncio = sys.modules.get("asyncio")  # not imported: nothing can be cancelling this
    if asyncio is None or not isinstance(exc, asyncio.CancelledError):
        return False
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no loop running
        return False
    return task is not None and task.cancelling() > 0
