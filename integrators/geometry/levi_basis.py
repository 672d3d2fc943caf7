"""A sparse basis of an algebra with an abelian radical, g = s + r (s semisimple, r an abelian ideal: se(3) =
so(3) + R^3, the Euclidean and Galilean algebras), given in a dense basis.

Such an algebra has no root basis of its own (:mod:`integrators.geometry.root_basis`): the ad of a generic element
has Jordan blocks. But its Levi decomposition gives one (Jacobson (1962), *Lie Algebras*, chapter III: the radical,
the Killing form and Levi's theorem; Humphreys (1972) for the root spaces):

* the radical is r = [g, g]^perp for the Killing form K(x, y) = tr(ad_x ad_y) (in characteristic 0); it is kept
  only when it is abelian and neither 0 nor g;
* a Levi factor s is the graph {v + phi(v)} of a linear phi: V -> r over the orthogonal complement V of r.
  With r abelian it is a subalgebra exactly when, for a basis v_i of V with [v_i, v_j] = sum_k a_ij^k v_k +
  rho_ij (rho_ij in r),  rho_ij + [v_i, phi v_j] - [v_j, phi v_i] = sum_k a_ij^k phi v_k, linear in phi
  (solved by least squares and checked);
* s gets its root basis (:func:`integrators.geometry.root_basis.root_basis`) and a regular element x of its
  Cartan subalgebra; r, a module of s, gets the weight vectors of ad_x (diagonalisable there: x is semisimple),
  the real and imaginary parts of each complex pair, each pair's phase fixed by a bracket [e_a, w] of a root
  vector of s and an earlier weight vector whose weights add up to its own (as the Chevalley alignment of the
  root basis), so that the brackets of s with r land on fewer of the real parts.

se(3) in a random basis: 201 non-zero structure constants -> 18 (its own basis's count; the compiled coadjoint
product then costs three 6 x 6 maps and 18 products), its two quadratic Casimirs 20 -> 6 terms each (the Casimir
projection keeps the dense ones there: the maps in and out cost more). Kept only when cond(T) <= COND_MAX and sparser than C; the constants are cleaned
and checked as the root basis's.
"""

from __future__ import annotations

import numpy as np

from .root_basis import COND_MAX, RootBasis, constants_in, root_basis

_FORMS = {}


def levi_basis(C):
    """The sparse basis (a :class:`integrators.geometry.root_basis.RootBasis`) of structure constants C with an
    abelian radical, or None (module docstring); cached per C."""
    C = np.asarray(C, dtype=float)
    key = (C.shape, C.tobytes())
    if key not in _FORMS:
        _FORMS[key] = _recognise(C)
    return _FORMS[key]


def _bracket(C, x, y):
    return np.einsum("i,j,ijk->k", x, y, C)


def _null(M, tol):
    """Orthonormal basis (columns) of the null space of M, singular values below tol * the largest."""
    _, sv, Vt = np.linalg.svd(M)
    big = sv[0] if sv.size else 0.0
    rank = int(np.sum(sv > tol * big)) if big > 0 else 0
    return Vt[rank:].T


def _radical(C, size):
    """Orthonormal bases (R, V) of the radical [g, g]^perp (Killing form) and of its orthogonal complement, when
    the radical is abelian and neither 0 nor g; else None."""
    n = C.shape[0]
    K = np.einsum("aik,bki->ab", C, C)                 # tr(ad_a ad_b), (ad_a)[k, i] = C[a, i, k]
    derived = C.reshape(n * n, n)
    _, sv, Vt = np.linalg.svd(derived)
    D = Vt[: int(np.sum(sv > 1e-10 * sv[0]))]          # rows: a basis of [g, g]
    R = _null(D @ K, 1e-10)
    nr = R.shape[1]
    if nr == 0 or nr == n:
        return None
    if np.max(np.abs(np.einsum("ia,jb,ijk->abk", R, R, C))) > 1e-10 * size:
        return None                                     # not abelian
    return R, _null(R.T, 1e-12)


