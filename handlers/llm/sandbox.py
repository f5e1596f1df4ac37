"""The ``agent`` handler's read-only tools, confined to the event's ``cwd``.

Tools (argument schemas in ``TOOL_DEFS``): ``Read`` (a file, numbered lines, ``offset``/``limit``),
``Grep`` (a regular expression over files), ``Glob`` (file names by pattern), ``Transcript`` (the
session transcript from the event's ``transcript_path``, the one file outside ``cwd`` it may read).

Confinement: a path is relative to ``cwd`` or absolute inside it; a path with a ``..`` part is
refused, and so is any path whose real location (symlinks resolved) is outside ``cwd``; directory
walks never follow symlinks and skip files that resolve outside. A regular file with more than one
hard link (``st_nlink > 1``) is refused too, and skipped by walks: a hard link inside ``cwd`` may be
the same file as one outside it, and nothing in the directory tree tells which. Files are opened with
``O_NOFOLLOW`` and checked again on the open descriptor (regular file, one link), so a path swapped
between the check and the read is refused as well. A refusal or a bad argument is a
``ToolFailure``, reported to the model as a tool error (the model may try again), never a crash.

Limits keep every answer small: ``MAX_OUTPUT`` characters per answer, ``MAX_FILE_BYTES`` read per
file, ``MAX_WALK`` files per walk, ``REGEX_TIMEOUT`` seconds per regular-expression search (the
``regex`` module's timeout guards against catastrophic patterns). Directories named in
``SKIP_DIRS`` are not walked.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from typing import Any

from gateway.errors import ToolFailure as ToolFailure

MAX_OUTPUT = 30_000
MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_LINE = 2_000
MAX_WALK = 20_000
MAX_MATCHES = 200
MAX_GLOB = 500
REGEX_TIMEOUT = 2.0
SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".mypy_cache", ".ruff_cache", ".pytest_cache"}
)

TOOL_DEFS: list[dict[str, Any]] = [
    {
        "name": "Read",
        "description": "Read a text file inside the project. Returns numbered lines. "
        "Paths are relative to the project root (absolute paths must be inside it).",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "file path"},
                "offset": {"type": "integer", "description": "first line to return (1-based, default 1)"},
                "limit": {"type": "integer", "description": "number of lines (default 400)"},
            },
            "required": ["path"],
        },
    },
    {
        "name": "Grep",
        "description": "Search file contents with a regular expression (Python syntax). Returns "
        "path:line: text for each match.",
        "parameters": {
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "regular expression"},
                "path": {"type": "string", "description": "file or directory to search (default: the project root)"},
                "glob": {"type": "string", "description": "only files whose path matches this glob, e.g. *.py"},
                "ignore_case": {"type": "boolean"},
            },
            "required": ["pattern"],
        },
    },
    {
        "name": "Glob",
        "description": "List files whose path matches a glob pattern such as **/*.py or src/*.ts.",
        "parameters": {
            "type": "object",
            "properties": {
                "pattern": {"type": "string"},
                "path": {"type": "string", "description": "directory to search (default: the project root)"},
            },
            "required": ["pattern"],
        },
    },
    {
        "name": "Transcript",
        "description": "Read the session transcript (the conversation so far), oldest "
        "entry first. Use offset/limit to page; a negative offset counts "
        "from the end.",
        "parameters": {
            "type": "object",
            "properties": {
                "offset": {"type": "integer", "description": "first entry (0-based; negative: from the end)"},
                "limit": {"type": "integer", "description": "number of entries (default 40)"},
            },
        },
    },
]


def _cap(text: str) -> str:
    if len(text) <= MAX_OUTPUT:
        return text
    return text[:MAX_OUTPUT] + f"\n[... output cut: {len(text) - MAX_OUTPUT} more characters]"


def _int(args: dict[str, Any], name: str, default: int, low: int | None = None) -> int:
    value = args.get(name, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ToolFailure(f"{name} must be an integer")
    try:
        number = int(value)
    except ValueError:
        raise ToolFailure(f"{name} must be an integer") from None
    if low is not None and number < low:
        raise ToolFailure(f"{name} must be at least {low}")
    return number


def _str(args: dict[str, Any], name: str, default: str | None = None) -> str:
    value = args.get(name, default)
    if not isinstance(value, str) or (not value and default is None):
        raise ToolFailure(f"{name} is required (a string)")
    return value


def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a glob over ``/``-separated relative paths: ``**`` spans directories, ``*`` and ``?``
    stay inside one name, ``[...]`` is a character class. A pattern without ``/`` matches names
    at any depth (as ``**/pattern``)."""
    if "/" not in pattern and "**" not in pattern:
        pattern = "**/" + pattern
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        elif pattern[i] == "[":
            end = pattern.find("]", i + 1)
            if end == -1:
                out, i = out + re.escape("["), i + 1
            else:
                body = pattern[i + 1 : end]
                body = "^" + body[1:] if body.startswith("!") else body
                out, i = out + "[" + body.replace("\\", "\\\\") + "]", end + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out + r"\Z")


