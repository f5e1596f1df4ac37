"""``hookgate`` command line: run, validate, explain, demo, serve, install, uninstall, mode, audit.

One small module per command group (``gateway.cli.run``, ``validate``, ``explain``, ``serve``, ``demo``, ``mode``,
``install``, ``audit``); ``gateway.cli.parser`` builds the argparse parser and names each command's function as a
``module:function`` string, so a call imports only the command it runs.

Exit codes of ``hookgate run`` (what the host sees):
0 the answer is on stdout (or nothing to say); 2 deny/block (reason on stderr, JSON on stdout), or an
invalid config on an event where a block holds an action back (see ``gateway.cli.run.config_error_exit``);
1 a malformed event or an internal error (non-blocking: the host goes on), unless the event has a
``failClosed`` handler (see ``gateway.dispatcher.internal_failure``). A usage error of any ``hookgate``
command (an unknown subcommand or option, a bad value: ``gateway.errors.UsageError``) exits 2, so a typo
in a hook command blocks (fails closed) instead of silently turning the policy off; ``--help`` and
``--version`` exit 0. Every error is one line on stderr; no traceback reaches the agent.

``hookgate run --server URL`` (or ``HOOKGATE_SERVER``) is the thin client: ``main`` hands it to
``gateway.client`` before argparse or anything else is imported, so the call costs little more than the
interpreter start. When the server cannot be reached it dispatches in-process (default) or fails
open/closed (``--on-server-down``, ``HOOKGATE_ON_SERVER_DOWN``).
"""

from __future__ import annotations

import os
import sys

from gateway.client import emit, event_limit, event_limit_problem, read_event
from gateway.errors import ConfigError, UsageError
from gateway.wire import DIALECT_CHOICES, EXIT_BLOCK, EXIT_ERROR, EXIT_OK, SERVER_DOWN_CHOICES

RUN_COMMAND = "gateway.cli.run"
"""The module of ``hookgate run`` (imported by name, as the parser's commands are: it imports this package)."""


def _err(message: str) -> None:
    sys.stderr.write(f"hookgate: {message}\n")


def _warn_bad_limit() -> None:
    """``hookgate run`` with a ``HOOKGATE_MAX_EVENT_BYTES`` that is not a positive integer: one warning line
    on stderr, and the default limit applies (an unreadable limit never lets a bigger event through)."""
    problem = event_limit_problem()
    if problem is not None:
        _err(f"warning: {problem}")


def _run_via_server(server: str, dialect: str, on_down: str | None) -> tuple[int, bytes | None]:
    """The thin client: ``(exit_code, None)`` when answered, else ``(0, stdin bytes)`` to dispatch here."""
    from gateway.client import forward, on_server_down
    from gateway.errors import ServerUnavailable

    data = read_event()
    if len(data) > event_limit():
        return EXIT_OK, data  # over the limit: judged in-process (a deny), never forwarded cut short
    try:
        return emit(
            *forward(
                server,
                data,
                dialect=dialect,
                token=os.environ.get("HOOKGATE_TOKEN"),
                project_dir=os.environ.get("CLAUDE_PROJECT_DIR"),
            )
        ), None
    except ServerUnavailable as exc:
        policy = on_down or os.environ.get("HOOKGATE_ON_SERVER_DOWN") or "fallback"
        if policy not in SERVER_DOWN_CHOICES:  # only the variable can hold another word (argparse checks the option)
            _err(f"warning: HOOKGATE_ON_SERVER_DOWN={policy[:40]!r} is not fallback, open or closed; using fallback")
            policy = "fallback"
        answer = on_server_down(server, exc, data, dialect=dialect, policy=policy)  # None: fallback
        return (emit(*answer), None) if answer is not None else (EXIT_OK, data)


class RunArgs:
    """The arguments of a plain ``hookgate run``, as argparse would have parsed them (``_plain_run_args``)."""

    __slots__ = ("config", "dialect", "on_server_down", "preread", "server")

    def __init__(self, config: list[str] | None, dialect: str, server: str | None, on_server_down: str | None) -> None:
        self.config = config
        self.dialect = dialect
        self.server = server
        self.on_server_down = on_server_down
        self.preread: bytes | None = None


