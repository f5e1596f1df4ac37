"""Gemini CLI dialect (``@google/gemini-cli`` 0.61.0 command hooks in ``.gemini/settings.json``).

Events, host -> canonical: BeforeTool -> PreToolUse, AfterTool -> PostToolUse (PostToolUseFailure
when ``tool_response.error`` is set), BeforeAgent -> UserPromptSubmit, AfterAgent -> Stop,
SessionStart, SessionEnd, PreCompress -> PreCompact, Notification. The model-level events
(BeforeModel, AfterModel, BeforeToolSelection) have no canonical counterpart: ``parse``
returns ``PassedThrough`` and ``hookgate run`` answers "no objection" (exit 0, nothing printed) without
loading a handler. Tool names map through ``gateway.tool_names`` (``run_shell_command`` -> ``Bash``,
``write_file`` -> ``Write``, ``replace`` -> ``Edit``, ``mcp_s_t`` -> ``mcp__s__t``); Gemini's tool
inputs already use Claude Code's field names (``command``, ``file_path``, ``content``,
``old_string``/``new_string``), so ``tool_input`` is passed on unchanged.

Answers (exit 0 and one JSON object, as observed on the real CLI; see tests/e2e/HOSTS.md):

- deny/block on BeforeTool, AfterTool, BeforeAgent, AfterAgent: ``{"decision": "deny", "reason": R}``
  (AfterAgent: the agent goes on with R as its next prompt). A Claude-style ``permissionDecision``
  alone is ignored by Gemini, so it is never relied on.
- ``ask``/``defer``: a deny whose reason says the call needs the user's confirmation (``ask`` hangs
  a headless Gemini run).
- rewrite: ``hookSpecificOutput.tool_input`` (merged over the model's arguments by Gemini).
- context: ``hookSpecificOutput.additionalContext`` (SessionStart, BeforeAgent, AfterTool).
- a rewritten tool output (``updatedToolOutput``) becomes an AfterTool deny whose reason is the
  new output: Gemini cannot replace an output, but it can withhold it.
- ``continue: false`` + ``stopReason``, ``systemMessage``: passed on.
"""

from __future__ import annotations

import json
import time
from functools import lru_cache

from gateway.errors import EventError
from gateway.events import HookEvent, PassedThrough, dumps
from gateway.tool_names import to_canonical, to_host

TYPE_CHECKING = False  # importing typing costs a hook process ~2 ms
if TYPE_CHECKING:
    from typing import Any

    from gateway.decision import Decision

NAME = "gemini"
EVENT_NAMES = {
    "BeforeTool": "PreToolUse",
    "AfterTool": "PostToolUse",
    "BeforeAgent": "UserPromptSubmit",
    "AfterAgent": "Stop",
    "SessionStart": "SessionStart",
    "SessionEnd": "SessionEnd",
    "PreCompress": "PreCompact",
    "Notification": "Notification",
}
MODEL_EVENTS = frozenset({"BeforeModel", "AfterModel", "BeforeToolSelection"})
ALL_EVENTS = frozenset(EVENT_NAMES) | MODEL_EVENTS
GEMINI_ONLY = ALL_EVENTS - {"SessionStart", "SessionEnd", "Notification"}
TO_GEMINI = {
    "PreToolUse": "BeforeTool",
    "PostToolUse": "AfterTool",
    "PostToolUseFailure": "AfterTool",
    "UserPromptSubmit": "BeforeAgent",
    "Stop": "AfterAgent",
    "SubagentStop": "AfterAgent",
    "PreCompact": "PreCompress",
    "SessionStart": "SessionStart",
    "SessionEnd": "SessionEnd",
    "Notification": "Notification",
}
"""Canonical event -> the Gemini event a hook in Gemini's format is registered on."""

