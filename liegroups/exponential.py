"""Exponential, adjoint and coadjoint actions, and dexp / dexp^-1 of a Lie algebra.

* Ad_{exp x} = exp(ad x)                       (matrix exponential of ad, scipy.linalg.expm)
* coadjoint_exp(x, m) = exp(ad x)^T m            (the flow of m' = ad*_x m for unit time)
* dexp_x v = phi(ad x) v,  phi(z) = (e^z - 1)/z = sum_k z^k/(k+1)!
* dexpinv_x v = psi(ad x) v, psi(z) = z/(e^z - 1) = sum_k B_k z^k / k!  (B_1 = -1/2)

(Iserles, Munthe-Kaas, Norsett, Zanna, "Lie-group methods", Acta Numerica 9 (2000), sections 2.4-2.5;
dexp is right-trivialised: d/dt exp(x(t)) = (dexp_x x') exp(x).) Closed forms are used for so(3)
(Rodrigues; dexp and dexp^-1 from the same paper, eq. (2.29)-(2.30) style formulas) and for se(2), se(3)
(through the matrix groups) when the algebra is one of the named ones in its documented basis. All
functions are batched over the leading axes of x (and m or v).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np
import scipy.linalg

from .errors import LieAlgebraError

# below these values of t^2 the trigonometric quotients are replaced by Taylor polynomials in t^2
_SMALL_A = 1e-4   # sin t / t and (1 - cos t)/t^2: no cancellation, only t = 0 needs care; error < 1e-20
_SMALL_C = 1.0    # (t - sin t)/t^3 and (1 - (t/2) cot(t/2))/t^2: cancellation of order t^2 above, so the
#                   series (12 terms, truncation < 1e-17) is used up to t = 1, where the direct formula
#                   loses at most ~1e-15 relative

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
def bernoulli_coefficients(q):
    """B_k / k! for k = 0..q-1 with B_1 = -1/2 (the Taylor coefficients of z/(e^z - 1)), exact to rounding."""
    B = _bernoulli_numbers(max(q - 1, 1))
    return tuple(float(B[k] / math.factorial(k)) for k in range(q))


def _closed(algebra):
    return getattr(algebra, "_closed_form", None)


def _safe(t2, small):
    return np.where(small, 1.0, t2)


def _so3_coeffs(theta2):
    """a = sin t / t, b = (1 - cos t)/t^2 = (sin(t/2)/(t/2))^2 / 2, given t^2 (Taylor near 0)."""
    theta2 = np.asarray(theta2, dtype=float)
    small = theta2 < _SMALL_A
    t = np.sqrt(_safe(theta2, small))
    s = theta2
    a = np.where(small, 1.0 - s / 6.0 + s**2 / 120.0 - s**3 / 5040.0, np.sin(t) / t)
    h = np.sin(0.5 * t) / (0.5 * t)
    b = np.where(small, 0.5 - s / 24.0 + s**2 / 720.0 - s**3 / 40320.0, 0.5 * h * h)
    return a, b


def _so3_c(theta2):
    """c = (1 - sin t / t)/t^2 = (t - sin t)/t^3, given t^2 (Taylor series below t = 1)."""
    theta2 = np.asarray(theta2, dtype=float)
    small = theta2 < _SMALL_C
    t = np.sqrt(_safe(theta2, small))
    series = np.polynomial.polynomial.polyval(theta2, _C_SERIES)
    return np.where(small, series, (t - np.sin(t)) / (_safe(theta2, small) * t))


def _so3_d(theta2):
    """d = (1 - (t/2) cot(t/2))/t^2, given t^2 (Taylor series below t = 1); singular at t = 2 pi."""
    theta2 = np.asarray(theta2, dtype=float)
    small = theta2 < _SMALL_C
    half = 0.5 * np.sqrt(_safe(theta2, small))
    series = np.polynomial.polynomial.polyval(theta2, _D_SERIES)
    return np.where(small, series, (1.0 - half * np.cos(half) / np.sin(half)) / _safe(theta2, small))


def hat3(x):
    """hat(x) with hat(x) @ y = x cross y, shape (..., 3, 3)."""
    x = np.asarray(x, dtype=float)
    z = np.zeros(x.shape[:-1])
    return np.stack(
        [np.stack([z, -x[..., 2], x[..., 1]], -1),
         np.stack([x[..., 2], z, -x[..., 0]], -1),
         np.stack([-x[..., 1], x[..., 0], z], -1)], -2)


def rodrigues(x):
    """Rotation matrix exp(hat x) = I + a X + b X^2, a = sin t/t, b = (1 - cos t)/t^2, t = |x|."""
    x = np.asarray(x, dtype=float)
    X = hat3(x)
    a, b = _so3_coeffs(np.sum(x * x, axis=-1))
    return np.eye(3) + a[..., None, None] * X + b[..., None, None] * (X @ X)


def _rot_T(x, y):
    """R(x)^T y = R(-x) y = y - a x cross y + b x cross (x cross y), without forming matrices."""
    a, b = _so3_coeffs(np.sum(x * x, axis=-1))
    c1 = np.cross(x, y)
    return y - a[..., None] * c1 + b[..., None] * np.cross(x, c1)


def exp_ad(algebra, x):
    """Ad_{exp x} = exp(ad x), shape (..., n, n)."""
    x = algebra._check_vec(x)
    kind = _closed(algebra)
    if kind == "so3":
        return rodrigues(x)
    if kind in ("se2", "se3"):
        from .matrix_groups import group_for

        G = group_for(kind)
        return G.Ad(G.exp(x))
    return scipy.linalg.expm(algebra.ad(x))


def coadjoint_exp(algebra, x, m):
    """exp(ad x)^T m = Ad_{exp x}^T m: the coadjoint motion generated by ad*_x for unit time.

    Closed forms: so(3) R^T m; se(3) with x = (omega, v), m = (M, P), g = exp(x) = (R, p):
    (R^T (M + P x p), R^T P); se(2) with g = (R, p): (R^T (m1, m2), m3 + p2 m1 - p1 m2).
    """
    x = algebra._check_vec(x, "x")
    m = algebra._check_vec(m, "m")
    kind = _closed(algebra)
    if kind == "so3":
        return _rot_T(x, m)
    if kind == "se3":
        w, v = x[..., :3], x[..., 3:]
        t2 = np.sum(w * w, axis=-1)
        _, b = _so3_coeffs(t2)
        c = _so3_c(t2)
        c1 = np.cross(w, v)
        p = v + b[..., None] * c1 + c[..., None] * np.cross(w, c1)  # V(omega) v
        M, P = m[..., :3], m[..., 3:]
        return np.concatenate([_rot_T(w, M + np.cross(P, p)), _rot_T(w, P)], axis=-1)
    if kind == "se2":
        from .matrix_groups import SE2

        g = SE2.exp(x)
        m = np.broadcast_to(m, np.broadcast_shapes(m.shape, x.shape))
        co, si, p1, p2 = g[..., 0, 0], g[..., 1, 0], g[..., 0, 2], g[..., 1, 2]
        m1, m2, m3 = m[..., 0], m[..., 1], m[..., 2]
        return np.stack([co * m1 + si * m2, -si * m1 + co * m2, m3 + p2 * m1 - p1 * m2], axis=-1)
    E = exp_ad(algebra, x)
    return np.einsum("...kj,...k->...j", E, m)


def _check_order(order):
    q = int(order)
    if q != order or q < 1:
        raise LieAlgebraError(f"series order must be an integer >= 1 (number of terms kept), got {order!r}")
    return q


def _series(algebra, x, v, coeffs):
    out = coeffs[0] * np.broadcast_to(v, np.broadcast_shapes(v.shape, x.shape))
    term = v
    for c in coeffs[1:]:
        term = algebra.bracket(x, term)
        if c != 0.0:
            out = out + c * term
    return out


def _phi_matrix(A):
    """phi(A) = sum_k A^k/(k+1)! as the top-right block of expm([[A, I], [0, 0]])."""
    n = A.shape[-1]
    big = np.zeros(A.shape[:-2] + (2 * n, 2 * n))
    big[..., :n, :n] = A
    big[..., :n, n:] = np.eye(n)
    return scipy.linalg.expm(big)[..., :n, n:]


def dexp(algebra, x, v, order=None):
    """dexp_x v = sum_{k>=0} ad_x^k v / (k+1)!; ``order`` q keeps the first q terms (error O(|x|^q)).

    so(3) closed form: dexp_x = I + b X + c X^2 with b = (1 - cos t)/t^2, c = (t - sin t)/t^3.
    """
    x = algebra._check_vec(x, "x")
    v = algebra._check_vec(v, "v")
    if order is not None:
        q = _check_order(order)
        return _series(algebra, x, v, [1.0 / math.factorial(k + 1) for k in range(q)])
    if _closed(algebra) == "so3":
        t2 = np.sum(x * x, axis=-1)
        _, b = _so3_coeffs(t2)
        c = _so3_c(t2)
        c1 = np.cross(x, v)
        return v + b[..., None] * c1 + c[..., None] * np.cross(x, c1)
    P = _phi_matrix(algebra.ad(x))
    return np.einsum("...ij,...j->...i", P, np.broadcast_to(v, np.broadcast_shapes(v.shape, x.shape)))


def dexpinv(algebra, x, v, order=None):
    """dexpinv_x v = sum_k B_k/k! ad_x^k v; ``order`` q keeps the first q terms (k < q, error O(|x|^q)).

    so(3) closed form: dexpinv_x = I - X/2 + d X^2 with d = (1 - (t/2) cot(t/2))/t^2 (valid for
    |x| < 2 pi). Otherwise phi(ad x) u = v is solved exactly.
    """
    x = algebra._check_vec(x, "x")
    v = algebra._check_vec(v, "v")
    if order is not None:
        return _series(algebra, x, v, bernoulli_coefficients(_check_order(order)))
    if _closed(algebra) == "so3":
        d = _so3_d(np.sum(x * x, axis=-1))
        c1 = np.cross(x, v)
        return v - 0.5 * c1 + d[..., None] * np.cross(x, c1)
    P = _phi_matrix(algebra.ad(x))
    vb = np.broadcast_to(v, np.broadcast_shapes(v.shape, x.shape))
    return np.linalg.solve(P, vb[..., None])[..., 0]
