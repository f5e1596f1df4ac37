"""The Python API: Gateway.from_file, dispatch, renderers, and an in-process handler class."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from gateway import Gateway, Verdict, register_handler
from handlers.base import Handler
from tests.conftest import CASES, load_case


@register_handler
class DenyWrites(Handler):
    """An in-process handler registered from Python: denies Write calls outside /tmp."""

    type: ClassVar[str] = "test_deny_writes"

    async def run(self, event: Any, ctx: Any) -> Verdict:
        path = (event.tool_input or {}).get("file_path", "")
        if not path.startswith("/tmp/"):
            return Verdict(permission="deny", permission_reason=f"{path} is outside /tmp")
        return Verdict()


async def test_from_file_dispatch_and_renderers() -> None:
    async with Gateway.from_file(str(CASES / "configs" / "guards.json")) as gw:
        decision = await gw.dispatch(load_case("claude", "pretooluse-bash-rm-rf.json"))
    assert decision.permission == "deny"
    code, out, _ = gw.render(decision)
    assert code == 2 and json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert gw.render(decision, "kiro") == (2, "", "Destructive command blocked by hook\n")
    assert [r.status for r in decision.results] == ["ok", "ok"]


async def test_registered_in_process_handler(tmp_path: Path) -> None:
    config = tmp_path / "hookgate.yaml"
    config.write_text("hooks:\n  PreToolUse:\n    - matcher: Write\n      hooks: [{type: test_deny_writes}]\n")
    async with Gateway.from_file(str(config)) as gw:
        denied = await gw.dispatch(
            {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"file_path": "/etc/x"}}
        )
        allowed = await gw.dispatch(
            {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"file_path": "/tmp/x"}}
        )
    assert denied.permission == "deny" and "outside /tmp" in (denied.permission_reason or "")
    assert allowed.is_empty
    # a type registered in this process only must not be cached as valid for other processes
    import os

    assert not list(Path(os.environ["HOOKGATE_CACHE_DIR"]).glob("config-*.json"))


def test_misuse_is_one_clear_type_error(tmp_path: Path) -> None:
    """A wrong argument to the Python API is a TypeError (ValueError for a bad mode) naming the call, the
    argument and what it takes, in one line: never an AttributeError from deep inside."""
    import pytest

    config = tmp_path / "hookgate.json"
    config.write_text('{"hooks": {}}')
    cases: list[tuple[Any, str]] = [
        (
            lambda: Gateway.from_file(None),
            r"^Gateway.from_file: each path must be a str or os.PathLike .* not NoneType$",
        ),
        (lambda: Gateway.from_file(5), r"^Gateway.from_file: each path .* not int$"),
        (lambda: Gateway.from_file([str(config)]), r"not list \(pass several paths as separate arguments"),
    ]
    gw = Gateway.from_file(config)  # an os.PathLike is a path
    assert Gateway.from_file(str(config), str(config)).config is not None
    cases += [
        (
            lambda: gw.render(None),
            r"^Gateway.render: decision must be a Decision \(what dispatch returns\), not NoneType$",
        ),
        (lambda: gw.tool_call("Read", "ls"), r"^tool_call: args must be a dict of the tool's arguments .* not str$"),
        (lambda: gw.tool_call("Read", None), r"^tool_call: args must be a dict .* not NoneType$"),
        (lambda: gw.tool_call(None, {}), r"^tool_call: tool_name must be a non-empty str .* not NoneType$"),
        (lambda: gw.tool_call("", {}), r"tool_name must be a non-empty str .* not an empty str$"),
    ]
    for call, message in cases:
        with pytest.raises(TypeError, match=message) as info:
            call()
        assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match=r"^Gateway: mode must be 'api', 'serve' or 'run', not 'bogus'$"):
        Gateway.from_file(str(config), mode="bogus")  # type: ignore[arg-type]
