"""``redactor_for(patterns, max_value)``: the audit record's ``Redactor`` (``gateway.audit.redact``) for one
pattern set, built once per process and shared by everything that redacts outside the record itself: a
handler's failure text (``gateway.dispatcher``), the MCP SDK's log lines (``handlers.mcp_logs``), the
verdicts ``cacheTtl`` stores (``gateway.verdict_cache``). ``gateway.audit.redact`` (its regexes) is imported
on the first call, not with this module."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gateway.audit.redact import Redactor

_CACHE: dict[tuple[tuple[str, ...], int], Redactor] = {}


def redactor_for(patterns: tuple[str, ...] = (), max_value: int = 4096) -> Redactor:
    """The ``Redactor(patterns, max_value)`` of this process (patterns: ``audit.redact``'s, beside the
    defaults; max_value: characters a string keeps, see ``Redactor``)."""
    key = (patterns, max_value)
    found = _CACHE.get(key)
    if found is None:
        from gateway.audit.redact import Redactor

        found = _CACHE[key] = Redactor(patterns, max_value)
    return found
