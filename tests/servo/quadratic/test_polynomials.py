"""The shared exact algebra of servo.quadratic (polynomials), the number formatting (display) and the
QuadraticField protocol.

Expected values are worked out by hand here: the quotient ring Q[x]/<x^2 - 2> has basis (1, x) and
multiplication by x maps 1 -> x, x -> 2 (eigenvalues +-sqrt 2, the roots); the monomials of degree m in
p variables number C(p + m - 1, m); 1/12 is the fraction the float 1/12 came from.
"""
from math import comb

import numpy as np
import pytest
import sympy as sp

from servo.errors import ExactCheckError, QuadraticSystemError
from servo.quadratic import QuadraticSystem
from servo.quadratic.display import format_number, format_vector
from servo.quadratic import polynomials
from servo.quadratic.polynomials import (charpoly, check_degree, hermite_counts, monomial_exponents,
                                         multiplication_matrix, rur_numerators, quadratic_fields, rational_tensor,
                                         standard_monomials)
from servo.quadratic.protocol import QuadraticField


def test_rational_tensor_is_exact_for_dyadic_entries_and_snaps_only_when_asked():
    Q = np.zeros((2, 2, 2))
    Q[0, 0, 0] = 1 / 12                       # not dyadic: needs snap
    Q[1, 1, 1] = 2.0 ** -40                   # dyadic but tiny: exact, must not be snapped to 0
    Q[0, 1, 1] = -1.5
    with pytest.raises(ExactCheckError, match=r"Q\[0,0,0\]"):
        rational_tensor(Q)
    R = rational_tensor(Q, snap=True)
    assert R[0][0][0] == sp.Rational(1, 12)
    assert R[1][1][1] == sp.Rational(1, 2 ** 40)
    assert R[0][1][1] == sp.Rational(-3, 2)
    with pytest.raises(ExactCheckError, match=r"Q\[0,0,0\] = 3.14159.* not a fraction"):
        rational_tensor(np.full((1, 1, 1), np.pi), snap=True)


def test_quadratic_fields_match_the_numeric_field():
    q = QuadraticSystem(np.arange(8, dtype=float).reshape(2, 2, 2) / 4)
    x, y = sp.symbols("x y")
    v = quadratic_fields(rational_tensor(q), [x, y])
    pt = np.array([0.75, -1.25])
    assert np.allclose([float(e.subs({x: pt[0], y: pt[1]})) for e in v], q.v(pt), rtol=0, atol=1e-15)


@pytest.mark.parametrize("p, m", [(1, 3), (2, 2), (3, 4), (4, 1)])
def test_monomial_exponents_are_all_monomials_of_the_degree(p, m):
    E = monomial_exponents(p, m)
    assert len(E) == len(set(E)) == comb(p + m - 1, m)
    assert all(len(a) == p and sum(a) == m and min(a) >= 0 for a in E)
    assert all(type(e) is int for a in E for e in a)


def test_multiplication_matrix_of_a_quotient_ring():
    x = sp.Symbol("x")
    G = sp.groebner([x ** 2 - 2], x, order="grevlex")
    std = standard_monomials(G, [x])
    assert std == [(0,), (1,)]
    M = multiplication_matrix(G, [x], std, x)
    assert M == sp.Matrix([[0, 2], [1, 0]])
    assert sorted(M.eigenvals(), key=float) == sorted([sp.sqrt(2), -sp.sqrt(2)], key=float)


