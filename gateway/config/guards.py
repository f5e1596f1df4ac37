"""The ``guards`` section: the user's tuning of the built-in default policy's shell guard.

```yaml
guards:
  rules: {git.branch-force-delete: deny, rm.recursive: ask, git.*: off}   # deny | ask | off
  allowPaths: [/srv/scratch]          # recursive deletes under these pass
  allowCommands: ["git clean -fdx"]   # shell patterns a simple command may match to pass
  buildDirs: [node_modules, dist]     # replaces the default build/cache folder list
  tempRoots: [/tmp, $TMPDIR]          # replaces the default temp roots
```

Validated with pydantic at load time (an unknown rule or decision is a config error naming the file and key);
several files merge (rules by name, the allow lists add up, a later ``buildDirs``/``tempRoots`` wins).
``activate`` hands the result to ``configs.guards.destructive.configure`` when a config is loaded, so the
in-process guard uses it; without a ``guards`` section the defaults apply. The tuning is process-wide: in one
process (``serve``, the Python API) the config loaded last decides. A guard run as a command hook
(``python -I -S shell_guard.py``) uses the defaults.
"""

from __future__ import annotations

import sys
from functools import cache

TYPE_CHECKING = False  # activate() runs on every hookgate run: typing costs ~2 ms to import
if TYPE_CHECKING:
    from typing import Any

    from gateway.config.schema import Compilation

_GUARD = "configs.guards.destructive"


@cache
def _model() -> Any:
    from typing import Any, Literal  # noqa: F401  (pydantic resolves the annotations below at run time)

    from pydantic import BaseModel, ConfigDict, Field, field_validator

    class Guards(BaseModel):
        model_config = ConfigDict(extra="allow", populate_by_name=True, strict=True)
        rules: dict[str, Literal["deny", "ask", "off"]] = Field(default_factory=dict)
        allow_paths: list[str] = Field(default_factory=list, alias="allowPaths")
        allow_commands: list[str] = Field(default_factory=list, alias="allowCommands")
        build_dirs: list[str] | None = Field(None, alias="buildDirs")
        temp_roots: list[str] | None = Field(None, alias="tempRoots")

        @field_validator("rules")
        @classmethod
        def _known(cls, rules: dict[str, str]) -> dict[str, str]:
            from configs.guards.destructive.settings import RULES, rule_names

            for name in rules:
                if not rule_names(name):
                    from gateway.config.schema import suggest

                    raise ValueError(
                        f"{name!r} is no rule of the default policy{suggest(name, list(RULES))} "
                        "(see README: The built-in default policy)"
                    )
            return rules

    return Guards


def compile_guards(compiler: Compilation, path: str, raw: Any) -> None:
    """Validate one file's ``guards`` section and merge it into ``compiler.guards``."""
    model = _model()
    section = compiler.validated(
        model,
        raw if raw is not None else {},
        f"{path}: guards",
        known=["rules", "allowPaths", "allowCommands", "buildDirs", "tempRoots"],
    )
    if section is None:
        return
    merged = compiler.guards
    merged.setdefault("rules", {}).update(section.rules)
    merged["allow_paths"] = [*merged.get("allow_paths", []), *section.allow_paths]
    merged["allow_commands"] = [*merged.get("allow_commands", []), *section.allow_commands]
    for key in ("build_dirs", "temp_roots"):
        if getattr(section, key) is not None:
            merged[key] = getattr(section, key)


def activate(guards: dict[str, Any]) -> None:
    """Make ``guards`` (a normalized section, or {} for the defaults) the shell guard's tuning. Imports the
    guard only when there is something to set or it is loaded already (no cost for configs without it)."""
    if not guards and _GUARD not in sys.modules:
        return
    from configs.guards.destructive import configure

    configure(settings(guards) if guards else None)


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
