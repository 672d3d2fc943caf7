"""Servo-constraints of the first kind: realizability, multiplier, energy, Suslov, errors, mixed input."""

import numpy as np
import pytest
import sympy as sp

from liegroups import named
from servo import (ConstraintViolationError, CovectorError, Nonholonomic, ServoFirstKind,
                   UnrealizableConstraintError)
from servo.errors import SymbolicParameterError

I11, I12, I13, I22, I23, I33, b2, b3 = sp.symbols("I11 I12 I13 I22 I23 I33 b2 b3", real=True)
I_SYM = sp.Matrix([[I11, I12, I13], [I12, I22, I23], [I13, I23, I33]])
I_NUM = np.array([[2.0, 0.3, 0.4], [0.3, 1.5, -0.2], [0.4, -0.2, 1.0]])


def test_realizability_symbolic_slide_formula():
    # slide "Твердое тело с левоинвариантной сервосвязью": b3(I11 I22 - I12^2) + b2(I12 I13 - I11 I23)
    s = ServoFirstKind(named.so3(), I_SYM, a=[0, 0, 1], b=[0, b2, b3])
    slide = b3 * (I11 * I22 - I12**2) + b2 * (I12 * I13 - I11 * I23)
    assert sp.simplify(s.realizability() * I_SYM.det() - slide) == 0


def test_realizability_numeric_and_mixed():
    # independent: (I^-1 a, b) by a linear solve
    a, b = np.array([0.2, -1.0, 0.5]), np.array([1.0, 0.3, -0.7])
    s = ServoFirstKind(named.so3(), I_NUM, a=a, b=b)
    assert s.realizability() == pytest.approx(np.linalg.solve(I_NUM, a) @ b, rel=1e-13)
    # symbolic inertia with numeric a, b: a sympy expression that evaluates to the same number
    mixed = ServoFirstKind(named.so3(), I_SYM, a=a, b=b)
    vals = dict(zip([I11, I12, I13, I22, I23, I33], [2.0, 0.3, 0.4, 1.5, -0.2, 1.0]))
    assert float(mixed.realizability().subs(vals)) == pytest.approx(s.realizability(), rel=1e-12)
    # numeric inertia with a symbolic b
    mixed2 = ServoFirstKind(named.so3(), I_NUM, a=a, b=[1.0, b2, b3])
    assert float(mixed2.realizability().subs({b2: 0.3, b3: -0.7})) == pytest.approx(s.realizability(), rel=1e-12)
    assert len(mixed2.equations()) == 4


def test_unrealizable_raises_with_value():
    # l orthogonal to n in the kinetic metric: I = diag, a = e3, b = e1 gives (I^-1 a, b) = 0
    with pytest.raises(UnrealizableConstraintError, match=r"\(I\^-1 a, b\) = 0\.000e\+00") as info:
        ServoFirstKind(named.so3(), np.diag([1.0, 2.0, 3.0]), a=[0, 0, 1], b=[1, 0, 0])
    assert info.value.value == 0.0 and isinstance(info.value, ValueError)
    # nearly zero relative to |a||b||I^-1| also raises, with the value
    b = np.array([1.0, 0.0, 1e-13])
    with pytest.raises(UnrealizableConstraintError, match="e-13"):
        ServoFirstKind(named.so3(), np.diag([1.0, 2.0, 1.0]), a=[0, 0, 1], b=b)
    # symbolic: diagonal symbolic inertia, b = e1 is unrealizable for every value
    A, B, C = sp.symbols("A B C", positive=True)
    with pytest.raises(UnrealizableConstraintError, match="simplifies to 0"):
        ServoFirstKind(named.so3(), [A, B, C], a=[0, 0, 1], b=[1, 0, 0])
    with pytest.raises(CovectorError, match="a must be non-zero"):
        ServoFirstKind(named.so3(), np.eye(3), a=[0, 0, 0], b=[1, 0, 0])
    with pytest.raises(CovectorError, match="length 3"):
        ServoFirstKind(named.so3(), np.eye(3), a=[0, 1], b=[1, 0, 0])


def test_rhs_and_multiplier_against_sympy_solution_of_equations():
    # independent route: solve the symbolic equations I w' = ad*_w(I w) + lambda b, (a, w)' = 0 with sympy
    a, b = [0.0, 0.0, 1.0], [0.2, 0.5, 1.0]
    s = ServoFirstKind(named.so3(), I_NUM, a=a, b=b)
    eq = s.equations().on_constraint()
    w1, w2 = eq.omega
    t = eq.t
    sol = sp.solve(eq.exprs, [w1.diff(t), w2.diff(t), eq.lam], dict=True)[0]
    W = {w1: 0.7, w2: -1.3}
    m = s.state_from(w=[0.7, -1.3, 0.0])
    assert s.multiplier(m) == pytest.approx(float(sol[eq.lam].subs(W)), rel=1e-12)
    wdot = np.linalg.solve(I_NUM, s.rhs(m))
    assert wdot[:2] == pytest.approx([float(sol[w1.diff(t)].subs(W)), float(sol[w2.diff(t)].subs(W))], rel=1e-12)
    assert abs(wdot[2]) < 1e-14                      # the constraint (a, w) = 0 is kept


