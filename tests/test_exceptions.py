"""One exception hierarchy per package, tested once over all four: every exception class defined anywhere in
a package derives from that package's base, and every base is a ValueError (bad input)."""

import importlib
import inspect
import pkgutil

import pytest

import catalog
import integrators
import liegroups
import servo
from catalog import CatalogError
from integrators import IntegratorError
from liegroups import LieGroupsError
from servo import ServoError

PACKAGES = [(liegroups, LieGroupsError), (integrators, IntegratorError), (servo, ServoError),
            (catalog, CatalogError)]


def exception_classes(package):
    """{module.Name: class} of every exception (not warning) class defined in the package's modules."""
    found = {}
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if info.name.endswith(".__main__"):      # ``python -m catalog`` runs the CLI on import
            continue
        mod = importlib.import_module(info.name)
        for name, obj in vars(mod).items():
            if (inspect.isclass(obj) and issubclass(obj, Exception) and not issubclass(obj, Warning)
                    and obj.__module__.startswith(package.__name__)):
                found[f"{obj.__module__}.{name}"] = obj
    return found


@pytest.mark.parametrize("package,base", PACKAGES, ids=[p.__name__ for p, _ in PACKAGES])
def test_every_exception_derives_from_the_package_base(package, base):
    classes = exception_classes(package)
    assert base in classes.values() and len(classes) >= 3
    for name, cls in classes.items():
        assert issubclass(cls, base), name
        assert issubclass(cls, ValueError), name


def test_the_checker_sees_a_class_outside_the_hierarchy(monkeypatch):
    import catalog.errors as ce

    class Stray(RuntimeError):
        pass

    Stray.__module__ = "catalog.errors"
    monkeypatch.setattr(ce, "Stray", Stray, raising=False)
    assert "catalog.errors.Stray" in exception_classes(catalog)
    assert not issubclass(Stray, CatalogError)
