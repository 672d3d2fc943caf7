"""The Casimir search on one BLAS thread finds the same Casimirs, and their names are written without sympy.

Independent references: sympy's own ``str`` of each Casimir expression (the names users saw before the
text was written from the terms), the Casimir condition {m_i, F} = sum_{j,k} C[i,j,k] m_k dF/dm_j = 0
checked symbolically (exactly, in rationals, for the algebras with rational structure constants; for a
random basis numerically at random points, as tests/liegroups/test_casimir_search.py does), and the search
run without the thread limit (threadpoolctl made unimportable, and the search called directly).
"""

import sys

import numpy as np
import pytest
import sympy as sp

from integrators import CoadjointProblem
from liegroups import LieAlgebra, m_symbols, named
from liegroups import casimirs as cm
from liegroups.polynomial_text import polynomial_text
from tests.algebras import sp4


def _random_basis(alg, seed):
    rng = np.random.default_rng(seed)
    n = alg.dim
    P = np.linalg.qr(rng.standard_normal((n, n)))[0] * rng.uniform(0.5, 2.0, n)[None, :]
    return alg.change_basis(P, name=f"{alg.name} (random basis)")


def _fresh(alg):
    """The same structure constants as a new algebra object (no Casimirs kept from an earlier test)."""
    return LieAlgebra(alg.structure_constants.copy(), name=alg.name)


ALGEBRAS = {
    "so4": lambda: named.so4(),
    "so5": lambda: named.so(5),
    "sp4": sp4,
    "bianchi_VIII": lambda: named.bianchi("VIII"),
    "so4_random_basis": lambda: _random_basis(named.so4(), 5),
}


def _exact_bracket_zero(alg, F, syms):
    C = alg.structure_constants
    n = alg.dim
    grads = [sp.diff(F, s) for s in syms]
    return all(sp.expand(sum(sp.nsimplify(C[i, j, k]) * syms[k] * grads[j]
                             for j in range(n) for k in range(n) if C[i, j, k] != 0)) == 0 for i in range(n))


@pytest.mark.parametrize("key", list(ALGEBRAS))
def test_names_are_sympys_string_and_the_casimirs_solve_the_condition(key, monkeypatch):
    alg = _fresh(ALGEBRAS[key]())
    cas = alg.casimirs()
    assert len(cas) == alg.expected_casimir_count() >= 1
    # the problem's names, built before any sympy expression exists, with sympy's printer refusing to run
    def refuse(*args, **kwargs):
        raise AssertionError("sympy printed a Casimir name")
    with monkeypatch.context() as mp:
        mp.setattr(sp.Basic, "__str__", refuse)
        mp.setattr(sp.Expr, "__format__", refuse)
        names = {k for k in CoadjointProblem(alg, lambda z: z).invariants if k.startswith("casimir:")}
    assert all(c._expr is None for c in cas)          # no expression was built for the names
    assert names == {f"casimir:{sp.sstr(c.expr, order=None)}" for c in cas}
    syms = m_symbols(alg.dim)
    if cm._rational(alg.structure_constants) is not None:
        assert all(_exact_bracket_zero(alg, c.expr, syms) for c in cas)
    else:
        mpts = np.random.default_rng(2).standard_normal((20, alg.dim))
        C = alg.structure_constants
        for c in cas:
            r = np.einsum("ijk,bk,bj->bi", C, mpts, c.grad(mpts))
            assert np.max(np.abs(r)) < 1e-9 * np.max(np.abs(c.grad(mpts))) * np.max(np.abs(mpts)) * np.max(np.abs(C))


@pytest.mark.parametrize("key", ["so5", "sp4", "so4_random_basis"])
def test_the_thread_limit_changes_nothing(key, monkeypatch):
    """find_casimirs (one BLAS thread when threadpoolctl is there) against the search without the limit and
    against find_casimirs with threadpoolctl unimportable: the same Casimirs, term by term."""
    alg = ALGEBRAS[key]()
    limited = cm.find_casimirs(alg)
    bare = cm._find_casimirs(alg, 4)
    with monkeypatch.context() as mp:
        mp.setitem(sys.modules, "threadpoolctl", None)      # import raises ImportError
        assert isinstance(cm._one_blas_thread(), type(cm.contextlib.nullcontext()))
        without = cm.find_casimirs(alg)
    for other in (bare, without):
        assert [c.degree for c in other] == [c.degree for c in limited]
        for a, b in zip(limited, other):
            ea, eb = dict((e, v) for v, e in a.terms), dict((e, v) for v, e in b.terms)
            assert set(ea) == set(eb)
            assert all(abs(ea[e] - eb[e]) <= 1e-10 * max(1.0, abs(ea[e])) for e in ea)


def _sympy_str(terms, n):
    syms = m_symbols(n)
    return str(sp.Poly.from_dict(terms, *syms).as_expr())


@pytest.mark.parametrize("terms", [
    {(1, 0, 0): sp.Integer(1)},
    {(0, 0, 1): sp.Integer(-1), (2, 0, 0): sp.Integer(3)},
    {(0, 1, 1): sp.Integer(-2), (0, 0, 2): sp.Integer(1)},          # a negative leading term
    {(1, 0, 0): sp.Float(1.0), (0, 1, 0): sp.Float(-1.0)},          # Float 1.0 is written, not left out
    {(2, 0, 1): sp.Float(1e-5), (0, 3, 0): sp.Float(-123456.789e10), (1, 1, 1): sp.Float(0.1234567890123)},
    {(0, 0, 0): sp.Integer(-4), (1, 0, 0): sp.Integer(1)},          # a constant term
])
def test_polynomial_text_is_sympys_str(terms):
    names = [str(s) for s in m_symbols(3)]
    assert polynomial_text(terms, names) == _sympy_str(terms, 3)


def test_polynomial_text_orders_names_as_sympy_does():
    """m1 < m10 < m11 < m2 < ...: 12 variables, random integer and float quartics."""
    rng = np.random.default_rng(4)
    names = [str(s) for s in m_symbols(12)]
    for kind in (sp.Integer, sp.Float):
        terms = {}
        for _ in range(30):
            e = tuple(int(v) for v in np.bincount(rng.integers(0, 12, 4), minlength=12))
            v = int(rng.integers(-5, 6)) if kind is sp.Integer else round(float(rng.standard_normal()), 12)
            if v:
                terms[e] = kind(v)
        assert polynomial_text(terms, names) == _sympy_str(terms, 12)


def test_polynomial_text_declines_other_coefficients():
    """A Rational coefficient (or a Float of other precision) is left to sympy's printer: None here, and
    Casimir.text then prints the expression."""
    names = ["m1", "m2"]
    assert polynomial_text({(1, 0): sp.Rational(1, 2)}, names) is None
    assert polynomial_text({(1, 0): sp.Float(0.5, 30)}, names) is None
    c = cm.Casimir(None, m_symbols(2), 1, terms={(1, 0): sp.Rational(1, 2), (0, 1): sp.Integer(1)})
    assert c.text == str(c.expr) == "m1/2 + m2"
