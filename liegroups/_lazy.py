"""Lazy package exports (PEP 562), so that ``import servo`` costs milliseconds and loads no sympy.

A package ``__init__`` writes its public names once, as ordinary imports under ``if TYPE_CHECKING:``
(so type checkers, editors and the house import checker read them as before), then calls::

    exports(__name__, __file__)

:func:`exports` reads that block with ``ast`` and gives the package the module attribute access of
PEP 562 (``__getattr__``, ``__dir__``): a public name imports the submodule holding it on first access
(``from servo import ServoSecondKind`` still works; only ``servo.lie`` and what it needs are loaded). A
submodule or subpackage (``servo.lie``) is imported on access too, as the eager ``__init__`` made it
available before.

The hooks are methods of a ``ModuleType`` subclass assigned to the package's ``__class__`` (the data
model's documented way to customise a module) rather than module-level functions, for one reason: a
public function named like its own submodule (``integrators.compare``, ``catalog.graph``) must stay the
function when some other file imports the submodule, which binds the submodule on the package; the
eager ``__init__`` rebound the name to the function, and ``__setattr__`` here keeps it so.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
import types
from pathlib import Path


def _is_type_checking(test):
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def lazy_names(init_file):
    """{public name: (module, attribute or None)} from the ``if TYPE_CHECKING:`` block of ``init_file``.

    ``from .m import A`` gives ``A -> (".m", "A")``; ``from . import m`` gives ``m -> (".m", None)``
    (the submodule itself); ``from pkg import A`` keeps the absolute name.
    """
    tree = ast.parse(Path(init_file).read_text(encoding="utf-8"), filename=str(init_file))
    out = {}
    for node in tree.body:
        if not (isinstance(node, ast.If) and _is_type_checking(node.test)):
            continue
        for imp in node.body:
            if not isinstance(imp, ast.ImportFrom):
                raise ValueError(f"{init_file}:{imp.lineno}: only 'from ... import ...' belongs in the "
                                 "TYPE_CHECKING block of lazy exports")
            base = "." * imp.level + (imp.module or "")
            for alias in imp.names:
                public = alias.asname or alias.name
                if imp.module is None:  # from . import submodule
                    out[public] = (base + alias.name, None)
                else:
                    out[public] = (base, alias.name)
    return out


class _LazyPackage(types.ModuleType):
    """A package whose public names (``_lazy_table``) are imported on first access."""

    def __getattr__(self, name):
        table = vars(self).get("_lazy_table", {})
        if name in table:
            module, attr = table[name]
            target = importlib.import_module(module, self.__name__)
            value = target if attr is None else getattr(target, attr)
        elif not name.startswith("__") and importlib.util.find_spec(f"{self.__name__}.{name}") is not None:
            value = importlib.import_module(f"{self.__name__}.{name}")
        else:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        types.ModuleType.__setattr__(self, name, value)  # later accesses are plain attribute lookups
        return value

    def __dir__(self):
        return sorted(set(vars(self)) | set(vars(self).get("_lazy_table", {})))

    def __reduce__(self):
        # pickled by name, as pickle and cloudpickle do for a plain module (dask ships closures that
        # refer to a package, e.g. a sweep's measure written in __main__)
        return importlib.import_module, (self.__name__,)

    def __setattr__(self, name, value):
        exported = vars(self).get("_lazy_table", {}).get(name)
        if isinstance(value, types.ModuleType) and exported is not None and exported[1] is not None:
            return  # the import system binding submodule ``name`` over the public object of that name
        super().__setattr__(name, value)


def exports(package, init_file):
    """Make the public names of ``package`` (its ``TYPE_CHECKING`` block) lazy; call at the end of its ``__init__``."""
    mod = sys.modules[package]
    mod._lazy_table = lazy_names(init_file)
    mod.__class__ = _LazyPackage


class lazy_module:  # noqa: N801  (used like the ``import`` it replaces)
    """``sp = lazy_module("sympy")``: a module-level stand-in for a heavy third-party module, imported on
    the first attribute access (``sp.Matrix``), so that importing the file costs nothing.

    Only for third-party packages (tests/test_house.py checks the names against its list of optional or
    heavy packages); project files import each other with ordinary imports.
    """

    __slots__ = ("_name", "_module")

    def __init__(self, name):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_module", None)

    def __getattr__(self, attr):
        module = self._module
        if module is None:
            module = importlib.import_module(self._name)
            object.__setattr__(self, "_module", module)
        return getattr(module, attr)

    def __setattr__(self, attr, value):
        raise AttributeError(f"lazy_module({self._name!r}) is read-only")

    def __repr__(self):
        return f"lazy_module({self._name!r}, {'loaded' if self._module is not None else 'not loaded'})"