def test_energy_rate_is_lambda_b_w_and_not_conserved():
    # derived: T' = (w, m') = lambda (b, w), so T is not an integral for b not parallel to a
    rng = np.random.default_rng(4)
    a, b = np.array([0.0, 0.0, 1.0]), np.array([0.0, 0.6, 1.0])
    s = ServoFirstKind(named.so3(), I_NUM, a=a, b=b)
    m = s.state_from(w=np.column_stack([rng.standard_normal((6, 2)), np.zeros(6)]))
    w = s.velocity(m)
    assert np.allclose(np.sum(w * s.rhs(m), -1), s.multiplier(m) * (w @ b), atol=1e-13)
    assert "energy" not in [f.name for f in s.first_integrals()]
    res = s.simulate(m[0], 1.0, steps=200)
    assert np.ptp(s.energy(res.y)) > 1e-3


def test_suslov_nonholonomic_energy_and_constraint():
    a = np.array([0.0, 0.0, 1.0])
    s = Nonholonomic(named.so3(), I_NUM, a=a)
    same = ServoFirstKind(named.so3(), I_NUM, a=a, b=a)
    m0 = s.state_from(w=[0.8, -0.4, 0.0])
    assert np.allclose(s.rhs(m0), same.rhs(m0), atol=1e-15)
    res = s.simulate(m0, 5.0, steps=1000)
    assert res.method == "rk853"
    assert res.max_residual("(a, w)") < 1e-13          # a linear invariant of the field: kept by every RK method
    assert res.drift("energy") < 1e-9
    names = [f.name for f in s.first_integrals()]
    assert names[0] == "energy"


def test_constraint_violation_and_projection():
    s = ServoFirstKind(named.so3(), I_NUM, a=[0, 0, 1], b=[0, 0.3, 1])
    m_bad = I_NUM @ np.array([1.0, 0.5, 0.01])
    with pytest.raises(ConstraintViolationError, match=r"\(a, w\) = 1\.000e-02") as info:
        s.check_state(m_bad)
    assert info.value.residual == pytest.approx(0.01)
    with pytest.raises(ConstraintViolationError, match="project=True"):
        s.state_from(w=[1.0, 0.5, 0.01])
    p = s.check_state(m_bad, project=True)
    assert abs(s.constraint_residual(p)) < 1e-15
    assert np.allclose(s.check_state(p, project=True), p, atol=1e-15)   # idempotent
    w = s.velocity(s.state_from(w=[1.0, 0.5, 0.01], project=True))
    assert abs(w[2]) < 1e-15


def test_batched_rhs_equals_loop_and_symbolic_needs_subs():
    s = ServoFirstKind(named.se3(), np.diag([1.0, 2.0, 3.0, 1.0, 1.5, 2.5]), a=[0, 0, 0, 0, 1, 0],
                       b=[0.1, 0.2, 0.3, 0.0, 1.0, 0.5])
    rng = np.random.default_rng(5)
    w = rng.standard_normal((3, 4, 6))
    w[..., 4] = 0.0
    m = s.state_from(w=w)
    out = s.rhs(m)
    for idx in np.ndindex(3, 4):
        assert np.allclose(out[idx], s.rhs(m[idx]), atol=1e-14)
    A = sp.Symbol("A", positive=True)
    sym = ServoFirstKind(named.so3(), [A, 2, 3], a=[0, 0, 1], b=[0, 1, 1])
    with pytest.raises(SymbolicParameterError, match="subs"):
        sym.rhs(np.ones(3))
    assert sym.subs({A: 1}).realizability() == pytest.approx(1.0 / 3.0)


def test_reduced_quadratic_integral_of_suslov_is_the_energy():
    # for b = a the energy is a quadratic integral of the reduced system; with a = e3 and w = (x1, x2, 0)
    # it is x^T I[:2, :2] x / 2, so the finder must return a multiple of the upper 2x2 block of I
    from servo.lie.first_integrals import reduced_quadratic_integrals

    s = Nonholonomic(named.so3(), I_NUM, a=[0, 0, 1])
    (S,) = reduced_quadratic_integrals(s.reduced())
    S = np.array(S.tolist(), dtype=float)
    ratio = S / I_NUM[:2, :2]
    assert np.allclose(ratio, ratio[0, 0], rtol=1e-9)
    # the energy is listed once (not again as "quadratic:1")
    assert [f.kind for f in s.first_integrals()] == ["energy"]


def test_nonholonomic_is_the_limit_of_viscous_friction():
    # Kozlov's Theorem 1 (slide "Anisotropic friction") on so(3): m' = ad*_w m - N (a, w) a tends to the
    # nonholonomic (Suslov) motion as N -> oo (independent: a stiff scipy integration of the free body)
    import scipy.integrate

    a = np.array([0.0, 0.0, 1.0])
    s = Nonholonomic(named.so3(), I_NUM, a=a)
    m0 = s.state_from(w=[0.8, -0.4, 0.0])
    ref = s.simulate(m0, 2.0, steps=400)
    Ki = np.linalg.inv(I_NUM)
    errs = []
    for N in (1e2, 1e3):
        def f(t, m, N=N):
            w = Ki @ m
            return np.cross(m, w) - N * (a @ w) * a
        sol = scipy.integrate.solve_ivp(f, (0, 2.0), m0, method="Radau", t_eval=ref.t, rtol=1e-10, atol=1e-12)
        errs.append(np.max(np.abs(sol.y.T - ref.y)))
    assert errs[1] < errs[0] / 5 and errs[1] < 1e-2
