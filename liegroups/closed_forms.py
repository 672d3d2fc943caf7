"""Closed-form formulas of SO(3), SE(2) and SE(3): the scalar coefficient functions of the so(3)
exponential and its derivatives, Rodrigues' formula and the rotation logarithm, the SE(2) / SE(3)
exponentials and adjoint matrices, the Bernoulli coefficients of dexp^-1, and the structure constants
of so(3), se(2) and se(3) in the documented bases (see :mod:`liegroups.named`).

This module is the bottom floor of the formulas: :mod:`liegroups.exponential` (exp, Ad*, dexp,
dexp^-1 of an algebra) and :mod:`liegroups.matrix_groups` (the group objects) both use it, and
:class:`liegroups.LieAlgebra` compares its structure constants with the tables here to decide which
closed forms apply.

Formulas: Rodrigues R = I + (sin t/t) W + ((1 - cos t)/t^2) W^2; the translation part of the SE(3)
exponential is V v with V = I + ((1 - cos t)/t^2) W + ((t - sin t)/t^3) W^2 and
V^-1 = I - W/2 + ((1 - (t/2) cot(t/2))/t^2) W^2 (Murray, Li and Sastry (1994), sections 2.2 and 2.4;
Sola, Deray and Atchuthan (2018), appendices A-B). The rotation angle of log is
atan2(|vee(R - R^T)|/2, (tr R - 1)/2), accurate at every angle; near pi the axis comes from the
symmetric part (R + R^T)/2 - cos t I = (1 - cos t) a a^T. All functions are batched over leading axes.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike, NDArray

#: below this t^2 the dexp / dexp^-1 coefficients (t - sin t)/t^3 and (1 - (t/2) cot(t/2))/t^2 are
#: evaluated by their Taylor series (12 terms, truncation < 1e-17): above it the direct formulas lose
#: only ~1e-15 relative to cancellation (at t = 1), below it they would lose up to all digits
_SERIES_BELOW = 1.0
#: smallest angle used by so3_coefficients: at t = 1e-150, a = 1 and b = 1/2 to double precision,
#: and t^2 does not underflow
_TINY_ANGLE = 1e-150


def _bernoulli_numbers(m):
    """Exact B_0..B_m (B_1 = -1/2) from sum_{k=0}^{j} C(j+1, k) B_k = 0 (scipy.special.bernoulli is
    only accurate to ~1e-12 relative for B_4)."""
    B = [Fraction(1)]
    for j in range(1, m + 1):
        B.append(-sum(math.comb(j + 1, k) * B[k] for k in range(j)) / (j + 1))
    return B


#: (t - sin t)/t^3 = sum_k (-1)^k t^(2k) / (2k+3)!
_C_SERIES = np.array([(-1) ** k / math.factorial(2 * k + 3) for k in range(12)])
#: (1 - (t/2) cot(t/2))/t^2 = sum_{n>=1} (-1)^(n+1) B_2n t^(2n-2) / (2n)!
_D_SERIES = np.array([float((-1) ** (n + 1) * _bernoulli_numbers(24)[2 * n] / math.factorial(2 * n))
                      for n in range(1, 13)])


@lru_cache(maxsize=None)
def bernoulli_coefficients(q: int) -> tuple[float, ...]:
    """B_k / k! for k = 0..q-1 with B_1 = -1/2 (the Taylor coefficients of z/(e^z - 1)), exact to rounding."""
    B = _bernoulli_numbers(max(q - 1, 1))
    return tuple(float(B[k] / math.factorial(k)) for k in range(q))


def _safe(t2, small):
    return np.where(small, 1.0, t2)


def so3_coefficients(theta2: ArrayLike) -> tuple[float, float] | tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(a, b) = (sin t / t, (1 - cos t)/t^2) given t^2, accurate to a few ulp at every angle.

    The coefficients of Rodrigues' formula exp(hat x) = I + a X + b X^2 (t = |x|). Evaluated by half
    angles, a = 2 cos(t/2) sin(t/2)/t and b = 2 (sin(t/2)/t)^2, which have no cancellation anywhere;
    t is clamped at 1e-150 so that t = 0 needs no branch. A Python float gives Python floats (math
    functions, for straight-line scalar code); anything else gives arrays of its shape.
    """
    if type(theta2) is float:
        if not theta2 < math.inf:  # inf or NaN (an overflowed state): NaN, as numpy gives, never math's ValueError
            return math.nan, math.nan
        t = max(math.sqrt(theta2), _TINY_ANGLE)
        st = math.sin(0.5 * t) / t
        return 2.0 * math.cos(0.5 * t) * st, 2.0 * st * st
    t = np.maximum(np.sqrt(np.asarray(theta2, dtype=float)), _TINY_ANGLE)
    st = np.sin(0.5 * t) / t
    return 2.0 * np.cos(0.5 * t) * st, 2.0 * st * st


