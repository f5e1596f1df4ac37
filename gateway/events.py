"""Hook events: the table of Claude Code's 31 events and the canonical ``HookEvent``.

Event names, fields and per-event semantics follow Claude Code's hooks reference (v2.1.240): which
field a ``matcher`` filters, which handler types an event accepts, whether exit code 2 blocks,
whether plain stdout becomes context, and the default timeouts (seconds).

``HookEvent`` is deliberately a thin typed view over the event dict (no pydantic on this path: a
hook runs on every tool call, and the envelope check below is a small type table). Unknown fields are
preserved untouched in ``payload`` and ``raw``.
"""

from __future__ import annotations

import json

from gateway.errors import EventError, EventUndecodable
from gateway.records import Record
from gateway.wire import MAX_EVENT_BYTES as MAX_EVENT_BYTES  # largest event accepted (bytes)

TYPE_CHECKING = False  # typing and dataclasses cost a hook process ~6 ms to import: not on this path
if TYPE_CHECKING:
    from typing import Any


class PassedThrough(Record):
    """A host event hookgate passes through untouched: no handler runs (Gemini's model-level events,
    Codex's ``Interrupt``). A value a dialect's ``parse`` returns instead of a ``HookEvent``, not an error.

    name: the host's event name. dialect: the dialect that recognised it. reason: one line saying why.
    answer: ``(exit_code, stdout, stderr)`` to give the host (its "no objection").
    """

    __slots__ = ("name", "dialect", "reason", "answer")  # noqa: RUF023  (in field order)

    def __init__(self, name: str, dialect: str, reason: str, answer: tuple[int, str, str] = (0, "", "")) -> None:
        self.name = name
        self.dialect = dialect
        self.reason = reason
        self.answer = answer


class EventSpec:
    """Per-event rules from Claude Code's hooks reference (read-only by convention).

    matcher_field: the input field a ``matcher`` filters (None: the event ignores matchers).
    judgment: prompt/agent handlers are accepted. tool: a tool event (``if`` rules apply).
    blocks: exit code 2 (or ``decision: block``) blocks the action. plain_context: plain stdout on
    exit 0 becomes context. default_timeout: seconds for command/http/mcp_tool when not the usual 600.
    exact_chars: the character set that keeps a matcher on the exact-name path.
    """

    __slots__ = (
        "blocks",
        "default_timeout",
        "exact_chars",
        "judgment",
        "matcher_field",
        "name",
        "plain_context",
        "tool",
    )

    def __init__(
        self,
        name: str,
        matcher_field: str | None = None,
        *,
        judgment: bool = False,
        tool: bool = False,
        blocks: bool = False,
        plain_context: bool = False,
        default_timeout: float | None = None,
        exact_chars: str = "A-Za-z0-9_\\- ,|",
    ) -> None:
        self.name = name
        self.matcher_field = matcher_field
        self.judgment = judgment
        self.tool = tool
        self.blocks = blocks
        self.plain_context = plain_context
        self.default_timeout = default_timeout
        self.exact_chars = exact_chars

    def __repr__(self) -> str:
        return f"EventSpec({self.name!r})"


def _specs(*specs: EventSpec) -> dict[str, EventSpec]:
    return {s.name: s for s in specs}


EVENTS: dict[str, EventSpec] = _specs(
    EventSpec("SessionStart", "source", plain_context=True),
    EventSpec("Setup", "trigger"),
    EventSpec("InstructionsLoaded", "load_reason"),
    EventSpec("UserPromptSubmit", None, judgment=True, blocks=True, plain_context=True, default_timeout=30),
    EventSpec("UserPromptExpansion", "command_name", judgment=True, blocks=True, plain_context=True),
    EventSpec("MessageDisplay", None, default_timeout=10),
    EventSpec("PreToolUse", "tool_name", judgment=True, tool=True, blocks=True),
    EventSpec("PermissionRequest", "tool_name", judgment=True, tool=True),
    EventSpec("PermissionDenied", "tool_name", judgment=True, tool=True),
    EventSpec("PostToolUse", "tool_name", judgment=True, tool=True, blocks=True),
    EventSpec("PostToolUseFailure", "tool_name", judgment=True, tool=True, blocks=True),
    EventSpec("PostToolBatch", None, judgment=True, blocks=True),
    EventSpec("Notification", "notification_type"),
    EventSpec("SubagentStart", "agent_type"),
    EventSpec("SubagentStop", "agent_type", judgment=True, blocks=True),
    EventSpec("TaskCreated", None, judgment=True, blocks=True),
    EventSpec("TaskCompleted", None, judgment=True, blocks=True),
    EventSpec("Stop", None, judgment=True, blocks=True),
    EventSpec("StopFailure", "error", exact_chars="A-Za-z0-9_|"),
    EventSpec("TeammateIdle", None, judgment=True, blocks=True),
    EventSpec("ConfigChange", "source", blocks=True),
    EventSpec("CwdChanged", None),
    EventSpec("DirectoryAdded", "source"),
    EventSpec("FileChanged", "file_path", exact_chars="A-Za-z0-9_|"),
    EventSpec("WorktreeCreate", None, blocks=True),
    EventSpec("WorktreeRemove", None),
    EventSpec("PreCompact", "trigger", blocks=True),
    EventSpec("PostCompact", "trigger"),
    EventSpec("SessionEnd", "reason", default_timeout=1.5),
    EventSpec("Elicitation", "mcp_server_name", blocks=True),
    EventSpec("ElicitationResult", "mcp_server_name", blocks=True),
)

