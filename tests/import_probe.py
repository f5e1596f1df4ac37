"""Which modules a real ``hookgate run`` process imported: a subprocess runs ``gateway.cli.main(["run",
"--config", CONFIG])`` on an event and reports, after its answer, which of the watched modules are in
``sys.modules`` (the lazy-import tests of the SDKs and of approvals share it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import ROOT

PROBE = """
import json, sys
from gateway.cli import main
watched = json.loads(sys.argv[2])
code = main(["run", "--config", sys.argv[1]])
sys.stderr.write("\\nLOADED=" + json.dumps([m for m in watched if m in sys.modules]) + "\\n")
raise SystemExit(code)
"""


def modules_loaded(config: Path, payload: dict[str, Any], watched: tuple[str, ...]) -> tuple[int, list[str]]:
    """``hookgate run --config config`` on ``payload`` in a fresh process: its exit code and the modules
    of ``watched`` it had imported by the end (in ``watched`` order)."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(config), json.dumps(list(watched))],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    line = next((ln for ln in proc.stderr.decode().splitlines() if ln.startswith("LOADED=")), None)
    assert line is not None, f"the probe did not report (exit {proc.returncode}): {proc.stderr.decode()[-2000:]}"
    return proc.returncode, json.loads(line.removeprefix("LOADED="))
