"""The generic ensemble kernel (integrators.backends.generic_ensemble): ensemble="independent" on the generic
compiled loop, a parallel loop over groups of trajectories, and the choice of it under backend "auto" and "numba"
(integrators.backends.auto_compile.choose_independent, choose_numba_independent).

Expected values: each trajectory's single run of the one-trajectory generic kernel (generic_kernel.function, a
fresh call with its own work arrays: equal to round-off, so a state that leaks between the trajectories of a
group, a wrong row or grid column, fails), and the numpy ensemble (backend="numpy", the vectorized controller over
numpy columns of the generated stages: another implementation; the same steps, so the states agree to round-off
amplified by the flow, checked at 1e-9 relative); the Casimirs of the initial states for the projected pair and the
servo's constraints for the forced RKMK pair (to 1e-12). The algebras are seeded: so(4) and se(3) in random bases
(no closed-form exponential), a solvable R x_D R^4, sl(2) with a blow-up line for the lost trajectories.
"""

import math

import numpy as np
import pytest

from integrators import CoadjointProblem, integrate
from integrators.backends import (auto_compile, batch_kernels, compile_child, fastpath, generic_ensemble,
                                  generic_kernel, numba_kernels)
from liegroups import named
from servo.lie import ServoFirstKind
from tests.algebras import random_basis

from ._problems import generated_plan, quadratic_problem, start
from .test_generic_kernel import _almost_abelian

pytestmark = pytest.mark.skipif(not numba_kernels.available(), reason="numba not installed")

TOL = dict(rtol=1e-9, atol=1e-11)
T1 = 2.0
#: an output grid with a time at t0 (y0), times inside steps and t1
TEV = np.linspace(0.0, T1, 9)


def _alg(label):
    rng = np.random.default_rng(5)
    return {"so4 random basis": lambda: random_basis(named.so4(), rng),
            "se3 random basis": lambda: random_basis(named.se3(), rng),
            "R x_D R^4": lambda: _almost_abelian(3, 5)}[label]()


def _ensemble(alg, seed, B=24):
    """B states near a common one (different trajectories, step sequences and step counts)."""
    y0 = start(alg.dim, seed)
    return y0 + 0.1 * np.random.default_rng(seed).standard_normal((B, alg.dim))


_plan = generated_plan


def _single(pl, y, h, t_eval=None):
    """The one-trajectory generic kernel from y with first step h (0: its own starting step), saving the end point;
    returns (status, t, nsteps, nrej, z, grid rows, its peak (zmax, tmax, hmax))."""
    n = pl.st.n
    fn = generic_kernel.function(pl.st, pl.tab, pl.lie, pl.terms, pl.proj)
    ts, ys = np.empty(2), np.empty((2, n))
    grid = ()
    if t_eval is not None:
        ye = np.empty((len(t_eval), n))
        k = int(np.sum(t_eval == 0.0))
        ye[:k] = y
        grid = (np.asarray(t_eval, dtype=float), ye, np.array([k], np.int64))
    out = fn(0.0, T1, h, TOL["rtol"], TOL["atol"], math.inf, 1 << 62, 10**6, 0, ts, ys, *y, *([0.0] * n),
             *pl.targets(y).tolist(), *grid)
    z = np.array(out[8:8 + n]) + np.array(out[8 + n:8 + 2 * n])
    return out[0], out[1], out[3], out[4], z, (grid[1] if grid else None), out[8 + 2 * n:11 + 2 * n]


def _check_rows_are_single_runs(pl, Y, got, t_eval=None, h=None):
    out, st, te, ns, nr = got[:5]
    for b in range(Y.shape[0]):
        status, t, nsteps, nrej, z, ye, pk = _single(pl, Y[b], 0.0 if h is None else h[b], t_eval)
        assert (st[b], te[b], ns[b], nr[b]) == (status, t, nsteps, nrej), b
        scale = 1.0 + np.max(np.abs(z))
        assert np.max(np.abs(out[b] - z)) <= 1e-14 * scale, b
        # the peak of its accepted steps (integrators.engine.growth), by the same step: the error estimate at rtol 1e-9
        # has ~7 digits (round-off of the stages over a difference of rtol's size), so the two compiled modules'
        # step sizes agree to ~1e-8 (the end states, at t1, to round-off)
        assert got[6][b] == pytest.approx(pk, rel=1e-6, abs=1e-6 * T1), b
        if t_eval is not None:
            assert np.max(np.abs(got[5][:, b] - ye)) <= 1e-14 * scale, b
    assert len(set(ns.tolist())) > 1      # the trajectories took different numbers of steps


