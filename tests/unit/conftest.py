"""Unit-test fixtures: every test starts with the matchers' and ``if`` rules' memo caches empty.

The caches (``functools.lru_cache`` in ``gateway.matching`` and ``gateway.bash_split``) would otherwise
let a test reuse what an earlier one compiled, so what a test covers would depend on the order the tests
ran in (and mutation testing, which runs only the tests that reached a function, would miss some)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gateway import bash_split, matching


@pytest.fixture(autouse=True)
def _cold_match_caches() -> Iterator[None]:
    for cached in (
        matching._char_set,
        matching.claude_matcher,
        matching.kiro_matcher,
        matching.parsed_rule,
        matching._pathspec,
        bash_split._compile,
        bash_split._first_word,
    ):
        cached.cache_clear()
    yield
