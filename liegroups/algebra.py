"""Lie algebras given by structure constants.

Conventions (shared by the whole library, see the README):

* basis e_1..e_n, structure constants ``C[i, j, k]`` with [e_i, e_j] = sum_k C[i,j,k] e_k;
* ``ad(x)`` is the matrix with ``ad(x) @ y == bracket(x, y)``, i.e. ad(x)[k, j] = sum_i x_i C[i,j,k];
* momenta m live in g*, the pairing is (m, w) = sum_i m_i w_i, and the coadjoint operator is
  (ad*_x m)_j = sum_{i,k} x_i C[i,j,k] m_k, i.e. ad*_x = ad(x)^T;
* Euler-Poincare equations for T = (I w, w)/2 read m' = ad*_w m, m = I w; for so(3) with C = epsilon
  this is Euler's m' = m x w (Kozlov, servo-constraint slides, "Systems on Lie groups");
* the Lie-Poisson tensor is Pi_ij(m) = sum_k C[i,j,k] m_k, and F is a Casimir iff Pi(m) grad F = 0.

Every numeric method takes arrays of shape (..., n) and broadcasts over the leading (batch) axes.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
import scipy.linalg

from .errors import LieAlgebraError, StructureConstantsError

#: relative tolerance for the identities checked at construction
DEFAULT_RTOL = 1e-10


def _as_structure_constants(C):
    try:
        arr = np.asarray(C, dtype=float)
    except (TypeError, ValueError) as exc:
        raise StructureConstantsError(
            "shape", f"structure constants must be a numeric array of shape (n, n, n): {exc}"
        ) from exc
    if arr.ndim != 3 or not (arr.shape[0] == arr.shape[1] == arr.shape[2]) or arr.shape[0] == 0:
        raise StructureConstantsError(
            "shape", f"structure constants must have shape (n, n, n) with n >= 1, got {arr.shape}"
        )
    bad = np.argwhere(~np.isfinite(arr))
    if bad.size:
        i, j, k = (int(v) for v in bad[0])
        raise StructureConstantsError(
            "finite",
            f"structure constants must be finite: C[{i},{j},{k}] = {arr[i, j, k]} "
            f"({len(bad)} non-finite entries)",
            indices=(i, j, k),
        )
    return arr


def jacobi_residual(C):
    """Jacobi tensor J[i,j,k,m]: the e_m component of [e_i,[e_j,e_k]] + [e_j,[e_k,e_i]] + [e_k,[e_i,e_j]].

    J = sum_l C[j,k,l] C[i,l,m] + C[k,i,l] C[j,l,m] + C[i,j,l] C[k,l,m].
    """
    t = np.einsum("jkl,ilm->ijkm", C, C)
    return t + np.transpose(t, (1, 2, 0, 3)) + np.transpose(t, (2, 0, 1, 3))


def check_structure_constants(C, rtol=DEFAULT_RTOL):
    """Validate structure constants; return them as a float array or raise StructureConstantsError.

    Checks, in order: shape (n, n, n), finite entries, antisymmetry C[i,j,k] = -C[j,i,k] to
    ``rtol * max|C|``, and the Jacobi identity to ``rtol * max|C|**2``. The error names the identity,
    the worst indices and the residual.
    """
    C = _as_structure_constants(C)
    scale = float(np.max(np.abs(C))) or 1.0
    asym = C + np.transpose(C, (1, 0, 2))
    worst = np.unravel_index(int(np.argmax(np.abs(asym))), asym.shape)
    res = float(abs(asym[worst]))
    tol = rtol * scale
    if res > tol:
        i, j, k = (int(v) for v in worst)
        raise StructureConstantsError(
            "antisymmetry",
            f"antisymmetry C[i,j,k] = -C[j,i,k] fails at (i,j,k) = ({i},{j},{k}): "
            f"C[{i},{j},{k}] + C[{j},{i},{k}] = {asym[worst]:.3e} (tolerance {tol:.1e})",
            indices=(i, j, k), residual=res, tolerance=tol,
        )
    J = jacobi_residual(C)
    worst = np.unravel_index(int(np.argmax(np.abs(J))), J.shape)
    res = float(abs(J[worst]))
    tol = rtol * scale**2 * C.shape[0]
    if res > tol:
        i, j, k, m = (int(v) for v in worst)
        raise StructureConstantsError(
            "jacobi",
            f"Jacobi identity fails for (e_{i}, e_{j}, e_{k}) (0-based indices): the e_{m} component of "
            f"[e_i,[e_j,e_k]] + cyclic is {J[worst]:.3e} (tolerance {tol:.1e})",
            indices=(i, j, k, m), residual=res, tolerance=tol,
        )
    return C


def _span(vectors, tol):
    """Orthonormal basis (rows) of the span of the given row vectors."""
    vectors = np.asarray(vectors, dtype=float)
    if vectors.size == 0:
        return np.zeros((0, vectors.shape[-1] if vectors.ndim == 2 else 0))
    u, s, vt = np.linalg.svd(vectors, full_matrices=False)
    r = int(np.sum(s > tol * max(1.0, s[0] if s.size else 1.0)))
    return vt[:r]


class LieAlgebra:
    """A finite-dimensional real Lie algebra given by its structure constants.

    Parameters
    ----------
    C : array_like, shape (n, n, n)
        Structure constants, [e_i, e_j] = sum_k C[i,j,k] e_k.
    basis : sequence of str, optional
        Names of the basis vectors (default ``e1..en``).
    name : str, optional
    rtol : float
        Relative tolerance of the antisymmetry and Jacobi checks.

    Raises
    ------
    StructureConstantsError
        If the shape is wrong, an entry is not finite, or antisymmetry / Jacobi fails.
    """

    def __init__(self, C, basis=None, name=None, rtol=DEFAULT_RTOL):
        C = check_structure_constants(C, rtol=rtol)
        n = C.shape[0]
        if basis is None:
            basis = tuple(f"e{i + 1}" for i in range(n))
        basis = tuple(str(b) for b in basis)
        if len(basis) != n:
            raise LieAlgebraError(f"basis has {len(basis)} names but the algebra has dimension {n}")
        self._C = C
        self._C.setflags(write=False)
        self.basis = basis
        self.name = name or f"Lie algebra of dimension {n}"
        self.rtol = rtol
        self._casimir_cache = {}

    # ------------------------------------------------------------------ data
    @property
    def dim(self):
        """Dimension n of the algebra."""
        return self._C.shape[0]

    @property
    def structure_constants(self):
        """Read-only array C of shape (n, n, n): [e_i, e_j] = sum_k C[i,j,k] e_k."""
        return self._C

    def __repr__(self):
        return f"LieAlgebra(name={self.name!r}, dim={self.dim})"

    @cached_property
    def _ad_basis(self):
        # A[i] = ad(e_i): A[i][k, j] = C[i, j, k]
        return np.ascontiguousarray(np.transpose(self._C, (0, 2, 1)))

    @cached_property
    def _terms(self):
        """Non-zero entries of C as (i, j, c) lists per output index k (bracket) and as (i, k, c)
        lists per output index j (coadjoint), for fast batched sums over large batches."""
        C = self._C
        tol = self.rtol * (float(np.max(np.abs(C))) or 1.0)
        nz = [tuple(int(v) for v in t) for t in np.argwhere(np.abs(C) > tol)]
        br = [[(i, j, float(C[i, j, k])) for i, j, kk in nz if kk == k] for k in range(self.dim)]
        co = [[(i, k, float(C[i, j, k])) for i, jj, k in nz if jj == j] for j in range(self.dim)]
        return br, co

    def _check_vec(self, x, what="x"):
        x = np.asarray(x, dtype=float)
        if x.shape[-1:] != (self.dim,):
            raise LieAlgebraError(
                f"{what} must have last axis of length {self.dim} (the dimension of {self.name}), "
                f"got shape {x.shape}"
            )
        return x

    # ------------------------------------------------------------ operations
    def bracket(self, x, y):
        """Lie bracket [x, y]_k = sum_{i,j} x_i y_j C[i,j,k], batched over leading axes."""
        x = self._check_vec(x, "x")
        y = self._check_vec(y, "y")
        return self._bilinear(x, y, transpose=False)

    def _bilinear(self, x, y, transpose):
        # transpose=False: out_k = sum x_i y_j C[i,j,k]; True: out_j = sum x_i C[i,j,k] y_k
        shape = np.broadcast_shapes(x.shape, y.shape)
        batch = int(np.prod(shape[:-1], dtype=np.int64))
        if batch >= 256:
            out = np.zeros(shape)
            for k, terms in enumerate(self._terms[1 if transpose else 0]):
                for i, j, c in terms:
                    if c == 1.0:
                        out[..., k] += x[..., i] * y[..., j]
                    elif c == -1.0:
                        out[..., k] -= x[..., i] * y[..., j]
                    else:
                        out[..., k] += c * (x[..., i] * y[..., j])
            return out
        if not transpose:
            return np.einsum("...i,...j,ijk->...k", x, y, self._C)
        return np.einsum("...i,...k,ijk->...j", x, y, self._C)

    def ad(self, x):
        """Matrix of ad_x, shape (..., n, n), with ad(x) @ y = [x, y]: ad(x)[k, j] = sum_i x_i C[i,j,k]."""
        x = self._check_vec(x)
        return np.tensordot(x, self._ad_basis, axes=([-1], [0]))

    def coad(self, x, m):
        """Coadjoint operator (ad*_x m)_j = sum_{i,k} x_i C[i,j,k] m_k = (ad(x)^T m)_j, batched.

        Euler-Poincare: m' = coad(w, m). For so(3) this is m x w.
        """
        x = self._check_vec(x, "x")
        m = self._check_vec(m, "m")
        return self._bilinear(x, m, transpose=True)

    def poisson_tensor(self, m):
        """Lie-Poisson tensor Pi_ij(m) = {m_i, m_j} = sum_k C[i,j,k] m_k, shape (..., n, n)."""
        m = self._check_vec(m, "m")
        return np.tensordot(m, np.transpose(self._C, (2, 0, 1)), axes=([-1], [0]))

    def killing_form(self):
        """Killing form K_ij = tr(ad e_i ad e_j) = sum_{a,b} C[i,a,b] C[j,b,a]."""
        return np.einsum("iab,jba->ij", self._C, self._C)

    # ----------------------------------------------------------- structure
    def _tol(self):
        return 1e-9

    def subalgebra_bracket(self, U, V):
        """Orthonormal basis (rows) of span{[u, v]: u in rows of U, v in rows of V}."""
        U = np.atleast_2d(U)
        V = np.atleast_2d(V)
        if U.shape[0] == 0 or V.shape[0] == 0:
            return np.zeros((0, self.dim))
        B = np.einsum("ai,bj,ijk->abk", U, V, self._C).reshape(-1, self.dim)
        return _span(B, self._tol())

    def derived_series(self):
        """Dimensions of g, [g,g], [[g,g],[g,g]], ... until it stabilises."""
        cur = np.eye(self.dim)
        dims = [self.dim]
        while True:
            nxt = self.subalgebra_bracket(cur, cur)
            dims.append(nxt.shape[0])
            if nxt.shape[0] == cur.shape[0] or nxt.shape[0] == 0:
                return dims
            cur = nxt

    def lower_central_series(self):
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

    def is_solvable(self):
        """True iff the derived series reaches 0."""
        return self.derived_series()[-1] == 0

    def is_nilpotent(self):
        """True iff the lower central series reaches 0."""
        return self.lower_central_series()[-1] == 0

    def is_semisimple(self):
        """Cartan's criterion: the Killing form is non-degenerate."""
        K = self.killing_form()
        s = np.linalg.svd(K, compute_uv=False)
        scale = max(1.0, float(np.max(np.abs(self._C))) ** 2)
        return bool(s.min() > 1e-9 * scale)

    def derived_algebra_dim(self):
        """dim [g, g]."""
        return self.derived_series()[1]

    def centre_dim(self):
        """Dimension of the centre {x : [x, y] = 0 for all y}."""
        # x central iff sum_i x_i C[i,j,k] = 0 for all j,k
        M = self._C.reshape(self.dim, -1).T
        s = np.linalg.svd(M, compute_uv=False) if M.size else np.zeros(0)
        scale = max(1.0, float(np.max(np.abs(self._C))))
        return self.dim - int(np.sum(s > 1e-9 * scale))

    def killing_signature(self):
        """(n_plus, n_minus, n_zero) of the Killing form."""
        ev = np.linalg.eigvalsh(self.killing_form())
        scale = max(1.0, float(np.max(np.abs(ev))) if ev.size else 1.0)
        tol = 1e-9 * scale
        return (int(np.sum(ev > tol)), int(np.sum(ev < -tol)), int(np.sum(np.abs(ev) <= tol)))

    def generic_rank(self, samples=3, seed=0):
        """Generic rank of the Poisson tensor Pi(m) (max over random m)."""
        rng = np.random.default_rng(seed)
        m = rng.standard_normal((samples, self.dim))
        P = self.poisson_tensor(m)
        scale = max(1.0, float(np.max(np.abs(self._C))))
        return int(max(np.linalg.matrix_rank(p, tol=1e-9 * scale) for p in P))

    def expected_casimir_count(self):
        """n - generic rank of the Poisson tensor: the number of independent (local) Casimirs."""
        return self.dim - self.generic_rank()

    # ------------------------------------------------------------ Casimirs
    def casimirs(self, max_degree=4):
        """Independent polynomial Casimir functions up to ``max_degree``.

        F is a Casimir iff sum_{j,k} C[i,j,k] m_k dF/dm_j = 0 for every i. Found by linear algebra on
        the homogeneous monomials of each degree (exact rational arithmetic when C is rational), then
        reduced to a functionally independent set. Returns a :class:`CasimirList` (a list) whose
        ``expected`` is n - generic rank of Pi(m) and whose ``warning`` says when polynomials up to
        ``max_degree`` do not reach that number.
        """
        from .casimirs import find_casimirs

        key = int(max_degree)
        if key not in self._casimir_cache:
            self._casimir_cache[key] = find_casimirs(self, key)
        return self._casimir_cache[key]

    # ----------------------------------------------------------- group side
    def exp_ad(self, x):
        """exp(ad x) = Ad_{exp x}, shape (..., n, n), via scipy.linalg.expm (batched)."""
        from .exponential import exp_ad

        return exp_ad(self, x)

    def Ad(self, x):
        """Adjoint action of exp(x) on g as a matrix: Ad_{exp x} = exp(ad x)."""
        return self.exp_ad(x)

    def coadjoint_exp(self, x, m):
        """Coadjoint action generated by ad*: exp(ad(x)^T) m = Ad_{exp x}^T m.

        d/dt coadjoint_exp(t x, m) at t = 0 is coad(x, m), and every Casimir is invariant.
        """
        from .exponential import coadjoint_exp

        return coadjoint_exp(self, x, m)

    def dexp(self, x, v, order=None):
        """Derivative of exp (right trivialised): dexp_x v = sum_k ad_x^k v / (k+1)! = phi(ad x) v.

        ``order=None`` uses the exact matrix function; an integer q truncates the series after ad_x^(q-1).
        """
        from .exponential import dexp

        return dexp(self, x, v, order=order)

    def dexpinv(self, x, v, order=None):
        """Inverse of dexp: dexpinv_x v = sum_k B_k / k! ad_x^k v (Bernoulli numbers, B_1 = -1/2).

        ``order=None`` solves phi(ad x) u = v exactly; an integer q truncates the Bernoulli series after
        ad_x^(q-1) (q terms), which is what a Runge-Kutta-Munthe-Kaas method of order q needs.
        """
        from .exponential import dexpinv

        return dexpinv(self, x, v, order=order)

    # -------------------------------------------------------- constructors
    @classmethod
    def from_matrices(cls, matrices, basis=None, name=None, rtol=DEFAULT_RTOL):
        """Structure constants of the span of the given (linearly independent) matrices.

        Solves [X_i, X_j] = sum_k C[i,j,k] X_k by least squares; raises LieAlgebraError if the
        matrices are dependent or the span is not closed under the commutator (naming the pair and
        the residual).
        """
        mats = np.asarray(matrices)
        if mats.ndim != 3 or mats.shape[1] != mats.shape[2]:
            raise LieAlgebraError(f"from_matrices needs a list of square matrices, got shape {mats.shape}")
        n = mats.shape[0]
        complex_input = np.iscomplexobj(mats)
        flat = mats.reshape(n, -1)
        if complex_input:
            flat = np.concatenate([flat.real, flat.imag], axis=1)
        flat = flat.astype(float)
        rank = np.linalg.matrix_rank(flat)
        if rank < n:
            raise LieAlgebraError(f"the {n} matrices are linearly dependent (rank {rank})")
        C = np.zeros((n, n, n))
        scale = max(1.0, float(np.max(np.abs(flat))))
        for i in range(n):
            for j in range(n):
                comm = mats[i] @ mats[j] - mats[j] @ mats[i]
                target = comm.reshape(-1)
                if complex_input:
                    target = np.concatenate([target.real, target.imag])
                target = target.astype(float)
                coef, *_ = np.linalg.lstsq(flat.T, target, rcond=None)
                res = float(np.max(np.abs(flat.T @ coef - target))) if target.size else 0.0
                if res > 1e-9 * scale**2:
                    raise LieAlgebraError(
                        f"span of the matrices is not closed under the commutator: [X_{i}, X_{j}] "
                        f"is off the span by {res:.3e}"
                    )
                C[i, j] = coef
        C[np.abs(C) < 1e-13] = 0.0
        C = np.round(C, 12)
        return cls(C, basis=basis, name=name, rtol=rtol)

    def change_basis(self, P, name=None):
        """The same algebra in the basis f_a = sum_i P[a, i] e_i (P invertible).

        C'[a,b,c] = sum P[a,i] P[b,j] C[i,j,k] (P^-1)[k,c].
        """
        P = np.asarray(P, dtype=float)
        Pinv = np.linalg.inv(P)
        C2 = np.einsum("ai,bj,ijk,kc->abc", P, P, self._C, Pinv)
        return LieAlgebra(C2, name=name or f"{self.name} (new basis)", rtol=max(self.rtol, 1e-8))
