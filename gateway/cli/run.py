"""``hookgate run``: answer one hook event read from stdin (in-process, or through a running server).

Exit codes: see ``gateway.cli``. ``decide`` dispatches one event here (``Dispatcher.decide``);
``gateway.dialects.render`` gives what to print.
"""

from __future__ import annotations

import os
import sys

from gateway.cli import _err, _run_via_server
from gateway.client import emit, event_limit, event_limit_setting, read_event
from gateway.wire import EXIT_BLOCK, EXIT_ERROR

TYPE_CHECKING = False  # typing costs ~2 ms to import on the hook path
if TYPE_CHECKING:
    import argparse

    from gateway.cli import RunArgs
    from gateway.config.specs import RuntimeConfig
    from gateway.context import RunContext
    from gateway.decision import Decision
    from gateway.dispatcher import Trace
    from gateway.events import HookEvent


def _load(config_paths: list[str] | None) -> RuntimeConfig:
    from gateway.config import find_config_paths, load_config

    return load_config(find_config_paths(config_paths))


def decide(
    config: RuntimeConfig,
    event: HookEvent,
    trace: Trace | None = None,
    *,
    record: bool = True,
    ctx: RunContext | None = None,
) -> Decision:
    """``Dispatcher.dispatch`` for one event in this process (``asyncio`` is imported only when a
    handler needs it); with ``record`` (``explain`` passes False) the decision is recorded. The recorder
    is closed before returning (spans flushed), unless the caller passes its own ``ctx`` (a
    ``RunContext(config, mode="run")``) and closes it itself: ``cmd_run`` writes the answer first."""
    from gateway.context import RunContext
    from gateway.dispatcher import Dispatcher

    own = ctx is None
    run_ctx = RunContext(config, mode="run") if ctx is None else ctx
    try:
        return Dispatcher(config).decide(event, run_ctx, trace, record=record)
    finally:
        if own:
            run_ctx.close_recorder()


def _record_failure(config: RuntimeConfig, event: HookEvent, decision: Decision) -> None:
    """Put the deny hookgate answers when it failed itself on the audit trail too."""
    from gateway.context import RunContext
    from gateway.dispatcher import Dispatcher

    ctx = RunContext(config, mode="run")
    try:
        Dispatcher(config).record(event, decision, ctx)
    finally:
        ctx.close_recorder()


TERMINATED = (
    "ended by SIGTERM before it answered (the host's hook timeout, or the host stopping): the host went on "
    "without this hook's answer"
)
"""The message of each handler of an event ``hookgate run`` was ended on (``_record_terminated``)."""


def _record_terminated(config: RuntimeConfig, event: HookEvent) -> None:
    """Put an event the host ended this run on (SIGTERM) on the audit trail: each handler that was to run
    as timed out (``TERMINATED``), and no decision, since none reached the host: the events a host let
    through because their hook timed out are the ones a trail must not miss. Never raises."""
    from gateway.decision import Decision, HandlerResult
    from gateway.dispatcher import Dispatcher

    try:
        results = [
            HandlerResult(
                id=s.spec.id,
                type=s.spec.type,
                status="timeout",
                message=TERMINATED,
                fail_closed=s.spec.fail_closed,
                order=s.order,
            )
            for s in Dispatcher(config).select(event)
        ]
        _record_failure(config, event, Decision(event=event.name, results=results))
    except Exception as exc:
        _err(f"audit: cannot record the event this run was ended on: {type(exc).__name__}: {exc}")


