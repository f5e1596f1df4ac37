"""Handler types: ``command``, ``http``, ``mcp_tool`` (deterministic) and ``prompt``, ``agent`` (LLM
judgment). Each lives in its own module and is imported only when a handler of that type runs."""
