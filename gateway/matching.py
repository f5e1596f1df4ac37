"""Matchers and ``if`` rules, as Claude Code evaluates them.

``matcher`` (hooks reference §2.1): omitted, ``""`` or ``"*"`` matches everything; a matcher made
only of ``[A-Za-z0-9_\\- ,|]`` (``[A-Za-z0-9_|]`` for FileChanged and StopFailure) is a list of
exact, case-sensitive names split on ``|`` or ``,``; anything else is an unanchored regular
expression with JavaScript semantics (compiled with the ``regex`` module in ASCII mode; constructs
JavaScript rejects are config errors).

Kiro 2.x matchers: exact name, glob (``fs_*``), ``@server`` (all tools of an MCP server),
``@server/tool``, ``@builtin`` (every non-MCP tool) and ``*``.

``if`` (hooks reference §2.3, permissions reference): one permission rule, ``Tool`` or
``Tool(content)``. Bash rules are checked against every subcommand (see ``gateway.bash_split``); file rules
use gitignore syntax relative to the event's cwd (``//abs``, ``~/home``, ``/project-relative``).
"""

from __future__ import annotations

import os
import re
from functools import lru_cache

from gateway.errors import ConfigError

TYPE_CHECKING = False  # importing typing costs a hook process ~2 ms
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from gateway.events import HookEvent

    Predicate = Callable[[str], bool]


# Python-only regex syntax that JavaScript's RegExp rejects or reads differently. (Patterns, not compiled
# objects: ``re`` compiles them on first use, so a hook call whose matchers are plain names compiles none.)
_NOT_JS = r"\(\?P|\(\?[aiLmsux-]+[):]|\(\?>|\\[AZz]|[*+?}][+]|\(\?#"
_PERMISSION_RULE = r"^[A-Za-z_][\w-]*\(.*\)$"


def _always(_: str) -> bool:
    return True


@lru_cache(maxsize=16)
def _char_set(char_class: str) -> frozenset[str]:
    """The characters of a regex character class body such as ``A-Za-z0-9_\\- ,|`` (ranges, ``\\x`` escapes)."""
    chars: set[str] = set()
    i = 0
    while i < len(char_class):
        c = char_class[i]
        if c == "\\" and i + 1 < len(char_class):
            chars.add(char_class[i + 1])
            i += 2
        elif i + 2 < len(char_class) and char_class[i + 1] == "-":
            chars.update(chr(n) for n in range(ord(c), ord(char_class[i + 2]) + 1))
            i += 3
        else:
            chars.add(c)
            i += 1
    return frozenset(chars)


def _anchored_prefix(pattern: str) -> str:
    """The literal text every match of ``pattern`` starts the value with, when it is anchored (``^mcp__.+__``:
    ``mcp__``), else "". Conservative: any ``|`` (an alternation could leave the anchor) gives ""."""
    if not pattern.startswith("^") or "|" in pattern:
        return ""
    end = 1
    while end < len(pattern) and ((pattern[end].isascii() and pattern[end].isalnum()) or pattern[end] == "_"):
        end += 1
    if end < len(pattern) and pattern[end] in "*?{":  # the last literal is optional
        end -= 1
    return pattern[1:end]


MATCH_SECONDS = 0.05
"""Longest a matcher that can backtrack (``backtracks``) may search one value; one that runs out counts as a
match: the group's handlers run (a check that cannot tell whether it applies does not stand aside), and one
log line says so. (Nothing else bounds it: the stdlib's ``re`` cannot be interrupted, and under ``hookgate
serve`` a search holds the event loop.)"""
_REPEATED_GROUP = r"\)(?:[*+]|\{\d)"  # (a+)+, (a|aa)*, (.*a){20}: a group repeated
_UNBOUNDED = r"(?<!\\)(?:[*+]|\{\d*,\})"


def backtracks(pattern: str) -> bool:
    """True when regex ``pattern`` can take exponential or high-polynomial time on some value (a repeated
    group, or three unbounded repeats or more: ``a*a*a*b``). A heuristic, erring on the side of True; such a
    matcher is searched with a time bound (``MATCH_SECONDS``)."""
    return re.search(_REPEATED_GROUP, pattern) is not None or len(re.findall(_UNBOUNDED, pattern)) >= 3


