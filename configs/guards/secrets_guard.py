"""hookgate default policy: block writes to secrets files and to the agent's own hook configuration (PreToolUse).

Denies writes to ``.env`` / ``.envrc`` files, private keys, certificate stores, SSH and GnuPG
directories and credential stores, with a reason the user understands. Path matching is
case-insensitive. Templates stay writable: a name ending in ``.example``, ``.sample``, ``.template``,
``.tmpl``, ``.tpl``, ``.dist`` or ``.default(s)``, and an ``.env.*`` file with one of those words
among its parts (``.env.local.example``, ``.env.example.bak``). Reading is never blocked.

Also denied, so that the agent cannot switch its own guard rails off (``config_kind``): writes to a hookgate
config (``hookgate.yaml``/``.yml``/``.json`` anywhere), Claude Code settings (``.claude/settings.json``,
``.claude/settings.local.json``, ``~/.claude/settings.json``, files under ``.claude/hooks/``), Kiro agent
configs (``.kiro/agents/*.json``), Gemini settings (``.gemini/settings.json``), Codex (``.codex/hooks.json``,
``.codex/config.toml``, anything under ``~/.codex`` or ``$CODEX_HOME``) and hookgate's own cache and state
(``~/.cache/hookgate``, ``$XDG_CACHE_HOME/hookgate``, ``$HOOKGATE_CACHE_DIR``, ``~/.local/state/hookgate``,
``$XDG_STATE_HOME/hookgate``), and the installed hookgate (``installed_roots``: its package folders, metadata and
``bin/hookgate``). A relative path is also judged against the event's ``cwd``. File-tool writes to a repository's
``.git/config`` and ``.git/hooks/`` are denied too (``git_kind``).

Two ways to run it (standard library only: json, re, os):

- in-process: ``check_event(event) -> dict | None`` (hookgate's ``python`` handler); it never raises.
- as a command hook: ``python -I -S secrets_guard.py`` reads the event on stdin and prints the answer.

Which tools are checked (``check_event`` accepts any ``tool_name``):

- file writers (Claude ``Write``/``Edit``/``MultiEdit``/``NotebookEdit``, Kiro ``fs_write``, Gemini
  ``write_file``/``replace``, Codex ``apply_patch``, or any other name): every path found in
  ``tool_input`` under ``file_path``, ``notebook_path``, ``path``, ``file_paths``, ``paths``,
  ``destination``, ``target``, ``filename`` (...), also inside lists such as Kiro's
  ``operations: [{"mode": ..., "path": ...}]``, plus the files an ``apply_patch`` text names.
- MCP tools ``mcp__<server>__<tool>``: only when a word of the tool's name suggests writing (write,
  edit, create, append, move, copy, rename, put, save, upload, update, replace, insert, patch, push,
  delete, remove, modify, overwrite, set... and their ``-s`` forms; ``writeFile`` and ``write_file`` alike).
- read-only tools (``Read``, ``Grep``, ``Glob``, ``LS``...) and shells (``Bash``) are skipped here;
  ``shell_guard`` checks shell commands that write to secrets files (``write_reason`` below).
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # no typing import at run time (a command hook starts in milliseconds)
    from collections.abc import Callable
    from typing import Any


class _Lazy:
    """A regular expression compiled on first use: importing the guard compiles nothing it may not need."""

    __slots__ = ("_args", "_compiled")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)
        self._compiled: re.Pattern[str] | None = None

    def _get(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(*self._args)
        return self._compiled

    def search(self, text: str) -> re.Match[str] | None:
        return self._get().search(text)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        return self._get().fullmatch(text)

    def findall(self, text: str) -> list[Any]:
        return self._get().findall(text)

    def sub(self, repl: str, text: str) -> str:
        return self._get().sub(repl, text)


_TEMPLATE_WORDS = frozenset(
    {"example", "examples", "sample", "samples", "template", "templates", "tmpl", "tpl", "dist", "default", "defaults"}
)
_TEMPLATE_SUFFIX = _Lazy(r"\.(?:examples?|samples?|templates?|tmpl|tpl|dist|defaults?)$", re.IGNORECASE)

# Directories whose every file is sensitive (a template name does not exempt these).
_SECRET_DIRS = [
    (_Lazy(r"(?:^|/)\.ssh(?:/|$)", re.IGNORECASE), "SSH configuration or keys"),
    (_Lazy(r"(?:^|/)\.gnupg(?:/|$)", re.IGNORECASE), "a GnuPG keyring"),
    (_Lazy(r"(?:^|/)\.aws/(?:credentials|config)$", re.IGNORECASE), "AWS credentials"),
    (_Lazy(r"(?:^|/)\.docker/config\.json$", re.IGNORECASE), "Docker registry credentials"),
    (_Lazy(r"(?:^|/)\.kube/config$", re.IGNORECASE), "Kubernetes credentials"),
]
# File names (a template name exempts these).
_SECRET_FILES = [
    (_Lazy(r"(?:^|/)\.env(?:\.[^/]*)?$", re.IGNORECASE), "an environment file that holds secrets"),
    (_Lazy(r"(?:^|/)\.envrc$", re.IGNORECASE), "a direnv file that holds secrets"),
    (_Lazy(r"\.(?:pem|key|p12|pfx|jks|keystore|ppk)$", re.IGNORECASE), "a private key or certificate store"),
    (_Lazy(r"(?:^|/)id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?$", re.IGNORECASE), "an SSH private key"),
    (
        _Lazy(r"(?:^|/)(?:\.netrc|_netrc|\.pgpass|\.git-credentials|\.npmrc|\.pypirc)$", re.IGNORECASE),
        "a credentials file",
    ),
]

# Agent hook configuration and hookgate's own files: the agent must not switch its own guard rails off.
_CONFIG_FILES = [
    (_Lazy(r"(?:^|/)\.?hookgate\.(?:ya?ml|json)$", re.IGNORECASE), "a hookgate configuration"),
    (
        _Lazy(r"(?:^|/)\.claude/(?:settings(?:\.local)?\.json$|hooks(?:/|$))", re.IGNORECASE),
        "Claude Code's settings or hooks",
    ),
    (_Lazy(r"(?:^|/)\.kiro/agents/(?:[^/]*\.json)?$", re.IGNORECASE), "a Kiro agent configuration"),
    (_Lazy(r"(?:^|/)\.gemini/settings\.json$", re.IGNORECASE), "Gemini CLI's settings"),
    (_Lazy(r"(?:^|/)\.codex/(?:hooks\.json|config\.toml)$", re.IGNORECASE), "Codex's hooks or configuration"),
    (_Lazy(r"^(?:~/\.codex|\$\{?CODEX_HOME\}?)(?:/|$)"), "Codex's configuration directory"),
    (
        _Lazy(
            r"(?:^|/)\.cache/hookgate(?:/|$)|(?:^|/)\.local/state/hookgate(?:/|$)"
            r"|^\$\{?(?:XDG_CACHE_HOME|XDG_STATE_HOME)\}?/hookgate(?:/|$)|^\$\{?HOOKGATE_CACHE_DIR\}?(?:/|$)"
        ),
        "hookgate's own cache or state",
    ),
]
# Directories that hold those files: deleting or moving one away (``rm``, ``mv`` sources), or creating one whole
# (``cp -r dir .claude``), also switches hooks off.
_CONFIG_DIRS = _Lazy(r"(?:^|/)\.(?:claude|claude/hooks|kiro|kiro/agents|gemini|codex)/?$", re.IGNORECASE)
# Concrete protected names, for matching a shell glob (``> .e?v``) against them (see ``glob_reason``).
PROTECTED_EXAMPLES = (
    *(".env", ".env.local", ".env.production", ".envrc", "x.pem", "x.key", "x.p12", "x.pfx", "x.jks"),
    *("x.keystore", "x.ppk", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".netrc", "_netrc", ".pgpass"),
    *(".git-credentials", ".npmrc", ".pypirc", ".ssh/authorized_keys", ".ssh/config", ".ssh/id_rsa"),
    *(".gnupg/x", ".aws/credentials", ".aws/config", ".docker/config.json", ".kube/config", "hookgate.yaml"),
    *("hookgate.yml", "hookgate.json", ".claude/settings.json", ".claude/settings.local.json"),
    *(".claude/hooks/x", ".kiro/agents/x.json", ".gemini/settings.json", ".codex/hooks.json"),
    *(".codex/config.toml", ".cache/hookgate/x", ".local/state/hookgate/x"),
)

_PATH_KEYS = frozenset(
    (
        *("file_path", "filepath", "filePath", "notebook_path", "path", "file", "filename", "fileName", "file_name"),
        *("destination", "dest", "dst", "to", "target", "target_path", "targetPath", "new_path", "newPath"),
        *("destination_path", "destinationPath", "absolute_path", "file_paths", "paths", "files"),
    )
)
_SOURCE_KEYS = frozenset(
    {"source", "sources", "src", "from", "old_path", "oldPath", "source_path", "sourcePath", "origin"}
)
"""Keys naming what a move or rename takes away (``move_file {"source": ".claude/settings.json", ...}``):
checked, as removals, only for a tool whose name says it moves, renames or deletes (``_REMOVING_WORDS``); a
copy's source is only read."""
_REMOVING_WORDS = frozenset(
    {"move", "moves", "mv", "rename", "renames", "delete", "deletes", "remove", "removes", "rm"}
)
"""Words of a tool's name that take paths away: every path it names is judged as a removal (a directory
holding hook configuration counts, as for ``rm -r .claude``)."""
_READ_ONLY_TOOLS = frozenset(
    (
        *("Read", "Glob", "Grep", "LS", "WebFetch", "WebSearch", "TodoWrite", "Task", "Agent", "fs_read", "read_file"),
        *("read_many_files", "glob", "grep", "grep_search", "search_file_content", "list_directory", "web_fetch"),
        *("web_search", "google_web_search"),
    )
)
_SHELL_TOOLS = frozenset(
    (
        *("Bash", "execute_bash", "execute_cmd", "run_shell_command", "exec_command", "shell", "shell_command"),
        *("local_shell",),
    )
)
_WRITE_WORD = _Lazy(
    r"(?:write|writes|writing|written|edit|edits|editing|create|creates|append|appends|move|moves"
    r"|copy|copies|rename|renames|put|puts|save|saves|upload|uploads|update|updates|upsert"
    r"|replace|replaces|insert|inserts|patch|patches|push|delete|deletes|remove|removes"
    r"|modify|modifies|overwrite|overwrites|set|mv|cp|rm|mkdir|touch|store)"
)
# Codex trims a hunk header line before reading it: an indented "  *** Add File: .env" adds .env
_PATCH_FILES = _Lazy(r"^[^\S\n]*\*\*\* (?:(?:Add|Update|Delete) File|Move to): *(.+?) *$", re.MULTILINE)