HARD_LINK_REFUSAL = (
    "refused: {path!r} has {links} hard links; a hard-linked file may be a file outside the "
    "project, so the agent's tools do not read it"
)


def _hard_linked(path: str) -> int:
    """The link count of ``path`` when it is a regular file with more than one hard link, else 0."""
    try:
        st = os.stat(path)
    except OSError:
        return 0
    return st.st_nlink if stat.S_ISREG(st.st_mode) and st.st_nlink > 1 else 0


def read_confined(path: str, shown: str, limit: int) -> bytes:
    """At most ``limit`` bytes of the regular file ``path``, refusing a symlink at the last step, a file
    that is not regular and a file with several hard links (checked on the open descriptor).
    ``shown`` names the file in messages. Raises ToolFailure."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise ToolFailure(f"cannot read {shown!r}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ToolFailure(f"{shown!r} is not a regular file")
        if st.st_nlink > 1:
            raise ToolFailure(HARD_LINK_REFUSAL.format(path=shown, links=st.st_nlink))
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read(limit)
    except OSError as exc:
        raise ToolFailure(f"cannot read {shown!r}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


class Sandbox:
    """Read-only access to one directory tree (``root``) plus one transcript file."""

    def __init__(self, root: str | None, transcript_path: str | None = None) -> None:
        self.root = os.path.abspath(root) if root else None
        self.real_root = os.path.realpath(root) if root else None
        self.transcript_path = transcript_path

    # ---- confinement
    def _inside(self, path: str) -> bool:
        assert self.real_root is not None
        return path == self.real_root or path.startswith(self.real_root.rstrip(os.sep) + os.sep)

    def resolve(self, path: str) -> str:
        """The real path of ``path`` inside the root. Raises ToolFailure when it would leave it."""
        if self.root is None or self.real_root is None or not os.path.isdir(self.real_root):
            raise ToolFailure("no project directory: the event has no usable cwd")
        if not isinstance(path, str) or not path.strip():
            raise ToolFailure("path is required")
        if "\0" in path:
            raise ToolFailure("path contains a NUL byte")
        parts = re.split(r"[\\/]+", path)
        if ".." in parts:
            raise ToolFailure(f"refused: {path!r} contains '..'; paths must stay inside the project")
        if os.path.isabs(path):
            literal = os.path.normpath(path)
            if not (
                literal == self.root or literal.startswith(self.root.rstrip(os.sep) + os.sep) or self._inside(literal)
            ):
                raise ToolFailure(f"refused: {path!r} is outside the project directory")
            candidate = literal
        else:
            candidate = os.path.join(self.root, path)
        real = os.path.realpath(candidate)
        if not self._inside(real):
            raise ToolFailure(f"refused: {path!r} resolves outside the project directory (symlink)")
        links = _hard_linked(real)
        if links:
            raise ToolFailure(HARD_LINK_REFUSAL.format(path=path, links=links))
        return real

    def _relative(self, real: str) -> str:
        assert self.real_root is not None
        rel = os.path.relpath(real, self.real_root)
        return "." if rel == "." else rel.replace(os.sep, "/")

    def _walk(self, top: str) -> Iterator[str]:
        """Real paths of regular files under ``top`` (no symlinked directories, nothing outside, no file
        with several hard links)."""
        if os.path.isfile(top):
            yield top
            return
        count = 0
        for directory, dirs, files in os.walk(top, followlinks=False):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not os.path.islink(os.path.join(directory, d)))
            for name in sorted(files):
                path = os.path.join(directory, name)
                real = os.path.realpath(path) if os.path.islink(path) else path
                if not self._inside(real) or not os.path.isfile(real) or _hard_linked(real):
                    continue
                count += 1
                if count > MAX_WALK:
                    return
                yield path

    # ---- tools
    def read(self, args: dict[str, Any]) -> str:
        real = self.resolve(_str(args, "path"))
        offset = _int(args, "offset", 1, low=1)
        limit = min(_int(args, "limit", 400, low=1), 5_000)
        if os.path.isdir(real):
            raise ToolFailure(f"{args['path']!r} is a directory; use Glob to list files")
        if not os.path.isfile(real):
            raise ToolFailure(f"{args['path']!r} does not exist")
        data = read_confined(real, args["path"], MAX_FILE_BYTES + 1)
        if b"\0" in data[:8192]:
            raise ToolFailure(f"{args['path']!r} is a binary file")
        lines = data[:MAX_FILE_BYTES].decode("utf-8", "replace").splitlines()
        chosen = lines[offset - 1 : offset - 1 + limit]
        if not chosen:
            return f"(no lines: the file has {len(lines)} lines)"
        body = "\n".join(f"{offset + i:>6}\t{line[:MAX_LINE]}" for i, line in enumerate(chosen))
        rest = len(lines) - (offset - 1 + len(chosen))
        if rest > 0:
            body += f"\n[{rest} more lines; use offset={offset + len(chosen)}]"
        return _cap(body)

    def grep(self, args: dict[str, Any]) -> str:
        import regex

        pattern = _str(args, "pattern")
        top = self.resolve(_str(args, "path", "."))
        flags = regex.IGNORECASE if args.get("ignore_case") else 0
        try:
            compiled = regex.compile(pattern, flags)
        except regex.error as exc:
            raise ToolFailure(f"invalid regular expression: {exc}") from None
        name_filter = glob_regex(args["glob"]) if isinstance(args.get("glob"), str) and args["glob"] else None
        matches: list[str] = []
        for path in self._walk(top):
            rel = self._relative(path)
            if name_filter is not None and not name_filter.match(rel):
                continue
            try:
                data = read_confined(path, rel, MAX_FILE_BYTES)
            except ToolFailure:
                continue
            if b"\0" in data[:8192]:
                continue
            for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
                try:
                    found = compiled.search(line, timeout=REGEX_TIMEOUT)
                except TimeoutError:
                    raise ToolFailure("the regular expression took too long; simplify it") from None
                if found:
                    matches.append(f"{rel}:{number}: {line.strip()[:300]}")
                    if len(matches) >= MAX_MATCHES:
                        return _cap("\n".join(matches) + f"\n[stopped at {MAX_MATCHES} matches]")
        return _cap("\n".join(matches)) if matches else "(no matches)"

    def glob(self, args: dict[str, Any]) -> str:
        pattern = _str(args, "pattern")
        if ".." in re.split(r"[\\/]+", pattern):
            raise ToolFailure(f"refused: pattern {pattern!r} contains '..'")
        top = self.resolve(_str(args, "path", "."))
        if os.path.isabs(pattern):
            assert self.root is not None and self.real_root is not None
            for base in (self.root, self.real_root):
                prefix = base.rstrip(os.sep) + os.sep
                if pattern.startswith(prefix):
                    pattern, top = pattern[len(prefix) :], self.real_root
                    break
            else:
                raise ToolFailure(f"refused: pattern {pattern!r} is outside the project directory")
        compiled = glob_regex(pattern)
        found = [
            self._relative(path)
            for path in self._walk(top)
            if compiled.match(os.path.relpath(path, top).replace(os.sep, "/"))
        ]
        if not found:
            return "(no files match)"
        extra = f"\n[{len(found) - MAX_GLOB} more files]" if len(found) > MAX_GLOB else ""
        return _cap("\n".join(found[:MAX_GLOB]) + extra)

    def transcript(self, args: dict[str, Any]) -> str:
        from handlers.llm.transcript import read_entries

        if not self.transcript_path:
            raise ToolFailure("this event has no transcript_path")
        try:
            entries = read_entries(self.transcript_path)
        except OSError as exc:
            raise ToolFailure(f"cannot read the transcript: {exc.strerror or exc}") from None
        offset = _int(args, "offset", -40)
        limit = min(_int(args, "limit", 40, low=1), 200)
        start = max(0, len(entries) + offset) if offset < 0 else offset
        chosen = entries[start : start + limit]
        if not chosen:
            return f"(no entries at offset {offset}; the transcript has {len(entries)} entries)"
        body = "\n\n".join(f"[{start + i}] {entry}" for i, entry in enumerate(chosen))
        return _cap(f"(entries {start}-{start + len(chosen) - 1} of {len(entries)})\n\n{body}")

    def run(self, name: str, args: dict[str, Any] | None) -> tuple[str, bool]:
        """Run tool ``name``: ``(output, is_error)``. Never raises for a bad call."""
        tools = {"Read": self.read, "Grep": self.grep, "Glob": self.glob, "Transcript": self.transcript}
        tool = tools.get(name)
        if tool is None:
            return f"unknown tool {name!r} (available: {', '.join(tools)}, submit_verdict)", True
        if args is None:
            return "the tool arguments must be a JSON object", True
        try:
            return tool(args), False
        except ToolFailure as exc:
            return str(exc), True
        except (OSError, ValueError, RecursionError) as exc:
            return f"{name} failed: {type(exc).__name__}: {exc}", True
