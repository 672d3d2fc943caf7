"""Homogeneous spaces on which the Lie-group methods act: the generator, its action and its bracket.

Every Lie-group method (Lie-Euler, RKMK, commutator-free, Crouch-Grossman) is written once against
this small protocol (Munthe-Kaas 1999; Hairer-Lubich-Wanner, *Geometric Numerical Integration*,
ch. IV.8). A space provides

* ``field(t, y)`` -> xi: the generator of the ODE, y' = lambda(xi(t, y)) y;
* ``act(x, y)``: the exact flow for unit time of the frozen generator x (the "exp(x) . y");
* ``bracket(x, y)``: the Lie bracket that matches ``act``, so that act(x) act(y) act(-x) act(-y)
  = act(bracket(x, y)) + O(3); the RKMK dexp^-1 series is written with it.

Spaces (all batched over leading axes):

* :class:`CoadjointSpace`: z' = ad*_{w(z)} z on g*. act(x, z) = exp(ad x)^T z =
  ``LieAlgebra.coadjoint_exp`` (exact flow of m' = ad*_x m); it keeps every Casimir. Since
  x -> ad*_x is an anti-homomorphism, the matching bracket is -[x, y].
* :class:`AffineCoadjointSpace`: z' = ad*_{w(z)} z + f(z) (servo-constraint of the first kind). The
  generator is the pair (w, f) in the semidirect product g x g*, acting by the affine flow
  act((x, v), z) = exp(A) z + phi_1(A) v, A = ad(x)^T, phi_1(A) = (e^A - I)/A; bracket
  [(x1, v1), (x2, v2)] = (-[x1, x2], ad*_{x1} v2 - ad*_{x2} v1) (the commutator of the augmented
  matrices [[A, v], [0, 0]]). Casimirs are not kept (they are not invariants of the forced flow).
* :class:`GroupSpace`: g' = g w(t) on a matrix group; act(x, g) = g exp(hat x), bracket -[x, y].
  Every step multiplies by an exact group element, so g stays in the group to round-off.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from liegroups.exponential import _so3_coeffs, bernoulli_coefficients


def _cross(a, b):
    """a x b for (..., 3) arrays (faster than np.cross for small batches)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def so3_coadjoint_exp(x, m):
    """exp(ad x)^T m = R(-x) m = m - a (x cross m) + b x cross (x cross m) (Rodrigues), a = sin t/t,
    b = (1 - cos t)/t^2, t = |x|: the flow of Euler's m' = m x w for x = h w."""
    a, b = _so3_coeffs(np.einsum("...i,...i->...", x, x))
    c1 = _cross(x, m)
    return m - a[..., None] * c1 + b[..., None] * _cross(x, c1)


def dexpinv_series(bracket, theta, v, terms):
    """sum_{k < terms} B_k/k! ad_theta^k v with the given bracket (Bernoulli numbers, B_1 = -1/2).

    RKMK of order q truncates after ad^(q-2) (Hairer-Lubich-Wanner IV.8, Munthe-Kaas 1999).
    """
    coeffs = bernoulli_coefficients(int(terms))
    out = v
    term = v
    for c in coeffs[1:]:
        term = bracket(theta, term)
        if c != 0.0:
            out = out + c * term
    return out


class CoadjointSpace:
    """z' = ad*_{w(z)} z on g* (Lie-Poisson); act = coadjoint_exp, bracket = -[x, y]."""

    preserves = frozenset({"casimirs"})

    def __init__(self, problem):
        self.problem = problem
        self.algebra = problem.algebra
        self.velocity = problem.velocity
        self.so3 = getattr(self.algebra, "_closed_form", None) == "so3"
        self.xdim = self.algebra.dim

    def field(self, t, z):
        return self.velocity(z)

    def act(self, x, z):
        if self.so3:
            return so3_coadjoint_exp(x, z)
        return self.algebra.coadjoint_exp(x, z)

    def bracket(self, x, y):
        if self.so3:
            return -_cross(x, y)
        return -self.algebra.bracket(x, y)


class AffineCoadjointSpace:
    """z' = ad*_{w(z)} z + f(z): generator (w, f) in g x g*, affine action exp(A) z + phi_1(A) v."""

    preserves = frozenset()

    def __init__(self, problem):
        self.problem = problem
        self.algebra = problem.algebra
        self.n = self.algebra.dim
        self.so3 = getattr(self.algebra, "_closed_form", None) == "so3"
        self.xdim = 2 * self.n

    def field(self, t, z):
        w = self.problem.velocity(z)
        f = np.broadcast_to(self.problem.forcing(z), w.shape)
        return np.concatenate([w, f], axis=-1)

    def act(self, xi, z):
        n = self.n
        x, v = xi[..., :n], xi[..., n:]
        if self.so3:
            # A = ad(x)^T = -hat(x); phi_1(A) v = v + b A v + c A^2 v, c = (1 - a)/t^2
            t2 = np.einsum("...i,...i->...", x, x)
            a, b = _so3_coeffs(t2)
            small = t2 < 1e-8
            c = np.where(small, 1.0 / 6.0 - t2 / 120.0, (1.0 - a) / np.where(small, 1.0, t2))
            c1 = _cross(x, z)
            ez = z - a[..., None] * c1 + b[..., None] * _cross(x, c1)
            d1 = _cross(x, v)
            return ez + v - b[..., None] * d1 + c[..., None] * _cross(x, d1)
        A = np.swapaxes(self.algebra.ad(x), -1, -2)
        shape = np.broadcast_shapes(A.shape[:-2], z.shape[:-1], v.shape[:-1])
        M = np.zeros(shape + (n + 1, n + 1))
        M[..., :n, :n] = A
        M[..., :n, n] = v
        E = scipy.linalg.expm(M)
        return np.einsum("...ij,...j->...i", E[..., :n, :n], z) + E[..., :n, n]

    def bracket(self, p, q):
        n = self.n
        x1, v1, x2, v2 = p[..., :n], p[..., n:], q[..., :n], q[..., n:]
        alg = self.algebra
        return np.concatenate([-alg.bracket(x1, x2), alg.coad(x1, v2) - alg.coad(x2, v1)], axis=-1)


class GroupSpace:
    """g' = g w(t) on a matrix group (SO3, SE2, SE3): act(x, g) = g exp(hat x), bracket = -[x, y]."""

    preserves = frozenset({"group"})

    def __init__(self, group, velocity):
        self.group = group
        self.algebra = group.algebra
        self.velocity = velocity
        self.so3 = group.name == "SO3"
        self.xdim = group.dim

    def field(self, t, g):
        return np.asarray(self.velocity(t), dtype=float)

    def act(self, x, g):
        return g @ self.group.exp(x)

    def bracket(self, x, y):
        if self.so3:
            return -_cross(x, y)
        return -self.algebra.bracket(x, y)
