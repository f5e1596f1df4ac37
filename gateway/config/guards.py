"""The ``guards`` section: the user's tuning of the built-in default policy's shell guard.

```yaml
guards:
  rules: {git.branch-force-delete: deny, rm.recursive: ask, git.*: "off"}   # deny | ask | off
  allowPaths: [/srv/scratch]          # recursive deletes under these pass
  allowCommands: ["git clean -fdx"]   # shell patterns a simple command may match to pass
  buildDirs: [node_modules, dist]     # replaces the default build/cache folder list
  tempRoots: [/tmp, $TMPDIR]          # replaces the default temp roots
```

Validated with pydantic at load time (every unknown rule name and bad decision is a config error naming the
file and key; an unquoted YAML ``off``, which YAML reads as false, counts as "off"); several files merge (rules
by name, the allow lists add up, a later ``buildDirs``/``tempRoots`` wins). The tuning belongs to its config:
``Dispatcher`` runs every handler of a config inside ``scope(config)``, so the in-process guard uses that
config's tuning (``configs.guards.destructive.settings.scoped``) and two configs in one process (``serve``
reloading, two ``Gateway`` objects) never see each other's. A guard run as a command hook
(``python -I -S shell_guard.py``) uses the defaults.
"""

from __future__ import annotations

from functools import cache

TYPE_CHECKING = False  # scope() runs on every hookgate run with a guards section: typing costs ~2 ms
if TYPE_CHECKING:
    from typing import Any

    from gateway.config.schema import Compilation


@cache
def _model() -> Any:
    from typing import Any, Literal  # noqa: F401  (pydantic resolves the annotations below at run time)

    from pydantic import BaseModel, ConfigDict, Field

    class Guards(BaseModel):
        model_config = ConfigDict(extra="allow", populate_by_name=True, strict=True)
        rules: dict[str, Literal["deny", "ask", "off"]] = Field(default_factory=dict)
        allow_paths: list[str] = Field(default_factory=list, alias="allowPaths")
        allow_commands: list[str] = Field(default_factory=list, alias="allowCommands")
        build_dirs: list[str] | None = Field(None, alias="buildDirs")
        temp_roots: list[str] | None = Field(None, alias="tempRoots")

    return Guards


def _checked_rules(raw: Any, where: str, issues: list[str]) -> Any:
    """``raw`` with its ``rules`` checked name by name, so every bad one is reported (each on its own line): an
    unknown rule (with a did-you-mean), or ``true`` (YAML's unquoted on/yes/true). ``false`` (YAML's unquoted
    off/no/false) is "off". The entries reported are dropped, so the model reports the rest."""
    if not isinstance(raw, dict) or not isinstance(raw.get("rules"), dict):
        return raw
    from configs.guards.destructive.settings import RULES, rule_names
    from gateway.config.schema import suggest

    rules: dict[Any, Any] = {}
    for name, decision in raw["rules"].items():
        if not isinstance(name, str) or not rule_names(name):
            issues.append(
                f"{where}.rules.{name}: no rule of the default policy has this name"
                f"{suggest(str(name), list(RULES))} (see README: The built-in default policy)"
            )
        elif decision is True:
            issues.append(
                f"{where}.rules.{name}: true is not a decision: write deny, ask or off (YAML reads an unquoted "
                "on/yes/true as true: quote it)"
            )
        else:
            rules[name] = "off" if decision is False else decision
    return {**raw, "rules": rules}


def compile_guards(compiler: Compilation, path: str, raw: Any) -> None:
    """Validate one file's ``guards`` section and merge it into ``compiler.guards``."""
    model = _model()
    where = f"{path}: guards"
    reported = len(compiler.issues)
    raw = _checked_rules(raw if raw is not None else {}, where, compiler.issues)
    section = compiler.validated(
        model, raw, where, known=["rules", "allowPaths", "allowCommands", "buildDirs", "tempRoots"]
    )
    if section is None or len(compiler.issues) > reported:
        return
    merged = compiler.guards
    merged.setdefault("rules", {}).update(section.rules)
    merged["allow_paths"] = [*merged.get("allow_paths", []), *section.allow_paths]
    merged["allow_commands"] = [*merged.get("allow_commands", []), *section.allow_commands]
    for key in ("build_dirs", "temp_roots"):
        if getattr(section, key) is not None:
            merged[key] = getattr(section, key)


def scope(guards: dict[str, Any]) -> Any:
    """Make ``guards`` (a config's normalized section; {} for the defaults) the shell guard's tuning in the
    current context until ``unscope(token)``. Outside a scope the guard uses its defaults (or what a Python
    caller set with ``configure``), so the dispatcher scopes only configs that have the section."""
    from configs.guards.destructive.settings import scoped

    return scoped(_settings_of(guards))


def unscope(token: Any) -> None:
    """Undo ``scope`` (its token; None does nothing)."""
    if token is not None:
        from configs.guards.destructive.settings import unscoped

        unscoped(token)


_SETTINGS: dict[str, Any] = {}


def _settings_of(guards: dict[str, Any]) -> Any:
    if not guards:
        return None
    import json

    key = json.dumps(guards, sort_keys=True)
    if key not in _SETTINGS:
        if len(_SETTINGS) > 64:
            _SETTINGS.clear()
        _SETTINGS[key] = settings(guards)
    return _SETTINGS[key]


def settings(guards: dict[str, Any]) -> Any:
    """The guard's ``Settings`` for a normalized section."""
    from configs.guards.destructive import Settings

    return Settings(
        rules=guards.get("rules"),
        allow_paths=guards.get("allow_paths", ()),
        allow_commands=guards.get("allow_commands", ()),
        build_dirs=guards.get("build_dirs"),
        temp_roots=guards.get("temp_roots"),
    )


def describe(guards: dict[str, Any]) -> list[str]:
    """One line per tuning, for ``validate`` and ``explain``."""
    lines = [f"rule {name}: {decision}" for name, decision in sorted(guards.get("rules", {}).items())]
    for key, label in (
        ("allow_paths", "allowPaths"),
        ("allow_commands", "allowCommands"),
        ("build_dirs", "buildDirs"),
        ("temp_roots", "tempRoots"),
    ):
        if guards.get(key) is not None and (guards.get(key) or key in ("build_dirs", "temp_roots")):
            lines.append(f"{label}: {', '.join(guards[key]) or '(none)'}")
    return lines