def _is_template(base: str) -> bool:
    if _TEMPLATE_SUFFIX.search(base):
        return True
    parts = base.lower().split(".")
    return base.startswith(".") and parts[1] in ("env", "envrc") and any(p in _TEMPLATE_WORDS for p in parts[2:])


# Windows opens ``settings.json.``, ``settings.json `` and ``settings.json::$DATA`` as ``settings.json``
# (trailing dots and spaces of a name are dropped, ``::$DATA`` is the file's own content): those spellings are
# folded away, so they are matched as the file they write (``..`` and ``.`` stay).
_WINDOWS_STREAM = _Lazy(r"::\$data(?=/|$)", re.IGNORECASE)
_WINDOWS_TAIL = _Lazy(r"(?<=[^/. ])[. ]+(?=/|$)")


def normal(path: str) -> str:
    """``path`` with ``\\`` as ``/`` and ``.``, ``..`` and doubled ``/`` folded away (``os.path.normpath``'s
    rules, without touching the file system: ``.claude/x/../settings.json`` -> ``.claude/settings.json``), and
    a name's trailing dots and spaces and a ``::$DATA`` suffix dropped as Windows does; a trailing ``/`` is
    kept. Every protected-path match runs on this form."""
    path = path.replace("\\", "/").strip()
    if ":" in path or ". " in path or " /" in path or "./" in path or path.endswith((".", " ")):
        path = _WINDOWS_TAIL.sub("", _WINDOWS_STREAM.sub("", path))
    if not path or ("//" not in path and "/." not in path and not path.startswith("./")):
        return path
    folded = posixpath.normpath(path)
    return folded + "/" if path.endswith("/") and folded != "/" else folded