@pytest.fixture
def queued(monkeypatch):
    """auto_compile.submit recording its jobs (no compile in the background of a test), the policy "background",
    the specialised ensemble kernels not ready (neither in this process nor on disk)."""
    jobs = []
    monkeypatch.setattr(auto_compile, "submit", lambda key, job: jobs.append(key))
    monkeypatch.delenv("LIEDYN_AUTO_COMPILE", raising=False)
    monkeypatch.setattr(batch_kernels, "independent_ready", lambda pl, grid: False)
    monkeypatch.setattr(auto_compile, "specialised_on_disk", lambda pl, kind: False)
    return jobs


@pytest.mark.parametrize("label, method", [("so4 random basis", "rkmk853"), ("so4 random basis", "rk853_projected"),
                                           ("se3 random basis", "rk45"), ("se3 random basis", "rkmk45"),
                                           ("R x_D R^4", "rk853")])
def test_each_trajectory_is_its_single_run_and_the_numpy_ensemble(label, method, queued, monkeypatch):
    alg = _alg(label)
    P = quadratic_problem(alg, 3)
    Y = _ensemble(alg, 3)
    pl = _plan(P, method, Y)
    # the kernel itself, Hairer's starting step inside: every row its single run, with the grid (one trajectory
    # after another in a group) and without it (an ambient pair: in lanes, refilled as trajectories end)
    for grid in (TEV, None):
        _check_rows_are_single_runs(pl, Y, generic_ensemble.run(pl, Y, np.zeros(len(Y)), 0.0, T1, TOL["rtol"],
                                                                TOL["atol"], math.inf, 10**6, grid), grid)
    with monkeypatch.context() as m:     # 4 lanes and one group a thread: each lane runs several trajectories
        m.setattr(generic_ensemble, "lane_count", lambda n, s: 4)
        m.setattr(generic_ensemble, "LANE_GROUPS_PER_THREAD", 1)
        _check_rows_are_single_runs(pl, Y, generic_ensemble.run(pl, Y, np.zeros(len(Y)), 0.0, T1, TOL["rtol"],
                                                                TOL["atol"], math.inf, 10**6))
    # through integrate (backend="numba", the specialised kernel not compiled): the numpy ensemble's states
    kw = dict(method=method, ensemble="independent", t_eval=TEV, **TOL)
    a = integrate(P, Y, (0.0, T1), backend="numba", **kw)
    b = integrate(P, Y, (0.0, T1), backend="numpy", **kw)
    assert a.backend == auto_compile.NUMBA_GENERIC_LABEL and b.backend == "numpy" and a.status == 0
    assert np.array_equal(a.nsteps_each, b.nsteps_each) and np.all(a.t_end == T1)
    scale = np.max(np.abs(b.y))
    assert np.max(np.abs(a.y - b.y)) <= 1e-9 * scale
    assert np.max(np.abs(a.y[-1] - a.y[0])) > 0.05 * scale        # the states moved: the agreement is not trivial
    if pl.proj is not None:   # every grid row on its trajectory's level set of the Casimirs
        c0 = pl.proj.values(Y)
        assert np.max(np.abs(pl.proj.values(a.y) - c0)) <= 1e-12 * (1.0 + np.max(np.abs(c0)))
    assert [k[0] for k in queued] == ["independent"] and queued[0][-1] is True     # the specialised kernel


