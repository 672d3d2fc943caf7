"""LagrangianSystem(period=...): a periodically excited system in coordinates handed to the phase-space tools.

Independent expected values: the Floquet exponents of Mathieu's equation q'' + (delta + eps cos t) q = 0
from the monodromy matrix (the fundamental matrix over one period, integrated by scipy), and the exponent
pair's sum, zero for a Hamiltonian flow."""

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp
from sympy.physics.mechanics import dynamicsymbols

import integrators
from servo import LagrangianError, LagrangianSystem

q = dynamicsymbols("q")
t = dynamicsymbols._t
DELTA, EPS = 0.3, 0.6     # inside the first instability tongue of Mathieu's equation


def mathieu(delta=DELTA, eps=EPS, period=2 * np.pi):
    return LagrangianSystem(q.diff(t) ** 2 / 2, (delta + eps * sp.cos(t)) * q ** 2 / 2, [q], period=period)


def test_lyapunov_spectrum_of_the_mathieu_equation_is_its_floquet_exponent():
    L = mathieu()
    P = L.problem()
    assert P.period == pytest.approx(2 * np.pi)

    def fundamental(tt, X):
        return (np.array([[0.0, 1.0], [-(DELTA + EPS * np.cos(tt)), 0.0]]) @ X.reshape(2, 2)).ravel()

    mono = solve_ivp(fundamental, (0.0, 2 * np.pi), np.eye(2).ravel(), rtol=1e-13, atol=1e-14).y[:, -1].reshape(2, 2)
    floquet = np.log(np.max(np.abs(np.linalg.eigvals(mono)))) / (2 * np.pi)
    r = integrators.lyapunov_spectrum(P, np.array([0.1, 0.0]), 100 * np.pi, dt=np.pi / 10, h=np.pi / 40)
    assert r.exponents[0] == pytest.approx(floquet, abs=2.5e-3)   # O(1/t) convergence of the running estimate
    # Hamiltonian: a +/- pair (rk4 keeps the phase volume only to O(h^4) per unit time: about 1e-8 here)
    assert abs(r.exponents.sum()) < 1e-6
    assert np.allclose(r.per_period, r.exponents * 2 * np.pi)


def test_the_problem_is_the_free_equation_of_motion():
    L = mathieu()
    y = np.array([[0.3, -0.2], [1.0, 0.5]])
    tt = 0.7
    expected = np.stack([y[:, 1], -(DELTA + EPS * np.cos(tt)) * y[:, 0]], -1)
    assert np.allclose(L.problem().rhs(tt, y), expected, rtol=1e-14, atol=1e-15)


def test_period_is_checked_and_kept():
    with pytest.raises(LagrangianError, match="V is not 3-periodic"):
        mathieu(period=3.0)
    with pytest.raises(LagrangianError, match="positive finite"):
        mathieu(period=0.0)
    d = sp.Symbol("d")
    S = LagrangianSystem(q.diff(t) ** 2 / 2, (d + EPS * sp.cos(t)) * q ** 2 / 2, [q], period=2 * np.pi)
    assert S.subs({d: DELTA}).period == pytest.approx(2 * np.pi)
    with pytest.raises(LagrangianError, match="not 1-periodic"):
        LagrangianSystem(q.diff(t) ** 2 / 2, (d + EPS * sp.cos(t)) * q ** 2 / 2, [q], period=1.0).subs({d: 1.0})
    assert mathieu().with_friction([1], 0.5).period == pytest.approx(2 * np.pi)
    assert LagrangianSystem(q.diff(t) ** 2 / 2, q ** 2 / 2, [q]).problem().period is None
