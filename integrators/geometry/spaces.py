"""Homogeneous spaces on which the Lie-group methods act: the generator, its action and its bracket.

Every Lie-group method (Lie-Euler, RKMK, commutator-free, Crouch-Grossman) is written once against
this small protocol (Munthe-Kaas 1999; Hairer, Lubich and Wanner 2006, *Geometric Numerical
Integration*, ch. IV.8). A space provides

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

import math

import numpy as np

from liegroups import bernoulli_coefficients, so3_coefficients, so3_dexp_coefficient
from ..core.problems import state_time

_TAYLOR_DEGREE = 12
_TAYLOR_RADIUS = 0.2  # 0.2^13 / 13! ~ 1e-19: truncation far below round-off


def expm_small(M):
    """exp(M) for a batch of small matrices (..., k, k): Taylor series of degree 12 (Horner) on
    M / 2^s with ||M / 2^s||_1 <= 0.2, then s squarings (Moler and Van Loan 2003, method 3).

    Only matrix products (no LAPACK solves), so it is fast and batched for the 3..7-dimensional
    algebras here; one s serves the whole batch.
    """
    X, E, s = _scaled_horner(M, 1)
    for _ in range(s):
        E = E @ E
    return E


def _scaled_horner(M, stop):
    """X = M / 2^s with ||X||_1 <= 0.2, and E = I + X/stop (I + X/(stop+1) (... (I + X/12))) by Horner."""
    M = np.asarray(M, dtype=float)
    norm = float(np.max(np.sum(np.abs(M), axis=-2))) if M.size else 0.0
    s = max(0, math.ceil(math.log2(norm / _TAYLOR_RADIUS))) if norm > _TAYLOR_RADIUS else 0
    X = M / (2.0 ** s)
    eye = np.eye(M.shape[-1])
    E = eye + X / _TAYLOR_DEGREE
    for j in range(_TAYLOR_DEGREE - 1, stop - 1, -1):
        E = eye + (X @ E) / j
    return X, E, s


def _cross(a, b):
    """a x b for (..., 3) arrays (faster than np.cross for small batches)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def _times_hat(M, x):
    """M @ hat(x) for (..., k, 3) M: column j of M hat(x) is (row of M) cross-weighted by x."""
    c0 = M[..., 1] * x[..., 2, None] - M[..., 2] * x[..., 1, None]
    c1 = M[..., 2] * x[..., 0, None] - M[..., 0] * x[..., 2, None]
    c2 = M[..., 0] * x[..., 1, None] - M[..., 1] * x[..., 0, None]
    return np.stack([c0, c1, c2], axis=-1)


def so3_coadjoint_delta(x, m):
    """exp(ad x)^T m - m = -a (x cross m) + b x cross (x cross m), without cancellation."""
    a, b = so3_coefficients(np.einsum("...i,...i->...", x, x))
    c1 = _cross(x, m)
    return -a[..., None] * c1 + b[..., None] * _cross(x, c1)


def so3_coadjoint_exp(x, m):
    """exp(ad x)^T m = R(-x) m = m - a (x cross m) + b x cross (x cross m) (Rodrigues), a = sin t/t,
    b = (1 - cos t)/t^2, t = |x|: the flow of Euler's m' = m x w for x = h w."""
    a, b = so3_coefficients(np.einsum("...i,...i->...", x, x))
    c1 = _cross(x, m)
    return m - a[..., None] * c1 + b[..., None] * _cross(x, c1)


def expm1_small(M):
    """exp(M) - I without cancellation: the Taylor series without its constant term on M / 2^s and
    the squaring D <- D^2 + 2 D (exp(2X) - I = (e^X - I)^2 + 2 (e^X - I))."""
    X, E, s = _scaled_horner(M, 2)
    D = X @ E
    for _ in range(s):
        D = D @ D + 2.0 * D
    return D


_ADT = {}


def adT(algebra, x):
    """ad(x)^T as (..., n, n) from a cached (n, n*n) table: ad(x)^T[j, k] = sum_i x_i C[i, j, k]."""
    key = id(algebra)
    if key not in _ADT:
        n = algebra.dim
        _ADT[key] = (algebra, np.ascontiguousarray(algebra.structure_constants).reshape(n, n * n))
    tab = _ADT[key][1]
    n = algebra.dim
    return (x @ tab).reshape(x.shape[:-1] + (n, n))


