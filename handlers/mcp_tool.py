"""The ``mcp_tool`` handler: call a tool of a configured MCP server; its answer is the hook's answer.

Fields (Claude Code's, hooks reference §3.4): ``server`` (a name from ``mcpServers`` or ``mcpConfig``),
``tool``, ``input`` (the tool's arguments object).

Substitution: every *string* value inside ``input`` (at any depth; keys are left alone) may hold ``${path}``
placeholders, a dotted path into the hook event as Claude Code sends it: ``${tool_input.file_path}``,
``${tool_name}``, ``${cwd}``, ``${tool_input.edits.0.new_string}`` (a number indexes a list).
``${CLAUDE_PROJECT_DIR}`` is the project folder (the environment variable, else the event's ``cwd``).
A value that is exactly one ``${path}`` takes the JSON value it points to, type kept (an object stays an
object, a number a number); inside longer text a value is inserted as text (objects and numbers as JSON,
null as nothing). ``$${`` writes a literal ``${``. A path missing from the event is a HandlerError naming
it and what the event has instead.

Answer: the result's ``structured_content`` if it is an object (the SDK's ``{"result": ...}`` wrapping of
non-object return values is undone), validated as hook output by ``gateway.answers.verdict_from_json``;
otherwise the text content blocks, joined by newlines, read like a command's stdout by
``gateway.answers.parse_text`` (JSON only when it starts with ``{``). ``isError: true``, an ``MCPError``,
a dead or unreachable server and a timeout are failures (HandlerError, or the dispatcher's deadline):
non-blocking, or deny/block with ``failClosed: true``.

Sessions are shared and kept warm under ``hookgate serve`` (see ``handlers.mcp_sessions``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from gateway.errors import HandlerError
from handlers.base import Handler

if TYPE_CHECKING:
    from mcp.types import CallToolResult

    from gateway.config.specs import HandlerSpec
    from gateway.context import RunContext
    from gateway.decision import Verdict
    from gateway.events import HookEvent

_TOKEN = re.compile(r"\$\$\{|\$\{([^{}]*)\}")
_WHOLE = re.compile(r"\$\{([^{}]*)\}")
_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*")
_MISSING = object()


class McpToolHandler(Handler):
    """Calls ``tool`` on MCP server ``server`` with ``input`` (see module docstring)."""

    type: ClassVar[str] = "mcp_tool"
    _input: Template | None = None
    """``input`` compiled on the first event (``compile_template``)."""

    @classmethod
    def options_model(cls) -> Any:
        return _options_model()

    def describe(self) -> str:
        return f"mcp {self.spec.options['server']}/{self.spec.options['tool']}"

    async def run(self, event: HookEvent, ctx: RunContext) -> tuple[Verdict, dict[str, Any]]:
        import asyncio

        from handlers.mcp_sessions import sessions_for

        options = self.spec.options
        server, tool = options["server"], options["tool"]
        if self._input is None:
            self._input = compile_template(options.get("input") or {})
        arguments = self._input(event)
        deadline = asyncio.get_running_loop().time() + self.spec.timeout
        result, meta = await sessions_for(ctx).call_tool(server, tool, arguments, deadline=deadline)
        return verdict_from_result(result, event, meta, label=f"{server}/{tool}"), meta

    @classmethod
    def check(cls, spec: HandlerSpec, base_dir: str) -> list[str]:
        return placeholder_problems(spec.options.get("input") or {}, "input")

    @classmethod
    def event_advice(cls, spec: HandlerSpec, event: str) -> list[str]:
        return placeholder_roots(spec.options.get("input") or {}, event, "input")


# ---------------------------------------------------------------------------- the answer


def result_text(result: CallToolResult) -> str:
    """The text content blocks of a tool result, joined by newlines."""
    return "\n".join(str(getattr(b, "text", "")) for b in result.content if getattr(b, "type", None) == "text")


MAX_ERROR_TEXT = 2000
"""Characters of a tool's own error text kept in the handler's message (and so in a failClosed deny)."""


def error_text(text: str) -> str:
    """A tool's error text on one line: every line kept (joined with `` / ``), capped at ``MAX_ERROR_TEXT``
    characters, so the tool's own reason reaches the deny reason whole."""
    joined = " / ".join(" ".join(line.split()) for line in text.splitlines() if line.strip())
    return joined if len(joined) <= MAX_ERROR_TEXT else joined[: MAX_ERROR_TEXT - 3] + "..."


