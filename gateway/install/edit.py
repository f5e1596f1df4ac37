"""Editing a ``hooks`` block in place: install's own entries (``is_install_command``) updated, added or
removed, every other entry left where it was (``edit_grouped`` for Claude Code, Gemini and Codex;
``edit_flat`` for Kiro)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from gateway.install.options import InstallError, is_hookgate_command, is_install_command

Position = tuple[str, int, int]
"""(event, group index, handler index) of a handler in a ``hooks`` block."""


@dataclass
class Edit:
    """The outcome of editing one ``hooks`` block: hookgate's handler positions before and after, where
    each other handler moved, and the events install left to a hand-written hookgate hook."""

    ours_before: list[Position] = field(default_factory=list)
    ours_after: dict[Position, dict[str, Any]] = field(default_factory=dict)
    moved: dict[Position, Position] = field(default_factory=dict)
    groups_after: dict[Position, Any] = field(default_factory=dict)  # position -> its group's matcher
    foreign: dict[str, str] = field(default_factory=dict)  # event -> the command of a hand-written hookgate hook


class NotAList(InstallError):
    """An event install must write to holds something other than a list (the caller names the file)."""


def _is_ours(handler: Any, host: str) -> bool:
    return isinstance(handler, dict) and is_install_command(handler.get("command"), host)


def _foreign(handlers: list[Any], host: str) -> str | None:
    """The command of the first hook in ``handlers`` that runs hookgate but is not one install writes."""
    for handler in handlers:
        if isinstance(handler, dict) and is_hookgate_command(handler.get("command")) and not _is_ours(handler, host):
            return str(handler["command"])
    return None


def _group_handlers(groups: list[Any]) -> list[Any]:
    return [h for g in groups if isinstance(g, dict) and isinstance(g.get("hooks"), list) for h in g["hooks"]]


def _edit_events(
    hooks: dict[str, Any],
    wanted: dict[str, dict[str, Any]],
    edit_list: Callable[[str, list[Any], dict[str, Any] | None], list[Any]],
    handlers_of: Callable[[list[Any]], list[Any]],
    host: str,
    keep_empty: Collection[str],
    edit: Edit,
) -> None:
    """Replace each event's list in ``hooks`` (and each event of ``wanted`` it lacks) by ``edit_list(event,
    entries, wanted entry or None)``, in place; an event emptied by the edit goes, unless it is in
    ``keep_empty`` (it was an empty list before install filled it); one that was empty stays. An event
    whose value is not a list is left alone, unless hookgate must write there (NotAList). An event that
    already runs hookgate through a hook install did not write gets no entry of install's (it is noted
    in ``edit.foreign``)."""
    for event in list(hooks) + [e for e in wanted if e not in hooks]:
        entries = hooks.get(event, [])
        if not isinstance(entries, list):
            if event in wanted:
                raise NotAList(f"hooks.{event} is not a list; fix it by hand first")
            continue
        want = wanted.get(event)
        if want is not None:
            foreign = _foreign(handlers_of(entries), host)
            if foreign is not None:
                edit.foreign[event] = foreign
                want = None
        kept = edit_list(event, entries, want)
        if kept or (event in hooks and (not entries or event in keep_empty)):  # an empty list stays one
            hooks[event] = kept
        elif event in hooks:
            del hooks[event]


def edit_grouped(
    hooks: dict[str, Any], wanted: dict[str, dict[str, Any]], host: str, keep_empty: Collection[str] = ()
) -> Edit:
    """Make install's handlers for ``host`` in a Claude/Gemini/Codex ``hooks`` block exactly ``wanted``
    (event -> handler), in place: update the first existing one, append a new group when missing, remove
    the rest (and groups that only held them). Other handlers and groups keep their order."""
    edit = Edit()

    def edit_groups(event: str, groups: list[Any], want: dict[str, Any] | None) -> list[Any]:
        placed = False
        new_groups: list[Any] = []
        for gi, group in enumerate(groups):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list):
                new_groups.append(group)
                continue
            kept: list[Any] = []
            for hi, handler in enumerate(handlers):
                if _is_ours(handler, host):
                    edit.ours_before.append((event, gi, hi))
                    if want is not None and not placed:
                        kept.append(want)
                        placed = True
                        edit.ours_after[(event, len(new_groups), len(kept) - 1)] = want
                    continue
                edit.moved[(event, gi, hi)] = (event, len(new_groups), len(kept))
                kept.append(handler)
            if kept or not handlers:  # a group that only held hookgate's handlers goes
                new_groups.append({**group, "hooks": kept})
        if want is not None and not placed:
            new_groups.append({"hooks": [want]})
            edit.ours_after[(event, len(new_groups) - 1, 0)] = want
        for gi, group in enumerate(new_groups):
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                for hi in range(len(group["hooks"])):
                    edit.groups_after[(event, gi, hi)] = group.get("matcher")
        return new_groups

    _edit_events(hooks, wanted, edit_groups, _group_handlers, host, keep_empty, edit)
    return edit


def edit_flat(
    hooks: dict[str, Any], wanted: dict[str, dict[str, Any]], host: str, keep_empty: Collection[str] = ()
) -> Edit:
    """The same for Kiro's flat ``hooks`` block (event -> list of ``{command, matcher?, timeout_ms?}``)."""
    edit = Edit()

    def edit_entries(event: str, entries: list[Any], want: dict[str, Any] | None) -> list[Any]:
        kept: list[Any] = []
        placed = False
        for entry in entries:
            if _is_ours(entry, host):
                if want is not None and not placed:
                    kept.append(want)
                    placed = True
                continue
            kept.append(entry)
        if want is not None and not placed:
            kept.append(want)
        return kept

    _edit_events(hooks, wanted, edit_entries, list, host, keep_empty, edit)
    return edit
