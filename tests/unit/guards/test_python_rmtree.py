"""``shutil.rmtree`` in a Python one-liner or heredoc program, however it is spelled: the module or the
function under another name, ``getattr``, the path as a keyword or a ``Path``. Once only the text
``shutil.rmtree('...')`` was read, and ``import shutil as s; s.rmtree('/home/dev')`` deleted the home."""

from __future__ import annotations

import shlex

import pytest

from tests.unit.guards.common import RM, rule_of


@pytest.mark.parametrize(
    "program",
    [
        "import shutil as s; s.rmtree('/home/dev')",
        "import shutil as s; s.rmtree('src')",
        "import os, shutil as sh; sh . rmtree('src')",
        "from shutil import rmtree as r; r('src')",
        "from shutil import *; rmtree('src')",
        "from shutil import copy, rmtree; rmtree('src')",
        "from shutil import (copy, rmtree); rmtree('~')",
        "import shutil; shutil.rmtree(path='src')",
        "import pathlib, shutil; shutil.rmtree(pathlib.Path('src'))",
        "from pathlib import Path; import shutil; shutil.rmtree(Path('/home/dev'))",
        "import shutil; getattr(shutil, 'rmtree')('src')",
        "import shutil; getattr(shutil, \"rmtree\")('src')",
    ],
)
def test_every_spelling_of_rmtree_is_rm_rf(program: str) -> None:
    assert rule_of(f"python3 -c {shlex.quote(program)}") == RM
    assert rule_of(f"python3 - <<'X'\n{program.replace('; ', chr(10))}\nX") == RM


@pytest.mark.parametrize(
    "program",
    [
        "import shutil as s; s.rmtree('build')",  # a build folder, as rm -rf build
        "from shutil import rmtree; rmtree('node_modules')",
        "def rmtree(x): pass\nrmtree('src')",  # not shutil's
        "from mylib import rmtree; rmtree('src')",
        "import shutil; shutil.copytree('src', 'dist')",
    ],
)
def test_what_deletes_nothing_that_counts_still_passes(program: str) -> None:
    assert rule_of(f"python3 - <<'X'\n{program}\nX") is None
