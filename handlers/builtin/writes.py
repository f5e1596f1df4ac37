"""Which tool calls write: the classifier behind the ``readOnly`` built-in.

``write_reason(tool_name, tool_input, rules) -> str | None`` names why a call writes (None: it only
reads). Tool names are canonical (Claude Code's; ``gateway.tool_names`` maps every host's names onto them):

- file tools ``Write``, ``Edit``, ``MultiEdit``, ``NotebookEdit`` write;
- ``Bash``: the command is parsed with bashlex; it reads only when every command in it (pipelines,
  lists, subshells, ``$(...)``, ``${x:-$(...)}``, loop bodies) is on the read-only list with harmless
  arguments (``find`` without ``-delete``/``-exec``, ``sed`` without ``-i``, ``w`` or ``e``,
  ``git status|log|diff|show|...``, ``sort`` without ``-o``), no output is redirected to a file other
  than ``/dev/null`` and no variable that makes programs run a command (``GIT_PAGER``, ``LESSOPEN``...)
  is set. A command not on the list, or one bashlex cannot parse, counts as a write (read-only mode
  fails closed; ``handlers.builtin.shell_writes``);
- ``PowerShell`` (Claude Code's tool): the script is read with the shell guard's PowerShell reader; it
  reads only when every statement is a known read-only cmdlet or command with no redirection to a file
  (``handlers.builtin.ps_writes``);
- Claude Code's other built-in tools (Read, Grep, Glob, WebFetch, TodoWrite, Task, ...) read;
- any other tool (MCP tools ``mcp__server__tool``, a Python agent's own tools): it writes when its
  name matches one of ``rules.write_tools`` (fnmatch globs, case-insensitive) or contains a write verb
  as a word (``rules.write_verbs``: create, delete, update, insert, exec, ...; words are split on
  ``_``, ``-``, ``.``, ``/`` and camelCase), unless it matches ``rules.read_tools``; and whatever its
  name, when a string argument named in ``rules.sql_fields`` is SQL (starts with a SQL keyword) other
  than a plain SELECT (sqlparse; ``SELECT ... INTO``, data-changing CTEs and functions with side effects,
  ``SIDE_EFFECT_FUNCTIONS``: ``setval``, ``pg_terminate_backend``, ``lo_export``, count as writes; outside
  ``sql``/``statement``/``stmt`` the text must also look like a statement, so ``query: "delete old
  files"`` stays a search).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from typing import Any

from gateway.tool_names import FILE_WRITE_TOOLS, SHELL_TOOL
from handlers.builtin.shell_writes import shell_write_reason as bash_write_reason

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

POWERSHELL_TOOL = "PowerShell"
"""Claude Code's PowerShell tool: its ``command`` is a PowerShell script (``handlers.builtin.ps_writes``)."""

SQL_FIELDS = ("sql", "query", "statement", "stmt")

RUN_VERBS = frozenset({"run", "exec", "execute"})
"""Verbs that, in the name of a tool given SQL (``run_sql``, ``execute_query``), say it runs that SQL: the
SQL decides (a plain SELECT reads), not the verb."""

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
    if name == POWERSHELL_TOOL:
        from handlers.builtin.ps_writes import powershell_write_reason

        command = args.get("command")
        return powershell_write_reason(command if isinstance(command, str) else "", rules.read_commands)
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
        return strict or _shaped(statement) or _called(statement) is not None
    return False


def _shaped(statement: Any) -> bool:
    """Whether a parsed statement has SQL's shape (a ``_SQL_SHAPE`` keyword)."""
    from sqlparse import tokens as T

    return any(t.ttype in T.Keyword and t.normalized.upper() in _SQL_SHAPE for t in statement.flatten())


def _called(statement: Any) -> str | None:
    """The first function with side effects (``SIDE_EFFECT_FUNCTIONS``) a parsed statement calls, or None."""
    from sqlparse import tokens as T

    tokens = [t for t in statement.flatten() if not t.is_whitespace]
    for k, token in enumerate(tokens[:-1]):
        if (token.ttype in T.Name or token.ttype in T.Keyword) and tokens[k + 1].value == "(":
            called = _side_effect(token.value)
            if called is not None:
                return called
    return None


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
        called = _called(statement)
        if not strict and not _shaped(statement) and called is None:
            return None  # "delete old files": a verb, not a statement
        kind = statement.get_type()
        if kind != "SELECT":
            return f"is SQL {kind if kind != 'UNKNOWN' else first.normalized.upper()}, not a SELECT"
        if called is not None:
            return f"is a SELECT that calls {called}(), which changes the database or the server"
        for token in statement.flatten():
            word = token.normalized.upper()
            if (
                (token.ttype in T.Keyword.DML and word != "SELECT")
                or token.ttype in T.Keyword.DDL
                or (token.ttype in T.Keyword and word == "INTO")
            ):
                return f"is a SELECT that writes ({word})"
    return None


SIDE_EFFECT_FUNCTIONS = frozenset(
    {
        *("setval", "nextval", "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile"),
        *("set_config", "pg_notify", "pg_switch_wal", "pg_promote", "pg_create_restore_point", "pg_backup_start"),
        *("pg_backup_stop", "pg_start_backup", "pg_stop_backup", "pg_wal_replay_pause", "pg_wal_replay_resume"),
        *("pg_import_system_collations", "pg_log_backend_memory_contexts", "pg_logical_emit_message"),
        *("query_to_xml", "query_to_xmlschema", "query_to_xml_and_xmlschema", "cursor_to_xml"),
        *("load_extension", "writefile", "edit", "fts3_tokenizer", "get_lock", "release_lock", "release_all_locks"),
    }
)
"""Functions a "plain SELECT" may call that change data, the database's state or the server (PostgreSQL's
sequences, backends, configuration, WAL, large objects; SQLite's ``load_extension``/``writefile``; MySQL's
locks); names starting with ``SIDE_EFFECT_PREFIXES`` too. ``pg_sleep`` only waits: it stays a read."""
SIDE_EFFECT_PREFIXES = ("lo_", "dblink", "pg_create_", "pg_drop_", "pg_replication_", "pg_stat_reset", "pg_file_")


def _side_effect(name: str) -> str | None:
    """``name`` (a SQL identifier, maybe schema-qualified or quoted) when it is a function with side effects."""
    bare = name.strip('"`[]').rsplit(".", 1)[-1].strip('"`[]').lower()
    return bare if bare in SIDE_EFFECT_FUNCTIONS or bare.startswith(SIDE_EFFECT_PREFIXES) else None


# ---------------------------------------------------------------------------- shell


def shell_write_reason(command: str, rules: WriteRules) -> str | None:
    """Why the shell ``command`` may write, or None when every part of it only reads (``shell_writes``)."""
    return bash_write_reason(command, rules.read_commands)
