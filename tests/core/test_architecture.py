"""The layering rules of docs/architecture.md, checked on the source: the core imports no protocol, and no two
modules import each other, directly or around a loop (every import counts: module level, inside functions and
under TYPE_CHECKING)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Source folders and the package each one is installed as (pyproject.toml [tool.setuptools] package-dir).
FOLDERS = {"voirdire": "voirdire", "agents": "voirdire.agents", "protocols": "voirdire.protocols"}


def modules() -> dict[str, Path]:
    out = {}
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([package, *parts])] = path
    return out


def imports(name: str, path: Path, known: set[str]) -> Iterator[str]:
    """The project modules that ``name`` imports, resolved to modules (a name imported from a package is the
    package's submodule when one exists, else the package itself)."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                candidate = f"{source}.{alias.name}"
                if candidate in known:
                    yield candidate
                elif source in known:
                    yield source


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {name: {m for m in imports(name, path, known) if m != name} for name, path in mods.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_graph_sees_the_project() -> None:
    g = graph()
    assert "voirdire.protocol" in g["voirdire.runner"]
    assert "voirdire.protocols.cross_examination.items" in g["voirdire.protocols.cross_examination.claims"]


def test_the_core_imports_no_protocol() -> None:
    offenders = {
        f"{name} -> {target}"
        for name, targets in graph().items()
        if not name.startswith(("voirdire.protocols", "voirdire.agents"))
        for target in targets
        if target.startswith("voirdire.protocols")
    }
    assert not offenders, sorted(offenders)


def test_the_core_names_no_protocol_module_in_strings() -> None:
    """No importlib detour: no string in the core spells a protocol module path."""
    for path in (ROOT / "voirdire").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert "voirdire.protocols." not in node.value, f"{path}: {node.value[:80]!r}"


def test_agents_do_not_import_the_session_layer() -> None:
    g = graph()
    for name, targets in g.items():
        if name.startswith("voirdire.agents"):
            assert not targets & {"voirdire.protocol", "voirdire.runner", "voirdire.cli", "voirdire.registry"}, name


def test_no_import_cycles() -> None:
    assert cycles(graph()) == []


@pytest.mark.parametrize(
    ("edges", "expected"),
    [
        ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b"}, "b": set()}, []),
    ],
)
def test_the_cycle_finder_finds_cycles(edges: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert cycles(edges) == expected
