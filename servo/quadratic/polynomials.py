"""Exact polynomial algebra over Q shared by the exact paths of servo.quadratic (``exact`` and ``kovalevskaya``).

* ``rational_tensor``: Q as sympy Rationals (exact for short dyadic floats; ``snap=True`` also accepts the
  nearest fraction with denominator <= 10^6 when it rounds back to the float within 2 ulp);
* ``quadratic_fields``: v_i(x) = sum_{j,k} Q[i,j,k] x_j x_k as sympy polynomials;
* ``monomial_exponents``: the exponent vectors of the monomials of one degree;
* ``standard_monomials`` and ``multiplication_matrix``: the basis of Q[x] / I for a zero-dimensional ideal
  I given by a grevlex Groebner basis, and the matrix of multiplication by f in that basis (Cox, Little and
  O'Shea, "Using Algebraic Geometry", ch. 2);
* ``charpoly`` and ``hermite_counts``: characteristic polynomials and the Hermite form of multiplication
  matrices, exactly, in python-flint's fmpq_mat when it is installed (at p = 5, 6 the matrices are 32 x 32 and
  64 x 64: minutes in sympy's Matrix, a fraction of a second in FLINT), else in sympy;
* ``rur_numerators``: the rational univariate representation g(P) = G_g(u(P)) / G_1(u(P)) of the points, its
  polynomials from the traces Tr(M_g M_u^k), in ball arithmetic with python-flint (exactly without it);
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
           "multiplication_matrix", "charpoly", "hermite_counts", "rur_numerators", "check_degree"]

try:                                   # the optional extra `certify` (python-flint): fast exact linear algebra
    import flint as _flint
except ImportError:                    # pragma: no cover - exercised where python-flint is absent
    _flint = None

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
    var = list(gens).index(f) if f in gens else None
    for j, m in enumerate(std):
        if var is not None:            # f = x_var: x_var s_j is its own normal form when it is standard
            prod = tuple(e + (i == var) for i, e in enumerate(m))
            if prod in idx:
                M[idx[prod], j] = 1
                continue
        mono = sp.Mul(*[g ** e for g, e in zip(gens, m)])
        rem = G.reduce(sp.expand(f * mono))[1]
        for mon, coeff in sp.Poly(rem, *gens).terms():
            M[idx[mon], j] = coeff
    return M


def _qq(M: sp.Matrix) -> Any:
    """The rational sympy Matrix M as python-flint's fmpq_mat, or M itself without python-flint."""
    if _flint is None:
        return M
    vals = [sp.Rational(a) for a in M]
    return _flint.fmpq_mat(M.rows, M.cols, [_flint.fmpq(int(a.p), int(a.q)) for a in vals])


def _rational(x: Any) -> sp.Rational:
    """A python-flint fmpq (or a sympy number) as a sympy Rational."""
    if _flint is not None and isinstance(x, (_flint.fmpq, _flint.fmpz)):
        x = _flint.fmpq(x)
        return sp.Rational(int(x.p), int(x.q))
    return sp.Rational(x)


def charpoly(M: sp.Matrix, lam: sp.Symbol) -> sp.Poly:
    """The characteristic polynomial det(lam I - M) of the rational matrix M, exactly (python-flint when
    installed)."""
    A = _qq(M)
    if _flint is None:
        return sp.Poly(A.charpoly(lam).as_expr(), lam)
    return sp.Poly([_rational(c) for c in reversed(A.charpoly().coeffs())], lam)