TOOL_EVENTS = frozenset(n for n, s in EVENTS.items() if s.tool)
STOP_EVENTS = frozenset({"Stop", "SubagentStop"})
CONTINUE_EVENTS = frozenset(
    {"Stop", "SubagentStop", "TeammateIdle", "TaskCompleted", "PostToolUse", "PostToolUseFailure", "PostToolBatch"}
)
"""Events where a block does not hold an action back but makes the agent keep working."""
PERMISSION_EVENTS = frozenset({"PreToolUse", "PermissionRequest"})
"""Events whose answer is a permission decision (deny/ask/allow) rather than a block."""

# Envelope type checks: field -> (python types, description). Absent fields are fine.
_FIELD_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "session_id": ((str,), "a string"),
    "transcript_path": ((str,), "a string"),
    "cwd": ((str,), "a string"),
    "permission_mode": ((str,), "a string"),
    "tool_name": ((str,), "a string"),
    "tool_input": ((dict,), "an object"),
    "tool_use_id": ((str,), "a string"),
    "prompt": ((str,), "a string"),
    "stop_hook_active": ((bool,), "true or false"),
    "last_assistant_message": ((str,), "a string"),
    "agent_id": ((str,), "a string"),
    "agent_type": ((str,), "a string"),
    "source": ((str,), "a string"),
}

_PATH_FIELDS = frozenset({"cwd", "transcript_path", "agent_transcript_path"})
"""Fields that name a file or folder: a NUL in one is a malformed event (a command hook could not even start
in that cwd: "embedded null byte"), rejected with the other malformed fields."""