def verdict_from_result(result: CallToolResult, event: HookEvent, meta: dict[str, Any], *, label: str) -> Verdict:
    """Read a ``CallToolResult`` as a hook answer (see module docstring); notes ``meta["answer"]``.

    Raises HandlerError for ``is_error`` and for output that fails the hook output schema.
    """
    from gateway.answers import parse_text, verdict_from_json

    text = result_text(result)
    if result.is_error:
        meta["is_error"] = True
        raise HandlerError(f"tool {label} returned an error (isError): {error_text(text) or 'no detail'}", meta)
    structured = result.structured_content
    if isinstance(structured, dict) and len(structured) == 1 and "result" in structured:
        structured = structured["result"]  # the SDK wraps non-object return values as {"result": value}
    if isinstance(structured, dict):
        meta["answer"] = "structured"
        verdict = verdict_from_json(structured, event)
        told = _text_verdict(text, event)
        if told is not None and told != verdict and _tighter(told, verdict):
            meta["answer"] = "text"  # the two disagree: the more restrictive stands, never the looser
            return told
        return verdict
    if isinstance(structured, str):
        text = structured
    meta["answer"] = "text"
    return parse_text(text, event)


def _text_verdict(text: str, event: HookEvent) -> Verdict | None:
    """The text content's own hook answer (a JSON object, beside the structured content: MCP has both say
    the same), or None for a human summary or text that does not read as one."""
    from gateway.answers import trim, verdict_from_json

    stripped = trim(text)
    if not stripped.startswith("{"):
        return None
    try:
        obj = json.loads(stripped)
        return verdict_from_json(obj, event) if isinstance(obj, dict) else None
    except (ValueError, HandlerError):
        return None


def _tighter(a: Verdict, b: Verdict) -> bool:
    """Whether ``a`` holds the action back more than ``b``: a deny or block over an ask, an ask over an allow
    or no decision, a stop over going on."""

    def rank(v: Verdict) -> int:
        if v.permission == "deny" or v.block:
            return 3
        if v.permission == "ask":
            return 2
        if not v.continue_:
            return 1
        return 0

    return rank(a) > rank(b)


# ---------------------------------------------------------------------------- ${path} substitution


def _lookup(event: HookEvent, path: str) -> Any:
    payload = event.payload
    if path == "CLAUDE_PROJECT_DIR" and path not in payload:
        return event.project_dir or os.environ.get("CLAUDE_PROJECT_DIR") or event.cwd or os.getcwd()
    current: Any = payload
    parts = path.split(".")
    for i, part in enumerate(parts):
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            where = ".".join(parts[:i]) or "the event"
            if isinstance(current, dict):
                has = f"it has: {', '.join(sorted(map(str, current))) or 'nothing'}"
                what = f"{where} has no {part!r} ({has})"
            elif isinstance(current, list):
                what = f"{where} has {len(current)} item(s)"
            else:
                what = f"{where} is {type(current).__name__}, not an object"
            raise HandlerError(f"${{{path}}} is not in this {event.name} event: {what}")
    return current


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return "" if value is None else json.dumps(value, ensure_ascii=False)


Template = Callable[["HookEvent"], Any]
"""A compiled ``input``: the event in, the substituted value out (see ``compile_template``)."""


def _located(where: str, fill: Callable[[HookEvent], Any]) -> Template:
    def run(event: HookEvent) -> Any:
        try:
            return fill(event)
        except HandlerError as exc:
            raise HandlerError(f"{where}: {exc}") from None

    return run


def compile_template(value: Any, where: str = "input") -> Template:
    """``value``'s ``${path}`` substitution (see module docstring) as a function of the event, its strings
    parsed once: a handler compiles its ``input`` on its first event and reuses it on every later one.

    The function builds new containers on every call and raises HandlerError (``input.key: ${path} is not in
    this ... event: ...``) for a missing path.
    """
    if isinstance(value, str):
        whole = _WHOLE.fullmatch(value)
        if whole is not None:
            path = whole.group(1).strip()
            return _located(where, lambda event: _lookup(event, path))
        if "${" not in value:
            return lambda event: value
        parts: list[tuple[bool, str]] = []  # (is a path, text or path)
        at = 0
        for match in _TOKEN.finditer(value):
            parts.append((False, value[at : match.start()]))
            parts.append((False, "${") if match.group(1) is None else (True, match.group(1).strip()))
            at = match.end()
        parts.append((False, value[at:]))
        return _located(
            where, lambda event: "".join(_as_text(_lookup(event, p)) if is_path else p for is_path, p in parts)
        )
    if isinstance(value, dict):
        items = [(k, compile_template(v, f"{where}.{k}")) for k, v in value.items()]
        return lambda event: {k: fill(event) for k, fill in items}
    if isinstance(value, list):
        fills = [compile_template(v, f"{where}[{i}]") for i, v in enumerate(value)]
        return lambda event: [fill(event) for fill in fills]
    return lambda event: value


