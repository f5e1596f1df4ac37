"""What the wheel ships: every file under configs/ that the installed package reads must match
`tool.setuptools.package-data` (README's first command runs `hookgate demo` from a plain install)."""

from __future__ import annotations

import tomllib
from fnmatch import fnmatch

from tests.conftest import ROOT


def test_configs_files_are_package_data() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = pyproject["tool"]["setuptools"]["package-data"]["configs"]
    configs = ROOT / "configs"
    shipped = [p for p in configs.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    missing = [
        str(p.relative_to(configs))
        for p in shipped
        if p.name != "__init__.py" and not any(fnmatch(str(p.relative_to(configs)), pat) for pat in patterns)
    ]
    assert not missing, f"not in package-data: {missing}"
    assert any(p.parent.name == "demo" for p in shipped)


def test_console_files_are_package_data() -> None:
    """`hookgate serve` reads the console's files from gateway/audit/console/ at run time."""
    from gateway.serve.ui import ASSETS, console_dir

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = pyproject["tool"]["setuptools"]["package-data"]["gateway"]
    names = {*ASSETS, "index.html", "login.html"}
    on_disk = {p.name for p in (ROOT / "gateway" / "audit" / "console").iterdir() if p.is_file()}
    assert names == on_disk and console_dir().endswith("gateway/audit/console")
    missing = [n for n in names if not any(fnmatch(f"audit/console/{n}", pat) for pat in patterns)]
    assert not missing, f"not in package-data: {missing}"
