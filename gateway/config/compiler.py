"""Config validation (pydantic) and normalization into the plain dict ``gateway.config`` caches.

Accepted inputs, detected from content:
- a Claude Code ``hooks`` block, verbatim: ``{"hooks": {"PreToolUse": [...]}}`` or just
  ``{"PreToolUse": [...]}`` (JSON or YAML);
- a whole Claude Code ``settings.json`` or plugin ``hooks.json`` (keys other than ``hooks`` ignored);
- a Kiro CLI 2.x agent config (``hooks.agentSpawn|userPromptSubmit|preToolUse|postToolUse|stop``,
  entries ``{command, matcher?, timeout_ms?, cache_ttl_seconds?}``);
- a Gemini CLI settings ``hooks`` block (``BeforeTool``, ``AfterAgent``, ...; timeouts in milliseconds;
  ``hooksConfig.enabled``/``disabled`` honoured), see ``gateway.config.gemini``; a Codex CLI
  ``hooks.json`` is Claude Code's format and loads as such;
- hookgate's own sections next to ``hooks``: ``mcpServers``, ``mcpConfig``, ``llm``, ``settings``, ``guards``.

Every problem is reported as ``file: path.inside: what was expected`` (ConfigError.issues); problems
that Claude Code would silently accept but that never do what the user meant are errors here
(see README, "What validate catches"). Unknown handler fields are warnings, not errors, so configs
written for newer Claude Code versions still load.
"""

from __future__ import annotations

import json
import os
from typing import Any

from gateway.config.documents import read_document
from gateway.config.gemini import GEMINI_ALL_EVENTS, GEMINI_TO_CLAUDE, is_gemini_block
from gateway.config.schema import (
    COMMON_KEYS,
    KIRO_EVENTS,
    MS_LIKE_TIMEOUT,
    CommandCheck,
    CommonFields,
    Compilation,
    Group,
    KiroHook,
    salvaged,
    suggest,
)
from gateway.config.specs import HandlerSpec
from gateway.errors import ConfigError
from gateway.events import EVENTS
from gateway.matching import IfRule, matcher_problem, matcher_warning
from handlers.base import handler_class

JUDGMENT_REFUSED = frozenset({"SessionStart", "Setup", "SubagentStart"})
"""Events where Claude Code refuses prompt/agent hooks with a config error (elsewhere it ignores them)."""


def _short_label(type_name: str, options: dict[str, Any]) -> str:
    """The label of a handler's default id (``<type>:<label>``). It never holds what may be a secret (ids
    are stored in audit records and shown in logs as they are): a command's first word that is not an
    assignment (``TOKEN=x ./hook.sh`` is ``hook.sh``), a URL's host and path without its user
    information, query or fragment (``?token=...``)."""
    if type_name == "command":
        words = [w for w in str(options.get("command", "")).split() if "=" not in w.split("/", 1)[0]][:1]
        return os.path.basename(words[0]) if words else "command"
    if type_name == "http":
        rest = str(options.get("url", "")).split("://", 1)[-1].split("#", 1)[0].split("?", 1)[0]
        authority, slash, path = rest.partition("/")
        return (authority.rpartition("@")[2] + slash + path)[:60]
    if type_name == "mcp_tool":
        return f"{options.get('server')}/{options.get('tool')}"
    if type_name == "python":
        return str(options.get("callable") or options.get("hook") or "python")
    if type_name == "builtin":
        return str(options.get("name"))
    return type_name


def _type_problem(entry: dict[str, Any]) -> str:
    """What is wrong with a handler entry's ``type`` that is not a string: missing (``required``) or
    given as another kind of value (named, with the value), then every type a config may name."""
    from handlers.base import handler_types

    choices = f"one of {', '.join(handler_types())}"
    if "type" not in entry:
        return f"required, {choices}"
    value = entry["type"]
    shown = repr(value) if len(repr(value)) <= 60 else f"{repr(value)[:57]}..."
    kind = "nothing (null)" if value is None else f"{type(value).__name__} {shown}"
    return f"expected a string, {choices}; got {kind}"


