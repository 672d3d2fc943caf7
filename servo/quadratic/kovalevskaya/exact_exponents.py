"""The Kovalevskaya exponents as exact algebraic numbers (rational Q, p <= 4).

They are the roots of one rational polynomial, prod_d det(rho Id - K(d))^mult(d) over the Darboux points,
computed in the quotient ring of v(eta) = eta (``exponent_polynomial``; Kovacs, Silver and Williams (1999)
for the determinant of a block matrix with commuting blocks), then matched to the numeric exponents of
each line. Roots of degree >= 3 are ``AlgebraicExponent`` (the irreducible polynomial and a 40-digit value).
"""
from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Union

import mpmath
import numpy as np
import sympy as sp
from numpy.typing import NDArray
from sympy.polys.domains import QQ
from sympy.polys.matrices import DomainMatrix

from ...errors import ExactCheckError
from ..display import format_vector
from ..invariant_lines import invariant_lines
from ..line_types import InvariantLine
from ..polynomials import (RationalTensor, multiplication_matrix, quadratic_fields, rational_tensor,
                           standard_monomials)
from ..protocol import QuadraticField
from .exponents import darboux_point, kovalevskaya_exponents

__all__ = ["AlgebraicExponent", "ExactDarbouxPoint", "Exponent", "to_mpmath", "exact_roots",
           "exponent_polynomial", "exact_kovalevskaya_exponents"]


@dataclass(frozen=True, eq=False)
class AlgebraicExponent:
    """An algebraic number of degree >= 3: the root of the irreducible ``poly`` (over Q) nearest to ``value``
    (an mpmath number correct to ~40 digits; the other roots of ``poly`` are farther than 1e-20). ``sympy()``
    gives the sympy CRootOf (slow for non-real roots: sympy isolates all complex roots)."""

    poly: sp.Poly
    value: mpmath.mpf | mpmath.mpc
    is_Rational = False

    def sympy(self) -> sp.Expr:
        roots = self.poly.all_roots()
        with mpmath.workdps(40):
            return min(roots, key=lambda r: abs(mpmath.mpmathify(complex(sp.N(r, 45))) - self.value))

    def __complex__(self) -> complex:
        return complex(self.value)

    def __repr__(self) -> str:
        return f"AlgebraicExponent(degree {self.poly.degree()}, {complex(self.value):.12g})"

    __str__ = __repr__


#: an exact exponent: a sympy number (Rational, surd) or an AlgebraicExponent
Exponent = Union[sp.Expr, AlgebraicExponent]


@dataclass
class ExactDarbouxPoint:
    """A Darboux point (numeric, for identification) with its exact Kovalevskaya exponents (sympy algebraic
    numbers, Rational or CRootOf, with multiplicity) and the multiplicity of its line."""

    darboux_point: NDArray[Any]
    exponents: tuple[Exponent, ...]
    multiplicity: int
    line_index: int

    def __repr__(self) -> str:
        return (f"ExactDarbouxPoint(d={format_vector(self.darboux_point)}, exponents=({', '.join(map(sp.sstr, self.exponents))}), "
                f"multiplicity={self.multiplicity})")


def to_mpmath(e: Exponent) -> mpmath.mpf | mpmath.mpc:
    """The mpmath value (at the working precision, 40 digits where used here) of an exact exponent (sympy
    number or AlgebraicExponent)."""
    if isinstance(e, AlgebraicExponent):
        return e.value
    if e.is_Rational:
        return mpmath.mpf(e.p) / e.q
    re, im = sp.N(e, 45).as_real_imag()
    return mpmath.mpc(mpmath.mpf(str(re)), mpmath.mpf(str(im)))


def exact_roots(f: sp.Poly) -> list[Exponent]:
    """The roots of the irreducible rational polynomial f: Rationals (degree 1), sympy surds (degree 2),
    AlgebraicExponent with 40-digit values from mpmath.polyroots (degree >= 3; root separation checked)."""
    if f.degree() <= 2:
        return list(sp.roots(f, multiple=True))
    with mpmath.workdps(60):
        coeffs = [mpmath.mpf(int(sp.Rational(a).p)) / int(sp.Rational(a).q) for a in f.all_coeffs()]
        rr, err = mpmath.polyroots(coeffs, maxsteps=500, extraprec=300, error=True)
        sep = min(abs(a - b) for a, b in itertools.combinations(rr, 2))
    if not err < 1e-40 or not sep > 1e-20:
        raise ExactCheckError(f"roots of the degree-{f.degree()} exponent factor not resolved (error {float(err):.2g}, "
                              f"separation {float(sep):.2g})")
    return [AlgebraicExponent(f, r) for r in rr]


