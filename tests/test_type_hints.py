"""Type hints on the public API: every public callable has every parameter and its return annotated, and
the annotations resolve (``typing.get_type_hints``) to real objects.

What is public: each name in the ``__all__`` of the packages and rooms below. For a function, the
function; for a class, its ``__init__``, ``__call__`` and every public method, classmethod,
staticmethod and property (getter), including those it inherits from classes of this library; for an
instance (``liegroups.SO3``), the same members of its class; for a module (``liegroups.named``), its
public functions. A callable is checked under the room whose file defines it (``servo.lie`` for
``servo.ServoSecondKind``, ``liegroups`` for a method ``LieAlgebra`` inherits from
``liegroups.structure``), so a failure names the room to fix.

``*args`` and ``**kwargs`` must be annotated too (``**options: Any`` says what the callee forwards them
to accepts; leaving them bare would hide exactly the parameters a reader cannot see).

Names a module imports only ``if TYPE_CHECKING:`` (sympy types in files that must not load sympy at
import, classes that would form an import cycle) are resolved by running that block, which is what a
type checker reads.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import sys
import types
import typing
from pathlib import Path

import pytest

PACKAGES = ["liegroups", "integrators", "servo", "servo.lie", "servo.quadratic", "servo.coordinates", "catalog"]
OURS = ("liegroups", "integrators", "servo", "catalog")


def _rooms() -> list[str]:
    """PACKAGES and the rooms of catalog that have an ``__all__`` of their own."""
    rooms = list(PACKAGES)
    catalog_dir = Path(importlib.import_module("catalog").__file__).parent
    for init in sorted(catalog_dir.glob("*/__init__.py")):
        if "__all__" in init.read_text(encoding="utf-8"):
            rooms.append(f"catalog.{init.parent.name}")
    return rooms


def _type_checking_names(module: types.ModuleType) -> dict[str, object]:
    """The names bound by the top-level ``if TYPE_CHECKING:`` blocks of ``module``, run in its package."""
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):
        return {}
    body = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and (
                (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
                or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING")):
            body.extend(node.body)
    if not body:
        return {}
    package = module.__name__ if hasattr(module, "__path__") else module.__name__.rpartition(".")[0]
    ns: dict[str, object] = {"__name__": module.__name__, "__package__": package}
    exec(compile(ast.Module(body=body, type_ignores=[]), module.__name__, "exec"), ns)
    return {k: v for k, v in ns.items() if not k.startswith("__")}


@functools.lru_cache(maxsize=None)
def _namespace(module_name: str) -> dict[str, object]:
    module = sys.modules[module_name]
    return {**vars(module), **_type_checking_names(module)}


def annotation_problems(func: typing.Callable[..., object], label: str) -> list[str]:
    """What is wrong with the annotations of ``func``: unannotated parameters (all but a method's
    leading ``self`` / ``cls``), a missing return, or annotations ``get_type_hints`` cannot resolve."""
    func = inspect.unwrap(func)
    sig = inspect.signature(func)
    params = list(sig.parameters.values())
    if params and params[0].name in ("self", "cls") and "." in func.__qualname__:
        params = params[1:]
    problems = [f"{label}: parameter {p.name!r} not annotated" for p in params
                if p.annotation is inspect.Parameter.empty]
    if sig.return_annotation is inspect.Signature.empty:
        problems.append(f"{label}: return not annotated")
    try:
        typing.get_type_hints(func, globalns=_namespace(func.__module__))
    except Exception as exc:  # NameError, AttributeError, TypeError: all mean "does not resolve"
        problems.append(f"{label}: annotations do not resolve ({type(exc).__name__}: {exc})")
    return problems


def _member_function(attr: object) -> typing.Callable[..., object] | None:
    if isinstance(attr, (staticmethod, classmethod)):
        attr = attr.__func__
    elif isinstance(attr, property):
        attr = attr.fget
    elif isinstance(attr, functools.cached_property):
        attr = attr.func
    if attr is None or not inspect.isfunction(inspect.unwrap(attr)):
        return None
    return attr


def _class_members(cls: type, label: str):
    seen = set()
    for klass in cls.__mro__:
        if klass.__module__.split(".")[0] not in OURS:
            continue
        for name, attr in vars(klass).items():
            if name in seen or (name.startswith("_") and name not in ("__init__", "__call__")):
                continue
            seen.add(name)
            func = _member_function(attr)
            if func is not None:
                yield f"{label}.{name}", func


def public_callables(package: str):
    """(label, function) for every public callable reachable from ``package.__all__``."""
    mod = importlib.import_module(package)
    # servo.coordinates has no __all__ (yet): its public names are then what its __init__ binds
    names = getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")
                                              and not inspect.ismodule(getattr(mod, n))]
    for name in names:
        obj = getattr(mod, name)
        label = f"{package}.{name}"
        if inspect.ismodule(obj):
            names = getattr(obj, "__all__", [n for n in vars(obj) if not n.startswith("_")])
            for n in names:
                f = getattr(obj, n)
                if inspect.isfunction(inspect.unwrap(f)) and f.__module__ == obj.__name__:
                    yield f"{label}.{n}", f
        elif inspect.isclass(obj):
            yield from _class_members(obj, label)
        elif inspect.isfunction(inspect.unwrap(obj)):
            yield label, obj
        elif type(obj).__module__.split(".")[0] in OURS and not isinstance(obj, (dict, list, tuple)):
            yield from _class_members(type(obj), label)


def _owner(func: typing.Callable[..., object], rooms: list[str]) -> str:
    module = inspect.unwrap(func).__module__
    return max((r for r in rooms if module == r or module.startswith(r + ".")), key=len, default=module)


@functools.lru_cache(maxsize=None)
def _all_problems() -> dict[str, list[str]]:
    rooms = _rooms()
    out: dict[str, list[str]] = {r: [] for r in rooms}
    done = set()
    for package in rooms:
        for label, func in public_callables(package):
            key = inspect.unwrap(func)
            if key in done:
                continue
            done.add(key)
            out.setdefault(_owner(func, rooms), []).extend(annotation_problems(func, label))
    return out


@pytest.mark.parametrize("room", _rooms())
def test_public_api_is_fully_annotated(room):
    problems = _all_problems().get(room, [])
    assert not problems, f"{len(problems)} annotation problem(s) in {room}:\n" + "\n".join(problems)


def test_every_checked_callable_belongs_to_a_room():
    """No public callable is attributed to a module outside the rooms (it would be checked by nobody)."""
    rooms = set(_rooms())
    assert set(_all_problems()) <= rooms


def test_rooms_are_not_empty():
    """The walk finds the public API (a walker that found nothing would pass every room)."""
    counts = {r: 0 for r in ["liegroups", "servo.lie", "servo"]}
    rooms = _rooms()
    for package in PACKAGES:
        for _label, func in public_callables(package):
            owner = _owner(func, rooms)
            if owner in counts:
                counts[owner] += 1
    assert counts["liegroups"] >= 40 and counts["servo.lie"] >= 80 and counts["servo"] >= 2, counts


FIXTURE = '''
from __future__ import annotations
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from fractions import Fraction

__all__ = ["good", "no_return", "bare_param", "unresolved", "Thing"]

def good(x: Fraction, *args: int, **kw: str) -> Fraction:
    return x

def no_return(x: int):
    return x

def bare_param(x: int, y, *args) -> int:
    return x

def unresolved(x: NoSuchName) -> int:
    return 0

class Base:
    def inherited(self, z) -> None:
        pass

class Thing(Base):
    def __init__(self, a: int) -> None:
        self.a = a

    def method(self, b: int) -> int:
        return b

    @property
    def size(self):
        return 1

    @classmethod
    def make(cls, a: int) -> Thing:
        return cls(a)

    def _private(self, q):
        return q
'''


def test_helper_finds_each_kind_of_missing_annotation(tmp_path, monkeypatch):
    """The same walk and check, on a fixture package with one defect of each kind, reports exactly those
    (and nothing for ``good``, whose annotation names a class imported only under TYPE_CHECKING)."""
    pkg = tmp_path / "liegroups_hint_fixture"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(FIXTURE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys.modules[__name__], "OURS", OURS + ("liegroups_hint_fixture",))
    try:
        problems = sorted(p for label, f in public_callables("liegroups_hint_fixture")
                          for p in annotation_problems(f, label))
    finally:
        sys.modules.pop("liegroups_hint_fixture", None)
        _namespace.cache_clear()
    assert problems == sorted([
        "liegroups_hint_fixture.no_return: return not annotated",
        "liegroups_hint_fixture.bare_param: parameter 'y' not annotated",
        "liegroups_hint_fixture.bare_param: parameter 'args' not annotated",
        "liegroups_hint_fixture.unresolved: annotations do not resolve (NameError: name 'NoSuchName' is not defined)",
        "liegroups_hint_fixture.Thing.size: return not annotated",
        "liegroups_hint_fixture.Thing.inherited: parameter 'z' not annotated",
    ])

