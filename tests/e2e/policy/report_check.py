"""e2e policy check (Stop): the agent may not stop before ``REPORT.md`` exists in its working folder.

It blocks at most once per session (a marker under ``<cwd>/.hookgate-stop/``), whatever the host says
in ``stop_hook_active`` (Gemini resets that flag when the continued turn called a tool), so a model
that never writes the report cannot keep the agent looping. Standard library only.
"""

from __future__ import annotations

import json
import os
import re
import sys


def main() -> int:
    event = json.load(sys.stdin)
    cwd = event.get("cwd") or os.getcwd()
    if os.path.exists(os.path.join(cwd, "REPORT.md")):
        return 0
    session = re.sub(r"[^A-Za-z0-9_.-]", "_", str(event.get("session_id") or "no-session"))
    marker = os.path.join(cwd, ".hookgate-stop", session)
    if os.path.exists(marker):
        return 0  # blocked once already: let the agent stop
    os.makedirs(os.path.dirname(marker), exist_ok=True)
    with open(marker, "w") as fh:
        fh.write("blocked once\n")
    print(
        json.dumps(
            {"decision": "block", "reason": "Write REPORT.md with a one-line summary of what you did, then stop."}
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