def substitute(value: Any, event: HookEvent, where: str = "input") -> Any:
    """``value`` with every ``${path}`` in its strings replaced from ``event`` (see module docstring).

    Raises HandlerError (``input.key: ${path} is not in this ... event: ...``) for a missing path.
    """
    return compile_template(value, where)(event)


def fill_text(text: str, event: HookEvent) -> str:
    """``text`` with every ``${path}`` replaced by the event's value as text (objects and numbers as JSON,
    null as nothing) and ``$${`` by ``${``. A path the event lacks does not spoil the rest: it alone is
    replaced by ``[${path} is not in this EVENT event: what it has]``. Never raises."""

    def one(match: re.Match[str]) -> str:
        path = match.group(1)
        if path is None:
            return "${"
        try:
            return _as_text(_lookup(event, path.strip()))
        except HandlerError as exc:
            return f"[{exc}]"

    return _TOKEN.sub(one, text)


def placeholder_roots(value: Any, event: str, where: str = "input") -> list[str]:
    """Load-time warnings for the ``${path}`` placeholders in ``value`` whose first name is not a field of
    ``event`` (``${tool_inptu.command}``, ``${cwdd}``): ``where.key: ${path}: 'root' is not a field ...``."""
    from gateway.event_fields import unknown_root

    notes = []
    for at, text in _strings(value, where):
        for match in _TOKEN.finditer(text):
            path = match.group(1)
            if path is not None and _PATH.fullmatch(path.strip()):  # a malformed path is check()'s error
                note = unknown_root(path.strip(), event)
                if note is not None:
                    notes.append(f"{at}: {note}")
    return notes


def _strings(value: Any, where: str) -> list[tuple[str, str]]:
    if isinstance(value, str):
        return [(where, value)]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in _strings(v, f"{where}.{k}")]
    if isinstance(value, list):
        return [s for i, v in enumerate(value) for s in _strings(v, f"{where}[{i}]")]
    return []


def placeholder_problems(value: Any, where: str = "input") -> list[str]:
    """Load-time check of every ``${...}`` in ``value``: the path syntax, unclosed or nested braces."""
    problems = []
    for at, text in _strings(value, where):
        for match in _TOKEN.finditer(text):
            path = match.group(1)
            if path is not None and not _PATH.fullmatch(path.strip()):
                problems.append(
                    f"{at}: ${{{path}}} is not a path into the event (expected dotted names such "
                    "as ${tool_input.file_path}, ${tool_name} or ${tool_input.edits.0.new_string})"
                )
        if "${" in _TOKEN.sub("", text):
            problems.append(f"{at}: unclosed or nested '${{' in {text!r} (write $${{ for a literal ${{)")
    return problems


# ---------------------------------------------------------------------------- validate --check-servers


def input_problems(value: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """Check ``input`` against a tool's JSON Schema (jsonschema). Values that are only known when the
    event arrives are not judged: a whole ``${path}`` value at all, a string with placeholders only by
    its type. Returns ``input.path: message`` lines."""
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    dynamic: list[tuple[tuple[Any, ...], bool]] = []  # (path, whole value)

    def mark(node: Any, path: tuple[Any, ...]) -> None:
        if isinstance(node, str) and _TOKEN.search(node):
            dynamic.append((path, _WHOLE.fullmatch(node) is not None))
        elif isinstance(node, dict):
            for k, v in node.items():
                mark(v, (*path, k))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                mark(v, (*path, i))

    mark(value, ())
    try:
        cls = validator_for(schema)
        cls.check_schema(schema)
    except SchemaError as exc:
        return [f"input: the tool's input schema is invalid ({exc.message}); not checked"]
    problems = []
    for error in sorted(cls(schema).iter_errors(value), key=lambda e: list(map(str, e.absolute_path))):
        path = tuple(error.absolute_path)
        skip = False
        for dyn, whole in dynamic:
            if path[: len(dyn)] == dyn and (whole or error.validator != "type"):
                skip = True
        if skip:
            continue
        at = "input" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
        problems.append(f"{at}: {error.message} (the tool's input schema)")
    return problems


def _options_model() -> Any:
    from pydantic import BaseModel, ConfigDict, Field

    class McpToolOptions(BaseModel):
        model_config = ConfigDict(extra="allow", populate_by_name=True)
        server: str = Field(min_length=1)
        tool: str = Field(min_length=1)
        input: dict[str, Any] = Field(default_factory=dict)

    return McpToolOptions
