"""First integrals, time change to a linear system, and real equilibria of x' = v(x), v quadratic.

- Linear integral l.x:        l.v(x) == 0      <=>  sum_i l_i Q[i] = 0 (a p x p symmetric identity).
- Quadratic integral x^T S x:  x^T S v(x) == 0  <=>  Sym_{(a,j,k)} sum_i S[a,i] Q[i,j,k] = 0.
- Time change (Kozlov's lectures, slide "Общие свойства приведенных систем"): if v(x) = l(x) A x, then
  d tau = l(x) dt turns x' = v(x) into the linear system dx/dtau = A x. For p = 2 a line of
  equilibria l(x) = 0 forces this form (each v_i vanishes on l = 0, so l divides v_i).
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import minimize, minimize_scalar
from ..errors import NotLinearizableError

__all__ = ["linear_first_integrals", "quadratic_first_integrals", "time_change_to_linear",
           "min_speed_on_sphere", "NotLinearizableError"]


def _nullspace(M, rtol):
    """Orthonormal basis (rows) of the null space of M, singular values below rtol * max."""
    if M.size == 0:
        return np.zeros((0, M.shape[1]))
    _, s, vh = np.linalg.svd(M)
    smax = s[0] if s.size and s[0] > 0 else 1.0
    rank = int(np.sum(s > rtol * smax))
    return vh[rank:]


def linear_first_integrals(q, rtol=1e-10):
    """Basis (rows l, orthonormal) of the linear first integrals l.x of x' = v(x).

    Condition: sum_i l_i Q[i, j, k] = 0 for all j, k. Returns an array of shape (r, p).
    """
    p = q.p
    M = np.asarray(q.Q).reshape(p, p * p).T          # rows (j, k), columns i
    if np.abs(M).max() == 0:
        return np.eye(p)
    return _nullspace(M, rtol)


def _sym_basis(p):
    basis = []
    for a in range(p):
        for b in range(a, p):
            E = np.zeros((p, p))
            E[a, b] = E[b, a] = 1.0 if a == b else np.sqrt(0.5)
            basis.append(E)
    return basis


def _cubic_of(S, Q):
    """Fully symmetrised tensor of T[a,j,k] = sum_i S[a,i] Q[i,j,k] (coefficients of x^T S v(x))."""
    T = np.einsum("ai,ijk->ajk", S, Q)
    return (T + T.transpose(1, 2, 0) + T.transpose(2, 0, 1)) / 3


def quadratic_first_integrals(q, rtol=1e-10):
    """Basis of the quadratic first integrals x^T S x of x' = v(x): a list of symmetric S.

    Condition: d/dt x^T S x = 2 x^T S v(x) = 0 identically, i.e. the fully symmetrised tensor of
    sum_i S[a,i] Q[i,j,k] vanishes; solved as a null space (S orthonormal in the Frobenius norm).
    """
    Q = np.asarray(q.Q, dtype=float)
    basis = _sym_basis(q.p)
    M = np.stack([_cubic_of(E, Q).ravel() for E in basis], axis=1)
    if np.abs(Q).max() == 0:
        return basis
    null = _nullspace(M, rtol)
    return [sum(c * E for c, E in zip(row, basis)) for row in null]


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


def time_change_to_linear(q, l=None, rtol=1e-9):
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


def min_speed_on_sphere(q, starts=256, iters=60, seed=0):
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
