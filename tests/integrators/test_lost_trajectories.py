"""Ensembles that lose a trajectory (integrators.engine.freeze, integrators.core.lost): the one that blows up
freezes alone, the others go on to t1.

The problem: z' = ad*_w z on sl(2)* (basis h, e, f: [h, e] = 2e, [h, f] = -2f, [e, f] = h) with w = z M,
M not symmetric. On the line z = (0, s, 0): w = s M[1] = (s, 0, 0.3 s), and with
(ad*_w z)_j = sum_ik w_i C[i, j, k] z_k,

    (ad*_w z)_0 = -2 w_1 z_1 + 2 w_2 z_2 = 0,  (ad*_w z)_1 = 2 w_0 z_1 - w_2 z_0 = 2 s^2,
    (ad*_w z)_2 = -2 w_0 z_2 + w_1 z_0 = 0,

so the line is invariant and s' = 2 s^2: s(t) = s0 / (1 - 2 s0 t) blows up at t* = 1 / (2 s0) = 0.5
for s0 = 1 (every Runge-Kutta stage of a state on the line stays on it). The other initial states stay
bounded on [0, 2] (their single runs reach t1 with status 0: checked below). Expected values: each
good trajectory's single run (equal to round-off where the steps are the same: fixed steps, independent
ensembles; to the tolerance where the ensemble shares its steps), t*, and the bad trajectory's single
run, whose failure time is t* to the time resolution of the run.
"""

import numpy as np
import pytest

from integrators import CoadjointProblem, integrate
from integrators.backends import numba_kernels
from integrators.reference import genhelpers
from liegroups import named

from ._problems import ADAPTIVE_PROJECTED, ADAPTIVE_RK, ADAPTIVE_RKMK

NUMBA = numba_kernels.available()
M = np.array([[1.0, 0.0, 0.2], [1.0, 0.0, 0.3], [0.2, 0.3, 1.0]])
P = CoadjointProblem(named.sl2(), lambda z: z @ M, velocity_matrix=M, name="sl2 with a blow-up line")
Z = np.array([[0.3, -0.2, 0.5], [0.0, 1.0, 0.0], [-0.3, 0.05, 0.2], [0.1, -0.3, 0.1]])
BAD, GOOD, T_STAR = 1, [0, 2, 3], 0.5
PATHS = [dict(fast=False), dict(backend="numpy")] + ([dict(backend="numba")] if NUMBA else [])
TOL = dict(rtol=1e-9, atol=1e-12)


def _held_after(r, b):
    """The saved rows of trajectory b after its t_end: all equal to its last finite state."""
    late = r.t > r.t_end.ravel()[b]
    assert late.any()
    assert np.all(r.y[late, b] == r.y[-1, b]) and np.all(np.isfinite(r.y))


def _says_it(r, count=1, of=4, first=BAD):
    assert r.status == -1 and list(r.failed) == [first]
    assert f"{count} of {of} trajectories stopped early" in r.message and f"flat index {first}" in r.message
    assert np.all(r.t_end.ravel()[GOOD] == 2.0)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: "-".join(f"{k}={v}" for k, v in p.items()))
@pytest.mark.parametrize("method", ["rk45", "rkmk853", "rk853_projected"])
def test_a_shared_adaptive_ensemble_loses_the_blown_up_trajectory_alone(method, path):
    kw = dict(method=method, check=False, **TOL)
    r = integrate(P, Z, (0.0, 2.0), **kw, **path)
    _says_it(r)
    assert r.t[-1] == 2.0 and r.y.shape[1:] == (4, 3)
    # its time: t* of s' = 2 s^2, and its single run's failure time (the step size collapses there)
    single = integrate(P, Z[BAD], (0.0, 2.0), **kw, **path)
    assert single.status == -1 and "step size fell below" in single.message
    assert r.t_end[BAD] == pytest.approx(single.t[-1], rel=1e-8) and r.t_end[BAD] == pytest.approx(T_STAR, rel=1e-8)
    _held_after(r, BAD)
    assert np.all(r.y[:, BAD, [0, 2]] == 0.0) or method == "rkmk853"   # the line is kept (ambient stages)
    # the good ones: their single runs (own steps, so to the tolerance), and the exact line's law of
    # the bad one before t*: s(t) = 1 / (1 - 2t)
    for b in GOOD:
        s = integrate(P, Z[b], (0.0, 2.0), **kw, **path)
        assert s.status == 0
        np.testing.assert_allclose(r.y[-1, b], s.y[-1], rtol=0, atol=1e-7)
    early = r.t < 0.45
    np.testing.assert_allclose(r.y[early, BAD, 1], 1.0 / (1.0 - 2.0 * r.t[early]), rtol=1e-7)


