"""Start-up: importing a package loads its public names on first use (liegroups._lazy, PEP 562).

What is checked is the mechanism, not wall time (benchmarks/compare_integrators.py measures that): in
a fresh interpreter, importing a package leaves sympy, matplotlib, galgebra and scipy.integrate unloaded,
every name of every ``__all__`` still resolves to the object its submodule defines, and a package
pickles by name (dask ships closures that refer to one).
"""

import importlib
import pickle
import subprocess
import sys

import pytest

PACKAGES = ["liegroups", "integrators", "servo", "servo.lie", "servo.quadratic", "servo.coordinates", "catalog"]
HEAVY = ["sympy", "matplotlib", "galgebra", "scipy.integrate", "numba"]


@pytest.mark.parametrize("package", ["liegroups", "integrators", "servo", "catalog"])
def test_import_loads_no_heavy_package(package):
    code = (f"import sys, {package}; print(','.join(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"import {package} loaded {out.stdout.strip()}"


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_resolves(package):
    mod = importlib.import_module(package)
    names = getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")]
    for name in names:
        obj = getattr(mod, name)
        assert obj is not None, f"{package}.{name}"
    assert set(names) <= set(dir(mod))


def test_a_name_that_is_also_a_submodule_stays_the_function():
    import catalog
    import catalog.graph  # binds the submodule on the package: the public function must win
    assert callable(catalog.graph) and not isinstance(catalog.graph, type(catalog))


def test_unknown_name_is_an_attribute_error():
    import servo
    with pytest.raises(AttributeError, match="servo.*no_such_name"):
        servo.no_such_name


def test_packages_pickle_by_name():
    import servo
    import liegroups
    assert pickle.loads(pickle.dumps(servo)) is servo
    assert pickle.loads(pickle.dumps(liegroups)) is liegroups
