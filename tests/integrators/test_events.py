"""Event location inside a step to 1e-10 in time.

Independent expected values: the zeros of cos t (harmonic oscillator, t = pi/2 + k pi) and the zeros
of m2(t) of the free rigid body from its Jacobi-elliptic solution (sn(u) = 0 at u = 2 j K(k)).
"""

import numpy as np
import pytest
import scipy.special

from integrators import ODEProblem, integrate
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
