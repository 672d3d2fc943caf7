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


def test_salnikova_table1_reading(free):
    """Salnikova et al., Table 1, read with the centre offset and radius error measured from the IDEAL circle
    (centre (0, 1), radius 1): dp = |mean of the samples - (0, 1)|, dR = |mean distance to (0, 1) - 1|.
    For large N the motion is the unit circle x = sin t, y = 1 - cos t on [0, 10], whose samples have the
    mean (sin t, 1 - cos t) averaged = ((1 - cos 10)/10, 1 - sin(10)/10): dp -> |e^{10i} - 1|/10 = 2|sin 5|/10
    = 0.192 and dR -> 0. At N = 100 the paper prints dp = 0.19, dR = 0.04. At N = 0.1 it prints the same
    numbers for k = 0.1 and k = 100; with k = 100 the friction on the allowed side changes the motion, so the
    two cannot both hold (the README lists this)."""
    def table(N, k):
        r = free.with_friction(A_BLADE, N, one_sided=True, k=k).simulate(
            [0, 0, 0], [1, 0, 1], 10.0, steps=400, method="LSODA", rtol=1e-8, atol=1e-10)
        P = r.q[:, :2]
        return np.linalg.norm(P.mean(axis=0) - [0, 1]), abs(np.linalg.norm(P - [0, 1], axis=1).mean() - 1)

    dp, dR = table(100.0, 0.1)
    assert abs(dp - 0.19) < 0.015 and abs(dR - 0.04) < 0.006, (dp, dR)
    assert abs(dp - 2 * abs(np.sin(5)) / 10) < 0.02                       # the bias of the mean, + O(1/N)
    small = [table(0.1, k)[0] for k in (0.1, 100.0)]
    assert abs(small[0] - small[1]) > 1.0, small                          # k matters at N = 0.1


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


@pytest.mark.parametrize("one_sided,u0", [(False, 0.0), (True, -3.0)])
def test_affine_friction_rate_is_one_over_N(one_sided, u0):
    """Friction realizing (a, q') + h = 0 (or >= 0) with h != 0 (Salnikova, Kugushev and Demidov (2023), eq. (10),
    with the force acting through u_j q' + h_j so that it is continuous at the boundary).

    Skate on the inclined plane, L = (x'^2 + y'^2 + phi'^2)/2 + x, a = (sin phi, -cos phi, 0), h = -c: the
    transverse velocity v = x' sin phi - y' cos phi is to equal c. With u = x' cos phi + y' sin phi and the force
    -N (v - c) a (phi' = w stays constant: a has no phi component), by hand
        u' = cos phi - w v,   v' = sin phi + w u - N (v - c).
    The limit v = c gives u = u0 + sin(w t)/w - w c t (from x'(0) = u0, y'(0) = -c, phi = 0); for finite N
    v - c ~ (sin phi + w u)/N, so the error is O(1/N): the fitted exponent must be -1. One-sided (force only
    where v < c): with u0 = -3, sin(wt) + w u = -3 + 2 sin t - 0.3 t < 0, the constraint is active throughout
    and the limit is the same formula."""
    xx, yy, ph = dynamicsymbols("x y phi")
    L = LagrangianSystem((xx.diff() ** 2 + yy.diff() ** 2 + ph.diff() ** 2) / 2, -xx, [xx, yy, ph])
    c, w = 0.3, 1.0
    Ns, errs = [100.0, 300.0, 900.0], []
    for N in Ns:
        r = L.with_friction([sp.sin(ph), -sp.cos(ph), 0], N, one_sided=one_sided, h=-c).simulate(
            [0, 0, 0], [u0, -c, w], 3.0, steps=30, method="Radau", rtol=1e-9, atol=1e-11)
        p = r.q[:, 2]
        u = r.qd[:, 0] * np.cos(p) + r.qd[:, 1] * np.sin(p)
        v = r.qd[:, 0] * np.sin(p) - r.qd[:, 1] * np.cos(p)
        np.testing.assert_allclose(p, w * r.t, atol=1e-9)
        if one_sided:
            assert (v - c).max() <= 1e-9                     # pushed outwards all the time: v < c
        errs.append(max(np.abs(u - (u0 + np.sin(w * r.t) / w - w * c * r.t)).max(), np.abs(v - c).max()))
    rate, _ = fit_power_law(Ns, errs)
    assert abs(rate + 1) < 0.05, (rate, errs)


def test_affine_friction_force_is_continuous_at_the_boundary(free):
    """-N ((a, q') + h) a vanishes where (a, q') + h = 0 (eq. (10) of Salnikova et al. as printed, with (u_j, q')
    instead, would jump by N h a there); h must not depend on the velocities."""
    from servo import friction_force

    h = sp.Rational(1, 4) * sp.cos(x)
    for one_sided in (False, True):
        F = friction_force(free, A_BLADE, 50.0, one_sided=one_sided, h=h)
        on = {x.diff(): sp.cos(phi), y.diff(): sp.sin(phi) - h / sp.cos(phi)}  # (a, q') + h = 0
        assert all(sp.simplify(f.subs(on).subs({x: 0.3, phi: 0.2})) == 0 for f in F)
        off = {x.diff(): 0, y.diff(): -1, x: 0.0, phi: 0.0}  # g = (a, q') + h = -1 + 1/4 < 0, a = (0, 1, 0)
        np.testing.assert_allclose([float(f.subs(off)) for f in F], [0, 50.0 * 0.75, 0], atol=1e-12)  # -N g a
    with pytest.raises(LagrangianError, match="must not depend on the velocities"):
        friction_force(free, A_BLADE, 1.0, h=x.diff())
