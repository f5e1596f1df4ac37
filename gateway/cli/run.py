"""``hookgate run``: answer one hook event read from stdin (in-process, or through a running server).

Exit codes: see ``gateway.cli``. ``decide`` dispatches one event here; ``render_run`` prints it.
"""

from __future__ import annotations

import os

from gateway.cli import EXIT_BLOCK, EXIT_ERROR, _err, _run_via_server
from gateway.client import emit, event_limit, read_event

TYPE_CHECKING = False  # typing costs ~2 ms to import on the hook path
if TYPE_CHECKING:
    import argparse

    from gateway.config import RuntimeConfig
    from gateway.decision import Decision, HandlerResult
    from gateway.dispatcher import Trace
    from gateway.events import HookEvent


def _load(config_paths: list[str] | None) -> RuntimeConfig:
    from gateway.config import find_config_paths, load_config

    return load_config(find_config_paths(config_paths))


def render_run(decision: Decision, dialect: str) -> tuple[int, str, str]:
    """What ``hookgate run`` prints for ``decision``: ``(exit_code, stdout, stderr)``, stderr starting with
    one ``hookgate: handler ID STATUS: message`` line per failed handler (also used by ``hookgate serve``)."""
    from gateway.dialects import get_dialect

    notes = "".join(f"hookgate: handler {r.id} {r.status}: {r.message}\n" for r in decision.results if r.failed)
    code, out, err = get_dialect(dialect).render(decision)
    return code, out, notes + err


def decide(config: RuntimeConfig, event: HookEvent, trace: Trace | None = None) -> Decision:
    """Dispatch one event in this process (``asyncio`` is imported only when a handler runs)."""
    from gateway.decision import merge
    from gateway.dispatcher import Dispatcher

    dispatcher = Dispatcher(config)
    selected = dispatcher.select(event, trace)
    if not selected:
        return merge(event.name, [])
    from gateway.context import RunContext

    ctx = RunContext(config, mode="run")
    results = dispatcher.run_selected_sync(event, selected, ctx)  # in-process checks: no event loop
    if results is None:
        import asyncio

        async def go() -> list[HandlerResult]:
            try:
                return await dispatcher.run_selected(event, selected, ctx)
            finally:
                await ctx.aclose()

        results = asyncio.run(go())
    return merge(event.name, results, tool_input=event.tool_input, blocks=event.spec.blocks)


def cmd_run(args: argparse.Namespace) -> int:
    from gateway.errors import ConfigError, EventError

    data: bytes | None = getattr(args, "preread", None)  # the thin client's fallback: stdin already read
    server = args.server or os.environ.get("HOOKGATE_SERVER")
    if data is None and server:
        code, data = _run_via_server(server, args.dialect, args.on_server_down)
        if data is None:
            return code
    limit = event_limit()
    if data is None:
        data = read_event(limit)
    if len(data) > limit:
        return _oversized(data, limit, args.dialect)
    try:
        from gateway.dialects import parse_event
        from gateway.events import decode_event_bytes

        event = parse_event(decode_event_bytes(data), args.dialect)
    except EventError as exc:
        answer = getattr(exc, "answer", None)  # dialects.PassThrough: a host event hookgate leaves alone
        if answer is not None:
            return emit(*answer)
        _err(str(exc))
        return EXIT_ERROR
    depth = _nesting_depth()
    if depth > MAX_NESTING:
        _err(f"hookgate run is nested {depth} levels deep: a hook in the config runs hookgate on the same "
             "events again (give that hook its own --config, or remove it)")
        return config_error_exit(event)
    try:
        config = _load(args.config)
    except ConfigError as exc:
        issues = exc.issues
        more = f" (and {len(issues) - 1} more; run 'hookgate validate')" if len(issues) > 1 else ""
        _err(f"invalid config: {issues[0]}{more}")
        return config_error_exit(event)
    import signal

    signal.signal(signal.SIGTERM, _terminated)  # a host timing us out: unwind, so hooks' groups are killed
    try:
        decision = decide(config, event)
    except Exception as exc:  # last line of defence: never a traceback to the agent
        message = f"internal error while dispatching {event.name}: {type(exc).__name__}: {exc}"
        _err(message)
        failed = internal_failure(config, event, message)
        return emit(*render_run(failed, event.dialect)) if failed is not None else EXIT_ERROR
    return emit(*render_run(decision, event.dialect))


def _oversized(data: bytes, limit: int, dialect: str) -> int:
    """An event over the size limit: a deny/block in the host's dialect where a block holds an action
    back (exit 2), else one line and exit 1 (see ``gateway.oversize``)."""
    import sys

    from gateway.oversize import Oversized, oversize_decision

    over = Oversized(data, limit)
    del data
    over.drain(sys.stdin.buffer.read)
    dialect, decision = oversize_decision(over, dialect)
    if decision is None:
        _err(over.message)
        return EXIT_ERROR
    return emit(*render_run(decision, dialect))


MAX_NESTING = 3
"""``hookgate run`` inside a hook inside ``hookgate run`` ... beyond this depth is a loop, not a design."""


def _nesting_depth() -> int:
    """How many ``hookgate run`` processes are above this one (``HOOKGATE_DEPTH``, set for command hooks)."""
    try:
        return int(os.environ.get("HOOKGATE_DEPTH", "0"))
    except ValueError:
        return 0


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def config_error_exit(event: HookEvent) -> int:
    """Exit code for an invalid config: 2 (block) on events where a block holds an action back, so a
    broken policy never silently turns policy off; 1 (non-blocking) where a block would only make the
    agent keep working (Stop, PostToolUse, ...) and loop on the error. ``HOOKGATE_ON_CONFIG_ERROR=open``
    makes it 1 everywhere."""
    from gateway.events import CONTINUE_EVENTS

    if os.environ.get("HOOKGATE_ON_CONFIG_ERROR") == "open" or event.name in CONTINUE_EVENTS:
        return EXIT_ERROR
    return EXIT_BLOCK if event.spec.blocks or event.spec.tool else EXIT_ERROR


def internal_failure(config: RuntimeConfig, event: HookEvent, message: str) -> Decision | None:
    """When hookgate itself fails: a deny/block if any handler for this event is ``failClosed``
    (the gate must not open because its keeper crashed), else None (exit 1, non-blocking)."""
    from gateway.decision import HandlerResult, merge

    if not any(h.fail_closed for g in config.hooks.get(event.name, []) for h in g.handlers):
        return None
    result = HandlerResult(id="hookgate", type="internal", status="error", message=message, fail_closed=True)
    return merge(event.name, [result], blocks=event.spec.blocks)
