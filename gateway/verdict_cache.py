"""The ``cacheTtl`` verdict cache (``Dispatcher.attempt``): its key, and reads and writes through the state
store.

The key is the handler plus everything the handler receives that can change its answer (``key``); a
verdict the audit redactor would change (a secret in its reason, rewrite, context, ...) is never written
(``put``), so no secret reaches the store and a cached answer is always exactly the handler's. A store that
cannot answer only costs a rerun (one warning per process on ``hookgate.store``).
"""

from __future__ import annotations

import json

TYPE_CHECKING = False  # importing typing costs a hook process ~2 ms
if TYPE_CHECKING:
    from collections.abc import Hashable
    from typing import Any

    from gateway.context import RunContext
    from gateway.decision import Verdict
    from gateway.events import HookEvent

NOT_KEYED = frozenset({"tool_use_id", "prompt_id", "turn_id", "timestamp", "session_id", "transcript_path"})
"""Event fields a cached verdict is not keyed on: per-call identifiers (Claude Code's ``tool_use_id`` and
``prompt_id``, Codex's ``turn_id``, Gemini's ``timestamp``) and, since the cache lives in the state store
that every process (and, with PostgreSQL, every machine) shares, the session (``session_id``,
``transcript_path``)."""

UNCUT = 1 << 40
"""The redactor's ``max_value`` here: only secrets count as a change, never length."""


def key(handler_key: Hashable, event: HookEvent) -> str:
    """Cache key: the handler plus everything the handler receives that can change its answer: the event
    name, host format and the tool's host name (``execute_bash``), every event field but ``NOT_KEYED``
    (``tool_name``, ``tool_input``, ``tool_response``, ``cwd``, ``prompt``, ``permission_mode``,
    ``agent_id``, ...) and the caller's project folder (``hookgate serve``), never the handler alone."""
    content = {k: v for k, v in event.payload.items() if k not in NOT_KEYED}
    where = [event.name, event.dialect, event.host_tool_name, event.project_dir]
    blob = json.dumps([repr(handler_key), *where, content], sort_keys=True, default=str)
    import hashlib  # ~2 ms to import: only cacheTtl handlers need it

    return hashlib.sha256(blob.encode()).hexdigest()


def verdict_fields(verdict: Verdict) -> dict[str, Any]:
    """A verdict as cached: its side effects are left out (a cached answer does nothing again)."""
    return {name: getattr(verdict, name) for name in verdict.__slots__ if name != "side_effects"}


def storable(fields: dict[str, Any], redact: tuple[str, ...] = ()) -> bool:
    """True when the audit redactor (with ``audit.redact``'s patterns ``redact``) leaves these verdict
    fields as they are: nothing secret in them, so they may be written and come back exact."""
    from gateway.audit.redactors import redactor_for

    redactor = redactor_for(redact, UNCUT)
    try:
        return bool(redactor.apply(fields) == fields)
    except Exception:  # a value the redactor cannot read is no reason to store the verdict
        return False


async def get(ctx: RunContext, key: str) -> dict[str, Any] | None:
    """The cached verdict fields, or None; a store that cannot answer is a miss (the handler runs, and
    the store's one-line error is logged once per process on ``hookgate.store``)."""
    from gateway.errors import StoreError

    try:
        value: dict[str, Any] | None = await ctx.state.acache_get(key)
        return value
    except StoreError as exc:
        _skipped(exc)
        return None


async def put(ctx: RunContext, key: str, verdict: Verdict, ttl: float, redact: tuple[str, ...] = ()) -> None:
    """Cache a verdict, unless it holds a secret (``storable``); a store that cannot be written only
    costs the next call a rerun."""
    fields = verdict_fields(verdict)
    if not storable(fields, redact):
        return
    from gateway.errors import StoreError

    try:
        await ctx.state.acache_put(key, fields, ttl)
    except StoreError as exc:
        _skipped(exc)


warned: list[str] = []
"""The store error logged (once per process)."""


def _skipped(exc: Exception) -> None:
    if not warned:
        import logging

        warned.append(str(exc))
        logging.getLogger("hookgate.store").warning("%s (cacheTtl handlers run uncached)", exc)
