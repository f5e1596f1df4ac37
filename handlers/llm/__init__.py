"""LLM plumbing for the judgment handlers (``prompt``, ``agent``): provider settings and clients
(``base``), the Anthropic and OpenAI adapters (imported only when a judgment handler runs), the
verdict schema and its tolerant parser (``verdict``), the event transcript reader (``transcript``)
and the read-only, cwd-confined tools of the ``agent`` handler (``sandbox``)."""
