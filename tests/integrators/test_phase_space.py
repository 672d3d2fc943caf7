"""Lyapunov spectra, MEGNO and Poincare sections (integrators.analysis.phase_space) against independent values:
the Lorenz spectrum of the literature and its exact sum, the pairing of a Hamiltonian spectrum, the
zero exponents of the integrable free rigid body, Floquet multipliers of the Mathieu equation computed
by scipy, and crossing times located by scipy's event finder."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import integrators
from integrators import CoadjointProblem, IntegrationInputError, MethodError, ODEProblem
from liegroups import named

SIGMA, RHO, BETA = 10.0, 28.0, 8.0 / 3.0


def lorenz(t, y):
    x, v, z = y[..., 0], y[..., 1], y[..., 2]
    return np.stack([SIGMA * (v - x), x * (RHO - z) - v, x * v - BETA * z], -1)


def lorenz_jac(t, y):
    x, v, z = y[..., 0], y[..., 1], y[..., 2]
    o, zz = np.ones_like(x), np.zeros_like(x)
    return np.stack([np.stack([-SIGMA * o, SIGMA * o, zz], -1), np.stack([RHO - z, -o, -x], -1),
                     np.stack([v, x, -BETA * o], -1)], -2)


def rigid_body(I=(1.0, 2.0, 3.0)):
    I = np.asarray(I)
    return CoadjointProblem(named.so3(), lambda z: z / I, velocity_matrix=np.diag(1 / I),
                            hamiltonian=lambda z: 0.5 * np.sum(z * z / I, -1)), I


def test_lorenz_spectrum_and_exact_sum():
    # Sparrow (1982) and Wolf et al. (1985): 0.906, 0, -14.57; the divergence is -(sigma + 1 + beta) everywhere
    res = integrators.lyapunov_spectrum(ODEProblem(lorenz, 3), [1.0, 1.0, 1.0], 150.0, dt=0.1, h=0.01,
                                        transient=10.0, jac=lorenz_jac)
    lam = res.exponents
    assert lam.shape == (3,)
    assert abs(lam[0] - 0.906) < 0.06
    assert abs(lam[1]) < 0.02
    assert abs(lam[2] + 14.57) < 0.08
    assert abs(lam.sum() + (SIGMA + 1 + BETA)) < 1e-3
    assert res.jacobian == "user jacobian"
    assert res.megno > 10.0          # chaotic: <Y> grows like lambda t / 2
    assert res.running.shape == (len(res.t), 3) and np.all(np.diff(res.t) > 0)


def test_finite_difference_jacobian_agrees_with_the_exact_one():
    a = integrators.lyapunov_spectrum(ODEProblem(lorenz, 3), [1.0, 1.0, 1.0], 20.0, dt=0.1, h=0.01, jac=lorenz_jac)
    b = integrators.lyapunov_spectrum(ODEProblem(lorenz, 3), [1.0, 1.0, 1.0], 20.0, dt=0.1, h=0.01, fast=False)
    assert b.jacobian == "finite differences"
    assert np.max(np.abs(a.exponents - b.exponents)) < 1e-6
    # without jac the Lorenz field (quadratic in the state) runs the generated tangent flow, whose Jacobian is
    # the exact derivative of the recognised polynomial
    c = integrators.lyapunov_spectrum(ODEProblem(lorenz, 3), [1.0, 1.0, 1.0], 20.0, dt=0.1, h=0.01, backend="numpy")
    assert c.backend == "numpy" and c.jacobian.startswith("quadratic")
    assert np.max(np.abs(a.exponents - c.exponents)) < 1e-9


def henon_heiles(t, y):
    x, v, px, pv = y[..., 0], y[..., 1], y[..., 2], y[..., 3]
    return np.stack([px, pv, -x - 2 * x * v, -v - x * x + v * v], -1)


def henon_heiles_jac(t, y):
    x, v = y[..., 0], y[..., 1]
    o, z = np.ones_like(x), np.zeros_like(x)
    return np.stack([np.stack([z, z, o, z], -1), np.stack([z, z, z, o], -1),
                     np.stack([-1 - 2 * v, -2 * x, z, z], -1), np.stack([-2 * x, -1 + 2 * v, z, z], -1)], -2)


def test_hamiltonian_spectrum_comes_in_pairs():
    # Henon-Heiles at E = 1/6 (a chaotic orbit): a symplectic flow has lambda_i = -lambda_{5-i} and, with
    # the energy, two zero exponents (finite-time estimates: within a few 1/t)
    v, E = -0.1, 1.0 / 6.0
    px = np.sqrt(2 * E - v * v + 2 * v ** 3 / 3)
    res = integrators.lyapunov_spectrum(ODEProblem(henon_heiles, 4), [0.0, v, px, 0.0], 300.0, dt=0.5, h=0.05,
                                        jac=henon_heiles_jac)
    lam = res.exponents
    assert lam[0] > 0.05                       # chaotic
    assert abs(lam[0] + lam[3]) < 0.01
    assert abs(lam[1]) < 0.03 and abs(lam[2]) < 0.03
    assert abs(lam[1] + lam[2]) < 0.01
    assert abs(lam.sum()) < 1e-6              # volume is kept (to the method's error)


def test_free_rigid_body_exponents_vanish_and_the_casimir_is_absent():
    p, I = rigid_body()
    y0 = np.array([[1.0, 0.3, 0.2], [0.2, 1.0, 0.5]])
    res = integrators.lyapunov_spectrum(p, y0, 400.0, dt=1.0, h=0.1)
    assert res.jacobian == "structure constants"
    assert res.exponents.shape == (2, 2)       # 3 - 1 Casimir: the exponent along |m|^2 is not there
    assert res.transverse.shape == (2, 1)
    assert res.info["leaf_dimension"] == 2
    assert np.max(np.abs(res.exponents)) < 0.02       # integrable: all exponents -> 0 (like log t / t)
    assert np.max(np.abs(res.transverse)) < 1e-8       # the Casimir's value does not move
    assert np.all(np.abs(res.megno - 2.0) < 0.5)     # quasi-periodic: <Y> -> 2
    # without the leaf the full space is used and one more (zero) exponent appears
    full = integrators.lyapunov_spectrum(p, y0[0], 100.0, dt=1.0, h=0.05, leaf=None)
    assert full.exponents.shape == (3,) and full.transverse.shape == (0,)


def test_ensemble_spectra_equal_the_single_runs():
    p, _ = rigid_body()
    y0 = np.array([[1.0, 0.3, 0.2], [0.2, 1.0, 0.5]])
    both = integrators.lyapunov_spectrum(p, y0, 40.0, dt=1.0, h=0.05)
    one = integrators.lyapunov_spectrum(p, y0[1], 40.0, dt=1.0, h=0.05)
    np.testing.assert_allclose(both.exponents[1], one.exponents, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(both.largest, both.exponents[:, 0])


def test_isochronous_orbit_has_megno_zero():
    # the harmonic oscillator: deviations stay bounded, <Y> -> 0 (Cincotta and Simo 2000)
    osc = ODEProblem(lambda t, y: np.stack([y[..., 1], -y[..., 0]], -1), 2)
    res = integrators.lyapunov_spectrum(osc, [1.0, 0.0], 300.0, dt=0.5, h=0.05)
    assert abs(res.megno) < 0.05
    assert np.max(np.abs(res.exponents)) < 0.01


def mathieu(a, q):
    return lambda t, y: np.stack([y[..., 1], -(a - 2 * q * np.cos(2 * t)) * y[..., 0]], -1)


def test_stroboscopic_exponent_is_the_flow_exponent_times_the_period():
    a, q, T = 1.0, 0.2, np.pi                     # inside the first instability tongue of Mathieu's equation
    f = mathieu(a, q)
    mono = solve_ivp(lambda t, Y: np.ravel(np.stack([Y.reshape(2, 2)[1], -(a - 2 * q * np.cos(2 * t)) *
                                                     Y.reshape(2, 2)[0]])), (0, T), np.eye(2).ravel(),
                     rtol=1e-12, atol=1e-14).y[:, -1].reshape(2, 2)
    mu = np.log(np.max(np.abs(np.linalg.eigvals(mono))))   # Floquet: the map's exponent per period
    res = integrators.lyapunov_spectrum(ODEProblem(f, 2), [1.0, 0.0], 100 * T, period=T, h=T / 100)
    assert res.dt == T
    assert abs(res.per_period[0] - mu) < 0.02 * mu      # a finite-time estimate: O(1 / t) off
    assert abs(res.exponents[0] - mu / T) < 0.02 * mu / T
    # the growth between two times has no O(1 / t) offset
    tt = res.t - res.t[0] + T
    rate = (res.running[-1, 0] * tt[-1] - res.running[19, 0] * tt[19]) / (tt[-1] - tt[19])
    assert abs(rate * T - mu) < 1e-3 * mu
    # the stroboscopic map itself: |y_k| grows like exp(mu k)
    sec = integrators.poincare_section(ODEProblem(f, 2), [1.0, 0.0], "stroboscopic", 60 * T, period=T, h=T / 100)
    assert len(sec.points) == 60 and np.allclose(np.diff(sec.times), T)
    r = np.log(np.linalg.norm(sec.points, axis=-1))
    assert abs((r[-1] - r[19]) / 40 - mu) < 0.01 * mu


def test_convergence_check_says_when_the_estimate_still_moves():
    res = integrators.lyapunov_spectrum(ODEProblem(lorenz, 3), [1.0, 1.0, 1.0], 2.0, dt=0.1, h=0.01,
                                        jac=lorenz_jac, tol=1e-4)
    assert res.status == 1 and not res.converged and "not converged" in res.message


def test_rigid_body_section_lies_on_the_energy_and_casimir_levels():
    p, I = rigid_body()
    rng = np.random.default_rng(1)
    y0 = rng.standard_normal((6, 3))
    res = integrators.poincare_section(p, y0, (np.array([0.0, 1.0, 0.0]), 0.0), 60.0, method="moser_veselov", h=0.02)
    assert len(res.points) == 6
    E0, C0 = 0.5 * np.sum(y0 ** 2 / I, -1), np.sum(y0 ** 2, -1)
    n = 0
    for b, P in enumerate(res.points):
        n += len(P)
        if len(P):
            assert np.max(np.abs(P[:, 1])) < 1e-12
            assert np.max(np.abs(0.5 * np.sum(P ** 2 / I, -1) - E0[b])) < 1e-12
            assert np.max(np.abs(np.sum(P ** 2, -1) - C0[b])) < 1e-12
            # crossings in the direction of a: m2' = (m x w)_2 = m3 m1 / I1 - m1 m3 / I3 > 0
            assert np.all(P[:, 2] * P[:, 0] * (1 / I[0] - 1 / I[2]) > 0)
            np.testing.assert_allclose(res.invariants["energy"][b], E0[b], atol=1e-12)
    assert n >= 20


def test_crossing_times_agree_with_scipy_events():
    p, I = rigid_body()
    y0 = np.array([1.0, 0.5, 0.3])
    res = integrators.poincare_section(p, y0, (np.array([0.0, 1.0, 0.0]), 0.0), 30.0, method="rk4", h=0.01)
    ev = lambda t, y: y[1]
    ev.direction = 1
    ref = solve_ivp(lambda t, y: p.rhs(t, y), (0, 30.0), y0, events=ev, rtol=1e-12, atol=1e-13, method="DOP853")
    np.testing.assert_allclose(res.times, ref.t_events[0], atol=1e-7)
    np.testing.assert_allclose(res.points, ref.y_events[0], atol=1e-7)
    # a callable section and direction -1 / 0
    down = integrators.poincare_section(p, y0, lambda y: y[..., 1], 30.0, h=0.01, direction=-1)
    both = integrators.poincare_section(p, y0, lambda y: y[..., 1], 30.0, h=0.01, direction=0)
    assert len(both.times) == len(down.times) + len(res.times)
    np.testing.assert_allclose(np.sort(np.concatenate([down.times, res.times])), both.times, atol=1e-12)


def test_time_dependent_section_uses_per_crossing_times():
    # a forced oscillator x'' = -x + 0.3 cos(t): crossings of x = 0 agree with scipy's event finder
    f = lambda t, y: np.stack([y[..., 1], -y[..., 0] + 0.3 * np.cos(t)], -1)
    y0 = np.array([[1.0, 0.0], [0.5, 0.2]])
    res = integrators.poincare_section(ODEProblem(f, 2), y0, (np.array([1.0, 0.0]), 0.0), 20.0, h=0.01)
    for b in range(2):
        ev = lambda t, y: y[0]
        ev.direction = 1
        ref = solve_ivp(lambda t, y: f(t, y), (0, 20.0), y0[b], events=ev, rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(res.times[b], ref.t_events[0], atol=1e-7)


def test_bad_input_is_refused():
    p, _ = rigid_body()
    with pytest.raises(MethodError, match="adaptive"):
        integrators.poincare_section(p, [1.0, 0.2, 0.3], (np.ones(3), 0.0), 1.0, method="rk45")
    with pytest.raises(IntegrationInputError, match="section"):
        integrators.poincare_section(p, [1.0, 0.2, 0.3], (np.ones(2), 0.0), 1.0)
    with pytest.raises(IntegrationInputError, match="period"):
        integrators.poincare_section(p, [1.0, 0.2, 0.3], "stroboscopic", 1.0)
    with pytest.raises(IntegrationInputError, match="direction"):
        integrators.poincare_section(p, [1.0, 0.2, 0.3], (np.ones(3), 0.0), 1.0, direction=2)
    with pytest.raises(MethodError, match="tableau"):
        integrators.lyapunov_spectrum(p, [1.0, 0.2, 0.3], 10.0, method="moser_veselov")
    with pytest.raises(IntegrationInputError, match="QR intervals"):
        integrators.lyapunov_spectrum(p, [1.0, 0.2, 0.3], 1.0, dt=0.5)
    with pytest.raises(IntegrationInputError, match="singular"):
        integrators.lyapunov_spectrum(p, [0.0, 0.0, 0.0], 10.0)
    with pytest.raises(IntegrationInputError, match="y0"):
        integrators.lyapunov_spectrum(p, [1.0, 0.2], 10.0)
    with pytest.raises(IntegrationInputError, match="jac"):
        integrators.lyapunov_spectrum(ODEProblem(lorenz, 3), [1.0, 1.0, 1.0], 10.0, jac=lambda t, y: np.eye(2))
