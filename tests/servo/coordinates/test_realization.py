"""Realization of constraints: anisotropic friction (Kozlov 2019 section 4, Theorem 1 of the slides,
Salnikova et al. 2023) and added masses (Theorem 2 of the slides).

Expected values: Kozlov's closed form (4.4) for v(t) of the sleigh with one-sided friction, the exact
inclined-skate solution, the vakonomic skate computed by the vakonomic model (a different set of
equations), and the ideal circle of the Chaplygin skate.
"""

import numpy as np
import pytest
import sympy as sp
from sympy.physics.mechanics import dynamicsymbols

from servo import LagrangianError, LagrangianSystem, fit_power_law
from servo.coordinates.realization import fit_circle

x, y, phi = dynamicsymbols("x y phi")
T = (x.diff() ** 2 + y.diff() ** 2 + phi.diff() ** 2) / 2
A_BLADE = [-sp.sin(phi), sp.cos(phi), 0]     # v = (a, q') = -x' sin phi + y' cos phi
U0, W0 = 1.0, -0.7


@pytest.fixture(scope="module")
def free():
    return LagrangianSystem(T, 0, [x, y, phi])


def transverse(res):
    return -res.qd[:, 0] * np.sin(res.q[:, 2]) + res.qd[:, 1] * np.cos(res.q[:, 2])


def kozlov_v(t, N):
    """(4.4): v = l1 l2/(l1 - l2) (u0/w0)(e^{l1 t} - e^{l2 t}), l^2 + N l + w0^2 = 0, from u = -u0, v = 0."""
    l1, l2 = (-N - np.sqrt(N * N - 4 * W0 ** 2)) / 2, (-N + np.sqrt(N * N - 4 * W0 ** 2)) / 2
    return l1 * l2 / (l1 - l2) * (U0 / W0) * (np.exp(l1 * t) - np.exp(l2 * t))


def test_one_sided_friction_sleigh_matches_kozlov_formula(free):
    N = 20.0
    res = free.with_friction(A_BLADE, N, one_sided=True).simulate([0, 0, 0], [-U0, 0, W0], 3.0, steps=60,
                                                                  rtol=1e-11, atol=1e-13)
    v = transverse(res)
    np.testing.assert_allclose(v, kozlov_v(res.t, N), atol=1e-8)
    assert np.all(v[1:] < 0)


def test_friction_rate_is_one_over_N(free):
    """v(t) < 0 and v = O(1/N) (Kozlov 2019, end of section 4): fitted exponent of max |v| is -1."""
    Ns = [25.0, 50.0, 100.0, 200.0]
    errs = []
    for N in Ns:
        res = free.with_friction(A_BLADE, N, one_sided=True).simulate([0, 0, 0], [-U0, 0, W0], 2.0, steps=200,
                                                                      rtol=1e-10, atol=1e-12)
        v = transverse(res)
        assert np.all(v[1:] < 0)
        errs.append(np.abs(v).max())
    p, C = fit_power_law(Ns, errs)
    assert abs(p + 1) < 0.05, p
    assert abs(C - W0 ** 2 * U0 / abs(W0)) < 0.1 * abs(W0) * U0  # max |v| ~ |w0| u0 / N


def test_two_sided_friction_converges_to_nonholonomic_skate():
    """Theorem 1 of the slides on the inclined skate: friction -N (a, q') a -> the exact nonholonomic path."""
    L = LagrangianSystem(T, -x, [x, y, phi])
    a = [sp.sin(phi), -sp.cos(phi), 0]
    w = 1.0
    errs = []
    for N in (100.0, 1000.0):
        res = L.with_friction(a, N).simulate([0, 0, 0], [0, 0, w], 3.0, steps=30, method="Radau",
                                             rtol=1e-8, atol=1e-10)
        tt = res.t
        exact = np.stack([np.sin(w * tt) ** 2 / (2 * w ** 2), (w * tt - np.sin(2 * w * tt) / 2) / (2 * w ** 2)], -1)
        errs.append(np.abs(res.q[:, :2] - exact).max())
    assert errs[1] < errs[0] / 5 and errs[1] < 1e-2, errs


def test_added_masses_converge_to_vakonomic_skate():
    """Theorem 2 of the slides: T + N (a, q')^2/2 -> the vakonomic skate (lambda(0) = 0), not the nonholonomic one."""
    L = LagrangianSystem(T, -x, [x, y, phi])
    phi_c = x.diff() * sp.sin(phi) - y.diff() * sp.cos(phi)
    q0, qd0 = [0, 0, 0], [0, 0, 0.8]
    vak = L.constrain(phi_c, model="vakonomic").simulate(q0, qd0, 2.5, steps=25, lam0=[0.0])
    nh = L.constrain(phi_c).simulate(q0, qd0, 2.5, steps=25)
    errs = []
    for N in (100.0, 1000.0):
        res = L.with_added_mass([sp.sin(phi), -sp.cos(phi), 0], N).simulate(q0, qd0, 2.5, steps=25, rtol=1e-9,
                                                                            atol=1e-11)
        errs.append(np.abs(res.q - vak.q).max())
    assert errs[1] < errs[0] / 5 and errs[1] < 1e-2, errs
    assert np.abs(nh.q - vak.q).max() > 20 * errs[1]


def test_salnikova_radius_error_decreases(free):
    """Cheap subset of Table 1 (Salnikova et al.): the skate pressed against its one-sided constraint at
    t = 0, friction -N f a on the violated side and -k f a on the other (k = 0.1); the limiting circle
    is the ideal one, x = sin t, y = 1 - cos t (radius V/|w| = 1, centre (0, 1))."""
    dR, dp = [], []
    for N in (10.0, 100.0, 1000.0):
        res = free.with_friction(A_BLADE, N, one_sided=True, k=0.1).simulate(
            [0, 0, 0], [1, 0, 1], 10.0, steps=400, method="LSODA" if N <= 100 else "BDF", rtol=1e-8, atol=1e-10)
        centre, R = fit_circle(res.q[res.t >= 5, :2])
        dR.append(abs(R - 1.0))
        dp.append(np.linalg.norm(centre - [0.0, 1.0]))
    assert dR[0] > 5 * dR[1] > 25 * dR[2] and dR[2] < 0.01, dR      # about 1/N
    assert dp[2] < dp[1] < dp[0] and dp[2] < 0.05, dp


def test_fit_circle_and_power_law_exact_inputs():
    th = np.linspace(0, 2, 30)
    c, R = fit_circle(np.stack([2 + 3 * np.cos(th), -1 + 3 * np.sin(th)], -1))
    np.testing.assert_allclose(c, [2, -1], atol=1e-12)
    assert abs(R - 3) < 1e-12
    p, C = fit_power_law([1, 10, 100], [5, 0.05, 0.0005])
    assert abs(p + 2) < 1e-12 and abs(C - 5) < 1e-10


def test_error_paths(free):
    with pytest.raises(LagrangianError, match=">= 0"):
        free.with_friction(A_BLADE, -1.0)
    with pytest.raises(LagrangianError, match="one_sided=True"):
        free.with_friction(A_BLADE, 1.0, k=0.5)
    with pytest.raises(LagrangianError, match="identically zero"):
        free.with_added_mass([0, 0, 0], 1.0)
    with pytest.raises(LagrangianError, match="3 coordinates"):
        free.with_added_mass([1, 0], 1.0)
    with pytest.raises(LagrangianError, match="positive"):
        fit_power_law([1, 2], [0.1, 0.0])
    with pytest.raises(LagrangianError, match=">= 3 points"):
        fit_circle([[0, 0], [1, 1]])