def test_every_path_of_the_shared_ensemble_takes_the_same_steps():
    """The numpy reference, the generated numpy columns and the compiled batch freeze the same trajectory
    at the same time, after the same number of steps, for every pair. (The step sizes agree to ~1e-8
    to 1e-5 only (tsit5): the error norm, a difference of stages, is rounded differently by the generated code, and the
    controller's h follows it; so the good states agree to the size of the local errors.)"""
    for method in ADAPTIVE_RK + ADAPTIVE_RKMK + ADAPTIVE_PROJECTED:
        kw = dict(method=method, check=False, **TOL)
        ref = integrate(P, Z, (0.0, 2.0), fast=False, **kw)
        for path in PATHS[1:]:
            r = integrate(P, Z, (0.0, 2.0), **kw, **path)
            assert r.nsteps == ref.nsteps and list(r.failed) == [BAD], (method, path)
            assert r.t_end[BAD] == pytest.approx(ref.t_end[BAD], rel=1e-12)
            np.testing.assert_allclose(r.t, ref.t, rtol=1e-5, atol=0)
            np.testing.assert_allclose(r.y[:, GOOD], ref.y[:, GOOD], rtol=0, atol=1e-6)  # the steps differ up to 1e-5


def test_a_lost_trajectory_does_not_change_the_steps_of_the_others():
    """With the bad trajectory the ensemble shares steps it dictated until t*; each good trajectory's
    saved rows are then still exactly the method's steps between them: the one-step map of the pair
    (the reference stages, started from the saved state) over each accepted step reproduces the next row
    to round-off."""
    from integrators.reference.pair import ReferencePair
    from integrators.methods import METHODS

    m = METHODS["rk853"]
    r = integrate(P, Z, (0.0, 2.0), method="rk853", check=False, fast=False, **TOL)
    ref = ReferencePair(P, m.tableau, m.lie, m.terms)
    y = r.y[:, GOOD]
    nxt = np.array([ref.step(r.t[k], y[k], r.t[k + 1] - r.t[k]) for k in range(len(r.t) - 1)])
    assert np.max(np.abs(nxt - y[1:])) <= 1e-14
    assert np.sum(r.t < T_STAR) > 100   # the steps did crowd before t*


@pytest.mark.parametrize("path", PATHS, ids=lambda p: "-".join(f"{k}={v}" for k, v in p.items()))
@pytest.mark.parametrize("method", ["rk4", "rkmk4"])
@pytest.mark.parametrize("size", [4, 12])
def test_a_fixed_step_ensemble_loses_the_overflowing_trajectory_alone(method, path, size):
    """Fixed steps: every trajectory takes the same steps as its single run, so the good ones equal
    their single runs to round-off; the bad one stops at its single run's last finite step (that run
    without the guard, which would cut it earlier for its unresolved steps near t*). 12 trajectories
    take the numpy columns, 4 the one-trajectory code."""
    Y = np.concatenate([Z, 0.1 * np.random.default_rng(0).standard_normal((size - 4, 3))])
    kw = dict(method=method, steps=400, **path)
    r = integrate(P, Y, (0.0, 2.0), **kw)
    _says_it(r, of=size)
    assert "overflowed" in r.message and len(r.t) == 401 and r.status == -1
    single = integrate(P, Y[BAD], (0.0, 2.0), check=False, **kw)
    assert single.status == -1 and r.t_end[BAD] == single.t[-1] and T_STAR <= r.t_end[BAD] < T_STAR + 0.05
    np.testing.assert_array_equal(r.y[r.t <= r.t_end[BAD], BAD][-1], single.y[-1])
    _held_after(r, BAD)
    for b in [k for k in range(size) if k != BAD]:
        s = integrate(P, Y[b], (0.0, 2.0), check=False, **kw)
        assert s.status == 0
        # round-off: the numpy reference's exponential of a batch and of one state round apart (2e-13)
        assert np.max(np.abs(r.y[:, b] - s.y)) <= 5e-13, b
    # the guard judged the others (and found them resolved): nothing was cut
    assert r.checks["step_error"] < 0.25


