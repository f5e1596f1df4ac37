"""What ``hookgate run``, ``hookgate serve`` and the stdlib-only thin client (``gateway.client``) agree on:
exit codes, size limits, media types and header names. This module imports nothing, so the thin client
still loads alone (``python3 -I -S gateway/client.py`` finds it beside itself).
"""

VERSION = "0.1.0"
"""hookgate's version (``gateway.__version__``, ``hookgate --version``, ``/healthz``, the MCP client info)."""

EXIT_OK = 0
"""The answer is on stdout (or there is nothing to say)."""
EXIT_ERROR = 1
"""A malformed event, a usage error or an internal error: non-blocking, the host goes on."""
EXIT_BLOCK = 2
"""Deny/block: the reason on stderr (and the JSON answer on stdout)."""

MAX_EVENT_BYTES = 64 * 1024 * 1024
"""Default size limit of an event (bytes); ``HOOKGATE_MAX_EVENT_BYTES`` overrides it (``gateway.client.
event_limit``), and so does ``hookgate serve --max-body``. An event over the limit is denied, never let
through (``gateway.oversize``)."""

RENDERED = "application/vnd.hookgate.rendered"
"""``Accept`` value (and answer media type) of the compact answer the thin client reads."""
VENDOR_TYPE_PREFIX = "application/vnd.hookgate"
"""Media types the server accepts besides ``application/json``."""
EXIT_CODE_HEADER = "hookgate-exit-code"
"""Compact answer: the exit code ``hookgate run`` would give."""
STDOUT_LENGTH_HEADER = "hookgate-stdout-length"
"""Compact answer: how many bytes of the body are stdout (the rest is stderr)."""
PROJECT_DIR_HEADER = "X-Hookgate-Project-Dir"
"""Request header carrying the caller's ``CLAUDE_PROJECT_DIR`` (percent-encoded UTF-8)."""

DIALECT_CHOICES = ("auto", "claude", "kiro", "gemini", "codex")
"""``--dialect`` values (``auto`` detects the host from the event)."""
SERVER_DOWN_CHOICES = ("fallback", "open", "closed")
"""``--on-server-down`` values."""


def default_state_dir() -> str:
    """Where ``hookgate run`` spools audit records and ``hookgate serve`` drains them when ``settings.stateDir``
    is not set: ``$XDG_STATE_HOME/hookgate``, else ``~/.local/state/hookgate`` (``gateway.store`` re-exports
    it; here so the hook path's audit step does not import the store package)."""
    import os  # here: this module imports nothing at load time

    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "hookgate")