def _levi_factor(C, R, V, size):
    """The basis v_i + phi(v_i) of a Levi factor (module docstring), or None when the linear system has no
    solution to round-off."""
    m, nr = V.shape[1], R.shape[1]
    act = [R.T @ np.einsum("i,ijk->kj", V[:, i], C) @ R for i in range(m)]   # R^T ad_(v_i) R
    rows, rhs = [], []
    for i in range(m):
        for j in range(i + 1, m):
            w = _bracket(C, V[:, i], V[:, j])
            a, rho = V.T @ w, R.T @ w
            block = np.zeros((nr, nr * m))              # unknowns: Phi[:, k] (the r-coordinates of phi v_k)
            block[:, j * nr:(j + 1) * nr] += act[i]
            block[:, i * nr:(i + 1) * nr] -= act[j]
            for k in range(m):
                block[:, k * nr:(k + 1) * nr] -= a[k] * np.eye(nr)
            rows.append(block)
            rhs.append(-rho)
    A, b = np.vstack(rows), np.concatenate(rhs)
    phi = np.linalg.lstsq(A, b, rcond=None)[0]
    if np.max(np.abs(A @ phi - b), initial=0.0) > 1e-10 * size:
        return None
    return V + R @ phi.reshape(m, nr).T


def _eig_real(A, scale):
    """(kernel vectors, reals [(value, vector)], pairs [(value with Im > 0, complex vector)]) of a
    diagonalisable A, or None when its eigenvectors are ill conditioned."""
    lam, W = np.linalg.eig(A)
    if not (np.all(np.isfinite(lam)) and np.all(np.isfinite(W))) or np.linalg.cond(W) > COND_MAX ** 2:
        return None
    zero = np.abs(lam) <= 1e-9 * scale
    kernel = _null(A, 1e-9) if np.any(zero) else np.zeros((A.shape[0], 0))
    if kernel.shape[1] != int(np.sum(zero)):
        return None
    reals, pairs = [], []
    for k in range(len(lam)):
        if zero[k]:
            continue
        if abs(lam[k].imag) <= 1e-12 * scale:
            v = W[:, k].real
            reals.append((lam[k].real, v / np.linalg.norm(v)))
        elif lam[k].imag > 0:
            pairs.append((lam[k], W[:, k] / np.linalg.norm(W[:, k])))
    return kernel, reals, pairs


def _recognise(C):
    n = C.shape[0]
    size = float(np.max(np.abs(C))) if C.size else 0.0
    if n < 4 or size == 0.0:
        return None
    found = _radical(C, size)
    if found is None:
        return None
    R, V = found
    L = _levi_factor(C, R, V, size)
    if L is None:
        return None
    m = L.shape[1]
    B = np.hstack([L, R])
    Binv = np.linalg.inv(B)
    Cs = np.einsum("ia,jb,ijk,ck->abc", L, L, C, Binv[:m], optimize=True)   # s in the basis L
    form = root_basis(Cs)
    if form is None:
        return None
    Ts = form.T
    x = L @ (Ts[:, :form.rank] @ np.random.default_rng(0).standard_normal(form.rank))  # regular in a Cartan of s
    ad = np.einsum("j,jik->ki", x, C)
    scale = float(np.max(np.abs(np.linalg.eigvals(ad))))
    if scale == 0.0:
        return None
    on_s = _eig_real(Binv[:m] @ ad @ L, scale)          # ad_x on s (coordinates in L): its complex root vectors
    on_r = _eig_real(R.T @ ad @ R, scale)              # ad_x on r: the weights
    if on_s is None or on_r is None:
        return None
    kernel, reals, pairs = on_r
    roots = [(mu, L @ v) for mu, v in on_s[2]] + [(np.conj(mu), L @ np.conj(v)) for mu, v in on_s[2]]
    earlier = [(0.0, R @ kernel[:, i]) for i in range(kernel.shape[1])] + [(lam, R @ v) for lam, v in reals]
    cols = [R @ kernel[:, i] for i in range(kernel.shape[1])] + [R @ v for _, v in reals]
    for mu, u in sorted(pairs, key=lambda t: abs(t[0])):
        u = R @ u
        for alpha, e in roots:                           # the phase of u from [e_alpha, w], alpha + nu = mu
            hit = next((w for nu, w in earlier if abs(alpha + nu - mu) <= 1e-8 * scale
                        and np.linalg.norm(_bracket(C, e, w)) > 1e-6 * size * np.linalg.norm(w)), None)
            if hit is not None:
                u = _bracket(C, e, hit)
                break
        if min(np.linalg.norm(u.real), np.linalg.norm(u.imag)) <= 1e-8 * np.linalg.norm(u):
            return None
        earlier.append((mu, u))
        cols += [u.real / np.linalg.norm(u.real), u.imag / np.linalg.norm(u.imag)]
    T = np.hstack([L @ Ts, np.array(cols).T])
    Ch = constants_in(C, T, size)
    if Ch is None or np.count_nonzero(Ch) >= np.count_nonzero(C):
        return None
    return RootBasis(T, Ch, form.rank, form.blocks)
