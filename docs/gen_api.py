"""Generate the API reference: one page per public module, every public name on it.

The names come from the packages themselves (``__all__``, or the imports of a package ``__init__`` that
has none), so a name added to a package appears here without editing the docs, and
``tests/test_docs_site.py`` can check that none is missing. Each name is documented once, under the
module that owns it (the room: ``servo.lie``, ``servo.quadratic``, ``servo.coordinates``); the page of a
package that re-exports it (``servo``) lists it with a link. Integrator names are documented under the
public package ``integrators`` (its submodules are an implementation detail that moves).
"""

from __future__ import annotations

import importlib
import inspect
import types
from pathlib import Path

# module -> (title, intro file under docs/api/intro/ or None)
PAGES = [
    ("liegroups", "Lie algebras, Casimirs, exponentials, matrix groups"),
    ("liegroups.named", "Named algebras"),
    ("integrators", "Integration, methods, reconstruction, comparison"),
    ("servo", "Mechanics: the package and its exceptions"),
    ("servo.lie", "Systems on Lie groups"),
    ("servo.quadratic", "Homogeneous quadratic systems and invariant lines"),
    ("servo.coordinates", "Systems in coordinates"),
    ("catalog", "The catalog of named systems"),
    ("catalog.sweeps", "Parameter sweeps"),
    ("catalog.bibliography", "Bibliography"),
    ("catalog.output.report", "The HTML report"),
]

# module-level data have no docstring of their own: what each one is
DATA_DOCS = {
    "integrators.METHODS": "Every method by name (``dict[str, Method]``); each carries ``order``, "
                           "``preserves`` (the invariants it keeps) and the problem kinds it applies to. "
                           "The table below is generated from it.",
    "integrators.ALIASES": "Short names accepted for scipy's methods (``\"DOP853\"`` means "
                           "``\"scipy:DOP853\"``).",
    "integrators.DEFAULT_STEPS": "Number of steps of a fixed-step method when neither ``h`` nor ``steps`` is "
                                 "given.",
    "servo.lie.METHOD_TABLE": "What the claims of a system need -> the method ``simulate`` uses when none "
                              "is named.",
    "catalog.RELATIONS": "The kinds of edges of the relation graph (:func:`catalog.graph`).",
    "catalog.bibliography.WORKS": "Every cited work by key (``dict[str, Entry]``); see the "
                                  ":doc:`/bibliography`.",
    "catalog.sweeps.MEASURES": "The registered measures by name (``dict[str, Measure]``); "
                               ":func:`register_measure` adds one.",
}


def public_names(modname):
    """The public names of a module: its ``__all__``, else what its ``__init__`` imports from its own
    submodules (``servo.coordinates``)."""
    mod = importlib.import_module(modname)
    names = getattr(mod, "__all__", None)
    if names is not None:
        return list(names)
    out = []
    for name, obj in vars(mod).items():
        if name.startswith("_") or isinstance(obj, types.ModuleType):
            continue
        home = getattr(obj, "__module__", "") or ""
        if home.startswith(modname + ".") or home == modname:
            out.append(name)
    return out


def owners():
    """{id of a public object: the page (module) that documents it}. The page whose module is the longest
    prefix of the object's ``__module__`` owns it (``servo.lie`` owns ``servo.EulerPoincare``); an object
    defined elsewhere (``catalog.errors.CatalogError``) belongs to the first page that lists it."""
    out = {}
    for modname, _ in PAGES:
        mod = importlib.import_module(modname)
        for n in public_names(modname):
            obj = getattr(mod, n)
            if isinstance(obj, types.ModuleType) or _kind(obj) == "data":
                continue
            home = getattr(obj, "__module__", None) or ""
            best = out.get(id(obj))
            fits = home == modname or home.startswith(modname + ".")
            if best is None or (fits and len(modname) > len(best[0]) and
                                (home == best[0] or home.startswith(best[0] + ".") or not best[1])):
                out[id(obj)] = (modname, fits)
    return {k: v[0] for k, v in out.items()}


def _kind(obj):
    if isinstance(obj, types.ModuleType):
        return "module"
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if callable(obj) and not isinstance(obj, (dict, list, tuple)):
        return "function"
    return "data"


