"""Evaluation of a polynomial Casimir (liegroups.casimirs.Casimir, through liegroups.monomials) against sympy's
exact arithmetic."""

import itertools

import numpy as np
import pytest

@pytest.mark.parametrize("top", [4, 1])
@pytest.mark.parametrize("few", [8, 0], ids=["kronecker-powers", "monomial-blocks"])
def test_casimir_evaluation_by_monomials(few, top, monkeypatch):
    """Casimir's value and gradient (monomials degree by degree, one product with the coefficients; for a few
    points from the Kronecker powers: both paths) against sympy evaluating the same expression exactly at
    rational points, for a dense polynomial of degrees 0..4 (and 0..1) in 5 variables (every monomial present),
    on a batch of shape (3, 2) and on one point."""
    from fractions import Fraction
    import sympy as sp
    from liegroups import monomials
    from liegroups.casimirs import Casimir
    monkeypatch.setattr(monomials, "_KRON_POINTS", few)
    syms = sp.symbols("m1:6")
    rng = np.random.default_rng(3)
    expr = sum(sp.Rational(int(rng.integers(-9, 10)), int(rng.integers(1, 7))) * sp.prod(mono)
               for d in range(top + 1) for mono in itertools.combinations_with_replacement(syms, d))
    cas = Casimir(expr, syms, top)
    pts = np.array([[Fraction(int(v), 8) for v in row] for row in rng.integers(-12, 13, (6, 5))], dtype=object)
    Z = pts.astype(float).reshape(3, 2, 5)
    want = np.array([float(expr.subs(dict(zip(syms, map(sp.Rational, p))))) for p in pts]).reshape(3, 2)
    want_g = np.array([[float(sp.diff(expr, s).subs(dict(zip(syms, map(sp.Rational, p))))) for s in syms]
                       for p in pts]).reshape(3, 2, 5)
    assert np.max(np.abs(cas(Z) - want)) <= 1e-13 * np.max(np.abs(want))
    assert np.max(np.abs(cas.grad(Z) - want_g)) <= 1e-13 * np.max(np.abs(want_g))
    assert cas(Z[0, 0]).shape == () and abs(cas(Z[0, 0]) - want[0, 0]) <= 1e-13 * abs(want[0, 0])
    assert cas.grad(Z[1, 1]).shape == (5,)