def _servo(k, seed, B):
    alg = random_basis(named.so4(), np.random.default_rng(seed))
    rng = np.random.default_rng(seed)
    n = alg.dim
    Bm = rng.standard_normal((n, n))
    I = Bm @ Bm.T / n + np.eye(n)
    A, Bv = rng.standard_normal((k, n)), rng.standard_normal((k, n))
    s = ServoFirstKind(alg, I, a=A, b=Bv)
    Y = np.array([s.state_from(m=m, project=True) for m in rng.standard_normal((B, n))])
    return s, Y


def test_forced_problems_ambient_through_integrate_and_rkmk_with_the_constraints(queued):
    """Servo-constraints of the first kind (two constraints) on so(4) in a random basis: the ambient rk853 ensemble
    through integrate agrees with the numpy ensemble; the RKMK pair (generators in g x g*, every step projected onto
    the constraints; integrate runs those ensembles on the reference, so the plan of one state) row by row with its
    single runs, on the constraints to round-off."""
    s, Y = _servo(2, 11, 12)
    P = s.problem()
    kw = dict(method="rk853", ensemble="independent", **TOL)
    a = integrate(P, Y, (0.0, T1), backend="numba", **kw)
    b = integrate(P, Y, (0.0, T1), backend="numpy", **kw)
    assert a.backend == auto_compile.NUMBA_GENERIC_LABEL and a.status == 0
    scale = np.max(np.abs(b.y))
    assert np.max(np.abs(a.y - b.y)) <= 1e-9 * scale and np.max(np.abs(b.y[-1] - Y)) > 0.05 * scale
    pl = _plan(P, "rkmk853", Y[0])
    assert pl.st.P is not None and pl.lie
    got = generic_ensemble.run(pl, Y, np.zeros(len(Y)), 0.0, T1, TOL["rtol"], TOL["atol"], math.inf, 10**6, TEV)
    _check_rows_are_single_runs(pl, Y, got, TEV)
    L = np.atleast_2d(s.A) @ np.linalg.inv(s.I)
    assert np.max(np.abs(got[5] @ L.T)) <= 1e-12 * scale * np.max(np.abs(L))


# ------------------------------------------------------------------ lost trajectories
#: sl(2) with the invariant line z = (0, s, 0), s' = 2 s^2: s0 = 1 blows up at t = 0.5 (test_lost_trajectories.py)
_M = np.array([[1.0, 0.0, 0.2], [1.0, 0.0, 0.3], [0.2, 0.3, 1.0]])
_BLOW = CoadjointProblem(named.sl2(), lambda z: z @ _M, velocity_matrix=_M, name="sl2 with a blow-up line")


@pytest.mark.parametrize("method", ["rk45", "rkmk853", "rk853_projected"])
def test_a_lost_trajectory_stops_alone(method):
    """The blown-up trajectory (and one starting at NaN) stop with status -1, their later grid rows held at their
    last finite state; the good ones reach t1 as their single runs do."""
    Z = np.array([[0.3, -0.2, 0.5], [0.0, 1.0, 0.0], [-0.3, 0.05, 0.2], [np.nan, 0.1, 0.1], [0.1, -0.3, 0.1]])
    bad, good = [1, 3], [0, 2, 4]
    pl = _plan(_BLOW, method, Z[[0, 2, 4]])
    got = generic_ensemble.run(pl, Z, np.full(len(Z), 1e-3), 0.0, T1, TOL["rtol"], TOL["atol"], math.inf, 10**6,
                               TEV)
    out, st, te, ns, nr, YE, _ = got
    lanes = generic_ensemble.run(pl, Z, np.full(len(Z), 1e-3), 0.0, T1, TOL["rtol"], TOL["atol"], math.inf, 10**6)
    assert lanes[5] is None
    for a, b in zip(lanes[:5] + lanes[6:], got[:5] + got[6:]):   # without the grid (the lanes of an ambient pair)
        # the same results, and the same peaks
        assert np.array_equal(a, b, equal_nan=True)
    assert list(np.flatnonzero(st != 0)) == bad and np.all(st[bad] == -1)
    assert te[1] == pytest.approx(0.5, rel=1e-6) and np.all(te[good] == T1)
    late = TEV > te[1]
    assert np.all(YE[late, 1] == out[1]) and np.all(np.isfinite(YE[:, 1])) and out[1, 1] > 1e3
    for b in good:
        status, t, nsteps, _, z, ye, _ = _single(pl, Z[b], 1e-3, TEV)
        assert status == 0 and nsteps == ns[b] and np.max(np.abs(out[b] - z)) <= 1e-14 * (1.0 + np.max(np.abs(z)))
        assert np.max(np.abs(YE[:, b] - ye)) <= 1e-14 * (1.0 + np.max(np.abs(z)))