def so3_dexp_coefficient(theta2: ArrayLike) -> NDArray[np.float64]:
    """c = (1 - sin t / t)/t^2 = (t - sin t)/t^3 given t^2 (Taylor series below t = 1), accurate to
    ~1e-15 relative at every angle.

    With b of :func:`so3_coefficients`: dexp_x = I + b X + c X^2 on so(3), the SE(3) translation
    matrix V = I + b W + c W^2, and phi_1(A) = (e^A - I)/A = I + b A + c A^2 for A = -hat(x).
    """
    theta2 = np.asarray(theta2, dtype=float)
    small = theta2 < _SERIES_BELOW
    t = np.sqrt(_safe(theta2, small))
    series = np.polynomial.polynomial.polyval(theta2, _C_SERIES)
    return np.where(small, series, (t - np.sin(t)) / (_safe(theta2, small) * t))


def so3_dexpinv_coefficient(theta2: ArrayLike) -> NDArray[np.float64]:
    """d = (1 - (t/2) cot(t/2))/t^2 given t^2 (Taylor series below t = 1), accurate to ~1e-15
    relative for t < 2 pi, where it is singular: dexp^-1_x = I - X/2 + d X^2 on so(3), and
    V^-1 = I - W/2 + d W^2."""
    theta2 = np.asarray(theta2, dtype=float)
    small = theta2 < _SERIES_BELOW
    half = 0.5 * np.sqrt(_safe(theta2, small))
    series = np.polynomial.polynomial.polyval(theta2, _D_SERIES)
    return np.where(small, series, (1.0 - half * np.cos(half) / np.sin(half)) / _safe(theta2, small))


# ------------------------------------------------------------------------- SO(3)
def hat3(x):
    """hat(x) with hat(x) @ y = x cross y, shape (..., 3, 3)."""
    x = np.asarray(x, dtype=float)
    z = np.zeros(x.shape[:-1])
    return np.stack(
        [np.stack([z, -x[..., 2], x[..., 1]], -1),
         np.stack([x[..., 2], z, -x[..., 0]], -1),
         np.stack([-x[..., 1], x[..., 0], z], -1)], -2)


def vee3(X):
    """Inverse of hat3: (X[2, 1], X[0, 2], X[1, 0])."""
    return np.stack([X[..., 2, 1], X[..., 0, 2], X[..., 1, 0]], axis=-1)


def rodrigues(x):
    """Rotation matrix exp(hat x) = I + a X + b X^2, a = sin t/t, b = (1 - cos t)/t^2, t = |x|."""
    x = np.asarray(x, dtype=float)
    X = hat3(x)
    a, b = so3_coefficients(np.sum(x * x, axis=-1))
    return np.eye(3) + a[..., None, None] * X + b[..., None, None] * (X @ X)


def rodrigues_minus_identity(x):
    """exp(hat x) - I = a X + b X^2 (Rodrigues, a = sin t/t, b = (1 - cos t)/t^2, t = |x|), without the
    cancellation of forming exp(hat x) first: its entries are accurate relative to |x|, not to 1."""
    x = np.asarray(x, dtype=float)
    X = hat3(x)
    a, b = so3_coefficients(np.sum(x * x, axis=-1))
    return a[..., None, None] * X + b[..., None, None] * (X @ X)