class HookEvent:
    """One hook event in canonical (Claude Code) form.

    name: canonical event name (a key of ``EVENTS``). payload: the event as Claude Code would send it
    (``hook_event_name`` canonical, unknown fields kept). dialect: the host it came from (``claude``,
    ``kiro``, ...). raw: the host's payload exactly as received. host_tool_name: the tool's name in
    the host's own vocabulary (e.g. Kiro's ``execute_bash``), or None. project_dir: the hook caller's
    ``CLAUDE_PROJECT_DIR`` when it is not hookgate's own (set by ``hookgate serve``), or None.
    """

    __slots__ = ("dialect", "host_tool_name", "name", "payload", "project_dir", "raw")

    def __init__(
        self,
        payload: dict[str, Any],
        *,
        dialect: str = "claude",
        raw: dict[str, Any] | None = None,
        host_tool_name: str | None = None,
    ) -> None:
        name = payload.get("hook_event_name")
        if not isinstance(name, str) or not name:
            raise EventError('event has no hook_event_name (expected a string such as "PreToolUse")')
        if name not in EVENTS:
            raise EventError(f"unknown event {name!r} in hook_event_name")
        checks = _FIELD_TYPES.get
        for field, value in payload.items():  # the fields it has (fewer than the fields checked)
            check = checks(field)
            if check is not None and value is not None and not isinstance(value, check[0]):
                raise EventError(f"event field {field!r} must be {check[1]}, got {type(value).__name__}")
            if field in _PATH_FIELDS and isinstance(value, str) and "\x00" in value:  # never a real path
                raise EventError(f"event field {field!r} must be a path, without NUL characters")
        self.name = name
        self.payload = payload
        self.dialect = dialect
        self.raw = raw if raw is not None else payload
        self.host_tool_name = host_tool_name
        self.project_dir: str | None = None  # the caller's CLAUDE_PROJECT_DIR when it differs from ours (serve)

    @property
    def spec(self) -> EventSpec:
        return EVENTS[self.name]

    def get(self, key: str, default: Any = None) -> Any:
        return self.payload.get(key, default)

    @property
    def session_id(self) -> str | None:
        return self.payload.get("session_id")

    @property
    def cwd(self) -> str | None:
        return self.payload.get("cwd")

    @property
    def transcript_path(self) -> str | None:
        return self.payload.get("transcript_path")

    @property
    def tool_name(self) -> str | None:
        return self.payload.get("tool_name")

    @property
    def tool_input(self) -> dict[str, Any] | None:
        return self.payload.get("tool_input")

    @property
    def stop_hook_active(self) -> bool:
        return bool(self.payload.get("stop_hook_active"))

    def matcher_value(self) -> str | None:
        """The value a ``matcher`` is tested against for this event (None: matchers are ignored)."""
        field = self.spec.matcher_field
        if field is None:
            return None
        value = self.payload.get(field)
        if field == "file_path" and isinstance(value, str):
            return value.replace("\\", "/").rsplit("/", 1)[-1]
        return value if isinstance(value, str) else ""

    def with_tool_input(self, tool_input: dict[str, Any]) -> HookEvent:
        """A copy whose ``tool_input`` is replaced (used by ``sequential`` groups)."""
        return self.with_fields(tool_input=tool_input)

    def with_fields(self, **fields: Any) -> HookEvent:
        """A copy with these payload fields replaced (``tool_input``, ``tool_response``: the rewrites a
        ``sequential`` group or a chain of class hooks passes along)."""
        payload = {**self.payload, **fields}
        raw = {**self.raw, **fields}
        event = HookEvent(payload, dialect=self.dialect, raw=raw, host_tool_name=self.host_tool_name)
        event.project_dir = self.project_dir
        return event

    def to_json(self) -> str:
        return dumps(self.payload)

    def copy_payload(self) -> dict[str, Any]:
        import copy

        return copy.deepcopy(self.payload)

    def __repr__(self) -> str:
        return f"HookEvent({self.name!r}, tool_name={self.tool_name!r}, dialect={self.dialect!r})"


# built once: json.dumps with any argument builds a new JSONEncoder on every call
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_COMPACT_ASCII = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"))


