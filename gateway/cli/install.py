"""``hookgate install`` / ``uninstall``: wire a host's hook config to ``hookgate run`` (``gateway.install``)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def cmd_install(args: argparse.Namespace) -> int:
    from gateway.install import run_install

    return run_install(args)
