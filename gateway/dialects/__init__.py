"""Dialects: how each host's hook JSON maps to the canonical ``HookEvent`` and back.

A dialect module exposes ``NAME``, ``EVENT_NAMES`` (host event name -> canonical),
``parse(data) -> HookEvent | PassedThrough``, ``render(decision) -> (exit_code, stdout, stderr)`` and
``host_payload(event) -> dict`` (the event as a hook written for this host expects it on stdin).
Optional: ``detects(data) -> bool`` (for ``--dialect auto``, when the event name alone cannot tell,
as with Codex, whose event names are Claude Code's) and ``answer_to_claude(event, code, stdout,
stderr)`` (how a hook written in the host's own format answered, restated in Claude Code's terms so
``gateway.answers`` can read it).

An event the gateway deliberately does not handle (Gemini's model-level events, Codex's ``Interrupt``)
parses to a ``gateway.events.PassedThrough`` value carrying the host's "no objection" answer.
"""

from __future__ import annotations

import sys

from gateway.errors import EventError

TYPE_CHECKING = False  # importing typing costs a hook process ~2 ms
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

    from gateway.decision import Decision
    from gateway.events import HookEvent, PassedThrough

DIALECTS = {
    "claude": "gateway.dialects.claude",
    "kiro": "gateway.dialects.kiro",
    "gemini": "gateway.dialects.gemini",
    "codex": "gateway.dialects.codex",
}
DETECT_ORDER = ("kiro", "gemini", "codex")


def get_dialect(name: str) -> ModuleType:
    """The dialect module for ``name``. Raises EventError for an unknown dialect."""
    module = DIALECTS.get(name)
    if module is None:
        raise EventError(f"unknown dialect {name!r} (expected one of: {', '.join(DIALECTS)}, auto)")
    __import__(module)  # not importlib.import_module: importlib's package imports warnings (~0.4 ms a hook call)
    return sys.modules[module]


def detect(data: dict[str, Any]) -> str:
    """Pick the dialect of a decoded event (falls back to ``claude``, which reports unknown events).

    Kiro and Gemini are told apart by ``hook_event_name``; Codex (Claude Code's event names) by its
    own fields (``turn_id``, a ``rollout-*.jsonl`` transcript). ``hookgate install`` always passes
    ``--dialect``, so detection is only a convenience.
    """
    name = data.get("hook_event_name")
    if not isinstance(name, str):
        return "claude"  # which then reports the missing or malformed hook_event_name
    for dialect in DETECT_ORDER:
        module = get_dialect(dialect)
        detects = getattr(module, "detects", None)
        if detects(data) if detects is not None else name in module.EVENT_NAMES:
            return dialect
    return "claude"


def parse_event(data: dict[str, Any], dialect: str = "auto") -> HookEvent | PassedThrough:
    """Parse a decoded event with ``dialect`` (``auto`` detects): the ``HookEvent``, or ``PassedThrough``
    for a host event hookgate leaves alone. Raises EventError for a malformed or unknown event, also for
    one whose fields have shapes no dialect expects: malformed input is always a one-line EventError,
    never another exception."""
    if not isinstance(data, dict):
        raise EventError(f"event must be a JSON object, got {type(data).__name__}")
    name = data.get("hook_event_name")
    if not isinstance(name, str) or not name:
        got = "nothing" if name is None else f"{type(name).__name__} {_short(name)}"
        raise EventError(f'event has no hook_event_name (expected a string such as "PreToolUse", got {got})')
    module = get_dialect(detect(data) if dialect == "auto" else dialect)
    try:
        event: HookEvent | PassedThrough = module.parse(data)
    except EventError:
        raise
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, RecursionError) as exc:
        raise EventError(
            f"malformed {name[:60]!r} event for the {module.NAME} dialect: {type(exc).__name__}: {_short(exc)}"
        ) from None
    return event


def _short(value: object) -> str:
    """``value`` in at most 80 characters on one line (for messages)."""
    text = " ".join((str(value) if isinstance(value, BaseException) else repr(value)).split())
    return text if len(text) <= 80 else text[:77] + "..."


def render(decision: Decision, dialect: str) -> tuple[int, str, str]:
    """What the host gets for ``decision`` (``hookgate run``'s output, ``hookgate serve``'s envelope, the
    Python API): ``(exit_code, stdout, stderr)`` in ``dialect``'s form, its stderr starting with one
    ``hookgate: handler ID STATUS: message`` line per failed handler whose failure the answer's own text
    does not already give (a ``failClosed`` deny's reason names it). The one place a decision is
    rendered; each dialect module's own ``render`` says how its host reads an answer."""
    code, out, err = get_dialect(dialect).render(decision)
    notes = "".join(  # (not again when the answer's own text says it: a failClosed deny's reason)
        f"hookgate: handler {r.id} {r.status}: {r.message}\n"
        for r in decision.results
        if r.failed and not (r.message and f"({r.status}: {r.message})" in err)
    )
    return code, out, notes + err


def host_payload(event: HookEvent, dialect: str) -> dict[str, Any]:
    """The event as a hook configured in ``dialect``'s format expects it on stdin."""
    if event.dialect == dialect:
        return event.raw
    result: dict[str, Any] = get_dialect(dialect).host_payload(event)
    return result


def answer_to_claude(dialect: str, event: HookEvent, code: int, stdout: str, stderr: str) -> tuple[int, str, str]:
    """A hook's answer in ``dialect``'s format, restated as Claude Code would have read it (exit code,
    stdout, stderr). Dialects whose hooks answer as Claude Code does (or by exit code only) return it
    unchanged."""
    if dialect == "claude":
        return code, stdout, stderr
    translate = getattr(get_dialect(dialect), "answer_to_claude", None)
    if translate is None:
        return code, stdout, stderr
    result: tuple[int, str, str] = translate(event, code, stdout, stderr)
    return result
