"""Log output of MCP sessions kept to one redacted line: what hookgate's stdio transport says about a server's
stdout (``handlers.mcp_stdio``) and what the ``mcp`` SDK logs itself.

Why: ``hookgate run`` has no logging configured, so a warning goes to Python's last-resort handler on stderr,
with its traceback; and on exit 2 Claude Code hands stderr to the model. A server's stdout line (a startup
banner can hold a key) or an SDK exception dump (pydantic prints the input it failed on) must not reach it
whole. ``one_line`` flattens a text to one line, redacts it with the audit record's patterns
(``gateway.audit.redact.Redactor``: the defaults plus the config's ``audit.redact``) and caps it;
``install`` routes the SDK's loggers (``SDK_LOGGERS``; WARNING and above, as the last-resort handler would) through
``OneLineHandler``, which writes each record as one such line, an exception as its type and first line.

``install`` leaves those loggers alone when the process configured logging itself (the root logger has
handlers: an application embedding the ``Gateway``), so its own handlers keep getting the SDK's records.
Standard library only at import (the redactor is imported on first use).
"""

from __future__ import annotations

import logging
import sys
from typing import Any

MAX_LOG_LINE = 300
"""Characters of one logged line (after redaction)."""
SDK_LOGGERS = ("mcp", "client", "server")
"""The loggers the ``mcp`` SDK logs to (its client session logs to ``client``, not ``mcp.client.session``)."""

_patterns: tuple[str, ...] = ()


def redactor(patterns: tuple[str, ...] | None = None) -> Any:
    """The audit record's ``Redactor`` with ``patterns`` (default: the ones last given to ``install``)."""
    from gateway.audit.redactors import redactor_for

    return redactor_for(_patterns if patterns is None else patterns)


def one_line(text: str, patterns: tuple[str, ...] | None = None, limit: int = MAX_LOG_LINE) -> str:
    """``text`` on one line (every run of whitespace, newlines included, becomes one space), secrets
    redacted (before it is cut, so no part of a secret is kept), at most ``limit`` characters."""
    flat = " ".join(text.split())
    line = str(redactor(patterns).text(flat))
    return line if len(line) <= limit else line[: limit - 3] + "..."


class OneLineHandler(logging.Handler):
    """Writes each record to the current ``sys.stderr`` as ``hookgate: LOGGER: one redacted line``."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            first = (str(exc).strip().splitlines() or [""])[0]
            message = f"{message} ({type(exc).__name__}{': ' + first if first else ''})"
        return f"hookgate: {record.name}: {one_line(message)}"

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:
            self.handleError(record)


def install(patterns: tuple[str, ...] = ()) -> None:
    """Route the SDK's log records through ``OneLineHandler`` (once; see module docstring) and use
    ``patterns`` (the config's ``audit.redact``) when redacting them."""
    global _patterns
    _patterns = tuple(patterns)
    if logging.getLogger().handlers:
        return
    for name in SDK_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(h, OneLineHandler) for h in logger.handlers):
            logger.addHandler(OneLineHandler(logging.WARNING))
            logger.propagate = False
