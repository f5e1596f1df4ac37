"""``hookgate`` command line: run, validate, explain, demo, serve.

Exit codes of ``hookgate run`` (what the host sees):
0 the answer is on stdout (or nothing to say); 2 deny/block (reason on stderr, JSON on stdout), or an
invalid config on an event where a block holds an action back (see ``config_error_exit``); 1 a
malformed event, a usage error, or an internal error (non-blocking: the host goes on), unless the
event has a ``failClosed`` handler (see ``internal_failure``). Every error is one line on stderr; no
traceback reaches the agent.

``hookgate run --server URL`` (or ``HOOKGATE_SERVER``) is the thin client: ``main`` hands it to
``gateway.client`` before argparse or anything else is imported, so the call costs little more than the
interpreter start. When the server cannot be reached it dispatches in-process (default) or fails
open/closed (``--on-server-down``, ``HOOKGATE_ON_SERVER_DOWN``).
"""

from __future__ import annotations

import os
import sys

from gateway.client import emit, read_event

TYPE_CHECKING = False  # typing costs ~2 ms to import; the thin client path must not pay it
if TYPE_CHECKING:
    import argparse
    from typing import NoReturn

    from gateway.config import RuntimeConfig
    from gateway.decision import Decision, HandlerResult
    from gateway.dispatcher import Trace
    from gateway.events import HookEvent

DIALECT_CHOICES = ("auto", "claude", "kiro", "gemini", "codex")
SERVER_DOWN_CHOICES = ("fallback", "open", "closed")
EXIT_OK, EXIT_ERROR, EXIT_BLOCK = 0, 1, 2


def _err(message: str) -> None:
    sys.stderr.write(f"hookgate: {message}\n")


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


def _run_via_server(server: str, dialect: str, on_down: str | None) -> tuple[int, bytes | None]:
    """The thin client: ``(exit_code, None)`` when answered, else ``(0, stdin bytes)`` to dispatch here."""
    from gateway.client import forward, on_server_down
    from gateway.errors import ServerUnavailable

    data = read_event()
    try:
        return emit(*forward(server, data, dialect=dialect, token=os.environ.get("HOOKGATE_TOKEN"),
                             project_dir=os.environ.get("CLAUDE_PROJECT_DIR"))), None
    except ServerUnavailable as exc:
        policy = on_down or os.environ.get("HOOKGATE_ON_SERVER_DOWN") or "fallback"
        answer = on_server_down(server, exc, data, dialect=dialect, policy=policy)  # None: fallback
        return (emit(*answer), None) if answer is not None else (EXIT_OK, data)


def _thin_client_args(argv: list[str]) -> tuple[str, str, str | None] | None:
    """``(server, dialect, on_server_down)`` when ``argv`` is a plain ``run`` with a server, else None.

    Lets ``main`` forward the event without building the argparse parser (argparse, shutil, gettext
    and the parser cost ~5 ms). Anything unusual returns None and goes through argparse as usual.
    """
    if argv[:1] != ["run"]:
        return None
    values: dict[str, str | None] = {"--server": None, "--dialect": "auto", "--on-server-down": None}
    words = argv[1:]
    i = 0
    while i < len(words):
        name, eq, value = words[i].partition("=")
        if name in ("--config", "-c") or (name.startswith("-c") and not name.startswith("--")):
            # --config F, --config=F, -c F, -cF: read only by the in-process fallback (argparse, later)
            i += 2 if name in ("--config", "-c") and not eq else 1
            continue
        if name not in values:
            return None
        if not eq:
            if i + 1 >= len(words):
                return None
            i, value = i + 1, words[i + 1]
        values[name] = value
        i += 1
    server = values["--server"] or os.environ.get("HOOKGATE_SERVER")
    dialect, on_down = values["--dialect"] or "auto", values["--on-server-down"]
    if not server or dialect not in DIALECT_CHOICES or (on_down is not None and on_down not in SERVER_DOWN_CHOICES):
        return None
    return server, dialect, on_down


def cmd_run(args: argparse.Namespace) -> int:
    from gateway.errors import ConfigError, EventError

    data: bytes | None = getattr(args, "preread", None)  # the thin client's fallback: stdin already read
    server = args.server or os.environ.get("HOOKGATE_SERVER")
    if data is None and server:
        code, data = _run_via_server(server, args.dialect, args.on_server_down)
        if data is None:
            return code
    if data is None:
        data = read_event()
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


def cmd_validate(args: argparse.Namespace) -> int:
    from gateway.config import find_config_paths, load_config
    from gateway.errors import ConfigError

    paths = find_config_paths((args.paths or []) + (args.config or []) or None)
    try:
        config = load_config(paths, use_cache=False)
    except ConfigError as exc:
        for warning in exc.warnings:
            print(f"warning: {warning}")
        for issue in exc.issues:
            print(f"error: {issue}")
        print(f"{len(exc.issues)} error(s) in {', '.join(paths)}")
        return EXIT_ERROR
    from handlers.llm.base import key_problems

    # handlers that cannot run, and missing API keys: environment-dependent, so not config errors at run time
    errors = config.broken + key_problems(config)
    if errors:
        for warning in config.warnings:
            print(f"warning: {warning}")
        for problem in errors:
            print(f"error: {problem}")
        print(f"{len(errors)} error(s) in {', '.join(paths)}")
        return EXIT_ERROR
    for warning in config.warnings:
        print(f"warning: {warning}")
    groups = sum(len(g) for g in config.hooks.values())
    print(f"ok: {config.handler_count()} handler(s) in {groups} group(s) on {len(config.hooks)} event(s) "
          f"from {', '.join(paths)}")
    if getattr(args, "check_servers", False):
        return _check_servers(config)
    return EXIT_OK


