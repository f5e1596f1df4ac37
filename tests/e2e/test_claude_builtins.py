"""hookgate's built-ins on the real Claude Code CLI (offline, against the fake Messages API).

truncateOutput: a Bash command prints 20,000 characters. Without hooks the model gets all of it; with
``{type: builtin, name: truncateOutput, maxChars: 500}`` wired as README says (``hookgate run`` as a
command hook), Claude Code applies hookgate's ``updatedToolOutput`` and the model gets the first 500
characters plus hookgate's marker. The evidence is the tool_result the CLI sent to the fake API and
the CLI's own hook log, never the CLI's wording.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.hook_settings import hookgate_command_settings
from tests.e2e.hookgate_harness import write_config
from tests.e2e.scenarios import RunClaude
from tests.e2e.test_claude_hookgate import claude, control
from tests.fakes.anthropic_api import bash, text

pytestmark = pytest.mark.e2e

COMMAND = "python3 -c \"print('x' * 20000)\""
MARKER = "[... truncated by hookgate: 19500 of 20000 characters cut]"


def result_text(block: dict[str, object]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content)


def test_truncate_output_reaches_the_model_through_updated_tool_output(
    run_claude: RunClaude, hookgate_bin: Path, tmp_path: Path
) -> None:
    script = [bash(COMMAND, "print a lot"), text("done")]
    plain = control(run_claude, tmp_path, script)
    (full,) = plain.tool_results
    assert result_text(full).count("x") == 20000, plain.describe()

    config = write_config(
        tmp_path / "truncate.json",
        {
            "PostToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "builtin", "name": "truncateOutput", "maxChars": 500}]}
            ]
        },
    )
    settings = hookgate_command_settings(config, events=("PostToolUse",), executable=hookgate_bin)
    run = claude(run_claude, tmp_path, settings, script)

    assert run.run.returncode == 0 and run.result.get("is_error") is False, run.describe()
    (answer,) = run.hook_answers("PostToolUse")
    output = answer["hookSpecificOutput"]["updatedToolOutput"]
    assert output["stdout"] == "x" * 500 + "\n" + MARKER, run.describe()
    (cut,) = run.tool_results  # what the model got in the next request
    seen = result_text(cut)
    assert seen.count("x") == 500 and MARKER in seen, run.describe()