def test_the_budget_gives_minus_two_and_the_state_reached():
    alg = _alg("R x_D R^4")
    P = quadratic_problem(alg, 4)
    Y = _ensemble(alg, 4, B=6)
    pl = _plan(P, "rk853", Y)
    for grid in (None, TEV):    # (in lanes, and one trajectory after another)
        out, st, te, ns, nr = generic_ensemble.run(pl, Y, np.zeros(6), 0.0, T1, 1e-10, 1e-12, math.inf, 5, grid)[:5]
        assert np.all(st == -2) and np.all(ns == 5) and np.all(te < T1) and np.all(te > 0.0)
        _check_rows_are_single_runs(pl, Y, generic_ensemble.run(pl, Y, np.zeros(6), 0.0, T1, TOL["rtol"],
                                                                TOL["atol"], math.inf, 10**6, grid), grid)


def test_backward_in_time_and_an_empty_interval():
    """From t = T1 back to 0 (the lanes and the grid path) each row is its single run; t0 == t1 returns y0, status 0,
    no step."""
    alg = _alg("so4 random basis")
    P = quadratic_problem(alg, 8)
    Y = _ensemble(alg, 8, B=10)
    pl = _plan(P, "rk853_projected", Y)
    n = alg.dim
    fn = generic_kernel.function(pl.st, pl.tab, pl.lie, pl.terms, pl.proj)
    tev = TEV[::-1]
    for grid in (None, tev):
        got = generic_ensemble.run(pl, Y, np.zeros(len(Y)), T1, 0.0, TOL["rtol"], TOL["atol"], math.inf, 10**6, grid)
        for b in range(len(Y)):
            ts, ys = np.empty(2), np.empty((2, n))
            more = () if grid is None else (tev, np.empty((len(tev), n)), np.zeros(1, np.int64))
            if grid is not None:
                more[1][0], more[2][0] = Y[b], 1
            out = fn(T1, 0.0, 0.0, TOL["rtol"], TOL["atol"], math.inf, 1 << 62, 10**6, 0, ts, ys, *Y[b],
                     *([0.0] * n), *pl.targets(Y[b]).tolist(), *more)
            z = np.array(out[8:8 + n]) + np.array(out[8 + n:8 + 2 * n])
            assert out[0] == 0 and got[1][b] == 0 and got[2][b] == 0.0 and out[3] == got[3][b]
            assert np.max(np.abs(got[0][b] - z)) <= 1e-14 * (1.0 + np.max(np.abs(z)))
            if grid is not None:
                assert np.max(np.abs(got[5][:, b] - more[1])) <= 1e-14 * (1.0 + np.max(np.abs(z)))
    out, st, te, ns, nr = generic_ensemble.run(pl, Y, np.zeros(len(Y)), 1.0, 1.0, 1e-9, 1e-11, math.inf)[:5]
    assert np.array_equal(out, Y) and np.all(st == 0) and np.all(te == 1.0) and np.all(ns == 0) and np.all(nr == 0)


# ------------------------------------------------------------------ the choice under "auto" and "numba"
def _plan_so4(method="rk45"):
    alg = random_basis(named.so4(), np.random.default_rng(41))
    P = quadratic_problem(alg, 6)
    Y = _ensemble(alg, 6, B=30)
    return P, Y, _plan(P, method, Y)


