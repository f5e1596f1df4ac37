"""Run the AGENT-HOOKS-0.1 CTK against hookgate's Python host in every plain ``pytest`` run.

The CTK's pytest plugin (entry point ``agent_hooks_ctk``, installed with ``agent-hooks-sdk[ctk]``)
takes ``--agent-hooks-harness=module:Class`` and otherwise runs its own reference harness. This
conftest makes hookgate's harness the default for tests in this folder, so ``python -m pytest -q``
checks hookgate; an explicit ``--agent-hooks-harness`` still wins.
"""

from __future__ import annotations

import pytest

HARNESS = "tests.conformance.harness:GatewayHarness"


@pytest.fixture
def agent_hooks_harness(request: pytest.FixtureRequest) -> type:
    from agent_hooks.ctk.plugin import _load_harness

    return _load_harness(request.config.getoption("--agent-hooks-harness") or HARNESS)
