"""Gauss's principle of least compulsion and Kozlov's generalized principle (Kozlov 2008).

Expected values: the Lagrange-multiplier solution of the full KKT block system (a direct linear solve),
scipy's SLSQP minimiser of the compulsion (a different algorithm), the actual acceleration
A^-1 (F - b + Q), and Kozlov's energy example of section 2.
"""

import numpy as np
import pytest
import sympy as sp
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy.optimize import minimize
from sympy.physics.mechanics import dynamicsymbols

from servo import GaussError, LagrangianSystem, compulsion, gauss_acceleration, solve_compulsion_qp

P = dynamicsymbols("q1:7")
t = dynamicsymbols._t
V1, V2 = sp.Matrix(P[:3]).diff(t), sp.Matrix(P[3:]).diff(t)
D = sp.Matrix(P[:3]) - sp.Matrix(P[3:])
# a non-trivial inertia: the two points are coupled through the kinetic energy
T = (V1.dot(V1) + 2 * V2.dot(V2)) / 2 + V1.dot(V2) / 3 + sp.cos(P[0]) * V1[1] * V2[2] / 5
SYSTEM = LagrangianSystem(T, D.dot(D) / 2 + P[2], list(P))
PERP = V1.dot(V2)                                   # Talamucci (ii)
MID = ((V1 + V2) / 2).dot(D)                        # Talamucci (v)

states = st.lists(st.floats(-1, 1), min_size=12, max_size=12).map(lambda v: (np.array(v[:6]), np.array(v[6:])))


_PM = sp.Matrix([SYSTEM.plain(p) for p in (PERP, MID)])
_J = sp.lambdify([SYSTEM.qs, SYSTEM.us], _PM.jacobian(SYSTEM.us))
_C = sp.lambdify([SYSTEM.qs, SYSTEM.us], _PM.jacobian(SYSTEM.qs) * sp.Matrix(SYSTEM.us))


def _kkt(q, qd):
    """Direct solve of [[A, -J^T], [J, 0]] [a; lam] = [F - b; -c]: the Lagrange-multiplier solution."""
    A = SYSTEM.mass_matrix(0.0, q, qd)
    R = SYSTEM.force(0.0, q, qd) - SYSTEM.bias(0.0, q, qd)
    J = np.array(_J(q, qd), dtype=float)
    c = np.array(_C(q, qd), dtype=float).ravel()
    K = np.block([[A, -J.T], [J, np.zeros((2, 2))]])
    assume(np.linalg.svd(J, compute_uv=False).min() > 1e-2)   # independent constraints
    sol = np.linalg.solve(K, np.concatenate([R, -c]))
    return sol[:6], A, R, J, c


@given(states)
def test_gauss_equals_lagrange_multipliers(state):
    q, qd = state
    # the acceleration-level constraints do not need phi(q, qd) = 0 at the state: Gauss works on x'' only
    ref, A, R, J, c = _kkt(q, qd)
    acc, mu, nu, Z = gauss_acceleration(SYSTEM, (q, qd), [PERP, sp.Eq(MID, 0)], full_output=True)
    np.testing.assert_allclose(acc, ref, atol=1e-9 * (1 + np.abs(ref).max()))
    a_free = np.linalg.solve(A, R)
    np.testing.assert_allclose(A @ (acc - a_free), J.T @ mu, atol=1e-8 * (1 + np.abs(mu).max()))
    assert abs(Z - compulsion(A, acc, a_free)) < 1e-12 * (1 + Z)


@given(states, st.lists(st.floats(-2, 2), min_size=6, max_size=6))
def test_kozlov_generalized_gauss_principle(state, Q):
    """Theorem 1 of Kozlov 2008: with an extra force Q the actual acceleration A^-1 (F - b + Q) minimises the
    compulsion among the virtual accelerations (Q, x''_m) = (Q, A^-1 (F - b + Q))."""
    q, qd = state
    Q = np.array(Q)
    acc = gauss_acceleration(SYSTEM, (q, qd), force=Q)
    A = SYSTEM.mass_matrix(0.0, q, qd)
    R = SYSTEM.force(0.0, q, qd) - SYSTEM.bias(0.0, q, qd)
    actual = np.linalg.solve(A, R + Q)
    np.testing.assert_allclose(acc, actual, atol=1e-9 * (1 + np.abs(actual).max()))
    a_free = np.linalg.solve(A, R)
    rng = np.random.default_rng(0)
    for _ in range(20):  # random virtual motions: a_m = actual + d with (Q, d) = 0
        d = rng.normal(size=6)
        if Q @ Q > 0:
            d -= (Q @ d) / (Q @ Q) * Q
        assert compulsion(A, actual + d, a_free) >= compulsion(A, actual, a_free) - 1e-12


def test_kozlov_energy_example():
    """Kozlov 2008, section 2: x'' = -dV/dx with the energy integral read as a constraint. The naive virtual
    accelerations (x', x'') = -(dV/dx, x') give the wrong x'' = -(dV/dx, x') x'/|x'|^2; Kozlov's
    definition (4) with Q = -dV/dx gives the correct x'' = -dV/dx."""
    x1, x2 = dynamicsymbols("x1 x2")
    Vf = x1 ** 2 / 2 + 2 * x2 ** 2 + x1 * x2 / 3
    free = LagrangianSystem((x1.diff() ** 2 + x2.diff() ** 2) / 2, 0, [x1, x2])
    q, qd = np.array([0.4, -0.3]), np.array([0.7, 0.2])
    grad = np.array([q[0] + q[1] / 3, 4 * q[1] + q[0] / 3])
    energy = (x1.diff() ** 2 + x2.diff() ** 2) / 2 + Vf
    naive = gauss_acceleration(free, (q, qd), [sp.Eq(energy, 0)])
    np.testing.assert_allclose(naive, -(grad @ qd) * qd / (qd @ qd), atol=1e-12)
    right = gauss_acceleration(free, (q, qd), force=-grad)
    np.testing.assert_allclose(right, -grad, atol=1e-12)
    assert np.abs(naive - right).max() > 0.1