class Compiler(Compilation):
    """Reads config files in order into one normalized config (see module docstring)."""

    # ---- files
    def add_file(self, path: str) -> None:
        doc = read_document(path)
        if doc is None or doc == {}:  # an empty file, `null`, only comments, `{}`: a file caught half-written
            self.issues.append(
                f"{path}: the config is empty: a policy file that says nothing is taken for a "
                "broken one (write `hooks: {}` to configure no hooks on purpose)"
            )
            return
        if not isinstance(doc, dict):
            self.issues.append(f"{path}: the config must be an object (mapping), got {type(doc).__name__}")
            return
        base_dir = os.path.dirname(path)
        if "hooks" in doc and doc["hooks"] is None:
            self.issues.append(
                f"{path}: hooks: empty (null): write `hooks: {{}}` to configure no hooks on purpose, "
                "or list events under it"
            )
            return
        hooks = doc.get("hooks") if "hooks" in doc else None
        if hooks is None and any(k in EVENTS or k in KIRO_EVENTS or k in GEMINI_ALL_EVENTS for k in doc):
            hooks, doc = doc, {"hooks": doc}  # a bare hooks block
        if hooks is None:
            from gateway.config.sections import known_top_level_keys

            known = known_top_level_keys()
            if not any(k in known for k in doc):
                hints = "; ".join(f"{k!r}{suggest(str(k), known)}" for k in list(doc)[:5])
                self.issues.append(
                    f"{path}: no recognised top-level key (got {hints}): expected hooks (and "
                    f"optionally {', '.join(k for k in known if k != 'hooks')}), or a bare hooks "
                    "block keyed by event name"
                )
                return
        if hooks is not None and not isinstance(hooks, dict):
            self.issues.append(f"{path}: hooks: expected an object keyed by event name, got {type(hooks).__name__}")
            return
        hooks = hooks or {}
        kiro_keys = [k for k in hooks if k in KIRO_EVENTS]
        if kiro_keys and len(kiro_keys) == len(hooks):
            self._add_kiro(path, base_dir, hooks)
        elif is_gemini_block(hooks, doc):
            from gateway.config.gemini import add_gemini

            add_gemini(self, path, base_dir, hooks, doc.get("hooksConfig"))
        elif not self._all_hooks_disabled(path, doc):
            self._add_claude(path, base_dir, hooks)
        self._add_sections(path, base_dir, doc)

    def _all_hooks_disabled(self, path: str, doc: dict[str, Any]) -> bool:
        """True for a Claude Code settings file with ``"disableAllHooks": true``: Claude Code runs none of
        its hooks, so hookgate runs none either (with a warning, as for Gemini's ``hooksConfig.enabled:
        false``). A value that is not true or false is a warning and changes nothing."""
        value = doc.get("disableAllHooks", False)
        if value is True:
            self.warnings.append(
                f"{path}: disableAllHooks is true: Claude Code runs none of these hooks, and neither does hookgate"
            )
            return True
        if value is not False:
            self.warnings.append(
                f"{path}: disableAllHooks: expected true or false, got {type(value).__name__}; ignored"
            )
        return False

    def _add_sections(self, path: str, base_dir: str, doc: dict[str, Any]) -> None:
        from gateway.config.sections import compile_sections

        compile_sections(self, path, base_dir, doc)

    # ---- Claude Code format
    def _add_claude(self, path: str, base_dir: str, hooks: dict[str, Any]) -> None:
        for event, groups in hooks.items():
            where = f"{path}: hooks.{event}"
            if event not in EVENTS:
                hint = suggest(str(event), list(EVENTS) + list(KIRO_EVENTS))
                if event in KIRO_EVENTS:
                    hint = (
                        " (a Kiro event name: one hooks block uses one host's event names; "
                        f"Claude Code calls it {KIRO_EVENTS[event]!r})"
                    )
                if event in GEMINI_ALL_EVENTS:
                    hint = (
                        " (a Gemini CLI event: one hooks block uses one host's event names; "
                        f"Claude Code calls it {GEMINI_TO_CLAUDE.get(event, 'nothing')!r})"
                    )
                self.issues.append(f"{where}: unknown event {event!r}{hint}")
                continue
            if not isinstance(groups, list):
                self.issues.append(f"{where}: expected a list of matcher groups, got {type(groups).__name__}")
                continue
            for gi, raw in enumerate(groups):
                self.add_group(event, f"{where}[{gi}]", base_dir, raw, "claude")

    def add_group(self, event: str, where: str, base_dir: str, raw: Any, dialect: str) -> None:
        """Validate one matcher group of ``event`` (from a ``dialect`` config) and add it."""
        group = self.validated(Group, raw, where, unknown="group field", known=["matcher", "hooks", "sequential"])
        if group is None:  # still look at its handlers: every problem and warning is reported at once
            entries = raw.get("hooks") if isinstance(raw, dict) else None
            for hi, entry in enumerate(entries if isinstance(entries, list) else []):
                self._handler(event, f"{where}.hooks[{hi}]", base_dir, entry, dialect)
            return
        spec = EVENTS[event]
        if group.matcher not in (None, "", "*"):
            assert group.matcher is not None
            if spec.matcher_field is None:
                self.warnings.append(
                    f"{where}.matcher: {event} has no matcher field; the matcher is ignored "
                    "and the group runs on every event"
                )
            elif dialect == "claude":
                problem = matcher_problem(group.matcher, spec.exact_chars)
                if problem:
                    self.issues.append(f"{where}.matcher: {problem}")
                elif warning := matcher_warning(group.matcher, spec.exact_chars):
                    self.warnings.append(f"{where}.matcher: {warning}")
        handlers = []
        for hi, entry in enumerate(group.hooks):
            handler = self._handler(event, f"{where}.hooks[{hi}]", base_dir, entry, dialect)
            if handler is not None:
                handlers.append(handler)
        if not group.hooks:
            self.warnings.append(f"{where}.hooks: empty list; the group does nothing")
        matcher = group.matcher if spec.matcher_field is not None else None
        self.hooks.setdefault(event, []).append(
            {
                "matcher": matcher,
                "handlers": handlers,
                "where": where,
                "sequential": group.sequential,
                "dialect": dialect,
            }
        )

    def _handler(self, event: str, where: str, base_dir: str, entry: Any, dialect: str) -> dict[str, Any] | None:
        if not isinstance(entry, dict):
            self.issues.append(f"{where}: expected a handler object, got {type(entry).__name__}")
            return None
        type_name = entry.get("type")
        if not isinstance(type_name, str):
            self.issues.append(f"{where}.type: {_type_problem(entry)}")
            return None
        try:
            cls = handler_class(type_name)
        except ConfigError as exc:
            self.issues.append(f"{where}.type: {exc}")
            return None
        before = len(self.issues)
        # every independent problem of the entry is reported at once: a field that fails its schema is
        # reported and then left out (``salvaged``), so the checks of the other fields still run
        common = self.validated(CommonFields, entry, where, unknown=None)  # extra keys are the type's own
        if common is None:
            common = salvaged(CommonFields, entry)
        options: dict[str, Any] = {}
        model = cls.options_model()
        if model is not None:
            known = sorted(COMMON_KEYS | {f.alias or n for n, f in model.model_fields.items()})
            own = {k: entry[k] for k in set(entry) - COMMON_KEYS}
            parsed = self.validated(model, own, where, unknown=f"field for a {type_name} handler", known=known)
            if parsed is None:
                parsed = salvaged(model, own)
            if parsed is None:  # a required field is missing or wrong: nothing more can be checked
                return None
            options = parsed.model_dump(mode="json", exclude=set(parsed.model_extra or {}))
        if common is None:
            return None
        spec = EVENTS[event]
        judgment = cls.judgment  # the handler class is the one source of truth
        ignored = self._ignored_as_claude_code_does(event, where, type_name, common, options, judgment)
        if common.if_ is not None and spec.tool:
            rules = [common.if_] if isinstance(common.if_, str) else common.if_
            if not rules:
                self.issues.append(f"{where}.if: empty list (expected one or more permission rules)")
            for i, rule in enumerate(rules):
                try:
                    IfRule.parse(rule)
                except ConfigError as exc:
                    self.issues.append(f"{where}.if{'' if isinstance(common.if_, str) else f'[{i}]'}: {exc}")
        if judgment and not spec.judgment and event in JUDGMENT_REFUSED:
            self.issues.append(
                f"{where}.type: {type_name} handlers are not accepted on {event} (Claude Code "
                "refuses prompt/agent hooks there with a config error)"
            )
        if judgment and common.fail_closed:
            self.issues.append(
                f"{where}.failClosed: not allowed on {type_name} handlers: an LLM check is a soft "
                "check whose failure must never block; put hard invariants in a command, "
                "http or mcp_tool handler"
            )
        if common.fail_closed and (common.async_ or common.async_rewake) and not judgment and type_name != "approval":
            key = "async" if common.async_ else "asyncRewake"
            self.warnings.append(
                f"{where}.failClosed: has no effect with {key}: true: a handler in the background cannot decide, "
                f"so the call goes ahead whether it fails or denies; drop {key} to enforce it"
            )
        if common.once is not None:
            self.warnings.append(f"{where}.once: honoured only in skill frontmatter by Claude Code; ignored")
        if ignored:
            return None  # Claude Code accepts it and never runs it: so does hookgate (with the warning)
        default_timeout = cls.default_timeout
        if spec.default_timeout is not None and not judgment:
            default_timeout = min(default_timeout, spec.default_timeout)
        label = common.id or f"{type_name}:{_short_label(type_name, options)}"
        count = self.ids.get(label, 0) + 1
        self.ids[label] = count
        handler = HandlerSpec(
            type=type_name,
            id=label if count == 1 else f"{label}#{count}",
            where=where,
            timeout=common.timeout or default_timeout,
            fail_closed=common.fail_closed or cls.fails_closed,
            priority=common.priority,
            if_rule=common.if_,
            async_=(common.async_ or common.async_rewake) and not judgment,
            cache_ttl=common.cache_ttl,
            status_message=common.status_message,
            dialect=dialect,
            base_dir=base_dir,
            options=options,
        )
        self.warnings.extend(f"{where}.{note}" for note in cls.advice(handler))
        self.warnings.extend(f"{where}.{note}" for note in cls.event_advice(handler, event))
        problems = list(cls.check(handler, base_dir))
        if type_name == "command" and self.command_check is not None:  # validate: hookgate's own words
            usage, notes = self.command_check(options)
            problems.extend(usage)
            self.warnings.extend(f"{where}.{note}" for note in notes)
        if problems:  # the handler cannot run: an error for validate, a fail-closed failure at run time
            handler.problem = "; ".join(problems)
            self.broken.extend(f"{where}: {p}" for p in problems)
        self.issues.extend(f"{where}: {p}" for p in cls.event_problems(handler, event))
        if len(self.issues) > before:
            return None  # reported; the config does not load
        return {name: getattr(handler, name) for name in handler.__slots__}

    def _ignored_as_claude_code_does(
        self, event: str, where: str, type_name: str, common: Any, options: dict[str, Any], judgment: bool
    ) -> bool:
        """Warn about what Claude Code accepts and ignores; True when it never runs the handler at all.

        A pasted Claude Code config must never turn into "deny everything": where Claude Code loads a
        setting and quietly ignores it, hookgate runs the rest the same way and ``validate`` warns.
        """
        spec = EVENTS[event]
        never = False
        if common.if_ is not None and not spec.tool:
            self.warnings.append(
                f"{where}.if: 'if' only applies to tool events (PreToolUse, PostToolUse, "
                f"PostToolUseFailure, PermissionRequest, PermissionDenied); on {event} this handler "
                "never runs (as in Claude Code); the rest of the config runs"
            )
            never = True
        if judgment and not spec.judgment and event not in JUDGMENT_REFUSED:
            self.warnings.append(
                f"{where}.type: Claude Code does not run {type_name} handlers on {event} (the "
                "answer cannot change anything there); this handler never runs"
            )
            never = True
        if judgment and (common.async_ or common.async_rewake):
            key = "async" if common.async_ else "asyncRewake"
            self.warnings.append(
                f"{where}.{key}: LLM checks do not run in the background (command and http handlers do); this "
                f"{type_name} handler runs in the foreground (as in Claude Code)"
            )
        if common.timeout is not None and common.timeout >= MS_LIKE_TIMEOUT:
            self.warnings.append(
                f"{where}.timeout: in seconds: {common.timeout:g} s is "
                f"{common.timeout / 60:.4g} minutes (did you mean {common.timeout / 1000:g}?); "
                "used as written, as Claude Code does"
            )
        if type_name == "command" and options.get("args") is not None and options.get("shell"):
            self.warnings.append(f"{where}.shell: ignored with args (the exec form runs no shell), as in Claude Code")
        return never

    # ---- Kiro 2.x agent config
    def _add_kiro(self, path: str, base_dir: str, hooks: dict[str, Any]) -> None:
        for kiro_event, entries in hooks.items():
            where = f"{path}: hooks.{kiro_event}"
            event = KIRO_EVENTS[kiro_event]
            if not isinstance(entries, list):
                self.issues.append(f"{where}: expected a list of hooks, got {type(entries).__name__}")
                continue
            for i, raw in enumerate(entries):
                if isinstance(raw, dict) and "hooks" in raw and "command" not in raw:  # Claude's group shape
                    self.issues.append(
                        f"{where}[{i}]: a Claude Code matcher group ({{matcher, hooks}}) under a Kiro event name: "
                        f"this block's events are all Kiro's (agentSpawn, preToolUse, ...), whose entries are "
                        f"{{command, matcher}}; in Claude Code's format the event is {event!r}"
                    )
                    continue
                hook = self.validated(KiroHook, raw, f"{where}[{i}]", unknown="field for a Kiro hook")
                if hook is None:
                    continue
                handler: dict[str, Any] = {"type": "command", "command": hook.command, "shell": "bash"}
                handler["timeout"] = hook.timeout_ms / 1000 if hook.timeout_ms else 30.0
                if hook.cache_ttl_seconds:
                    handler["cacheTtl"] = hook.cache_ttl_seconds
                if hook.max_output_size:
                    handler["maxOutputSize"] = hook.max_output_size
                matcher = hook.matcher if EVENTS[event].tool else None
                self.add_group(event, f"{where}[{i}]", base_dir, {"matcher": matcher, "hooks": [handler]}, "kiro")

    def result(self, paths: list[str]) -> dict[str, Any]:
        from gateway.config.sections import finish_sections

        finish_sections(self)
        if self.issues:
            error = ConfigError(
                f"{len(self.issues)} config error(s); first: {self.issues[0]}", self.issues + self.broken
            )
            error.warnings = self.warnings
            raise error
        if not any(g["handlers"] for groups in self.hooks.values() for g in groups):
            self.warnings.append(
                f"{', '.join(paths)}: no hooks configured: every event passes unchecked "
                "(the built-in default policy applies only when no config is found)"
            )
        result = {
            "hooks": self.hooks,
            "sources": paths,
            "mcp_servers": self.mcp_servers,
            "llm": self.llm,
            "settings": self.settings,
            "guards": self.guards,
            "channels": self.channels,
            "audit": self.audit,
            "warnings": self.warnings,
            "depends": self.depends,
            "broken": self.broken,
        }
        result["config_hash"] = config_hash(result)
        return result


def config_hash(result: dict[str, Any]) -> str:
    """SHA-256 (first 16 hex digits) of the normalized config's decision-relevant parts (hooks,
    mcpServers, llm, settings, guards, channels, audit): the ``config_hash`` of audit records."""
    import hashlib

    parts = {k: result[k] for k in ("hooks", "mcp_servers", "llm", "settings", "guards", "channels", "audit")}
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def compile_configs(paths: list[str], command_check: CommandCheck | None = None) -> dict[str, Any]:
    """Validate ``paths`` and return the normalized config dict. Raises ConfigError with every issue.
    ``command_check`` (``hookgate validate``'s) adds checks of each command handler's options."""
    compiler = Compiler()
    compiler.command_check = command_check
    for path in paths:
        try:
            compiler.add_file(path)
        except ConfigError as exc:
            compiler.issues.extend(exc.issues)
    return compiler.result(paths)
