"""Resonances of the Kovalevskaya exponents: is m = sum k_i rho_i for some k in N^{p-1}, 1 <= |k| <= m?

Numerically (``resonances``: the margins min |sum k_i rho_i - m| for a batch of exponent rows, all sums at
once) and exactly (``exact_resonant``: 40-digit screening, then rational arithmetic or
sympy.minimal_polynomial). A degree without resonance at a Darboux point is ruled out for homogeneous
polynomial first integrals (the theorem in the docstring of servo.quadratic.kovalevskaya).
"""
from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from math import comb

import mpmath
import numpy as np
import sympy as sp
from numpy.typing import ArrayLike, NDArray

from ...errors import QuadraticSystemError
from ..polynomials import monomial_exponents
from .exact_exponents import AlgebraicExponent, Exponent, to_mpmath

__all__ = ["multi_indices", "resonances", "exact_resonant", "MAX_MULTI_INDICES"]

#: largest number of multi-indices k (1 <= |k| <= m) a resonance search enumerates
MAX_MULTI_INDICES = 2_000_000


@lru_cache(maxsize=64)
def multi_indices(n: int, max_degree: int) -> tuple[NDArray[np.int_], NDArray[np.int_]]:
    """All k in N^n with 1 <= |k| <= max_degree, as an int array (rows) and their |k| (read-only, cached)."""
    count = comb(n + max_degree, n) - 1
    if count > MAX_MULTI_INDICES:
        raise QuadraticSystemError(f"resonance search over {count} multi-indices (p - 1 = {n}, max_degree = "
                                   f"{max_degree}) exceeds {MAX_MULTI_INDICES}; lower max_degree")
    rows = [a for s in range(1, max_degree + 1) for a in monomial_exponents(n, s)]
    ks = np.array(rows, dtype=int).reshape(-1, n)
    lev = ks.sum(axis=1)
    ks.setflags(write=False)
    lev.setflags(write=False)
    return ks, lev


def resonances(exponents: ArrayLike, max_degree: int, rtol: float = 1e-8
               ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Numeric resonance margins: array (B, max_degree) with entry [b, m - 1] = min over k in N^{p-1},
    1 <= |k| <= m, of |sum_i k_i rho_i - m| for the exponent rows rho = exponents[b], and the tolerance array
    of the same shape, rtol (1 + m)(1 + max |rho|). margin > tol means "no resonance at degree m"."""
    R = np.atleast_2d(np.asarray(exponents, dtype=complex))
    B, n = R.shape
    ms = np.arange(1, max_degree + 1)
    tol = rtol * (1 + ms)[None, :] * (1 + np.abs(R).max(axis=1, initial=0.0))[:, None]
    if n == 0:                                   # p = 1: no k with |k| >= 1, no resonance at all
        return np.full((B, max_degree), np.inf), tol
    ks, lev = multi_indices(n, max_degree)
    S = R @ ks.T                                  # (B, Nk) all sums at once
    D = np.abs(S[:, None, :] - ms[None, :, None])  # (B, M, Nk)
    D = np.where(lev[None, None, :] <= ms[None, :, None], D, np.inf)
    return D.min(axis=2), tol


def exact_resonant(exps: Sequence[Exponent], m: int) -> tuple[bool, float]:
    """Exact: is m = sum k_i rho_i for some k in N^n, 1 <= |k| <= m? exps: exact exponents.

    Returns (resonant, closest |sum k rho - m| as a float). 40-digit values screen the k (a sum farther than
    1e-25 from m is not m); a closer candidate is decided exactly: by rational arithmetic when the exponents
    involved are rational, else by sympy.minimal_polynomial of sum k_i rho_i - m (the polynomial x iff it is 0)."""
    n = len(exps)
    if n == 0:
        return False, float("inf")
    x = sp.Symbol("x")
    ks, _ = multi_indices(n, m)
    best = float("inf")
    with mpmath.workdps(40):
        vals = [to_mpmath(e) for e in exps]
        for k in ks:
            diff = float(abs(mpmath.fsum(int(a) * v for a, v in zip(k, vals) if a) - m))
            if diff < 1e-25:
                used = [e for a, e in zip(k, exps) if a]
                expr = sum(int(a) * (e.sympy() if isinstance(e, AlgebraicExponent) else e)
                           for a, e in zip(k, exps) if a) - m
                if all(getattr(e, "is_Rational", False) for e in used):
                    if expr == 0:
                        return True, 0.0
                elif sp.minimal_polynomial(expr, x) == x:
                    return True, 0.0
            best = min(best, diff)
    return False, best