def _auto_runs_the_generic_ensemble():
    """An "auto" ensemble of so(4) in a random basis runs the generic ensemble kernel, with the steps of the numpy
    ensemble and its states to 1e-9; returns the plan."""
    P, Y, pl = _plan_so4()
    kw = dict(method="rk45", rtol=1e-8, atol=1e-10, ensemble="independent")
    a = integrate(P, Y, (0.0, T1), **kw)
    b = integrate(P, Y, (0.0, T1), backend="numpy", **kw)
    assert a.backend == auto_compile.GENERIC_LABEL and np.array_equal(a.nsteps_each, b.nsteps_each)
    assert np.max(np.abs(a.y - b.y)) <= 1e-9 * np.max(np.abs(b.y))
    return pl


def test_auto_takes_the_generic_ensemble_while_the_specialised_kernel_compiles(queued, monkeypatch):
    monkeypatch.setattr(fastpath, "AUTO_NUMBA_WORK", 100)    # "big enough", without a long numpy run
    pl = _auto_runs_the_generic_ensemble()
    assert [k[0] for k in queued] == ["independent"]
    # not ready (not compiled, not on disk): numpy, both compiles queued
    monkeypatch.setattr(generic_ensemble, "compiled", lambda: False)
    monkeypatch.setattr(generic_ensemble, "on_disk", lambda: False)
    queued.clear()
    assert auto_compile.choose_independent(pl, False) == "numpy"
    assert queued[0] == "generic_ensemble" and queued[1][0] == "independent"
    # the specialised kernel ready: taken; policy "wait": compiled in the call
    monkeypatch.setattr(batch_kernels, "independent_ready", lambda pl, grid: True)
    assert auto_compile.choose_independent(pl, True) == "numba"
    monkeypatch.setattr(batch_kernels, "independent_ready", lambda pl, grid: False)
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "wait")
    assert auto_compile.choose_independent(pl, False) == "numba"


def test_a_small_auto_ensemble_takes_a_compiled_kernel_only_when_one_is_loaded(queued, monkeypatch):
    """Below AUTO_NUMBA_WORK the engine would run numpy; "auto" takes the generic ensemble kernel when it is loaded in
    this process (or on disk and the run pays for loading it), with the same steps as numpy; else numpy, the kernel
    loaded in the background for the next runs (from the disk cache only: a small run queues no compile)."""
    generic_ensemble.warm()
    pl = _auto_runs_the_generic_ensemble()
    assert queued == []                       # a small run queues no compile of the specialised kernel
    loads = []
    monkeypatch.setattr(auto_compile, "submit", lambda key, job: loads.append(key))
    monkeypatch.setattr(generic_ensemble, "compiled", lambda: False)
    assert auto_compile.choose_small_independent(pl, False, 100) == "numpy"          # too small to load it here
    assert loads == ["generic-ensemble-load"]
    monkeypatch.setattr(auto_compile, "generic_ensemble_ready", lambda: True)          # (loaded from disk)
    assert auto_compile.choose_small_independent(pl, False, 10**5) == "generic"      # worth loading
    monkeypatch.setattr(auto_compile, "generic_ensemble_ready", lambda: False)         # (its load failed)
    assert auto_compile.choose_small_independent(pl, False, 10**5) == "numpy"
    monkeypatch.setattr(generic_ensemble, "on_disk", lambda: False)
    loads.clear()
    assert auto_compile.choose_small_independent(pl, False, 10**5) == "numpy" and loads == []
    monkeypatch.setattr(batch_kernels, "independent_ready", lambda pl, grid: True)   # the specialised one has run
    assert auto_compile.choose_small_independent(pl, True, 100) == "numba"
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "wait")
    assert auto_compile.choose_small_independent(pl, True, 100) == "numpy"


