"""backend="auto" with the generic kernel loaded takes it for a run of one trajectory from any work (GENERIC_WORK = 0:
the loaded kernel beats numpy's setup even for one step, benchmarks/auto_short_runs.py), with or without an output
grid, and for the long grid of a projected pair with many Casimir monomials too (so(5) in a random basis, a quartic
of 714 monomials: the kernel evaluates the Casimirs from sparse monomial tables since, 5.1 ms against numpy's
5.9 ms for simulate's default grid); numpy when the kernel is not loaded and the run does not pay for loading it."""

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


def test_auto_takes_the_loaded_generic_kernel_from_any_work_and_any_grid(monkeypatch):
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "background")
    loaded = [True]
    monkeypatch.setattr(auto_compile.generic_kernel, "compiled", lambda: loaded[0])
    monkeypatch.setattr(auto_compile.generic_kernel, "on_disk", lambda: False)
    monkeypatch.setattr(auto_compile, "compiled", lambda pl, kind: False)       # no specialised loop
    queued = []
    monkeypatch.setattr(auto_compile, "submit", lambda key, job: queued.append(key))
    so5 = random_basis(named.so(5), np.random.default_rng(1))
    heavy, light = _plan(so5), _plan(named.so4())
    assert sum(len(p) for p in heavy.proj.polys) > 700                          # the dense quartic
    for work in (1.0, 50.0, 5000.0):
        args = (work, False, False, 10.0, 1e-8, 1e-10, None)
        for pl in (heavy, light):
            for grid in (1001, 31, 0):
                assert auto_compile.choose(pl, "numpy", *args, grid=grid) == "generic", (work, grid)
    assert not queued                                                           # short runs queue no compile
    loaded[0] = False                       # not loaded (and not on disk): numpy, never a wait
    assert auto_compile.choose(light, "numpy", 50.0, False, False, 10.0, 1e-8, 1e-10, None, grid=1001) == "numpy"
    # an ensemble or a run with events is not the generic kernel's
    loaded[0] = True
    assert auto_compile.choose(light, "numpy", 50.0, True, False, 10.0, 1e-8, 1e-10, None) == "numpy"
    assert auto_compile.choose(light, "numpy", 50.0, False, True, 10.0, 1e-8, 1e-10, None) == "numpy"


def test_a_short_run_before_the_kernel_is_loaded_runs_numpy_and_loads_it_in_the_background(monkeypatch):
    """The kernel on disk but not loaded in this process, a short run (not worth a second's load in the call):
    numpy now, and the kernel's load (generic_kernel.warm) queued once for the background thread; without a disk
    cache nothing is loaded (its compile is a long run's business)."""
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "background")
    monkeypatch.setattr(auto_compile.generic_kernel, "compiled", lambda: False)
    on_disk = [True]
    monkeypatch.setattr(auto_compile.generic_kernel, "on_disk", lambda: on_disk[0])
    monkeypatch.setattr(auto_compile, "compiled", lambda pl, kind: False)
    queued = []
    monkeypatch.setattr(auto_compile, "submit", lambda key, job: queued.append((key, job)))
    light = _plan(named.so4())
    args = (50.0, False, False, 10.0, 1e-8, 1e-10, None)
    assert auto_compile.choose(light, "numpy", *args, grid=1001) == "numpy"
    assert queued == [("generic-load", auto_compile.generic_kernel.warm)]
    on_disk[0] = False
    queued.clear()
    assert auto_compile.choose(light, "numpy", *args, grid=1001) == "numpy" and not queued
