"""The ``install`` / ``uninstall`` subcommands' arguments (kept apart from ``gateway.install`` so that
building the CLI parser, which every ``hookgate run`` does, imports nothing more)."""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs ~2 ms to import on the hook path
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

HOSTS = ("claude", "gemini", "codex", "kiro")


def add_install_parsers(sub: Any, func: Callable[[argparse.Namespace], int]) -> None:
    """``install`` and ``uninstall`` subcommands (argparse)."""
    for action in ("install", "uninstall"):
        what = ("wire a host's hook config to 'hookgate run'" if action == "install"
                else "remove hookgate's hooks from a host's hook config")
        p = sub.add_parser(action, help=what)
        p.add_argument("host", choices=HOSTS, help="the agent: claude, gemini, codex or kiro")
        p.add_argument("--project", metavar="DIR", help="the project's config (default: the user-level config)")
        p.add_argument("--agent", metavar="NAME", help="Kiro: the agent config to edit (default: the only one, "
                                                      "else 'hookgate')")
        p.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")
        if action == "install":
            p.add_argument("--config", metavar="FILE", action="append",
                           help="pin this hookgate config (repeatable; builtin:default is the shipped policy; "
                                "validated now)")
            p.add_argument("--server", metavar="URL", help="answer through a running 'hookgate serve' (thin client)")
            p.add_argument("--events", metavar="LIST", help="comma-separated events to wire (default: every "
                                                            "event hookgate supports on HOST)")
            p.add_argument("--hookgate", metavar="PATH", help="the hookgate executable to call (default: this one)")
        p.set_defaults(func=func, action=action)
