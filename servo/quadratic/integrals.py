"""First integrals, time change to a linear system, and real equilibria of x' = v(x), v quadratic.

- Linear integral l.x:        l.v(x) == 0      <=>  sum_i l_i Q[i] = 0 (a p x p symmetric identity).
- Quadratic integral x^T S x:  x^T S v(x) == 0  <=>  Sym_{(a,j,k)} sum_i S[a,i] Q[i,j,k] = 0.
- Time change (Kozlov's lectures, slide "Общие свойства приведенных систем"): if v(x) = l(x) A x, then
  d tau = l(x) dt turns x' = v(x) into the linear system dx/dtau = A x. For p = 2 a line of
  equilibria l(x) = 0 forces this form (each v_i vanishes on l = 0, so l divides v_i).
"""
from __future__ import annotations

from itertools import combinations_with_replacement, permutations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import minimize_scalar

from ..errors import NotLinearizableError
from .protocol import QuadraticField

__all__ = ["linear_first_integrals", "quadratic_first_integrals", "linear_integral_conditions",
           "quadratic_integral_conditions", "nullspace_rows", "time_change_to_linear",
           "min_speed_on_sphere", "NotLinearizableError"]


def nullspace_rows(M: ArrayLike, rtol: float = 1e-10) -> NDArray[np.float64]:
    """Orthonormal basis (rows) of the null space of a numeric matrix M, singular values below rtol * max."""
    M = np.asarray(M, dtype=float)
    if M.size == 0:
        return np.zeros((0, M.shape[1]))
    _, s, vh = np.linalg.svd(M)
    smax = s[0] if s.size and s[0] > 0 else 1.0
    rank = int(np.sum(s > rtol * smax))
    return vh[rank:]


def linear_integral_conditions(Q: Any, p: int) -> list[list[Any]]:
    """The conditions on l for l.x to be a first integral of x' = v(x): sum_i l_i Q[i,j,k] = 0, one row per
    pair j <= k (Q numeric or sympy)."""
    return [[Q[i, j, k] for i in range(p)] for j in range(p) for k in range(j, p)]


def quadratic_integral_conditions(Q: Any, p: int) -> tuple[list[tuple[int, int]], list[list[Any]]]:
    """The conditions on a symmetric S for x^T S x to be a first integral: d/dt x^T S x = 2 x^T S v(x) = 0
    identically, i.e. the full symmetrisation over (a, j, k) of sum_i S[a,i] Q[i,j,k] vanishes.

    Returns (pairs, rows): the free entries s_ab = S[a,b] = S[b,a], a <= b, and one row of coefficients of
    the s_ab per monomial x_l x_j x_k (l <= j <= k). Works for numeric and sympy Q."""
    pairs = [(a, b) for a in range(p) for b in range(a, p)]
    rows = []
    for l, j, k in combinations_with_replacement(range(p), 3):
        perms = set(permutations((l, j, k)))
        row = []
        for a, b in pairs:
            coef = 0
            for x, y, z in perms:   # S[x, i] depends on s_ab iff {x, i} = {a, b}
                if x == a:
                    coef += Q[b, y, z]
                if x == b and a != b:
                    coef += Q[a, y, z]
            row.append(coef)
        rows.append(row)
    return pairs, rows


def linear_first_integrals(q: QuadraticField, rtol: float = 1e-10) -> NDArray[np.float64]:
    """Basis (rows l, orthonormal) of the linear first integrals l.x of x' = v(x).

    Condition (:func:`linear_integral_conditions`): sum_i l_i Q[i, j, k] = 0 for all j, k. Returns an
    array of shape (r, p).
    """
    p = q.p
    Q = np.asarray(q.Q)
    if np.abs(Q).max() == 0:
        return np.eye(p)
    return nullspace_rows(np.array(linear_integral_conditions(Q, p), dtype=float), rtol)


def quadratic_first_integrals(q: QuadraticField, rtol: float = 1e-10) -> list[NDArray[np.float64]]:
    """Basis of the quadratic first integrals x^T S x of x' = v(x): a list of symmetric S, orthonormal in the
    Frobenius norm (the null space of :func:`quadratic_integral_conditions` in the coordinates s_aa and
    sqrt(2) s_ab)."""
    Q = np.asarray(q.Q, dtype=float)
    p = q.p
    pairs, rows = quadratic_integral_conditions(Q, p)
    scale = np.array([1.0 if a == b else np.sqrt(0.5) for a, b in pairs])
    if np.abs(Q).max() == 0:
        null = np.eye(len(pairs))
    else:
        null = nullspace_rows(np.array(rows, dtype=float) * scale, rtol)
    out = []
    for v in null:
        S = np.zeros((p, p))
        for (a, b), x in zip(pairs, v * scale):
            S[a, b] = S[b, a] = x
        out.append(S)
    return out


def _factor_with(q, l):
    """Least-squares A with Q[i] = (l a_i^T + a_i l^T)/2, and the relative residual."""
    p = q.p
    l = np.asarray(l, dtype=float)
    # Sym(l a^T)/2 is linear in a: build the (p*p, p) matrix of that map
    K = np.stack([0.5 * (np.outer(l, e) + np.outer(e, l)).ravel() for e in np.eye(p)], axis=1)
    Qf = np.asarray(q.Q, dtype=float).reshape(p, p * p)
    A = np.linalg.lstsq(K, Qf.T, rcond=None)[0].T       # row i = a_i
    res = np.linalg.norm(np.einsum("ij,jk->ik", A, K.T) - Qf) / max(np.linalg.norm(Qf), 1e-300)
    return A, float(res)


