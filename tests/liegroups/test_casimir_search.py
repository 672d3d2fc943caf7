"""The Casimir search of liegroups.casimirs: exact (sparse rational null space) and floating point (the rows
of a generating set only), and the numeric evaluation of a Casimir from its monomials.

Independent references: for so(5) the momentum m is the skew matrix M = sum m_ij L_ij, and tr(M^2),
tr(M^4) are invariant under conjugation, so the Casimirs are |m|^2 and a combination of tr(M^4) and
(tr M^2)^2 (the invariant polynomials of B2 have degrees 2 and 4); the Casimir condition
{m_i, F} = sum_{j,k} C[i,j,k] m_k dF/dm_j = 0 checked symbolically in exact rationals; values and
gradients against sympy's own evaluation of the expression.
"""

import numpy as np
import pytest
import sympy as sp

from liegroups import LieAlgebra, LieGroupsError, m_symbols, named
from liegroups import casimirs as cm
from liegroups import monomials


def _bracket_with_coordinates(alg, F, syms):
    """[{m_i, F} for every i], symbolically, with the structure constants as exact rationals."""
    C = alg.structure_constants
    n = alg.dim
    grads = [sp.diff(F, s) for s in syms]
    return [sp.expand(sum(sp.nsimplify(C[i, j, k]) * syms[k] * grads[j]
                          for j in range(n) for k in range(n) if C[i, j, k] != 0)) for i in range(n)]


def test_so5_casimirs_exact_and_the_invariants_of_its_matrices():
    g = named.so(5)
    cas = g.casimirs()
    syms = m_symbols(10)
    assert [c.degree for c in cas] == [2, 4] and cas.warning is None
    for c in cas:   # integer coefficients, and the Casimir condition holds in exact arithmetic
        assert all(isinstance(v, sp.Integer) for v in sp.Poly(c.expr, *syms).coeffs())
        assert _bracket_with_coordinates(g, c.expr, syms) == [0] * 10
    M = sp.zeros(5, 5)
    for s, X in zip(syms, _so5_matrices()):   # the basis of named.so(5), in its order
        M += s * sp.Matrix(X.astype(int))
    t2, t4 = sp.expand((M * M).trace()), sp.expand((M ** 4).trace())
    assert sp.simplify(cas[0].expr / t2).is_number
    # F4 = a tr(M^4) + b (tr M^2)^2 with a != 0
    a, b = sp.symbols("a b")
    sol = sp.solve(sp.Poly(sp.expand(cas[1].expr - a * t4 - b * t2 ** 2), *syms).coeffs(), [a, b], dict=True)
    assert len(sol) == 1 and sol[0][a] != 0


def _so5_matrices():
    mats = []
    for i in range(5):
        for j in range(i + 1, 5):
            X = np.zeros((5, 5))
            X[i, j], X[j, i] = 1.0, -1.0
            mats.append(X)
    return mats


def test_float_path_on_a_random_basis_of_so5_matches_the_transported_casimirs():
    """In the basis f_a = sum_i P[a, i] e_i momenta transform as m' = P m, so F'(m') = F(P^-1 m') are the
    Casimirs of the new basis; the float search finds the same span (degree by degree, at random points)."""
    g = named.so(5)
    rng = np.random.default_rng(3)
    P = np.linalg.qr(rng.standard_normal((10, 10)))[0] * rng.uniform(0.5, 2.0, 10)[None, :]
    h = g.change_basis(P)
    cas = h.casimirs()
    assert [c.degree for c in cas] == [2, 4] and cas.warning is None
    mp = rng.standard_normal((40, 10))
    m = mp @ np.linalg.inv(P).T
    ref = [c(m) for c in g.casimirs()]
    # degree 2: proportional to F2 o P^-1; degree 4: in the span of F4 o P^-1 and (F2 o P^-1)^2
    f2 = cas[0](mp)
    k = np.dot(f2, ref[0]) / np.dot(ref[0], ref[0])
    assert np.allclose(f2, k * ref[0], rtol=1e-8, atol=1e-8 * np.max(np.abs(f2)))
    B = np.stack([ref[1], ref[0] ** 2], 1)
    f4 = cas[1](mp)
    coef = np.linalg.lstsq(B, f4, rcond=None)[0]
    assert np.max(np.abs(B @ coef - f4)) < 1e-8 * np.max(np.abs(f4)) and abs(coef[0]) > 1e-6
    # and the Casimir condition numerically: Pi(m) grad F(m) = 0
    C = h.structure_constants
    for c in cas:
        r = np.einsum("ijk,bk,bj->bi", C, mp, c.grad(mp))
        assert np.max(np.abs(r)) < 1e-9 * np.max(np.abs(c.grad(mp))) * np.max(np.abs(mp)) * np.max(np.abs(C))