_DENYING_EVENTS = frozenset(
    {"PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "Stop", "SubagentStop"}
)
_CONTEXT_EVENTS = frozenset({"SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "PreToolUse"})


def detects(data: dict[str, Any]) -> bool:
    """True for a Gemini payload: a Gemini-only event name, or a shared one with Gemini's ``timestamp``."""
    name = data.get("hook_event_name")
    if name in GEMINI_ONLY:
        return True
    return name in EVENT_NAMES and isinstance(data.get("timestamp"), str) and "turn_id" not in data


def _tool_error(response: Any) -> str | None:
    """The error message of an AfterTool ``tool_response`` (``{llmContent, returnDisplay, error?}``)."""
    if not isinstance(response, dict):
        return None
    error = response.get("error")
    if not error:
        return None
    if isinstance(error, dict):
        return str(error.get("message") or error.get("type") or "tool error")
    return str(error)


def parse(data: dict[str, Any]) -> HookEvent | PassedThrough:
    """Map a Gemini CLI hook input to the canonical event (``PassedThrough`` for the model-level events).

    Raises EventError for a name Gemini does not send.
    """
    name = data.get("hook_event_name")
    if name in MODEL_EVENTS:
        return PassedThrough(
            str(name), NAME, f"Gemini {name} is a model-level event; hookgate passes it through untouched"
        )
    if name not in EVENT_NAMES:
        raise EventError(
            f"unknown Gemini event {name!r} in hook_event_name (expected one of: {', '.join(sorted(ALL_EVENTS))})"
        )
    payload = dict(data)
    canonical = EVENT_NAMES[str(name)]
    host_tool = data.get("tool_name") if isinstance(data.get("tool_name"), str) else None
    if host_tool is not None:
        context = data.get("mcp_context")
        server = context.get("server_name") if isinstance(context, dict) else None
        payload["tool_name"] = to_canonical(NAME, host_tool, mcp_server=server if isinstance(server, str) else None)
    if canonical == "PostToolUse":
        error = _tool_error(data.get("tool_response"))
        if error is not None:
            canonical = "PostToolUseFailure"
            payload.setdefault("error", error)
    elif canonical == "Stop":
        response = data.get("prompt_response")
        if isinstance(response, str):
            payload.setdefault("last_assistant_message", response)
    elif canonical == "SessionStart":
        payload.setdefault("source", "startup")
    payload["hook_event_name"] = canonical
    return HookEvent(payload, dialect=NAME, raw=data, host_tool_name=host_tool)


def host_payload(event: HookEvent) -> dict[str, Any]:
    """The event as a hook registered in a Gemini settings file expects it (Gemini names, a timestamp)."""
    payload = dict(event.payload)
    payload["hook_event_name"] = TO_GEMINI.get(event.name, event.name)
    if event.tool_name:
        payload["tool_name"] = to_host(NAME, event.tool_name)
    if event.name in ("Stop", "SubagentStop") and "prompt_response" not in payload:
        payload["prompt_response"] = payload.get("last_assistant_message") or ""
    if event.name == "PostToolUseFailure" and "tool_response" not in payload:
        error = str(payload.get("error") or "tool error")
        payload["tool_response"] = {"llmContent": error, "returnDisplay": error, "error": {"message": error}}
    if "timestamp" not in payload:
        now = time.time()
        payload["timestamp"] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"
    return payload


def _output_text(value: Any) -> str:
    """The text the model gets for a rewritten tool output (Gemini's own ``llmContent`` when present)."""
    if isinstance(value, dict) and isinstance(value.get("llmContent"), str):
        return str(value["llmContent"])
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def to_json(decision: Decision) -> dict[str, Any]:
    """Gemini's JSON answer for ``decision`` ({} when there is nothing to say)."""
    name = decision.event
    out: dict[str, Any] = {}
    specific: dict[str, Any] = {}
    denied = decision.block or decision.permission == "deny"
    reason = decision.permission_reason if decision.permission is not None else None
    reason = reason or decision.reason
    if name == "PreToolUse" and not denied and decision.permission in ("ask", "defer"):
        why = decision.permission_reason or "a hook asked for the user's confirmation"
        denied, reason = (
            True,
            (
                "hookgate: this call needs the user's confirmation, which a Gemini CLI hook "
                f"cannot ask for, so it is refused: {why}"
            ),
        )
    if denied and name in _DENYING_EVENTS:
        out["decision"] = "deny"
        out["reason"] = reason or "Blocked by hookgate"
    elif name == "PreToolUse" and decision.permission == "allow":
        out["decision"] = "allow"
        if decision.permission_reason:
            out["reason"] = decision.permission_reason
    elif name in ("PostToolUse", "PostToolUseFailure") and decision.updated_output is not None:
        out["decision"] = "deny"  # withhold the real output; the model gets the rewritten one instead
        out["reason"] = _output_text(decision.updated_output)
    if name == "PreToolUse" and decision.updated_input is not None and not denied:
        specific["tool_input"] = decision.updated_input
    if decision.additional_context and name in _CONTEXT_EVENTS:
        specific["additionalContext"] = "\n\n".join(decision.additional_context)
    if not decision.continue_:
        out["continue"] = False
        out["stopReason"] = decision.stop_reason or "Stopped by hookgate"
    if decision.system_message:
        out["systemMessage"] = decision.system_message
    if specific:
        out["hookSpecificOutput"] = {"hookEventName": TO_GEMINI.get(name, name), **specific}
    return out


def render(decision: Decision) -> tuple[int, str, str]:
    """``(exit_code, stdout, stderr)`` for Gemini CLI: always exit 0 with the JSON answer (or nothing)."""
    body = to_json(decision)
    return 0, (dumps(body) + "\n") if body else "", ""


# ------------------------------------------------------------------ hooks written in Gemini's format


def _claude_answer(obj: dict[str, Any], event: HookEvent) -> dict[str, Any]:
    """A Gemini hook's JSON answer restated in Claude Code's vocabulary for ``event``."""
    out: dict[str, Any] = {k: obj[k] for k in ("continue", "stopReason", "systemMessage") if k in obj}
    decision, reason = obj.get("decision"), obj.get("reason")
    specific_in = obj.get("hookSpecificOutput")
    specific_in = specific_in if isinstance(specific_in, dict) else {}
    specific: dict[str, Any] = {}
    tool_event = event.name == "PreToolUse"
    if decision in ("deny", "block"):
        if tool_event:
            specific["permissionDecision"] = "deny"
            specific["permissionDecisionReason"] = (
                reason if isinstance(reason, str) and reason else "No reason provided"
            )
        else:
            out["decision"] = "block"
            out["reason"] = reason if isinstance(reason, str) and reason else "No reason provided"
    elif decision in ("allow", "approve", "ask") and tool_event:
        specific["permissionDecision"] = "ask" if decision == "ask" else "allow"
        if isinstance(reason, str) and reason:
            specific["permissionDecisionReason"] = reason
    if isinstance(specific_in.get("additionalContext"), str):
        specific["additionalContext"] = specific_in["additionalContext"]
    if tool_event and isinstance(specific_in.get("tool_input"), dict):
        specific["updatedInput"] = specific_in["tool_input"]
    if specific:
        out["hookSpecificOutput"] = {"hookEventName": event.name, **specific}
    return out


def answer_to_claude(event: HookEvent, code: int, stdout: str, stderr: str) -> tuple[int, str, str]:
    """How Gemini CLI would read a hook's answer, restated as ``(exit_code, stdout, stderr)`` Claude
    Code reads the same way.

    Gemini parses ``stdout`` (or, when empty, ``stderr``) as JSON whatever the exit code; a JSON
    object decides. Plain text: exit 0 shows it to the user, exit 1 is a warning, any other exit code
    denies with the text as the reason, and an exit code with no text at all lets the action go on.
    """
    from gateway.answers import trim  # a byte order mark is trimmed too: a deny behind one still denies

    text = trim(stdout) or trim(stderr)
    if text.startswith("{"):
        try:
            obj = json.loads(text)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            return 0, dumps(_claude_answer(obj, event)), ""
    if code == 0:
        return 0, (dumps({"systemMessage": text}) if text else ""), ""
    if code == 1 or not text:
        return 1, "", stderr or stdout or f"exit code {code} with no output"
    return 2, "", text


# ------------------------------------------------------------------ matchers from Gemini settings


def matcher_accepts(pattern: str | None, event: HookEvent) -> tuple[bool, str]:
    """Gemini's matcher rule for a group from a Gemini settings file: ``(fits, value tested)``.

    Tool events: a regular expression searched in the Gemini tool name (an invalid one is compared
    exactly, as Gemini does). Other events: the exact value of the event's matcher field
    (``source``, ``trigger``, ...). None, ``""`` and ``"*"`` match everything.
    """
    value = event.matcher_value() or ""
    if event.spec.tool:
        value = (
            event.host_tool_name
            if event.dialect == NAME and event.host_tool_name
            else to_host(NAME, event.tool_name or "")
        )
    if pattern in (None, "", "*"):
        return True, value
    assert pattern is not None
    if not event.spec.tool:
        return pattern == value, value
    return _regex_search(pattern, value), value


@lru_cache(maxsize=128)
def _compiled(pattern: str) -> Any:
    import regex

    try:
        return regex.compile(pattern, regex.V0)
    except regex.error:
        return None


def _regex_search(pattern: str, value: str) -> bool:
    compiled = _compiled(pattern)
    return pattern == value if compiled is None else compiled.search(value) is not None