def secret_kind(path: str) -> str | None:
    """What kind of secrets file ``path`` is (``"an environment file that holds secrets"``...), or None.

    ``path`` may be absolute, relative, ``~/...`` or hold shell variables (``$HOME/.ssh/x``); ``\\`` counts
    as ``/``; it is matched in its ``normal`` form. Case-insensitive. Never raises for a string."""
    path = normal(path)
    if not path or ("." not in path and "id_" not in path.lower()):
        return None  # every protected name holds a dot, except the SSH keys (id_rsa...)
    for pattern, kind in _SECRET_DIRS:
        if pattern.search(path):
            return kind
    base = path.rstrip("/").rsplit("/", 1)[-1]
    if _is_template(base):
        return None
    for pattern, kind in _SECRET_FILES:
        if pattern.search(path.rstrip("/")):
            return kind
    return None


def _home_form(path: str) -> str:
    """``path`` with the home directory and hookgate's cache/state directories written as variables
    (``/home/u/.codex/x`` -> ``~/.codex/x``; ``$XDG_CACHE_HOME`` spelled out -> ``$XDG_CACHE_HOME``)."""
    if not path.startswith("/"):
        return path  # only an absolute path can spell out one of those directories
    for var in ("HOOKGATE_CACHE_DIR", "XDG_CACHE_HOME", "XDG_STATE_HOME", "CODEX_HOME"):
        value = _env(var)
        if value and (path == value or path.startswith(value + "/")):
            return "$" + var + path[len(value) :]
    for prefix in ("${HOME}", "$HOME", _env("HOME")):
        if prefix and prefix != "/" and (path == prefix or path.startswith(prefix + "/")):
            return "~" + path[len(prefix) :]
    return path


