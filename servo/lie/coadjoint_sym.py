"""Symbolic coadjoint action from the structure constants (sympy), shared by the printed equations
(:mod:`servo.lie.symbolic`) and the reduction to a quadratic system (:mod:`servo.lie.reduction`).

(ad*_w m)_j = sum_{i,k} w_i C[i,j,k] m_k (DESIGN.md conventions; for so(3) this is m x w).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

__all__ = ["structure_constants_sym", "coad_sym"]


def structure_constants_sym(algebra):
    """The structure constants as a nested list of exact sympy numbers (integers/rationals where exact)."""
    C = algebra.structure_constants
    out = np.empty(C.shape, dtype=object)
    for idx, v in np.ndenumerate(C):
        v = float(v)
        if v.is_integer():
            out[idx] = sp.Integer(int(v))
        else:
            r = sp.Rational(v).limit_denominator(10**6)
            out[idx] = r if abs(float(r) - v) <= 1e-13 * max(1.0, abs(v)) else sp.Float(v)
    return out


def coad_sym(algebra, w, m):
    """Symbolic (ad*_w m)_j = sum_{i,k} w_i C[i,j,k] m_k as a sympy column Matrix."""
    C = structure_constants_sym(algebra)
    n = algebra.dim
    nz = [(i, j, k) for (i, j, k), c in np.ndenumerate(C) if c != 0]
    out = [sp.Integer(0)] * n
    for i, j, k in nz:
        out[j] += w[i] * C[i, j, k] * m[k]
    return sp.Matrix(out)
