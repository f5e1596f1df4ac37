"""``hookgate validate``: check config files (exit 0 ok, 1 errors); ``--check-servers`` also connects to
every MCP server."""

from __future__ import annotations

import os

from gateway.wire import EXIT_ERROR, EXIT_OK

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from gateway.config.specs import RuntimeConfig


def cmd_validate(args: argparse.Namespace) -> int:
    from gateway.config import find_config_paths, load_config
    from gateway.errors import ConfigError

    named = (args.paths or []) + (args.config or [])
    paths = named or [os.environ.get("HOOKGATE_CONFIG") or "the default lookup"]
    try:
        paths = find_config_paths(named or None)
        config = load_config(paths, use_cache=False, command_check=hookgate_usage)
    except ConfigError as exc:
        for warning in exc.warnings:
            print(f"warning: {warning}")
        for issue in exc.issues:
            print(f"error: {issue}")
        print(f"{len(exc.issues)} error(s) in {', '.join(paths)}")
        return EXIT_ERROR
    from gateway.approvals.checks import approval_warnings
    from handlers.llm.base import key_problems

    # handlers that cannot run, missing API keys and secrets: environment-dependent, so not config errors at
    # run time (there the handler fails: closed when it is failClosed)
    env_errors, env_warnings = environment_problems(config)
    errors = config.broken + key_problems(config) + env_errors
    from gateway.client import event_limit_problem

    limit_problem = event_limit_problem()
    env_warnings += [limit_problem] if limit_problem else []
    for warning in config.warnings + env_warnings + approval_warnings(config):
        print(f"warning: {warning}")
    if errors:
        for problem in errors:
            print(f"error: {problem}")
        print(f"{len(errors)} error(s) in {', '.join(paths)}")
        return EXIT_ERROR
    groups = sum(len(g) for g in config.hooks.values())
    print(
        f"ok: {config.handler_count()} handler(s) in {groups} group(s) on {len(config.hooks)} event(s) "
        f"from {', '.join(paths)}"
    )
    if config.guards:
        from gateway.config.guards import describe

        for line in describe(config.guards):
            print(f"guards: {line}")
    if getattr(args, "check_servers", False):
        return _check_servers(config)
    return EXIT_OK


def environment_problems(config: RuntimeConfig) -> tuple[list[str], list[str]]:
    """``(errors, warnings)``: what each handler needs from the environment and does not find
    (``Handler.environment``): an error for a ``failClosed`` handler, which would deny every call, a
    warning for the others, which would fail open."""
    from handlers.base import handler_class

    errors: list[str] = []
    warnings: list[str] = []
    for groups in config.hooks.values():
        for group in groups:
            for spec in group.handlers:
                try:
                    problems = handler_class(spec.type).environment(spec)
                except Exception:  # a type registered in another process: nothing to check here
                    continue
                where = errors if spec.fail_closed else warnings
                suffix = (
                    "; it is failClosed, so every call it checks would be denied"
                    if spec.fail_closed
                    else "; it would fail open"
                )
                where.extend(f"{spec.where}: {p}{suffix}" for p in problems)
    return errors, warnings


def _check_servers(config: RuntimeConfig) -> int:
    """``validate --check-servers``: connect to every MCP server; check each mcp_tool's tool and input."""
    import asyncio

    from handlers.mcp_check import check_servers

    if not config.mcp_servers:
        print("ok: no MCP servers configured")
        return EXIT_OK
    lines = asyncio.run(check_servers(config))
    for level, line in lines:
        print(f"{level}: {line}")
    return EXIT_ERROR if any(level == "error" for level, _ in lines) else EXIT_OK


def hookgate_usage(options: dict[str, Any]) -> tuple[list[str], list[str]]:
    """``(problems, warnings)`` of a command handler that runs hookgate (``gateway.config.hookcommand``),
    its words parsed by ``gateway.cli.parser``: a usage error (an unknown subcommand or option, a bad value: the hook
    exits 2, a block, on every call) and ``--help``/``--version`` (it answers no event: exit 0, every call
    passes) are problems; a subcommand other than ``run`` is a warning. Each line starts with ``command:``."""
    from gateway.config.hookcommand import hookgate_invocation

    found = hookgate_invocation(options)
    if found is None:
        return [], []
    env, words = found
    import contextlib
    import io

    from gateway.cli.parser import build_parser
    from gateway.errors import UsageError

    shown = " ".join(["hookgate", *words])
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            args = build_parser().parse_args(words)
    except UsageError as exc:
        return [f"command: {shown!r}: {exc}; this hook exits 2 on every call (a block)"], []
    except SystemExit:  # --help, --version: printed, exit 0
        return [
            f"command: {shown!r} prints a help or version text and answers no event (exit 0: it checks nothing)"
        ], []
    if args.command != "run":
        return [], [
            f"command: {shown!r} runs 'hookgate {args.command}', which answers no hook event "
            "(did you mean 'hookgate run'?)"
        ]
    problem = _config_problem(getattr(args, "config", None) or [], env.get("HOOKGATE_CONFIG"))
    if problem:  # the hook would find no such config and block every call
        return [f"command: {shown!r}: {problem}; this hook exits 2 on every call (a block)"], []
    return [], []


def _config_problem(configs: list[str], env_config: str | None) -> str | None:
    """What is wrong with the configs a hook command names (``--config``, else a ``HOOKGATE_CONFIG=`` it sets):
    a ``builtin:`` name other than ``builtin:default`` (in any case), or an absolute path that is not a
    file. A relative path is left alone: it is relative to where the host starts the hook."""
    from gateway.config.loading import BUILTIN_DEFAULT, config_list

    where = ""
    if not configs and env_config:
        where = "HOOKGATE_CONFIG: "
        configs = config_list(env_config)
    for config in configs:
        if config.lower().startswith("builtin:") and config != BUILTIN_DEFAULT:
            return f"{where}{config}: no such built-in config (the built-in one is {BUILTIN_DEFAULT})"
        if os.path.isabs(config) and not os.path.isfile(config):
            return f"{where or '--config '}{config}: no such file"
    return None
