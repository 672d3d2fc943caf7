"""Euler-Poincare equations on named algebras and their known Casimirs.

Independent references: Euler's equations of a rigid body m' = m x w (np.cross); Kirchhoff's equations
M' = M x Omega + P x V, P' = P x Omega for se(3) and the planar body p' = (w p2, -w p1), M' = p1 v - p2 u
for se(2) (Holm, Marsden, Ratiu, "The Euler-Poincare equations", Adv. Math. 137 (1998), section 7); the
classical Casimirs |m|^2 (so(3)), |p|^2 (se(2)), |p|^2 and (M, p) (se(3)), the inverse Killing form of
sl(2) (K = [[8,0,0],[0,0,4],[0,4,0]] in (h, e, f), computed by hand from [h,e] = 2e, [h,f] = -2f,
[e,f] = h), the central coordinate of the Heisenberg algebra, |L|^2 and the Pfaffian
L12 L34 - L13 L24 + L14 L23 of so(4); and the Bianchi types whose Casimirs are not polynomial.
"""

import numpy as np
import pytest
import sympy as sp

from liegroups import LieAlgebra, m_symbols, named


def _span_contains(found, expected, syms):
    """True iff every expected polynomial is a linear combination of the found ones of the same degree."""
    polys = [sp.Poly(f.expr, *syms) for f in found]
    for e in expected:
        pe = sp.Poly(sp.expand(e), *syms)
        same = [p for p in polys if p.total_degree() == pe.total_degree()]
        monos = sorted({m for p in same + [pe] for m in p.monoms()})
        A = sp.Matrix([[p.coeff_monomial(m) for p in same] for m in monos])
        b = sp.Matrix([pe.coeff_monomial(m) for m in monos])
        if A.shape[1] == 0 or A.rank() != A.row_join(b).rank():
            return False
    return True


def test_euler_equations_so3():
    rng = np.random.default_rng(0)
    g = named.so3()
    for batch in [(), (5,), (200,)]:  # single, einsum path, unrolled path
        inertia = rng.uniform(0.5, 3.0, batch + (3,))
        w = rng.standard_normal(batch + (3,))
        m = inertia * w
        assert np.allclose(g.coad(w, m), np.cross(m, w), atol=1e-14)


def test_kirchhoff_equations_se3():
    rng = np.random.default_rng(1)
    g = named.se3()
    Om, V, M, P = rng.standard_normal((4, 300, 3))
    out = g.coad(np.concatenate([Om, V], -1), np.concatenate([M, P], -1))
    assert np.allclose(out[:, :3], np.cross(M, Om) + np.cross(P, V), atol=1e-13)
    assert np.allclose(out[:, 3:], np.cross(P, Om), atol=1e-13)


def test_planar_body_se2():
    rng = np.random.default_rng(2)
    u, v, w, p1, p2, M = rng.standard_normal((6, 100))
    out = named.se2().coad(np.stack([u, v, w], -1), np.stack([p1, p2, M], -1))
    assert np.allclose(out, np.stack([w * p2, -w * p1, p1 * v - p2 * u], -1), atol=1e-14)


@pytest.mark.parametrize("name, expected", [
    ("so3", lambda m: [m[0]**2 + m[1]**2 + m[2]**2]),
    ("su2", lambda m: [m[0]**2 + m[1]**2 + m[2]**2]),
    ("se2", lambda m: [m[0]**2 + m[1]**2]),
    ("se3", lambda m: [m[3]**2 + m[4]**2 + m[5]**2, m[0] * m[3] + m[1] * m[4] + m[2] * m[5]]),
    ("heisenberg", lambda m: [m[2]]),
    ("so4", lambda m: [sum(mi**2 for mi in m), m[0] * m[5] - m[1] * m[4] + m[2] * m[3]]),
    ("so21", lambda m: [m[0]**2 + m[1]**2 - m[2]**2]),
])
def test_known_casimirs(name, expected):
    g = named.get(name)
    syms = m_symbols(g.dim)
    cas = g.casimirs()
    exp = expected(syms)
    assert len(cas) == len(exp) == cas.expected and cas.warning is None
    assert _span_contains(cas, exp, syms)


def test_sl2_casimir_is_the_dual_killing_form():
    g = named.sl2()
    K = sp.Matrix([[8, 0, 0], [0, 0, 4], [0, 4, 0]])
    assert np.allclose(g.killing_form(), np.array(K, dtype=float))
    m = sp.Matrix(m_symbols(3))
    dual = sp.expand((m.T * K.inv() * m)[0])
    (c,) = g.casimirs()
    ratio = sp.simplify(c.expr / dual)
    assert ratio.is_number and ratio != 0


