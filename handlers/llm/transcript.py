"""Reading the session transcript named by an event's ``transcript_path`` (JSONL, written by the host).

Each line is rendered as one short entry, ``role: text``, with tool calls and tool results
summarized and cut at ``BLOCK_CHARS``. Claude Code lines (``{"type": "user"|"assistant", "message":
{"role", "content"}}``) and Codex rollout lines (``{"type": "response_item", "payload": {...}}``) are
understood; lines of other kinds (summaries, file snapshots, metadata) are skipped. Only the last
``MAX_BYTES`` of a file are read. The host writes the file asynchronously, so the newest entries may
be missing (Claude Code's own advice: use ``last_assistant_message`` for the final answer).
"""

from __future__ import annotations

import json
import os
from typing import Any

MAX_BYTES = 4 * 1024 * 1024
"""Bytes read from the end of a transcript."""
BLOCK_CHARS = 800
"""Characters kept of one tool call's input or one tool result."""


def _clip(text: str, limit: int = BLOCK_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + f" [... {len(text) - limit} more characters]"


def _block_text(block: Any) -> str | None:
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind in ("text", "input_text", "output_text") and isinstance(block.get("text"), str):
        return str(block["text"])
    if kind in ("tool_use", "function_call", "server_tool_use"):
        args = block.get("input", block.get("arguments"))
        shown = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        return f"[tool call {block.get('name')}] {_clip(shown)}"
    if kind in ("tool_result", "function_call_output"):
        content = block.get("content", block.get("output"))
        if isinstance(content, list):
            content = "\n".join(t for t in (_block_text(c) for c in content) if t)
        marker = " (error)" if block.get("is_error") else ""
        return f"[tool result{marker}] {_clip(str(content or ''))}"
    return None


def render_entry(obj: Any) -> str | None:
    """One transcript line as ``role: text``, or None for lines that carry no conversation."""
    if not isinstance(obj, dict):
        return None
    message: dict[str, Any] = obj
    for key in ("message", "payload"):
        if isinstance(obj.get(key), dict):
            message = obj[key]
            break
    role = message.get("role") or obj.get("type")
    content = message.get("content")
    if message.get("type") in ("function_call", "function_call_output"):
        content, role = [message], role or "assistant"
    if role not in ("user", "assistant", "system", "tool") or content is None:
        return None
    blocks = content if isinstance(content, list) else [content]
    parts = [t.strip() for t in (_block_text(b) for b in blocks) if t and t.strip()]
    return f"{role}: " + "\n".join(parts) if parts else None


def read_entries(path: str, *, max_bytes: int = MAX_BYTES) -> list[str]:
    """The rendered entries of the transcript at ``path``, oldest first. Raises OSError."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > max_bytes:
            fh.seek(size - max_bytes)
            fh.readline()  # drop the partial line
        data = fh.read()
    entries: list[str] = []
    for line in data.decode("utf-8", "replace").splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        rendered = render_entry(obj)
        if rendered:
            entries.append(rendered)
    return entries


def transcript_tail(path: str | None, max_chars: int) -> str | None:
    """The newest entries of the transcript that fit in ``max_chars`` (None: no readable transcript)."""
    if not path or max_chars <= 0:
        return None
    try:
        entries = read_entries(path)
    except OSError:
        return None
    kept: list[str] = []
    used = 0
    for entry in reversed(entries):
        if used + len(entry) + 2 > max_chars:
            if not kept:
                kept.append(entry[-max_chars:])
            break
        kept.append(entry)
        used += len(entry) + 2
    if not kept:
        return None
    skipped = len(entries) - len(kept)
    head = f"[{skipped} earlier entries not shown]\n\n" if skipped > 0 else ""
    return head + "\n\n".join(reversed(kept))
