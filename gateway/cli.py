"""``hookgate`` command line: run, validate, explain, demo.

Exit codes of ``hookgate run`` (what the host sees):
0 the answer is on stdout (or nothing to say); 2 deny/block (reason on stderr, JSON on stdout) or an
invalid config (a broken policy must not silently turn policy off; ``HOOKGATE_ON_CONFIG_ERROR=open``
makes that exit 1 instead); 1 a malformed event or an internal error (non-blocking: the host goes on).
Every error is one line on stderr; no traceback reaches the agent.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gateway.config import RuntimeConfig
    from gateway.decision import Decision
    from gateway.dispatcher import Trace
    from gateway.events import HookEvent

DIALECT_CHOICES = ("auto", "claude", "kiro")
EXIT_OK, EXIT_ERROR, EXIT_BLOCK = 0, 1, 2


def _err(message: str) -> None:
    sys.stderr.write(f"hookgate: {message}\n")


def _read_stdin() -> bytes:
    from gateway.events import MAX_EVENT_BYTES

    return sys.stdin.buffer.read(MAX_EVENT_BYTES + 1)


def _load(config_paths: list[str] | None) -> RuntimeConfig:
    from gateway.config import find_config_paths, load_config

    return load_config(find_config_paths(config_paths))


def _emit(code: int, out: str, err: str) -> int:
    if out:
        sys.stdout.write(out)
        sys.stdout.flush()
    if err:
        sys.stderr.write(err)
    return code


def decide(config: RuntimeConfig, event: HookEvent, trace: Trace | None = None) -> Decision:
    """Dispatch one event in this process (``asyncio`` is imported only when a handler runs)."""
    from gateway.decision import merge
    from gateway.dispatcher import Dispatcher

    dispatcher = Dispatcher(config)
    selected = dispatcher.select(event, trace)
    if not selected:
        return merge(event.name, [])
    import asyncio

    from gateway.context import RunContext

    async def go() -> Decision:
        ctx = RunContext(config, mode="run")
        try:
            results = await dispatcher.run_selected(event, selected, ctx)
        finally:
            await ctx.aclose()
        spec = event.spec
        return merge(event.name, results, tool_input=event.tool_input, tool_event=spec.tool, blocks=spec.blocks)

    return asyncio.run(go())


def cmd_run(args: argparse.Namespace) -> int:
    from gateway.errors import ConfigError, EventError

    data = _read_stdin()
    try:
        config = _load(args.config)
    except ConfigError as exc:
        issues = exc.issues
        more = f" (and {len(issues) - 1} more; run 'hookgate validate')" if len(issues) > 1 else ""
        _err(f"invalid config: {issues[0]}{more}")
        return EXIT_ERROR if os.environ.get("HOOKGATE_ON_CONFIG_ERROR") == "open" else EXIT_BLOCK
    try:
        from gateway.dialects import get_dialect, parse_event
        from gateway.events import decode_event_bytes

        event = parse_event(decode_event_bytes(data), args.dialect)
    except EventError as exc:
        _err(str(exc))
        return EXIT_ERROR
    try:
        decision = decide(config, event)
    except Exception as exc:  # last line of defence: never a traceback to the agent
        _err(f"internal error while dispatching {event.name}: {type(exc).__name__}: {exc}")
        return EXIT_ERROR
    for result in decision.results:
        if result.failed:
            _err(f"handler {result.id} {result.status}: {result.message}")
    return _emit(*get_dialect(event.dialect).render(decision))


def cmd_validate(args: argparse.Namespace) -> int:
    from gateway.config import find_config_paths, load_config
    from gateway.errors import ConfigError

    paths = find_config_paths((args.paths or []) + (args.config or []) or None)
    try:
        config = load_config(paths, use_cache=False)
    except ConfigError as exc:
        for issue in exc.issues:
            print(f"error: {issue}")
        print(f"{len(exc.issues)} error(s) in {', '.join(paths)}")
        return EXIT_ERROR
    for warning in config.warnings:
        print(f"warning: {warning}")
    groups = sum(len(g) for g in config.hooks.values())
    print(f"ok: {config.handler_count()} handler(s) in {groups} group(s) on {len(config.hooks)} event(s) "
          f"from {', '.join(paths)}")
    return EXIT_OK


def _read_event_arg(path: str | None) -> bytes:
    if path in (None, "-"):
        return _read_stdin()
    with open(str(path), "rb") as fh:
        return fh.read()


def cmd_explain(args: argparse.Namespace) -> int:
    import json

    from gateway.dialects import get_dialect, parse_event
    from gateway.dispatcher import Trace
    from gateway.errors import HookgateError
    from gateway.events import decode_event_bytes

    try:
        config = _load(args.config)
        event = parse_event(decode_event_bytes(_read_event_arg(args.event)), args.dialect)
        print(f"config: {', '.join(config.sources)}")
        print(f"event: {event.name} (dialect {event.dialect})"
              + (f", tool {event.tool_name}" if event.tool_name else ""))
        groups = config.hooks.get(event.name, [])
        if not groups:
            print(f"no hooks configured for {event.name}")
        trace = Trace()
        decision = decide(config, event, trace)
    except HookgateError as exc:
        _err(str(exc))
        return EXIT_ERROR
    for line in trace.lines:
        print(line)
    print("results:")
    for result in decision.results:
        print(f"  {result.id}: {result.status} in {result.duration_ms:.0f} ms"
              + (f": {result.message}" if result.message else ""))
        if result.verdict is not None and not result.verdict.is_empty():
            print(f"    verdict: {json.dumps(result.verdict.to_dict(), ensure_ascii=False)}")
    if not decision.results:
        print("  (no handler ran)")
    summary = {k: v for k, v in decision.to_dict().items() if k != "results"}
    print(f"decision: {json.dumps(summary, ensure_ascii=False)}")
    code, out, err = get_dialect(event.dialect).render(decision)
    print(f"rendered for {event.dialect}: exit {code}")
    if out:
        print(f"  stdout: {out.rstrip()}")
    if err:
        print(f"  stderr: {err.rstrip()}")
    return EXIT_OK


def cmd_demo(args: argparse.Namespace) -> int:
    from gateway.demo import run_demo

    return run_demo(args.config)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hookgate", description="A hook gateway for AI coding agents.")
    parser.add_argument("--version", action="version", version="hookgate 0.1.0")
    sub = parser.add_subparsers(dest="command", required=True)

    def with_config(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument("--config", "-c", action="append", metavar="FILE",
                       help="config file (repeatable; default: $HOOKGATE_CONFIG, ./hookgate.yaml|json, built-in)")
        return p

    run = with_config(sub.add_parser("run", help="answer one hook event read from stdin"))
    run.add_argument("--dialect", choices=DIALECT_CHOICES, default="auto", help="host format (default: auto)")
    run.set_defaults(func=cmd_run)

    validate = with_config(sub.add_parser("validate", help="check config files; exit 0 ok, 1 errors"))
    validate.add_argument("paths", nargs="*", metavar="FILE")
    validate.set_defaults(func=cmd_validate)

    explain = with_config(sub.add_parser("explain", help="run one event and print a readable trace"))
    explain.add_argument("event", nargs="?", help="event JSON file (default: stdin)")
    explain.add_argument("--dialect", choices=DIALECT_CHOICES, default="auto")
    explain.set_defaults(func=cmd_explain)

    demo = with_config(sub.add_parser("demo", help="run the shipped sample events through the default config"))
    demo.set_defaults(func=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: int = args.func(args)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # never a traceback to the agent
        _err(f"internal error: {type(exc).__name__}: {exc}")
        return EXIT_ERROR
    return code

