"""Exact polynomial algebra over Q shared by the exact paths of servo.quadratic (``exact`` and ``kovalevskaya``).

* ``rational_tensor``: Q as sympy Rationals (exact for short dyadic floats; ``snap=True`` also accepts the
  nearest fraction with denominator <= 10^6 when it rounds back to the float within 2 ulp);
* ``quadratic_fields``: v_i(x) = sum_{j,k} Q[i,j,k] x_j x_k as sympy polynomials;
* ``monomial_exponents``: the exponent vectors of the monomials of one degree;
* ``standard_monomials`` and ``multiplication_matrix``: the basis of Q[x] / I for a zero-dimensional ideal
  I given by a grevlex Groebner basis, and the matrix of multiplication by f in that basis (Cox, Little and
  O'Shea, "Using Algebraic Geometry", ch. 2);
* ``check_degree``: the degree m >= 1 of a homogeneous polynomial (an int, not a bool).
"""
from __future__ import annotations

import itertools
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import sympy as sp
from sympy.polys.orderings import grevlex
from numpy.typing import ArrayLike

from ..errors import ExactCheckError, QuadraticSystemError
from .protocol import QuadraticField

__all__ = ["rational_tensor", "quadratic_fields", "monomial_exponents", "standard_monomials",
           "multiplication_matrix", "hermite_counts", "check_degree"]

#: largest denominator of the fractions ``rational_tensor(q, snap=True)`` snaps a float entry to
SNAP_DENOMINATOR = 10 ** 6

RationalTensor = list[list[list[sp.Rational]]]


def rational_tensor(q: QuadraticField | ArrayLike, snap: bool = False, dyadic: bool = False) -> RationalTensor:
    """Q as a nested list of sympy Rationals, R[i][j][k] = Q[i, j, k] exactly.

    Exact for floats that are short dyadic numbers (e.g. halves of ints, powers of 2 down to 2^-64).
    ``dyadic=True``: every float is taken as the dyadic rational it is, whatever its size (the floats are
    the system, as inside the solver; 0.1 then means 3602879701896397 / 2^55).
    ``snap=True``: an entry that is not such a number is replaced by the fraction with denominator <= 10^6
    nearest to it (``Fraction.limit_denominator``), accepted only if it rounds back to the float within
    2 ulp (e.g. 1/12 from an inertia (1, 2, 3)). ExactCheckError names the first entry that fails.
    """
    Q = q.Q if hasattr(q, "Q") else np.asarray(q)
    if np.iscomplexobj(Q):
        raise ExactCheckError("exact check needs a real rational Q; got complex entries")
    p = Q.shape[0]
    R = [[[sp.Rational(float(Q[i, j, k])) for k in range(p)] for j in range(p)] for i in range(p)]
    for i, j, k in itertools.product(range(p), repeat=3):
        den = R[i][j][k].q
        short_dyadic = den & (den - 1) == 0 and den <= 2 ** 64 and abs(R[i][j][k].p).bit_length() <= 30
        if den <= 2 ** 20 or short_dyadic or dyadic:
            continue
        if not snap:
            raise ExactCheckError(f"Q[{i},{j},{k}] = {Q[i, j, k]!r} is not a short rational "
                                  f"(denominator {den}); pass integers, simple fractions or "
                                  f"powers of 2 down to 2^-64")
        x = float(Q[i, j, k])
        f = Fraction(x).limit_denominator(SNAP_DENOMINATOR)
        if abs(float(f) - x) > 2 * np.spacing(abs(x)):
            raise ExactCheckError(f"Q[{i},{j},{k}] = {x!r} is not a fraction with denominator <= 10^6 "
                                  f"(nearest {f}, off by {abs(float(f) - x):.3g}); the exact path needs rational Q")
        R[i][j][k] = sp.Rational(f.numerator, f.denominator)
    return R


def quadratic_fields(R: RationalTensor, xs: Sequence[sp.Expr]) -> list[sp.Expr]:
    """v_i(x) = sum_{j,k} R[i][j][k] x_j x_k (expanded sympy expressions), i = 1..p, for the symbols xs."""
    p = len(xs)
    return [sp.expand(sum(R[i][j][k] * xs[j] * xs[k] for j in range(p) for k in range(p)))
            for i in range(p)]