def rotate_transpose(x, y):
    """R(x)^T y = R(-x) y = y - a x cross y + b x cross (x cross y), without forming matrices."""
    a, b = so3_coefficients(np.sum(x * x, axis=-1))
    c1 = np.cross(x, y)
    return y - a[..., None] * c1 + b[..., None] * np.cross(x, c1)


def so3_log(R):
    """x with exp(hat x) = R and |x| <= pi (at exactly pi either of the two axes is returned)."""
    R = np.asarray(R, dtype=float)
    w = vee3(R - np.swapaxes(R, -1, -2)) / 2.0  # = sin(theta) * axis
    s = np.linalg.norm(w, axis=-1)
    cos = (np.trace(R, axis1=-2, axis2=-1) - 1.0) / 2.0
    theta = np.arctan2(s, cos)
    t2 = theta**2
    small = t2 < 1e-4
    obtuse = cos < -0.5  # there the axis comes from the symmetric part (s may be exactly 0 at pi)
    scale = np.where(small, 1.0 + t2 / 6.0 + 7.0 * t2**2 / 360.0, theta / np.where(small | obtuse, 1.0, s))
    out = scale[..., None] * w
    if np.any(obtuse):
        Ro, co, wo = R[obtuse], cos[obtuse], w[obtuse]  # flattened batch of the obtuse entries
        B = (Ro + np.swapaxes(Ro, -1, -2)) / 2.0 - co[:, None, None] * np.eye(3)  # (1 - cos) a a^T
        k = np.argmax(np.diagonal(B, axis1=-2, axis2=-1), axis=-1)
        col = B[np.arange(len(k)), :, k]
        axis = col / np.linalg.norm(col, axis=-1, keepdims=True)
        axis = np.where((np.sum(axis * wo, axis=-1) < 0)[:, None], -axis, axis)
        out = np.array(out)
        out[obtuse] = theta[obtuse][:, None] * axis
    return out


# ------------------------------------------------------------------------- SE(2)
def se2_V_entries(theta):
    """(sin w / w, (1 - cos w)/w): V(w) = [[a, -beta], [beta, a]] maps (u, v) to the translation."""
    a, b = so3_coefficients(theta**2)  # sin t / t, (1 - cos t)/t^2
    return a, b * theta


def se2_exp(x):
    """[[R(w), V(w) (u, v)], [0, 1]] for x = (u, v, w), V = [[sin w/w, -(1-cos w)/w], [(1-cos w)/w, sin w/w]]."""
    x = np.asarray(x, dtype=float)
    th = x[..., 2]
    c, s = np.cos(th), np.sin(th)
    a, beta = se2_V_entries(th)
    g = np.broadcast_to(np.eye(3), x.shape[:-1] + (3, 3)).copy()
    g[..., 0, 0] = c
    g[..., 0, 1] = -s
    g[..., 1, 0] = s
    g[..., 1, 1] = c
    g[..., 0, 2] = a * x[..., 0] - beta * x[..., 1]
    g[..., 1, 2] = beta * x[..., 0] + a * x[..., 1]
    return g


def se2_exp_minus_identity(x):
    """exp(hat x) - I for x = (u, v, w) on SE(2) without cancellation: [[cos w - 1, -sin w, p1],
    [sin w, cos w - 1, p2], [0, 0, 0]] with cos w - 1 = -b w^2, sin w = a w (a, b of Rodrigues) and
    p = V(w) (u, v) as in :func:`se2_exp`."""
    x = np.asarray(x, dtype=float)
    th = x[..., 2]
    a, b = so3_coefficients(th**2)
    beta = b * th
    cm1, s = -b * th * th, a * th
    D = np.zeros(x.shape[:-1] + (3, 3))
    D[..., 0, 0] = cm1
    D[..., 0, 1] = -s
    D[..., 1, 0] = s
    D[..., 1, 1] = cm1
    D[..., 0, 2] = a * x[..., 0] - beta * x[..., 1]
    D[..., 1, 2] = beta * x[..., 0] + a * x[..., 1]
    return D


