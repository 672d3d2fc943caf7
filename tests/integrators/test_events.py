"""Event location inside a step to 1e-10 in time.

Independent expected values: the zeros of cos t (harmonic oscillator, t = pi/2 + k pi) and the zeros
of m2(t) of the free rigid body from its Jacobi-elliptic solution (sn(u) = 0 at u = 2 j K(k)).
"""

import numpy as np
import pytest
import scipy.special

from integrators import METHODS, ODEProblem, integrate
from integrators.backends import numba_kernels
from integrators.engine.segments import SEGMENT_FIRST
from integrators.methods import RungeKutta
from liegroups import named

from ._problems import quadratic_problem, start
from integrators.analysis.rigid_body import REFERENCE_INERTIA, REFERENCE_M0, free_rigid_body

OSC = ODEProblem(lambda t, y: np.stack([y[..., 1], -y[..., 0]], axis=-1), 2, name="oscillator")


def crossing(t, y):
    return y[..., 0]


def test_oscillator_zeros_located_to_1e10():
    res = integrate(OSC, [1.0, 0.0], (0.0, 10.0), method="rk4", h=0.005, events=crossing)
    te = res.t_events[0]
    expected = np.pi / 2 + np.pi * np.arange(3)
    assert te.shape == (3,)
    np.testing.assert_allclose(te, expected, atol=1e-10, rtol=0)
    np.testing.assert_allclose(res.y_events[0][:, 0], 0.0, atol=1e-12)
    assert res.nfev > res.nsteps * 4  # the location's extra evaluations are counted


def test_direction_and_terminal():
    def falling(t, y):
        return y[..., 0]

    falling.direction = -1
    falling.terminal = True
    res = integrate(OSC, [0.0, 1.0], (0.0, 10.0), method="rk4", h=0.005, events=falling)
    # y = (sin t, cos t): rising zero at 0 (start, ignored), falling zero at pi
    assert res.status == 1
    assert abs(res.t[-1] - np.pi) < 1e-10
    assert abs(res.y[-1, 0]) < 1e-12
    np.testing.assert_allclose(res.t_events[0], [np.pi], atol=1e-10)


def test_batched_terminal_freezes_each_trajectory():
    crossing.terminal = True
    try:
        y0 = np.array([[1.0, 0.0], [0.0, 1.0]])  # cos t hits 0 at pi/2; sin t at pi
        res = integrate(OSC, y0, (0.0, 10.0), method="rk4", h=0.005, events=crossing)
    finally:
        crossing.terminal = False
    assert res.status == 1
    np.testing.assert_allclose(np.sort(res.t_events[0]), [np.pi / 2, np.pi], atol=1e-10)
    assert sorted(res.event_index[0][:, 0].tolist()) == [0, 1]
    np.testing.assert_allclose(res.y[-1, :, 0], 0.0, atol=1e-12)


def _m2_zeros(inertia, m0, T):
    """Zeros of m2 for the reference body: m2 = -sqrt(2) cos 1.1 sn(lam t, k), lam = sin 1.1 / sqrt 2."""
    k2 = (np.cos(1.1) / np.sin(1.1)) ** 2
    lam = np.sin(1.1) / np.sqrt(2.0)
    K = scipy.special.ellipk(k2)
    z = 2 * K * np.arange(1, 10) / lam
    return z[z < T]


@pytest.mark.parametrize("name", ["rkmk4", "cf4", "splitting4"])
def test_rigid_body_event_matches_elliptic_zeros(name):
    P = free_rigid_body(REFERENCE_INERTIA)
    res = integrate(P, np.array(REFERENCE_M0), (0.0, 12.0), method=name, h=0.004,
                    events=lambda t, m: m[..., 1])
    expected = _m2_zeros(REFERENCE_INERTIA, REFERENCE_M0, 12.0)
    te = res.t_events[0]
    te = te[te > 1e-9]  # m2(0) = 0 is the start, not a crossing
    assert len(te) == len(expected) >= 2
    np.testing.assert_allclose(te, expected, atol=1e-10, rtol=0)
    assert "casimirs" in res.preserves
    np.testing.assert_allclose(np.sum(res.y_events[0] ** 2, axis=-1), 1.0, atol=1e-14)


def test_scipy_terminal_event_ends_the_grid():
    crossing.terminal = True
    try:
        res = integrate(OSC, [1.0, 0.0], (0.0, 10.0), method="scipy:DOP853", h=0.01, events=crossing,
                        rtol=1e-12, atol=1e-14)
    finally:
        crossing.terminal = False
    assert res.status == 1
    assert abs(res.t[-1] - np.pi / 2) < 1e-10


ADAPTIVE = [n for n, m in METHODS.items() if isinstance(m, RungeKutta) and not m.fixed_step]
PATHS = [dict(fast=False), dict(backend="numpy")] + ([dict(backend="numba")] if numba_kernels.available() else [])