def test_generators_generate():
    rng = np.random.default_rng(0)
    assert len(cm._generators(named.so(5).structure_constants, rng)) == 2       # semisimple: two suffice
    assert len(cm._generators(np.zeros((4, 4, 4)), rng)) == 4                   # abelian: every direction
    assert len(cm._generators(named.heisenberg().structure_constants, rng)) == 2   # [x, y] = z


def test_casimir_values_and_gradients_from_monomials_equal_sympy(monkeypatch):
    g = named.so(5)
    rng = np.random.default_rng(1)
    syms = m_symbols(10)
    m = rng.standard_normal((7, 3, 10))
    monkeypatch.setattr(monomials, "_MONOMIAL_FLOATS", 50)    # several chunks of points (16 a chunk)
    for c in g.casimirs():
        f = sp.lambdify([syms], c.expr, "numpy")
        gr = sp.lambdify([syms], [sp.diff(c.expr, s) for s in syms], "numpy")
        cols = np.moveaxis(m, -1, 0)
        assert c(m).shape == (7, 3)
        assert np.allclose(c(m), f(cols), rtol=1e-13, atol=1e-12)
        assert np.allclose(c.grad(m), np.stack(gr(cols), -1), rtol=1e-13, atol=1e-12)
        # the coefficient rows dense and as CSR (so(5)'s quartic: 2% non-zero, CSR by default)
        for frac in (0.0, 1.0):
            monkeypatch.setattr(monomials, "_SPARSE", frac)
            tables = monomials.monomial_tables([(e, k) for k, e in c.terms], 10)
            assert hasattr(tables[2], "toarray") == (frac == 1.0)
            flat = cols.reshape(10, -1)
            assert np.allclose(monomials.monomial_sum(tables, flat, False)[0], f(flat), rtol=1e-13, atol=1e-12)
            assert np.allclose(monomials.monomial_sum(tables, flat, True), np.stack(gr(flat)), rtol=1e-13, atol=1e-12)
            # the values-only tables form fewer monomials (the gradients read m^(e - e_j) for every j of a term, the
            # values only for its last variable), on many points and on the few-point Kronecker path
            values = monomials.monomial_tables([(e, k) for k, e in c.terms], 10, grad=False)
            assert values[4] <= tables[4] and (c.degree < 4 or values[4] < tables[4] < 286)
            for pts in (flat, flat[:, :3]):
                assert np.allclose(monomials.monomial_sum(values, pts, False)[0], f(pts), rtol=1e-13, atol=1e-12)
    # a Casimir from an expression (the other constructor) with a constant-gradient (linear) term
    x = m_symbols(3)
    c = cm.Casimir(3 * x[2] + x[0] * x[1], x, 2)
    v = rng.standard_normal((5, 3))
    assert np.allclose(c(v), 3 * v[:, 2] + v[:, 0] * v[:, 1])
    assert np.allclose(c.grad(v), np.stack([v[:, 1], v[:, 0], np.full(5, 3.0)], -1))


def test_a_null_vector_that_does_not_solve_the_system_exactly_is_refused(monkeypatch):
    """The exact path checks every Casimir it keeps: {m_i, F} = 0 in rationals."""
    from fractions import Fraction
    real = cm._nullspace

    def wrong(monos, rows, exact, gens=None):
        out = real(monos, rows, exact, gens)
        if exact and out:
            out[0] = list(out[0])
            out[0][0] += Fraction(1, 10**9)
        return out

    monkeypatch.setattr(cm, "_nullspace", wrong)
    g = LieAlgebra(named.so3().structure_constants.copy(), name="so(3) copy")
    with pytest.raises(LieGroupsError, match="does not solve it exactly"):
        g.casimirs()
