"""The multiplicity of a root with rational (Gaussian rational) coordinates, proved in exact integer arithmetic:
the dimension of the local ring O_P / (f) of f(z) = (v'(y) - c' w y) at P = (y, c') in a chart of P^p.

Local coordinates u at P (the chart coordinate z_m = P_m fixed, u the other p coordinates minus P's): every
f_i is exactly L_i(u) + q_i(u) (f is quadratic: its linear part Df(P) u and its quadratic part, f(P) = 0).
With m the maximal ideal of O_P and I = (f_1 .. f_p),

    H(k) = dim O / (I + m^(k+1)) = #(monomials u^b, |b| <= k) - rank M_k,

M_k the Macaulay matrix whose rows are u^a f_i truncated at degree k (|a| <= k - 1; higher multiples lie in
m^(k+1)), columns the monomials (Dayton and Zeng, "Computing the multiplicity structure in solving polynomial
systems", ISSAC 2005, for the dual-space form). If H(k) = H(k + 1), then m^(k+1) is in I + m^(k+2), so by
Nakayama's lemma m^(k+1) is in I, and mu(P) = dim O / I = H(k), exactly (the root is isolated). The entries
are dyadic rationals (Q and P are doubles), scaled to integers; ranks are exact (python-flint's fmpz_mat). A
point with non-real coordinates is handled over the reals: the complex rank of A + iB is half the rank of
[[A, -B], [B, A]].

For p quadrics in P^p the isolated points' multiplicities (intersection multiplicities, Fulton, "Intersection
Theory", 1984, Proposition 7.1 and Example 7.1.10: the length of the local ring of a complete intersection)
and the degrees of any other distinguished varieties add up to at most 2^p (ibid., section 12.3); so proved
multiplicities and proved simple roots that add up to 2^p are the whole solution set.
"""
from __future__ import annotations

import itertools
from fractions import Fraction
from math import lcm
from typing import Any

import numpy as np
import sympy as sp
from numpy.typing import NDArray

from .krawczyk import require_flint

__all__ = ["local_multiplicity", "field_multiplicity", "not_isolated", "quadratic_roots", "MAX_COLUMNS"]

#: largest Macaulay matrix (columns: monomials of degree <= k in p variables) tried before giving up
MAX_COLUMNS = 3000


def _monomials(n: int, k: int) -> list[tuple[int, ...]]:
    """Exponent vectors of the monomials of degree <= k in n variables, graded."""
    out = []
    for d in range(k + 1):
        for c in itertools.combinations_with_replacement(range(n), d):
            e = [0] * n
            for i in c:
                e[i] += 1
            out.append(tuple(e))
    return out


def _field(g0: Fraction, g1: Fraction):
    """Multiplication in Q(alpha), alpha^2 = -g1 alpha - g0, elements (a, b) = a + b alpha."""
    def mul(x, y):
        return (x[0] * y[0] - g0 * x[1] * y[1], x[0] * y[1] + x[1] * y[0] - g1 * x[1] * y[1])
    return mul


def _local_polys(Q: NDArray[Any], w: NDArray[Any], P: list, g: tuple[Fraction, Fraction]) -> tuple[list[dict], int]:
    """f_i(P + u) as {exponent: (a, b)} (a + b alpha in Q(alpha), alpha^2 = -g[1] alpha - g[0]) in the local
    coordinates u (the chart coordinate, the first non-zero one of P, left out); checks f(P) = 0 exactly.
    P: p + 1 field elements (a, b). Returns (polys, number of variables)."""
    p = Q.shape[0]
    N = p + 1
    mul = _field(*g)
    m = next(j for j in range(N) if P[j] != (0, 0))
    var = [j for j in range(N) if j != m]                       # u_a = z_var[a] - P_var[a]
    pos = {j: a for a, j in enumerate(var)}

    def cadd(a, b):
        return (a[0] + b[0], a[1] + b[1])
    zero = (Fraction(0), Fraction(0))
    polys = []
    n = len(var)
    for i in range(p):
        # f_i(z) = sum_jk Q_ijk z_j z_k - w_i z_c z_i: a quadratic form z^T B z with B symmetric
        B: dict[tuple[int, int], tuple[Fraction, Fraction]] = {}
        for j, k in zip(*np.nonzero(Q[i])):
            q = complex(Q[i, j, k])
            B[(int(j), int(k))] = cadd(B.get((int(j), int(k)), zero), (Fraction(q.real), Fraction(q.imag)))
        wc = (Fraction(-float(w[i])) / 2, Fraction(0))
        B[(i, p)] = cadd(B.get((i, p), zero), wc)
        B[(p, i)] = cadd(B.get((p, i), zero), wc)
        poly: dict[tuple[int, ...], tuple[Fraction, Fraction]] = {}

        def add(e, c):
            poly[e] = cadd(poly.get(e, zero), c)
        const = zero
        for (j, k), b in B.items():
            # b z_j z_k with z_j = P_j + u_j (u_m = 0)
            const = cadd(const, mul(b, mul(P[j], P[k])))
            if k in pos:
                e = [0] * n
                e[pos[k]] += 1
                add(tuple(e), mul(b, P[j]))
            if j in pos:
                e = [0] * n
                e[pos[j]] += 1
                add(tuple(e), mul(b, P[k]))
            if j in pos and k in pos:
                e = [0] * n
                e[pos[j]] += 1
                e[pos[k]] += 1
                add(tuple(e), b)
        if const != zero:
            raise ValueError("P is not an exact root of the system")
        polys.append({e: c for e, c in poly.items() if c != zero})
    return polys, n


