"""Lie algebras given by structure constants.

Conventions (shared by the whole library):

* basis e_1..e_n, structure constants ``C[i, j, k]`` with [e_i, e_j] = sum_k C[i,j,k] e_k;
* ``ad(x)`` is the matrix with ``ad(x) @ y == bracket(x, y)``, i.e. ad(x)[k, j] = sum_i x_i C[i,j,k];
* momenta m live in g*, the pairing is (m, w) = sum_i m_i w_i, and the coadjoint operator is
  (ad*_x m)_j = sum_{i,k} x_i C[i,j,k] m_k, i.e. ad*_x = ad(x)^T;
* Euler-Poincare equations for T = (I w, w)/2 read m' = ad*_w m, m = I w; for so(3) with C = epsilon
  this is Euler's m' = m x w (Kozlov, lecture slides on servo-constraints, "Systems on Lie groups");
* the Lie-Poisson tensor is Pi_ij(m) = sum_k C[i,j,k] m_k, and F is a Casimir iff Pi(m) grad F = 0.

Every numeric method takes arrays of shape (..., n) and broadcasts over the leading (batch) axes.
"""

from __future__ import annotations

from fractions import Fraction
from collections.abc import Sequence
from functools import cached_property


import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import exponential
from .casimirs import CasimirList, find_casimirs
from .closed_forms import closed_form_kind
from .display import algebra_markdown
from .errors import LieAlgebraError
from .structure import StructureMixin
from .validation import DEFAULT_RTOL, check_structure_constants, jacobi_residual  # noqa: F401 (re-export)
from .validation import all_finite, check_finite, real_array

#: below this many vectors in a batch the einsum path is faster than the unrolled one
_UNROLL_MIN_BATCH = 64


