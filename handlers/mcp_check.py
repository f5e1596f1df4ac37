"""``hookgate validate --check-servers``: connect to every configured MCP server and check each
``mcp_tool`` handler's tool and ``input`` against the server's own tool list."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from gateway.errors import HandlerError
from handlers.mcp_sessions import McpSessions
from handlers.mcp_tool import input_problems

if TYPE_CHECKING:
    from mcp.types import Tool

    from gateway.config.specs import HandlerSpec, RuntimeConfig


async def check_servers(config: RuntimeConfig) -> list[tuple[str, str]]:
    """Connect to every configured server; check every ``mcp_tool`` handler's tool and ``input``.

    Returns ``(level, line)`` pairs, level ``ok`` | ``warning`` | ``error``. A server that cannot be
    reached is an error when a handler uses it, else a warning.
    """
    refs: dict[str, list[HandlerSpec]] = {}
    for groups in config.hooks.values():
        for group in groups:
            for spec in group.handlers:
                if spec.type == "mcp_tool":
                    refs.setdefault(spec.options["server"], []).append(spec)
    manager = McpSessions(config.mcp_servers, mode="api")
    loop = asyncio.get_running_loop()

    async def probe(name: str) -> tuple[str, list[Tool] | None, str, float]:
        started = time.perf_counter()
        budget = float(config.mcp_servers[name].get("start_timeout") or 30.0)
        try:
            async with asyncio.timeout(budget + 5.0):
                tools = await manager.list_tools(name, deadline=loop.time() + budget)
        except TimeoutError:
            return name, None, f"no answer within {budget + 5.0:g} s", time.perf_counter() - started
        except HandlerError as exc:
            return name, None, str(exc), time.perf_counter() - started
        return name, tools, "", time.perf_counter() - started

    try:
        probes = await asyncio.gather(*(probe(n) for n in sorted(config.mcp_servers)))
    finally:
        await manager.aclose()
    lines: list[tuple[str, str]] = []
    for name, tools, error, seconds in probes:
        server = config.mcp_servers[name]
        label = f"{server.get('where') or name} ({server['type']})"
        if tools is None:
            lines.append(("error" if name in refs else "warning", f"{label}: cannot connect: {error}"))
            continue
        lines.append(("ok", f"{label}: {len(tools)} tool(s) in {seconds * 1000:.0f} ms"))
        by_name = {t.name: t for t in tools}
        for spec in refs.get(name, []):
            tool = spec.options["tool"]
            if tool not in by_name:
                import difflib

                close = difflib.get_close_matches(tool, list(by_name), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                lines.append(
                    (
                        "error",
                        f"{spec.where}.tool: MCP server {name!r} has no tool {tool!r}{hint}; "
                        f"it has: {', '.join(sorted(by_name)) or 'no tools'}",
                    )
                )
                continue
            for problem in input_problems(spec.options.get("input") or {}, by_name[tool].input_schema):
                lines.append(("error", f"{spec.where}.{problem}"))
    return lines
