"""The layering rules of docs/architecture.md, checked on the source: every module sits in a layer of the
documented table and imports only its own layer or the layers listed before it; the core imports no protocol and
spells no registered protocol's name; no two modules import each other, directly or around a loop (every import
counts: module level, inside functions and under TYPE_CHECKING)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = ROOT / "docs" / "architecture.md"
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


def layers(text: str) -> list[tuple[str, list[str]]]:
    """The table under "## Layers": each layer's name and the modules it places, in the documented order. A file
    places its module (``voirdire/api.py`` -> ``voirdire.api``), a folder every module under it (``voirdire/runner/``
    -> ``voirdire.runner.``, ``agents/`` -> ``voirdire.agents.``, a trailing dot)."""
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    table = section[section.index("\n|") + 1 :].split("\n\n", 1)[0]  # the first table of the section
    rows = []
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 2 or cells[0] in ("layer", "") or set(cells[0]) <= {"-"}:
            continue
        places = []
        for path in re.findall(r"`([^`]+)`", cells[1]):
            if "/" not in path:
                continue  # a module's part named in passing (`spec`, `voirdire.agents`)
            folder, _, rest = path.partition("/")
            parts = [FOLDERS[folder], *(Path(rest).with_suffix("").parts if rest else ())]
            if path.endswith(".py"):
                places.append(".".join(parts).removesuffix(".__init__"))
            else:
                places.append(".".join(parts) + ".")
        rows.append((cells[0], places))
    return rows


def layer_of(module: str, table: list[tuple[str, list[str]]]) -> int | None:
    """The index of the layer that places ``module`` (the most specific entry wins); None when none does."""
    best: tuple[int, int] | None = None
    for index, (_, places) in enumerate(table):
        for place in places:
            placed = module == place.rstrip(".") or (place.endswith(".") and module.startswith(place))
            if placed and (best is None or len(place) > best[0]):
                best = (len(place), index)
    return best[1] if best else None


def test_every_module_has_a_documented_layer() -> None:
    table = layers(ARCHITECTURE.read_text(encoding="utf-8"))
    assert [name for name, _ in table][:2] == ["base", "models"] and table[-1][0] == "protocols"
    unplaced = sorted(m for m in modules() if layer_of(m, table) is None)
    assert not unplaced, f"modules docs/architecture.md's layer table does not place: {unplaced}"


def test_imports_follow_the_documented_layer_order() -> None:
    """A module imports its own layer or the layers listed before it in docs/architecture.md, never one after."""
    table = layers(ARCHITECTURE.read_text(encoding="utf-8"))
    offenders = []
    for name, targets in graph().items():
        here = layer_of(name, table)
        for target in sorted(targets):
            there = layer_of(target, table)
            if here is not None and there is not None and there > here:
                offenders.append(f"{name} ({table[here][0]}) -> {target} ({table[there][0]})")
    assert not offenders, offenders


def test_the_layer_check_sees_a_wrong_import() -> None:
    table = layers(
        "## Layers\n| layer | modules | what |\n|---|---|---|\n| low | `voirdire/base/errors.py` | x |\n"
        "| high | `voirdire/runner/`, `agents/` | y |\n"
    )
    assert table == [("low", ["voirdire.base.errors"]), ("high", ["voirdire.runner.", "voirdire.agents."])]
    assert layer_of("voirdire.runner.lock", table) == 1 and layer_of("voirdire.agents.model_agent", table) == 1
    assert layer_of("voirdire.base.errors", table) == 0 and layer_of("voirdire.errorsx", table) is None


def registered_names() -> set[str]:
    """The protocol names of the ``voirdire.protocols`` entry points."""
    import importlib.metadata

    return {ep.name for ep in importlib.metadata.entry_points(group="voirdire.protocols")}


def string_constants(tree: ast.AST) -> Iterator[ast.Constant]:
    """Every string constant but docstrings (prose may name a paper's protocol; code may not)."""
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docs.add(id(first.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node


def test_the_core_spells_no_registered_protocol_name() -> None:
    """The core finds protocols through the registry only: no string of ``voirdire/`` names one
    (``"cross_examination"``, a key like ``"dcr"``)."""
    names = registered_names()
    assert {"cross_examination", "dcr", "no_data"} <= names
    word = re.compile(r"(?<![\w-])(" + "|".join(sorted(map(re.escape, names), key=len, reverse=True)) + r")(?![\w-])")
    offenders = [
        f"{path.relative_to(ROOT)}:{node.lineno}: {node.value[:80]!r}"
        for path in sorted((ROOT / "voirdire").rglob("*.py"))
        for node in string_constants(ast.parse(path.read_text(encoding="utf-8")))
        if word.search(node.value)
    ]
    assert not offenders, offenders


def test_the_graph_sees_the_project() -> None:
    g = graph()
    assert "voirdire.session" in g["voirdire.runner.prepare"] and "voirdire.session.protocol" in g["voirdire.session"]
    assert "voirdire.protocols.cross_examination.items" in g["voirdire.protocols.cross_examination.claims"]


def test_the_core_imports_no_protocol() -> None:
    offenders = {
        f"{name} -> {target}"
        for name, targets in graph().items()
        if not name.startswith("voirdire.protocols")
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
            upward = ("voirdire.session", "voirdire.runner", "voirdire.cli")
            assert not {t for t in targets if t.startswith(upward)}, name
            assert "voirdire.registry" not in targets, name


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


def test_the_core_reads_no_verdict_statistic_by_a_protocols_word() -> None:
    """What a reader needs of a verdict comes from its typed fields or the header's display hints, whose keys are
    data: ``statistics["claim"]`` or ``statistics.get("correct")`` in ``voirdire/`` would name one protocol's word."""
    offenders = []
    for path in sorted((ROOT / "voirdire").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            key = None
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute):
                if node.value.attr == "statistics" and isinstance(node.slice, ast.Constant):
                    key = node.slice.value
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
                target = node.func.value
                if isinstance(target, ast.Attribute) and target.attr == "statistics" and node.args:
                    key = node.args[0].value if isinstance(node.args[0], ast.Constant) else None
            if key is not None:
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: statistics[{key!r}]")
    assert not offenders, offenders


ROOT_MODULES = {"__init__.py", "__main__.py", "api.py"}


def test_only_init_main_and_api_sit_at_the_root() -> None:
    assert {p.name for p in (ROOT / "voirdire").glob("*.py")} == ROOT_MODULES


def test_one_folder_is_one_layer() -> None:
    """Each row of the table places whole folders (the root's three files aside), and each folder of the core is
    in exactly one row."""
    table = layers(ARCHITECTURE.read_text(encoding="utf-8"))
    placed: dict[str, str] = {}
    for name, places in table:
        for place in places:
            if not place.endswith("."):
                root = {f"voirdire.{m.removesuffix('.py')}" for m in ROOT_MODULES} | {"voirdire"}
                assert place in root, (name, place)
                continue
            assert place not in placed, f"{place} is in two layers: {placed[place]} and {name}"
            placed[place] = name
    folders = {
        "voirdire." + ".".join(p.parent.relative_to(ROOT / "voirdire").parts) + "."
        for p in (ROOT / "voirdire").glob("*/__init__.py")
    }
    assert folders <= set(placed), sorted(folders - set(placed))
    assert all(p.count(".") == 2 for p in placed if p.startswith("voirdire.") and not p.startswith(
        ("voirdire.agents", "voirdire.protocols"))), "a layer is a top-level folder of voirdire/, not a part of one"


KIT_FACES = frozenset(
    ["voirdire.kit", *(f"voirdire.kit.{p.stem}" for p in (ROOT / "voirdire/kit").glob("*.py") if p.stem != "__init__")]
)
"""The kit and its sub-faces (``voirdire.kit.reports``, ...): a protocol imports any of them as a face."""


def face_of(module: str) -> str:
    """The package whose face a module is reached through: ``voirdire.X`` (a protocol: its own package)."""
    parts = module.split(".")
    return ".".join(parts[:3] if parts[1:2] == ["protocols"] else parts[:2])


def cross_folder_imports() -> Iterator[tuple[str, str, int]]:
    """(importing module, imported module, line) for each ``from voirdire.… import`` that crosses folders."""
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            crosses = isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith(
                "voirdire."
            )
            if crosses and face_of(node.module) != face_of(name):
                yield name, node.module, node.lineno


def test_imports_across_folders_go_through_faces() -> None:
    """``from voirdire.reports import Report``, never ``from voirdire.reports.fold import Report``: what a package
    offers the layers above is what its ``__init__.py`` exports."""
    offenders = [f"{name}:{line} imports {target}" for name, target, line in cross_folder_imports()
                 if target != face_of(target) and target not in KIT_FACES]
    assert not offenders, offenders


def test_protocols_import_the_core_through_the_kit_only() -> None:
    offenders = [
        f"{name}:{line} imports {target}"
        for name, target, line in cross_folder_imports()
        if name.startswith("voirdire.protocols.") and not target.startswith("voirdire.protocols.")
        and target not in KIT_FACES
    ]
    assert not offenders, offenders


def test_the_kit_is_small_and_its_sub_faces_list_their_exports() -> None:
    """The kit's top level holds what every protocol needs, at most 25 names; the rest is in sub-faces, each listing
    its exports in ``dir()``, and no name is exported by two of them."""
    import importlib

    import voirdire.kit

    assert len(voirdire.kit.__all__) <= 25
    sub_faces = sorted(KIT_FACES - {"voirdire.kit"})
    assert len(sub_faces) >= 4
    seen = set(voirdire.kit.__all__)
    for name in sub_faces:
        face = importlib.import_module(name)
        assert face.__all__ and set(face.__all__) <= set(dir(face)), name
        assert not seen & set(face.__all__), (name, seen & set(face.__all__))
        seen |= set(face.__all__)


def suffix_pair(a: str, b: str) -> bool:
    """Two names that differ only by an ending (``view``/``views``, ``reproduce``/``reproduction``): one a prefix
    of the other, or the same stem of 4+ letters with endings of at most 4 letters, no underscore in either."""
    if a == b or "_" in a.lstrip("_") or "_" in b.lstrip("_"):
        return False
    common = len(Path(a).name) if b.startswith(a) else 0
    if not common:
        while common < min(len(a), len(b)) and a[common] == b[common]:
            common += 1
    return common >= 4 and len(a) - common <= 4 and len(b) - common <= 4


@pytest.mark.parametrize(
    ("a", "b", "pair"),
    [("view", "views", True), ("reproduce", "reproduction", True), ("correlate", "correlation", True),
     ("charts", "plots", False), ("paraphrase", "paraphrase_report", False), ("labels", "lexicon", False)],
)
def test_the_suffix_rule(a: str, b: str, pair: bool) -> None:
    assert suffix_pair(a, b) is pair


def test_no_two_modules_of_a_folder_differ_only_by_a_suffix() -> None:
    offenders = []
    for folder in {p.parent for f in FOLDERS for p in (ROOT / f).rglob("*.py")}:
        names = sorted(p.stem for p in folder.glob("*.py") if p.stem != "__init__")
        offenders += [f"{folder.relative_to(ROOT)}: {a}, {b}" for i, a in enumerate(names) for b in names[i + 1 :]
                      if suffix_pair(a, b)]
    assert not offenders, offenders


def folder_graph() -> dict[str, set[str]]:
    """The core's imports between its folders (``voirdire.X``; the root's files are their own boxes)."""
    edges: dict[str, set[str]] = {}
    for name, targets in graph().items():
        if name.startswith(("voirdire.protocols", "voirdire.agents")):
            continue
        here = face_of(name) if name != "voirdire" else name
        edges.setdefault(here, set()).update(
            face_of(t) for t in targets if not t.startswith(("voirdire.protocols", "voirdire.agents"))
            and face_of(t) != here
        )
    return edges


def test_the_folders_import_each_other_without_a_cycle() -> None:
    assert cycles(folder_graph()) == []


if __name__ == "__main__":  # python -m tests.core.test_architecture: the numbers docs/architecture.md gives
    core = [m for m in modules() if not m.startswith(("voirdire.protocols", "voirdire.agents"))]
    folders = folder_graph()
    print(f"{len(core)} modules in {len(folders)} folders and root files, "
          f"{sum(map(len, folders.values()))} imports between them, {len(cycles(folders))} cycles")
