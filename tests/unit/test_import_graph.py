"""The import graph of gateway/, handlers/ and configs/ has no circle, counting every import: top level,
inside functions and under ``TYPE_CHECKING`` (read with ``ast``, so nothing is imported to check it)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("gateway", "handlers", "configs")


def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The project modules ``name`` imports anywhere in its file (a package resolves to its __init__)."""

    def resolve(target: str) -> str | None:
        while target and target not in known:
            target = target.rpartition(".")[0]
        return target or None

    targets: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = name.split(".")[: len(name.split(".")) - node.level + (path.name == "__init__.py")]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            targets += [base, *(f"{base}.{alias.name}" for alias in node.names)]
    return {r for r in map(resolve, targets) if r is not None and r != name}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_finder_sees_a_circle_through_type_checking_and_function_imports(tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\n")
    b.write_text("def f():\n    import pkg.a\n")
    known = {"pkg.a": a, "pkg.b": b}
    graph = {name: imports(name, path, known) for name, path in known.items()}
    assert circles(graph) == [["pkg.a", "pkg.b"]]


def test_no_import_circle() -> None:
    known = modules()
    graph = {name: imports(name, path, known) for name, path in known.items()}
    found = circles(graph)
    assert found == []


def test_no_module_over_600_lines() -> None:
    long = {
        name: n for name, path in modules().items() if (n := len(path.read_text(encoding="utf-8").splitlines())) > 600
    }
    assert long == {}


FRONTENDS = ("gateway.cli", "gateway.serve", "gateway.install", "gateway.demo", "gateway.__main__")


def _in(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def test_frontends_depend_on_the_core_never_the_reverse() -> None:
    known = modules()
    graph = {name: imports(name, path, known) for name, path in known.items()}
    upward = {
        name: sorted(t for t in targets if _in(t, FRONTENDS))
        for name, targets in graph.items()
        if not _in(name, FRONTENDS)
    }
    assert {name: t for name, t in upward.items() if t} == {}
    into_cli = {
        name: sorted(t for t in targets if _in(t, ("gateway.cli",)))
        for name, targets in graph.items()
        if _in(name, ("gateway.serve", "gateway.demo", "gateway.install"))
    }
    assert {name: t for name, t in into_cli.items() if t} == {}


def test_the_thin_client_and_the_wire_constants_import_nothing_else_of_ours() -> None:
    known = modules()
    assert imports("gateway.wire", known["gateway.wire"], known) == set()
    assert imports("gateway.errors", known["gateway.errors"], known) == set()
    ours = imports("gateway.client", known["gateway.client"], known)
    assert ours - {"gateway.errors", "gateway.wire"} <= {"gateway.dialects", "gateway.events"}
    module_level = [
        stmt.module
        for node in ast.parse(known["gateway.client"].read_text(encoding="utf-8")).body
        if isinstance(node, ast.Try)
        for stmt in node.body
        if isinstance(stmt, ast.ImportFrom)
    ]
    assert module_level == ["gateway.errors", "gateway.wire"]  # the rest only on the failure path, lazily
