"""The ``hookgate`` argparse parser (built on every call that is not the thin client's plain ``run``).

Each subcommand's ``func`` is a ``"module:function"`` string that ``gateway.cli.main`` imports, so a
call imports only the command it runs. Standard library only.
"""

from __future__ import annotations

from gateway.wire import DIALECT_CHOICES, SERVER_DOWN_CHOICES, VERSION

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any, NoReturn


INSTALL_HOSTS = ("claude", "gemini", "codex", "kiro")


def build_parser() -> argparse.ArgumentParser:
    import argparse

    class Parser(argparse.ArgumentParser):
        """A usage error raises UsageError (``gateway.cli.main``: one line on stderr, exit 2, a block
        for the hosts: a typo in a hook command must never silently turn the policy off)."""

        def error(self, message: str) -> NoReturn:
            from gateway.errors import UsageError

            raise UsageError(f"{self.prog}: {message} (see '{self.prog} --help')")

    parser = Parser(prog="hookgate", description="A hook gateway for AI coding agents.")
    parser.add_argument("--version", action="version", version=f"hookgate {VERSION}")
    sub = parser.add_subparsers(dest="command", required=True)

    def with_config(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument(
            "--config",
            "-c",
            action="append",
            metavar="FILE",
            help="config file (repeatable; builtin:default is the shipped policy; default: "
            "$HOOKGATE_CONFIG, ./hookgate.yaml|yml|json, else builtin:default)",
        )
        return p

    run = with_config(sub.add_parser("run", help="answer one hook event read from stdin"))
    run.add_argument("--dialect", choices=DIALECT_CHOICES, default="auto", help="host format (default: auto)")
    run.add_argument(
        "--server", metavar="URL", help="forward the event to a running 'hookgate serve' (default: $HOOKGATE_SERVER)"
    )
    run.add_argument(
        "--on-server-down",
        choices=SERVER_DOWN_CHOICES,
        default=None,
        help="when the server cannot answer: dispatch in-process (fallback, the default), exit 0 "
        "(open) or exit 2 where a block holds an action back, else 1 (closed); default "
        "$HOOKGATE_ON_SERVER_DOWN or fallback",
    )
    run.set_defaults(func="gateway.cli.run:cmd_run")

    validate = with_config(sub.add_parser("validate", help="check config files; exit 0 ok, 1 errors"))
    validate.add_argument("paths", nargs="*", metavar="FILE")
    validate.add_argument(
        "--check-servers",
        action="store_true",
        help="also connect to each MCP server and check every mcp_tool's tool and input",
    )
    validate.set_defaults(func="gateway.cli.validate:cmd_validate")

    explain = with_config(
        sub.add_parser(
            "explain",
            help="run one event through the handlers that fit (it runs "
            "them, for real) and print a readable trace; --dry-run "
            "runs nothing",
            description="Runs one event through every handler that fits, for "
            "real (commands, webhooks, MCP tools, LLM checks, with "
            "their side effects), and prints why each fit, its result, "
            "the merged decision and the rendered answer. With "
            "--dry-run it only shows what would run, and runs nothing.",
        )
    )
    explain.add_argument("event", nargs="?", help="event JSON file (default: stdin)")
    explain.add_argument(
        "--dry-run", action="store_true", help="show which groups and handlers fit and would run; run nothing"
    )
    explain.add_argument("--dialect", choices=DIALECT_CHOICES, default="auto")
    explain.set_defaults(func="gateway.cli.explain:cmd_explain")

    demo = sub.add_parser("demo", help="run the shipped sample events through the built-in default config")
    demo.add_argument(
        "--config",
        "-c",
        action="append",
        metavar="FILE",
        help="use this config instead of the built-in default (repeatable)",
    )
    demo.set_defaults(func="gateway.cli.demo:cmd_demo")

    import gateway.cli.argtypes as cli_types

    serve = with_config(
        sub.add_parser("serve", help="answer hook events over HTTP (Claude Code http hooks, the thin client)")
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    serve.add_argument("--port", type=cli_types.port, default=8787, help="port (default: 8787; 0: any free port)")
    serve.add_argument(
        "--max-body",
        type=cli_types.positive_int,
        default=None,
        metavar="BYTES",
        help="event size limit (default: $HOOKGATE_MAX_EVENT_BYTES or 64 MiB); a larger event is "
        "denied (HTTP 200 with a deny/block), never let through",
    )
    serve.add_argument(
        "--reload-interval",
        type=cli_types.non_negative_seconds,
        default=1.0,
        metavar="SECONDS",
        help="how often to check the config files for changes (default: 1; 0: SIGHUP only)",
    )
    serve.add_argument(
        "--read-timeout",
        type=cli_types.positive_seconds,
        default=10.0,
        metavar="SECONDS",
        help="a request's head, then its body, must arrive within SECONDS (default: 10); a slower client's "
        "connection is closed (a slow body first gets 408), so idle or trickling connections cannot use up "
        "the server's file descriptors",
    )
    serve.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"))
    serve.add_argument(
        "--allow-host",
        action="append",
        type=cli_types.host_name,
        metavar="NAME",
        help="also accept requests whose Host header names NAME (repeatable; e.g. a local "
        "reverse proxy's name; default: only loopback names when bound to loopback)",
    )
    serve.set_defaults(func="gateway.cli.serve:cmd_serve")

    mode = with_config(sub.add_parser("mode", help="switch a gateway-wide mode (read-only) for every process"))
    mode.add_argument("mode", choices=("read-only",), help="the mode (read-only: the readOnly built-in denies writes)")
    mode.add_argument("state", choices=("on", "off", "status"), help="switch it on or off, or show it")
    mode.set_defaults(func="gateway.cli.mode:cmd_mode")

    # `hookgate audit ...` has its own parser (gateway.cli.audit): `hookgate run` does not pay for building it
    audit = sub.add_parser("audit", help="read the audit trail: tail, query, export, verify, stats", add_help=False)
    audit.add_argument("--help", "-h", dest="audit_help", action="store_true")
    audit.add_argument("words", nargs=argparse.REMAINDER)
    audit.set_defaults(func="gateway.cli.audit:cmd_audit")

    add_install_parsers(sub, "gateway.cli.install:cmd_install")
    add_store_parsers(sub, with_config)
    add_approvals_parser(sub, with_config)
    return parser


def add_store_parsers(sub: Any, with_config: Any) -> None:
    """``store migrate`` and ``store status`` (``gateway.cli.store``)."""
    store = sub.add_parser("store", help="the state store: apply schema migrations, show version and row counts")
    actions = store.add_subparsers(dest="store_command", required=True)
    migrate = with_config(
        actions.add_parser(
            "migrate", help="apply pending schema migrations (safe to run from several replicas at once)"
        )
    )
    migrate.set_defaults(func="gateway.cli.store:cmd_migrate")
    status = with_config(
        actions.add_parser(
            "status",
            help="the store, its schema version and rows per table; exit 1 when the schema is older than this hookgate",
        )
    )
    status.add_argument("--json", action="store_true", help="print one JSON object")
    status.set_defaults(func="gateway.cli.store:cmd_status")


def add_install_parsers(sub: Any, func: str) -> None:
    """``install`` and ``uninstall`` subcommands (argparse)."""
    for action in ("install", "uninstall"):
        what = (
            "wire a host's hook config to 'hookgate run'"
            if action == "install"
            else "remove hookgate's hooks from a host's hook config"
        )
        p = sub.add_parser(action, help=what)
        p.add_argument("host", choices=INSTALL_HOSTS, help="the agent: claude, gemini, codex or kiro")
        p.add_argument("--project", metavar="DIR", help="the project's config (default: the user-level config)")
        p.add_argument(
            "--agent", metavar="NAME", help="Kiro: the agent config to edit (default: the only one, else 'hookgate')"
        )
        p.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")
        if action == "install":
            p.add_argument(
                "--config",
                metavar="FILE",
                action="append",
                help="pin this hookgate config (repeatable; builtin:default is the shipped policy; validated now)",
            )
            p.add_argument("--server", metavar="URL", help="answer through a running 'hookgate serve' (thin client)")
            p.add_argument(
                "--events",
                metavar="LIST",
                help="comma-separated events to wire (default: every event hookgate supports on HOST)",
            )
            p.add_argument("--hookgate", metavar="PATH", help="the hookgate executable to call (default: this one)")
        p.set_defaults(func=func, action=action)


def add_approvals_parser(sub: Any, add_config: Callable[[argparse.ArgumentParser], argparse.ArgumentParser]) -> None:
    """The ``approvals`` subcommand and its actions on ``sub`` (argparse sub-parsers; ``add_config``
    adds ``--config``)."""
    import gateway.cli.argtypes as cli_types

    statuses = ("pending", "approved", "rejected", "expired", "cancelled")  # gateway.approvals.record.STATUSES
    top = sub.add_parser("approvals", help="list and answer approval requests (the approval handler's inbox)")
    actions = top.add_subparsers(dest="approvals_action", required=True)
    listing = add_config(actions.add_parser("list", help="requests, newest first"))
    listing.add_argument("--json", action="store_true", help="a JSON array of request objects")
    listing.add_argument("--status", choices=statuses, help="only requests in this state")
    listing.add_argument("--limit", type=cli_types.positive_int, default=50, help="at most this many (default: 50)")
    show = add_config(actions.add_parser("show", help="one request in full"))
    show.add_argument("id")
    show.add_argument("--json", action="store_true")
    for name, what in (("approve", "approve a pending request"), ("reject", "reject a pending request")):
        p = add_config(actions.add_parser(name, help=what))
        p.add_argument("id")
        p.add_argument("--reason", help="why (shown to the agent and on the channel message)")
    top.set_defaults(func="gateway.cli.approvals:cmd_approvals")