def _check_servers(config: RuntimeConfig) -> int:
    """``validate --check-servers``: connect to every MCP server; check each mcp_tool's tool and input."""
    import asyncio

    from handlers.mcp_sessions import check_servers

    if not config.mcp_servers:
        print("ok: no MCP servers configured")
        return EXIT_OK
    lines = asyncio.run(check_servers(config))
    for level, line in lines:
        print(f"{level}: {line}")
    return EXIT_ERROR if any(level == "error" for level, _ in lines) else EXIT_OK


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
        if getattr(exc, "answer", None) is not None:  # dialects.PassThrough
            print(f"passed through: {exc}")
            return EXIT_OK
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
        if result.meta:
            print(f"    meta: {json.dumps(result.meta, ensure_ascii=False, default=str)}")
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


def cmd_serve(args: argparse.Namespace) -> int:
    from gateway.config import find_config_paths
    from gateway.errors import ConfigError
    from gateway.server import serve

    try:
        return serve(find_config_paths(args.config), host=args.host, port=args.port, max_body=args.max_body,
                     reload_interval=args.reload_interval, log_level=args.log_level, allow_hosts=args.allow_host)
    except ConfigError as exc:
        more = f" (and {len(exc.issues) - 1} more; run 'hookgate validate')" if len(exc.issues) > 1 else ""
        _err(f"invalid config: {exc.issues[0]}{more}")
        return EXIT_ERROR
    except OSError as exc:
        _err(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
        return EXIT_ERROR


def cmd_install(args: argparse.Namespace) -> int:
    from gateway.install import run_install

    return run_install(args)


def build_parser() -> argparse.ArgumentParser:
    import argparse

    class Parser(argparse.ArgumentParser):
        """Usage errors are one line and exit 1: a typo in a hook command must not block every call."""

        def error(self, message: str) -> NoReturn:
            self.exit(EXIT_ERROR, f"{self.prog}: {message} (see '{self.prog} --help')\n")

    parser = Parser(prog="hookgate", description="A hook gateway for AI coding agents.")
    parser.add_argument("--version", action="version", version="hookgate 0.1.0")
    sub = parser.add_subparsers(dest="command", required=True)

    def with_config(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument("--config", "-c", action="append", metavar="FILE",
                       help="config file (repeatable; builtin:default is the shipped policy; default: "
                            "$HOOKGATE_CONFIG, ./hookgate.yaml|yml|json, else builtin:default)")
        return p

    run = with_config(sub.add_parser("run", help="answer one hook event read from stdin"))
    run.add_argument("--dialect", choices=DIALECT_CHOICES, default="auto", help="host format (default: auto)")
    run.add_argument("--server", metavar="URL", help="forward the event to a running 'hookgate serve' "
                     "(default: $HOOKGATE_SERVER)")
    run.add_argument("--on-server-down", choices=SERVER_DOWN_CHOICES, default=None,
                     help="when the server cannot answer: dispatch in-process (fallback, the default), exit 0 "
                          "(open) or exit 2 where a block holds an action back, else 1 (closed); default "
                          "$HOOKGATE_ON_SERVER_DOWN or fallback")
    run.set_defaults(func=cmd_run)

    validate = with_config(sub.add_parser("validate", help="check config files; exit 0 ok, 1 errors"))
    validate.add_argument("paths", nargs="*", metavar="FILE")
    validate.add_argument("--check-servers", action="store_true",
                          help="also connect to each MCP server and check every mcp_tool's tool and input")
    validate.set_defaults(func=cmd_validate)

    explain = with_config(sub.add_parser("explain", help="run one event and print a readable trace"))
    explain.add_argument("event", nargs="?", help="event JSON file (default: stdin)")
    explain.add_argument("--dialect", choices=DIALECT_CHOICES, default="auto")
    explain.set_defaults(func=cmd_explain)

    demo = sub.add_parser("demo", help="run the shipped sample events through the built-in default config")
    demo.add_argument("--config", "-c", action="append", metavar="FILE",
                      help="use this config instead of the built-in default (repeatable)")
    demo.set_defaults(func=cmd_demo)

    from gateway import cli_types

    serve = with_config(sub.add_parser("serve", help="answer hook events over HTTP (Claude Code http hooks, "
                                                     "the thin client)"))
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    serve.add_argument("--port", type=cli_types.port, default=8787, help="port (default: 8787; 0: any free port)")
    serve.add_argument("--max-body", type=cli_types.positive_int, default=10 * 1024 * 1024, metavar="BYTES",
                       help="largest request body accepted (default: 10 MiB; larger: 413)")
    serve.add_argument("--reload-interval", type=cli_types.non_negative_seconds, default=1.0, metavar="SECONDS",
                       help="how often to check the config files for changes (default: 1; 0: SIGHUP only)")
    serve.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"))
    serve.add_argument("--allow-host", action="append", metavar="NAME",
                       help="also accept requests whose Host header names NAME (repeatable; e.g. a local "
                            "reverse proxy's name; default: only loopback names when bound to loopback)")
    serve.set_defaults(func=cmd_serve)

    from gateway.install_args import add_install_parsers

    add_install_parsers(sub, cmd_install)
    return parser


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    try:
        preread: bytes | None = None
        thin = _thin_client_args(words)
        if thin is not None:
            status, preread = _run_via_server(*thin)
            if preread is None:
                return status
        args = build_parser().parse_args(words)
        args.preread = preread
        code: int = args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `hookgate demo | head`: the reader left; nothing more to say
        from gateway.client import _silence_stdout

        _silence_stdout()
        return EXIT_OK
    except Exception as exc:  # never a traceback to the agent
        _err(f"internal error: {type(exc).__name__}: {exc}")
        return EXIT_ERROR
    return code

