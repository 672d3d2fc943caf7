"""The output grid of the generic kernel (integrators.backends.generic_kernel, issue 24): the kernel fills the states at
the requested times inside its loop from each accepted step's continuous extension (DOP853's three extra stages and
order-7 interpolant, the 5(4) pairs' dense output, for RKMK pairs the interpolated generator's exponential action
on the state, in g x g* on a forced problem; the projected pairs' points projected onto the Casimirs' level set,
a forced RKMK pair's onto the linear invariants), so a cold backend="numba" call with a grid (``simulate``'s
default) runs compiled instead of saving every step for the numpy reference's extension.

Expected values: the specialised generated "adaptive_grid" loop of the numpy backend (straight-line code per
structure, written by integrators.codegen.dense_source from the tableau; its logged steps evaluated by its own
evaluator), a second implementation of the same definition (integrators.reference.dense_output): the same steps,
and the same grid states to round-off (the flow amplifies it over the interval). The algebras are drawn with a
seed (so(4) and so(5) in random bases); the forced systems are servo-constraints of the first kind with one and
two constraints.
"""

import math

import numpy as np
import pytest

from integrators import integrate
from integrators.backends import auto_compile, fastpath, generic_kernel, numba_kernels
from integrators.backends.output_grid import OutputGrid
from integrators.core.errors import MethodError
from liegroups import named
from tests.algebras import random_basis

from ._problems import generated_plan, quadratic_problem, start
from .test_generic_kernel_forced import _system

NUMBA = numba_kernels.available()
needs_numba = pytest.mark.skipif(not NUMBA, reason="numba not installed")
MODE = "numba" if NUMBA else "python"

#: label -> algebra, drawn with a seed
ALGEBRAS = {"so(4) random basis": lambda: random_basis(named.so4(), np.random.default_rng(41)),
            "so(5) random basis": lambda: random_basis(named.so(5), np.random.default_rng(42))}
#: the pairs of a free problem: DOP853 ambient and projected, a 5(4) pair, the RKMK pairs
FREE = ("rk853", "rk853_projected", "rk45", "rkmk853", "rkmk45")
#: ... and of a forced one (the ambient pair keeps the linear invariants, the RKMK pairs project onto them)
FORCED = ("rk853", "rkmk853", "rkmk45")


_plan = generated_plan


def _grid_run(pl, fn, mode, y0, t0, t1, te, rtol, atol):
    """One run of the loop ``fn`` (the generated "adaptive_grid" of ``mode`` "scalar", or the generic kernel's with
    the grid arguments of "numba") from y0 at t0 with its own starting step, filling an OutputGrid at te as
    fastpath.run_adaptive does (the times equal to t0 take y0 first) -> (status, nsteps, nrej, grid states)."""
    n = pl.st.n
    grid = OutputGrid(te, (len(te), n), pl, pl.targets(y0), t1 < t0)
    grid.start(t0, y0)
    ts, ys = np.empty(4), np.empty((4, n))
    ts[0], ys[0] = t0, y0
    with np.errstate(all="ignore"):
        out = fn(t0, t1, 0.0, rtol, atol, math.inf, 10**7, 10**6, 0, ts, ys, *y0.tolist(), *([0.0] * n),
                 *pl.targets(y0).tolist(), *grid.args(mode))
    k = grid.filled
    return out[0], out[3], out[4], grid.ye[:k].copy()


def _compare(pl, y0, t0, t1, te, rtol, atol, mode=MODE, tol=1e-12):
    """The generic kernel's grid against the specialised numpy loop's: the same steps, every grid time filled,
    the states equal to ``tol`` relative; returns the kernel's states."""
    ref = _grid_run(pl, pl.function("adaptive_grid", "scalar"), "scalar", y0, t0, t1, te, rtol, atol)
    fn = generic_kernel.function(pl.st, pl.tab, pl.lie, pl.terms, pl.proj, mode)
    got = _grid_run(pl, fn, "numba", y0, t0, t1, te, rtol, atol)
    assert ref[0] == got[0] == 0
    assert (got[1], got[2]) == (ref[1], ref[2])            # the same accepted and rejected steps
    assert got[3].shape == ref[3].shape == (len(te), pl.st.n)
    scale = np.max(np.abs(ref[3]))
    assert np.max(np.abs(got[3] - ref[3])) <= tol * scale, np.max(np.abs(got[3] - ref[3])) / scale
    return got[3]


@needs_numba
@pytest.mark.parametrize("label", sorted(ALGEBRAS))
@pytest.mark.parametrize("method", FREE)
def test_grid_of_the_generic_kernel_is_the_specialised_loops(label, method):
    alg = ALGEBRAS[label]()
    P, y0 = quadratic_problem(alg, 5), start(alg.dim, 5)
    pl = _plan(P, method, y0)
    te = np.linspace(0.0, 3.0, 57)
    ye = _compare(pl, y0, 0.0, 3.0, te, 1e-9, 1e-11)
    assert np.array_equal(ye[0], y0)
    if pl.proj is not None:     # every grid point on the Casimirs' level set of y0, to round-off
        c0 = pl.proj.values(y0)
        assert np.max(np.abs(pl.proj.values(ye) - c0)) <= 1e-13 * (1.0 + np.max(np.abs(c0)))


