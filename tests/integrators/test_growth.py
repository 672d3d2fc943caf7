"""The growth check (integrators.engine.growth): a step across a finite-time blow-up is cut at its peak with status -1;
a large smooth excursion is not; every adaptive loop of one trajectory reports the peak of its accepted steps."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from integrators import IntegrationResult
from integrators.engine import growth
from liegroups import named
from servo.lie import EulerPoincare


def _pole_run():
    """x' = x^2, x(0) = 1 (pole at t* = 1): the exact values on steps that shrink like 1 - t, as a controller's
    do near the pole (t_k = 1 - 0.5^k, k = 0..30), one step across it (from 1 - 2^-30 to 1 + 2^-30 ... the
    continuation x = 1/(1 - t) < 0 after it) and steps growing again to t = 3."""
    before = 1.0 - 0.5 ** np.arange(31)
    after = 1.0 + 0.5 ** np.arange(30, 0, -1)
    t = np.concatenate([before, after, [2.0, 3.0]])
    y = (1.0 / (1.0 - t))[:, None]
    return t, y


def test_a_step_across_a_pole_is_cut_at_its_peak():
    t, y = _pole_run()
    res = IntegrationResult(t=t, y=y, status=0, message="reached the end of t_span", nsteps=len(t) - 1)
    growth.check(res)
    zmax = 2.0 ** 30                                  # x at t = 1 - 2^-30, the last state before the pole
    G = zmax / max(1.0, 0.5)                          # the ends: x(0) = 1, x(3) = -1/2
    assert res.checks["growth"] == pytest.approx(G, rel=1e-12)
    assert res.status == -1 and "across the singularity" in res.message
    assert res.t[-1] == 1.0 - 0.5 ** 30 and len(res.y) == 31 and np.all(res.y > 0)   # cut at the peak


def test_the_loop_tracked_peak_is_judged_when_the_saved_states_miss_it():
    """An output grid misses the states near the pole; the peak the loop tracked (res.peak) still cuts the run,
    at the last grid time before it."""
    t, y = _pole_run()
    grid = np.linspace(0.0, 3.0, 13)                  # no grid time is within 0.25 of the pole but t = 1
    keep = grid != 1.0
    res = IntegrationResult(t=grid[keep], y=(1.0 / (1.0 - grid[keep]))[:, None], status=0, nsteps=len(t) - 1,
                            peak=(2.0 ** 30, 1.0 - 0.5 ** 30, 0.5 ** 30))
    growth.check(res)
    assert res.status == -1 and res.t[-1] == 0.75


def test_a_large_smooth_excursion_is_not_taken_for_a_pole():
    """A bump sech from 1e-6 to 1 and back (G = 1e6) passed with the run's ordinary steps at its peak."""
    t = np.linspace(0.0, 30.0, 3001)
    y = (1.0 / np.cosh(t - 15.0) + 1e-6)[:, None]
    y[0] = y[-1] = 1e-6 + 1.0 / np.cosh(15.0)
    res = IntegrationResult(t=t, y=y, status=0, message="ok", nsteps=3000)
    growth.check(res)
    assert res.status == 0 and res.message == "ok" and len(res.t) == 3001
    assert res.checks["growth"] == pytest.approx(np.max(y) / y[0, 0], rel=1e-12) and res.checks["growth"] > 1e4


def _free_so3():
    alg = named.so3()
    return EulerPoincare(alg, np.diag([1.0, 2.0, 3.5])), np.array([0.3, -1.1, 0.7])


@pytest.mark.parametrize("method,backend,fast", [("rk853_projected", "numpy", True), ("rk853", "numpy", True),
                                                 ("rkmk45", "numpy", True), ("rk853", "numpy", False),
                                                 ("rk853_projected", "numba", True)])
def test_every_adaptive_loop_reports_the_peak_of_its_accepted_steps(method, backend, fast):
    """With every accepted step saved (steps=None), the peak a loop tracked is the largest saved state, its time
    and its step (the generated loop, its RKMK form, the numpy reference, the compiled or generic kernel)."""
    pytest.importorskip("numba") if backend == "numba" else None
    s, x0 = _free_so3()
    r = s.simulate(x0 * 50.0, 4.0, steps=None, method=method, backend=backend, fast=fast, rtol=1e-8, atol=1e-10)
    assert r.status == 0 and len(r.peak) == 3
    norms = np.max(np.abs(r.y), axis=1)
    k = int(np.argmax(norms[1:])) + 1
    assert r.peak[0] == norms[k] and r.peak[1] == r.t[k]
    assert abs(r.peak[2]) == pytest.approx(r.t[k] - r.t[k - 1], rel=1e-9)
    assert r.checks["growth"] == pytest.approx(r.peak[0] / max(norms[0], norms[-1]), rel=1e-12)


