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

import numpy as np


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
            out[f"Casimir {c.expr}"] = (lambda C: lambda y: C(_m(y, n)))(c)
    if model in ("servo2", "vakonomic"):
        bb = np.asarray(a if model == "vakonomic" else b, float)
        for c in algebra.casimirs():
            out[f"Casimir F(m + lambda b), F = {c.expr}"] = (
                lambda C: lambda y: C(_m(y, n) + y[..., n:n + 1] * bb))(c)
    return out


def constraint_residuals(inertia, a, n):
    """{"(a, w)": y -> (a, I^-1 m)} for the left-invariant constraint (a, w) = 0."""
    Iinv_a = np.linalg.solve(np.asarray(inertia, float), np.asarray(a, float))  # I symmetric: (a, I^-1 m) = (I^-1 a, m)
    return {"(a, w)": lambda y: y[..., :n] @ Iinv_a}


def realizability(inertia, a, b):
    """The number (I^-1 a, b); the constraint is realizable iff it is non-zero (Kozlov's lectures, condition (*))."""
    return float(np.linalg.solve(np.asarray(inertia, float), np.asarray(a, float)) @ np.asarray(b, float))