@pytest.mark.parametrize("flint", [True, False])
def test_traces_charpoly_and_hermite_counts_of_a_quotient_ring(flint, monkeypatch):
    """I = <x^2 - 2, y^2 - x y> (grevlex): its points are (a, 0) and (a, a) for a = +-sqrt 2 (y (y - x) = 0), four
    distinct real points. With u = x + 3 y: u(P) = a, a, 4 a, i.e. +-sqrt 2 and +-4 sqrt 2, so the characteristic
    polynomial of M_u is (l^2 - 2)(l^2 - 32); the traces Tr(M_x M_u^k) = sum_P x(P) u(P)^k are 0 for k even
    (the points come in pairs P, -P), and for k = 1: 2 + 2 + 2 * 4 + ... = sum a * u(P) = 2 (2 + 8) = 20;
    Tr(M_y M_u) = sum y(P) u(P) = 2 * 8 = 16 (only (a, a) has y != 0). The Hermite form has rank 4 and
    signature 4 (four distinct real points). The same with python-flint and with sympy alone."""
    if not flint:
        monkeypatch.setattr(polynomials, "_flint", None)
    elif polynomials._flint is None:
        pytest.skip("python-flint is not installed")
    x, y = sp.symbols("x y")
    G = sp.groebner([x ** 2 - 2, y ** 2 - x * y], x, y, order="grevlex")
    std = standard_monomials(G, [x, y])
    assert len(std) == 4
    Mx, My = (multiplication_matrix(G, [x, y], std, g) for g in (x, y))
    Mu = Mx + 3 * My
    assert multiplication_matrix(G, [x, y], std, x + 3 * y) == Mu
    lam = sp.Symbol("lam")
    assert charpoly(Mu, lam) == sp.Poly((lam ** 2 - 2) * (lam ** 2 - 32), lam)
    # the RUR: s = (l^2 - 2)(l^2 - 32) = l^4 - 34 l^2 + 64, so G_g(T) = sum_P g(P) s(T) / (T - u(P)), and at
    # u(P) it is g(P) s'(u(P)): evaluated at the four exact values u(P) the quotients G_g / G_1 must be the points
    # (a, 0) at u = a and (a, a) at u = 4 a
    G1, Gx, Gy = rur_numerators([Mx, My], Mu, sp.Poly((lam ** 2 - 2) * (lam ** 2 - 32), lam), prec=200)
    for co in (G1, Gx, Gy):
        assert len(co) == 4
    # G_1 = s'(T) (every point simple): 4 T^3 - 68 T
    assert [sp.Rational(str(c.mid().str(60, radius=False))) if flint else c for c in G1] == \
        pytest.approx([0, -68, 0, 4], abs=1e-40)
    r2 = sp.sqrt(2)
    for u, (x0, y0) in [(r2, (r2, 0)), (-r2, (-r2, 0)), (4 * r2, (r2, r2)), (-4 * r2, (-r2, -r2))]:
        def at(co):
            vals = [sp.Float(c.mid().str(60, radius=False), 60) if flint else c for c in co]
            return sp.N(sum(c * u ** i for i, c in enumerate(vals)), 50)
        g1 = at(G1)
        assert abs(g1 - sp.diff((lam ** 2 - 2) * (lam ** 2 - 32), lam).subs(lam, u)) < 1e-40
        assert abs(at(Gx) / g1 - x0) < 1e-40 and abs(at(Gy) / g1 - y0) < 1e-40
    assert hermite_counts([Mx, My], std) == (4, 4)
    # a double point: I = <x^2, y - 1> has one point (0, 1) of multiplicity 2, and no real-distinct others
    G2 = sp.groebner([x ** 2, y - 1], x, y, order="grevlex")
    std2 = standard_monomials(G2, [x, y])
    M2 = [multiplication_matrix(G2, [x, y], std2, g) for g in (x, y)]
    assert hermite_counts(M2, std2) == (1, 1)
    assert charpoly(M2[1], lam) == sp.Poly((lam - 1) ** 2, lam)


@pytest.mark.parametrize("bad", [0, -2, 1.0, True, "3"])
def test_check_degree_names_the_argument(bad):
    with pytest.raises(QuadraticSystemError, match="degree must be an integer >= 1"):
        check_degree(bad, "degree")
    assert check_degree(np.int64(3)) == 3


def test_number_formatting():
    assert format_number(-0.0) == "0"
    assert format_number(complex(-0.0, -0.0)) == "0"
    assert format_number(1 - 2j, 3) == "1-2i"
    assert format_number(2 + 1e-15j) == "2"
    assert format_vector([1.0, -0.0, 0.5 + 0.25j]) == "(1, 0, 0.5+0.25i)"


def test_a_quadratic_system_is_a_quadratic_field():
    assert isinstance(QuadraticSystem(np.ones((2, 2, 2))), QuadraticField)
    assert not isinstance(np.ones((2, 2, 2)), QuadraticField)


def test_blowup_time_of_a_complex_line_is_a_named_error():
    # v = (-x1 x2, x1^2): v(xi) = c xi has the complex solutions xi = (+-i, -1)/sqrt(2), c = 1/sqrt(2)
    # (worked by hand: -xi1 xi2 = c xi1 and xi1^2 = c xi2 give xi2 = -c, xi1^2 = -c^2)
    Q = np.zeros((2, 2, 2))
    Q[0, 0, 1] = Q[0, 1, 0] = -0.5
    Q[1, 0, 0] = 1.0
    complex_lines = [ln for ln in QuadraticSystem(Q).invariant_lines() if not ln.is_real]
    assert len(complex_lines) == 2 and abs(complex_lines[0].c - 2 ** -0.5) < 1e-12
    with pytest.raises(QuadraticSystemError, match="real lines only"):
        complex_lines[0].blowup_time(1.0)
