"""Tool names across hosts: one table from each host's built-in tool names to Claude Code's names.

Canonical names are Claude Code's (``Bash``, ``Write``, ``Edit``, ``Read``, ``mcp__server__tool``),
so ``matcher: "Bash"``, ``matcher: "Write|Edit"`` and ``if: "Bash(rm *)"`` written once apply to every
host. The event keeps the host's own name too (``HookEvent.host_tool_name``), and a hook whose config
came from a host's own format sees (and matches) that host's names.

canonical (Claude)   Kiro 2.x                  Gemini CLI                       Codex CLI
Bash                 execute_bash, execute_cmd run_shell_command                Bash (exec_command)
Write                fs_write                  write_file                       apply_patch (adds only)
Edit                 fs_write                  replace                          apply_patch
Read                 fs_read                   read_file, read_many_files
Glob, Grep, LS       glob, grep                glob, grep_search, list_directory
WebFetch, WebSearch  web_fetch, web_search     web_fetch, google_web_search     web_search
mcp__server__tool    @server/tool              mcp_server_tool                  mcp__server__tool

Gemini names MCP tools ``mcp_<server>_<tool>``; its BeforeTool/AfterTool payload carries
``mcp_context.server_name``, which makes the split exact (without it the first ``_`` after ``mcp_``
separates server and tool). Sources: Kiro CLI docs; Gemini CLI 0.61.0 tool declarations and
``gemini hooks migrate``; Codex CLI 0.171.0 hook payloads (see tests/e2e/HOSTS.md).
"""

from __future__ import annotations

# host -> {host tool name: canonical name}. Several host names may map to one canonical name.
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
    "gemini": {
        "run_shell_command": "Bash",
        "write_file": "Write",
        "replace": "Edit",
        "read_file": "Read",
        "read_many_files": "Read",
        "glob": "Glob",
        "grep_search": "Grep",
        "search_file_content": "Grep",  # the name before 0.20
        "list_directory": "LS",
        "web_fetch": "WebFetch",
        "google_web_search": "WebSearch",
        "write_todos": "TodoWrite",
    },
    "codex": {
        "exec_command": "Bash",
        "shell": "Bash",
        "shell_command": "Bash",
        "local_shell": "Bash",
        "apply_patch": "Edit",
        "web_search": "WebSearch",
    },
}

# host -> {canonical name: the host's name for it}, where the inverse of HOST_TOOLS is ambiguous
# or the host reports a canonical name itself (Codex says "Bash" for exec_command).
HOST_NAMES: dict[str, dict[str, str]] = {
    "kiro": {"Bash": "execute_bash", "Edit": "fs_write", "MultiEdit": "fs_write"},
    "gemini": {"Read": "read_file", "Grep": "grep_search", "MultiEdit": "replace"},
    "codex": {"Bash": "Bash", "Write": "apply_patch", "Edit": "apply_patch", "MultiEdit": "apply_patch"},
}

SHELL_TOOL = "Bash"
FILE_WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})


def _reverse(host: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, canon in HOST_TOOLS.get(host, {}).items():
        out.setdefault(canon, name)  # the first host name listed is the preferred one
    out.update(HOST_NAMES.get(host, {}))
    return out


_REVERSE: dict[str, dict[str, str]] = {host: _reverse(host) for host in HOST_TOOLS}


def to_canonical(host: str, name: str, *, mcp_server: str | None = None) -> str:
    """The canonical (Claude Code) name of a host's tool; MCP names become ``mcp__server__tool``.

    mcp_server: the MCP server's name when the host says it separately (Gemini's
    ``mcp_context.server_name``); it makes splitting Gemini's ``mcp_<server>_<tool>`` exact.
    Unknown names are returned unchanged.
    """
    table = HOST_TOOLS.get(host, {})
    if name in table:
        return table[name]
    if host == "kiro" and name.startswith("@") and "/" in name:
        server, tool = name[1:].split("/", 1)
        return f"mcp__{server}__{tool}"
    if host == "gemini" and name.startswith("mcp_") and not name.startswith("mcp__"):
        rest = name[len("mcp_") :]
        if mcp_server and rest.startswith(mcp_server + "_"):
            return f"mcp__{mcp_server}__{rest[len(mcp_server) + 1 :]}"
        server, sep, tool = rest.partition("_")
        if sep and server and tool:
            return f"mcp__{server}__{tool}"
    return name


def to_host(host: str, canonical: str) -> str:
    """The host's name for a canonical tool name (the inverse of ``to_canonical``)."""
    reverse = _REVERSE.get(host, {})
    if canonical in reverse:
        return reverse[canonical]
    if canonical.startswith("mcp__"):
        parts = canonical.split("__", 2)
        if len(parts) == 3:
            if host == "kiro":
                return f"@{parts[1]}/{parts[2]}"
            if host == "gemini":
                return f"mcp_{parts[1]}_{parts[2]}"
    return canonical


def is_mcp(canonical: str) -> bool:
    return canonical.startswith("mcp__")