@pytest.mark.parametrize("name", ADAPTIVE)
def test_terminal_event_ends_an_adaptive_run_where_it_happens(name):
    """The free rigid body on t_span = (0, 1e5) with the terminal event g = t - 1: the run stops at t = 1
    after about as many steps as a run to t = 1 takes (it used to integrate to 1e5 first, 2e5 steps), and
    its state there is that run's state (to the tolerance: the step sequences differ only in the last step)."""
    body = free_rigid_body(REFERENCE_INERTIA)
    m0 = np.array(REFERENCE_M0)

    def g(t, y):
        return t - 1.0

    g.terminal = True
    for kw in PATHS:
        to_one = integrate(body, m0, (0.0, 1.0), method=name, rtol=1e-9, atol=1e-12, **kw)
        r = integrate(body, m0, (0.0, 1e5), method=name, rtol=1e-9, atol=1e-12, events=g, **kw)
        assert r.status == 1 and r.t[-1] == pytest.approx(1.0, abs=1e-12), (name, kw)
        assert r.t_events[0] == pytest.approx([1.0], abs=1e-12)
        assert r.nsteps <= 2 * to_one.nsteps + 8, (name, kw, r.nsteps, to_one.nsteps)
        np.testing.assert_allclose(r.y[-1], to_one.y[-1], atol=1e-7)


@pytest.mark.parametrize("kw", PATHS)
def test_events_across_segments_equal_the_elliptic_zeros(kw):
    """Non-terminal events of a long adaptive run (many segments): every zero of m2 of the free rigid body
    up to t = 40 found, at the Jacobi-elliptic times (sn(u) = 0)."""
    body = free_rigid_body(REFERENCE_INERTIA)
    T = 40.0
    res = integrate(body, np.array(REFERENCE_M0), (0.0, T), method="rk853", rtol=1e-12, atol=1e-14,
                    events=lambda t, y: y[..., 1], **kw)
    expected = _m2_zeros(REFERENCE_INERTIA, REFERENCE_M0, T)
    te = res.t_events[0]
    te = te[te > 1e-9]  # m2(0) = 0 is the start, not a crossing
    assert res.nsteps > 2 * SEGMENT_FIRST and len(expected) >= 4
    np.testing.assert_allclose(te, expected, atol=1e-8, rtol=0)
    assert res.status == 0 and res.t[-1] == T


@pytest.mark.parametrize("kw", PATHS[1:])
def test_an_ensemble_with_events_stops_when_every_trajectory_has_stopped(kw):
    """Two trajectories with terminal events at t = 0.5 |m|^2 (|m| is conserved: 0.5 and 0.845): the
    first is frozen at its event state, the run ends at 0.845, long before t1 = 1e4."""
    body = free_rigid_body(REFERENCE_INERTIA)
    Y = np.stack([np.array(REFERENCE_M0), 1.3 * np.array(REFERENCE_M0)])
    stop = 0.5 * np.sum(Y ** 2, axis=-1)

    def g(t, y):
        return t - 0.5 * np.sum(y ** 2, axis=-1)

    g.terminal = True
    r = integrate(body, Y, (0.0, 1e4), method="rk45", rtol=1e-9, atol=1e-12, events=g, **kw)
    assert r.status == 1 and r.t[-1] < 1.0 and r.nsteps < 200
    np.testing.assert_allclose(sorted(r.t_events[0]), stop, atol=1e-12)
    single = integrate(body, Y[0], (0.0, 0.5), method="rk45", rtol=1e-9, atol=1e-12, **kw)
    np.testing.assert_allclose(r.y[-1, 0], single.y[-1], atol=1e-7)


@pytest.mark.parametrize("name", ADAPTIVE)
def test_a_run_in_segments_is_the_unsegmented_run(name):
    """An event that never fires makes the loop run in segments of 8, 16, ... steps continued from their
    own state (t, proposed h, z, compensation): the same number of steps and the plain run's states, on
    every path and every pair (chunk continuation of every method). The generated loops recompute the
    first stage at a segment's start, a round-off change that the error estimate (a difference of stage
    sums, ~1e-7 relative round-off at rtol 1e-9) turns into relative changes of later step sizes of
    up to 1e-7 / (err_order + 1) = 2e-8 (h ~ err^(-1/(q+1)), q + 1 = 5 for the 5(4) pairs; the times
    are running sums of the steps, so the same bound, 5e-8 with a margin), so the generated runs are
    compared by their error against DOP853 at rtol 1e-13 (the segmented run as accurate as the plain
    one); the numpy reference carries the first stage and agrees exactly."""
    P = quadratic_problem(named.so4(), seed=3)
    z0 = start(6, 3)

    def never(t, y):
        return t + 1.0

    for kw in PATHS:
        plain = integrate(P, z0, (0.0, 4.0), method=name, rtol=1e-9, atol=1e-12, **kw)
        seg = integrate(P, z0, (0.0, 4.0), method=name, rtol=1e-9, atol=1e-12, events=never, **kw)
        assert plain.nsteps > 3 * SEGMENT_FIRST and seg.nsteps == plain.nsteps, (name, kw)
        if kw.get("fast") is False:   # the reference carries the first stage: the very same run
            np.testing.assert_array_equal(seg.t, plain.t)
            np.testing.assert_array_equal(seg.y, plain.y)
        else:   # as accurate as the plain run, against DOP853 at rtol 1e-13
            np.testing.assert_allclose(seg.t, plain.t, rtol=5e-8, atol=0)
            def err(r):
                ref = integrate(P, z0, (0.0, 4.0), method="scipy:DOP853", rtol=1e-13, atol=1e-15, t_eval=r.t).y
                return np.max(np.abs(r.y - ref))

            e_plain, e_seg = err(plain), err(seg)
            assert e_seg <= 2.0 * e_plain + 1e-10, (name, kw, e_seg, e_plain)