def se3_coadjoint_exp(x, z):
    """exp(ad x)^T z on se(3)* with x = (omega, v), z = (M, P): Ad_g^T z = (R^T (M - p x P), R^T P),
    g = exp(x) = (R, p), R = exp(hat omega), p = V(omega) v, V = I + b W + c W^2 (all as cross products)."""
    w, v = x[..., :3], x[..., 3:]
    t2 = np.einsum("...i,...i->...", w, w)
    a, b = so3_coefficients(t2)
    c = so3_dexp_coefficient(t2)
    a, b, c = a[..., None], b[..., None], c[..., None]
    wv = _cross(w, v)
    p = v + b * wv + c * _cross(w, wv)
    M = z[..., :3] - _cross(p, z[..., 3:])
    P = z[..., 3:]

    def rt(y):  # R^T y = R(-omega) y
        wy = _cross(w, y)
        return y - a * wy + b * _cross(w, wy)

    return np.concatenate([rt(M), rt(P)], axis=-1)


def se3_coadjoint_delta(x, z):
    """se3_coadjoint_exp(x, z) - z without cancellation: with rho(y) = R^T y - y,
    dM = rho(M - p x P) - p x P, dP = rho(P)."""
    w, v = x[..., :3], x[..., 3:]
    t2 = np.einsum("...i,...i->...", w, w)
    a, b = so3_coefficients(t2)
    c = so3_dexp_coefficient(t2)
    a, b, c = a[..., None], b[..., None], c[..., None]
    wv = _cross(w, v)
    p = v + b * wv + c * _cross(w, wv)
    pP = _cross(p, z[..., 3:])

    def rho(y):
        wy = _cross(w, y)
        return -a * wy + b * _cross(w, wy)

    return np.concatenate([rho(z[..., :3] - pP) - pP, rho(z[..., 3:])], axis=-1)


#: ``terms`` at or above this: dexp^-1 summed to round-off (the adaptive RKMK pairs); below it the
#: series is truncated after ``terms`` terms (the fixed-step methods' order needs ad^(q-2))
ROUNDOFF_TERMS = 100
#: the largest k of B_k/k! A^k the round-off sum may take (even)
DEXPINV_KMAX = 98
#: the remainder of the round-off sum is below this fraction of |v|_2
DEXPINV_TOL = 2.0 ** -53
#: |B_k / k!| <= 2 zeta(2) / (2 pi)^k = (pi^2 / 3) (2 pi)^-k for even k >= 2 (B_k = (-1)^(k/2+1) 2 zeta(k) k! / (2 pi)^k)
_BOUND = math.pi ** 2 / 3.0
_TWO_PI2 = (2.0 * math.pi) ** 2


def _dexpinv_x2max():
    """The largest x^2 = ||ad_theta||_F^2 / (2 pi)^2 for which the round-off sum stops by k = DEXPINV_KMAX."""
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if dexpinv_order(mid) is None:
            hi = mid
        else:
            lo = mid
    return lo


def dexpinv_order(x2):
    """K, the last (even) k of the round-off sum of dexp^-1 for x^2 = ||ad_theta||_F^2 / (2 pi)^2: the
    smallest even K >= 2 with (pi^2/3) x^(K+2) / (1 - x^2) <= 2^-53 (the bound of the remainder
    sum_{even k > K} |B_k/k!| ||A||^k |v| relative to |v|, ||A||_2 <= ||A||_F = ||ad_theta||_F);
    None when that K exceeds DEXPINV_KMAX (theta too large: then dexp^-1 is NaN and the step is
    rejected)."""
    if not x2 < 1.0:
        return None
    lim = DEXPINV_TOL * (1.0 - x2) / _BOUND
    K, xk = 2, x2 * x2
    while xk > lim:
        K += 2
        xk *= x2
        if K > DEXPINV_KMAX:
            return None
    return K


#: ||ad_theta||_F^2 / (2 pi)^2 above which the round-off sum needs more than DEXPINV_KMAX (~ 0.46)
DEXPINV_X2MAX = _dexpinv_x2max()

