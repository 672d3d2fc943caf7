"""Servo-constraints of the second kind and the vakonomic model (slides "Сервосвязи второго рода",
"Твердое тело с левоинвариантной сервосвязью")."""

import numpy as np
import pytest
import sympy as sp

from liegroups import named
from servo import EulerPoincare, ServoFirstKind, ServoSecondKind, Vakonomic

I11, I12, I13, I22, I23, I33, b2, b3 = sp.symbols("I11 I12 I13 I22 I23 I33 b2 b3", real=True)
I_SYM = sp.Matrix([[I11, I12, I13], [I12, I22, I23], [I13, I23, I33]])


def _slide():
    s = ServoSecondKind(named.so3(), I_SYM, a=[0, 0, 1], b=[0, b2, b3])
    eq = s.equations().on_constraint()
    w1, w2 = eq.omega
    t, lam = eq.t, eq.lam
    d = lambda f: f.diff(t)  # noqa: E731
    S1 = I11 * d(w1) + I12 * d(w2) + w2 * (I13 * w1 + I23 * w2 + b3 * lam)
    S2 = I12 * d(w1) + I22 * d(w2) - w1 * (I13 * w1 + I23 * w2 + b3 * lam)      # as printed on the slide
    S3 = (I13 * d(w1) + I23 * d(w2) + b3 * d(lam) + w1 * (I12 * w1 + I22 * w2 + b2 * lam)
          - w2 * (I11 * w1 + I12 * w2))
    F = (I11 * w1 + I12 * w2) ** 2 + (I12 * w1 + I22 * w2 + b2 * lam) ** 2 + (I13 * w1 + I23 * w2 + b3 * lam) ** 2
    return eq, (S1, S2, S3), F


def test_equations_are_the_slide_equations():
    eq, (S1, S2, S3), _ = _slide()
    e1, e2, e3 = eq.exprs
    assert sp.expand(e1 - S1) == 0
    assert sp.expand(e3 - S3) == 0
    # the slide's second equation lacks the term b2 lambda' of (I w + lambda b)_2' (a misprint); equal for b2 = 0
    assert sp.expand(e2 - S2 - b2 * eq.lam.diff(eq.t)) == 0
    assert sp.expand((e2 - S2).subs(b2, 0)) == 0


def _rates_at(exprs, unknowns, point):
    """Solve the (linear in the rates) equations exactly at a rational point."""
    A = sp.Matrix([[sp.diff(e, u) for u in unknowns] for e in exprs]).subs(point)
    r = -sp.Matrix([e.subs({u: 0 for u in unknowns}) for e in exprs]).subs(point)
    return dict(zip(unknowns, A.LUsolve(r)))


def test_slide_quadratic_integral_is_conserved():
    # F' = 0 is a polynomial identity; it is checked exactly at random rational points (a non-zero
    # polynomial vanishes at such points with probability 0), which is fast and still exact arithmetic
    eq, slide_eqs, F = _slide()
    t = eq.t
    funcs = [eq.omega[0], eq.omega[1], eq.lam]
    unknowns = [f.diff(t) for f in funcs]
    rng = np.random.default_rng(0)
    params = [I11, I12, I13, I22, I23, I33, b2, b3]
    for _ in range(3):
        vals = [sp.Rational(int(v), 7) for v in rng.integers(1, 40, 8)]
        vals[0] += 10
        vals[3] += 10
        vals[5] += 10                                   # keep I positive definite
        point = dict(zip(params, vals))
        point.update({f: sp.Rational(int(v), 5) for f, v in zip(funcs, rng.integers(-9, 10, 3))})
        Fdot = F.diff(t)
        ours = _rates_at(eq.exprs, unknowns, point)
        assert Fdot.subs(ours).subs(point) == 0
        # with the equations exactly as printed (no b2 lambda'), F would not be conserved for b2 != 0
        printed = _rates_at(list(slide_eqs), unknowns, point)
        assert Fdot.subs(printed).subs(point) != 0
    # the library lists the same integral: F = |I w + lambda b|^2 (Casimir |m|^2 shifted)
    s = ServoSecondKind(named.so3(), I_SYM, a=[0, 0, 1], b=[0, b2, b3])
    (cas,) = [f for f in s.first_integrals() if f.kind == "casimir"]
    om = sp.symbols("omega1:4", real=True)
    lam = sp.Symbol("lambda", real=True)
    Fs = F.subs({eq.omega[0]: om[0], eq.omega[1]: om[1], eq.lam: lam})
    assert sp.expand(cas.expr_w.subs(om[2], 0) - Fs) == 0


def _random_system(name, seed, parallel=False):
    g = named.get(name)
    n = g.dim
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    I = A @ A.T + n * np.eye(n)
    a = rng.standard_normal(n)
    b = a if parallel else rng.standard_normal(n)
    return ServoSecondKind(g, I, a=a, b=b), rng


