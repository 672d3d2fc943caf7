"""Common part of the systems with left-invariant constraints (a_i, w) = 0 and control covectors b_i.

Kozlov's lectures on servo-constraints ("Systems on Lie groups", "Servo-constraints of the second kind")
and Kozlov (2019), sections 6-7: a constraint (a, w) = 0 with a in g* \\ {0} is realized by a control
lambda b (a force of the first kind, or a term lambda (b, w) in the kinetic energy for the second kind);
it is realizable iff (I^-1 a, b) != 0. b = a gives the nonholonomic (first kind) or the vakonomic
(second kind) model.

Several constraints. With k constraint covectors a_1..a_k (the rows of A, k x n) and k controls b_1..b_k
(the rows of B), the force is sum_i lambda_i b_i = B^T lambda. Differentiating A I^-1 m = 0 (first kind)
or solving A I^-1 (z - B^T lambda) = 0 (second kind) for lambda needs the k x k realizability matrix

    R_ij = (I^-1 a_i, b_j),   R = A I^-1 B^T,

to be invertible; for k = 1 this is Kozlov's number (I^-1 a, b). The a_i (and the b_j) must be linearly
independent. The energy T is conserved when the b_j span the same space as the a_i (nonholonomic and
vakonomic: T' = (w, B^T lambda) = (B w, lambda) vanishes when A w = 0 implies B w = 0).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import sympy as sp
from numpy.typing import ArrayLike, NDArray

from integrators import polynomial_quantity
from integrators.reference.nonholonomic import LieConstraintData
from liegroups import group_for

from ..errors import ConstraintViolationError, CovectorError, ServoError, UnrealizableConstraintError
from .euler_poincare import LieSystem
from .parameters import Parameter, check_covectors, check_inertia
from .printing import exact

if TYPE_CHECKING:
    from liegroups import LieAlgebra

#: a realizability matrix whose smallest singular value is <= REALIZABILITY_RTOL |A| |B| |I^-1| counts as
#: singular (computed scale-free from unit covectors and I^-1 / |I^-1|)
REALIZABILITY_RTOL = 1e-10
#: |(a, w)| <= CONSTRAINT_RTOL |a| max(|w|, 1) counts as on the constraint
CONSTRAINT_RTOL = 1e-9
#: the end-of-run check of an integration (integrators.engine.guard): the equations keep (a, w) = 0 exactly
#: (a linear invariant, or by construction), so a relative residual above this is a failure
CONSTRAINT_CHECK_RTOL = 1e-6


def _unit_rows(M):
    """Rows of M scaled to unit length without overflow (divided by their largest entry first)."""
    M = M / np.max(np.abs(M), axis=1, keepdims=True)
    return M / np.linalg.norm(M, axis=1, keepdims=True)


class LeftInvariantConstrained(LieSystem):
    """T = (I w, w)/2 with I symmetric positive definite, constraints A w = 0 (rows a_i), controls B (rows b_i).

    ``a`` and ``b`` are one covector, shape (n,), or k covectors, shape (k, n). With one covector the
    multiplier lambda is a scalar per state (shape (...)); with k covectors a vector (shape (..., k)).
    """

    def __init__(self, algebra: LieAlgebra, inertia: Parameter, a: Parameter, b: Parameter,
                 name: str | None = None) -> None:
        super().__init__(algebra, name)
        n = self.n
        self.I_sym, self.I = check_inertia(inertia, n)
        self.A_sym, self.A, single_a = check_covectors(a, n, "a")
        self.B_sym, self.B, single_b = check_covectors(b, n, "b")
        if self.A_sym.shape[1] != self.B_sym.shape[1]:
            raise CovectorError(f"the number of controls must equal the number of constraints: "
                                f"{self.A_sym.shape[1]} constraint covector(s) a and {self.B_sym.shape[1]} "
                                f"control covector(s) b")
        self.k = self.A_sym.shape[1]
        self.single = single_a and single_b
        # the single-constraint names: a, b as (n,) arrays / (n, 1) sympy columns when k = 1
        self.a_sym, self.b_sym = (self.A_sym, self.B_sym) if self.k == 1 else (None, None)
        self.a = None if self.A is None else (self.A[0] if self.k == 1 else self.A)
        self.b = None if self.B is None else (self.B[0] if self.k == 1 else self.B)
        self.Iinv_sym = self.I_sym.inv()
        self.Iinv = None if self.I is None else np.linalg.inv(self.I)
        if self.is_numeric:
            self._check_numeric_realizability()
        else:
            r = self.realizability()
            if sp.simplify(r) == 0:
                what = ("(I^-1 a, b)" if self.k == 1 else "det R, R_ij = (I^-1 a_i, b_j),")
                raise UnrealizableConstraintError(
                    f"the constraint{'s are' if self.k > 1 else ' is'} not realizable by the control: {what} "
                    f"simplifies to 0 for every value of the symbols (a = {self._show(self.A_sym)}, "
                    f"b = {self._show(self.B_sym)})", value=r)

    @staticmethod
    def _show(M):
        cols = [list(M[:, j]) for j in range(M.shape[1])]
        return cols[0] if len(cols) == 1 else cols

    def _check_numeric_realizability(self):
        # scale-free: R_hat = A_hat I^-1 B_hat^T / |I^-1| with unit rows a_i/|a_i|, b_j/|b_j| (no overflow
        # for huge covectors, no false refusal for tiny ones); singular when s_min(R_hat) <= REALIZABILITY_RTOL
        with np.errstate(all="ignore"):
            An, Bn = _unit_rows(self.A), _unit_rows(self.B)
            Ki = self.Iinv / np.max(np.abs(self.Iinv))
            Ki = Ki / np.linalg.norm(Ki, 2)
            Rn = An @ Ki @ Bn.T
            R = self.realizability_matrix()
            scale = float(np.linalg.norm(self.A) * np.linalg.norm(self.B) * np.linalg.norm(self.Iinv, 2))
        smin_rel = float(np.linalg.svd(Rn, compute_uv=False)[-1]) if np.all(np.isfinite(Rn)) else 0.0
        smin = smin_rel * scale
        if np.all(np.isfinite(Rn)) and smin_rel > REALIZABILITY_RTOL and not (
                np.all(np.isfinite(R)) and np.all(np.isfinite(self.A @ self.Iinv))
                and float(np.min(np.abs(np.linalg.svd(R, compute_uv=False)))) > 0):
            raise CovectorError(
                f"the covectors are too large or too small for floating point: (I^-1 a, b) = "
                f"{np.array2string(R, precision=4)} over- or underflows (|a||b||I^-1| = {scale:.3e}) although "
                f"the constraint is realizable (relative (I^-1 a, b) = {smin_rel:.3e}); rescale a and b (the "
                f"constraint (a, w) = 0 does not depend on |a|, and |b| only rescales lambda)")
        if smin_rel <= REALIZABILITY_RTOL:
            if self.k == 1:
                r = float(R[0, 0])
                raise UnrealizableConstraintError(
                    f"the constraint (a, w) = 0 is not realizable by the control b: Kozlov's condition "
                    f"(I^-1 a, b) != 0 fails, (I^-1 a, b) = {r:.3e} (relative to |a||b||I^-1|: {smin_rel:.3e}; "
                    f"a = {self.a.tolist()}, b = {self.b.tolist()})", value=r, scale=scale)
            raise UnrealizableConstraintError(
                f"the constraints A w = 0 are not realizable by the controls B: the realizability matrix "
                f"R_ij = (I^-1 a_i, b_j) = {np.array2string(R, precision=4)} is singular, its smallest "
                f"singular value is {smin:.3e} (relative to |A||B||I^-1|: {smin_rel:.3e})",
                value=float(np.linalg.det(R)), scale=scale)
        self.IinvA = self.A @ self.Iinv          # (k, n): rows I^-1 a_i (I is symmetric)
        self.R = R
        if self.k == 1:
            self.Iinv_a = self.IinvA[0]
            self._r = float(R[0, 0])

    def _solve_R(self, v, transpose=False):
        """R^-1 v (or R^-T v) for v of shape (..., k); a division for k = 1."""
        if self.k == 1:
            return v / self._r
        M = self.R.T if transpose else self.R
        return np.linalg.solve(M, np.moveaxis(np.asarray(v), -1, 0).reshape(self.k, -1)).reshape(
            (self.k,) + np.shape(v)[:-1]).transpose(tuple(range(1, np.ndim(v))) + (0,))

    def _lam_out(self, lam):
        """lambda of shape (..., k) as the user's shape: (...) for one covector given as (n,)."""
        return lam[..., 0] if self.single else lam

    def _finite_lambda(self, lam):
        """A multiplier given by the user: real and finite (ServoError naming the entry otherwise)."""
        lam = self._real_array(lam, "lambda")
        if not np.all(np.isfinite(lam)):
            raise ServoError(f"lambda must be finite, got {lam.tolist()} ({self.name})")
        return lam

    def _lam_in(self, lam):
        lam = np.asarray(lam, dtype=float)
        return lam[..., None] if self.single else lam

    #: ``s.I = ...``, ``s.a = ...``, ``s.b = ...`` (or ``A``, ``B``) build the system again from the new
    #: value (:mod:`servo.lie.built_once`)
    _SETTABLE = {"I": "inertia", "a": "a", "A": "a", "b": "b", "B": "b"}

    def _sym_params(self):
        a = self.A_sym[:, 0] if self.single else self.A_sym.T
        b = self.B_sym[:, 0] if self.single else self.B_sym.T
        return {"inertia": self.I_sym, "a": a, "b": b}

    def _rebuild(self, p):
        return self._build(self.algebra, p["inertia"], p["a"], p["b"], self.name)

    @classmethod
    def _build(cls, algebra, inertia, a, b, name):
        return cls(algebra, inertia, a=a, b=b, name=name)

    # ------------------------------------------------------------------ conditions
    def realizability_matrix(self) -> NDArray[np.float64] | sp.Matrix:
        """R_ij = (I^-1 a_i, b_j), k x k: a float array for numeric parameters, else a sympy Matrix."""
        if self.I is not None and self.A is not None and self.B is not None:
            return self.A @ np.linalg.solve(self.I, self.B.T)
        return (self.A_sym.T * self.Iinv_sym * self.B_sym).applyfunc(lambda x: sp.factor(sp.together(x)))

    def realizability(self) -> float | sp.Expr:
        """det R: Kozlov's number (I^-1 a, b) for one constraint; a float for numeric parameters, else a
        sympy expression. The constraints are realizable by the controls (either kind) iff it is not zero."""
        R = self.realizability_matrix()
        if isinstance(R, np.ndarray):
            return float(R[0, 0]) if self.k == 1 else float(np.linalg.det(R))
        return sp.factor(sp.together(R[0, 0] if self.k == 1 else R.det()))

    @property
    def realizability_label(self) -> str:
        """The name of :meth:`realizability` in text: ``(I^-1 a, b)`` for one constraint, ``det(A I^-1 B^T)``
        (R_ij = (I^-1 a_i, b_j)) for several."""
        return "(I^-1 a, b)" if self.k == 1 else "det(A I^-1 B^T)"

    @property
    def realizability_latex(self) -> str:
        """:attr:`realizability_label` in LaTeX."""
        return r"(I^{-1} a, b)" if self.k == 1 else r"\det(A I^{-1} B^{T})"

    def realizability_exact(self) -> sp.Rational | None:
        """det R, R = A I^-1 B^T, as an exact rational when every entry of I, a and b is one, else None.

        A float datum counts as the rational it was written as (0.2 -> 1/5, see
        :func:`servo.lie.printing.exact_number`); R and its determinant are then computed in exact
        arithmetic (Kozlov's number (I^-1 a, b) for one constraint). A datum that is no short rational
        (0.1234567891, pi, a symbol) gives None.
        """
        I, A, B = (exact(M) for M in (self.I_sym, self.A_sym, self.B_sym))
        if any(not x.is_Rational for M in (I, A, B) for x in M):
            return None
        R = A.T * I.inv() * B
        return sp.Rational(R[0, 0] if self.k == 1 else R.det())

    def realizability_condition(self) -> float:
        """The condition number of R (2-norm): how close the controls are to losing realizability."""
        self._require_numeric("realizability_condition")
        return float(np.linalg.cond(self.realizability_matrix()))

    @property
    def b_parallel_a(self) -> bool:
        """True when the b_j span the same space as the a_i (one covector: b a multiple of a), the
        nonholonomic / vakonomic case."""
        if self.is_numeric:
            AB = np.vstack([self.A, self.B])
            s = np.linalg.svd(AB, compute_uv=False)
            return bool(s[self.k] <= 1e-12 * s[0]) if len(s) > self.k else True
        M = sp.Matrix.hstack(self.A_sym, self.B_sym)
        return M.rank(simplify=True) == self.k

    def discrete_data(self) -> LieConstraintData:
        """What the discrete schemes of :mod:`integrators.reference.nonholonomic` need (``problem().discrete``):
        inertia, constraints, controls, the structure ("lie_second_kind" for servo-constraints of the second
        kind and the vakonomic model, "lie_nonholonomic" for the nonholonomic model) and the matrix group of
        so(3), se(2), se(3) for the Cayley schemes. ServoError for a servo-constraint of the first kind
        with b not parallel to a (no discrete Lagrange-d'Alembert principle)."""
        self._require_numeric("discrete_data")
        second = self.kind in ("servo2", "vakonomic")
        if not second and not self.b_parallel_a:
            raise ServoError(f"{self.name}: the discrete Lagrange-d'Alembert schemes need the nonholonomic model "
                             f"(b parallel to a); a servo-constraint of the first kind with b = {self.b.tolist()} "
                             f"is not variational")
        cf = self.algebra.closed_form
        group = group_for(cf) if cf in ("so3", "se2", "se3") else None
        return LieConstraintData(self.algebra, self.I, self.A, self.B if second else None,
                                 structure="lie_second_kind" if second else "lie_nonholonomic", group=group)

    @polynomial_quantity(1)
    def constraint_residual(self, state: ArrayLike) -> NDArray[np.float64]:
        """(a_i, w) along the state: shape (...) for one covector, (..., k) for several."""
        return self._lam_out(self.velocity(state) @ self.A.T)

    def _project_m(self, m):
        """The I^-1-orthogonal projection onto A I^-1 m = 0: m <- m - A^T (A I^-1 A^T)^-1 A I^-1 m."""
        if self.k == 1:
            return m - np.multiply.outer((m @ self.Iinv_a) / (self.a @ self.Iinv_a), self.a)
        G = self.IinvA @ self.A.T
        return m - np.linalg.solve(G, (m @ self.IinvA.T)[..., None])[..., 0] @ self.A

    def _check_m(self, m, project):
        resid = m @ self.IinvA.T                                  # (..., k)
        wn = np.linalg.norm(m @ self.Iinv.T, axis=-1)
        tol = CONSTRAINT_RTOL * np.linalg.norm(self.A, axis=-1) * np.maximum(wn, 1.0)[..., None]
        if project:
            return self._project_m(m)
        bad = np.abs(resid) > tol
        if np.any(bad):
            flat = int(np.argmax(np.abs(resid) - tol))
            idx = np.unravel_index(flat, resid.shape)
            worst = float(np.abs(resid)[idx])
            where = f" at batch index {tuple(int(i) for i in idx[:-1])}" if len(idx) > 1 else ""
            which = "(a, w)" if self.k == 1 else f"(a_{int(idx[-1]) + 1}, w)"
            raise ConstraintViolationError(
                f"state is off the constraint {which} = 0{where}: {which} = {worst:.3e} "
                f"(tolerance {float(np.max(tol)):.1e}); pass project=True to project it", residual=worst,
                index=int(idx[-1]))
        return m

    def _w_on_constraint(self, w, project):
        w = self._check_last(w, self.n, "w", finite=True)
        resid = w @ self.A.T                                      # (..., k)
        if project:
            G = self.IinvA @ self.A.T                              # A I^-1 A^T
            if self.k == 1:
                return w - np.multiply.outer(resid[..., 0] / G[0, 0], self.Iinv_a)
            return w - np.linalg.solve(G, resid[..., None])[..., 0] @ self.IinvA
        tol = CONSTRAINT_RTOL * np.linalg.norm(self.A, axis=-1) * np.maximum(np.linalg.norm(w, axis=-1), 1.0)[..., None]
        if np.any(np.abs(resid) > tol):
            worst = float(np.max(np.abs(resid)))
            i = int(np.unravel_index(int(np.argmax(np.abs(resid))), resid.shape)[-1])
            which = "(a, w)" if self.k == 1 else f"(a_{i + 1}, w)"
            raise ConstraintViolationError(
                f"velocity is off the constraint {which} = 0: {which} = {worst:.3e}; pass project=True to "
                f"project it", residual=worst, index=i)
        return w
