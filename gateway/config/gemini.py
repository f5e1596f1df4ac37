"""A Gemini CLI settings ``hooks`` block as a hookgate config.

Gemini's shape (``@google/gemini-cli`` 0.61.0, ``hookRegistry``)::

    {"hooks": {"BeforeTool": [{"matcher": "run_shell_command", "sequential": false,
                               "hooks": [{"type": "command", "command": "...", "name": "...",
                                          "timeout": 10000, "description": "...", "env": {...}}]}]},
     "hooksConfig": {"enabled": true, "disabled": ["<hook name>", ...]}}

A block is read as Gemini's when it names at least one Gemini-only event (BeforeTool, AfterTool,
BeforeAgent, AfterAgent, PreCompress, BeforeModel, AfterModel, BeforeToolSelection) and no Claude
Code-only one, or when the file has ``hooksConfig``. Each hook becomes a ``command`` handler on
the canonical event (``gateway.dialects.gemini.EVENT_NAMES``) run by ``bash -c`` as Gemini runs it:

- ``timeout`` is in **milliseconds** (default 60000) and becomes seconds;
- ``name`` becomes the handler ``id``; hooks named in ``hooksConfig.disabled`` are skipped, and
  ``hooksConfig.enabled: false`` skips the whole block (both with a warning);
- ``matcher``: a regular expression on Gemini's tool name for BeforeTool/AfterTool, an exact value
  for the other events (matched by ``gateway.dialects.gemini.matcher_accepts``);
- the hook gets the event in Gemini's shape (Gemini event and tool names, a ``timestamp``) and its
  answer is read as Gemini reads it (``gateway.dialects.gemini.answer_to_claude``);
- ``$GEMINI_PROJECT_DIR``, ``$GEMINI_CWD`` and ``$GEMINI_SESSION_ID`` are set for the command when
  it uses them (Gemini sets them; under another host they fall back to the project dir, the cwd and
  the session id), and ``env`` is exported;
- hooks on the model-level events are not run (hookgate passes those events through): a warning.
Only ``type: "command"`` exists in Gemini's format; other handler types belong in a Claude Code-format
config.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING, Any

from gateway.dialects.gemini import ALL_EVENTS, EVENT_NAMES, GEMINI_ONLY, MODEL_EVENTS

if TYPE_CHECKING:
    from gateway.config.schema import Compilation

GEMINI_ALL_EVENTS = ALL_EVENTS
GEMINI_TO_CLAUDE = EVENT_NAMES
DEFAULT_TIMEOUT_MS = 60_000
MAX_TIMEOUT_S = 900.0
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_GEMINI_VARS = {
    "GEMINI_PROJECT_DIR": "$CLAUDE_PROJECT_DIR",
    "GEMINI_CWD": "$PWD",
    "GEMINI_SESSION_ID": "${CLAUDE_CODE_SESSION_ID-}",
}


def is_gemini_block(hooks: dict[str, Any], doc: dict[str, Any]) -> bool:
    """True when ``hooks`` is written in Gemini CLI's settings format (see module docstring)."""
    if "hooksConfig" in doc:
        return True
    from gateway.events import EVENTS

    return any(k in GEMINI_ONLY for k in hooks) and not any(k in EVENTS and k not in ALL_EVENTS for k in hooks)


def _models() -> tuple[Any, Any]:
    from pydantic import BaseModel, ConfigDict, Field

    class GeminiHook(BaseModel):
        model_config = ConfigDict(extra="allow")
        type: str
        command: str | None = Field(None, min_length=1)
        name: str | None = Field(None, min_length=1)
        timeout: float | None = Field(None, gt=0)
        description: str | None = None
        env: dict[str, str] | None = None

    class GeminiGroup(BaseModel):
        model_config = ConfigDict(extra="allow")
        matcher: str | None = None
        sequential: bool = False
        hooks: list[dict[str, Any]]

    return GeminiHook, GeminiGroup


def command_for(command: str, env: dict[str, str] | None) -> str:
    """The shell command hookgate runs for a Gemini hook: ``command``, preceded by exports of the
    ``GEMINI_*`` variables it uses (kept when Gemini already set them) and of its ``env``."""
    exports = [f'{name}="${{{name}:-{fallback}}}"' for name, fallback in _GEMINI_VARS.items() if name in command]
    exports += [f"{name}={shlex.quote(value)}" for name, value in (env or {}).items()]
    return f"export {' '.join(exports)}; {command}" if exports else command


