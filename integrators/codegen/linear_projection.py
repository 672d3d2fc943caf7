"""Projection onto the linear invariants of a forced problem, for the adaptive Lie-group pairs.

A forced coadjoint problem z' = ad*_{w(z)} z + f(z) may declare covectors L (p, n) with (L z)' = 0 for every
z (``CoadjointProblem.linear_invariants``: the constraint (I^-1 a, m) = 0 of a servo-constraint of the first
kind). A Lie-group step of such a problem (in g x g*, :class:`integrators.geometry.spaces.AffineCoadjointSpace`)
does not keep them, so every accepted step z~ is moved orthogonally back onto {L z = L z0}:

    z1 = z~ - L^T (L L^T)^-1 (L z~ - L z0),

the projection of the fixed-step methods (:class:`integrators.reference.stepping.ProjectedStepper`) and the
standard projection method (Hairer, Lubich and Wanner 2006, IV.4, Algorithm 4.2), exact in one step since the
level set is an affine subspace. It keeps the order of the pair and the invariants to round-off after every
step. :class:`LinearProjection` has the interface of :class:`integrators.codegen.projection.CasimirProjection`
(``p``, ``n``, ``key``, ``write`` for the generated loops, ``values`` / ``increment`` / ``project`` in numpy),
so the adaptive loops (reference and generated) project with it where a projected pair projects onto the
Casimirs: the targets L z0 of the initial state, the error estimate of the unprojected step, the next
first stage at the projected state, the output grid's states projected too.
"""

from __future__ import annotations

import numpy as np

from .source_text import lin


class LinearProjection:
    """Orthogonal projection onto {L z = c} for covectors L (p, n) (module docstring)."""

    def __init__(self, L):
        self.L = np.atleast_2d(np.asarray(L, dtype=float))
        self.p, self.n = self.L.shape
        self.G = np.linalg.solve(self.L @ self.L.T, self.L)   # (L L^T)^-1 L: the increment is -(L z - c) G
        self.key = ("linear-projection", self.L.shape, self.L.tobytes())

    def write(self, src, z, targets, fixed=None):
        """Emit the projection of z (names) onto {L z = targets} (names); return the names of the increment
        and of the projected point (straight-line code for floats, numpy columns and numba)."""
        n, p, L, G = self.n, self.p, self.L, self.G
        r = src.assign("_lr", [f"({lin([(L[k, j], z[j]) for j in range(n)])}) - {targets[k]}" for k in range(p)])
        inc = src.assign("_lp", [lin([(-G[k, j], r[k]) for k in range(p)]) for j in range(n)])
        y = src.assign("_ly", [f"{z[j]} + {inc[j]}" for j in range(n)])
        return inc, y

    def values(self, z):
        """L z for z (..., n): (..., p)."""
        return np.asarray(z, dtype=float) @ self.L.T

    def increment(self, z, targets):
        """-(L z - targets) (L L^T)^-1 L for z (..., n), targets (..., p) or (p,)."""
        return -((self.values(z) - np.asarray(targets, dtype=float)) @ self.G)

    def project(self, z, targets):
        """z projected onto {L z = targets}."""
        return np.asarray(z, dtype=float) + self.increment(z, targets)


def kept(problem, method):
    """The :class:`LinearProjection` an adaptive Lie-group pair (RKMK form) applies on a forced coadjoint problem
    with linear invariants (None otherwise: unforced problems, ambient pairs, which keep linear invariants by
    themselves, and problems without declared invariants)."""
    L = getattr(problem, "linear_invariants", None)
    if (getattr(problem, "kind", None) != "coadjoint" or getattr(problem, "forcing", None) is None or L is None
            or not getattr(method, "lie", False)):
        return None
    return LinearProjection(L)
