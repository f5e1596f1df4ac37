"""Which tool calls write: the classifier behind the ``readOnly`` built-in.

``write_reason(tool_name, tool_input, rules) -> str | None`` names why a call writes (None: it only
reads). Tool names are canonical (Claude Code's; ``gateway.tool_names`` maps every host's names onto them):

- file tools ``Write``, ``Edit``, ``MultiEdit``, ``NotebookEdit`` write;
- ``Bash``: the command is parsed with bashlex; it reads only when every command in it (pipelines,
  lists, subshells, ``$(...)``, loop bodies) is on the read-only list with harmless arguments
  (``find`` without ``-delete``/``-exec``, ``sed`` without ``-i``, ``git status|log|diff|show|...``,
  ``sort`` without ``-o``) and no output is redirected to a file other than ``/dev/null``. A command
  not on the list, or one bashlex cannot parse, counts as a write (read-only mode fails closed);
- Claude Code's other built-in tools (Read, Grep, Glob, WebFetch, TodoWrite, Task, ...) read;
- any other tool (MCP tools ``mcp__server__tool``, a Python agent's own tools): it writes when its
  name matches one of ``rules.write_tools`` (fnmatch globs, case-insensitive) or contains a write verb
  as a word (``rules.write_verbs``: create, delete, update, insert, exec, ...; words are split on
  ``_``, ``-``, ``.``, ``/`` and camelCase), unless it matches ``rules.read_tools``; and whatever its
  name, when a string argument named in ``rules.sql_fields`` is SQL (starts with a SQL keyword) other
  than a plain SELECT (sqlparse; ``SELECT ... INTO`` and data-changing CTEs count as writes; outside
  ``sql``/``statement``/``stmt`` the text must also look like a statement, so ``query: "delete old
  files"`` stays a search).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from typing import Any

from gateway.errors import HookgateError
from gateway.tool_names import FILE_WRITE_TOOLS, SHELL_TOOL

READ_TOOLS = frozenset(
    {
        "Read",
        "Glob",
        "Grep",
        "LS",
        "WebFetch",
        "WebSearch",
        "TodoWrite",
        "TodoRead",
        "Task",
        "Agent",
        "NotebookRead",
        "BashOutput",
        "KillShell",
        "ExitPlanMode",
        "AskUserQuestion",
        "Skill",
        "ToolSearch",
        "ListMcpResourcesTool",
        "ReadMcpResourceTool",
        "Monitor",
    }
)
"""Claude Code built-in tools that change no file (TodoWrite edits the agent's own task list only)."""

WRITE_VERBS = (
    "write",
    "edit",
    "delete",
    "del",
    "remove",
    "rm",
    "create",
    "update",
    "insert",
    "upsert",
    "drop",
    "truncate",
    "alter",
    "rename",
    "move",
    "mv",
    "upload",
    "push",
    "commit",
    "merge",
    "patch",
    "put",
    "post",
    "set",
    "send",
    "exec",
    "execute",
    "run",
    "apply",
    "deploy",
    "install",
    "uninstall",
    "save",
    "modify",
    "replace",
    "append",
    "add",
    "kill",
    "terminate",
    "restart",
    "grant",
    "revoke",
    "publish",
    "archive",
)
"""Words that make a non-built-in tool's name a write (``mcp__db__insert_rows``, ``createIssue``)."""

SQL_FIELDS = ("sql", "query", "statement", "stmt")

RUN_VERBS = frozenset({"run", "exec", "execute"})
"""Verbs that, in the name of a tool given SQL (``run_sql``, ``execute_query``), say it runs that SQL: the
SQL decides (a plain SELECT reads), not the verb."""

READ_COMMANDS = frozenset(
    {
        "ls",
        "cat",
        "head",
        "tail",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "wc",
        "pwd",
        "echo",
        "printf",
        "which",
        "type",
        "whoami",
        "id",
        "date",
        "uname",
        "stat",
        "file",
        "du",
        "df",
        "tree",
        "cut",
        "tr",
        "diff",
        "cmp",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "true",
        "false",
        "test",
        "[",
        "jq",
        "nl",
        "less",
        "more",
        "column",
        "seq",
        "sleep",
        "hostname",
        "ps",
        "printenv",
        "cd",
        "sha256sum",
        "sha1sum",
        "md5sum",
        "comm",
        "od",
        "hexdump",
        "strings",
        "uniq",
        "sort",
        "sed",
        "find",
        "git",
        "xargs",
        "timeout",
        "nice",
        "nohup",
        "time",
        "command",
        "env",
        ":",
    }
)
"""Commands that read (some only with harmless arguments; see ``_argv_reason``)."""

GIT_READ = frozenset(
    {
        "status",
        "log",
        "diff",
        "show",
        "blame",
        "grep",
        "ls-files",
        "ls-tree",
        "rev-parse",
        "describe",
        "shortlog",
        "cat-file",
        "whatchanged",
        "rev-list",
        "name-rev",
        "help",
        "version",
    }
)
_GIT_LIST_FLAGS = frozenset(
    {
        "-a",
        "-r",
        "-l",
        "--list",
        "-v",
        "-vv",
        "--all",
        "--remotes",
        "--show-current",
        "--verbose",
        "--contains",
        "--merged",
        "--no-merged",
    }
)
_FIND_WRITES = frozenset({"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"})
_QUIET_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_OUTPUT_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<>"})
_SED_WRITE = re.compile(r"(^|[;}\n/]\s*)[wW]\s|/[gpIiMme0-9]*w\s")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD_SPLIT = re.compile(r"[_\-./:\s]+")


@dataclass(slots=True)
class WriteRules:
    """Configurable parts of the classifier (``readOnly`` options, snake_case)."""

    write_tools: list[str] = field(default_factory=list)
    read_tools: list[str] = field(default_factory=list)
    write_verbs: list[str] = field(default_factory=lambda: list(WRITE_VERBS))
    sql_fields: list[str] = field(default_factory=lambda: list(SQL_FIELDS))
    read_commands: list[str] = field(default_factory=list)


def write_reason(tool_name: str | None, tool_input: dict[str, Any] | None, rules: WriteRules) -> str | None:
    """Why calling ``tool_name`` with ``tool_input`` writes, or None when it only reads."""
    name = tool_name or ""
    args = tool_input or {}
    if name in FILE_WRITE_TOOLS:
        return f"{name} changes files"
    if name == SHELL_TOOL:
        command = args.get("command")
        return shell_write_reason(command if isinstance(command, str) else "", rules)
    if name in READ_TOOLS:
        return None
    sql: list[tuple[str, str | None]] = []  # (field, why it writes) for each argument that is SQL
    for key in rules.sql_fields:
        value = args.get(key)
        if isinstance(value, str) and is_sql(value, strict=key in STRICT_SQL_FIELDS):
            sql.append((key, sql_write_reason(value, strict=key in STRICT_SQL_FIELDS)))
    if not _globbed(name, rules.read_tools):
        if _globbed(name, rules.write_tools):
            return f"tool {name} matches readOnly.writeTools"
        verb = _write_verb(name, rules.write_verbs)
        # a tool that runs the SQL it is given (run_sql, execute_query) writes only when that SQL does
        if verb is not None and not (verb.lower() in RUN_VERBS and sql):
            return f"tool {name} looks like a write ({verb!r} in its name)"
    for key, why in sql:
        if why is not None:
            return f"tool {name}: {key} {why}"
    return None


def _globbed(name: str, patterns: list[str]) -> bool:
    lowered = name.lower()
    return any(fnmatch.fnmatchcase(lowered, p.lower()) for p in patterns)


def _write_verb(name: str, verbs: list[str]) -> str | None:
    tool = name.split("__", 2)[2] if name.startswith("mcp__") and name.count("__") >= 2 else name
    words = {w.lower() for part in _WORD_SPLIT.split(tool) for w in _CAMEL.split(part) if w}
    return next((v for v in verbs if v.lower() in words), None)


# ---------------------------------------------------------------------------- SQL

_SQL_SHAPE = frozenset(
    {
        "FROM",
        "SET",
        "INTO",
        "TABLE",
        "VALUES",
        "WHERE",
        "INDEX",
        "VIEW",
        "DATABASE",
        "SCHEMA",
        "ON",
        "TO",
        "COLUMN",
        "SEQUENCE",
        "FUNCTION",
        "TRIGGER",
    }
)
"""Words that make a text starting with a SQL keyword look like a statement rather than prose."""
STRICT_SQL_FIELDS = frozenset({"sql", "statement", "stmt"})
"""Fields that hold SQL by name: any text starting with a SQL keyword is taken as SQL. In other fields
(``query``: often a search query) the statement must also have SQL's shape (``FROM``, ``SET``, ``INTO``...)."""


def is_sql(text: str, *, strict: bool = True) -> bool:
    """Whether ``text`` is SQL (starts with a SQL keyword; outside ``strict`` fields it must also have
    SQL's shape, see ``STRICT_SQL_FIELDS``)."""
    import sqlparse
    from sqlparse import tokens as T

    statement: Any
    for statement in sqlparse.parse(text):
        first = statement.token_first(skip_cm=True)
        if first is None:
            continue
        if first.ttype is None or first.ttype not in T.Keyword:
            return False
        return strict or any(t.ttype in T.Keyword and t.normalized.upper() in _SQL_SHAPE for t in statement.flatten())
    return False


def sql_write_reason(text: str, *, strict: bool = True) -> str | None:
    """Why ``text`` is SQL that changes data or schema, or None (not SQL, or only SELECT). ``strict``:
    see ``STRICT_SQL_FIELDS``."""
    import sqlparse
    from sqlparse import tokens as T

    statement: Any
    for statement in sqlparse.parse(text):
        first = statement.token_first(skip_cm=True)
        if first is None:
            continue
        if first.ttype is None or first.ttype not in T.Keyword:
            return None  # not SQL (plain words, a search query)
        if not strict and not any(
            t.ttype in T.Keyword and t.normalized.upper() in _SQL_SHAPE for t in statement.flatten()
        ):
            return None  # "delete old files": a verb, not a statement
        kind = statement.get_type()
        if kind != "SELECT":
            return f"is SQL {kind if kind != 'UNKNOWN' else first.normalized.upper()}, not a SELECT"
        for token in statement.flatten():
            word = token.normalized.upper()
            if (
                (token.ttype in T.Keyword.DML and word != "SELECT")
                or token.ttype in T.Keyword.DDL
                or (token.ttype in T.Keyword and word == "INTO")
            ):
                return f"is a SELECT that writes ({word})"
    return None


# ---------------------------------------------------------------------------- shell


class _Unsure(HookgateError):
    """The command cannot be shown to be read-only."""


def shell_write_reason(command: str, rules: WriteRules) -> str | None:
    """Why the shell ``command`` may write, or None when every part of it only reads."""
    if not command.strip():
        return None
    import bashlex

    try:
        trees = bashlex.parse(command)
    except Exception as exc:  # bashlex raises its own ParsingError, and others on odd input
        return f"shell command cannot be analysed ({type(exc).__name__}), so it may write"
    allowed = READ_COMMANDS | frozenset(rules.read_commands)
    try:
        for tree in trees:
            _walk(tree, allowed)
    except _Unsure as why:
        return str(why)
    return None


def _walk(node: Any, allowed: frozenset[str]) -> None:
    kind = getattr(node, "kind", "")
    if kind == "command":
        _command(node, allowed)
        return
    if kind == "redirect":
        _redirect(node)
    if kind in ("function", "parameter", "tilde", "heredoc"):
        if kind == "function":
            raise _Unsure("shell command defines a function, so it may write")
        return
    for attr in ("parts", "list"):
        for child in getattr(node, attr, None) or []:
            _walk(child, allowed)
    for attr in ("command", "output"):
        child = getattr(node, attr, None)
        if child is not None and hasattr(child, "kind"):
            _walk(child, allowed)


def _redirect(node: Any) -> None:
    target: Any = getattr(node, "output", None)
    word = getattr(target, "word", None)
    if (
        node.type in _OUTPUT_REDIRECTS
        and isinstance(word, str)
        and word not in _QUIET_TARGETS
        and not (node.type == ">&" and word.isdigit())
    ):
        raise _Unsure(f"shell command writes to {word!r} ({node.type})")


def _command(node: Any, allowed: frozenset[str]) -> None:
    words: list[str] = []
    for part in node.parts:
        if part.kind == "redirect":
            _redirect(part)
        elif part.kind == "word":
            for inner in getattr(part, "parts", None) or []:
                if inner.kind in ("commandsubstitution", "processsubstitution"):
                    _walk(inner.command, allowed)
                elif inner.kind == "parameter" and not words:
                    raise _Unsure(f"shell command name {part.word!r} is computed, so it may write")
            words.append(part.word)
        elif part.kind != "assignment":
            _walk(part, allowed)
    if words:
        why = _argv_reason(words, allowed)
        if why is not None:
            raise _Unsure(why)


_PREFIX_ARGS = {"timeout": 1, "nice": 0, "nohup": 0, "time": 0, "command": 0}
_XARGS_WITH_VALUE = frozenset({"-n", "-I", "-P", "-d", "-L", "-s", "-E", "-a", "--max-args", "--delimiter"})


def _argv_reason(argv: list[str], allowed: frozenset[str]) -> str | None:
    name = argv[0].rsplit("/", 1)[-1]
    args = argv[1:]
    if name not in allowed:
        return f"shell command {name!r} may write (not one of readOnly's read-only commands)"
    if name in _PREFIX_ARGS:
        rest = [a for a in args if not a.startswith("-")][_PREFIX_ARGS[name] :]
        return _argv_reason(rest, allowed) if rest else None
    if name == "env":
        rest = [a for a in args if not a.startswith("-") and "=" not in a]
        return _argv_reason(rest, allowed) if rest else None
    if name == "xargs":
        i = 0
        while i < len(args) and args[i].startswith("-"):
            i += 2 if args[i] in _XARGS_WITH_VALUE else 1
        return _argv_reason(args[i:], allowed) if args[i:] else None
    if name == "find" and _FIND_WRITES & set(args):
        return f"find with {sorted(_FIND_WRITES & set(args))[0]} may write"
    if name == "sed" and (
        any(a.startswith(("-i", "--in-place")) for a in args)
        or any(_SED_WRITE.search(a) for a in args if not a.startswith("-"))
    ):
        return "sed -i (or a sed w command) writes files"
    if name == "sort" and any(a.startswith(("-o", "--output")) for a in args):
        return "sort -o writes a file"
    if name == "sort" and any(a.startswith("--compress-program") for a in args):
        return "sort --compress-program runs a program"
    if name in ("less", "more"):
        return _pager_reason(name, args)
    if name == "tree" and any(a == "-o" or a.startswith("-o") for a in args):
        return "tree -o writes a file"
    if name == "date" and any(a in ("-s", "--set") or a.startswith(("--set=", "-s")) for a in args):
        return "date -s sets the clock"
    if name == "hostname" and any(not a.startswith("-") for a in args):
        return "hostname NAME sets the host name"
    if name == "uniq" and len([a for a in args if not a.startswith("-")]) > 1:
        return "uniq with an output file writes it"
    if name == "git":
        return _git_reason(args)
    return None


_GIT_RUNS_CONFIG = ("-c", "--config-env", "--exec-path")
"""git options that set configuration (``core.pager``, ``core.fsmonitor``, ``diff.external``, an alias
...) or where git finds its programs: any of them can make a read-only subcommand run a program."""


_PAGER_SAFE_START = re.compile(r"^\+(\d*|[gGF]|[/?][^!|\n\r]*)$")
"""A pager's ``+COMMAND`` that only moves or searches (``+42``, ``+G``, ``+/pattern``); any other command
(``+!cmd`` runs a shell, ``+|``, ``+s`` saves, ``+v`` opens an editor) may write."""


def _pager_reason(name: str, args: list[str]) -> str | None:
    for arg in args:
        if arg.startswith("+") and not _PAGER_SAFE_START.match(arg):
            return f"{name} {arg[:20]} runs a {name} command at start (it may run a shell or save a file)"
        if name == "less" and arg.startswith(("-o", "-O", "--log-file", "--LOG-FILE")):
            return f"less {arg.split('=', 1)[0]} writes a log file"
    return None


def _git_reason(args: list[str]) -> str | None:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        option = args[i].split("=", 1)[0]
        if option in _GIT_RUNS_CONFIG or (args[i].startswith("-c") and len(args[i]) > 2):
            return f"git {option} may make git run a program (configuration on the command line)"
        i += 2 if args[i] in ("-C", "--git-dir", "--work-tree", "--namespace") else 1
    if i >= len(args):
        return None
    sub, rest = args[i], args[i + 1 :]
    if sub in GIT_READ:
        written = next((a for a in rest if a.split("=", 1)[0] in ("--output", "-o") and sub != "grep"), None)
        if written is not None:
            return f"git {sub} {written.split('=', 1)[0]} writes a file"
        if sub == "grep" and any(a.startswith(("-O", "--open-files-in-pager")) for a in rest):
            return "git grep -O runs a pager program"
        if sub == "help" and any(a in ("-w", "--web", "-i", "--info", "-m", "--man") for a in rest):
            return f"git help {next(a for a in rest if a.startswith('-'))} starts another program"
        return None
    if sub in ("branch", "tag") and all(a in _GIT_LIST_FLAGS for a in rest):
        return None
    if (
        sub == "remote"
        and all(a in ("-v", "--verbose", "show", "get-url") or not a.startswith("-") for a in rest)
        and (not rest or rest[0] in ("-v", "--verbose", "show", "get-url"))
    ):
        return None
    if sub == "config" and any(a in ("--get", "--get-all", "--list", "-l", "--get-regexp") for a in rest):
        return None
    if sub == "stash" and rest[:1] in (["list"], ["show"]):
        return None
    return f"git {sub} may write"