def monomial_exponents(p: int, m: int) -> list[tuple[int, ...]]:
    """The exponent vectors a in N^p with |a| = m, one per monomial x^a of degree m, in the order of
    ``itertools.combinations_with_replacement`` (C(p + m - 1, m) of them)."""
    return [tuple(int(e) for e in np.bincount(np.array(c, dtype=int), minlength=p))
            for c in itertools.combinations_with_replacement(range(p), m)]


def standard_monomials(G: sp.GroebnerBasis, gens: Sequence[sp.Symbol]) -> list[tuple[int, ...]]:
    """Exponents of the standard monomials of the zero-dimensional ideal with grevlex Groebner basis G: the
    monomials divisible by no leading monomial of G, a basis of Q[x] / I (their number is dim Q[x] / I, the
    number of solutions counted with multiplicity). Sorted."""
    # the order as the MonomialOrder object, not the string: with python-flint installed sympy keeps univariate
    # polynomials in flint, whose terms() reads order.alias (a string has none)
    lms = [sp.Poly(g, *gens).monoms(order=grevlex)[0] for g in G.exprs]
    std, frontier = [], [tuple([0] * len(gens))]
    seen = set(frontier)
    while frontier:
        m = frontier.pop()
        if any(all(a >= b for a, b in zip(m, lm)) for lm in lms):
            continue
        std.append(m)
        for i in range(len(gens)):
            n = tuple(a + (j == i) for j, a in enumerate(m))
            if n not in seen:
                seen.add(n)
                frontier.append(n)
    return sorted(std)


def multiplication_matrix(G: sp.GroebnerBasis, gens: Sequence[sp.Symbol], std: Sequence[tuple[int, ...]],
                          f: sp.Expr) -> sp.Matrix:
    """Matrix of multiplication by f on Q[x] / I in the basis of standard monomials ``std``: column j is the
    normal form of f x^(std_j) modulo G. Its eigenvalues are the values f(P) at the solutions P, with
    multiplicity (Stickelberger; Cox, Little and O'Shea, ch. 2, section 4)."""
    idx = {m: i for i, m in enumerate(std)}
    M = sp.zeros(len(std), len(std))
    for j, m in enumerate(std):
        mono = sp.Mul(*[g ** e for g, e in zip(gens, m)])
        rem = G.reduce(sp.expand(f * mono))[1]
        for mon, coeff in sp.Poly(rem, *gens).terms():
            M[idx[mon], j] = coeff
    return M


def hermite_counts(Mgens: Sequence[sp.Matrix], std: Sequence[tuple[int, ...]]) -> tuple[int, int]:
    """(rank, signature) of the Hermite quadratic form H[a, b] = Tr(M_{s_a s_b}) on Q[x] / I (s_a the standard
    monomials, M_{x^e} = prod M_{x_i}^{e_i} from the multiplication matrices ``Mgens`` of the generators):
    the rank is the number of distinct points of V(I) over C and the signature the number of distinct real
    ones (Pedersen, Roy and Szpirglas 1993; Cox, Little and O'Shea, "Using Algebraic Geometry", ch. 2,
    section 5, Theorem 5.2). Exact over QQ: the characteristic polynomial of the symmetric H has only real
    roots, so Descartes' rule of signs counts its positive and negative roots exactly."""
    n = len(std)
    Ms = []
    for e in std:
        M = sp.eye(n)
        for Mi, k in zip(Mgens, e):
            for _ in range(k):
                M = Mi * M
        Ms.append(M)
    H = sp.zeros(n, n)
    for a in range(n):
        for b in range(a, n):
            H[a, b] = H[b, a] = sum(Ms[a][i, j] * Ms[b][j, i] for i in range(n) for j in range(n))
    lam = sp.Symbol("lam")
    co = sp.Poly(H.charpoly(lam).as_expr(), lam).all_coeffs()

    def changes(cs):
        signs = [sp.sign(c) for c in cs if c != 0]
        return sum(1 for s0, s1 in zip(signs, signs[1:]) if s0 != s1)
    zero = len(co) - 1 - max(i for i, c in enumerate(co) if c != 0)
    pos = changes(co)
    neg = changes([c * (-1) ** (len(co) - 1 - i) for i, c in enumerate(co)])
    return n - zero, pos - neg


def check_degree(degree: Any, name: str = "max_degree") -> int:
    """``degree`` as an int >= 1 (the degree of a homogeneous polynomial), or QuadraticSystemError naming
    the argument ``name``."""
    if isinstance(degree, bool) or not isinstance(degree, (int, np.integer)) or degree < 1:
        raise QuadraticSystemError(f"{name} must be an integer >= 1, got {degree!r}")
    return int(degree)
