"""``hookgate run`` ends without the interpreter's teardown only when nothing but the standard library and
hookgate ran (``gateway.cli.exit_hook``): the answer and the exit code are the same either way, ``atexit``
functions run, and a user's python handler gets the usual exit (objects finalized at teardown)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT
from tests.fakes.mcp_helpers import event

# What the ``hookgate`` script does, plus two witnesses: an atexit function (runs on either path) and a
# module-level object whose ``__del__`` runs only when the interpreter tears ``__main__`` down.
SCRIPT = """
import atexit, sys
_startup = set(sys.modules)
sys.path.insert(0, sys.argv[1])
marks = sys.argv[2]
class Witness:
    def __init__(self):
        self.file = open(marks, "a")
    def __del__(self):
        self.file.write("teardown\\n")
        self.file.close()
witness = Witness()
atexit.register(lambda: open(marks, "a").write("atexit\\n"))
from gateway.cli import exit_hook, main
code = main(["run", "--dialect", "claude", *sys.argv[3:]])
exit_hook(code, _startup)
sys.exit(code)
"""


def _run(tmp_path: Path, payload: dict[str, object], *config: str) -> tuple[subprocess.CompletedProcess[bytes], str]:
    marks = tmp_path / "marks"
    marks.write_text("")
    args = [arg for path in config for arg in ("--config", path)]
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(ROOT), str(marks), *args],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    return proc, marks.read_text()


def test_the_default_policy_exits_without_teardown_and_keeps_its_answer(tmp_path: Path) -> None:
    first, marks = _run(tmp_path, event("Bash", command="ls -la"))  # compiles the config: pydantic, PyYAML
    assert first.returncode == 0 and marks == "atexit\nteardown\n"
    allowed, marks = _run(tmp_path, event("Bash", command="ls -la"))  # the cached config: hookgate alone
    assert allowed.returncode == 0 and allowed.stdout == b"" and marks == "atexit\n"
    denied, marks = _run(tmp_path, event("Bash", command="rm -rf /srv/app/src"))
    answer = json.loads(denied.stdout)  # the whole answer was flushed before the exit
    assert denied.returncode == 2 and answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert b"rm.recursive" in denied.stderr and marks == "atexit\n"


def test_a_users_python_handler_gets_the_usual_exit(tmp_path: Path) -> None:
    package = tmp_path / "userchecks"
    package.mkdir()
    (package / "__init__.py").write_text("def check(event):\n    return None\n")
    config = tmp_path / "hookgate.json"
    config.write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "python", "callable": "userchecks:check"}]}]
                }
            }
        )
    )
    proc, marks = _run(tmp_path, event("Bash", command="ls"), str(config))
    assert proc.returncode == 0, proc.stderr
    assert marks.splitlines() == ["atexit", "teardown"]


def test_a_deny_without_a_stdout_still_exits_2_with_its_reason(tmp_path: Path) -> None:
    import os

    proc = subprocess.run(  # fd 1 closed: sys.stdout is None in the hook process
        [sys.executable, "-m", "gateway", "run", "--dialect", "claude"],
        input=json.dumps(event("Bash", command="rm -rf /srv/app/src")).encode(),
        stderr=subprocess.PIPE,
        cwd=ROOT,
        timeout=60,
        check=False,
        preexec_fn=lambda: os.close(1),
    )
    assert proc.returncode == 2 and b"rm.recursive" in proc.stderr and b"internal error" not in proc.stderr
