"""Agreement of the default shell guard with two dedicated Claude Code guards' own test corpora (copied into
tests/cases/guards/ with their source): kenryu42/claude-code-safety-net and Dicklesworthstone/
destructive_command_guard. A case agrees when hookgate stops what the guard expects stopped (deny, or ask where
hookgate asks on purpose) and lets through what it expects allowed. Cases marked ``differs`` are deliberate
product differences: only issue 11's own product decisions count as such (build and cache folders in the
project, deletes below a temp root, echo/printf text as data, its per-command deny/ask choices, raw-text scans
of unterminated quotes), each note starts with "issue 11:", and they must behave as that note says; they are
left out of the figure. Every other disagreement (a ``note`` may explain one) counts against the figure. Run
with ``-s`` to see the figures."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from configs.guards.destructive import analyse

CORPORA = Path(__file__).resolve().parents[2] / "cases" / "guards"
PROJECT = "/home/dev/webshop"
MIN_AGREEMENT = 0.97


def load(name: str) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = tomllib.loads((CORPORA / name).read_text())["case"]
    return cases


def outcome(case: dict[str, Any]) -> str:
    cwd = {"project": PROJECT, "home": "/home/dev", None: PROJECT}[case.get("cwd")]
    found = analyse(case["command"].replace("{project}", PROJECT), cwd)
    return "allow" if found is None else found.decision


def agrees(case: dict[str, Any], got: str) -> bool:
    if case["expected"] == "allow":
        return got == "allow"
    return got == "deny" or (got == "ask" and bool(case.get("ask")))


@pytest.mark.parametrize("name", ["safety_net.toml", "dcg.toml"])
def test_agreement_with_the_dedicated_guards(name: str) -> None:
    cases = load(name)
    counted = [c for c in cases if "differs" not in c]
    misses = [(c["command"], c["expected"], outcome(c)) for c in counted if not agrees(c, outcome(c))]
    rate = 1 - len(misses) / len(counted)
    print(
        f"\n{name}: {len(counted) - len(misses)}/{len(counted)} agree ({rate:.1%}); "
        f"{len(cases) - len(counted)} deliberate differences (issue 11's product decisions); misses: {misses}"
    )
    assert rate >= MIN_AGREEMENT, misses
    asks = [c["command"] for c in counted if c.get("ask")]
    assert all(outcome(c) == "ask" for c in counted if c.get("ask")), asks


@pytest.mark.parametrize("name", ["safety_net.toml", "dcg.toml"])
def test_deliberate_differences_behave_as_documented(name: str) -> None:
    for case in load(name):
        if "differs" in case:
            assert not agrees(case, outcome(case)), case  # the difference is real, not a stale note


@pytest.mark.parametrize("name", ["safety_net.toml", "dcg.toml"])
def test_every_deliberate_difference_is_an_issue_11_product_decision(name: str) -> None:
    notes = [c["differs"] for c in load(name) if "differs" in c]
    assert all(n.startswith("issue 11: ") for n in notes), [n for n in notes if not n.startswith("issue 11: ")]
    decisions = ("temp root", "build", "echo", "printf", "unterminated quote", "git clean -f")
    assert all(any(d in n for d in decisions) for n in notes), notes