#: the floor of ||ad_x||^2 relative to ||ad*_(.) u||^2 in the rescaled bound of dexp^-1 in g x g*
#: (:meth:`integrators.codegen.affine_source.AffineSource.dexpinv`; its lam at most 2^50: x = 0 with u non-zero, where
#: ad_theta is nilpotent, takes the shortest sum)
AFFINE_SCALE_FLOOR = 2.0 ** -100


def adnorm_form(C):
    """G with theta^T G theta = ||ad_theta||_F^2 = sum_{i,k} (sum_j theta_j C[j, i, k])^2."""
    C = np.asarray(C, dtype=float)
    return np.einsum("aik,bik->ab", C, C)


def dexpinv_series(bracket, theta, v, terms):
    """dexp^-1_theta(v) = sum_k B_k/k! A^k v, A v = bracket(theta, v) (Bernoulli numbers, B_1 = -1/2;
    the Taylor coefficients of z / (e^z - 1); Munthe-Kaas 1999; Hairer, Lubich and Wanner 2006, IV.8).

    ``terms`` < ROUNDOFF_TERMS: truncated after ``terms`` terms (k < terms); RKMK of order q needs
    ad^(q-2), and a fixed-step method is defined with its truncation. ``terms`` >= ROUNDOFF_TERMS
    (the adaptive pairs, whose error estimate cannot see a truncation shared by both solutions):
    summed to round-off, i.e. up to the K of :func:`dexpinv_order` for x^2 = ||ad_theta||_F^2 / (2 pi)^2,
    ||ad_theta||_F^2 = sum_i |bracket(theta, e_i)|^2 (the largest over a batch), which bounds the
    rest by 2^-53 |v|_2 since |B_k/k!| <= (pi^2/3) (2 pi)^-k; NaN when no K <= DEXPINV_KMAX does
    (||ad_theta||_F > 4.27); there this reference solves phi_1(A) u = v (phi_1(A) = (e^A - 1)/A = dexp,
    singular at rho(ad_theta) = 2 pi) while the generated code answers NaN, which rejects the step
    (so the two paths can take different steps after an attempt that large). The generated code (:meth:`integrators.codegen.writer.Source.dexpinv`)
    sums the same series with the same K, or its closed form on so(3), the 3-dimensional algebras
    with ad^3 = q ad and their sums, and se(3) (:mod:`integrators.geometry.closed_dexpinv`; equal to
    round-off where the K exists, NaN elsewhere).
    """
    if int(terms) >= ROUNDOFF_TERMS:
        return _dexpinv_roundoff(bracket, theta, v)
    coeffs = bernoulli_coefficients(int(terms))
    out = v
    term = v
    for c in coeffs[1:]:
        term = bracket(theta, term)
        if c != 0.0:
            out = out + c * term
    return out


def _dexpinv_roundoff(bracket, theta, v):
    theta = np.asarray(theta, dtype=float)
    n = theta.shape[-1]
    cols = bracket(theta[..., None, :], np.eye(n))  # row i: bracket(theta, e_i)
    x2 = float(np.max(np.sum(cols * cols, axis=(-2, -1)))) / _TWO_PI2 if theta.size else 0.0
    K = dexpinv_order(x2) if x2 == x2 else None
    coeffs = bernoulli_coefficients(DEXPINV_KMAX + 1)
    term = bracket(theta, v)
    out = v + coeffs[1] * term
    for k in range(2, (K or 0) + 1):
        term = bracket(theta, term)
        if coeffs[k] != 0.0:
            out = out + coeffs[k] * term
    if K is not None:
        return out
    # beyond the bound (||ad_theta||_F > 4.2): the exact value phi_1(A)^-1 v, phi_1(A) = (e^A - 1)/A the
    # upper right block of exp([[A, I], [0, 0]]); the generated code answers NaN there (the step is rejected)
    A = np.swapaxes(cols, -1, -2)
    M = np.zeros(A.shape[:-2] + (2 * n, 2 * n))
    M[..., :n, :n] = A
    M[..., :n, n:] = np.eye(n)
    phi1 = expm_small(M)[..., :n, n:]
    return np.linalg.solve(phi1, np.broadcast_to(v, A.shape[:-1])[..., None])[..., 0]