def se2_Ad(g):
    """Ad_g on (u, v, w): [[R, (p2, -p1)^T], [0, 1]]."""
    g = np.asarray(g, dtype=float)
    A = np.zeros(g.shape[:-2] + (3, 3))
    A[..., :2, :2] = g[..., :2, :2]
    A[..., 0, 2] = g[..., 1, 2]
    A[..., 1, 2] = -g[..., 0, 2]
    A[..., 2, 2] = 1.0
    return A


# ------------------------------------------------------------------------- SE(3)
def se3_V(w, inverse=False):
    """V(omega) = I + b W + c W^2 (the translation part of exp), or V^-1 = I - W/2 + d W^2."""
    t2 = np.sum(w * w, axis=-1)
    W = hat3(w)
    if inverse:
        return np.eye(3) - 0.5 * W + so3_dexpinv_coefficient(t2)[..., None, None] * (W @ W)
    _, b = so3_coefficients(t2)
    return np.eye(3) + b[..., None, None] * W + so3_dexp_coefficient(t2)[..., None, None] * (W @ W)


def se3_exp(x):
    """[[R(omega), V(omega) v], [0, 1]] for x = (omega, v)."""
    x = np.asarray(x, dtype=float)
    g = np.broadcast_to(np.eye(4), x.shape[:-1] + (4, 4)).copy()
    g[..., :3, :3] = rodrigues(x[..., :3])
    g[..., :3, 3] = np.einsum("...ij,...j->...i", se3_V(x[..., :3]), x[..., 3:])
    return g


def se3_exp_minus_identity(x):
    """exp(hat x) - I for x = (omega, v) on SE(3) without cancellation: [[a W + b W^2, V(omega) v], [0, 0]]."""
    x = np.asarray(x, dtype=float)
    D = np.zeros(x.shape[:-1] + (4, 4))
    D[..., :3, :3] = rodrigues_minus_identity(x[..., :3])
    D[..., :3, 3] = np.einsum("...ij,...j->...i", se3_V(x[..., :3]), x[..., 3:])
    return D


def se3_Ad(g):
    """Ad_g on (omega, v): [[R, 0], [hat(p) R, R]]."""
    g = np.asarray(g, dtype=float)
    R = g[..., :3, :3]
    A = np.zeros(g.shape[:-2] + (6, 6))
    A[..., :3, :3] = R
    A[..., 3:, 3:] = R
    A[..., 3:, :3] = hat3(g[..., :3, 3]) @ R
    return A


# ------------------------------------------------------------------------- structure constants
def _eps():
    e = np.zeros((3, 3, 3))
    for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
        e[i, j, k] = 1.0
        e[j, i, k] = -1.0
    return e


def _se2_table():
    C = np.zeros((3, 3, 3))  # basis (u, v, w): [w, u] = v, [w, v] = -u, [u, v] = 0
    C[2, 0, 1], C[0, 2, 1] = 1.0, -1.0
    C[2, 1, 0], C[1, 2, 0] = -1.0, 1.0
    return C


def _se3_table():
    C = np.zeros((6, 6, 6))  # basis (R1, R2, R3, T1, T2, T3): [R_i, R_j] = eps R_k, [R_i, T_j] = eps T_k
    e = _eps()
    C[:3, :3, :3] = e
    C[:3, 3:, 3:] = e
    C[3:, :3, 3:] = -np.transpose(e, (1, 0, 2))
    return C


#: structure constants of the algebras with closed forms, in the bases of :mod:`liegroups.named`
STRUCTURE_CONSTANTS = {"so3": _eps(), "se2": _se2_table(), "se3": _se3_table()}
for _C in STRUCTURE_CONSTANTS.values():
    _C.setflags(write=False)
del _C

#: largest |C - C_named| still taken as the named algebra (round-off of a computed C)
CLOSED_FORM_ATOL = 1e-13


def closed_form_kind(C):
    """"so3", "se2" or "se3" when C equals that algebra's structure constants (to round-off), else None."""
    C = np.asarray(C, dtype=float)
    for kind, ref in STRUCTURE_CONSTANTS.items():
        if C.shape == ref.shape and float(np.max(np.abs(C - ref))) <= CLOSED_FORM_ATOL:
            return kind
    return None
