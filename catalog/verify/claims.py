"""What a Lie-group system of each model claims, written from the equations (independently of ``servo``).

With m = I w, state y = m (free, nonholonomic, first kind) or y = (m, lambda) (second kind, vakonomic):

* free (m' = ad*_w m): the energy (m, I^-1 m)/2 and every Casimir F(m) are conserved.
* nonholonomic (b = a, first kind): the reaction lambda a does no work since (a, w) = 0, so the energy is
  conserved (Kozlov's lectures on servo-constraints, "Servo constraints (by H. Beghin)").
* servo of the first kind with b not parallel to a: no integral in general (the control does work).
* second kind, (m + lambda b)' = ad*_w (m + lambda b): F(m + lambda b) for every Casimir F
  (Kozlov's lectures, "сервосвязи второго рода"); dT/dt = -lambda' (b, w), so for the vakonomic case b = a the
  energy is conserved too, but not for general b.
* every model: the constraint residual (a, w) = (a, I^-1 m) stays 0.
"""

from __future__ import annotations

import re

import numpy as np


def plain(expr):
    """A polynomial as a reader writes it: m1² + m2² + m3² (not m1**2 + m2**2 + m3**2)."""
    sup = str.maketrans("0123456789", "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")
    return re.sub(r"\*\*(\d+)", lambda mo: mo.group(1).translate(sup), str(expr)).replace("*", " ")


def _m(y, n):
    return y[..., :n]


def model_integrals(algebra, inertia, model, a=None, b=None):
    """dict name -> callable(y) of the first integrals ``model`` claims (see the module docstring)."""
    n = algebra.dim
    Iinv = np.linalg.inv(np.asarray(inertia, float))
    energy = lambda y: 0.5 * np.einsum("...i,ij,...j->...", _m(y, n), Iinv, _m(y, n))
    out = {}
    if model in ("free", "nonholonomic", "vakonomic"):
        out["energy (m, I^-1 m)/2"] = energy
    if model == "free":
        for c in algebra.casimirs():
            out[f"Casimir {plain(c.expr)}"] = (lambda C: lambda y: C(_m(y, n)))(c)
    if model in ("servo2", "vakonomic"):
        # several controls: z = m + sum_i lambda_i b_i with lambda = y[n:n + k]
        B = np.atleast_2d(np.asarray(a if model == "vakonomic" else b, float))
        k = B.shape[0]
        name = "m + \u03bb b" if np.ndim(a if model == "vakonomic" else b) == 1 else "m + \u03a3 \u03bb_i b_i"
        for c in algebra.casimirs():
            out[f"Casimir F({name}), F = {plain(c.expr)}"] = (
                lambda C: lambda y: C(_m(y, n) + y[..., n:n + k] @ B))(c)
    return out


def constraint_residuals(inertia, a, n):
    """{"(a, w)": y -> (a, I^-1 m)} for the left-invariant constraint (a, w) = 0; for several covectors
    (rows of a) one residual "(a_i, w)" each."""
    A = np.asarray(a, float)
    IinvA = np.linalg.solve(np.asarray(inertia, float), np.atleast_2d(A).T).T  # I symmetric: (a, I^-1 m) = (I^-1 a, m)
    if A.ndim == 1:
        return {"(a, w)": lambda y: y[..., :n] @ IinvA[0]}
    return {f"(a_{i + 1}, w)": (lambda y, c=c: y[..., :n] @ c) for i, c in enumerate(IinvA)}


def realizability(inertia, a, b):
    """The number (I^-1 a, b); the constraint is realizable iff it is non-zero (Kozlov's lectures, condition (*))."""
    return float(np.linalg.solve(np.asarray(inertia, float), np.asarray(a, float)) @ np.asarray(b, float))
