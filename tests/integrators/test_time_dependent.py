"""Time-dependent coadjoint problems (CoadjointProblem(time_dependent=True): w(t, z), f(t, z)) against
scipy's DOP853 on the same equations written by hand here (Euler's m' = m x w on so(3)*, the DESIGN
convention C = epsilon), the generated (autonomous) code refusing them, and the period read by the
phase-space tools."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import integrators
from integrators import CoadjointProblem, IntegrationInputError, MethodError, ODEProblem
from integrators.backends import numba_kernels
from integrators.geometry import recognition
from liegroups import named

I0 = np.array([1.0, 2.0, 3.0])
OM = 2.0                        # the forcing's angular frequency: period pi


def inertia(t):
    """I(t) = I0 (1 + 0.2 sin(2 t)) (a periodically deforming body), (..., 3) for t float or (N,)."""
    s = np.sin(OM * np.asarray(t, dtype=float))[..., None]
    return I0 * (1.0 + 0.2 * s)


def gyro(t):
    """A periodic gyrostatic momentum k(t) = (0.3 cos 2t, 0, 0.1)."""
    c = np.cos(OM * np.asarray(t, dtype=float))[..., None]
    return np.concatenate([0.3 * c, 0.0 * c, 0.1 + 0.0 * c], axis=-1)


def velocity(t, m):
    # m = I(t) w + k(t): the angular velocity of a gyrostat with a periodic inertia
    return (m - gyro(t)) / inertia(t)


def torque(t, m):
    return np.broadcast_to(np.array([0.0, 0.0, 0.2]) * np.cos(3.0 * np.asarray(t, dtype=float))[..., None], m.shape)


def by_hand(forced):
    """The same equations without the library: m' = m x w(t, m) (+ the torque)."""
    def f(t, m):
        w = (m - np.array([0.3 * np.cos(OM * t), 0.0, 0.1])) / (I0 * (1.0 + 0.2 * np.sin(OM * t)))
        out = np.cross(m, w)
        return out + (np.array([0.0, 0.0, 0.2 * np.cos(3.0 * t)]) if forced else 0.0)
    return f


Y0 = np.array([1.0, 0.4, -0.3])
T1 = 4.0


def reference(forced):
    return solve_ivp(by_hand(forced), (0.0, T1), Y0, method="DOP853", rtol=1e-13, atol=1e-14).y[:, -1]


def problem(forced=False):
    return CoadjointProblem(named.so3(), velocity, forcing=torque if forced else None, time_dependent=True,
                            period=np.pi)


@pytest.mark.parametrize("forced", [False, True])
@pytest.mark.parametrize("method", ["rk4", "rkmk4", "cf4"])
def test_fixed_step_methods_follow_the_time_dependent_field(method, forced):
    p = problem(forced)
    ref = reference(forced)
    res = integrators.integrate(p, Y0, (0.0, T1), method=method, h=0.01)
    # (the generated loop: numba once compiled in this process, else numpy; both honour the stage times)
    assert res.status == 0 and res.backend in ("numpy", "numba")
    err = np.max(np.abs(res.y[-1] - ref))
    assert err < 1e-7, err
    # halving h divides the error by about 2^4 (the stage times t + c_i h are honoured: freezing t at
    # the step's start would leave an order-1 method)
    res2 = integrators.integrate(p, Y0, (0.0, T1), method=method, h=0.005)
    err2 = np.max(np.abs(res2.y[-1] - ref))
    assert 10.0 < err / err2 < 25.0, (err, err2)
    if method != "rk4" and not forced:   # a Lie-group step keeps |m|^2 with w(t, m) too
        r2 = np.sum(res.y ** 2, -1)
        assert np.max(np.abs(r2 - r2[0])) < 1e-13


@pytest.mark.parametrize("method", ["rk45", "rkmk45", "rk853_projected", "scipy:DOP853"])
def test_adaptive_methods_follow_the_time_dependent_field(method):
    p = problem()
    res = integrators.integrate(p, Y0, (0.0, T1), method=method, rtol=1e-11, atol=1e-13)
    assert res.status == 0
    assert np.max(np.abs(res.y[-1] - reference(False))) < 1e-8


@pytest.mark.parametrize("method, forced", [("rk853", True), ("rkmk45", False), ("rk853_projected", False)])
def test_output_grid_of_a_time_dependent_problem_from_the_continuous_extension(method, forced):
    # the continuous extension evaluates the field at per-row times (P, 1); velocity(t, z) must get them as
    # (P,), broadcasting against z[..., 0] (it broadcast to (P, P, 3) before)
    p = problem(forced=forced)
    res = integrators.integrate(p, Y0, (0.0, T1), method=method, rtol=1e-11, atol=1e-13, steps=8)
    ref = solve_ivp(by_hand(forced), (0.0, T1), Y0, method="DOP853", rtol=1e-13, atol=1e-14, t_eval=res.t)
    assert res.y.shape == (9, 3)
    assert np.max(np.abs(res.y - ref.y.T)) < 1e-8


def test_hamiltonian_is_not_an_invariant_and_casimir_is():
    p = CoadjointProblem(named.so3(), velocity, time_dependent=True,
                         hamiltonian=lambda m: 0.5 * np.sum(m * m / I0, -1))
    assert "energy" not in p.invariants
    assert any(k.startswith("casimir:") for k in p.invariants)