def rur_numerators(Mgens: Sequence[sp.Matrix], Mu: sp.Matrix, s: sp.Poly, prec: int) -> list[list[Any]]:
    """The rational univariate representation of the points P of Q[x] / I (Rouillier 1999, "Solving
    zero-dimensional systems through the rational univariate representation", AAECC 9): with u a separating
    linear form, s(T) = sum_i a_i T^i = prod_P (T - u(P)) over the distinct points (the square-free part of the
    characteristic polynomial of M_u, degree d) and the traces t_g[j] = Tr(M_g M_u^j) = sum_P mult(P) g(P) u(P)^j
    (Stickelberger; Cox, Little and O'Shea, "Using Algebraic Geometry", ch. 2, section 4), the polynomials

        G_g(T) = sum_{i < d} T^i sum_{j < d - i} a_{i + j + 1} t_g[j] = sum_P mult(P) g(P) s(T) / (T - u(P))

    take the values G_g(u(P)) = mult(P) g(P) s'(u(P)), so g(P) = G_g(u(P)) / G_1(u(P)) at every point, however
    close two values u(P) are (a Vandermonde solve from the same traces loses the digits of every gap at once).
    Returns [G_1, G_g for each M_g of ``Mgens``] as coefficient lists, lowest degree first: arb balls at ``prec``
    bits with python-flint (the powers of M_u in arb_mat: the exact powers of a 64 x 64 M_u at p = 6 have entries
    of thousands of digits and take a minute), exact sympy Rationals without it."""
    N, d = Mu.rows, s.degree()
    a = [sp.Rational(x) for x in reversed(s.all_coeffs())]

    def numerators(traces, zero, num):
        return [[sum((num(a[i + j + 1]) * t[j] for j in range(d - i)), zero) for i in range(d)] for t in traces]
    if _flint is None:
        powers = [sp.eye(N)]
        for _ in range(d - 1):
            powers.append(Mu * powers[-1])
        traces = [[sp.Rational(P.trace()) for P in powers]]
        traces += [[sp.Rational((Mg * P).trace()) for P in powers] for Mg in Mgens]
        return numerators(traces, sp.Integer(0), lambda x: x)
    old, _flint.ctx.prec = _flint.ctx.prec, int(prec)
    try:
        def arb(x):
            return _flint.arb(_flint.fmpq(int(x.p), int(x.q)))

        def arb_mat(M):
            return _flint.arb_mat(M.rows, M.cols, [arb(sp.Rational(x)) for x in M])
        U = arb_mat(Mu)
        P = _flint.arb_mat(N, N, [int(i == j) for i in range(N) for j in range(N)])
        vecs = []
        for k in range(d):
            vecs.append(P.entries())
            if k < d - 1:
                P = U * P
        # Tr(G U^k) = sum_ij G[j, i] U^k[i, j] = vec(G^T) . vec(U^k): one product for all k and g
        B = _flint.arb_mat(N * N, d, [vecs[k][r] for r in range(N * N) for k in range(d)])
        A = _flint.arb_mat(len(Mgens) + 1, N * N, [a for Mg in [sp.eye(N), *Mgens] for a in arb_mat(Mg.T).entries()])
        T = A * B
        return numerators([[T[g, k] for k in range(d)] for g in range(len(Mgens) + 1)], _flint.arb(0), arb)
    finally:
        _flint.ctx.prec = old


def hermite_counts(Mgens: Sequence[sp.Matrix], std: Sequence[tuple[int, ...]]) -> tuple[int, int]:
    """(rank, signature) of the Hermite quadratic form H[a, b] = Tr(M_{s_a s_b}) on Q[x] / I (s_a the standard
    monomials, M_{x^e} = prod M_{x_i}^{e_i} from the multiplication matrices ``Mgens`` of the generators):
    the rank is the number of distinct points of V(I) over C and the signature the number of distinct real
    ones (Pedersen, Roy and Szpirglas 1993; Cox, Little and O'Shea, "Using Algebraic Geometry", ch. 2,
    section 5, Theorem 5.2). Exact over QQ: the characteristic polynomial of the symmetric H has only real
    roots, so Descartes' rule of signs counts its positive and negative roots exactly."""
    n = len(std)
    gens = [_qq(Mi) for Mi in Mgens]
    # M_{s_a} from M_{s_b} with s_a = x_i s_b: the standard monomials are an order ideal, so s_b is one too
    Ms = {tuple(0 for _ in gens): _qq(sp.eye(n))}
    for e in sorted(std, key=sum):
        if e in Ms:
            continue
        i = next(i for i, k in enumerate(e) if k > 0)
        Ms[e] = gens[i] * Ms[tuple(k - (j == i) for j, k in enumerate(e))]
    Ms = [Ms[e] for e in std]
    if _flint is None:
        H = sp.zeros(n, n)
        for a in range(n):
            for b in range(a, n):
                H[a, b] = H[b, a] = sum(Ms[a][i, j] * Ms[b][j, i] for i in range(n) for j in range(n))
    else:     # H = A B with A[a, (i, j)] = Ms[a][i, j] and B[(i, j), b] = Ms[b][j, i]: one product in FLINT
        A = _flint.fmpq_mat(n, n * n, [a for M in Ms for a in M.entries()])
        cols = [M.transpose().entries() for M in Ms]
        B = _flint.fmpq_mat(n * n, n, [cols[b][r] for r in range(n * n) for b in range(n)])
        P = A * B
        H = sp.Matrix(n, n, [_rational(a) for a in P.entries()])
    co = charpoly(H, sp.Symbol("lam")).all_coeffs()

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