def _regex_matcher(pattern: str) -> Predicate:
    """A matcher's regex test. Raises ConfigError for a regex JavaScript would reject."""
    if re.search(_NOT_JS, pattern):
        raise ConfigError(f"matcher {pattern!r} uses Python-only regex syntax that JavaScript rejects")
    if backtracks(pattern):
        return _bounded_matcher(pattern, _compiled_js(pattern))
    try:  # the stdlib engine agrees with JavaScript on everything _NOT_JS lets through, and loads free
        if "[" in pattern and any(pair in pattern for pair in ("[[", "--", "&&", "~~", "||")):
            import warnings  # only here: the hook path does not load it otherwise

            with warnings.catch_warnings():  # "[[:alpha:]]": a FutureWarning about nested sets (not JS's)
                warnings.simplefilter("ignore", FutureWarning)
                simple = re.compile(pattern, re.ASCII)
        else:
            simple = re.compile(pattern, re.ASCII)
    except re.error:
        simple = None
    if simple is not None:
        return lambda value: simple.search(value) is not None
    compiled = _compiled_js(pattern)
    return lambda value: compiled.search(value) is not None


def _compiled_js(pattern: str) -> Any:
    """``pattern`` compiled with the ``regex`` module (JavaScript syntax ``re`` lacks: variable-width
    lookbehind, ``(?<name>...)``; and a ``timeout`` for ``search``). Raises ConfigError."""
    import regex

    try:
        return regex.compile(pattern, regex.ASCII | regex.V0)
    except regex.error as exc:
        raise ConfigError(f"matcher {pattern!r} is not a valid regular expression: {exc}") from None


def _bounded_matcher(pattern: str, compiled: Any) -> Predicate:
    """A search of at most ``MATCH_SECONDS`` per value; running out counts as a match (one log line)."""

    def accepts(value: str) -> bool:
        try:
            return compiled.search(value, timeout=MATCH_SECONDS) is not None
        except TimeoutError:
            import logging

            logging.getLogger("hookgate").warning(
                "matcher %r took over %g s on %r: counted as a match (its handlers run)",
                pattern,
                MATCH_SECONDS,
                value[:80],
            )
            return True

    return accepts


@lru_cache(maxsize=256)
def claude_matcher(pattern: str | None, exact_chars: str = "A-Za-z0-9_\\- ,|", validated: bool = False) -> Predicate:
    """Compile a Claude Code ``matcher``. Raises ConfigError for a regex JavaScript would reject.

    ``validated``: the pattern comes from a config that was validated when it loaded (the dispatcher's case), so
    an anchored regex (``^mcp__.+__``) is compiled only when a value starts with its literal prefix: a hook call
    whose tool name cannot match compiles no regex at all."""
    if pattern is None or pattern in ("", "*"):
        return _always
    if _char_set(exact_chars).issuperset(pattern):
        separators = ("|", ",") if "," in exact_chars else ("|",)
        names = pattern.replace(",", "|") if len(separators) == 2 else pattern
        return frozenset(p.strip() for p in names.split("|") if p.strip()).__contains__
    prefix = _anchored_prefix(pattern) if validated else ""
    if not prefix:
        return _regex_matcher(pattern)
    compiled: list[Predicate] = []

    def accepts(value: str) -> bool:
        if not value.startswith(prefix):
            return False
        if not compiled:
            compiled.append(_regex_matcher(pattern))
        return compiled[0](value)

    return accepts


def matcher_problem(pattern: str, exact_chars: str = "A-Za-z0-9_\\- ,|") -> str | None:
    """A one-line description of what is wrong with a matcher, or None (used by ``validate``)."""
    if re.match(_PERMISSION_RULE, pattern, re.S):
        return (
            f"{pattern!r} is a permission rule, not a matcher: as a regex it is tested against the "
            f"tool name and never fires; use matcher {pattern.split('(', 1)[0]!r} with "
            f'"if": {pattern!r}'
        )
    try:
        claude_matcher(pattern, exact_chars)
    except ConfigError as exc:
        return str(exc)
    return None