def sneaky_velocity(*args):
    """w(t, m) = (1 + 0.5 sin t) m / I0; called with m alone it answers as if t = 0 (an affine map):
    a recognition that probed it as w(m) would take it for the autonomous rigid body."""
    t, m = (args[0], args[1]) if len(args) == 2 else (0.0, args[0])
    return (1.0 + 0.5 * np.sin(np.asarray(t, dtype=float)))[..., None] * np.asarray(m) / I0


def test_recognition_does_not_take_a_time_dependent_problem_for_an_autonomous_one():
    p = CoadjointProblem(named.so3(), sneaky_velocity, time_dependent=True)
    auto = CoadjointProblem(named.so3(), lambda m: sneaky_velocity(m))
    assert recognition.recognise(auto, Y0) is not None        # the probe alone would be fooled
    assert recognition.recognise(p, Y0) is None
    # rk4 runs the generated loop of a field quadratic in the state with its coefficients tabled at the
    # stage times (integrators.backends.timed_runner), not the autonomous code the probe would have chosen
    fast = integrators.integrate(p, Y0, (0.0, 3.0), method="rk4", h=0.01)
    ref = integrators.integrate(p, Y0, (0.0, 3.0), method="rk4", h=0.01, fast=False)
    np.testing.assert_allclose(fast.y, ref.y, rtol=0, atol=1e-13)
    f = lambda t, m: np.cross(m, (1 + 0.5 * np.sin(t)) * m / I0)
    exact = solve_ivp(f, (0.0, 3.0), Y0, method="DOP853", rtol=1e-13, atol=1e-14).y[:, -1]
    assert np.max(np.abs(fast.y[-1] - exact)) < 1e-7
    if numba_kernels.available():
        nb = integrators.integrate(p, Y0, (0.0, 3.0), method="rk4", h=0.01, backend="numba")
        np.testing.assert_allclose(nb.y, ref.y, rtol=0, atol=1e-13)
    # the RKMK form: the velocity W(t) z + c(t) tabled at the stage times (no forcing), |m|^2 kept
    lie = integrators.integrate(p, Y0, (0.0, 3.0), method="rkmk4", h=0.01, backend="numpy")
    lie_ref = integrators.integrate(p, Y0, (0.0, 3.0), method="rkmk4", h=0.01, fast=False)
    np.testing.assert_allclose(lie.y, lie_ref.y, rtol=0, atol=1e-13)
    assert np.ptp(np.sum(lie.y ** 2, -1)) < 1e-13 and np.max(np.abs(lie.y[-1] - exact)) < 1e-7
    # the commutator-free methods have no generated code for a time-dependent problem
    with pytest.raises(MethodError, match="depends on t" if numba_kernels.available() else "numba"):
        integrators.integrate(p, Y0, (0.0, 3.0), method="cf4", h=0.01, backend="numba")


def test_bad_time_dependent_input_is_refused():
    with pytest.raises(IntegrationInputError, match="velocity_matrix"):
        CoadjointProblem(named.so3(), velocity, velocity_matrix=np.diag(1 / I0), time_dependent=True)
    with pytest.raises(IntegrationInputError, match="period"):
        CoadjointProblem(named.so3(), velocity, time_dependent=True, period=-1.0)
    with pytest.raises(IntegrationInputError, match="period"):
        ODEProblem(lambda t, y: -y, 1, period=float("inf"))
    with pytest.raises(IntegrationInputError, match="time_dependent"):
        CoadjointProblem(named.so3(), velocity, time_dependent="yes")


def test_phase_space_tools_read_the_problems_period():
    p = problem()
    sec = integrators.poincare_section(p, Y0, "stroboscopic", 3 * np.pi, h=np.pi / 200, method="rkmk4")
    assert len(sec.points) == 3
    np.testing.assert_allclose(sec.times, np.pi * np.arange(1, 4), rtol=1e-14)
    ref = solve_ivp(by_hand(False), (0.0, 3 * np.pi), Y0, method="DOP853", rtol=1e-13, atol=1e-14,
                    t_eval=np.pi * np.arange(1, 4)).y.T
    assert np.max(np.abs(sec.points - ref)) < 1e-7
    lya = integrators.lyapunov_spectrum(p, Y0, 8 * np.pi, h=np.pi / 50)
    assert lya.period == np.pi and lya.dt == np.pi
    # w(t, z) has no closed form from W, c: the field, quadratic in z at fixed t, runs the generated tangent
    # flow with its coefficients tabled at the stage times; the numpy loop takes finite differences
    assert lya.jacobian.startswith("quadratic")
    ref_lya = integrators.lyapunov_spectrum(p, Y0, 8 * np.pi, h=np.pi / 50, fast=False)
    assert ref_lya.jacobian == "finite differences"
    np.testing.assert_allclose(lya.exponents, ref_lya.exponents, rtol=0, atol=1e-7)   # (differences: eps^(2/3))
    # the stroboscopic exponents are the flow's times the period; the |m|^2 Casimir is off the leaf
    np.testing.assert_allclose(lya.per_period, lya.exponents * np.pi)
    assert lya.exponents.shape == (2,) and np.max(np.abs(lya.transverse)) < 1e-6
