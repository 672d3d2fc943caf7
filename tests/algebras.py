"""Algebras drawn for the tests from a seeded generator (shared by the test modules that need them)."""

from __future__ import annotations

import numpy as np

from liegroups import LieAlgebra


def semidirect_r_rn(D):
    """R x_D R^k: [e_(k+1), e_i] = sum_j D_ij e_j, the others commute (Jacobi holds for any k x k matrix D)."""
    k = len(D)
    n = k + 1
    C = np.zeros((n, n, n))
    for i in range(k):
        C[n - 1, i, :k] = D[i]
        C[i, n - 1, :k] = -D[i]
    return LieAlgebra(C, name=f"R x_D R^{k}")


def random_basis(alg, rng, name=None):
    """``alg`` in the basis Q diag(s) (Q orthogonal from a Gaussian matrix, s uniform in [0.5, 2]), drawn from
    ``rng``."""
    Q = np.linalg.qr(rng.standard_normal((alg.dim, alg.dim)))[0] * rng.uniform(0.5, 2.0, alg.dim)[None, :]
    return alg.change_basis(Q) if name is None else alg.change_basis(Q, name=name)


def sp4():
    """sp(4, R): X = [[A, B], [C, -A^T]], B and C symmetric (10 basis matrices)."""
    mats = []
    for i in range(2):
        for j in range(2):
            X = np.zeros((4, 4))
            X[i, j], X[2 + j, 2 + i] = 1.0, -1.0
            mats.append(X)
    for S in (np.array([[1.0, 0], [0, 0]]), np.array([[0, 1.0], [1.0, 0]]), np.array([[0, 0], [0, 1.0]])):
        for off in ((slice(0, 2), slice(2, 4)), (slice(2, 4), slice(0, 2))):
            X = np.zeros((4, 4))
            X[off] = S
            mats.append(X)
    return LieAlgebra.from_matrices(mats, name="sp(4)")