class LieAlgebra(StructureMixin):
    """A finite-dimensional real Lie algebra given by its structure constants.

    .. math::

        [e_i, e_j] = \\sum_k C_{ij}^{k}\\, e_k, \\qquad
        \\operatorname{ad}(x)\\, y = [x, y], \\qquad
        (\\operatorname{ad}^*_x m)_j = \\sum_{i,k} x_i\\, C_{ij}^{k}\\, m_k .

    Parameters
    ----------
    C : array_like, shape (n, n, n)
        Structure constants, [e_i, e_j] = sum_k C[i,j,k] e_k (copied, then frozen).
    basis : sequence of str, optional
        Names of the basis vectors (default ``e1..en``).
    name : str, optional
    rtol : float
        Relative tolerance of the antisymmetry and Jacobi checks.
    closed_forms : bool
        Use the closed forms of so(3), se(2), se(3) when C is theirs (see :attr:`closed_form`);
        False forces the general matrix-function paths (the reference the closed forms are tested
        against).

    Raises
    ------
    StructureConstantsError
        If the shape is wrong, an entry is not finite, or antisymmetry / Jacobi fails.
    """

    def __init__(self, C: ArrayLike, basis: Sequence[str] | None = None, name: str | None = None,
                 rtol: float = DEFAULT_RTOL, closed_forms: bool = True) -> None:
        C = check_structure_constants(C, rtol=rtol)
        n = C.shape[0]
        if basis is None:
            basis = tuple(f"e{i + 1}" for i in range(n))
        basis = tuple(str(b) for b in basis)
        if len(basis) != n:
            raise LieAlgebraError(f"basis has {len(basis)} names but the algebra has dimension {n}")
        C.setflags(write=False)
        self._C = C
        self.basis = basis
        self.name = name or f"Lie algebra of dimension {n}"
        self.rtol = rtol
        self._casimir_cache: dict[int, CasimirList] = {}
        self._closed_kind = closed_form_kind(C) if closed_forms else None

    # ------------------------------------------------------------------ data
    @property
    def dim(self) -> int:
        """Dimension n of the algebra."""
        return self._C.shape[0]

    @property
    def structure_constants(self) -> NDArray[np.float64]:
        """Read-only array C of shape (n, n, n): [e_i, e_j] = sum_k C[i,j,k] e_k."""
        return self._C

    @property
    def closed_form(self) -> str | None:
        """"so3", "se2", "se3" or None: which closed forms (Rodrigues, the SE(2) / SE(3) exponentials,
        the so(3) dexp / dexp^-1, the integrators' fast paths) apply. Decided from the structure
        constants: C equal (to round-off, 1e-13) to those of the named algebra in its documented basis
        (:mod:`liegroups.named`), whatever the algebra is called or how it was built; e.g.
        ``LieAlgebra.from_matrices`` of the hat matrices of e1, e2, e3 is "so3"."""
        return self._closed_kind

    def __repr__(self):
        return f"LieAlgebra(name={self.name!r}, dim={self.dim})"

    def _repr_markdown_(self):
        """Notebook summary: name, dimension, basis, type, Casimirs (:mod:`liegroups.display`)."""
        return algebra_markdown(self)

    @cached_property
    def _ad_basis(self):
        # A[i] = ad(e_i): A[i][k, j] = C[i, j, k]
        return np.ascontiguousarray(np.transpose(self._C, (0, 2, 1)))

    @cached_property
    def _terms(self):
        """Exactly non-zero entries of C as (i, j, c) lists per output index k (bracket) and as
        (i, k, c) lists per output index j (coadjoint), for the unrolled sums over large batches."""
        C = self._C
        nz = [tuple(int(v) for v in t) for t in np.argwhere(C != 0.0)]
        br = [[(i, j, float(C[i, j, k])) for i, j, kk in nz if kk == k] for k in range(self.dim)]
        co = [[(i, k, float(C[i, j, k])) for i, jj, k in nz if jj == j] for j in range(self.dim)]
        return br, co

    def _check_vec(self, x, what="x"):
        """x as a float array (..., n) with finite entries; LieAlgebraError naming the problem (complex,
        non-numeric, wrong last axis, NaN or inf)."""
        x = real_array(x, what)
        if not all_finite(x):
            check_finite(x, what)
        if x.shape[-1:] != (self.dim,):
            raise LieAlgebraError(
                f"{what} must have last axis of length {self.dim} (the dimension of {self.name}), "
                f"got shape {x.shape}"
            )
        return x

    # ------------------------------------------------------------ operations
    def bracket(self, x: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
        """Lie bracket [x, y]_k = sum_{i,j} x_i y_j C[i,j,k], batched over leading axes."""
        x = self._check_vec(x, "x")
        y = self._check_vec(y, "y")
        return self._bilinear(x, y, transpose=False)

    def _bilinear(self, x, y, transpose):
        """transpose=False: out_k = sum x_i y_j C[i,j,k]; True: out_j = sum x_i C[i,j,k] y_k.

        Small batches contract x with C first (one matrix product, C as an (n, n*n) matrix) and the result
        with y (a batched matrix-vector product): 4x faster than einsum on 30 states of so(5). Large
        batches loop over the non-zero entries of C (structure constants are sparse: 6 of 27 for so(3)),
        one fused multiply and one add per entry into preallocated buffers, which is as fast as a
        hand-written cross product. In a generic basis (more than 2 n^2 non-zero entries: ~n^3 in a random
        one) large batches contract x with C as one matrix product and the result with y in one einsum
        (10^4 states of a random-basis se(3): 216 entries, 3.5 ms by the loop, 0.4 ms so).
        """
        n = self.dim
        small = max(x.size, y.size) < _UNROLL_MIN_BATCH * n
        if not small and sum(len(t) for t in self._terms[0]) > 2 * n * n:
            shape = np.broadcast_shapes(x.shape, y.shape)
            x2 = np.broadcast_to(x, shape).reshape(-1, n)
            y2 = np.broadcast_to(y, shape).reshape(-1, n)
            A = (x2 @ self._C.reshape(n, n * n)).reshape(-1, n, n)            # A[b, j, k] = x_i C[i, j, k]
            out = np.einsum("bjk,bk->bj", A, y2) if transpose else np.einsum("bj,bjk->bk", y2, A)
            return out.reshape(shape)
        if small:
            A = (x @ self._C.reshape(n, n * n)).reshape(x.shape[:-1] + (n, n))   # A[..., j, k] = x_i C[i, j, k]
            if not transpose:
                return (y[..., None, :] @ A)[..., 0, :]
            return (A @ y[..., None])[..., 0]
        shape = np.broadcast_shapes(x.shape, y.shape)
        out = np.empty(shape)
        tmp = np.empty(shape[:-1])
        for k, terms in enumerate(self._terms[1 if transpose else 0]):
            col = out[..., k]
            if not terms:
                col[...] = 0.0
                continue
            for t, (i, j, c) in enumerate(terms):
                np.multiply(x[..., i], y[..., j], out=tmp)
                if c not in (1.0, -1.0):
                    tmp *= c
                if t == 0:
                    if c == -1.0:
                        np.negative(tmp, out=col)
                    else:
                        col[...] = tmp
                elif c == -1.0:
                    np.subtract(col, tmp, out=col)
                else:
                    np.add(col, tmp, out=col)
        return out

    def ad(self, x: ArrayLike) -> NDArray[np.float64]:
        """Matrix of ad_x, shape (..., n, n), with ad(x) @ y = [x, y]: ad(x)[k, j] = sum_i x_i C[i,j,k]."""
        x = self._check_vec(x)
        return np.tensordot(x, self._ad_basis, axes=([-1], [0]))

    def coad(self, x: ArrayLike, m: ArrayLike) -> NDArray[np.float64]:
        """Coadjoint operator (ad*_x m)_j = sum_{i,k} x_i C[i,j,k] m_k = (ad(x)^T m)_j, batched.

        Euler-Poincare: m' = coad(w, m). For so(3) this is m x w.
        """
        x = self._check_vec(x, "x")
        m = self._check_vec(m, "m")
        return self._bilinear(x, m, transpose=True)

    def _coad(self, x, m):
        """coad without the input checks, for the right-hand sides of integrators (whose stages may
        overflow: the integrator then reports status -1)."""
        return self._bilinear(np.asarray(x, dtype=float), np.asarray(m, dtype=float), transpose=True)

    def poisson_tensor(self, m: ArrayLike) -> NDArray[np.float64]:
        """Lie-Poisson tensor Pi_ij(m) = {m_i, m_j} = sum_k C[i,j,k] m_k, shape (..., n, n)."""
        m = self._check_vec(m, "m")
        return np.tensordot(m, np.transpose(self._C, (2, 0, 1)), axes=([-1], [0]))

    def killing_form(self) -> NDArray[np.float64]:
        """Killing form K_ij = tr(ad e_i ad e_j) = sum_{a,b} C[i,a,b] C[j,b,a]."""
        return np.einsum("iab,jba->ij", self._C, self._C)

    # ------------------------------------------------------------ Casimirs
    def casimirs(self, max_degree: int = 4) -> CasimirList:
        """Independent polynomial Casimir functions up to ``max_degree``.

        F is a Casimir iff sum_{j,k} C[i,j,k] m_k dF/dm_j = 0 for every i. Found by linear algebra on
        the homogeneous monomials of each degree (exact rational arithmetic when C is rational), then
        reduced to a functionally independent set. Returns a :class:`CasimirList` (a list) whose
        ``expected`` is n - generic rank of Pi(m) and whose ``warning`` says when polynomials up to
        ``max_degree`` do not reach that number.
        """
        key = int(max_degree)
        if key not in self._casimir_cache:
            self._casimir_cache[key] = find_casimirs(self, key)
        return self._casimir_cache[key]

    # ----------------------------------------------------------- group side
    def exp_ad(self, x: ArrayLike) -> NDArray[np.float64]:
        """exp(ad x) = Ad_{exp x}, shape (..., n, n), via scipy.linalg.expm (batched)."""
        return exponential.exp_ad(self, x)

    def Ad(self, x: ArrayLike) -> NDArray[np.float64]:
        """Adjoint action of exp(x) on g as a matrix: Ad_{exp x} = exp(ad x)."""
        return self.exp_ad(x)

    def coadjoint_exp(self, x: ArrayLike, m: ArrayLike) -> NDArray[np.float64]:
        """Coadjoint action generated by ad*: exp(ad(x)^T) m = Ad_{exp x}^T m.

        d/dt coadjoint_exp(t x, m) at t = 0 is coad(x, m), and every Casimir is invariant.
        """
        return exponential.coadjoint_exp(self, x, m)

    def dexp(self, x: ArrayLike, v: ArrayLike, order: int | None = None) -> NDArray[np.float64]:
        """Derivative of exp (right trivialised): dexp_x v = sum_k ad_x^k v / (k+1)! = phi(ad x) v.

        ``order=None`` uses the exact matrix function; an integer q truncates the series after ad_x^(q-1).
        """
        return exponential.dexp(self, x, v, order=order)

    def dexpinv(self, x: ArrayLike, v: ArrayLike, order: int | None = None) -> NDArray[np.float64]:
        """Inverse of dexp: dexpinv_x v = sum_k B_k / k! ad_x^k v (Bernoulli numbers, B_1 = -1/2).

        ``order=None`` solves phi(ad x) u = v exactly; an integer q truncates the Bernoulli series after
        ad_x^(q-1) (q terms), which is what a Runge-Kutta-Munthe-Kaas method of order q needs.
        """
        return exponential.dexpinv(self, x, v, order=order)

    # -------------------------------------------------------- constructors
    @classmethod
    def from_matrices(cls, matrices: ArrayLike, basis: Sequence[str] | None = None, name: str | None = None,
                      rtol: float = DEFAULT_RTOL) -> LieAlgebra:
        """Structure constants of the span of the given (linearly independent) matrices X_1..X_n.

        Solves [X_i, X_j] = X_i X_j - X_j X_i = sum_k C[i,j,k] X_k by least squares (complex matrices are
        split into real and imaginary parts, so su(2) from -i sigma/2 works). Entries within 1e-12 of a
        rational with denominator <= 1000 are snapped to it, which removes round-off without perturbing
        genuinely irrational constants. Raises LieAlgebraError if the matrices are not square, are linearly
        dependent (giving the rank) or their span is not closed under the commutator (naming the pair and
        the residual).
        """
        mats = np.asarray(matrices)
        if mats.ndim != 3 or mats.shape[1] != mats.shape[2] or mats.shape[0] == 0:
            raise LieAlgebraError(f"from_matrices needs a non-empty list of square matrices, got shape {mats.shape}")
        if not np.all(np.isfinite(mats)):
            raise LieAlgebraError("from_matrices: the matrices have non-finite entries")
        n = mats.shape[0]
        complex_input = np.iscomplexobj(mats)

        def real_flat(a):
            a = a.reshape(a.shape[0], -1)
            return np.concatenate([a.real, a.imag], axis=1) if complex_input else a.astype(float)

        flat = real_flat(mats)  # (n, d)
        scale = max(1.0, float(np.max(np.abs(flat))))
        sv = np.linalg.svd(flat, compute_uv=False)
        rank = int(np.sum(sv > 1e-10 * scale))
        if rank < n:
            raise LieAlgebraError(
                f"the {n} matrices are linearly dependent (rank {rank}, smallest singular value {sv[-1]:.3e})"
            )
        comm = np.einsum("iab,jbc->ijac", mats, mats)
        comm = (comm - np.swapaxes(comm, 0, 1)).reshape(n * n, *mats.shape[1:])
        target = real_flat(comm)  # (n*n, d)
        coef, *_ = np.linalg.lstsq(flat.T, target.T, rcond=None)  # (n, n*n)
        resid = np.max(np.abs(flat.T @ coef - target.T), axis=0)
        worst = int(np.argmax(resid))
        if resid[worst] > 1e-9 * scale**2:
            i, j = divmod(worst, n)
            raise LieAlgebraError(
                f"span of the matrices is not closed under the commutator: [X_{i}, X_{j}] (0-based) "
                f"is off the span by {resid[worst]:.3e} (max abs entry of the residual)"
            )
        C = coef.T.reshape(n, n, n)
        return cls(_snap_rational(C), basis=basis, name=name, rtol=rtol)

    def change_basis(self, P: ArrayLike, name: str | None = None) -> LieAlgebra:
        """The same algebra in the basis f_a = sum_i P[a, i] e_i (P invertible).

        C'[a,b,c] = sum P[a,i] P[b,j] C[i,j,k] (P^-1)[k,c]. Coordinates transform as x = P^T x' for a
        vector x = sum_a x'_a f_a, and momenta as m' = P m (m'_a = (m, f_a)).
        """
        P = np.asarray(P, dtype=float)
        if P.shape != (self.dim, self.dim) or not np.all(np.isfinite(P)):
            raise LieAlgebraError(f"change_basis needs a finite ({self.dim}, {self.dim}) matrix, got shape {P.shape}")
        cond = np.linalg.cond(P)
        if not cond < 1e10:
            raise LieAlgebraError(f"change_basis: P is singular or nearly so (condition number {cond:.3e})")
        C2 = np.einsum("ai,bj,ijk,kc->abc", P, P, self._C, np.linalg.inv(P))
        rtol = max(self.rtol, 1e-14 * cond**2)
        return LieAlgebra(C2, name=name or f"{self.name} (new basis)", rtol=rtol)


def _snap_rational(C, max_den=1000, tol=1e-12):
    """Replace each entry within ``tol`` of a rational p/q (q <= max_den) by that rational."""
    out = np.array(C, dtype=float)
    for idx, v in np.ndenumerate(out):
        f = Fraction(float(v)).limit_denominator(max_den)
        if abs(float(f) - v) <= tol * max(1.0, abs(v)):
            out[idx] = float(f)
    return out
