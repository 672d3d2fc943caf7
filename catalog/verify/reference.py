"""Reference solutions of the constrained rigid bodies on so(3), written from the equations here, without
``servo`` (its classes, its symbolic layer, its integrators), and solved by scipy's DOP853 at tight tolerances.

A simulation checked against its own constraint only proves that the method enforces what it was built to
enforce; compared with these it can fail (a wrong sign, a wrong multiplier, a wrong model). Convention of the
library: on so(3) ad*_w m = m x w, m = I w; constraints (a_i, w) = 0 (rows of A), controls the rows of B.

* first kind (Beghin), and nonholonomic with B = A (Kozlov's lectures on servo-constraints, "Servo
  constraints (by H. Beghin)"):

      m' = m x w + B^T lambda,   A w = 0.

  Differentiating A I^-1 m = 0 along the motion: A I^-1 (m x w) + (A I^-1 B^T) lambda = 0, so

      lambda = -(A I^-1 B^T)^-1 A I^-1 (m x w)

  (defined iff det(A I^-1 B^T) != 0: the realizability condition).
* second kind, and vakonomic with B = A (the lectures, "servo-constraints of the second kind"): with
  z = m + B^T lambda,

      z' = z x w,   w = I^-1 m = I^-1 (z - B^T lambda),   A w = 0  =>  lambda = (A I^-1 B^T)^-1 A I^-1 z,

  an ODE in z alone; m = z - B^T lambda(z) and the state is (m, lambda).
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from ..errors import CatalogError

#: scipy DOP853 tolerances of the reference (its error is far below every catalog tolerance)
RTOL, ATOL = 1e-12, 1e-13


def _data(inertia, a, b):
    I = np.asarray(inertia, float)
    A = np.atleast_2d(np.asarray(a, float))
    B = np.atleast_2d(np.asarray(b, float))
    Iinv = np.linalg.inv(I)
    R = A @ Iinv @ B.T
    if abs(np.linalg.det(R)) < 1e-12:
        raise CatalogError(f"not realizable: det(A I^-1 B^T) = {np.linalg.det(R):.3g}; no reference solution")
    return Iinv, A, B, np.linalg.inv(R)


def first_kind(inertia, a, b, m0, t):
    """m(t) (K, 3) of m' = m x w + B^T lambda, A w = 0 (see the module docstring) at the times ``t``."""
    Iinv, A, B, Rinv = _data(inertia, a, b)

    def f(_, m):
        mxw = np.cross(m, Iinv @ m)
        lam = -Rinv @ (A @ Iinv @ mxw)
        return mxw + B.T @ lam

    t = np.asarray(t, float)
    sol = solve_ivp(f, (t[0], t[-1]), np.asarray(m0, float), t_eval=t, method="DOP853", rtol=RTOL, atol=ATOL)
    return sol.y.T


def second_kind(inertia, a, b, m0, lam0, t):
    """(m, lambda) (K, 3 + k) of (m + B^T lambda)' = (m + B^T lambda) x w, A w = 0 at the times ``t``."""
    Iinv, A, B, Rinv = _data(inertia, a, b)
    lam_of = lambda z: Rinv @ (A @ Iinv @ z)

    def f(_, z):
        return np.cross(z, Iinv @ (z - B.T @ lam_of(z)))

    t = np.asarray(t, float)
    z0 = np.asarray(m0, float) + B.T @ np.atleast_1d(np.asarray(lam0, float))
    z = solve_ivp(f, (t[0], t[-1]), z0, t_eval=t, method="DOP853", rtol=RTOL, atol=ATOL).y.T
    lam = z @ (Rinv @ A @ Iinv).T
    return np.concatenate([z - lam @ B, lam], axis=-1)


def applies(entry):
    """True for a constrained Lie-group entry on so(3) (data ``algebra``, ``inertia``, ``a``, ``b`` in its extras)."""
    ex = entry.extras
    return (entry.kind == "lie-group" and entry.model in ("nonholonomic", "servo1", "servo2", "vakonomic")
            and getattr(ex.get("algebra"), "name", "") == "so(3)" and all(k in ex for k in ("inertia", "a", "b")))


def reference(entry, t):
    """The entry's state (its layout: m, or (m, lambda)) at the times ``t`` from the equations above."""
    if not applies(entry):
        raise CatalogError(f"{entry.name}: no hand-written reference (a constrained body on so(3) has one)")
    ex = entry.extras
    y0 = np.asarray(entry.initial_state, float)
    b = ex["a"] if entry.model in ("nonholonomic", "vakonomic") else ex["b"]
    if entry.model in ("nonholonomic", "servo1"):
        return first_kind(ex["inertia"], ex["a"], b, y0[:3], t)
    return second_kind(ex["inertia"], ex["a"], b, y0[:3], y0[3:], t)