def add_gemini(compiler: Compilation, path: str, base_dir: str, hooks: dict[str, Any], hooks_config: Any) -> None:
    """Validate a Gemini ``hooks`` block into ``compiler`` (issues and warnings name file and place)."""

    from gateway.config.schema import suggest

    disabled: set[str] = set()
    if hooks_config is not None:
        if not isinstance(hooks_config, dict):
            compiler.issues.append(f"{path}: hooksConfig: expected an object (enabled, disabled, notifications)")
            return
        if hooks_config.get("enabled", True) is False:
            compiler.warnings.append(
                f"{path}: hooksConfig.enabled is false: Gemini runs none of these hooks, and neither does hookgate"
            )
            return
        names = hooks_config.get("disabled") or []
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            compiler.issues.append(f"{path}: hooksConfig.disabled: expected a list of hook names")
            return
        disabled = set(names)
    hook_model, group_model = _models()
    for gemini_event, groups in hooks.items():
        where = f"{path}: hooks.{gemini_event}"
        if gemini_event in MODEL_EVENTS:
            compiler.warnings.append(
                f"{where}: {gemini_event} is a model-level Gemini event; hookgate passes it "
                "through untouched and does not run these hooks"
            )
            continue
        if gemini_event not in EVENT_NAMES:
            hint = suggest(str(gemini_event), sorted(ALL_EVENTS))
            compiler.issues.append(f"{where}: unknown Gemini CLI event {gemini_event!r}{hint}")
            continue
        event = EVENT_NAMES[gemini_event]
        if not isinstance(groups, list):
            compiler.issues.append(f"{where}: expected a list of hook definitions, got {type(groups).__name__}")
            continue
        for gi, raw in enumerate(groups):
            group_where = f"{where}[{gi}]"
            group = compiler.validated(group_model, raw, group_where, known=["matcher", "sequential", "hooks"])
            if group is None:
                continue
            handlers = []
            for hi, entry in enumerate(group.hooks):
                handler = _handler(compiler, f"{group_where}.hooks[{hi}]", entry, hook_model, disabled)
                if handler is not None:
                    handlers.append(handler)
            if group.hooks and not handlers:
                continue  # every hook disabled or invalid (already reported)
            from gateway.events import EVENTS

            matcher = group.matcher if EVENTS[event].matcher_field is not None else None
            compiler.add_group(
                event,
                group_where,
                base_dir,
                {"matcher": matcher, "hooks": handlers, "sequential": group.sequential},
                "gemini",
            )


def _handler(
    compiler: Compilation, where: str, entry: Any, hook_model: Any, disabled: set[str]
) -> dict[str, Any] | None:
    hook = compiler.validated(
        hook_model,
        entry,
        where,
        unknown="field for a Gemini hook",
        known=["type", "command", "name", "timeout", "description", "env"],
    )
    if hook is None:
        return None
    if hook.type != "command":
        compiler.issues.append(
            f'{where}.type: Gemini CLI hooks are type "command" only (got {hook.type!r}); '
            "write other handler types in a Claude Code-format hookgate config"
        )
        return None
    if hook.command is None:
        compiler.issues.append(f"{where}.command: required (the shell command Gemini runs with bash -c)")
        return None
    if hook.name is not None and hook.name in disabled:
        compiler.warnings.append(f"{where}: hook {hook.name!r} is listed in hooksConfig.disabled; skipped")
        return None
    bad = [name for name in (hook.env or {}) if not _ENV_NAME.match(name)]
    if bad:
        compiler.issues.append(f"{where}.env: {bad[0]!r} is not a valid environment variable name")
        return None
    seconds = (hook.timeout if hook.timeout is not None else DEFAULT_TIMEOUT_MS) / 1000
    if seconds > MAX_TIMEOUT_S:
        compiler.warnings.append(
            f"{where}.timeout: {hook.timeout:g} ms is over {MAX_TIMEOUT_S:g} s; hookgate uses {MAX_TIMEOUT_S:g} s"
        )
        seconds = MAX_TIMEOUT_S
    handler: dict[str, Any] = {
        "type": "command",
        "command": command_for(hook.command, hook.env),
        "shell": "bash",
        "timeout": seconds,
    }
    if hook.name is not None:
        handler["id"] = hook.name
    return handler