def matcher_warning(pattern: str, exact_chars: str = "A-Za-z0-9_\\- ,|") -> str | None:
    """A one-line warning for a valid matcher that can backtrack catastrophically (``backtracks``), or None."""
    if _char_set(exact_chars).issuperset(pattern) or pattern in ("", "*") or not backtracks(pattern):
        return None
    return (
        f"matcher {pattern!r} can take very long on some values (a repeated group, or several "
        f"unbounded repeats): each search is bounded to {MATCH_SECONDS:g} s, and one that runs out counts as a "
        "match (its handlers run); a simpler pattern or a list of names avoids it"
    )


@lru_cache(maxsize=256)
def kiro_matcher(pattern: str | None) -> Predicate:
    """Compile a Kiro 2.x matcher (tested against the Kiro tool name, e.g. ``fs_write``, ``@git/status``)."""
    if pattern is None or pattern in ("", "*"):
        return _always
    if pattern == "@builtin":
        return lambda name: not name.startswith("@")
    if pattern.startswith("@") and "/" not in pattern and not any(c in pattern for c in "*?["):
        prefix = pattern + "/"
        return lambda name: name == pattern or name.startswith(prefix)
    if any(c in pattern for c in "*?["):
        from fnmatch import fnmatchcase

        return lambda name: fnmatchcase(name, pattern)
    return pattern.__eq__


# ---------------------------------------------------------------- if rules

FILE_EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
FILE_READ_TOOLS = frozenset({"Read", "Glob", "Grep", "LS"})
SHELL_TOOLS = frozenset({"Bash", "PowerShell"})
_RULE_TOOLS: dict[str, frozenset[str]] = {
    "Edit": FILE_EDIT_TOOLS,
    "Read": FILE_READ_TOOLS,
    "Agent": frozenset({"Agent", "Task"}),
    "Task": frozenset({"Agent", "Task"}),
}
_PATH_FIELDS = ("file_path", "notebook_path", "path", "dir_path")  # dir_path: Gemini's glob/grep/ls


class IfRule:
    """One permission rule from an ``if`` field: ``tool`` and optional ``content`` (immutable by convention;
    equal and hashed by its fields)."""

    __slots__ = ("content", "text", "tool")

    def __init__(self, text: str, tool: str, content: str | None) -> None:
        self.text = text
        self.tool = tool
        self.content = content

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, IfRule):
            return NotImplemented
        return (self.text, self.tool, self.content) == (other.text, other.tool, other.content)

    def __hash__(self) -> int:
        return hash((self.text, self.tool, self.content))

    def __repr__(self) -> str:
        return f"IfRule(text={self.text!r}, tool={self.tool!r}, content={self.content!r})"

    @classmethod
    def parse(cls, text: str) -> IfRule:
        """Parse ``Tool`` or ``Tool(content)``. Raises ConfigError with what was expected."""
        m = re.fullmatch(r"\s*([A-Za-z_][\w\-*]*)\s*(?:\((.*)\))?\s*", text, re.S)
        if not m:
            raise ConfigError(
                f"if rule {text!r} is not a permission rule (expected Tool or Tool(pattern), "
                'e.g. "Bash(rm *)" or "Edit(src/**)")'
            )
        content = m.group(2)
        if content is not None and content.strip() in ("", "*"):
            content = None
        return cls(text=text, tool=m.group(1), content=content)

    def tool_matches(self, tool_name: str) -> bool:
        if self.tool == tool_name:
            return True
        if self.tool in _RULE_TOOLS and tool_name in _RULE_TOOLS[self.tool]:
            return True
        if self.tool.startswith("mcp__"):
            if self.tool.endswith("__*"):
                return tool_name.startswith(self.tool[:-1])
            parts = self.tool.split("__")
            if len(parts) == 2:  # mcp__server: every tool of that server
                return tool_name.startswith(self.tool + "__")
        return False

    def matches(self, event: HookEvent) -> bool:
        """True when the handler should run for ``event`` (only ever called on tool events)."""
        tool_name = event.tool_name or ""
        if not self.tool_matches(tool_name):
            return False
        if self.content is None:
            return True
        tool_input = event.tool_input or {}
        if tool_name in SHELL_TOOLS or self.tool in SHELL_TOOLS:
            command = tool_input.get("command")
            if not isinstance(command, str):
                return True  # nothing to judge: fail open, the hook runs
            from gateway.bash_split import command_matches

            return command_matches(self.content, command)
        if tool_name in FILE_EDIT_TOOLS | FILE_READ_TOOLS:
            paths = tool_input.get("file_paths")  # a Codex apply_patch touching several files: any of them
            if not (isinstance(paths, list) and paths and all(isinstance(p, str) for p in paths)):
                path = next((tool_input[f] for f in _PATH_FIELDS if isinstance(tool_input.get(f), str)), None)
                if path is None:
                    return True
                paths = [path]
            project_dir = event.project_dir or os.environ.get("CLAUDE_PROJECT_DIR")
            cwd = event.cwd or os.getcwd()
            return any(path_matches(self.content, p, cwd=cwd, project_dir=project_dir) for p in paths)
        if tool_name == "WebFetch" and self.content.startswith("domain:"):
            url = tool_input.get("url")
            if url is None:
                return False  # no url, no host: no domain fits (and nothing is fetched)
            if not isinstance(url, str):
                return True  # a url the rule cannot read: fail open, the hook runs
            return _domain_matches(self.content[len("domain:") :], url)
        return _wildcard_matches(self.content, _primary_value(tool_input))


