"""backend="auto" keeps numpy for a long output grid of a projected pair whose Casimirs have many monomials (every grid
point is projected; numpy projects them together as columns, the generic kernel one by one): so(5) in a random
basis (a quartic of 714 monomials) keeps numpy, so(4) (two quadratics) takes the generic kernel when it is loaded."""

import numpy as np

from integrators import METHODS
from integrators.backends import auto_compile, fastpath
from integrators.codegen import projection
from liegroups import named
from servo.lie import EulerPoincare
from tests.algebras import random_basis


def _plan(alg):
    n = alg.dim
    s = EulerPoincare(alg, np.eye(n) + 0.1 * np.diag(np.arange(n)))
    P = s.problem()
    m = METHODS["rk853_projected"]
    return fastpath.plan(P, m.tableau, m.lie, m.terms, np.linspace(0.3, 1.0, n), projection.of_algebra(alg))


def test_heavy_grid_keeps_numpy_under_auto(monkeypatch):
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "background")
    monkeypatch.setattr(auto_compile.generic_kernel, "compiled", lambda: True)   # as if loaded in this process
    monkeypatch.setattr(auto_compile, "submit", lambda key, job: None)           # nothing queued
    so5 = random_basis(named.so(5), np.random.default_rng(1))
    heavy, light = _plan(so5), _plan(named.so4())
    G = 1001                                                                     # simulate's default grid
    assert G * sum(len(p) for p in heavy.proj.polys) > auto_compile.HEAVY_GRID_WORK
    assert G * sum(len(p) for p in light.proj.polys) <= auto_compile.HEAVY_GRID_WORK
    work = 10 * auto_compile.GENERIC_WORK
    args = (work, False, False, 10.0, 1e-8, 1e-10, None)
    assert auto_compile.choose(heavy, "numpy", *args, grid=G) == "numpy"
    assert auto_compile.choose(light, "numpy", *args, grid=G) == "generic"
    assert auto_compile.choose(heavy, "numpy", *args, grid=31) == "generic"       # a short grid: the kernel
    assert auto_compile.choose(heavy, "numpy", *args, grid=0) == "generic"        # without a grid: the kernel
