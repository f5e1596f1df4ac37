"""argparse ``type=`` converters for command-line numbers: a bad value is a one-line usage error (exit 2)
instead of an exception deep inside the command. Standard library only (built on every CLI parse)."""

from __future__ import annotations

import argparse
import math


def port(text: str) -> int:
    """A TCP port: an integer 0-65535 (0: any free port). Raises argparse.ArgumentTypeError."""
    value = _int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (expected 0-65535)")
    return value


MAX_INT = 2**63 - 1
"""The largest count a store takes (SQLite INTEGER, PostgreSQL bigint)."""


def positive_int(text: str) -> int:
    """An integer 1 to ``MAX_INT``. Raises argparse.ArgumentTypeError."""
    value = _int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected an integer greater than 0")
    if value > MAX_INT:
        raise argparse.ArgumentTypeError(f"{text!r}: too large (at most {MAX_INT})")
    return value


def non_negative_seconds(text: str) -> float:
    """A finite number of seconds >= 0. Raises argparse.ArgumentTypeError."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a number of seconds >= 0")
    return value


def positive_seconds(text: str) -> float:
    """A finite number of seconds > 0. Raises argparse.ArgumentTypeError."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a number of seconds > 0")
    return value


def host_name(text: str) -> str:
    """A name a ``Host`` header may carry (``serve --allow-host``): not empty, not only brackets or dots,
    no whitespace inside. Raises argparse.ArgumentTypeError."""
    if not text.strip().strip("[]").rstrip("."):
        raise argparse.ArgumentTypeError(f"{text!r}: expected a host name (an empty one matches no request)")
    if any(c.isspace() for c in text.strip()):
        raise argparse.ArgumentTypeError(f"{text!r}: expected a host name (no spaces in it)")
    return text.strip()


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