def _integer_rows(polys: list[dict], g: tuple[Fraction, Fraction]) -> list[list[tuple[tuple[int, ...], int, int]]]:
    """Each f_i as the integer rows of the rank computation: over Q, [(exponent, integer coefficient, block)];
    over Q(alpha) (some coefficient has an alpha part) each f_i = A + alpha B gives the two rows of its
    multiplication matrix in the basis (1, alpha), [A, -g0 B] and [B, A - g1 B] (block 0: the columns of 1,
    block 1: those of alpha). Every row is scaled by the lcm of its denominators once here (a row's multiples
    u^a f are shifts of it, so the scale is the same for all of them and the rank does not change)."""
    complex_ = any(ci != 0 for f in polys for (_, ci) in f.values())
    g0, g1 = g
    out = []
    for f in polys:
        if complex_:
            forms = [[(e, cr, 0) for e, (cr, ci) in f.items()] + [(e, -g0 * ci, 1) for e, (cr, ci) in f.items()],
                     [(e, ci, 0) for e, (cr, ci) in f.items()] + [(e, cr - g1 * ci, 1) for e, (cr, ci) in f.items()]]
        else:
            forms = [[(e, cr, 0) for e, (cr, ci) in f.items()]]
        for form in forms:
            form = [t for t in form if t[1] != 0]
            if not form:
                continue
            den = lcm(*(c.denominator for _, c, _ in form))
            out.append([(e, int(c * den), blk) for e, c, blk in form])
    return out


def _hilbert(rows: list[list[tuple[tuple[int, ...], int, int]]], n: int, k: int, complex_: bool) -> int | None:
    """H(k) = dim O / (I + m^(k+1)) (module docstring), or None if the Macaulay matrix is too large. ``rows``:
    the integer rows of ``_integer_rows``; over Q(alpha) the rank over Q is twice the rank over Q(alpha) (the
    same linear map, over Q)."""
    fl = require_flint("exact ranks")
    cols = _monomials(n, k)
    if len(cols) > MAX_COLUMNS:
        return None
    ncol = len(cols)
    index = {e: a for a, e in enumerate(cols)}
    mat = []
    for a in _monomials(n, k - 1):
        for form in rows:
            r = [0] * (2 * ncol if complex_ else ncol)
            hit = False
            for e, c, blk in form:
                t = tuple(x + y for x, y in zip(a, e))
                j = index.get(t)
                if j is not None:                        # |t| <= k: terms above degree k lie in m^(k+1)
                    r[j + blk * ncol] += c
                    hit = True
            if hit:
                mat.append(r)
    if not mat:
        return ncol
    rank = fl.fmpz_mat(mat).rank()
    if complex_:
        rank //= 2
    return ncol - rank


def local_multiplicity(Q: NDArray[Any], w: NDArray[Any], P: NDArray[np.complex128], kmax: int = 12) -> int | None:
    """mu(P), the multiplicity of the exact root P = (y, c') (Gaussian rational coordinates, doubles) of
    v'(y) = c' w y, proved in exact arithmetic (module docstring), or None when H(k) does not become constant
    before k = kmax or the Macaulay matrix exceeds MAX_COLUMNS columns. ValueError if P is not a root."""
    P = np.asarray(P, dtype=complex)
    Pf = [(Fraction(float(x.real)), Fraction(float(x.imag))) for x in P]
    return field_multiplicity(Q, w, Pf, (Fraction(1), Fraction(0)), kmax)


def field_multiplicity(Q: NDArray[Any], w: NDArray[Any], P: list, g: tuple[Fraction, Fraction], kmax: int = 12
                       ) -> int | None:
    """mu(P) for a root P with coordinates in Q(alpha), alpha^2 + g[1] alpha + g[0] = 0 irreducible over Q
    (P: p + 1 pairs (a, b) = a + b alpha of Fractions); g = (1, 0) is Q(i). Q must be real unless the field is
    Q(i) (then Q's imaginary parts are the alpha parts). As local_multiplicity otherwise."""
    kind, mu = _local_ring(Q, w, P, g, kmax)
    return mu if kind == "isolated" else None


