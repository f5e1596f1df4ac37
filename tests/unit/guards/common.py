"""What the guard tests share: the project directory they run in and ``rule_of``, the guard's
verdict on one command as ``"decision:rule"`` (``None`` when it passes)."""

from __future__ import annotations

from configs.guards.destructive import Settings, analyse

CWD = "/home/dev/webshop"
RM = "deny:rm.recursive"


def rule_of(command: str, cwd: str | None = CWD, settings: Settings | None = None) -> str | None:
    """``"decision:rule"`` of the destructive guard on ``command`` run in ``cwd``, or ``None``."""
    found = analyse(command, cwd, settings)
    return None if found is None else f"{found.decision}:{found.rule}"


def cases(rule: str, *commands: str) -> list[tuple[str, str]]:
    """``(command, rule)`` pairs for ``pytest.mark.parametrize``."""
    return [(c, rule) for c in commands]
