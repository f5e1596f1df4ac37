"""The chain link every audit writer computes (the store backends in their transaction, the JSON-lines
sink under its lock): ``link_hash`` and ``GENESIS``. Standard library only and nothing at import time
(``hookgate run`` loads it on the record path; the design is in ``gateway.audit.chain``)."""

from __future__ import annotations

GENESIS = "0" * 64
"""The ``prev_hash`` of a chain's first record."""


def link_hash(prev_hash: str, chain: str, seq: int, body: str) -> str:
    """SHA-256 (hex) of ``prev_hash "\\n" chain "\\n" seq "\\n" body``: one record's link."""
    import hashlib

    data = f"{prev_hash}\n{chain}\n{seq}\n{body}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()