def not_isolated(Q: NDArray[Any], w: NDArray[Any], P: NDArray[np.complex128], kmax: int = 12) -> bool:
    """Whether the exact root P (as in local_multiplicity) is proved not isolated: H(k) <= mu(P) for an isolated
    root and mu(P) <= 2^p - 1 (module docstring), so H(k) > 2^p - 1 for some k proves that a positive-dimensional
    component of solutions passes through P. False when that is not shown (isolated, or undecided by kmax or
    MAX_COLUMNS)."""
    P = np.asarray(P, dtype=complex)
    Pf = [(Fraction(float(x.real)), Fraction(float(x.imag))) for x in P]
    return _local_ring(Q, w, Pf, (Fraction(1), Fraction(0)), kmax)[0] == "not isolated"


def _local_ring(Q: NDArray[Any], w: NDArray[Any], P: list, g: tuple[Fraction, Fraction], kmax: int
                ) -> tuple[str, int | None]:
    """("isolated", mu(P)), ("not isolated", None) or ("undecided", None), from the Hilbert function H(k)."""
    Q = np.asarray(Q)
    if np.iscomplexobj(Q) and np.any(np.imag(Q)) and tuple(g) != (1, 0):
        raise ValueError("a complex Q needs the field Q(i)")
    polys, n = _local_polys(Q, np.asarray(w), P, g)
    rows = _integer_rows(polys, g)
    complex_ = any(blk for form in rows for _, _, blk in form)
    bound = 2 ** Q.shape[0] - 1      # an isolated nontrivial root has multiplicity <= 2^p - 1 (module docstring)
    prev = _hilbert(rows, n, 1, complex_)
    for k in range(2, kmax + 1):
        if prev is None:
            return "undecided", None
        if prev > bound:
            return "not isolated", None  # H(k) <= mu(P) <= 2^p - 1 for an isolated root
        h = _hilbert(rows, n, k, complex_)
        if h is None:
            return "undecided", None
        if h == prev:
            return "isolated", int(h)
        prev = h
    return ("not isolated", None) if prev is not None and prev > bound else ("undecided", None)


def quadratic_roots(Q: NDArray[Any], w: NDArray[Any], z: NDArray[np.complex128], tol: float = 1e-6
                    ) -> tuple[list[NDArray[np.complex128]], int, bool] | None:
    """Exact roots near the numerical root z whose support has two coordinates {a, b} (the others below
    ``tol`` relative): on that coordinate line f restricts to binary quadratic forms in (z_a, z_b); if their
    gcd over Q is an irreducible quadratic g(z_a / z_b), both roots alpha of g give roots of the system (exact:
    g divides every form), conjugate over Q, so (Q real) of the same multiplicity, proved here in Q(alpha)
    (``field_multiplicity``). Returns ([the two roots as complex points], mu, real) or None."""
    Q = np.asarray(Q)
    if np.iscomplexobj(Q) and np.any(np.imag(Q)):
        return None
    Q = np.real(Q)
    p = Q.shape[0]
    z = np.asarray(z, dtype=complex)
    S = np.nonzero(np.abs(z) > tol * np.abs(z).max())[0]
    if len(S) != 2:
        return None
    a, b = int(S[0]), int(S[1])
    x = sp.Symbol("x")
    forms = []
    for i in range(p):
        # f_i on the line z = x e_a + e_b: sum_jk Q_ijk z_j z_k - w_i z_p z_i
        coef = {}
        for (j, k) in ((a, a), (a, b), (b, a), (b, b)):
            if j == p or k == p:                 # the coordinate c (index p) is only in the w term
                continue
            deg = (j == a) + (k == a)
            coef[deg] = coef.get(deg, 0) + sp.Rational(Fraction(float(Q[i, j, k])))
        if p in (a, b) and i in (a, b):
            deg = (p == a) + (i == a)
            coef[deg] = coef.get(deg, 0) - sp.Rational(Fraction(float(w[i])))
        poly = sum(c * x ** d for d, c in coef.items())
        if poly != 0:
            forms.append(sp.Poly(poly, x, domain="QQ"))
    if not forms:
        return None
    gcd = forms[0]
    for f in forms[1:]:
        gcd = gcd.gcd(f)
    if gcd.degree() != 2 or not gcd.is_irreducible:
        return None
    c2, c1, c0 = (Fraction(int(sp.numer(t)), int(sp.denom(t))) for t in gcd.all_coeffs())
    g = (c0 / c2, c1 / c2)                       # monic: alpha^2 + g1 alpha + g0 = 0
    P = [(Fraction(0), Fraction(0))] * (p + 1)
    P[a] = (Fraction(0), Fraction(1))            # z_a = alpha
    P[b] = (Fraction(1), Fraction(0))            # z_b = 1
    mu = field_multiplicity(Q, w, P, g)
    if mu is None:
        return None
    disc = g[1] ** 2 - 4 * g[0]
    pts = []
    for r in np.roots([1.0, float(g[1]), float(g[0])]):
        v = np.zeros(p + 1, dtype=complex)
        v[a], v[b] = r, 1.0
        pts.append(v)
    return pts, int(mu), bool(disc > 0)
