"""The one exception tree of hookgate.

::

    HookgateError                 base; ``str(err)`` is always one line fit for stderr
    ├── ConfigError               a config file is unreadable or invalid (``.issues`` lists each problem)
    ├── EventError                an inbound event is malformed (bad JSON, not an object, unknown event)
    ├── HandlerError              a handler could not produce an answer (crash, timeout, bad output);
    │   └── HandlerTimeout        the handler ran past its deadline
    ├── ServerUnavailable         the thin client could not reach ``hookgate serve``
    └── StoreError                the state store (``gateway.store``) could not be opened, read or written

Lower-level errors (``OSError``, ``json.JSONDecodeError``, ``pydantic.ValidationError``,
``httpx2.HTTPError``, ``mcp`` errors, SDK errors) are mapped into this tree at the boundary where they
happen; nothing else escapes to the agent. Handlers never raise to the dispatcher: a failure becomes a
``HandlerResult`` with status ``error`` or ``timeout``.
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


class EventError(HookgateError):
    """An inbound event is malformed: not JSON, not an object, not UTF-8, too large, unknown event."""


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
    """``hookgate serve`` could not be reached by the thin client."""


class StoreError(HookgateError):
    """The state store failed: the file cannot be opened, the database is locked past its timeout, or
    its schema is newer than this hookgate's (``gateway.store``)."""
