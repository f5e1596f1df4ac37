"""``hookgate install HOST`` / ``hookgate uninstall HOST``: wire a host's own hook config to hookgate.

One module per host (``claude``, ``gemini``, ``codex`` with ``codex_trust``, ``kiro``), each giving the
file it edits, its hook entry and its events; ``options`` holds what they share (the command line a
hook runs, ``Options``), ``edit`` the in-place edits of a ``hooks`` block, ``files`` reading, diffing
and writing, ``plan`` the plan for one host and ``run_install`` (the CLI's entry).

HOST is ``claude``, ``kiro``, ``gemini`` or ``codex``. Every event hookgate supports on that host gets
one command hook, ``<absolute path of hookgate> run --dialect HOST`` (plus ``--config FILE`` and
``--server URL`` when given), in the host's own file and format:

==========  =====================================  =====================================================
host        project (``--project DIR``)            user level (the default)
==========  =====================================  =====================================================
claude      ``DIR/.claude/settings.json``          ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``/settings.json
gemini      ``DIR/.gemini/settings.json``          ``~/.gemini/settings.json``
codex       ``DIR/.codex/hooks.json``              ``$CODEX_HOME`` (``~/.codex``)/hooks.json
kiro        ``DIR/.kiro/agents/AGENT.json``        ``~/.kiro/agents/AGENT.json``
==========  =====================================  =====================================================

For Codex it also writes the hook trust entries (``[hooks.state."<key>"] trusted_hash``) into
``$CODEX_HOME/config.toml``, since Codex silently skips an untrusted hook (``gateway.install.codex_trust``).

Rules: other hooks in the file are left alone (install's own entries are recognized by their command:
exactly what install writes, ``is_install_command``; an event that already runs hookgate through a
hook install did not write keeps that hook and gets none of install's, with a warning); an existing
entry is updated in place, a missing one appended as a new group; a symlinked file is written through
(its target edited, the link kept); an empty ``hooks`` object or event list comes back on uninstall;
running install twice changes nothing (idempotent); every file that changes is first copied to
``<file>.hookgate-backup-<YYYYmmdd-HHMMSS>``; ``--dry-run`` prints the unified diff and writes
nothing. ``uninstall`` removes only hookgate's entries (and, for Codex, their trust entries; the trust
of hooks that move up a position is carried over). Exit codes: 0 done (or nothing to do), 1 an error
(one line on stderr; nothing written).
"""

from __future__ import annotations

from gateway.install.edit import Edit, edit_flat, edit_grouped
from gateway.install.files import FileChange, Plan, apply, diff, write_change
from gateway.install.options import (
    HOOK_TIMEOUT_S,
    InstallError,
    Options,
    check_agent_name,
    hook_command,
    hookgate_argv,
    is_hookgate_command,
    is_install_command,
)
from gateway.install.plan import host_events, plan, run_install, select_events, target_file

__all__ = [
    "HOOK_TIMEOUT_S",
    "Edit",
    "FileChange",
    "InstallError",
    "Options",
    "Plan",
    "apply",
    "check_agent_name",
    "diff",
    "edit_flat",
    "edit_grouped",
    "hook_command",
    "hookgate_argv",
    "host_events",
    "is_hookgate_command",
    "is_install_command",
    "plan",
    "run_install",
    "select_events",
    "target_file",
    "write_change",
]
