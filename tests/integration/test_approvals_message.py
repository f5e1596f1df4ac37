"""An approval ``message``: one placeholder the event lacks is marked where it stands and the others are
still filled (the approver keeps seeing the command); ``validate`` warns about a placeholder whose first
name is no field of the event. Real ``hookgate run`` / ``approvals`` / ``validate`` subprocesses."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_hookgate
from tests.integration.approvals_helpers import Waiting, approvals, bash_event, wait_for_pending, write_config


def test_a_missing_placeholder_is_marked_alone_and_the_rest_is_filled(tmp_path: Path) -> None:
    message = "Run ${tool_input.command} (${tool_input.nope}) in ${cwd} for ${session_id}: ${tool_input} $${x}"
    config = write_config(tmp_path, {"message": message})
    waiting = Waiting(["run", "--config", str(config)], bash_event("git push origin main"))
    [request] = wait_for_pending(config)
    missing = "[${tool_input.nope} is not in this PreToolUse event: tool_input has no 'nope' (it has: command)]"
    expected = f'Run git push origin main ({missing}) in /repo for sess-1: {{"command": "git push origin main"}} ${{x}}'
    assert request["message"] == expected
    shown = approvals(config, "show", request["id"])
    assert f"message:     {expected}" in shown.stdout.splitlines(), shown.stdout
    assert approvals(config, "reject", request["id"]).returncode == 0
    assert waiting.finish()[0] == 2


@pytest.mark.parametrize(
    ("placeholder", "warning"),
    [
        (
            "${tool_inptu.command}",
            "${tool_inptu.command}: 'tool_inptu' is not a field of a PreToolUse event as "
            "Claude Code sends it (did you mean 'tool_input'?)",
        ),
        (
            "${cwdd}",
            "${cwdd}: 'cwdd' is not a field of a PreToolUse event as Claude Code sends it (did you mean 'cwd'?)",
        ),
    ],
)
def test_validate_warns_about_a_placeholder_root_the_event_does_not_have(
    tmp_path: Path, placeholder: str, warning: str
) -> None:
    config = write_config(tmp_path, {"message": f"Run {placeholder}?"})
    check = run_hookgate(["validate", str(config)])
    assert check.returncode == 0, check.stdout + check.stderr
    assert f"hooks.PreToolUse[0].hooks[0].message: {warning}" in check.stdout + check.stderr


def test_validate_knows_each_events_own_fields(tmp_path: Path) -> None:
    fine = "${tool_name} ${tool_input.command} ${tool_use_id} ${cwd} ${session_id} ${CLAUDE_PROJECT_DIR} $${literal}"
    check = run_hookgate(["validate", str(write_config(tmp_path, {"message": fine}))])
    assert check.returncode == 0 and "not a field" not in check.stdout + check.stderr, check.stdout
    stop = write_config(tmp_path, {"message": "${last_assistant_message} ${tool_name}"}, event="Stop", matcher="")
    said = run_hookgate(["validate", str(stop)]).stdout
    assert "'tool_name' is not a field of a Stop event" in said and "last_assistant_message" not in said


def test_mcp_tool_input_placeholders_get_the_same_warning(tmp_path: Path) -> None:
    config = tmp_path / "hookgate.yaml"
    config.write_text(
        "mcpServers: {policy: {command: python3, args: ['-c', 'pass']}}\n"
        "hooks:\n  PreToolUse:\n    - hooks:\n        - type: mcp_tool\n          server: policy\n"
        "          tool: check\n          input: {cmd: '${tool_input.command}', where: '${cwdd}'}\n"
    )
    said = run_hookgate(["validate", str(config)])
    assert "hooks[0].input.where: ${cwdd}: 'cwdd' is not a field of a PreToolUse event" in said.stdout, said.stdout
    assert "input.cmd" not in said.stdout