def _no_count() -> None:
    """Nothing: standalone, no one counts reads."""


on_outside_read = _no_count
"""Called on each read of the environment or the file system (the shell guard's ``destructive.outside``
counts them, to know which verdicts it may remember; see ``destructive.protected``)."""


def _env(name: str) -> str:
    on_outside_read()
    return os.environ.get(name, "").rstrip("/")


_INSTALLED: list[tuple[str, str]] | None = None  # (protected root, what it is); computed on first use


def installed_roots() -> list[tuple[str, str]]:
    """The installed hookgate: the ``configs``, ``gateway`` and ``handlers`` package directories found from this
    file's own place (``site-packages`` or the source checkout of an editable install), the distribution's
    metadata and editable-install hooks beside them (``hookgate-*.dist-info``, ``__editable__*hookgate*``), and
    the ``hookgate`` script in the interpreter's ``bin``; each as written and with symlinks resolved. Cached."""
    global _INSTALLED
    if _INSTALLED is None:
        here = os.path.dirname(os.path.abspath(__file__))  # .../configs/guards
        site = os.path.dirname(os.path.dirname(here))
        found: list[tuple[str, str]] = []
        for name in ("configs", "gateway", "handlers"):
            if os.path.isdir(os.path.join(site, name)):
                found.append((os.path.join(site, name), "hookgate's installed policy and code"))
        for folder in {site, *(p for p in sys.path if p.endswith("-packages"))}:
            try:
                entries = os.listdir(folder)
            except OSError:
                continue
            for name in entries:
                low = name.lower()
                if low.startswith(("hookgate-", "__editable__")) and "hookgate" in low:
                    found.append((os.path.join(folder, name), "hookgate's installed policy and code"))
        for bindir in {os.path.join(sys.prefix, "bin"), os.path.dirname(sys.executable)}:
            found.append((os.path.join(bindir, "hookgate"), "the hookgate command"))
        roots: list[tuple[str, str]] = []
        for path, kind in found:
            for form in {os.path.normpath(path), os.path.realpath(path)}:
                roots.append((form, kind))
        _INSTALLED = roots
    return _INSTALLED


def installed_kind(path: str, removal: bool = False) -> str | None:
    """What of the installed hookgate (``installed_roots``) the absolute ``path`` is or lies in, or None;
    ``removal``: a directory holding one counts too (``rm -rf .venv``). ``~`` is expanded; symlinks in the
    path are resolved only when it names a ``site-packages``/``dist-packages`` or ``bin`` folder."""
    on_outside_read()  # the home directory, symlinks, the installed folders
    path = normal(path).rstrip("/")
    if path.startswith("~"):
        path = os.path.expanduser(path)
    if not path.startswith("/"):
        return None
    forms = {path}
    if "-packages" in path or "/bin/" in path or "/lib" in path:
        forms.add(os.path.realpath(path))
    for form in forms:
        for root, kind in installed_roots():
            if form == root or form.startswith(root + "/") or (removal and root.startswith(form.rstrip("/") + "/")):
                return kind
    return None


