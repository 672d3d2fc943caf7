"""The relation A^d = sum_{j<d} c_j(x) A^j of A = -ad_x, found from the structure constants.

The characteristic polynomial of ad_x is ad-invariant, so (Cayley-Hamilton) ad_x obeys a relation of
degree d <= n whose coefficients are invariant polynomials of x. :func:`invariant_forms` finds the
invariant linear and quadratic forms of the algebra, and :func:`ad_relation` the relation with
coefficients polynomial in them, by least squares at random x, accepted only if it holds to 1e-10 at
other random x (d = 3 on the 3-dimensional simple algebras and se(2), 5 on so(4) and se(3), 2 on the
Heisenberg algebra). The code generator (:class:`integrators.codegen.writer.Source`) folds every power A^k,
k >= d, into A^0..A^(d-1) with it.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from liegroups.casimirs import _rref_float


_RELATIONS = {}


def invariant_forms(C, tol=1e-10):
    """(linear, quadratic): the linear forms f with f([x, y]) = 0 (rows) and the symmetric forms Q with
    Q([z, x], y) + Q(x, [z, y]) = 0 (ad-invariant), bases of the null spaces in reduced row echelon
    form (sparse in a sparse basis)."""
    C = np.asarray(C, dtype=float)
    n = C.shape[0]
    scale = max(1.0, float(np.max(np.abs(C)))) if C.size else 1.0
    lin_forms = _null_rows(C.reshape(n * n, n), tol * scale)
    iu = [(a, b) for a in range(n) for b in range(a, n)]
    cols = []
    for a, b in iu:  # Q = E_ab + E_ba: T[i, j, k] = sum_l C[i, j, l] Q[l, k] + C[i, k, l] Q[j, l]
        Q = np.zeros((n, n))
        Q[a, b] = Q[b, a] = 1.0
        cols.append((np.einsum("ijl,lk->ijk", C, Q) + np.einsum("ikl,jl->ijk", C, Q)).ravel())
    # quadratic forms not in the span of products of linear ones (those are monomials already)
    span = [np.array([0.5 * (f[a] * g[b] + f[b] * g[a]) for a, b in iu]) for f in lin_forms for g in lin_forms]
    quad = []
    for row in _null_rows(np.array(cols).T, tol * scale):
        if span:
            S = np.array(span)
            coef, *_ = np.linalg.lstsq(S.T, row, rcond=None)
            if np.max(np.abs(S.T @ coef - row)) <= 1e-10 * np.max(np.abs(row)):
                continue
        span.append(row)
        Q = np.zeros((n, n))
        for (a, b), v in zip(iu, row):
            Q[a, b] = Q[b, a] = v
        quad.append(Q)
    return lin_forms, quad


def _null_rows(M, tol):
    """A basis of {x: M x = 0} as rows in reduced row echelon form, entries below 1e-13 set to 0."""
    if M.shape[1] == 0:
        return np.zeros((0, 0))
    _, s, Vt = np.linalg.svd(M, full_matrices=True)
    rank = int(np.sum(s > tol))
    _, N, _ = _rref_float(Vt[rank:])  # Gauss-Jordan with partial pivoting
    N[np.abs(N) < 1e-13] = 0.0
    return np.vectorize(_snap)(N) if N.size else N


def _snap(a):
    """a, or the rational p/q (q <= 1000) within 1e-13 |a| of it (a fitted coefficient such as
    -1.0000000000000004 becomes -1)."""
    if a == 0.0:
        return 0.0
    f = Fraction(a).limit_denominator(1000)
    return float(f) if abs(float(f) - a) <= 1e-13 * abs(a) else a


def _pmul(p, q):
    """Product of polynomials {sorted tuple of generator indices: coefficient}."""
    out = {}
    for m1, a in p.items():
        for m2, b in q.items():
            m = tuple(sorted(m1 + m2))
            out[m] = out.get(m, 0.0) + a * b
    return out


def _padd(p, q):
    out = dict(p)
    for m, b in q.items():
        out[m] = out.get(m, 0.0) + b
    return out


def _monomials(degs, e, start=0):
    """Tuples of generator indices (non-decreasing) whose degrees sum to e."""
    if e == 0:
        return [()]
    out = []
    for i in range(start, len(degs)):
        if degs[i] <= e:
            out += [(i,) + m for m in _monomials(degs, e - degs[i], i)]
    return out


def ad_relation(C, dmax, samples=40, seed=2024):
    """(d, gens, poly) with A^d = sum_{j<d} c_j(x) A^j for A = -ad_x and every x (d <= dmax, the
    smallest such d), c_j a polynomial in the invariant linear and quadratic forms of the algebra
    (:func:`invariant_forms`): gens = [(1, f) or (2, Q)], poly = {j: [(generators, coefficient)]};
    None when there is none. The coefficients of the characteristic polynomial of ad_x are
    ad-invariant polynomials of x (Cayley-Hamilton), e.g. ad_x^3 = -|x|^2 ad_x on so(3),
    ad^5 = -(|a|^2 + |b|^2) ad^3 - |a|^2 |b|^2 ad on so(4) = so(3) + so(3) and
    ad^5 = -2|w|^2 ad^3 - |w|^4 ad on se(3); found by least squares at random x and accepted when it
    holds to 1e-10 at other random x (relative to |A^d|)."""
    C = np.asarray(C, dtype=float)
    key = (C.tobytes(), C.shape)
    if key not in _RELATIONS:  # the smallest d <= n (Cayley-Hamilton gives d = n when any)
        _RELATIONS[key] = _find_relation(C, C.shape[0], samples, seed)
    out = _RELATIONS[key]
    return out if out is not None and out[0] <= dmax else None


def _find_relation(C, dmax, samples, seed):
    n = C.shape[0]
    L, Qs = invariant_forms(C)
    gens = [(1, f) for f in L] + [(2, Q) for Q in Qs]
    degs = [k for k, _ in gens]
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((2 * samples, n))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    A = -np.einsum("si,ijk->skj", X, C)
    G = np.array([[x @ f if k == 1 else x @ f @ x for k, f in gens] for x in X]).reshape(2 * samples, len(gens))
    powers = [np.broadcast_to(np.eye(n), A.shape)]
    for d in range(1, dmax + 1):
        powers.append(powers[-1] @ A)
        cols, labels = [], []
        for j in range(d):
            for mono in _monomials(degs, d - j):
                cols.append(np.prod(G[:, list(mono)], axis=1)[:, None, None] * powers[j])
                labels.append((j, mono))
            if len(cols) > 200:
                return None
        target = powers[d]
        if not cols:
            if np.max(np.abs(target)) <= 1e-12:
                return d, [], {}
            continue
        M = np.stack([c[:samples].ravel() for c in cols], axis=1)
        coef, *_ = np.linalg.lstsq(M, target[:samples].ravel(), rcond=1e-12)
        coef[np.abs(coef) < 1e-12 * max(1.0, np.max(np.abs(coef)))] = 0.0
        check = sum((a * c[samples:] for a, c in zip(coef, cols) if a != 0.0), np.zeros_like(target[samples:]))
        if np.max(np.abs(check - target[samples:])) <= 1e-10 * max(1.0, float(np.max(np.abs(target)))):
            used = sorted({i for (j, mono), a in zip(labels, coef) if a != 0.0 for i in mono})
            ren = {i: k for k, i in enumerate(used)}
            poly = {}
            for (j, mono), a in zip(labels, coef):
                if a != 0.0:
                    poly.setdefault(j, []).append((tuple(ren[i] for i in mono), _snap(float(a))))
            return d, [gens[i] for i in used], poly
    return None
