"""The house rules, checked on the source tree itself.

* Floors: liegroups <- integrators <- servo <- catalog; a file imports only from its own floor or below.
* No import cycle between files, counting imports written inside functions too.
* Below catalog, no import inside a function except of optional or heavy third-party packages (imported
  on use so that ``import servo`` stays light): galgebra, matplotlib, numba, dask, pandas, sympy, ...

The graph is read from the files with ``ast`` (nothing is imported), and the cycle search is networkx's.
The checker is tested on a small synthetic tree first, so that a broken checker cannot pass silently.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
FLOORS = ("liegroups", "integrators", "servo", "catalog")
#: the rooms of integrators/, bottom up: a file imports only from its own room or a room below
#: (the package's own ``__init__`` re-exports the public names and is above them all)
INTEGRATOR_ROOMS = ("core", "tableaux", "methods", "geometry", "reference", "codegen", "backends", "engine",
                    "analysis")
LAZY_OK = {"galgebra", "matplotlib", "numba", "dask", "distributed", "pandas", "xarray", "tqdm", "sympy",
           "mpmath", "flint", "tomllib", "tomli", "IPython", "nbclient", "nbformat",
           "threadpoolctl"}


def _module_name(root, path):
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _resolve(module, node, is_pkg, files):
    """The modules an Import/ImportFrom node refers to (relative imports resolved; ``from p import x``
    refers to the file p.x when there is one, else to p)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:
        base = module.split(".") if is_pkg else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        prefix = ".".join(base + ([node.module] if node.module else []))
    else:
        prefix = node.module or ""
    return [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in files else prefix for a in node.names]


def import_graph(root, packages):
    """(graph of file -> imported project file, list of (file, lineno, module) imports inside functions)."""
    files = {}
    for pkg in packages:
        for p in sorted((root / pkg).rglob("*.py")):
            files[_module_name(root, p)] = p
    G = nx.DiGraph()
    G.add_nodes_from(files)
    lazy = []
    for mod, path in files.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        is_pkg = path.name == "__init__.py"
        funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        inner = {id(n) for f in funcs for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom))}
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            targets = _resolve(mod, node, is_pkg, files)
            if id(node) in inner:
                lazy.extend((mod, node.lineno, t) for t in dict.fromkeys(targets))
            for t in targets:
                if t in files and t != mod:
                    G.add_edge(mod, t, line=node.lineno)
    return G, lazy


def upward_imports(G, floors):
    rank = {f: i for i, f in enumerate(floors)}
    return [(u, v) for u, v in G.edges if rank[v.split(".")[0]] > rank[u.split(".")[0]]]


def upward_room_imports(G, package, rooms):
    """Imports from a room of ``package`` to a room above it (files directly in the package, such as its
    ``__init__``, stand above every room; a room missing from ``rooms`` is reported as one)."""
    rank = {r: i for i, r in enumerate(rooms)}
    out = []
    for u, v in G.edges:
        pu, pv = u.split("."), v.split(".")
        if pu[0] != package or pv[0] != package or len(pu) < 3:
            continue
        ru, rv = pu[1], (pv[1] if len(pv) > 1 else None)
        if ru not in rank or (rv is not None and rv not in rank):
            out.append((u, v))
        elif rv is None or rank[rv] > rank[ru]:
            out.append((u, v))
    return out


def file_cycles(G):
    return sorted(sorted(c) for c in nx.simple_cycles(G))


def disallowed_lazy(lazy):
    out = []
    for mod, line, target in lazy:
        if mod.split(".")[0] == "catalog":
            continue
        if target.split(".")[0] in LAZY_OK:
            continue
        out.append(f"{mod}:{line} imports {target} inside a function")
    return out


def _project_graph():
    return import_graph(ROOT, FLOORS)


def test_checker_finds_a_cycle_an_upward_import_and_a_lazy_import(tmp_path):
    (tmp_path / "low").mkdir()
    (tmp_path / "high").mkdir()
    (tmp_path / "low" / "__init__.py").write_text("")
    (tmp_path / "high" / "__init__.py").write_text("")
    (tmp_path / "low" / "a.py").write_text("from .b import f\n")
    (tmp_path / "low" / "b.py").write_text("def f():\n    from .a import g\n    import numpy\n")
    (tmp_path / "low" / "c.py").write_text("from high.d import h\n")
    (tmp_path / "high" / "d.py").write_text("import low.a\n")
    G, lazy = import_graph(tmp_path, ("low", "high"))
    assert file_cycles(G) == [["low.a", "low.b"]]
    assert upward_imports(G, ("low", "high")) == [("low.c", "high.d")]
    assert disallowed_lazy(lazy) == ["low.b:2 imports low.a inside a function",
                                     "low.b:3 imports numpy inside a function"]


def test_room_checker_finds_an_upward_import_between_rooms(tmp_path):
    pkg = tmp_path / "p"
    for room in ("base", "top"):
        (pkg / room).mkdir(parents=True)
        (pkg / room / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("from .top.t import x\n")
    (pkg / "base" / "b.py").write_text("from ..top.t import x\n")
    (pkg / "top" / "t.py").write_text("from ..base.b import y\nx = 1\n")
    G, _ = import_graph(tmp_path, ("p",))
    assert upward_room_imports(G, "p", ("base", "top")) == [("p.base.b", "p.top.t")]
    assert upward_room_imports(G, "p", ("top",)) == [("p.base.b", "p.top.t"), ("p.top.t", "p.base.b")]


@pytest.fixture(scope="module")
def project():
    return _project_graph()


def test_no_upward_import(project):
    G, _ = project
    assert upward_imports(G, FLOORS) == []


def test_integrator_rooms_import_only_downward(project):
    G, _ = project
    assert upward_room_imports(G, "integrators", INTEGRATOR_ROOMS) == []


def test_no_import_cycle_between_files(project):
    G, _ = project
    assert file_cycles(G) == []


def test_no_import_inside_a_function_below_catalog(project):
    _, lazy = project
    assert disallowed_lazy(lazy) == []
