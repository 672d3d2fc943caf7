"""servo.TimeDependentSystem: Euler-Poincare and first-kind systems with I(t), k(t), f(t), a(t).

Independent expected values: the periodically excited Chaplygin sleighs against their equations in
(v, omega) derived by hand here (the builder works on se(2)* with momenta and a multiplier); the free
body with I(t) = s(t) I0 against the autonomous body at the rescaled time tau = int dt / s; a gyrostat
with isotropic inertia against its closed-form rotation."""

import numpy as np
import pytest
import sympy as sp
from liegroups import named
from scipy.integrate import solve_ivp

import integrators
from servo import (ConstraintViolationError, CovectorError, InertiaError, ServoError, SymbolicParameterError,
                   TimeDependentSystem, UnrealizableConstraintError)

t = sp.Symbol("t")


def rotor(M=1.0, J=0.4, ell=1.0, k1=0.5, Om=0.7):
    """Sleigh (mass M, inertia J about its centre at (ell, 0) from the blade) with a rotor of momentum
    k(t) = k1 sin(Om t): I = [[M, 0, 0], [0, M, M ell], [0, M ell, J + M ell^2]] on (v1, v2, omega), blade v2 = 0."""
    IO = J + M * ell ** 2
    S = TimeDependentSystem(named.se2(), [[M, 0, 0], [0, M, M * ell], [0, M * ell, IO]],
                            gyrostat=[0, 0, k1 * sp.sin(Om * t)], a=[0, 1, 0], period=2 * np.pi / Om)

    def by_hand(tt, y):
        # P1' = omega P2, K' = -v P2 with P1 = M v, K = IO omega + k and v2 = 0 eliminated:
        # v' = ell omega^2, IO omega' = -M ell v omega - k'(t)
        v, w = y
        return [ell * w ** 2, (-M * ell * v * w - k1 * Om * np.cos(Om * tt)) / IO]

    return S, by_hand


def oscillating_mass(M=1.0, J=1.0, ell=0.5, m=0.5, xi=0.5, eta0=0.3, A=2.0, Om=1.0):
    """Sleigh with a point mass m at (xi, eta(t)), eta = eta0 + A sin(Om t): T from the velocities of the
    platform and the point, I(t) and k(t) = m eta' (0, 1, xi) read off it."""
    eta = eta0 + A * sp.sin(Om * t)
    mu, S1, S2 = M + m, M * ell + m * xi, m * eta
    IO = J + M * ell ** 2 + m * (xi ** 2 + eta ** 2)
    S = TimeDependentSystem(named.se2(), sp.Matrix([[mu, 0, -S2], [0, mu, S1], [-S2, S1, IO]]),
                            gyrostat=m * eta.diff(t) * sp.Matrix([0, 1, xi]), a=[0, 1, 0], period=2 * np.pi / Om)

    def by_hand(tt, y):
        # mu v' - S2 omega' = S1 omega^2 + 2 m eta' omega,
        # -S2 v' + IO omega' = -S1 v omega - 2 m eta eta' omega - m xi eta''
        v, w = y
        e, e1, e2 = eta0 + A * np.sin(Om * tt), A * Om * np.cos(Om * tt), -A * Om ** 2 * np.sin(Om * tt)
        s2, io = m * e, J + M * ell ** 2 + m * (xi ** 2 + e ** 2)
        r1 = S1 * w ** 2 + 2 * m * e1 * w
        r2 = -S1 * v * w - 2 * m * e * e1 * w - m * xi * e2
        return np.linalg.solve([[mu, -s2], [-s2, io]], [r1, r2])

    return S, by_hand


@pytest.mark.parametrize("build", [rotor, oscillating_mass])
def test_forced_sleighs_follow_the_equations_derived_by_hand(build):
    S, by_hand = build()
    w0 = np.array([0.5, 0.0, 0.2])
    res = S.simulate(S.state_from(w0), 20.0, steps=20)
    ref = solve_ivp(by_hand, (0.0, 20.0), w0[[0, 2]], method="DOP853", rtol=1e-13, atol=1e-14, t_eval=res.t)
    w = res.outputs["w"]
    assert np.max(np.abs(w[:, [0, 2]] - ref.y.T)) < 1e-9
    assert np.max(np.abs(res.outputs["(a, w)"])) < 1e-10
    assert np.max(np.abs(w[:, 1])) < 1e-10
    assert S.problem().period == pytest.approx(S.period) and S.model == "nonholonomic"