def config_kind(path: str, removal: bool = False) -> str | None:
    """What kind of agent-hook configuration ``path`` is (``"a hookgate configuration"``...), or None.

    ``removal``: the path is deleted or moved away (``rm``, ``mv`` source): the directories holding such
    files (``.claude``, ``.kiro``, ``.codex``...) count too. Matched in its ``normal`` form. Never raises for a
    string."""
    path = normal(path)
    if not path:
        return None
    if path.startswith("/") and _policy_file(path):
        return "a policy file hookgate is running"
    path = _home_form(path)
    if "." not in path and not path.startswith("$"):  # every protected name holds a dot, or is a variable,
        return installed_kind(path, removal) if path[:1] in ("/", "~") else None  # or is the installed hookgate
    for pattern, kind in _CONFIG_FILES:
        if pattern.search(path):
            return kind
    if removal and _CONFIG_DIRS.search(path):
        return "a directory holding agent hook configuration"
    return installed_kind(path, removal) if path[:1] in ("/", "~") else None


def link_target(path: str, cwd: str = "") -> str | None:
    """Where a write to ``path`` (relative: from ``cwd``) lands when it goes through a symbolic link (``ln -s
    ~/.ssh/authorized_keys notes.txt``, then a Write of it), else None. Reads the file system."""
    full = os.path.expanduser(path) if path.startswith("~") else path
    if not path or "$" in path or "`" in path or not (full.startswith("/") or cwd):
        return None
    full = full if full.startswith("/") else cwd.rstrip("/") + "/" + full
    on_outside_read()
    try:
        real = os.path.realpath(full)
    except (OSError, ValueError):
        return None
    return real if real != posixpath.normpath(full) else None


def _policy_file(path: str) -> bool:
    """True when ``path`` (absolute, ``normal``) is a file the hookgate in this process loaded its policy from
    (``gateway.policy_files``: only there, not when this guard runs as a plain command hook)."""
    loaded = sys.modules.get("gateway.policy_files")
    if loaded is None or not loaded.LOADED:
        return False
    on_outside_read()  # the set can grow (a reload): a verdict that looked here is not remembered
    return path in loaded.LOADED


def write_reason(path: str, what: str | None = None, removal: bool = False, verb: str | None = None) -> str | None:
    """The reason a write to ``path`` is denied, or None when ``path`` is neither a secrets file nor
    agent-hook configuration (``config_kind``).

    ``what``: how the write happens, for the message (e.g. the shell command); default "Writing to PATH".
    ``removal``: the path is deleted, moved away or replaced whole (see ``config_kind``); ``verb``: what
    ``what`` does to it, for the message (default "writes to", or "deletes or moves" for a removal)."""
    kind = config_kind(path, removal)
    verb = verb or ("deletes or moves" if removal else "writes to")
    if kind is not None:
        head = f"{what} {verb} {path}" if what else f"Writing to {path}"
        return (
            f"{head}, which is {kind}; hookgate's default policy blocks changes to the agent's own hook "
            "configuration (the agent must not change its own guard rails): ask the user to make this change."
        )
    kind = secret_kind(path)
    if kind is None:
        return None
    head = f"{what} {verb} {path}" if what else f"Writing to {path}"
    return (
        f"{head}, which is {kind}; hookgate's default policy blocks writes to secrets files. Secrets must not "
        "pass through the agent: ask the user to edit this file."
    )


def git_kind(path: str) -> str | None:
    """What ``path`` is when it is a repository's own config or hook (``.git/config``, ``.git/hooks/...``), or
    None. Matched in ``secrets_guard.normal`` form, case-insensitively, anywhere in the path (``repo/.git/config``),
    a submodule's (``.git/modules/NAME/config``, ``.git/modules/NAME/hooks/...``) too."""
    if ".git" not in path.lower():
        return None
    parts = normal(path).rstrip("/").lower().split("/")  # .GIT/hooks is .git/hooks on macOS and Windows
    for k, part in enumerate(parts[:-1]):
        if part == ".git":
            rest = parts[k + 1 :]
            if rest[0] == "modules" and len(rest) > 2:  # .git/modules/NAME/: a submodule's own git folder
                if rest[-1] == "config":
                    return "config"
                if "hooks" in rest[2:]:
                    return "hooks"
            if rest == ["config"]:
                return "config"
            if rest[0] == "hooks":
                return "hooks"
    return None


