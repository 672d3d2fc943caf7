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
from numpy.typing import NDArray

from .krawczyk import require_flint

__all__ = ["local_multiplicity", "MAX_COLUMNS"]

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


def _local_polys(Q: NDArray[Any], w: NDArray[Any], P: NDArray[np.complex128]) -> tuple[list[dict], int]:
    """f_i(P + u) as {exponent: Fraction complex pair} in the local coordinates u (the chart coordinate, the
    largest |P_m|, left out); checks f(P) = 0 exactly. Returns (polys, n variables)."""
    p = Q.shape[0]
    N = p + 1
    m = int(np.argmax(np.abs(P)))
    var = [j for j in range(N) if j != m]                       # u_a = z_var[a] - P_var[a]
    pos = {j: a for a, j in enumerate(var)}
    Pr = [(Fraction(float(x.real)), Fraction(float(x.imag))) for x in P]

    def cmul(a, b):
        return (a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0])

    def cadd(a, b):
        return (a[0] + b[0], a[1] + b[1])
    zero = (Fraction(0), Fraction(0))
    polys = []
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
        n = len(var)

        def add(e, c):
            poly[e] = cadd(poly.get(e, zero), c)
        const = zero
        for (j, k), b in B.items():
            # b z_j z_k with z_j = P_j + u_j (u_m = 0)
            const = cadd(const, cmul(b, cmul(Pr[j], Pr[k])))
            if k in pos:
                e = [0] * n
                e[pos[k]] += 1
                add(tuple(e), cmul(b, Pr[j]))
            if j in pos:
                e = [0] * n
                e[pos[j]] += 1
                add(tuple(e), cmul(b, Pr[k]))
            if j in pos and k in pos:
                e = [0] * n
                e[pos[j]] += 1
                e[pos[k]] += 1
                add(tuple(e), b)
        if const != zero:
            raise ValueError("P is not an exact root of the system")
        polys.append({e: c for e, c in poly.items() if c != zero})
    return polys, len(var)


def _hilbert(polys: list[dict], n: int, k: int) -> int | None:
    """H(k) = dim O / (I + m^(k+1)) (module docstring), or None if the Macaulay matrix is too large."""
    fl = require_flint("exact ranks")
    cols = _monomials(n, k)
    if len(cols) > MAX_COLUMNS:
        return None
    index = {e: a for a, e in enumerate(cols)}
    rows_re, rows_im = [], []
    for a in _monomials(n, k - 1):
        for f in polys:
            re = [Fraction(0)] * len(cols)
            im = [Fraction(0)] * len(cols)
            for e, (cr, ci) in f.items():
                t = tuple(x + y for x, y in zip(a, e))
                if sum(t) <= k:
                    re[index[t]] += cr
                    im[index[t]] += ci
            if any(re) or any(im):
                rows_re.append(re)
                rows_im.append(im)
    if not rows_re:
        return len(cols)
    complex_ = any(any(r) for r in rows_im)
    if complex_:     # [[A, -B], [B, A]] has twice the complex rank of A + iB
        rows = [a + [-x for x in b] for a, b in zip(rows_re, rows_im)] + [b + a for a, b in zip(rows_re, rows_im)]
    else:
        rows = rows_re
    den = lcm(*{x.denominator for r in rows for x in r})
    M = fl.fmpz_mat([[int(x * den) for x in r] for r in rows])
    rank = M.rank()
    if complex_:
        rank //= 2
    return len(cols) - rank


def local_multiplicity(Q: NDArray[Any], w: NDArray[Any], P: NDArray[np.complex128], kmax: int = 12) -> int | None:
    """mu(P), the multiplicity of the exact root P = (y, c') (Gaussian rational coordinates, doubles) of
    v'(y) = c' w y, proved in exact arithmetic (module docstring), or None when H(k) does not become constant
    before k = kmax or the Macaulay matrix exceeds MAX_COLUMNS columns. ValueError if P is not a root."""
    polys, n = _local_polys(np.asarray(Q), np.asarray(w), np.asarray(P, dtype=complex))
    prev = _hilbert(polys, n, 1)
    for k in range(2, kmax + 1):
        if prev is None:
            return None
        h = _hilbert(polys, n, k)
        if h is None:
            return None
        if h == prev:
            return int(h)
        prev = h
    return None