def test_dense_output_of_a_shared_ensemble_holds_the_lost_trajectory():
    r = integrate(P, Z, (0.0, 2.0), method="rk853_projected", steps=20, **TOL)
    _says_it(r)
    assert len(r.t) == 21 and r.t[-1] == 2.0
    _held_after(r, BAD)
    before = r.t < T_STAR
    np.testing.assert_allclose(r.y[before, BAD, 1], 1.0 / (1.0 - 2.0 * r.t[before]), rtol=1e-7)
    for b in GOOD:
        s = integrate(P, Z[b], (0.0, 2.0), method="rk853_projected", steps=20, **TOL)
        np.testing.assert_allclose(r.y[:, b], s.y, rtol=0, atol=1e-7)
    # the guard (on: check=True) judged the good ones and kept every row
    assert any(k.startswith("invariant:casimir") for k in r.checks)


@pytest.mark.parametrize("method", ADAPTIVE_RK + ADAPTIVE_RKMK + ADAPTIVE_PROJECTED)
def test_an_independent_ensemble_fills_an_output_grid(method):
    """Each trajectory's own steps and their continuous extension: equal to its single run with the same
    grid to round-off; the bad one is held after its t_end; t_eval need not start at t0."""
    kw = dict(method=method, check=False, backend="numpy", **TOL)
    r = integrate(P, Z, (0.0, 2.0), ensemble="independent", steps=40, **kw)
    _says_it(r)
    assert r.y.shape == (41, 4, 3) and np.array_equal(r.t, np.linspace(0.0, 2.0, 41))
    for b in GOOD:
        s = integrate(P, Z[b], (0.0, 2.0), steps=40, **kw)
        assert np.max(np.abs(r.y[:, b] - s.y)) <= 1e-13, b
    bad = integrate(P, Z[BAD], (0.0, 2.0), steps=40, **kw)
    assert r.t_end[BAD] == pytest.approx(bad.t[-1] if bad.t[-1] > 0.45 else T_STAR, rel=1e-8)
    k = int(np.sum(r.t < 0.45))      # the same points (closer to t*, the blow-up amplifies round-off)
    np.testing.assert_allclose(r.y[:k, BAD], bad.y[:k], rtol=1e-12)
    _held_after(r, BAD)
    te = np.array([0.25, 1.0, 1.7])
    q = integrate(P, Z[GOOD], (0.0, 2.0), ensemble="independent", t_eval=te, **kw)
    assert q.status == 0 and len(q.failed) == 0 and q.y.shape == (3, 3, 3)
    for i, b in enumerate(GOOD):
        s = integrate(P, Z[b], (0.0, 2.0), t_eval=te, **kw)
        assert np.max(np.abs(q.y[:, i] - s.y)) <= 1e-13


def test_the_taylor_exponential_of_numpy_columns_keeps_a_bad_column_to_itself():
    # one column beyond the range of the Taylor action (1e5) and one NaN: only they are NaN, and the
    # plan (substeps) is that of the largest bound within range
    bound = np.array([0.3, 2e5, 4.0, np.nan])
    s, m, bad = genhelpers._tplan_array(bound)
    assert (s, m) == genhelpers._tplan_float(4.0)[:2]
    assert np.array_equal(np.isnan(bad), [False, True, False, True]) and np.all(bad[[0, 2]] == 0.0)
    b, bad = genhelpers._tbound_array(bound)
    assert b == 4.0 and np.array_equal(np.isnan(bad), [False, True, False, True])
    assert genhelpers._tbound_float(2e5)[0] == 2e5 and np.isnan(genhelpers._tbound_float(2e5)[1])
