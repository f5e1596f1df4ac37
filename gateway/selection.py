"""What ``Dispatcher.select`` tests: whether a group's matcher fits an event (``group_matches``) and a
handler's ``if`` rules (``if_matches``); ``Plan``, its memory of which groups fit a kind of event; and
``Prefilter``, a table, built once per config, of the handlers whose ``if`` rules cannot fit an event.

``Dispatcher.select`` walks every group of an event and tests every handler's ``if`` rule; with many
groups (one per rule is a common way to write a policy) that walk is most of the cost of an event. Most
``if`` rules are Bash rules with a literal command name (``Bash(rm *)``, ``Bash(git push *)``), and such a
rule cannot fit a plain command that does not contain that name (``gateway.bash_split._cannot_match``,
the check the rule itself makes first). ``Prefilter`` groups the handlers by those *gates* once, so for an
event it decides per distinct gate, not per handler, which handlers and which whole groups cannot fit;
``select`` skips them without testing them. Everything else (other rules, matchers, dedup, order) is
decided exactly as before, by the same code.

A gate is ``(tool, word)``: the rule's tool (``Bash``, ``PowerShell``) and the first word of its
pattern. It can fit an event only when the event's tool is ``tool`` and its command is not a string,
contains a character that may hide a name (``bash_split._OPAQUE``), or contains ``word``. A handler is
gated only when every one of its rules is such a rule; it cannot fit when none of its gates can.
"""

from __future__ import annotations

from gateway.matching import SHELL_TOOLS, claude_matcher, kiro_matcher, parsed_rule
from gateway.tool_names import to_host

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gateway.config import GroupSpec, HandlerSpec
    from gateway.events import HookEvent

Gate = tuple[str, str]


def group_matches(group: GroupSpec, event: HookEvent, explain: bool = True) -> tuple[bool, str]:
    """Whether ``group`` fits ``event``, and a short reason (with ``explain``; else "", so the request
    path of ``serve`` builds no strings nobody reads)."""
    if group.agent is not None and event.get("agent_id") != group.agent:
        why = f"agents.{group.agent} runs only for agent_id {group.agent!r} (got {event.get('agent_id')!r})"
        return False, why if explain else ""
    value = event.matcher_value()
    if value is None or group.matcher in (None, "", "*"):
        unset = group.matcher in (None, "", "*")
        return True, (
            "no matcher (matches every event)" if unset else f"{event.name} ignores matchers"
        ) if explain else ""
    if group.dialect == "kiro":
        name = event.host_tool_name if event.dialect == "kiro" and event.host_tool_name else to_host("kiro", value)
        ok = kiro_matcher(group.matcher)(name)
        return ok, f"Kiro matcher {group.matcher!r} {'matches' if ok else 'does not match'} {name!r}" if explain else ""
    if group.dialect == "gemini":
        from gateway.dialects.gemini import matcher_accepts

        ok, name = matcher_accepts(group.matcher, event)
        return (
            ok,
            f"Gemini matcher {group.matcher!r} {'matches' if ok else 'does not match'} {name!r}" if explain else "",
        )
    accepts = claude_matcher(group.matcher, event.spec.exact_chars, validated=True)
    ok = accepts(value)
    field_name = event.spec.matcher_field
    host_name = event.host_tool_name
    if not ok and field_name == "tool_name" and host_name and host_name != value and accepts(host_name):
        why = f"matcher {group.matcher!r} matches the host's tool name {host_name!r} ({field_name}={value!r})"
        return True, why if explain else ""
    if not explain:
        return ok, ""
    return ok, f"matcher {group.matcher!r} {'matches' if ok else 'does not match'} {field_name}={value!r}"


def if_matches(spec: HandlerSpec, event: HookEvent, explain: bool = True) -> tuple[bool, str]:
    """Whether ``spec``'s ``if`` rules let it run for ``event``, and why (with ``explain``; else "")."""
    if spec.if_rule is None:
        return True, ""
    if not event.spec.tool:
        return False, f"if {spec.if_rule!r}: not a tool event, never runs" if explain else ""
    rules = [spec.if_rule] if isinstance(spec.if_rule, str) else spec.if_rule
    for rule in rules:
        if parsed_rule(rule).matches(event):
            return True, f"if {rule!r} matches" if explain else ""
    return False, f"if {spec.if_rule!r} does not match" if explain else ""