def test_inequalities_against_slsqp():
    """One active and one inactive inequality plus an equality: the exact active-set QP against SLSQP."""
    rng = np.random.default_rng(3)
    for _ in range(10):
        M = rng.normal(size=(4, 4))
        A = M @ M.T + 4 * np.eye(4)
        a_free = rng.normal(size=4)
        E, e = rng.normal(size=(1, 4)), rng.normal(size=1)
        G, g = rng.normal(size=(3, 4)), rng.normal(size=3)
        a, mu, nu = solve_compulsion_qp(A, a_free, E, e, G, g)
        cons = [{"type": "eq", "fun": lambda z: E @ z + e}, {"type": "ineq", "fun": lambda z: G @ z + g}]
        ref = minimize(lambda z: compulsion(A, z, a_free), a_free, constraints=cons, method="SLSQP",
                       options={"ftol": 1e-14, "maxiter": 500})
        np.testing.assert_allclose(a, ref.x, atol=1e-6)
        assert np.all(nu >= 0) and np.all(G @ a + g >= -1e-9)
        np.testing.assert_allclose(nu * (G @ a + g), 0, atol=1e-9)
        np.testing.assert_allclose(A @ (a - a_free), E.T @ mu + G.T @ nu, atol=1e-9)


def test_one_sided_sleigh_accelerations():
    """At v = 0 the inequality v >= 0 is active: Gauss gives the free acceleration when the free motion
    moves inward (w u < 0) and the constrained (nonholonomic) one when it would move outward."""
    x, y, phi = dynamicsymbols("x y phi")
    L = LagrangianSystem((x.diff() ** 2 + y.diff() ** 2 + phi.diff() ** 2) / 2, 0, [x, y, phi])
    v = -x.diff() * sp.sin(phi) + y.diff() * sp.cos(phi)
    q = np.array([0.0, 0.0, 0.3])
    qd_in = np.array([np.cos(0.3), np.sin(0.3), -0.7])     # u = 1, w < 0: v' = -w u > 0 -> free
    np.testing.assert_allclose(gauss_acceleration(L, (q, qd_in), [v >= 0]), 0, atol=1e-14)
    qd_out = -qd_in.copy()
    qd_out[2] = -0.7                                      # u = -1, w < 0: v' = -w u < 0 -> constrained
    acc = gauss_acceleration(L, (q, qd_out), [v >= 0])
    ref = gauss_acceleration(L, (q, qd_out), [v])
    np.testing.assert_allclose(acc, ref, atol=1e-14)
    assert np.abs(acc).max() > 0.5
    with pytest.raises(GaussError, match="violates the one-sided constraint 0"):
        gauss_acceleration(L, (q, [0.0, 1.0, 0.0]), [-v >= 0])


def test_error_paths():
    with pytest.raises(GaussError, match="inconsistent"):
        solve_compulsion_qp(np.eye(2), np.zeros(2), E=[[1, 0], [1, 0]], e=[1, 2])
    with pytest.raises(GaussError, match="infeasible"):
        solve_compulsion_qp(np.eye(2), np.zeros(2), G=[[1, 0], [-1, 0]], g=[-1, -1])
    with pytest.raises(GaussError, match="do not fit"):
        solve_compulsion_qp(np.eye(2), np.zeros(2), E=[[1, 0, 0]], e=[0])
    with pytest.raises(GaussError, match="state must be"):
        gauss_acceleration(SYSTEM, (np.zeros(6),))
    with pytest.raises(GaussError, match="6 entries"):
        gauss_acceleration(SYSTEM, (np.zeros(6), np.ones(6)), force=[1, 2])


def test_one_sided_active_set_is_gauss_principle():
    """At states on both boundaries of W q' + h <= 0, the one-sided model's active set and acceleration
    coincide with the exact inequality-constrained minimiser of the compulsion."""
    qa, qb = dynamicsymbols("qa qb")
    L = LagrangianSystem((qa.diff() ** 2 + qb.diff() ** 2) / 2 + qa.diff() * qb.diff() / 3,
                         (qa ** 2 + 2 * qb ** 2) / 2, [qa, qb])
    W = sp.Matrix([[1, sp.sin(qa) / 3], [-sp.Rational(1, 5), 1]])
    h = [-sp.Rational(1, 2), -sp.Rational(2, 5)]
    c = L.constrain((W, h), model="one_sided")
    rng = np.random.default_rng(5)
    seen = set()
    for _ in range(40):
        q = rng.uniform(-2, 2, 2)
        Wn = np.array([[1, np.sin(q[0]) / 3], [-0.2, 1]])
        qd = np.linalg.solve(Wn, [0.5, 0.4])                 # both constraints at f = 0
        active = c.select_active(0.0, q, qd, {0, 1})
        seen.add(tuple(sorted(active)))
        acc = c.acceleration(0.0, q, qd, active)[0]
        ref = gauss_acceleration(L, (q, qd), [f >= 0 for f in c.f])
        np.testing.assert_allclose(acc, ref, atol=1e-10)
    assert len(seen) >= 3, seen                                # several different active sets visited