def test_the_multiplier_is_the_blade_force_of_the_hand_equations():
    # the blade's force lambda is P2' - (-omega P1) = d/dt(M v2 + M ell omega) + omega M v  (v2 = 0):
    # lambda = M ell omega' + M v omega
    M, J, ell, k1, Om = 1.0, 0.4, 1.0, 0.5, 0.7
    S, by_hand = rotor(M, J, ell, k1, Om)
    w0 = np.array([0.5, 0.0, 0.2])
    res = S.simulate(S.state_from(w0), 5.0, steps=10)
    v, w = res.outputs["w"][:, 0], res.outputs["w"][:, 2]
    wdot = np.array([by_hand(tt, [a, b])[1] for tt, a, b in zip(res.t, v, w)])
    assert np.allclose(res.outputs["lambda"], M * ell * wdot + M * v * w, rtol=0, atol=1e-10)


def test_free_body_with_scaled_inertia_is_the_autonomous_body_at_rescaled_time():
    # I(t) = s(t) I0, s = 2 + sin t: w = I0^-1 m / s, so m(t) = m_auto(tau(t)), tau = int_0^t ds / (2 + sin s)
    I0 = np.array([1.0, 2.0, 3.5])
    S = TimeDependentSystem(named.so3(), sp.diag(*[(2 + sp.sin(t)) * x for x in I0]), period=2 * np.pi)
    m0 = np.array([0.6, -0.8, 0.5])
    T1 = 3.0
    res = S.simulate(m0, T1, steps=6)
    tau = lambda x: 2 / np.sqrt(3) * (np.arctan((2 * np.tan(x / 2) + 1) / np.sqrt(3)) - np.arctan(1 / np.sqrt(3)))
    auto = solve_ivp(lambda _, m: np.cross(m, m / I0), (0.0, tau(T1)), m0, method="DOP853", rtol=1e-13,
                     atol=1e-14, t_eval=tau(res.t))
    assert np.max(np.abs(res.y - auto.y.T)) < 1e-9
    # without forcing the motion is on the coadjoint orbit: |m|^2 is recorded and kept
    (name,) = [k for k in res.invariants if k.startswith("casimir")]
    assert np.ptp(res.invariants[name]) < 1e-11
    assert S.model == "free" and S.problem().forcing is None


def test_gyrostat_with_isotropic_inertia_rotates_in_closed_form():
    # I = 2 Id, k = cos(t) e3: m' = m x (m - k)/2 = (cos t / 2) e3 x m, a rotation about e3 by sin(t)/2
    S = TimeDependentSystem(named.so3(), [2.0, 2.0, 2.0], gyrostat=[0, 0, sp.cos(t)], period=2 * np.pi)
    m0 = np.array([0.3, 0.4, 1.2])
    res = S.simulate(m0, 7.0, steps=14, method="rk4", h=1e-3)
    ang = np.sin(res.t) / 2
    exact = np.stack([0.3 * np.cos(ang) - 0.4 * np.sin(ang), 0.3 * np.sin(ang) + 0.4 * np.cos(ang),
                      np.full_like(ang, 1.2)], -1)
    assert np.max(np.abs(res.y - exact)) < 1e-11


def test_stroboscopic_and_flow_exponents_of_the_builders_problem_agree():
    # the phase-space tools read the builder's period: per_period = exponents * period
    S, _ = rotor()
    lr = integrators.lyapunov_spectrum(S.problem(), S.state_from([0.5, 0.0, 0.2]), 10 * S.period, dt=S.period / 8,
                                       h=S.period / 200)
    assert lr.period == pytest.approx(S.period)
    assert np.allclose(lr.per_period, lr.exponents * S.period)


def test_bad_time_dependent_data_are_refused():
    so3 = named.so3()
    with pytest.raises(ServoError, match="not 3-periodic"):
        TimeDependentSystem(so3, [1 + 0.5 * sp.sin(t), 2, 3], period=3.0)
    with pytest.raises(SymbolicParameterError, match="time symbol t only"):
        TimeDependentSystem(so3, [1 + sp.Symbol("eps") * sp.sin(t), 2, 3])
    with pytest.raises(InertiaError, match="positive definite"):
        TimeDependentSystem(so3, [1 + 2 * sp.sin(t), 2, 3], period=2 * np.pi)
    with pytest.raises(ServoError, match="positive finite"):
        TimeDependentSystem(so3, [1, 2, 3], period=-1.0)
    with pytest.raises(CovectorError, match="needs a constraint"):
        TimeDependentSystem(so3, [1, 2, 3], b=[1, 0, 0])
    # (I^-1 a, b) = a3 b3 / I3 + ... = 0 for a = e1, b = e2 with diagonal I
    with pytest.raises(UnrealizableConstraintError):
        TimeDependentSystem(so3, [1, 2, 3], a=[1, 0, 0], b=[0, 1, 0])
    S = TimeDependentSystem(so3, [1, 2, 3], a=[1, 0, 0])
    with pytest.raises(ConstraintViolationError, match="off the constraint"):
        S.simulate([1.0, 0.0, 0.0], 1.0)
    with pytest.raises(ServoError, match="shape"):
        TimeDependentSystem(so3, [[1, 2], [3, 4]])