def project_git_dir(path: str, cwd: str) -> bool:
    """Whether ``path`` (absolute, or relative to ``cwd``) is the ``.git`` entry itself of the project
    (``cwd``) or of a folder in it: a ``gitdir:`` file or a link written there points git at another config
    and hooks. A ``.git`` outside the project (a backup) is not."""
    if ".git" not in path.lower():
        return False
    path = normal(path)
    full = path if path.startswith("/") or not cwd else cwd.rstrip("/") + "/" + path
    full = os.path.normpath(full)
    if os.path.basename(full).lower() != ".git":
        return False
    if not full.startswith("/"):
        return not full.startswith("..")  # relative, with no cwd known: the directory the tool works in
    root = os.path.normpath(cwd) if cwd.startswith("/") else None
    return root is not None and (os.path.dirname(full) + "/").startswith(root.rstrip("/") + "/")


def git_reason(path: str, what: str, kind: str, removal: bool = False) -> str:
    verb = "deletes or moves" if removal else "writes to"
    if kind == "dir":
        return (
            f"{what} {verb} {path}, a repository's .git itself: a `gitdir:` file or a link there points git at "
            "another config and hooks, which git runs by itself on later commits, checkouts and pushes, so "
            "hookgate's default policy blocks it. Ask the user to set the repository up."
        )
    if kind == "config":
        return (
            f"{what} {verb} {path}, the repository's git config: git runs the commands it names (core.pager, "
            "core.fsmonitor, ! aliases...) and it holds the remotes and branch settings, which an overwrite loses "
            "for good, so hookgate's default policy blocks it. Use `git config` to change one setting, or ask the user."
        )
    return (
        f"{what} {verb} {path}, a git hook: git runs it by itself on later commits, checkouts and pushes, so "
        "hookgate's default policy blocks it. Ask the user to install or remove the hook."
    )


def _glob_match(pattern: str, name: str) -> bool:
    """Shell pattern matching of one path component (a leading ``.`` is only matched by a literal ``.``)."""
    import fnmatch

    if name.startswith(".") and not pattern.startswith("."):
        return False
    return fnmatch.fnmatchcase(name, pattern.lower())


def glob_reason(pattern: str, what: str | None = None) -> str | None:
    """The reason a write to shell glob ``pattern`` (``.e?v``, ``~/.ssh/auth*``) is denied when the glob
    could name a secrets file or hook configuration (one of ``PROTECTED_EXAMPLES``), or None."""
    parts = normal(pattern).rstrip("/").split("/")
    for example in PROTECTED_EXAMPLES:
        ex = example.split("/")
        if len(parts) < len(ex) or not all(_glob_match(p, e) for p, e in zip(parts[-len(ex) :], ex, strict=True)):
            continue
        reason = write_reason("/".join(parts[: -len(ex)] + ex), what)
        if reason:
            return reason.replace("/".join(parts[: -len(ex)] + ex), f"{pattern} (which can match {example})", 1)
    return None