def dexpinv_closed_coefficient(q):
    """E(q) = sum_{k>=1} B_2k/(2k)! q^(k-1) = ((r/2) coth(r/2) - 1)/q, r^2 = q (for q = -t^2:
    (1 - (t/2) cot(t/2))/t^2): dexp^-1 = 1 - A/2 + E(q) A^2 when A^3 = q A (so(3): q = -|theta|^2).
    Reference values for the tests (the closed form at |q| >= 4, the series to q^17 below)."""
    q = np.asarray(q, dtype=float)
    small = np.abs(q) < 4.0
    ser = np.polynomial.polynomial.polyval(q, bernoulli_coefficients(38)[2::2])
    qs = np.where(small, 1.0, q)
    r = np.sqrt(np.abs(qs))
    half = np.where(qs > 0, 0.5 * r / np.tanh(0.5 * r), 0.5 * r / np.tan(0.5 * r))
    return np.where(small, ser, (half - 1.0) / qs)


class CoadjointSpace:
    """z' = ad*_{w(z)} z on g* (Lie-Poisson); act = coadjoint_exp, bracket = -[x, y]."""

    preserves = frozenset({"casimirs"})

    def __init__(self, problem):
        self.problem = problem
        self.algebra = problem.algebra
        self.velocity = problem.velocity
        self.timed = getattr(problem, "time_dependent", False)   # velocity(t, z)
        self.so3 = self.algebra.closed_form == "so3"
        self.se3 = self.algebra.closed_form == "se3"
        self.xdim = self.algebra.dim

    def field(self, t, z):
        return self.velocity(state_time(t, z), z) if self.timed else self.velocity(z)

    def act(self, x, z):
        if self.so3:
            return so3_coadjoint_exp(x, z)
        if self.se3:
            return se3_coadjoint_exp(x, z)
        E = expm_small(adT(self.algebra, x))  # exp(ad(x)^T) = exp(ad x)^T
        return np.einsum("...ij,...j->...i", E, z)

    def act_delta(self, x, z):
        """act(x, z) - z computed without cancellation (for compensated summation)."""
        if self.so3:
            return so3_coadjoint_delta(x, z)
        if self.se3:
            return se3_coadjoint_delta(x, z)
        D = expm1_small(adT(self.algebra, x))
        return np.einsum("...ij,...j->...i", D, z)

    def bracket(self, x, y):
        if self.so3:
            return -_cross(x, y)
        # [x, y]_k = sum_j y_j ad(x)^T[j, k]
        return -np.einsum("...j,...jk->...k", y, adT(self.algebra, x))

    def to_state(self, x, z):
        """The state change of a generator to leading order, ad*_x z (the error estimate of an adaptive pair)."""
        return self.algebra._coad(x, z)


class AffineCoadjointSpace:
    """z' = ad*_{w(z)} z + f(z): generator (w, f) in g x g*, affine action exp(A) z + phi_1(A) v."""

    preserves = frozenset()

    def __init__(self, problem):
        self.problem = problem
        self.algebra = problem.algebra
        self.n = self.algebra.dim
        self.so3 = self.algebra.closed_form == "so3"
        self.xdim = 2 * self.n

    def field(self, t, z):
        p = self.problem
        timed = getattr(p, "time_dependent", False)   # velocity(t, z), forcing(t, z)
        t = state_time(t, z) if timed else t
        w = p.velocity(t, z) if timed else p.velocity(z)
        f = np.broadcast_to(p.forcing(t, z) if timed else p.forcing(z), w.shape)
        return np.concatenate([w, f], axis=-1)

    def act(self, xi, z):
        n = self.n
        x, v = xi[..., :n], xi[..., n:]
        if self.so3:
            # A = ad(x)^T = -hat(x); phi_1(A) v = v + b A v + c A^2 v, c = (1 - a)/t^2
            t2 = np.einsum("...i,...i->...", x, x)
            a, b = so3_coefficients(t2)
            c = so3_dexp_coefficient(t2)
            c1 = _cross(x, z)
            ez = z - a[..., None] * c1 + b[..., None] * _cross(x, c1)
            d1 = _cross(x, v)
            return ez + v - b[..., None] * d1 + c[..., None] * _cross(x, d1)
        E = expm_small(self._affine_generator(x, v, z))
        return np.einsum("...ij,...j->...i", E[..., :n, :n], z) + E[..., :n, n]

    def _affine_generator(self, x, v, z):
        """[[ad(x)^T, v], [0, 0]]: its exponential applies the affine flow z' = ad*_x z + v for unit time."""
        n = self.n
        A = adT(self.algebra, x)
        shape = np.broadcast_shapes(A.shape[:-2], z.shape[:-1], v.shape[:-1])
        M = np.zeros(shape + (n + 1, n + 1))
        M[..., :n, :n] = A
        M[..., :n, n] = v
        return M

    def act_delta(self, xi, z):
        """act(xi, z) - z without cancellation."""
        n = self.n
        if self.so3:
            return self.act(xi, z) - z
        x, v = xi[..., :n], xi[..., n:]
        D = expm1_small(self._affine_generator(x, v, z))
        return np.einsum("...ij,...j->...i", D[..., :n, :n], z) + D[..., :n, n]

    def bracket(self, p, q):
        """[(x1, v1), (x2, v2)] = (-[x1, x2], ad*_{x1} v2 - ad*_{x2} v1), by the algebra's unchecked products
        (a stage that overflows is rejected or reported by the loop, not raised here)."""
        n = self.n
        x1, v1, x2, v2 = p[..., :n], p[..., n:], q[..., :n], q[..., n:]
        alg = self.algebra
        return np.concatenate([-alg._bilinear(x1, x2, transpose=False), alg._coad(x1, v2) - alg._coad(x2, v1)],
                              axis=-1)

    def to_state(self, xi, z):
        """The state change of a generator to leading order, d/ds act(s xi, z) at s = 0 = ad*_x z + v (the
        error estimate of an adaptive pair maps its generator error so)."""
        n = self.n
        return self.algebra._coad(xi[..., :n], z) + xi[..., n:]


