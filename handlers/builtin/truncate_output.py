"""``truncateOutput`` (PostToolUse): cut tool output over ``maxChars`` characters (default 8,000).

The output keeps its shape (a string stays a string; in an object or list, such as Claude Code's
``{stdout, stderr, ...}``, Gemini's ``{llmContent, ...}`` or an MCP result's content blocks, the text
values are cut in order until the budget is spent; structural values under ``KEPT_KEYS``, such as a
content block's ``type``, an image's base64 ``data`` or a ``uri``, are kept whole and not counted), and
the first cut value ends with a marker saying how much was cut::

    [... truncated by hookgate: 12345 of 20345 characters cut]

The rewritten output reaches the model through each host's own channel (``Decision.updated_output``:
``updatedToolOutput`` on Claude Code, the output-replacing deny/block on Gemini CLI and Codex CLI,
``call.result`` on the Python host; Kiro CLI cannot replace a tool's output). The side effect
``truncated tool output: N of M characters cut`` goes to the audit record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gateway.decision import Verdict

if TYPE_CHECKING:
    from gateway.context import RunContext
    from gateway.events import HookEvent

DEFAULT_MAX_CHARS = 8000


def marker(cut: int, total: int) -> str:
    return f"\n[... truncated by hookgate: {cut} of {total} characters cut]"


KEPT_KEYS = frozenset({"type", "mimeType", "uri", "name", "id", "data", "blob", "annotations", "_meta", "filePath"})
"""Object keys whose values are structure, not text, and are kept whole (never cut, not counted): a
content block's ``type`` (MCP's ``{"type": "text", "text": ...}``, ``{"type": "image", "data": <base64>,
"mimeType": ...}``, an embedded ``resource``'s ``uri``/``blob``), names, ids and paths. Cutting them
would leave an output the host or model cannot read (a ``type`` of ``"te"``, a broken base64 image)."""


def text_size(value: Any) -> int:
    """Characters in every string inside ``value`` that truncation may cut (not under ``KEPT_KEYS``)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(text_size(v) for k, v in value.items() if k not in KEPT_KEYS)
    if isinstance(value, list):
        return sum(text_size(v) for v in value)
    return 0


def truncate(value: Any, max_chars: int) -> tuple[Any, int, int]:
    """``(value cut to max_chars characters of text, characters cut, total)``; shape kept."""
    total = text_size(value)
    if total <= max_chars:
        return value, 0, total
    budget = [max_chars]
    marked = [False]
    mark = marker(total - max_chars, total)

    def cut(item: Any) -> Any:
        if isinstance(item, str):
            keep = min(len(item), budget[0])
            budget[0] -= keep
            if keep == len(item):
                return item
            if not marked[0]:
                marked[0] = True
                return item[:keep] + mark
            return item[:keep]
        if isinstance(item, dict):
            return {k: v if k in KEPT_KEYS else cut(v) for k, v in item.items()}
        if isinstance(item, list):
            return [cut(v) for v in item]
        return item

    return cut(value), total - max_chars, total


def run(options: dict[str, Any], event: HookEvent, ctx: RunContext, handler_id: str) -> Verdict:
    max_chars = options.get("max_chars") or DEFAULT_MAX_CHARS
    value, cut, total = truncate(event.get("tool_response"), max_chars)
    if not cut:
        return Verdict()
    verdict = Verdict(updated_output=value)
    verdict.side_effects = [f"truncated tool output: {cut} of {total} characters cut"]
    return verdict