@needs_numba
@pytest.mark.parametrize("label", ["so(4), 1 constraint", "so(4), 2 constraints"])
@pytest.mark.parametrize("method", FORCED)
def test_grid_of_the_generic_kernel_on_a_forced_problem(label, method):
    s, m0 = _system(label)
    P = s.problem()
    pl = _plan(P, method, m0)
    assert pl.st.P is not None                    # the multiplier force recognised: a forced plan
    te = np.linspace(0.0, 3.0, 41)
    ye = _compare(pl, m0, 0.0, 3.0, te, 1e-9, 1e-12)
    L = np.atleast_2d(s.A) @ np.linalg.inv(s.I)     # the constraints (I^-1 a_i, m) = 0 at every grid point
    assert np.max(np.abs(ye @ L.T)) <= 1e-13 * np.max(np.abs(ye)) * np.max(np.abs(L))


@needs_numba
@pytest.mark.parametrize("method", ["rk853_projected", "rkmk853", "rk45"])
def test_grid_backward_with_repeated_times_and_times_at_t0(method):
    """t1 < t0, the grid descending with times equal to t0 (taking y0), repeated times inside a step and
    at t1 (a step's end)."""
    alg = ALGEBRAS["so(4) random basis"]()
    P, y0 = quadratic_problem(alg, 6), start(alg.dim, 6)
    pl = _plan(P, method, y0)
    te = np.array([2.0, 2.0, 1.7, 1.7, 1.7, 1.25, 0.8, 0.8, 0.31, 0.0, 0.0])
    ye = _compare(pl, y0, 2.0, 0.0, te, 1e-9, 1e-11)
    assert np.array_equal(ye[0], y0) and np.array_equal(ye[1], y0)
    assert np.array_equal(ye[2], ye[3]) and np.array_equal(ye[2], ye[4]) and np.array_equal(ye[9], ye[10])


def test_python_text_fills_the_grid_as_the_specialised_loop():
    """mode="python" (the kernel's text on Python floats, the path without numba) fills the grid as the
    specialised loop does: DOP853 projected (extra stages, projection), an RKMK 5(4) pair, a forced RKMK pair."""
    alg = ALGEBRAS["so(4) random basis"]()
    P, y0 = quadratic_problem(alg, 8), start(alg.dim, 8)
    te = np.array([0.0, 0.1, 0.1, 0.45, 0.9, 1.0])
    for method in ("rk853_projected", "rkmk45"):
        _compare(_plan(P, method, y0), y0, 0.0, 1.0, te, 1e-7, 1e-9, mode="python")
    s, m0 = _system("so(4), 2 constraints")
    _compare(_plan(s.problem(), "rkmk853", m0), m0, 0.0, 1.0, te, 1e-7, 1e-9, mode="python")


@needs_numba
def test_a_run_continued_in_chunks_fills_one_grid():
    """A budget that stops the kernel (status -2) and a second call from the returned (t, h, z, e): the grid
    index GI carries over, the grid is that of one call."""
    alg = ALGEBRAS["so(5) random basis"]()
    P, y0 = quadratic_problem(alg, 9), start(alg.dim, 9)
    pl = _plan(P, "rkmk853", y0)
    n, te = alg.dim, np.linspace(0.0, 3.0, 31)
    fn = generic_kernel.function(pl.st, pl.tab, pl.lie, pl.terms, pl.proj)
    whole = _grid_run(pl, fn, "numba", y0, 0.0, 3.0, te, 1e-9, 1e-11)
    grid = OutputGrid(te, (len(te), n), pl, pl.targets(y0))
    grid.start(0.0, y0)
    ts, ys = np.empty(4), np.empty((4, n))
    a = fn(0.0, 3.0, 0.0, 1e-9, 1e-11, math.inf, 10**7, 5, 0, ts, ys, *y0, *([0.0] * n), *grid.args("numba"))
    assert a[0] == -2 and 0 < grid.GI[0] < len(te)
    b = fn(a[1], 3.0, a[2], 1e-9, 1e-11, math.inf, 10**7, 10**6, 5, ts, ys, *a[8:8 + 2 * n], *grid.args("numba"))
    assert b[0] == 0 and a[3] + b[3] == whole[1] and grid.GI[0] == len(te)
    # (the second call's first stage recomputed from z, e: round-off)
    assert np.max(np.abs(grid.ye - whole[3])) <= 1e-13 * np.max(np.abs(whole[3]))