def dumps(value: Any) -> str:
    """Compact JSON text for a hook's stdin or a webhook body: UTF-8 text as is; a lone surrogate
    (which a JSON event may legally carry as ``\\udfff``) is kept as an escape instead of failing."""
    text = _COMPACT.encode(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _COMPACT_ASCII.encode(value)
    return text


def dump_bytes(value: Any) -> bytes:
    """``dumps(value)`` encoded as UTF-8 (encoded once: for an HTTP body)."""
    text = _COMPACT.encode(value)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _COMPACT_ASCII.encode(value).encode("ascii")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number (RFC 8259 has no NaN or Infinity)")


_DECODER = json.JSONDecoder(parse_constant=_no_constant)
"""Python's ``json`` reads ``NaN``, ``Infinity`` and ``-Infinity``, which no JSON parser has to: passed on to a
hook as they came, they make a strict parser (``JSON.parse``, ``jq``) fail, and a failed hook lets the call
through. An event holding one is undecodable (denied where a block holds an action back)."""
_STRICT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def check_event_value(event: dict[str, Any]) -> None:
    """Raise EventError unless ``event`` (a dict given to the Python API) is what a JSON event decodes to:
    str keys (int, float, bool and None keys are written as strings, as ``json`` does); str, int, float
    (finite), bool, None, list and dict values (tuples count as lists); nested at
    most ``MAX_DEPTH`` levels (EventUndecodable, as for a JSON body). The message names the first bad
    field (``tool_input.n``). One C-speed encoding; the walk that names the field runs only on failure."""
    try:
        text = _STRICT.encode(event)
    except (ValueError, TypeError, RecursionError):
        where, why = _first_non_json(event)
        raise EventError(f"event field {where!r} {why}") from None
    if text.count("[") + text.count("{") > MAX_DEPTH and _too_deep(event):
        raise EventUndecodable(f"event is nested too deeply to decode (over {MAX_DEPTH} levels)")


def json_problem(value: Any, root: str = "(value)") -> str | None:
    """None when ``value`` is a JSON value (as ``check_event_value`` says), else a one-line reason naming
    its first bad field: ``'hookSpecificOutput.updatedInput.timeout' holds nan, which JSON has no number
    for (RFC 8259)`` (``root`` names the value itself). One C-speed encoding; the walk runs only on failure."""
    try:
        _STRICT.encode(value)
    except (ValueError, TypeError, RecursionError):
        where, why = _first_non_json(value, root)
        return f"{where!r} {why}"
    return None


def json_safe(value: Any) -> Any:
    """``value`` itself when a JSON event can hold it (see ``check_event_value``), else a copy that can
    (``gateway.plain.plain``: what JSON cannot carry becomes an ``[unencodable: ...]`` string, NaN
    ``"NaN"``): for what the Python host API puts in an event on its own, a tool's result (any object) and
    the arguments a python handler rewrote, so a PostToolUse hook always gets an event it can read."""
    try:
        text = _STRICT.encode(value)
    except (ValueError, TypeError, RecursionError):
        text = None
    if text is None or (text.count("[") + text.count("{") > MAX_DEPTH and _too_deep(value)):
        from gateway.plain import plain

        return plain(value)
    return value


def _first_non_json(value: Any, root: str = "(event)") -> tuple[str, str]:
    """``(path, why)`` of the first value JSON cannot carry in ``value`` (iterative, depth-capped; ``root``
    is the path of ``value`` itself)."""
    import math

    stack: list[tuple[str, Any, int]] = [("", value, 0)]
    while stack:
        path, item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return path or root, f"nests deeper than {MAX_DEPTH} levels"
        if isinstance(item, float) and not math.isfinite(item):
            return path, f"holds {item!r}, which JSON has no number for (RFC 8259)"
        if isinstance(item, dict):
            for key, child in reversed(item.items()):
                if not isinstance(key, (str, int, float, bool)) and key is not None:
                    return path or root, f"has a {type(key).__name__} key {key!r} (JSON keys are strings)"
                stack.append((f"{path}.{key}" if path else str(key), child, depth + 1))
        elif isinstance(item, (list, tuple)):
            stack.extend((f"{path}[{i}]", child, depth + 1) for i, child in reversed(list(enumerate(item))))
        elif not isinstance(item, (str, int, float, bool)) and item is not None:
            return path, f"holds a {type(item).__name__}, which is not a JSON value"
    return root, "cannot be encoded as JSON"


def decode_event_bytes(data: bytes | bytearray) -> dict[str, Any]:
    """Decode one event body: a UTF-8 JSON object (``bytes`` or ``bytearray``; the readers apply the
    size limit, see ``gateway.oversize``).

    Raises EventError with a one-line reason (not UTF-8, not JSON, not an object).
    """
    bom = 3 if data[:3] == b"\xef\xbb\xbf" else 0  # a leading byte-order mark is tolerated (by hand: the
    try:  # utf-8-sig codec is one more import on the hook path)
        text = (data[bom:] if bom else data).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EventError(f"event is not valid UTF-8 (byte {exc.start + bom})") from None
    if not text or text.isspace():  # (not text.strip(): that would copy a large event once more)
        raise EventError("event is empty (expected one JSON object)")
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise EventError(f"event is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise EventUndecodable(f"event is nested too deeply to decode (over {MAX_DEPTH} levels)") from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise EventUndecodable(f"event cannot be decoded: {exc}") from None
    if not isinstance(value, dict):
        raise EventError(f"event must be a JSON object, got {type(value).__name__}")
    if text.count("[") + text.count("{") > MAX_DEPTH and _too_deep(value):  # counting is C-fast: few events walk
        raise EventUndecodable(f"event is nested too deeply to decode (over {MAX_DEPTH} levels)")
    return value


MAX_DEPTH = 200
"""Deepest nesting of objects and arrays an event may have (levels, the event object itself is level 1).
Python's recursion limit (1,000 frames) is not a safe bound by itself: an event a little under it decodes,
and then every later step that walks it (the JSON encoders of a command's stdin and the audit record, the
redactor) runs out of frames at a depth of its own, each failing in its own way (a handler error: a
policy that lapses). A cap far below it fails them all together, at decoding: denied, not passed."""


def _too_deep(value: Any) -> bool:
    """True when ``value`` nests deeper than ``MAX_DEPTH`` (iterative: it visits containers only, so an
    event whose brackets sit inside strings, such as a Write of a JSON file, costs a few steps)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False
