"""Several left-invariant constraints (a_1, w) = ... = (a_k, w) = 0 with k controls b_1..b_k.

Expected values come from derivations written here, independently of ``servo``:

* Realizability (Binet-Cauchy): for k = 2 on so(3), R_ij = (I^-1 a_i, b_j) has
  det R = (I^-1 a_1 x I^-1 a_2, b_1 x b_2) = det(I^-1) (I (a_1 x a_2), b_1 x b_2),
  since (M u) x (M v) = cof(M) (u x v) = det(M) M^-T (u x v).
* Rigid body, first kind, two constraints (m' = m x w + lambda_1 b_1 + lambda_2 b_2, m = I w): the
  constraints leave w = s(t) n, n = a_1 x a_2 / |a_1 x a_2|. Dotting the equation with c = b_1 x b_2
  (orthogonal to both controls): (c, I n) s' = s^2 (c, (I n) x n), so s' = kappa s^2,
  kappa = (c, (I n) x n) / (c, I n), and s(t) = s0 / (1 - kappa s0 t). For b = a (nonholonomic)
  c is parallel to n and kappa = 0: uniform rotation about n.
* Rigid body, vakonomic, two constraints (z = m + A^T lambda, z' = z x w): dotting with n gives
  (n, I n) s' = 0 (u = A^T lambda lies in the plane orthogonal to n), so s is constant, and
  u' = s u x n + s^2 (I n) x n, whose solution is u(t) = u* + Rot(n, -s t)(u0 - u*) with
  u* = -s (I n - (n, I n) n).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from liegroups import named
from servo import (CovectorError, Nonholonomic, ServoFirstKind, ServoSecondKind, UnrealizableConstraintError,
                   Vakonomic)

SO3 = named.so3()
I = np.array([[2.0, 0.3, 0.1], [0.3, 3.0, -0.2], [0.1, -0.2, 4.0]])
A = np.array([[1.0, 0.2, 0.0], [0.0, 1.0, 0.5]])
B = np.array([[0.8, 0.0, 0.3], [0.1, 1.2, 0.0]])


def unit_normal(A):
    n = np.cross(A[0], A[1])
    return n / np.linalg.norm(n)


def test_realizability_matrix_and_determinant_binet_cauchy():
    s = ServoFirstKind(SO3, I, a=A, b=B)
    Iinv = np.linalg.inv(I)
    R = np.array([[Iinv @ A[i] @ B[j] for j in range(2)] for i in range(2)])
    assert np.allclose(s.realizability_matrix(), R, rtol=1e-14)
    expected = np.linalg.det(Iinv) * (I @ np.cross(A[0], A[1])) @ np.cross(B[0], B[1])
    assert s.realizability() == pytest.approx(expected, rel=1e-12)
    assert s.realizability_condition() == pytest.approx(np.linalg.cond(R), rel=1e-12)


def test_symbolic_realizability_determinant():
    import sympy as sp

    I1, I2, I3 = sp.symbols("I1 I2 I3", positive=True)
    s = ServoFirstKind(SO3, [I1, I2, I3], a=[[1, 0, 0], [0, 1, 0]], b=[[1, 0, 0], [1, 1, 0]])
    # R = [[1/I1, 1/I1], [0, 1/I2]], det R = 1/(I1 I2)
    assert sp.simplify(s.realizability() - 1 / (I1 * I2)) == 0
    assert sp.simplify(s.realizability_matrix() - sp.Matrix([[1 / I1, 1 / I1], [0, 1 / I2]])) == sp.zeros(2, 2)


def test_first_kind_two_constraints_exact_solution():
    s = ServoFirstKind(SO3, I, a=A, b=B)
    n = unit_normal(A)
    c = np.cross(B[0], B[1])
    kappa = c @ np.cross(I @ n, n) / (c @ (I @ n))
    s0 = -0.4 / kappa   # kappa s0 = -0.4 < 0: s decays like 1/t, no blow-up
    res = s.simulate(s.state_from(w=s0 * n), 5.0, steps=2000)
    assert res.status == 0
    st = s0 / (1.0 - kappa * s0 * res.t)
    assert np.max(np.abs(res.w - st[:, None] * n)) < 1e-9
    assert res["lambda"].shape == (len(res.t), 2)
    # the constraints hold to round-off along the run
    assert np.max(np.abs(res.w @ A.T)) < 1e-14 * np.max(np.abs(res.w)) * 10


def test_nonholonomic_two_constraints_rotates_uniformly():
    s = Nonholonomic(SO3, I, a=A)
    n = unit_normal(A)
    res = s.simulate(s.state_from(w=0.7 * n), 10.0, steps=500)
    assert np.max(np.abs(res.w - 0.7 * n)) < 1e-12
    energy = [F for F in s.first_integrals() if F.name == "energy"]
    assert energy, "T is a first integral of the nonholonomic model"


def test_vakonomic_two_constraints_exact_solution():
    s = Vakonomic(SO3, I, a=A)
    n = unit_normal(A)
    sv = 0.6
    lam0 = np.array([0.3, -0.4])
    res = s.simulate(s.state_from(w=sv * n, lam=lam0), 4.0, steps=2000)
    assert np.max(np.abs(res.w - sv * n)) < 1e-10
    u0 = lam0 @ A
    ustar = -sv * (I @ n - (n @ I @ n) * n)
    rot = Rotation.from_rotvec(np.outer(-sv * res.t, n)).as_matrix()
    u = ustar + np.einsum("kij,j->ki", rot, u0 - ustar)
    lam_exact = np.linalg.solve(A @ A.T, A @ u.T).T
    assert np.max(np.abs(res["lambda"] - lam_exact)) < 1e-9
    # |m + A^T lambda|^2 is the Casimir of so(3): kept to round-off by the Lie-Poisson method
    cas = [F for F in s.first_integrals() if F.kind == "casimir"][0]
    v = cas(res.y)
    assert np.max(np.abs(v - v[0])) < 1e-13 * abs(v[0])


def test_one_constraint_as_k_by_n_matches_a_single_covector():
    a, b = A[0], B[0]
    for cls in (ServoFirstKind, ServoSecondKind):
        one = cls(SO3, I, a=a, b=b)
        onek = cls(SO3, I, a=a[None], b=b[None])
        w = one._w_on_constraint(np.array([0.3, -0.2, 0.5]), project=True)
        st = one.state_from(w=w) if cls is ServoFirstKind else one.state_from(w=w, lam=0.2)
        stk = onek.state_from(w=w) if cls is ServoFirstKind else onek.state_from(w=w, lam=[0.2])
        assert np.array_equal(st, stk)
        r1 = one.simulate(st, 2.0, steps=100)
        rk = onek.simulate(stk, 2.0, steps=100)
        assert np.array_equal(r1.y, rk.y)
        assert np.array_equal(np.asarray(r1["lambda"]), np.asarray(rk["lambda"])[..., 0])
        assert one.realizability() == onek.realizability()


def test_reduced_system_has_dimension_n_minus_k_for_the_first_kind():
    s = ServoFirstKind(SO3, I, a=A, b=B)
    red = s.reduced()
    assert red.p == 1
    n = unit_normal(A)
    c = np.cross(B[0], B[1])
    kappa = c @ np.cross(I @ n, n) / (c @ (I @ n))
    # the one reduced coordinate x with w = E x: x' = kappa |E| x^2, with E the basis vector of the line
    E = red.to_state @ np.ones(1)  # m for x = 1: m = I E
    Evec = np.linalg.solve(I, E)
    scale = Evec @ n  # w = x E = x (E, n) n
    assert red.system.Q[0, 0, 0] == pytest.approx(kappa * scale, rel=1e-10)
    s2 = ServoSecondKind(SO3, I, a=A, b=B)
    assert s2.reduced().p == 3


def test_singular_realizability_matrix_is_refused_naming_the_smallest_singular_value():
    n = unit_normal(A)
    # choose b_2 so that (I n, b_1 x b_2) = 0: b_2 in the plane spanned by b_1 and I n
    b2 = 0.5 * B[0] + 0.7 * (I @ n)
    with pytest.raises(UnrealizableConstraintError, match="smallest singular value"):
        ServoFirstKind(SO3, I, a=A, b=np.array([B[0], b2]))


def test_linearly_dependent_covectors_are_named():
    with pytest.raises(CovectorError, match=r"a_2 .* linear combination of a_1"):
        ServoFirstKind(SO3, I, a=[A[0], 2 * A[0]], b=B)
    with pytest.raises(CovectorError, match=r"b_3 .* linear combination"):
        ServoFirstKind(named.se3(), np.eye(6), a=np.eye(6)[:3], b=[[1, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0],
                                                                    [1, 1, 0, 0, 0, 0]])
    with pytest.raises(CovectorError, match="number of controls"):
        ServoFirstKind(SO3, I, a=A, b=B[0])


@pytest.mark.parametrize("cls", [ServoFirstKind, ServoSecondKind])
def test_symbolic_equations_with_two_constraints_agree_with_the_numeric_field(cls):
    """Solve the printed equations for the derivatives at a state on the constraints and compare with
    the numeric right-hand side (a second, independent evaluation of the same model)."""
    import sympy as sp

    s = cls(SO3, I, a=A, b=B)
    eq = s.equations()
    assert len(eq.eqs) == 3 + 2 and len(eq.lam) == 2
    n = unit_normal(A)
    w = 0.7 * n
    lam = np.array([0.2, -0.1])
    t = eq.t
    D = sp.symbols("D0:3")   # w'
    E = sp.symbols("E0:2")   # lambda' (second kind) or lambda (first kind, unknown)
    rules = {sp.diff(o, t): d for o, d in zip(eq.omega, D)}
    rules.update({sp.diff(x, t): e for x, e in zip(eq.lam, E)})
    dyn = [e.subs(rules) for e in eq.exprs[:3]]
    vals = {o: float(v) for o, v in zip(eq.omega, w)}
    extra = [sum(float(A[i, j]) * D[j] for j in range(3)) for i in range(2)]   # (a_i, w') = 0
    if cls is ServoFirstKind:
        dyn = [e.subs({x: ee for x, ee in zip(eq.lam, E)}).subs(vals) for e in dyn]
        sol = sp.solve(dyn + extra, list(D) + list(E), dict=True)[0]
        wdot = np.array([float(sol[d]) for d in D])
        assert np.allclose(I @ wdot, s.rhs(s.state_from(w=w)), atol=1e-12)
    else:
        dyn = [e.subs({x: float(v) for x, v in zip(eq.lam, lam)}).subs(vals) for e in dyn]
        sol = sp.solve(dyn + extra, list(D) + list(E), dict=True)[0]
        wdot = np.array([float(sol[d]) for d in D])
        ldot = np.array([float(sol[e]) for e in E])
        num = s.rhs(s.state_from(w=w, lam=lam))
        assert np.allclose(num[:3], I @ wdot, atol=1e-12)
        assert np.allclose(num[3:], ldot, atol=1e-12)
