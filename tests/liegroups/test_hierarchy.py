"""Every exception class defined anywhere in liegroups derives from LieGroupsError (a ValueError), and
the public names stay importable from the package."""

import importlib
import inspect
import pkgutil

import pytest

import liegroups
from liegroups import LieAlgebra, LieAlgebraError, LieGroupsError, StructureConstantsError, named


def _exception_classes(package):
    found = {}
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        mod = importlib.import_module(info.name)
        for name, obj in vars(mod).items():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__.startswith(package.__name__):
                found[f"{obj.__module__}.{name}"] = obj
    return found


def test_every_exception_derives_from_the_package_base():
    classes = _exception_classes(liegroups)
    assert {"liegroups.errors.LieAlgebraError", "liegroups.errors.StructureConstantsError"} <= set(classes)
    for name, cls in classes.items():
        assert issubclass(cls, LieGroupsError), name
        assert issubclass(cls, ValueError), name


def test_raised_errors_are_caught_by_the_base():
    with pytest.raises(LieGroupsError):
        LieAlgebra([[[0.0]], [[1.0]]])  # wrong shape
    with pytest.raises(LieGroupsError):
        named.get("no such algebra")
    assert issubclass(StructureConstantsError, LieAlgebraError)