class GroupSpace:
    """g' = g w(t) on a matrix group (SO3, SE2, SE3): act(x, g) = g exp(hat x), bracket = -[x, y]."""

    preserves = frozenset({"group"})

    def __init__(self, group, velocity):
        self.group = group
        self.algebra = group.algebra
        self.velocity = velocity
        self.so3 = group.name == "SO3"
        self.se3_alg = group.name == "SE3"
        self.xdim = group.dim

    def field(self, t, g):
        return np.asarray(self.velocity(t), dtype=float)

    def act(self, x, g):
        if self.so3:
            # g (I + a X + b X^2) = g + a (g X) + b (g X) X, X = hat x (Rodrigues)
            a, b = so3_coefficients(np.einsum("...i,...i->...", x, x))
            gX = _times_hat(g, x)
            return g + a[..., None, None] * gX + b[..., None, None] * _times_hat(gX, x)
        if self.group.name == "SE3":
            w, v = x[..., :3], x[..., 3:]
            t2 = np.einsum("...i,...i->...", w, w)
            a, b = so3_coefficients(t2)
            c = so3_dexp_coefficient(t2)
            R = g[..., :3, :3]
            RX = _times_hat(R, w)
            wv = _cross(w, v)
            Vv = v + b[..., None] * wv + c[..., None] * _cross(w, wv)
            out = np.array(np.broadcast_to(g, np.broadcast_shapes(g.shape, x.shape[:-1] + (4, 4))))
            out[..., :3, :3] = R + a[..., None, None] * RX + b[..., None, None] * _times_hat(RX, w)
            out[..., :3, 3] = g[..., :3, 3] + np.einsum("...ij,...j->...i", R, Vv)
            return out
        return g @ self.group.exp(x)

    def act_delta(self, x, g):
        """g exp(hat x) - g; for SO(3) a (g X) + b (g X) X without cancellation."""
        if self.so3:
            a, b = so3_coefficients(np.einsum("...i,...i->...", x, x))
            gX = _times_hat(g, x)
            return a[..., None, None] * gX + b[..., None, None] * _times_hat(gX, x)
        return self.act(x, g) - g

    def bracket(self, x, y):
        if self.so3:
            return -_cross(x, y)
        if self.se3_alg:  # [(w1, v1), (w2, v2)] = (w1 x w2, w1 x v2 - w2 x v1)
            w1, v1, w2, v2 = x[..., :3], x[..., 3:], y[..., :3], y[..., 3:]
            return -np.concatenate([_cross(w1, w2), _cross(w1, v2) - _cross(w2, v1)], axis=-1)
        return -np.einsum("...j,...jk->...k", y, adT(self.algebra, x))