class Plan:
    """``Dispatcher.select``'s memory of one kind of event: ``groups``, the indexes of the groups whose
    matchers fit, in order; ``static``, the whole selection as ``(spec, order, group)`` when no handler of
    those groups has an ``if`` rule (else None: the rules are tested per event)."""

    __slots__ = ("_fitting", "groups", "static")

    def __init__(self, groups: tuple[int, ...], static: tuple[tuple[HandlerSpec, int, int], ...] | None) -> None:
        self.groups = groups
        self.static = static
        self._fitting: frozenset[int] | None = None

    def fitting(self) -> frozenset[int]:
        """``groups`` as a set (built on first use)."""
        if self._fitting is None:
            self._fitting = frozenset(self.groups)
        return self._fitting


PLANS = 4096
"""At most this many ``Plan`` keys per dispatcher (distinct tool names, mostly); past it, select walks."""


class Pruned:
    """What ``select`` may skip for one event: ``survivors``, the indexes of the groups left to test, in
    order (None: all of them), and ``handlers``, the ``id()`` of the handler specs ruled out."""

    __slots__ = ("handlers", "survivors")

    def __init__(self, survivors: tuple[int, ...] | None, handlers: frozenset[int]) -> None:
        self.survivors = survivors
        self.handlers = handlers


NOTHING = Pruned(None, frozenset())


def gates(spec: HandlerSpec) -> frozenset[Gate] | None:
    """The gates of ``spec``'s ``if`` rules, or None when some rule is not a gate (or there is none)."""
    if spec.if_rule is None:
        return None
    from gateway.bash_split import _first_word

    found: set[Gate] = set()
    for text in [spec.if_rule] if isinstance(spec.if_rule, str) else spec.if_rule:
        try:
            rule = parsed_rule(text)
        except Exception:  # a bad rule is reported where it is used
            return None
        word = _first_word(rule.content) if rule.content is not None else ""
        if rule.tool not in SHELL_TOOLS or not word:
            return None
        found.add((rule.tool, word))
    return frozenset(found) if found else None


class Prefilter:
    """The gate table of one event's groups (see module docstring); ``pruned(event)`` per event.

    ``offsets[i]``: how many handlers come before group ``i`` in config order (``select`` numbers them).
    """

    def __init__(self, groups: list[GroupSpec]) -> None:
        self.count = len(groups)
        self.offsets: list[int] = []
        total = 0
        for group in groups:
            self.offsets.append(total)
            total += len(group.handlers)
        handlers_by_gates: dict[frozenset[Gate], list[int]] = {}
        groups_by_gates: dict[frozenset[frozenset[Gate]], list[int]] = {}
        for gi, group in enumerate(groups):
            keys: set[frozenset[Gate]] = set()
            for spec in group.handlers:
                key = gates(spec)
                if key is None:
                    keys.clear()
                    break
                keys.add(key)
            for spec in group.handlers:
                key = gates(spec)
                if key is not None:
                    handlers_by_gates.setdefault(key, []).append(id(spec))
            if keys:
                groups_by_gates.setdefault(frozenset(keys), []).append(gi)
        self.handlers_by_gates = handlers_by_gates
        self.groups_by_gates = groups_by_gates
        self.all_gates = frozenset(g for key in handlers_by_gates for g in key)
        self._memo: dict[frozenset[Gate], Pruned] = {}

    def pruned(self, event: HookEvent) -> Pruned:
        """The groups and handlers that cannot fit ``event`` (``NOTHING`` when none can be ruled out)."""
        if not self.all_gates:
            return NOTHING
        from gateway.bash_split import _OPAQUE

        tool_input = event.tool_input or {}
        command = tool_input.get("command")
        tool = event.tool_name
        if not isinstance(command, str) or _OPAQUE.search(command):
            closed = frozenset(g for g in self.all_gates if g[0] != tool)
        else:
            closed = frozenset(g for g in self.all_gates if g[0] != tool or g[1] not in command)
        pruned = self._memo.get(closed)
        if pruned is None:
            handlers = [h for key, ids in self.handlers_by_gates.items() if key <= closed for h in ids]
            gone = {g for keys, gis in self.groups_by_gates.items() if all(key <= closed for key in keys) for g in gis}
            pruned = Pruned(tuple(g for g in range(self.count) if g not in gone) if gone else None, frozenset(handlers))
            if len(self._memo) < 64:
                self._memo[closed] = pruned
        return pruned