def test_a_servo_motion_that_blows_up_is_not_continued_across_its_singularity():
    """sp(4) in a random basis with a servo-constraint of the first kind (the first system benchmarks/blow_up.py
    gave up on): its motion from r0 = 2 blows up at t* = 6.95845..., where scipy's DOP853 stops (here at rtol 1e-10,
    a second method). rk853 at rtol 1e-7 with the default output grid used to step across the pole and end at t = 10
    with status 0 and |z| ~ 250; now it stops at the pole with status -1."""
    from benchmarks._drawn_algebras import draw
    from benchmarks._drawn_common import build_system, hand_rhs, sysseed
    label, kind = "sp(4) random basis", "servo1"
    s, x0f = build_system(dict(draw(24, False))[label](), kind, sysseed(label, kind, 24))
    x0 = x0f(2.0)
    ref = solve_ivp(hand_rhs(s.problem()), (0.0, 10.0), s.to_problem(x0), method="DOP853", rtol=1e-10, atol=1e-12)
    assert ref.status == -1 and np.max(np.abs(ref.y[:, -1])) > 1e10
    t_star = ref.t[-1]
    r = s.simulate(x0, 10.0, method="rk853", backend="numpy", rtol=1e-7, atol=1e-9)
    assert r.status == -1 and "across the singularity" in r.message
    assert t_star - 0.01 < r.t[-1] <= t_star and r.checks["growth"] > 1e5
    assert abs(r.peak[1] - t_star) < 1e-3
    # at rtol 1e-8 the steps collapse at the pole (status -1 as before): the check leaves that run and its message
    r = s.simulate(x0, 10.0, method="rk853", backend="numpy", rtol=1e-8, atol=1e-10)
    assert r.status == -1 and "step size fell" in r.message and "growth" not in r.checks
    assert t_star - 0.01 < r.t[-1] <= t_star and r.peak[1] > r.t[-1]


def test_crossings_judge_each_trajectory_of_an_ensemble_as_one_run():
    """growth.crossings on five made-up trajectories of one ensemble (t0 = 0): each is judged by the test of one run,
    G = zmax / max(|z(t0)|, |z(t_end)|) > 1e4 and |hmax| < 1e-3 (t_end - t0) / nsteps."""
    starts = np.ones((5, 2))
    ends = np.array([[0.5, 0.1], [1.0, 0.0], [1.0, 1.0], [2.0, 0.0], [1.0, 0.0]])
    peaks = np.array([[2.0 ** 30, 1.0, 2.0 ** -30],    # across a pole: G = 2^30, step 2^-30 << 10 / 100
                      [1e6, 5.0, 0.1],                  # a large excursion passed with the mean step: not a pole
                      [1e6, 5.0, 1e-9],                 # lost on the way (status -1): not judged
                      [1e3, 5.0, 1e-9],                 # a collapsed step at a peak only 500 times the ends
                      [1e6, 10.0, 1e-9]])               # the peak at its last state: nothing after it to cut
    t_end = np.array([10.0, 10.0, 5.0, 10.0, 10.0])
    nsteps = np.array([100, 100, 100, 100, 100])
    status = np.array([0, 0, -1, 0, 0])
    crossed, G = growth.crossings(peaks, starts, ends, 0.0, t_end, nsteps, status)
    assert crossed.tolist() == [True, False, False, False, False]
    assert G[0] == 2.0 ** 30 and G[1] == 1e6 and np.isnan(G[2]) and G[3] == 500.0 and G[4] == 1e6


@pytest.mark.parametrize("method,backend", [("rk853", "numpy"), ("rkmk45", "numpy"), ("rk853_projected", "numba"),
                                            ("rkmk45", "numba")])
def test_every_independent_ensemble_reports_each_trajectorys_peak_as_its_single_run(method, backend):
    """Each trajectory of an independent ensemble takes its single run's steps, so its peak (res.peak[b]) is its single
    run's: the numpy engine, the compiled lanes (an ambient pair) and the compiled one-trajectory loops (an RKMK
    pair). (The compiled single run and ensemble may contract products differently: their steps agree to what the
    error estimate resolves, ~1e-8 relative at rtol 1e-8.)"""
    pytest.importorskip("numba") if backend == "numba" else None
    s, x0 = _free_so3()
    X = np.array([x0 * 50.0, x0 * 10.0, x0[::-1] * 30.0, x0 * 3.0])
    r = s.simulate(X, 4.0, steps=None, method=method, backend=backend, rtol=1e-8, atol=1e-10, ensemble="independent")
    assert r.status == 0 and r.peak.shape == (4, 3) and r.backend.startswith(backend)
    for b in range(len(X)):
        one = s.simulate(X[b], 4.0, steps=None, method=method, backend=backend, rtol=1e-8, atol=1e-10)
        assert r.nsteps_each[b] == one.nsteps
        assert r.peak[b] == pytest.approx(one.peak, rel=1e-6, abs=1e-6)
    G = r.peak[:, 0] / np.maximum(np.max(np.abs(r.y[0]), axis=-1), np.max(np.abs(r.y[-1]), axis=-1))
    assert r.checks["growth"] == pytest.approx(np.max(G), rel=1e-12)