def _url_hosts(url: str) -> set[str] | None:
    """The host names ``url`` may reach, lower case, without user info, port or trailing dot: as
    ``urllib`` reads it and as a browser does (a backslash is a slash in an http(s) URL, so
    ``https://a.test\\@b.test/`` goes to a.test); None when no host can be read."""
    from urllib.parse import urlsplit

    text = url.strip()
    if "://" not in text:
        text = "http://" + text  # a bare "example.com/x", as a model may write it
    hosts = set()
    for candidate in (text, text.replace("\\", "/")):
        try:
            host = urlsplit(candidate).hostname
        except ValueError:
            continue
        if host:
            hosts.add(host.rstrip("."))
    return hosts or None


def _domain_matches(domain: str, url: str) -> bool:
    """``WebFetch(domain:D)``: whether ``url``'s host is D or under it (D may hold ``*`` wildcards).
    True when no host can be read (the hook runs: an ``if`` rule may only ever skip a hook it is sure of)."""
    from fnmatch import fnmatchcase

    hosts = _url_hosts(url)
    if hosts is None:
        return True
    domain = domain.lower().rstrip(".")
    return any(fnmatchcase(host, domain) or host.endswith("." + domain) for host in hosts)


@lru_cache(maxsize=8192)
def parsed_rule(text: str) -> IfRule:
    """``IfRule.parse(text)``, parsed once per rule text. Raises ConfigError."""
    return IfRule.parse(text)


def _primary_value(tool_input: dict[str, Any]) -> str:
    for key in ("subagent_type", "query", "url", "pattern", "prompt"):
        if isinstance(tool_input.get(key), str):
            return str(tool_input[key])
    return ""


def _wildcard_matches(pattern: str, value: str) -> bool:
    return re.fullmatch(".*".join(re.escape(p) for p in pattern.split("*")), value, re.S) is not None


@lru_cache(maxsize=128)
def _pathspec(pattern: str) -> Any:
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines([pattern])


def path_matches(pattern: str, path: str, *, cwd: str, project_dir: str | None = None) -> bool:
    """Gitignore-style file rule, as Claude Code's permission rules read it.

    ``//x`` is absolute, ``~/x`` is under the home directory, ``/x`` is relative to the project
    directory (``CLAUDE_PROJECT_DIR``, else cwd), anything else is relative to ``cwd``.
    """
    if pattern.startswith("//"):
        root, pat = "/", pattern[2:]
    elif pattern.startswith("~/"):
        root, pat = os.path.expanduser("~"), pattern[2:]
    elif pattern.startswith("/"):
        root, pat = project_dir or cwd, pattern[1:]
    else:
        root, pat = cwd, pattern
    target = path if os.path.isabs(path) else os.path.join(cwd, path)
    rel = os.path.relpath(os.path.normpath(target), os.path.normpath(root)).replace(os.sep, "/")
    if rel == ".." or rel.startswith("../"):
        return False
    if "/" in pat.rstrip("/") and not pat.startswith("**"):
        pat = "/" + pat  # a slash inside anchors the pattern at the root, as in gitignore
    return bool(_pathspec(pat).match_file(rel))