def _plain_run_args(argv: list[str]) -> RunArgs | None:
    """The arguments of ``argv`` when it is a plain ``run`` (only ``--config``/``-c``, ``--dialect``,
    ``--server``, ``--on-server-down``, with valid values), else None.

    Lets ``main`` answer a hook event without building the argparse parser (argparse, shutil, gettext
    and the parser cost ~8 ms of a ~20 ms hook call). Anything unusual (``--help``, a typo, a bad
    choice) returns None and goes through argparse, which explains it.
    """
    if argv[:1] != ["run"]:
        return None
    values: dict[str, str | None] = {"--server": None, "--dialect": "auto", "--on-server-down": None}
    configs: list[str] = []
    words = argv[1:]
    i = 0
    while i < len(words):
        word = words[i]
        name, eq, value = word.partition("=")
        if name.startswith("-c") and not name.startswith("--") and len(word) > 2:
            name, eq, value = "-c", "=", word[2:]  # -cFILE
        if name in ("--config", "-c"):
            name = "--config"
        elif name not in values:
            return None
        if not eq:
            if i + 1 >= len(words):
                return None
            i, value = i + 1, words[i + 1]
        if name == "--config":
            configs.append(value)
        else:
            values[name] = value
        i += 1
    dialect, on_down = values["--dialect"] or "auto", values["--on-server-down"]
    if dialect not in DIALECT_CHOICES or (on_down is not None and on_down not in SERVER_DOWN_CHOICES):
        return None
    return RunArgs(configs or None, dialect, values["--server"], on_down)


HOOK_GC_THRESHOLD = 100_000
"""``hookgate run``'s first-generation threshold of the cyclic garbage collector (Python's default: 700)."""


def _few_collections() -> None:
    """A hook process allocates its imports and one event's objects and exits: with the default threshold
    the collector walks the young objects about a hundred times on the way (about 1 ms of CPU, 4% of a
    call) to free nearly nothing. Raised, not disabled: a long handler (an LLM call, an MCP session) still
    gets its cyclic garbage collected."""
    import gc

    gc.set_threshold(HOOK_GC_THRESHOLD, *gc.get_threshold()[1:])


_OURS = frozenset({"gateway", "handlers", "configs"})


def exit_hook(code: int, startup: set[str] | frozenset[str] = frozenset()) -> None:
    """End a ``hookgate run`` process with ``code`` without the interpreter's teardown, when nothing needs it.

    Tearing the interpreter down (clearing every module, freeing every object, a last full collection)
    costs about 5 ms of CPU, a fifth of a hook call, after the answer is already written. It is skipped
    (``os._exit``) only when every module imported since ``startup`` (the names in ``sys.modules`` when the
    script began) is the standard library's or hookgate's own, so no other code ran that might count on
    it (an SDK, a user's ``python`` handler, a class hook: then Python exits as usual), and no other
    thread is alive. ``atexit`` functions still run and stdout and stderr are flushed first; when a flush
    fails this returns and the usual exit reports it. Called by the ``hookgate`` script and ``python -m
    gateway`` after ``main`` returns for a plain ``run``; returns when it does not exit."""
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return
    stdlib = sys.stdlib_module_names
    for name in list(sys.modules):
        top = name.partition(".")[0]
        if top not in stdlib and top not in _OURS and name not in startup:
            return
    import atexit

    atexit._run_exitfuncs()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:  # None: the process was started without that descriptor
                stream.flush()
    except (OSError, ValueError):
        return
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    try:
        run = _plain_run_args(words)
        if run is not None:  # the hook path: no argparse
            _few_collections()
            _warn_bad_limit()
            server = run.server or os.environ.get("HOOKGATE_SERVER")
            if server:  # the thin client
                status, run.preread = _run_via_server(server, run.dialect, run.on_server_down)
                if run.preread is None:
                    return status
            status = __import__(RUN_COMMAND, fromlist=["cmd_run"]).cmd_run(run)
            return int(status)
        from gateway.cli.parser import build_parser

        args = build_parser().parse_args(words)
        args.preread = None
        if args.command == "run":
            _warn_bad_limit()
        module, _, name = args.func.partition(":")  # "gateway.cli.run:cmd_run": import only that command
        code: int = getattr(__import__(module, fromlist=[name]), name)(args)
    except KeyboardInterrupt:
        return 130
    except UsageError as exc:  # a typo in a hook command: exit 2 blocks where a block holds an action back
        sys.stderr.write(f"{exc}\n")
        return EXIT_BLOCK
    except ConfigError as exc:  # a command that loads a config it cannot find or read (`run` answers its own)
        _err(f"invalid config: {exc}")
        return EXIT_ERROR
    except BrokenPipeError:  # `hookgate demo | head`: the reader left; nothing more to say
        from gateway.client import _silence_stdout

        _silence_stdout()
        return EXIT_OK
    except Exception as exc:  # never a traceback to the agent
        _err(f"internal error: {type(exc).__name__}: {exc}")
        return EXIT_ERROR
    return code