def time_change_to_linear(q: QuadraticField, l: ArrayLike | None = None, rtol: float = 1e-9
                          ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Write v(x) = l(x) A x and return (l, A): with d tau = l(x) dt the system is dx/dtau = A x.

    l may be given; otherwise for p = 2 it is taken from a real line of equilibria xi (l = J xi,
    J the rotation by 90 degrees), and for p > 2 it is the common direction of the ranges of two
    random combinations of the Q[i] (each Q[i] = Sym(l a_i^T) has range span(l, a_i)).
    Raises NotLinearizableError with the residual if no such factorisation exists.
    """
    if q.is_real is False:
        raise NotLinearizableError("time change needs a real system")
    cands = []
    if l is not None:
        cands = [np.asarray(l, dtype=float)]
    elif q.p == 1:
        cands = [np.ones(1)]
    elif q.p == 2:
        for L in q.invariant_lines():
            if L.is_real and L.is_equilibrium_line:
                cands.append(np.array([-L.direction[1], L.direction[0]]))
    else:
        rng = np.random.default_rng(0)
        Qf = np.asarray(q.Q, dtype=float)
        M1 = np.einsum("i,ijk->jk", rng.normal(size=q.p), Qf)
        M2 = np.einsum("i,ijk->jk", rng.normal(size=q.p), Qf)
        U1 = np.linalg.svd(M1)[0][:, :2]
        U2 = np.linalg.svd(M2)[0][:, :2]
        s, vh = np.linalg.svd(np.hstack([U1, -U2]))[1:]
        cands = [U1 @ vh[-1][:2]]
    best = (None, None, np.inf)
    for c in cands:
        if np.linalg.norm(c) == 0:
            continue
        c = c / np.linalg.norm(c)
        A, res = _factor_with(q, c)
        if res < best[2]:
            best = (c, A, res)
    if best[0] is None or best[2] > rtol:
        raise NotLinearizableError(
            f"v(x) is not of the form l(x) A x: best factorisation residual |Q - Sym(l A)|/|Q| = "
            f"{best[2]:.3g} > {rtol:g} ({len(cands)} candidate hyperplane(s) of equilibria)")
    return best[0], best[1]


def min_speed_on_sphere(q: QuadraticField, starts: int = 256, iters: int = 60, seed: int = 0
                        ) -> tuple[float, NDArray[np.float64]]:
    """min |v(xi)| over real unit xi, and the minimiser: an independent check for real equilibria.

    p = 2: dense scan of the angle plus a bounded refinement; p > 2: batched Levenberg-Marquardt on
    the sphere from `starts` random points (residual v(xi), step in the tangent space, then
    renormalise), quadratically convergent at a real zero of v. Returns (value, xi); cached on q.
    """
    cache = q.__dict__.setdefault("_min_speed_cache", {})
    key = (starts, iters, seed)
    if key in cache:
        return cache[key]
    p = q.p
    if p == 1:
        out = (float(abs(q.Q[0, 0, 0])), np.ones(1))
    elif p == 2:
        th = np.linspace(0, np.pi, 2001)
        X = np.stack([np.cos(th), np.sin(th)], axis=-1)
        sp_ = np.linalg.norm(q.v(X), axis=-1)
        i = int(np.argmin(sp_))
        r = minimize_scalar(lambda t: np.linalg.norm(q.v(np.array([np.cos(t), np.sin(t)]))),
                            bounds=(th[max(i - 1, 0)], th[min(i + 1, len(th) - 1)]), method="bounded",
                            options={"xatol": 1e-14})
        xi = np.array([np.cos(r.x), np.sin(r.x)])
        out = (float(min(r.fun, sp_[i])), xi if r.fun <= sp_[i] else X[i])
    else:
        rng = np.random.default_rng(seed)
        x = rng.normal(size=(starts, p))
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        mu = np.full(starts, 1e-3 * _scale_of(q) ** 2)
        eye = np.eye(p)
        for _ in range(iters):
            v = q.v(x)
            P = eye - x[:, :, None] * x[:, None, :]
            JP = q.jacobian(x) @ P
            H = (np.swapaxes(JP, 1, 2) @ JP + mu[:, None, None] * eye
                 + _scale_of(q) ** 2 * x[:, :, None] * x[:, None, :])
            d = -np.linalg.solve(H, (np.swapaxes(JP, 1, 2) @ v[..., None]))[..., 0]
            xn = x + d
            xn /= np.linalg.norm(xn, axis=1, keepdims=True)
            better = np.sum(q.v(xn) ** 2, axis=1) < np.sum(v ** 2, axis=1)
            x[better] = xn[better]
            mu = np.clip(np.where(better, mu * 0.3, mu * 4), 1e-14 * _scale_of(q) ** 2, 1e6 * _scale_of(q) ** 2)
        val = np.linalg.norm(q.v(x), axis=1)
        i = int(np.argmin(val))
        out = (float(val[i]), x[i])
    cache[key] = out
    return out


def _scale_of(q):
    return max(float(np.abs(q.Q).max()), 1e-300)
