"""A count of the shell guard's reads from outside the command it checks: the environment (``HOME``,
``TMPDIR``, ``HOOKGATE_SERVER``, the cache and state directories) and the file system (symlinks, the
installed hookgate's folders). ``analyse`` remembers a verdict only when its analysis made no such read
(``READS`` moved by its own two steps alone), so a remembered verdict is what analysing the same text
with the same tuning again gives. Each reader calls ``read()`` (``secrets_guard``'s readers too: the
``protected`` bridge hands it ``read``). Standard library only."""

from __future__ import annotations

import itertools

READS = itertools.count()
"""Advanced once per read (``next`` is atomic, so concurrent analyses only ever see too many reads)."""


def read() -> None:
    """Count one read from outside the command."""
    next(READS)
