"""The algebras of the benchmarks' seeded draw (benchmarks/drawn_systems.py): their builders and the draw itself.

Import-light on purpose (numpy and liegroups only, nothing else at import time): the fresh processes of
benchmarks/build_time.py import this module to build their algebras, and its "with imports" figure must count
the package's imports, not a benchmark's (drawn_systems pulls in scipy). It imports nothing from the rest of
benchmarks/, so it loads both as ``benchmarks._drawn_algebras`` and, with benchmarks/ on sys.path, as
``_drawn_algebras`` (build_time's children run against another tree's liegroups that way).
"""

from __future__ import annotations

import numpy as np
from liegroups import LieAlgebra, named


def random_basis(rng, alg):
    """``alg`` in the basis P = Q diag(s) (``change_basis``): Q a random rotation (QR of a Gaussian matrix), s
    uniform in [0.5, 2]; named "<name> (random basis)"."""
    n = alg.dim
    Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    return alg.change_basis(Q * rng.uniform(0.5, 2.0, n)[None, :], name=f"{alg.name} (random basis)")


def sl3():
    return named.sl(3)


def sp4():
    """sp(4, R) = {X : X^T J + J X = 0}, J = [[0, 1], [-1, 0]] (2 x 2 blocks): X = [[A, B], [C, -A^T]], B, C
    symmetric; 4 + 3 + 3 = 10 basis matrices."""
    mats = []

    def block(A=None, B=None, C=None):
        X = np.zeros((4, 4))
        if A is not None:
            X[:2, :2], X[2:, 2:] = A, -A.T
        if B is not None:
            X[:2, 2:] = B
        if C is not None:
            X[2:, :2] = C
        return X

    for i in range(2):
        for j in range(2):
            E = np.zeros((2, 2))
            E[i, j] = 1.0
            mats.append(block(A=E))
    for S in (np.array([[1.0, 0], [0, 0]]), np.array([[0, 1.0], [1.0, 0]]), np.array([[0, 0], [0, 1.0]])):
        mats += [block(B=S), block(C=S)]
    return LieAlgebra.from_matrices(mats, name="sp(4)")


def solvable_triangular(rng, k, r):
    """n(k) (strictly upper triangular k x k) plus r random diagonal matrices: solvable, dim k(k-1)/2 + r."""
    mats = []
    for i in range(k):
        for j in range(i + 1, k):
            X = np.zeros((k, k))
            X[i, j] = 1.0
            mats.append(X)
    for _ in range(r):
        mats.append(np.diag(rng.uniform(-1.0, 1.0, k)))
    return LieAlgebra.from_matrices(mats, name=f"n({k})+{r} diag")


def almost_abelian(rng, n):
    """R x_D R^(n-1): [e_n, e_i] = sum_j D[i, j] e_j for i < n, the e_i (i < n) commute; D random."""
    C = np.zeros((n, n, n))
    D = rng.uniform(-1.0, 1.0, (n - 1, n - 1))
    for i in range(n - 1):
        C[n - 1, i, :n - 1] = D[i]
        C[i, n - 1, :n - 1] = -D[i]
    return LieAlgebra(C, name=f"R x_D R^{n - 1}")


def bianchi(rng):
    """A Bianchi type drawn from II..IX; VI_a with |a| in [1.2, 3], VII_a with a in [0.1, 2] (two decimals)."""
    t = str(rng.choice(["II", "III", "IV", "V", "VI", "VI0", "VII", "VII0", "VIII", "IX"]))
    a = None
    if t == "VI":
        a = float(np.round(rng.choice([-1, 1]) * rng.uniform(1.2, 3.0), 2))
    elif t == "VII":
        a = float(np.round(rng.uniform(0.1, 2.0), 2))
    return named.bianchi(t, a=a)


def draw(seed, quick):
    """[(label, builder)]: the algebras of the draw, built on demand (the cold-start runs rebuild one)."""
    rng = np.random.default_rng(seed)
    fams = [("so(5)", lambda: named.so(5)), ("sp(4)", sp4), ("sl(3)", sl3), ("so(4)", named.so4), ("se(3)", named.se3)]
    specs = []
    for _ in range(2):
        s = int(rng.integers(1 << 30))
        specs.append(("bianchi", s))
    for _ in range(2):
        specs.append(("solvable", int(rng.integers(1 << 30))))
    out = []
    for name, make in fams:
        s = int(rng.integers(1 << 30))
        out.append((name, make))
        out.append((f"{name} random basis", lambda make=make, s=s: random_basis(np.random.default_rng(s), make())))
    for i, (kind, s) in enumerate(specs):
        if kind == "bianchi":
            alg = bianchi(np.random.default_rng(s))
            if i == 0:
                out.append((alg.name, lambda alg=alg: alg))
            else:
                out.append((f"{alg.name} random basis",
                            lambda alg=alg, s=s: random_basis(np.random.default_rng(s + 1), alg)))
        else:
            r2 = np.random.default_rng(s)
            if r2.random() < 0.5:
                k = int(r2.choice([3, 4]))
                r = int(r2.integers(0, k + 1)) if k == 3 else int(r2.integers(0, 5))
                label = f"solvable n({k})+{r} diag, random basis"
                out.append((label, lambda s=s, k=k, r=r: random_basis(
                    np.random.default_rng(s + 2), solvable_triangular(np.random.default_rng(s + 1), k, r))))
            else:
                n = int(r2.integers(3, 11))
                label = f"solvable R x_D R^{n - 1}, random basis"
                out.append((label, lambda s=s, n=n: random_basis(
                    np.random.default_rng(s + 2), almost_abelian(np.random.default_rng(s + 1), n))))
    # interleaved (so that a cut of the numba budget keeps variety): so(4), Bianchi, se(3) random basis,
    # solvable, sl(3), so(5) random basis, sp(4), so(4) random basis, Bianchi random basis, se(3),
    # solvable, sl(3) random basis, so(5), sp(4) random basis
    order = [out[i] for i in (6, 10, 9, 12, 4, 1, 2, 7, 11, 8, 13, 5, 0, 3)]
    if quick:
        order = [order[0], order[1], order[3]]     # so(4), a Bianchi type, a random solvable one
    return order
