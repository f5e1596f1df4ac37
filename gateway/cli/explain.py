"""``hookgate explain``: run one event and print a readable trace (selection, results, decision, the
rendered answer). It really runs the handlers that fit (commands, webhooks, MCP tools, LLM checks, with
their side effects) and says so; ``--dry-run`` only shows which handlers fit and would run, and runs
nothing."""

from __future__ import annotations

from gateway.cli import _err
from gateway.cli.run import _load, decide
from gateway.client import read_event
from gateway.wire import EXIT_ERROR, EXIT_OK

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from gateway.config import RuntimeConfig
    from gateway.dispatcher import Trace
    from gateway.events import HookEvent


def _read_event_arg(path: str | None) -> bytes:
    """The event file's bytes (stdin for None or ``-``). Raises EventError when it cannot be read."""
    if path in (None, "-"):
        return read_event()
    from gateway.errors import EventError

    try:
        with open(str(path), "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise EventError(f"cannot read event file {path}: {exc.strerror or exc}") from None


def cmd_explain(args: argparse.Namespace) -> int:
    import json

    from gateway.dialects import parse_event, render
    from gateway.dispatcher import Trace
    from gateway.errors import HookgateError
    from gateway.events import PassedThrough, decode_event_bytes

    try:
        config = _load(args.config)
        event = parse_event(decode_event_bytes(_read_event_arg(args.event)), args.dialect)
        if isinstance(event, PassedThrough):
            print(f"passed through: {event.reason}")
            return EXIT_OK
        print(f"config: {', '.join(config.sources)}")
        print(
            f"event: {event.name} (dialect {event.dialect})" + (f", tool {event.tool_name}" if event.tool_name else "")
        )
        if config.guards:
            from gateway.config.guards import describe

            print("guards (the default policy's tuning): " + "; ".join(describe(config.guards)))
        groups = config.hooks.get(event.name, [])
        if not groups:
            print(f"no hooks configured for {event.name}")
        trace = Trace()
        if getattr(args, "dry_run", False):
            return _dry_run(config, event, trace)
        print(
            "explain runs the handlers that fit, for real (commands, webhooks, MCP tools, LLM checks); "
            "use --dry-run to only see what would run"
        )
        decision = decide(config, event, trace, record=False)
    except HookgateError as exc:
        _err(str(exc))
        return EXIT_ERROR
    for line in trace.lines:
        print(line)
    print("results:")
    for result in decision.results:
        print(
            f"  {result.id}{' (again, on the rewritten input)' if result.meta.get('recheck') else ''}: "
            f"{result.status} in {result.duration_ms:.0f} ms" + (f": {result.message}" if result.message else "")
        )
        if result.verdict is not None and not result.verdict.is_empty():
            print(f"    verdict: {json.dumps(result.verdict.to_dict(), ensure_ascii=False)}")
        if result.meta.get("rule") and result.meta.get("trigger"):  # the default policy's guards
            print(
                f"    rule: {result.meta['rule']} ({result.meta.get('decision', 'deny')}), triggered by: "
                f"`{result.meta['trigger']}`"
            )
        if result.meta:
            print(f"    meta: {json.dumps(result.meta, ensure_ascii=False, default=str)}")
    if not decision.results:
        print("  (no handler ran)")
    summary = {k: v for k, v in decision.to_dict().items() if k != "results"}
    print(f"decision: {json.dumps(summary, ensure_ascii=False)}")
    code, out, err = render(decision, event.dialect)
    print(f"rendered for {event.dialect}: exit {code}")
    if out:
        print(f"  stdout: {out.rstrip()}")
    if err:
        print(f"  stderr: {err.rstrip()}")
    return EXIT_OK


def _dry_run(config: RuntimeConfig, event: HookEvent, trace: Trace) -> int:
    """``explain --dry-run``: which groups and handlers fit ``event`` and would run; nothing runs."""
    from gateway.dispatcher import Dispatcher

    dispatcher = Dispatcher(config)
    selected = dispatcher.select(event, trace)
    for line in trace.lines:
        print(line.replace("): runs", "): would run", 1))
    if not selected:
        print("dry run: no handler would run")
        return EXIT_OK
    print(f"dry run: {len(selected)} handler(s) would run, in merge order (nothing was run):")
    for item in selected:
        print(f"  {item.spec.id}: {dispatcher.handler(item.spec).describe()}")
    return EXIT_OK