def cmd_run(args: argparse.Namespace | RunArgs) -> int:
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
    from gateway.dialects import parse_event
    from gateway.errors import EventUndecodable
    from gateway.events import PassedThrough, decode_event_bytes

    try:
        event = parse_event(decode_event_bytes(data), args.dialect)
    except EventUndecodable as exc:  # valid JSON shaped past decoding (by tool input): not a silent pass
        return _oversized(data, limit, args.dialect, str(exc))
    except EventError as exc:
        _err(str(exc))
        return EXIT_ERROR
    if isinstance(event, PassedThrough):  # a host event hookgate leaves alone
        return emit(*event.answer)
    depth = _nesting_depth()
    if depth > MAX_NESTING:
        _err(
            f"hookgate run is nested {depth} levels deep: a hook in the config runs hookgate on the same "
            "events again (give that hook its own --config, or remove it)"
        )
        return config_error_exit(event)
    try:
        config = _load(args.config)
    except ConfigError as exc:
        issues = exc.issues
        more = f" (and {len(issues) - 1} more; run 'hookgate validate')" if len(issues) > 1 else ""
        _err(f"invalid config: {issues[0]}{more}")
        return config_error_exit(event)
    except Exception as exc:  # e.g. a project's own `handlers` package shadowing hookgate's: never fail open
        _err(f"cannot load the config: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
        return config_error_exit(event)
    import _signal  # the C module: ``signal`` builds its enums at import, ~0.5 ms on every hook call

    _signal.signal(_signal.SIGTERM, _terminated)  # a host timing us out: unwind, so hooks' groups are killed
    from gateway.context import RunContext
    from gateway.dialects import render
    from gateway.dispatcher import internal_failure

    # An in-process handler's print() must not go before the answer: sys.stdout itself (not a context
    # variable: worker threads and a loop started here see it too), and descriptor 1 (os.write(1, ...),
    # a C library's printf, a child process that inherits it) point at stderr while the event is decided.
    stdout, sys.stdout = sys.stdout, sys.stderr
    saved = _stdout_to_stderr()
    from gateway.errors import Terminated

    ctx = RunContext(config, mode="run")
    try:
        decision = decide(config, event, ctx=ctx)
    except Terminated:  # the host's hook timeout: it goes on without this answer, and the trail says so
        _signal.signal(_signal.SIGTERM, _signal.SIG_IGN)  # (a second SIGTERM must not cut the record short)
        _record_terminated(config, event)
        raise
    except Exception as exc:  # last line of defence: never a traceback to the agent
        ctx.close_recorder()
        message = f"internal error while dispatching {event.name}: {type(exc).__name__}: {exc}"
        _err(message)
        failed = internal_failure(config, event, message)
        if failed is None:
            return EXIT_ERROR
        _record_failure(config, event, failed)
        decision = failed
    finally:
        _restore_stdout(saved)
        sys.stdout = stdout
    code = emit(*render(decision, event.dialect))
    # Spans go out after the answer (the host still waits for the process to end, but at most
    # RUN_CLOSE_SECONDS: gateway.audit.otel), so a line about them never comes before a block's reason.
    ctx.close_recorder()
    return code


def _stdout_to_stderr() -> int | None:
    """Point descriptor 1 at stderr (or /dev/null when there is no stderr); returns a copy of the real
    stdout for ``_restore_stdout`` (non-inheritable: no child process gets it), or None when there is no
    stdout to protect."""
    try:
        saved = os.dup(1)
    except OSError:  # started with stdout closed: the answer is lost anyway (``emit``), the exit code is not
        return None
    try:
        os.dup2(2, 1)
    except OSError:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.close(fd)
    return saved


def _restore_stdout(saved: int | None) -> None:
    if saved is not None:
        os.dup2(saved, 1)
        os.close(saved)


def _oversized(data: bytes, limit: int, dialect: str, problem: str | None = None) -> int:
    """An event over the size limit, or one that cannot be decoded (``problem``): a deny/block in the
    host's dialect where a block holds an action back (exit 2), else one line and exit 1 (see
    ``gateway.oversize``)."""
    from gateway.oversize import Oversized, oversize_decision

    over = Oversized(data, limit, problem, event_limit_setting())
    del data
    if problem is None:
        over.drain(sys.stdin.buffer.read)
    from gateway.dialects import render

    dialect, decision = oversize_decision(over, dialect)
    if decision is None:
        _err(over.message)
        return EXIT_ERROR
    return emit(*render(decision, dialect))


MAX_NESTING = 3
"""``hookgate run`` inside a hook inside ``hookgate run`` ... beyond this depth is a loop, not a design."""


def _nesting_depth() -> int:
    """How many ``hookgate run`` processes are above this one (``HOOKGATE_DEPTH``, set for command hooks)."""
    try:
        return int(os.environ.get("HOOKGATE_DEPTH", "0"))
    except ValueError:
        return 0


def _terminated(signum: int, frame: object) -> None:
    from gateway.errors import Terminated  # (a SystemExit a handler's code raised is that handler's failure)

    raise Terminated(128 + signum)


def config_error_exit(event: HookEvent) -> int:
    """Exit code for an invalid config: 2 (block) on events where a block holds an action back, so a
    broken policy never silently turns policy off; 1 (non-blocking) where a block would only make the
    agent keep working (Stop, PostToolUse, ...) and loop on the error. ``HOOKGATE_ON_CONFIG_ERROR=open``
    makes it 1 everywhere."""
    from gateway.events import CONTINUE_EVENTS

    if os.environ.get("HOOKGATE_ON_CONFIG_ERROR") == "open" or event.name in CONTINUE_EVENTS:
        return EXIT_ERROR
    return EXIT_BLOCK if event.spec.blocks or event.spec.tool else EXIT_ERROR