@pytest.mark.parametrize("name, seed", [("so3", 1), ("se2", 2), ("se3", 3)])
def test_shifted_casimirs_are_conserved(name, seed):
    s, rng = _random_system(name, seed)
    x0 = s.state_from(w=rng.standard_normal(s.n), lam=0.4, project=True)
    res = s.simulate(x0, 1.0, steps=150)
    cas = [f for f in s.first_integrals() if f.kind == "casimir"]
    assert len(cas) == len(s.algebra.casimirs()) >= 1
    for f in cas:
        v = f(res.y)
        assert np.max(np.abs(v - v[0])) < 1e-12 * max(1.0, abs(v[0])), f.name
    assert res.max_residual("(a, w)") < 1e-12
    assert np.max(np.abs(s.constraint_residual(res.y))) < 1e-12
    # T is not conserved for b not parallel to a: T' = -lambda' (b, w) (derived), and it does change
    lam, lamdot = s.multiplier(res.y)
    w = s.velocity(res.y)
    Tdot = np.sum(w * s.rhs(res.y)[..., :s.n], -1)
    assert np.allclose(Tdot, -lamdot * (w @ s.b), atol=1e-10 * np.max(np.abs(Tdot)))
    assert "energy" not in [f.name for f in s.first_integrals()]
    assert np.ptp(s.energy(res.y)) > 1e-4


def test_vakonomic_is_second_kind_with_b_equal_a_and_keeps_energy():
    s, rng = _random_system("so3", 7, parallel=True)
    v = Vakonomic(s.algebra, s.I, a=s.a)
    x0 = v.state_from(w=rng.standard_normal(3), lam=-0.3, project=True)
    assert np.allclose(v.rhs(x0), s.rhs(x0), atol=1e-14)
    assert np.allclose(v.W, v.W.T, atol=1e-14)                 # W symmetric iff b parallel to a
    res = v.simulate(x0, 2.0, steps=400)
    assert res.drift("energy") < 1e-9
    assert "energy" in [f.name for f in v.first_integrals()]


def test_vakonomic_is_the_limit_of_added_masses():
    # Kozlov's Theorem 2 (slide "Added masses") on a Lie group: T_N = (I w, w)/2 + N (a, w)^2/2 is the free
    # system with inertia I + N a a^T; as N -> oo its momentum tends to z = I w + lambda a of the vakonomic
    # motion with lambda(0) = 0 (independent: a plain Euler-Poincare simulation).
    s, rng = _random_system("so3", 11, parallel=True)
    v = Vakonomic(s.algebra, s.I, a=s.a)
    w0 = rng.standard_normal(3)
    x0 = v.state_from(w=w0, lam=0.0, project=True)
    ref = v.simulate(x0, 1.0, steps=400)
    errs = []
    for N in (1e3, 1e4):
        free = EulerPoincare(s.algebra, s.I + N * np.outer(s.a, s.a))
        r = free.simulate(x0[:3], 1.0, steps=400)
        errs.append(np.max(np.abs(r.y - ref.z)))
    assert errs[1] < errs[0] / 5 and errs[1] < 1e-3


def test_state_layout_and_multiplier():
    s = ServoSecondKind(named.so3(), np.diag([2.0, 1.0, 0.5]), a=[0, 0, 1], b=[0, 0.3, 1])
    x = s.state_from(w=[1.0, 2.0, 0.0], lam=0.5)
    assert x.tolist() == [2.0, 2.0, 0.0, 0.5]
    # by hand: z = (2, 2.15, 0.5), z' = z x w = (-1, 0.5, 1.85), lambda' = (I^-1 a, z')/(I^-1 a, b) = 1.85
    lam, lamdot = s.multiplier(x)
    assert lam == 0.5 and lamdot == pytest.approx(1.85)
    assert np.allclose(s.rhs(x), [-1.0, 0.5 - 0.3 * 1.85, 0.0, 1.85])
    assert np.allclose(s.from_problem(s.to_problem(x)), x)
    xs = s.state_from(w=np.array([[1.0, 2.0, 0.0], [0.5, -1.0, 0.0]]), lam=[0.5, 0.1])
    assert xs.shape == (2, 4)
    assert np.allclose(s.rhs(xs)[0], s.rhs(x))
    # first and second kind share the realizability number
    assert ServoFirstKind(s.algebra, s.I, a=s.a, b=s.b).realizability() == s.realizability() == 2.0


def test_equations_print_and_evaluate():
    s = ServoSecondKind(named.so3(), [[2, 0, 0], [0, 1, 0], [0, 0, sp.Rational(1, 3)]], a=[0, 0, 1], b=[0, 1, 1])
    eq = s.equations()
    assert len(eq) == 4 and str(eq.eqs[-1]) == "Eq(omega_3(t), 0)"
    tex = eq.on_constraint().latex()
    assert "\\dot{\\lambda}" in tex and tex.startswith("\\begin{align}")
    num = s.equations(symbolic=False)
    assert any(isinstance(x, sp.Float) for e in num.exprs for x in e.atoms(sp.Number))
    assert sp.expand(num.exprs[2] - sp.N(eq.exprs[2])) == 0
