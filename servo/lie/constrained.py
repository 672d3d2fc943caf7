"""Common part of the systems with a left-invariant constraint (a, w) = 0 and a control covector b.

Kozlov's lectures on servo-constraints ("Системы на группах Ли", "Сервосвязи второго рода") and
Kozlov 2019 (sections 6-7): the constraint Phi = (a, w) = 0 with a in g* \\ {0} is realized by a
control lambda b (a force of the first kind, or a term lambda (b, w) in the kinetic energy for the
second kind); both are realizable iff (I^-1 a, b) != 0. b = a gives the nonholonomic (first kind) or the
vakonomic (second kind) model.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from ..errors import ConstraintViolationError, UnrealizableConstraintError
from .euler_poincare import LieSystem
from .parameters import check_covector, check_inertia

#: |(I^-1 a, b)| <= REALIZABILITY_RTOL |a| |b| |I^-1| counts as zero
REALIZABILITY_RTOL = 1e-10
#: |(a, w)| <= CONSTRAINT_RTOL |a| max(|w|, 1) counts as on the constraint
CONSTRAINT_RTOL = 1e-9


class LeftInvariantConstrained(LieSystem):
    """T = (I w, w)/2 with I symmetric positive definite, constraint (a, w) = 0, control covector b."""

    def __init__(self, algebra, inertia, a, b, name=None):
        super().__init__(algebra, name)
        n = self.n
        self.I_sym, self.I = check_inertia(inertia, n)
        self.a_sym, self.a = check_covector(a, n, "a")
        self.b_sym, self.b = check_covector(b, n, "b")
        self.Iinv_sym = self.I_sym.inv()
        self.Iinv = None if self.I is None else np.linalg.inv(self.I)
        r = self.realizability()
        if self.is_numeric:
            scale = float(np.linalg.norm(self.a) * np.linalg.norm(self.b) * np.linalg.norm(self.Iinv, 2))
            if abs(r) <= REALIZABILITY_RTOL * scale:
                raise UnrealizableConstraintError(
                    f"the constraint (a, w) = 0 is not realizable by the control b: Kozlov's condition "
                    f"(I^-1 a, b) != 0 fails, (I^-1 a, b) = {r:.3e} (relative to |a||b||I^-1| = {scale:.3e}; "
                    f"a = {self.a.tolist()}, b = {self.b.tolist()})", value=r, scale=scale)
            self.Iinv_a = self.Iinv @ self.a
            self._r = float(r)
        elif sp.simplify(r) == 0:
            raise UnrealizableConstraintError(
                f"the constraint (a, w) = 0 is not realizable by the control b: (I^-1 a, b) simplifies to 0 "
                f"for every value of the symbols (a = {list(self.a_sym)}, b = {list(self.b_sym)})", value=r)

    def _sym_params(self):
        return {"inertia": self.I_sym, "a": self.a_sym, "b": self.b_sym}

    def _rebuild(self, p):
        return self._build(self.algebra, p["inertia"], p["a"], p["b"], self.name)

    @classmethod
    def _build(cls, algebra, inertia, a, b, name):
        return cls(algebra, inertia, a=a, b=b, name=name)

    # ------------------------------------------------------------------ conditions
    def realizability(self):
        """Kozlov's number (I^-1 a, b): a float for numeric parameters, else a sympy expression.

        The constraint is realizable by the control lambda b (either kind) iff it is not zero.
        """
        if self.I is not None and self.a is not None and self.b is not None:
            return float(self.a @ np.linalg.solve(self.I, self.b))
        return sp.factor(sp.together((self.a_sym.T * self.Iinv_sym * self.b_sym)[0, 0]))

    @property
    def b_parallel_a(self):
        """True when b is a multiple of a (nonholonomic / vakonomic case)."""
        if self.is_numeric:
            W = np.outer(self.a, self.b)
            return bool(np.abs(W - W.T).max() <= 1e-12 * np.linalg.norm(self.a) * np.linalg.norm(self.b))
        a, b = self.a_sym, self.b_sym
        return all(sp.simplify(a[i] * b[j] - a[j] * b[i]) == 0 for i in range(self.n) for j in range(i + 1, self.n))

    def constraint_residual(self, state):
        """(a, w) along the state, shape (...)."""
        return self.velocity(state) @ self.a

    def _project_m(self, m):
        # m <- m - ((a, I^-1 m)/(a, I^-1 a)) a: the I^-1-orthogonal projection onto (a, I^-1 m) = 0
        return m - np.multiply.outer((m @ self.Iinv_a) / (self.a @ self.Iinv_a), self.a)

    def _check_m(self, m, project):
        resid = m @ self.Iinv_a
        wn = np.linalg.norm(m @ self.Iinv.T, axis=-1)
        tol = CONSTRAINT_RTOL * np.linalg.norm(self.a) * np.maximum(wn, 1.0)
        if project:
            return self._project_m(m)
        bad = np.abs(resid) > tol
        if np.any(bad):
            worst = float(np.max(np.abs(resid)))
            idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(np.abs(resid))), np.shape(resid)))
            where = f" at batch index {idx}" if idx else ""
            raise ConstraintViolationError(
                f"state is off the constraint (a, w) = 0{where}: (a, w) = {worst:.3e} "
                f"(tolerance {float(np.max(tol)):.1e}); pass project=True to project it", residual=worst)
        return m

    def _w_on_constraint(self, w, project):
        w = self._check_last(w, self.n, "w")
        resid = w @ self.a
        if project:
            return w - np.multiply.outer(resid / (self.a @ self.Iinv_a), self.Iinv_a)
        tol = CONSTRAINT_RTOL * np.linalg.norm(self.a) * np.maximum(np.linalg.norm(w, axis=-1), 1.0)
        if np.any(np.abs(resid) > tol):
            worst = float(np.max(np.abs(resid)))
            raise ConstraintViolationError(
                f"velocity is off the constraint (a, w) = 0: (a, w) = {worst:.3e}; pass project=True to "
                f"project it", residual=worst)
        return w
