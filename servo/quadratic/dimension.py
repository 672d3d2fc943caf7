"""The dimension of the solution set of v(xi) = c xi, decided in exact arithmetic: is it finite or a family?

The solutions [xi : c] form the projective variety V(I) of the homogeneous ideal I = < v_i(xi) - c xi_i > in
Q[xi_1 .. xi_p, c] (each generator a quadric in (xi, c)). Its Krull dimension is that of the ideal of leading
monomials in(I) of a Groebner basis for a graded order (Cox, Little & O'Shea, "Ideals, Varieties, and
Algorithms", ch. 9 sec. 3: I and in(I) have the same Hilbert function), and the dimension of a monomial ideal
is the largest size of a set S of variables such that no generator is a monomial in the variables of S alone
(its variety is the union of the coordinate subspaces {x_j = 0, j not in S}; ibid., ch. 9 sec. 1). The affine
cone of the trivial solution [0 : ... : 0 : 1] has dimension 1, so the solutions form a positive-dimensional
set (a family of invariant lines) iff dim I >= 2, and a finite set iff dim I = 1. Used by ``invariant_lines``
above p = 3 where the numerical local dimension test reports a family that no witness proves (an irrational
or curved family); the Groebner basis is over Q (sympy), fast for the degenerate small-integer systems that
have families (a second or two at p = 6), slow for large generic ones: the caller bounds p and the size of
the coefficients.
"""
from __future__ import annotations

import itertools

import sympy as sp
from numpy.typing import ArrayLike

from .polynomials import quadratic_fields, rational_tensor
from .protocol import QuadraticField

__all__ = ["solution_set_dimension", "coefficient_bits"]


def coefficient_bits(q: QuadraticField | ArrayLike) -> int:
    """Bits of the largest integer in Q made integral (each entry a dyadic rational, scaled by the common
    denominator): a bound on the size of the Groebner basis's coefficients to come."""
    R = rational_tensor(q, dyadic=True)
    den = max(int(r.q) for plane in R for row in plane for r in row)
    return max((abs(int(r * den)).bit_length() for plane in R for row in plane for r in row), default=0)


def solution_set_dimension(q: QuadraticField | ArrayLike) -> int:
    """The projective dimension of the solution set {[xi : c] : v(xi) = c xi} in P^p, exactly: 0 for finitely
    many invariant lines, >= 1 for a family (module docstring). Q must be real with dyadic (float) entries,
    taken exactly (ExactCheckError otherwise, from ``rational_tensor``)."""
    R = rational_tensor(q, dyadic=True)
    p = len(R)
    xs = sp.symbols(f"xi1:{p + 1}")
    c = sp.Symbol("c")
    gens = list(xs) + [c]
    v = quadratic_fields(R, xs)
    G = sp.groebner([sp.expand(v[i] - c * xs[i]) for i in range(p)], *gens, order="grevlex")
    lead = [sp.Poly(g, *gens).monoms(order="grevlex")[0] for g in G.exprs]
    n = p + 1
    for size in range(n, 0, -1):
        for S in itertools.combinations(range(n), size):
            if not any(all(m[j] == 0 for j in range(n) if j not in S) for m in lead):
                return size - 1
    return -1