def _paths(value: Any, key: str | None, depth: int, keys: frozenset[str], out: list[str]) -> None:
    """Collect strings stored under ``keys`` in ``value`` (dicts and lists, a few levels deep)."""
    if depth > 4 or len(out) > 1000:
        return
    if isinstance(value, str):
        if key in keys:
            out.append(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            _paths(v, k if isinstance(k, str) else None, depth + 1, keys, out)
    elif isinstance(value, list):
        for item in value:
            _paths(item, key, depth + 1, keys, out)


def _name_words(tool: str) -> list[str]:
    """The lower-case words of a tool's name (``writeFile``, ``write_file``, ``move-file``)."""
    return [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", tool)]


def tool_targets(tool_name: str | None, tool_input: dict[str, Any]) -> list[tuple[str, bool]]:
    """``(path, removal)`` for every path a tool call writes to or takes away, as far as ``tool_input``
    tells (see the module docstring). ``removal``: the tool's name says it moves, renames or deletes
    (``_REMOVING_WORDS``): then a move's source (``_SOURCE_KEYS``) counts too, and each path is judged
    as ``rm`` or an ``mv`` source would be (a directory holding hook configuration counts)."""
    if tool_name in _READ_ONLY_TOOLS or tool_name in _SHELL_TOOLS:
        return []
    words = _name_words(tool_name.split("__", 2)[-1]) if isinstance(tool_name, str) else []
    mcp = isinstance(tool_name, str) and tool_name.startswith("mcp__")
    if mcp and not any(_WRITE_WORD.fullmatch(w) for w in words):
        return []
    removal = not _REMOVING_WORDS.isdisjoint(words)
    paths: list[str] = []
    _paths(tool_input, None, 0, _PATH_KEYS | _SOURCE_KEYS if removal else _PATH_KEYS, paths)
    patch = tool_input.get("command") if tool_name in ("apply_patch", "Edit", "Write") else None
    if isinstance(patch, str) and "*** Begin Patch" in patch:
        paths += _PATCH_FILES.findall(patch)
    return [(path, removal) for path in paths]


def answer(event: dict[str, Any], reason: str) -> dict[str, Any]:
    """A denial of ``reason`` in Claude Code's hook output shape for the event's ``hook_event_name``."""
    name = event.get("hook_event_name") or "PreToolUse"
    if name == "PermissionRequest":
        return {"hookSpecificOutput": {"hookEventName": name, "decision": {"behavior": "deny", "message": reason}}}
    if name in ("PreToolUse", "preToolUse", "BeforeTool"):
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }
    return {"decision": "block", "reason": reason}


def check_event(event: dict[str, Any]) -> dict[str, Any] | None:
    """Claude Code hook output denying a write to a secrets file, or None. Never raises: a failure of
    its own denies the write.

    ``event``: a PreToolUse event (``tool_name``, ``tool_input``); anything else is let through."""
    try:
        if not isinstance(event, dict):
            return None
        tool_input = event.get("tool_input")
        if not isinstance(tool_input, dict):
            return None
        tool_name = event.get("tool_name")
        cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else ""
        for path, removal in tool_targets(tool_name if isinstance(tool_name, str) else None, tool_input):
            what = f"`{tool_name}`" if removal else None
            reason = write_reason(path, what, removal)
            full = cwd.rstrip("/") + "/" + path if cwd and path and not path.startswith(("/", "~", "$")) else path
            if not reason and full != path:  # settings.json in .claude/
                reason = write_reason(full, what, removal)
            linked = None if reason or removal else link_target(path, cwd or "")  # (a removal takes the link)
            if linked is not None:  # a link the agent made to a protected file: the write lands there
                reason = write_reason(linked, f"Writing to {path} (a link to {linked})")
            git = None if reason else git_kind(path) or git_kind(full)
            if git is None and not reason and project_git_dir(path, cwd or ""):  # moved away: its config and hooks
                git = "dir"
            if git is not None:
                reason = git_reason(path, f"`{tool_name}`", git, removal)
            if reason:
                return answer(event, reason)
        return None
    except Exception as exc:  # a bug here must not let the write through silently: it is denied, saying why
        return answer(
            event if isinstance(event, dict) else {},
            f"hookgate's secrets guard failed on this write (internal error {type(exc).__name__}), so it is "
            "blocked rather than let through unchecked",
        )


check_event.hookgate_readonly = True  # type: ignore[attr-defined]  # never changes the event: no copy needed
check_event.hookgate_threadsafe = True  # type: ignore[attr-defined]  # a large input is checked in a worker thread


def hook_main(check: Callable[[Any], dict[str, Any] | None], name: str) -> int:
    """Command-hook entry point for a guard: event on stdin, answer (or nothing) on stdout. Exit 1 on
    unreadable input."""
    try:
        event = json.load(sys.stdin)
    except ValueError as exc:
        print(f"{name}: the hook event is not JSON ({exc})", file=sys.stderr)
        return 1
    out = check(event)
    if out:
        json.dump(out, sys.stdout)
    return 0


def main() -> int:
    return hook_main(check_event, "secrets_guard")


if __name__ == "__main__":
    sys.exit(main())
