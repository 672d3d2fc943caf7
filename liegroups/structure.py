"""Structure invariants of a Lie algebra: derived and lower central series, centre, Killing signature,
unimodularity and the generic rank of the Lie-Poisson tensor.

These are the invariants of the classification of real low-dimensional Lie algebras (Bianchi types,
see Ellis and MacCallum (1969), table 1; Cartan's criteria, Humphreys (1972), *Introduction to Lie
Algebras*, sections 4.3 and 5.1). They are mixed into :class:`LieAlgebra`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

#: relative tolerance used to decide ranks (singular values below it count as zero)
RANK_RTOL = 1e-9


def _span(vectors, tol):
    """Orthonormal basis (rows) of the span of the given row vectors."""
    vectors = np.asarray(vectors, dtype=float)
    if vectors.size == 0:
        return np.zeros((0, vectors.shape[-1] if vectors.ndim == 2 else 0))
    _, s, vt = np.linalg.svd(vectors, full_matrices=False)
    r = int(np.sum(s > tol * max(1.0, s[0] if s.size else 1.0)))
    return vt[:r]


class StructureMixin:
    """Invariants computed from ``self._C`` (structure constants, shape (n, n, n))."""

    def _scale(self):
        return max(1.0, float(np.max(np.abs(self._C))))

    def subalgebra_bracket(self, U: ArrayLike, V: ArrayLike) -> NDArray[np.float64]:
        """Orthonormal basis (rows) of span{[u, v]: u in rows of U, v in rows of V}."""
        U = np.atleast_2d(U)
        V = np.atleast_2d(V)
        if U.shape[0] == 0 or V.shape[0] == 0:
            return np.zeros((0, self.dim))
        B = np.einsum("ai,bj,ijk->abk", U, V, self._C).reshape(-1, self.dim)
        return _span(B, RANK_RTOL * self._scale())

    def derived_series(self) -> list[int]:
        """Dimensions of g, [g,g], [[g,g],[g,g]], ... until it stabilises."""
        cur = np.eye(self.dim)
        dims = [self.dim]
        while True:
            nxt = self.subalgebra_bracket(cur, cur)
            dims.append(nxt.shape[0])
            if nxt.shape[0] == cur.shape[0] or nxt.shape[0] == 0:
                return dims
            cur = nxt

    def lower_central_series(self) -> list[int]:
        """Dimensions of g, [g,g], [g,[g,g]], ... until it stabilises."""
        full = np.eye(self.dim)
        cur = full
        dims = [self.dim]
        while True:
            nxt = self.subalgebra_bracket(full, cur)
            dims.append(nxt.shape[0])
            if nxt.shape[0] == cur.shape[0] or nxt.shape[0] == 0:
                return dims
            cur = nxt

    def is_solvable(self) -> bool:
        """True iff the derived series reaches 0."""
        return self.derived_series()[-1] == 0

    def is_nilpotent(self) -> bool:
        """True iff the lower central series reaches 0."""
        return self.lower_central_series()[-1] == 0

    def is_semisimple(self) -> bool:
        """Cartan's criterion: g is semisimple iff the Killing form is non-degenerate."""
        s = np.linalg.svd(self.killing_form(), compute_uv=False)
        return bool(s.min() > RANK_RTOL * self._scale() ** 2)

    def is_unimodular(self) -> bool:
        """True iff tr ad_x = 0 for every x, i.e. sum_k C[i,k,k] = 0 for every i (Bianchi class A)."""
        tr = np.einsum("ikk->i", self._C)
        return bool(np.max(np.abs(tr)) <= RANK_RTOL * self._scale())

    def derived_algebra_dim(self) -> int:
        """dim [g, g]."""
        return self.derived_series()[1]

    def centre_dim(self) -> int:
        """Dimension of the centre {x : [x, y] = 0 for all y}: x central iff sum_i x_i C[i,j,k] = 0."""
        M = self._C.reshape(self.dim, -1).T
        s = np.linalg.svd(M, compute_uv=False)
        return self.dim - int(np.sum(s > RANK_RTOL * self._scale()))

    def killing_signature(self) -> tuple[int, int, int]:
        """(n_plus, n_minus, n_zero): numbers of positive, negative and zero eigenvalues of the Killing form."""
        ev = np.linalg.eigvalsh(self.killing_form())
        tol = RANK_RTOL * max(self._scale() ** 2, float(np.max(np.abs(ev))))
        return (int(np.sum(ev > tol)), int(np.sum(ev < -tol)), int(np.sum(np.abs(ev) <= tol)))

    def generic_rank(self, samples: int = 3, seed: int = 0) -> int:
        """Generic rank of the Lie-Poisson tensor Pi(m) (the maximum over a few random m)."""
        rng = np.random.default_rng(seed)
        P = self.poisson_tensor(rng.standard_normal((samples, self.dim)))
        return int(max(np.linalg.matrix_rank(p, tol=RANK_RTOL * self._scale()) for p in P))

    def expected_casimir_count(self) -> int:
        """n - generic rank of the Poisson tensor: the number of independent (local) Casimirs."""
        return self.dim - self.generic_rank()
