"""``hookgate run``'s argparse-free reading of its arguments (``gateway.cli._plain_run_args``) agrees with
the argparse parser on everything it takes, and leaves everything else to argparse."""

from __future__ import annotations

import pytest

from gateway.cli import _plain_run_args
from gateway.cli.parser import build_parser

TAKEN = [
    ["run"],
    ["run", "--config", "a.yaml"],
    ["run", "--config=a.yaml", "-c", "b.json", "-cbuiltin:default"],
    ["run", "--dialect", "kiro"],
    ["run", "--dialect=gemini", "--server", "http://127.0.0.1:8787"],
    ["run", "--server=http://127.0.0.1:1", "--on-server-down", "closed", "-c", "x"],
    ["run", "--on-server-down=open", "--dialect", "codex", "--config", "a", "--config", "b"],
    ["run", "--dialect", "claude", "--dialect", "auto"],
]
LEFT_TO_ARGPARSE = [
    ["run", "--help"],
    ["run", "-h"],
    ["run", "--dialect", "cursor"],
    ["run", "--dial", "kiro"],  # argparse's prefix abbreviation
    ["run", "--config"],
    ["run", "--on-server-down", "maybe"],
    ["run", "extra"],
    ["run", "--", "x"],
    ["validate"],
    [],
]


@pytest.mark.parametrize("argv", TAKEN, ids=" ".join)
def test_plain_runs_read_as_argparse_reads_them(argv: list[str]) -> None:
    fast = _plain_run_args(argv)
    assert fast is not None
    slow = build_parser().parse_args(argv)
    assert (fast.config, fast.dialect, fast.server, fast.on_server_down) == (
        slow.config,
        slow.dialect,
        slow.server,
        slow.on_server_down,
    )


@pytest.mark.parametrize("argv", LEFT_TO_ARGPARSE, ids=" ".join)
def test_anything_else_goes_to_argparse(argv: list[str]) -> None:
    assert _plain_run_args(argv) is None