ORDER = {"class": 0, "function": 1, "data": 2, "exception": 3, "module": 4}
HEADINGS = {"class": "Classes", "function": "Functions", "data": "Data", "exception": "Exceptions",
            "module": "Modules"}


def page(modname, title, intro_dir, owner_of):
    mod = importlib.import_module(modname)
    names = public_names(modname)
    own, elsewhere = [], []
    for n in names:
        owner = owner_of.get(id(getattr(mod, n)), modname)
        (own if owner == modname else elsewhere).append((n, owner))
    head = f"``{modname}``: {title}"
    lines = [f".. _api-{modname}:", "", head, "=" * len(head), "",
             f".. automodule:: {modname}", "   :no-members:", ""]
    intro = intro_dir / f"{modname}.rst"
    if intro.exists():
        lines += [f".. include:: intro/{modname}.rst", ""]
    kinds = {n: _kind(getattr(mod, n)) for n, _ in own}
    documented = [n for n, _ in own if kinds[n] != "module"]
    if documented:
        lines += ["Summary", "-------", "", ".. autosummary::", ""]
        lines += [f"   {n}" for n in sorted(documented, key=lambda n: ORDER[kinds[n]]) if kinds[n] != "data"]
        lines += [""]
    if elsewhere or any(k == "module" for k in kinds.values()):
        lines += ["Re-exported names", "-----------------", "",
                  f"Also importable from ``{modname}``, documented with the module that defines them:", ""]
        for n, owner in elsewhere:
            lines.append(f"* :obj:`{modname}.{n} <{owner}.{n}>` (:ref:`{owner} <api-{owner}>`)")
        for n, k in kinds.items():
            if k == "module":
                sub = f"{modname}.{n}"
                lines.append(f"* ``{sub}``: :ref:`its page <api-{sub}>`" if any(m == sub for m, _ in PAGES)
                             else f"* ``{sub}`` (a module)")
        lines.append("")
    for kind in ("class", "function", "data", "exception"):
        group = [n for n in documented if kinds[n] == kind]
        if not group:
            continue
        lines += [HEADINGS[kind], "-" * len(HEADINGS[kind]), ""]
        for n in group:
            full = f"{modname}.{n}"
            if kind == "class":
                lines += [f".. autoclass:: {full}", "   :members:", "   :show-inheritance:", ""]
            elif kind == "exception":
                lines += [f".. autoexception:: {full}", "   :show-inheritance:", ""]
            elif kind == "function":
                lines += [f".. autofunction:: {full}", ""]
            else:
                value = repr(getattr(mod, n))
                lines += [f".. py:data:: {full}"] + ([f"   :value: {value}"] if len(value) <= 160 else [])
                lines += ["", "   " + DATA_DOCS.get(full, ""), ""]
                if full == "integrators.METHODS":
                    lines += ["   .. include:: methods_table.rst", ""]
    return "\n".join(lines)


def methods_table():
    """The methods of ``integrators.METHODS`` with their order, step control and what they keep."""
    from integrators import METHODS

    rows = []
    for name, m in METHODS.items():
        keeps = ", ".join(sorted(getattr(m, "preserves", ()) or ())) or "-"
        kinds = ", ".join(getattr(m, "kinds", ()) or ())
        step = "fixed" if getattr(m, "fixed_step", False) else "adaptive"
        rows.append((f"``{name}``", str(getattr(m, "order", "")), step, keeps, kinds))
    head = ("method", "order", "step", "keeps", "problems")
    out = [".. list-table::", "   :header-rows: 1", "   :widths: 18 6 10 40 26", ""]
    for r in (head, *rows):
        out.append("   * - " + r[0])
        out += [f"     - {c}" for c in r[1:]]
    return "\n".join(out) + "\n"


def write(directory):
    directory = Path(directory)
    directory.mkdir(exist_ok=True)
    intro_dir = directory / "intro"
    owner_of = owners()
    for modname, title in PAGES:
        (directory / f"{modname}.rst").write_text(page(modname, title, intro_dir, owner_of), encoding="utf-8")
    (directory / "methods_table.rst").write_text(methods_table(), encoding="utf-8")
