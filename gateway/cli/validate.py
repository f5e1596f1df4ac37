"""``hookgate validate``: check config files (exit 0 ok, 1 errors); ``--check-servers`` also connects to
every MCP server."""

from __future__ import annotations

from gateway.cli import EXIT_ERROR, EXIT_OK

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from gateway.config import RuntimeConfig


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