def test_casimir_call_and_grad_batched():
    g = named.so3()
    (c,) = g.casimirs()
    m = np.random.default_rng(3).standard_normal((4, 2, 3))
    assert np.allclose(c(m), np.sum(m * m, -1))
    assert np.allclose(c.grad(m), 2 * m)
    (z,) = named.heisenberg().casimirs()  # linear: constant gradient, still batched
    assert z.grad(m).shape == (4, 2, 3) and np.allclose(z.grad(m), [0, 0, 1])


@pytest.mark.parametrize("t, a", [("IV", None), ("V", None), ("VI", 2.0), ("VI", 0.5), ("VII", 0.5), ("VII", 3.0)])
def test_bianchi_without_polynomial_casimir_warns(t, a):
    """IV: F = m2 exp(-m1/m2)-type, V: m1/m2, VI_a (a > 0): m1^a / m2, VII_a: involves exp(a arctan);
    none polynomial, but n - rank Pi = 1."""
    cas = named.bianchi(t, a=a).casimirs()
    assert len(cas) == 0 and cas.expected == 1
    assert cas.warning is not None and "found 0 polynomial" in cas.warning and "is 1" in cas.warning


@pytest.mark.parametrize("a, expected", [(-2.0, "m1**2*m2"), (-0.5, "m1*m2**2"), (-3.0, "m1**3*m2")])
def test_bianchi_vi_negative_rational_has_polynomial_casimir(a, expected):
    """VI_a: {m3, F} = -(m1 F_1 + a m2 F_2), so m1^p m2^q is a Casimir iff p + a q = 0 (derived by hand)."""
    cas = named.bianchi("VI", a=a).casimirs()
    syms = m_symbols(3)
    assert len(cas) == 1 and cas.warning is None
    assert _span_contains(cas, [sp.sympify(expected, locals=dict(zip(("m1", "m2", "m3"), syms)))], syms)


def test_casimir_degree_cap_reports_shortfall():
    cas = named.bianchi("VI", a=-3.0).casimirs(max_degree=3)  # m1^3 m2 has degree 4
    assert len(cas) == 0 and cas.warning is not None and "degree <= 3" in cas.warning


@pytest.mark.parametrize("name", ["so3", "se3", "bianchi_VI0", "heisenberg"])
def test_float_path_finds_casimirs_in_a_random_basis(name):
    """Irrational C (random basis) goes through the floating-point null space: same number and degrees
    of Casimirs as the named algebra, each satisfying Pi(m) grad F(m) = 0 at random m."""
    g = named.all_named()[name]
    rng = np.random.default_rng(11)
    h = g.change_basis(np.eye(g.dim) + 0.4 * rng.uniform(-1, 1, (g.dim, g.dim)))
    cas = h.casimirs()
    assert [c.degree for c in cas] == [c.degree for c in g.casimirs()] and cas.warning is None
    m = rng.standard_normal((6, g.dim))
    for c in cas:
        assert np.max(np.abs(np.einsum("...ij,...j->...i", h.poisson_tensor(m), c.grad(m)))) < 1e-9
        assert np.max(np.abs(c.grad(m))) > 1e-3  # not the zero polynomial


@pytest.mark.parametrize("extra", [0, 1])
def test_casimirs_are_functionally_independent(extra):
    """gl(2) (from E11, E12, E21, E22) and R + so(3): a linear Casimir and its square are both in the
    degree-2 null space; only independent ones may be returned (Jacobian of rank = number found)."""
    if extra == 0:
        E = [np.outer(np.eye(2)[i], np.eye(2)[j]) for i in range(2) for j in range(2)]
        g, degrees = LieAlgebra.from_matrices(E), [1, 2]  # trace, then a quadratic (det or tr^2 - ...)
    else:
        C = np.zeros((4, 4, 4))  # R + so(3), the centre first so that m1^2 heads the degree-2 null space
        C[1:, 1:, 1:] = named.so3().structure_constants
        g, degrees = LieAlgebra(C), [1, 2]
    cas = g.casimirs()
    assert sorted(c.degree for c in cas) == degrees and len(cas) == cas.expected
    m = np.random.default_rng(4).standard_normal((3, g.dim))
    J = np.stack([c.grad(m) for c in cas], axis=-2)
    assert all(np.linalg.matrix_rank(Jk) == len(cas) for Jk in J)
