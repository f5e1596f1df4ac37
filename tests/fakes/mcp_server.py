"""A real MCP server (the ``mcp`` SDK's MCPServer) with tools that exercise the ``mcp_tool`` handler.

Run over stdio: ``python tests/fakes/mcp_server.py``; serve over streamable HTTP in-process with
``build_server().streamable_http_app()`` (see ``tests/integration/test_mcp_tool.py``).

Environment (stdio): ``FAKE_MCP_START_DELAY`` seconds to sleep before serving (a slow start);
``FAKE_MCP_PID_FILE`` a file to write the server's pid to; ``FAKE_MCP_GREETING`` echoed by ``whoami``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Literal

if __name__ == "__main__":  # before the heavy imports, so a test can find a server killed while starting
    if os.environ.get("FAKE_MCP_PID_FILE"):
        with open(os.environ["FAKE_MCP_PID_FILE"], "w", encoding="utf-8") as _fh:
            _fh.write(str(os.getpid()))
    time.sleep(float(os.environ.get("FAKE_MCP_START_DELAY") or 0))

from typing import NotRequired

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent
from typing_extensions import TypedDict


class Specific(TypedDict):
    hookEventName: str
    permissionDecision: NotRequired[Literal["allow", "deny", "ask", "defer"]]
    permissionDecisionReason: NotRequired[str]
    additionalContext: NotRequired[str]


class Answer(TypedDict, total=False):
    hookSpecificOutput: Specific
    decision: Literal["block"]
    reason: str


_in_flight = 0


def build_server() -> MCPServer:
    server = MCPServer("fake-validators", log_level="WARNING")

    @server.tool()
    def deny(reason: str = "denied by the fake validator", event: str = "PreToolUse") -> Answer:
        """Structured deny."""
        return {
            "hookSpecificOutput": {
                "hookEventName": event,
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }

    @server.tool()
    def allow(event: str = "PreToolUse") -> Answer:
        """Structured allow."""
        return {"hookSpecificOutput": {"hookEventName": event, "permissionDecision": "allow"}}

    @server.tool()
    def nothing() -> Answer:
        """No objection: {}."""
        return {}

    @server.tool(structured_output=False)
    def text_answer(text: str) -> str:
        """Text content only (no structured content): read like a command's stdout."""
        return text

    @server.tool()
    def wrapped_text(text: str) -> str:
        """A str return: the SDK sends structured {"result": text} plus the text."""
        return text

    @server.tool()
    def echo(value: Any = None, label: str = "") -> Answer:
        """Echo the arguments as JSON in additionalContext (to check what hookgate sent)."""
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "additionalContext": json.dumps({"value": value, "label": label}, sort_keys=True),
            }
        }

    @server.tool()
    def whoami() -> Answer:
        """The server's pid in additionalContext."""
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "additionalContext": f"pid={os.getpid()} {os.environ.get('FAKE_MCP_GREETING', '')}",
            }
        }

    @server.tool()
    def fail() -> str:
        """Raises: the SDK answers isError: true."""
        raise ValueError("the fake validator failed on purpose")

    @server.tool()
    def refuse(reason: str = "Denied by the fake policy:\n  /etc/passwd is outside the project") -> str:
        """Fails on purpose with its own text (a ToolError: the SDK passes the text on, isError: true)."""
        from mcp.server.mcpserver.exceptions import ToolError

        raise ToolError(reason)

    @server.tool()
    async def hang() -> str:
        """Never answers."""
        await anyio.sleep(3600)
        return "unreachable"

    @server.tool()
    async def pause(seconds: float = 0.5) -> Answer:
        """Answers after ``seconds``, with the server's pid in additionalContext (keeps a session busy)."""
        await anyio.sleep(seconds)
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": f"pid={os.getpid()}"}}

    @server.tool()
    def split_answer(structured: dict[str, Any], text: str) -> CallToolResult:
        """Answers with ``structured`` as structuredContent and ``text`` as the text content (which MCP
        says should agree; this one need not)."""
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)

    @server.tool()
    def crash() -> str:
        """Exits the process mid-call, after a last word on stderr."""
        sys.stderr.write("fake validator: fatal: crash requested\n")
        sys.stderr.flush()
        os._exit(3)

    @server.tool()
    async def barrier(n: int) -> Answer:
        """Answers only once ``n`` calls are in flight at the same time (proves calls are concurrent)."""
        global _in_flight
        _in_flight += 1
        try:
            with anyio.fail_after(10):
                while _in_flight < n:
                    await anyio.sleep(0.01)
            await anyio.sleep(0.05)  # let the others see the count too
        finally:
            _in_flight -= 1
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": f"met {n}"}}

    @server.tool()
    def check_args(command: str, count: int = 1) -> Answer:
        """A tool with a typed input schema (for validate --check-servers)."""
        return {}

    return server


def main() -> None:
    build_server().run("stdio")


if __name__ == "__main__":
    main()