def test_cold_numba_ensembles(queued, monkeypatch):
    """backend="numba": the specialised kernel when on disk, else the generic ensemble kernel (the specialised one
    queued), else (a fresh machine) numpy with the generic ensemble kernel queued; policies "off" and "wait" compile
    the specialised kernel in the call as before."""
    P, Y, pl = _plan_so4()
    assert auto_compile.choose_numba_independent(pl, False) == "generic"
    assert [k[0] for k in queued] == ["independent"]
    monkeypatch.setattr(auto_compile, "specialised_on_disk", lambda pl, kind: kind == "independent_grid")
    assert auto_compile.choose_numba_independent(pl, True) == "numba"
    monkeypatch.setattr(auto_compile, "specialised_on_disk", lambda pl, kind: False)
    monkeypatch.setattr(generic_ensemble, "compiled", lambda: False)
    monkeypatch.setattr(generic_ensemble, "on_disk", lambda: False)
    monkeypatch.setattr(compile_child, "available", lambda: True)
    queued.clear()
    assert auto_compile.choose_numba_independent(pl, False) == "numpy"
    assert queued[0] == "generic_ensemble" and queued[1][0] == "independent"
    kw = dict(method="rk45", rtol=1e-8, atol=1e-10, ensemble="independent")
    r = integrate(P, Y, (0.0, T1), backend="numba", **kw)
    assert r.backend == "numpy" + auto_compile.NUMBA_NUMPY_NOTE
    for pol in ("off", "wait"):
        monkeypatch.setenv("LIEDYN_AUTO_COMPILE", pol)
        assert auto_compile.choose_numba_independent(pl, False) == "numba"


def test_a_trajectory_that_steps_across_a_pole_is_cut_at_its_peak(queued):
    """sp(4) in a random basis with a servo-constraint of the first kind (tests/integrators/test_growth.py): the motion
    from r0 = 2 blows up at t* = 6.95845... (scipy's DOP853 at rtol 1e-10 stops there: a second method), and rk853 at
    rtol 1e-7 steps across the pole. In an ensemble with two motions that do not blow up, on the generic kernel (in
    lanes without an output grid, one trajectory after another with the default grid), that trajectory alone is cut
    at its peak (status -1, t_end within 1e-3 of t*); its later grid rows hold its last one before the peak, without a
    grid its end row is NaN; the others reach t = 10. check=False keeps the crossing, as for one trajectory."""
    from scipy.integrate import solve_ivp
    from benchmarks._drawn_algebras import draw
    from benchmarks._drawn_common import build_system, hand_rhs, sysseed
    label, kind = "sp(4) random basis", "servo1"
    s, x0f = build_system(dict(draw(24, False))[label](), kind, sysseed(label, kind, 24))
    X = s.check_state(np.vstack([x0f(0.5), x0f(2.0), x0f(1.0)]), project=True)
    ref = solve_ivp(hand_rhs(s.problem()), (0.0, 10.0), s.to_problem(X[1]), method="DOP853", rtol=1e-10, atol=1e-12)
    assert ref.status == -1 and np.max(np.abs(ref.y[:, -1])) > 1e10
    t_star = ref.t[-1]
    kw = dict(method="rk853", backend="numba", rtol=1e-7, atol=1e-9, ensemble="independent")
    for grid in (True, False):
        r = s.simulate(X, 10.0, **kw) if grid else s.simulate(X, 10.0, steps=None, **kw)
        assert r.backend == auto_compile.NUMBA_GENERIC_LABEL
        assert r.status == -1 and "across the singularity" in r.message and r.failed.tolist() == [1]
        assert abs(r.t_end[1] - t_star) < 1e-3 and r.t_end[0] == r.t_end[2] == 10.0   # (its own pole at rtol 1e-7)
        assert r.peak[1, 1] == r.t_end[1] and r.checks["growth"] > 1e5
        z = r.outputs["z"]
        if grid:
            k = int(np.sum(r.t <= r.t_end[1]))
            assert r.t[k - 1] <= r.t_end[1] < r.t[k]
            assert np.all(z[k:, 1] == z[k - 1, 1]) and np.max(np.abs(z[:k, 1])) < 1e3
        else:
            assert np.all(np.isnan(z[-1, 1])) and np.all(np.isfinite(z[-1, [0, 2]]))
    r = s.simulate(X, 10.0, steps=None, check=False, **kw)
    assert r.status == 0 and np.all(r.t_end == 10.0) and np.all(np.isfinite(r.outputs["z"][-1]))
