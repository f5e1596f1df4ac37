"""The config package: the loaded config as plain data (``specs``: ``RuntimeConfig``, ``GroupSpec``,
``HandlerSpec``; imports nothing), finding and loading config files (``loading``: fast, cached, no
pydantic on a cache hit), the compiler that validates and normalizes them (``compiler``, public ``Compiler``), the
pydantic models and shared helpers (``schema``), hookgate's own sections (``sections``: ``mcpServers``,
``llm``, ``settings``) and the Gemini CLI form of a ``hooks`` block (``gemini``).

May import: the core (``gateway.events``, ``gateway.matching``, ``gateway.errors``), the dialect
tables, and ``handlers.base`` (the registry); never a frontend.
"""

from __future__ import annotations

from gateway.config.loading import BUILTIN_DEFAULT, default_config_path, find_config_paths, load_config
from gateway.config.specs import GroupSpec, HandlerSpec, RuntimeConfig

__all__ = [
    "BUILTIN_DEFAULT",
    "GroupSpec",
    "HandlerSpec",
    "RuntimeConfig",
    "default_config_path",
    "find_config_paths",
    "load_config",
]
