"""Tool names across hosts: one table from each host's built-in tool names to Claude Code's names.

Canonical names are Claude Code's (``Bash``, ``Write``, ``Edit``, ``Read``, ``mcp__server__tool``),
so ``matcher: "Bash"`` and ``if: "Bash(rm *)"`` written once apply to every host. A hook whose
config came from a host's own format sees (and matches) that host's names.
"""

from __future__ import annotations

# host -> {host tool name: canonical name}
HOST_TOOLS: dict[str, dict[str, str]] = {
    "claude": {},
    "kiro": {
        "execute_bash": "Bash",
        "execute_cmd": "Bash",
        "fs_write": "Write",
        "fs_read": "Read",
        "glob": "Glob",
        "grep": "Grep",
        "web_fetch": "WebFetch",
        "web_search": "WebSearch",
        "use_subagent": "Agent",
    },
}

_REVERSE: dict[str, dict[str, str]] = {
    host: {canon: name for name, canon in table.items()} for host, table in HOST_TOOLS.items()
}


def to_canonical(host: str, name: str) -> str:
    """The canonical (Claude Code) name of a host's tool; MCP names become ``mcp__server__tool``."""
    table = HOST_TOOLS.get(host, {})
    if name in table:
        return table[name]
    if host == "kiro" and name.startswith("@") and "/" in name:
        server, tool = name[1:].split("/", 1)
        return f"mcp__{server}__{tool}"
    return name


def to_host(host: str, canonical: str) -> str:
    """The host's name for a canonical tool name (the inverse of ``to_canonical``)."""
    reverse = _REVERSE.get(host, {})
    if canonical in reverse:
        return reverse[canonical]
    if host == "kiro" and canonical.startswith("mcp__"):
        parts = canonical.split("__", 2)
        if len(parts) == 3:
            return f"@{parts[1]}/{parts[2]}"
    return canonical


def is_mcp(canonical: str) -> bool:
    return canonical.startswith("mcp__")