def test_a_tableau_without_continuous_extension_refuses_a_grid():
    import dataclasses
    alg = named.so3()
    P, y0 = quadratic_problem(alg, 1), start(3, 1)
    pl = _plan(P, "rk45", y0)
    tab = dataclasses.replace(pl.tab, name="dp5 without P", P=None)
    fn = generic_kernel.function(pl.st, tab, False, 1, None, "python")
    grid = OutputGrid(np.array([0.0, 0.5]), (2, 3), pl, pl.targets(y0))
    with pytest.raises(MethodError, match="no continuous extension"):
        fn(0.0, 1.0, 0.0, 1e-6, 1e-8, math.inf, 10**7, 10, 0, np.empty(4), np.empty((4, 3)), *y0, 0.0, 0.0, 0.0,
           *grid.args("numba"))


# ------------------------------------------------------------------ through the engine
@needs_numba
def test_cold_numba_and_auto_fill_the_grid_in_the_kernel(cold_specialised):
    """A cold backend="numba" call with an output grid (simulate's default) and an "auto" run the engine would
    compile run the generic kernel with the grid in its loop (no step saved but the last: result.t is the grid),
    the numpy backend's grid to round-off; "auto" continuing after a Python chunk takes the kernel too."""
    generic_kernel.warm()
    s, m0 = _system("so(4), 2 constraints")
    kw = dict(method="rkmk853", rtol=1e-9, atol=1e-12)
    g = s.simulate(m0, 3.0, backend="numba", **kw)
    gn = s.simulate(m0, 3.0, backend="numpy", **kw)
    assert g.backend == auto_compile.NUMBA_GENERIC_LABEL and np.array_equal(g.t, gn.t) and len(g.t) > 100
    assert g.nsteps == gn.nsteps
    assert np.max(np.abs(g.y - gn.y)) <= 1e-12 * np.max(np.abs(gn.y))
    assert [k[0] for k in cold_specialised] == ["adaptive_grid"]           # the specialised grid loop, queued
    P = s.problem()
    pl = _plan(P, "rkmk853", m0)
    assert auto_compile.choose(pl, "numba", 2e6, False, False, 3.0, 1e-9, 1e-12, None, grid=True) == "generic"
    assert auto_compile.continue_with(pl, 3.0, 1e-9, 1e-12, None, grid=True) == "generic"
    te = np.linspace(0.0, 3.0, 31)
    alg = ALGEBRAS["so(5) random basis"]()
    Q, y0 = quadratic_problem(alg, 10), start(alg.dim, 10)
    a = integrate(Q, y0, (0.0, 3.0), method="rk853_projected", rtol=1e-9, atol=1e-11, t_eval=te, backend="auto",
                  max_step=1e-3)   # work above the engine's compile threshold: the kernel, not numpy
    b = integrate(Q, y0, (0.0, 3.0), method="rk853_projected", rtol=1e-9, atol=1e-11, t_eval=te, backend="numpy",
                  max_step=1e-3)
    assert a.backend == auto_compile.GENERIC_LABEL and np.array_equal(a.t, te) and a.nsteps == b.nsteps
    assert np.max(np.abs(a.y - b.y)) <= 1e-12 * np.max(np.abs(b.y))


@needs_numba
def test_auto_continues_a_python_grid_run_in_the_kernel(cold_specialised, monkeypatch):
    """An "auto" run with an output grid that starts in Python (the steps with output times logged) and outlasts
    NUMPY_CHUNK steps continues in the generic kernel on the same grid (its index GI carried over, the logged
    steps evaluated at the end): every grid time filled, the numpy run's grid to the method's error (the step
    sequences after the switch agree to ~1e-5 relative, not to round-off: test_generic_kernel.py)."""
    generic_kernel.warm()
    alg = ALGEBRAS["so(4) random basis"]()
    P, y0 = quadratic_problem(alg, 12), start(alg.dim, 12)
    te = np.linspace(0.0, 20.0, 401)
    kw = dict(method="rk853_projected", rtol=1e-10, atol=1e-12, t_eval=te)
    monkeypatch.setattr(fastpath, "NUMPY_CHUNK", 30)
    monkeypatch.setattr(auto_compile, "GENERIC_WORK", 1e12)    # the run starts in numpy
    a = integrate(P, y0, (0.0, 20.0), backend="auto", **kw)
    b = integrate(P, y0, (0.0, 20.0), backend="numpy", **kw)
    assert a.backend == f"numpy for the first 30 steps, then {auto_compile.GENERIC_LABEL}" and b.nsteps > 60
    assert np.array_equal(a.t, te) and abs(a.nsteps - b.nsteps) <= 1
    assert np.max(np.abs(a.y - b.y)) <= 1e-9 * np.max(np.abs(b.y))      # (measured 6e-12)
    assert [j[0] for j in cold_specialised] == ["adaptive_grid"]           # the specialised grid loop, queued at the switch
