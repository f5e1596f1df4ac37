"""hookgate default policy: block writes to secrets files (a PreToolUse command hook).

Reads a Claude Code PreToolUse event for Write/Edit/MultiEdit/NotebookEdit on stdin and denies
writes to ``.env`` files, private keys, certificates and credential stores, with a reason. Template
files such as ``.env.example`` stay writable. Standard library only (runs as ``python -I -S``).
"""

from __future__ import annotations

import json
import re
import sys

TEMPLATES = re.compile(r"\.env\.(example|sample|template|dist|defaults)$")
SECRETS = [
    (re.compile(r"(^|/)\.env(\.[^/]+)?$"), "an environment file that holds secrets"),
    (re.compile(r"\.(pem|key|p12|pfx|jks|keystore)$"), "a private key or certificate store"),
    (re.compile(r"(^|/)id_(rsa|dsa|ecdsa|ed25519)$"), "an SSH private key"),
    (re.compile(r"(^|/)\.ssh/"), "SSH configuration"),
    (re.compile(r"(^|/)\.aws/credentials$"), "AWS credentials"),
    (re.compile(r"(^|/)\.(netrc|pgpass|git-credentials|npmrc|pypirc)$"), "a credentials file"),
]


def secret_kind(path: str) -> str | None:
    """What kind of secrets file ``path`` is, or None."""
    path = path.replace("\\", "/")
    if TEMPLATES.search(path):
        return None
    for pattern, kind in SECRETS:
        if pattern.search(path):
            return kind
    return None


def main() -> int:
    event = json.load(sys.stdin)
    tool_input = event.get("tool_input") or {}
    paths = [tool_input[k] for k in ("file_path", "notebook_path", "path") if isinstance(tool_input.get(k), str)][:1]
    more = tool_input.get("file_paths")  # every file of a Codex apply_patch (see gateway.dialects.codex)
    paths += [p for p in more if isinstance(p, str)] if isinstance(more, list) else []
    path, kind = next(((p, k) for p in paths if (k := secret_kind(p))), (None, None))
    if kind:
        reason = (f"Writing to {path} is blocked by hookgate's default policy: it is {kind}. Secrets must not pass "
                  "through the agent; ask the user to edit this file.")
        json.dump({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                          "permissionDecisionReason": reason}}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