def exponent_polynomial(R: RationalTensor, p: int) -> tuple[sp.Poly, int]:
    """prod_d det(rho Id - K(d))^mult(d) over the Darboux points (trivial point divided out), in Q[rho], and
    the total multiplicity of the Darboux points.

    eta = -d solves v(eta) = eta. In A = Q[eta] / <v(eta) - eta> (zero-dimensional, dim A = 2^p counted with
    multiplicity, eta = 0 simple since D(v - Id)(0) = -Id) the multiplication matrices M_k of eta_k commute;
    K(eta) = Id - 2 sum_k Q[:,:,k] eta_k becomes the rational matrix Kb = Id - 2 sum_k Q[:,:,k] (x) M_k, and the
    determinant of a block matrix with commuting blocks is the determinant of its formal determinant
    (Kovacs, Silver and Williams 1999), so det(rho - Kb) = prod_P det(rho Id - K(P))^mult(P) (Stickelberger).
    The point eta = 0 (K = Id) gives (rho - 1)^p.
    """
    xs = sp.symbols(f"eta1:{p + 1}")
    eqs = [v - x for v, x in zip(quadratic_fields(R, xs), xs)]
    G = sp.groebner(eqs, *xs, order="grevlex")
    if not G.is_zero_dimensional:
        raise ExactCheckError("v(eta) = eta has a positive-dimensional solution set (a curve of Darboux points); "
                              "exact exponents need finitely many")
    std = standard_monomials(G, xs)
    N = len(std)
    Ms = [np.array(multiplication_matrix(G, xs, std, x).tolist(), dtype=object) for x in xs]
    Kb = np.zeros((p * N, p * N), dtype=object)
    for k in range(p):
        Kb = Kb + np.kron(np.array([[-2 * R[i][j][k] for j in range(p)] for i in range(p)], dtype=object), Ms[k])
    Kb = Kb + np.eye(p * N, dtype=int).astype(object)
    rho = sp.Symbol("rho")
    dm = DomainMatrix([[QQ(int(sp.Rational(x).p), int(sp.Rational(x).q)) for x in row] for row in Kb], Kb.shape, QQ)
    chi = sp.Poly(dm.charpoly(), rho)
    quo, rem = sp.div(chi, sp.Poly((rho - 1) ** p, rho))
    if not rem.is_zero:
        raise ExactCheckError("the trivial Darboux point eta = 0 did not divide out: (rho - 1)^p does not divide "
                              "the exponent polynomial")
    return quo, N - 1


def exact_kovalevskaya_exponents(q: QuadraticField, lines: Iterable[InvariantLine] | None = None
                                 ) -> list[ExactDarbouxPoint]:
    """Exact Kovalevskaya exponents of a rational QuadraticSystem (p <= 4): a list of ExactDarbouxPoint, one per
    invariant line with c != 0, in the order of ``lines`` (``invariant_lines(q)`` if None).

    The exponents are the roots of the exact polynomial of ``exponent_polynomial`` (factored over Q, roots as
    sympy Rational / CRootOf), after removing one root -1 per Darboux point; each numeric exponent of a line is
    matched to the nearest exact root (40 digits), counted with the line's multiplicity, and the match must use
    up the roots exactly (else ExactCheckError): a check of the numeric exponents as well.
    """
    R = rational_tensor(q, snap=True)
    p = len(R)
    if p > 4:
        raise ExactCheckError(f"exact exponents support p <= 4, got p = {p} (the Groebner basis blows up)")
    if lines is None:
        lines = invariant_lines(q)
    live = [(i, L) for i, L in enumerate(lines) if not L.is_equilibrium_line]
    chi, npts = exponent_polynomial(R, p)
    if sum(L.multiplicity for _, L in live) != npts:
        raise ExactCheckError(f"the numeric lines carry {sum(L.multiplicity for _, L in live)} Darboux points "
                              f"(with multiplicity), the exact quotient {npts}")
    roots, counts = [], []
    for fac, e in sp.factor_list(chi.as_expr(), chi.gens[0])[1]:
        for r in exact_roots(sp.Poly(fac, chi.gens[0])):
            roots.append(r)
            counts.append(e)
    ones = [i for i, r in enumerate(roots) if r == -1]
    if not ones or counts[ones[0]] < npts:
        raise ExactCheckError(f"the factor (rho + 1) should appear at least {npts} times (once per Darboux point)")
    counts[ones[0]] -= npts
    with mpmath.workdps(40):
        vals = np.array([complex(to_mpmath(r)) for r in roots])
    out = []
    for i, L in live:
        rho = L.kovalevskaya_exponents if getattr(L, "kovalevskaya_exponents", None) is not None else \
            kovalevskaya_exponents(q.Q, L.direction[None], np.array([L.c]))[0]
        ex = []
        for r in rho:
            dist = np.abs(vals - r)
            order = np.argsort(dist)
            j = next((j for j in order if counts[j] >= L.multiplicity), None)
            tol = 1e-6 * (1 + abs(r)) if L.multiplicity == 1 else 1e-3 * (1 + abs(r))
            if j is None or dist[j] > tol:
                raise ExactCheckError(f"numeric exponent {r:.12g} of line {i} has no exact root within {tol:.1g} "
                                      f"(nearest {dist[order[0]]:.3g})")
            others = dist[[k for k in order if abs(vals[k] - vals[j]) > 0]]
            if others.size and others.min() < 10 * dist[j]:
                raise ExactCheckError(f"numeric exponent {r:.12g} of line {i} does not separate the exact roots "
                                      f"{sp.sstr(roots[j])} and a neighbour at distance {others.min():.3g}")
            counts[j] -= L.multiplicity
            ex.append(roots[j])
        out.append(ExactDarbouxPoint(darboux_point(L), tuple(ex), int(L.multiplicity), i))
    if any(c != 0 for c in counts):
        left = [(sp.sstr(r), c) for r, c in zip(roots, counts) if c]
        raise ExactCheckError(f"exact exponents left unmatched by the numeric lines: {left}")
    return out
