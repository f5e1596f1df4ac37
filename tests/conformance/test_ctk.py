"""AGENT-HOOKS-0.1 conformance: every CTK vector against ``GatewayHarness`` (see conftest.py)."""

from __future__ import annotations

import asyncio
import json

from agent_hooks import _core
from agent_hooks._marshal import dumps
from agent_hooks.ctk.runner import load_vectors, run_vector

from tests.conformance import hooks
from tests.conformance.harness import GatewayHarness

UNDECLARED = {"incremental_output"}
"""Capabilities the host does not declare; vectors needing them are the only skips."""


def test_conformance(agent_hooks_assert: None) -> None:
    """One CTK vector (parametrized by the plugin): passes, or skips for an undeclared capability."""


def test_skips_are_only_undeclared_capabilities() -> None:
    caps = json.dumps(sorted(c.value for c in GatewayHarness.capabilities))
    skipped = [v for v in load_vectors() if json.loads(_core.ctk_should_skip(dumps(v), caps)) is not None]
    assert skipped, "the incremental-output vectors should be skipped"
    for vector in skipped:
        assert set(vector["capabilities"]) - {c.value for c in GatewayHarness.capabilities} <= UNDECLARED


def test_tool_calls_go_through_hookgate() -> None:
    """The basic-loop vector's tool call also ran hookgate's PreToolUse and PostToolUse class hooks."""
    (vector,) = [v for v in load_vectors() if v["id"] == "AH-CTK-001"]
    hooks.SEEN.clear()
    result = asyncio.run(run_vector(GatewayHarness(), vector))
    assert result.status == "pass", result.failures
    assert hooks.SEEN == [("PreToolUse", "calculator"), ("PostToolUse", "calculator")]
