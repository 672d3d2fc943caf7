"""Servo-constraints of the first kind (Beghin) and the nonholonomic model on a Lie group.

Several constraints A w = 0 (rows a_i) with controls B (rows b_i): m' = ad*_w m + B^T lambda and
lambda = -R^-1 A I^-1 ad*_w m with R = A I^-1 B^T (see :mod:`servo.lie.constrained`).

Kozlov's lectures on servo-constraints ("Системы на группах Ли"; Kozlov 2019, sec. 6):

    m' = ad*_w m + lambda b,   (a, w) = 0,   m = I w.

Differentiating (a, I^-1 m) = 0 along the motion gives the multiplier

    lambda = -(I^-1 a, ad*_w m) / (I^-1 a, b),

defined iff (I^-1 a, b) != 0 (realizability). Along the motion T' = (w, m') = lambda (b, w), so the
energy T = (I w, w)/2 is conserved when b = a (the nonholonomic model; for so(3) Suslov's problem) and
in general is not. The state is m (..., n) on the hyperplane (a, I^-1 m) = 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from integrators import CoadjointProblem, polynomial_quantity

from ..errors import ServoError
from .constrained import CONSTRAINT_CHECK_RTOL, LeftInvariantConstrained
from .first_integrals import first_kind_integrals
from .symbolic import first_kind_equations
from .reduction import reduce_first_kind
from .method_choice import document_default

if TYPE_CHECKING:
    from liegroups import LieAlgebra

    from .parameters import Parameter

__all__ = ["ServoFirstKind", "Nonholonomic"]


class ServoFirstKind(LeftInvariantConstrained):
    """m' = ad*_w m + lambda b, (a, w) = 0, m = I w (Beghin's servo-constraint, Kozlov's type I).

    .. math::

        \\dot m = \\operatorname{ad}^*_{\\omega} m + \\lambda\\, b, \\qquad (a, \\omega) = 0, \\qquad m = I \\omega,
        \\qquad \\lambda = -\\frac{(I^{-1} a,\\ \\operatorname{ad}^*_{\\omega} m)}{(I^{-1} a,\\ b)},

    the multiplier :math:`\\lambda` found by differentiating :math:`(a, I^{-1} m) = 0`; realizable iff
    :math:`(I^{-1} a, b) \\neq 0` (Kozlov, lectures on servo-constraints).

    Parameters
    ----------
    algebra : liegroups.LieAlgebra
    inertia : (n, n) or (n,) symmetric positive definite, numbers or sympy expressions
    a : (n,) constraint covector, (a, w) = 0 (keyword)
    b : (n,) control covector, the force is lambda b (keyword)

    Notes
    -----
    Raises UnrealizableConstraintError if (I^-1 a, b) = 0 (relative to |a||b||I^-1|).
    The default integrator (:mod:`servo.lie.method_choice`) is "rk853": the field satisfies (I^-1 a, ad*_w m + lambda(m) b) = 0 for every m
    (not only on the constraint), so the constraint (a, I^-1 m) = 0 is a linear invariant, which every
    Runge-Kutta method keeps to round-off; the forcing lambda b breaks the coadjoint structure, so
    Lie-Poisson methods have nothing extra to keep here. ``s.reduced()`` gives the quadratic system on
    the constraint for other integrators.
    """

    kind = "servo1"

    def __init__(self, algebra: LieAlgebra, inertia: Parameter, *, a: Parameter, b: Parameter,
                 name: str | None = None) -> None:
        super().__init__(algebra, inertia, a, b, name)
        self.state_dim = self.n

    def velocity(self, state: ArrayLike) -> NDArray[np.float64]:
        """w = I^-1 m, batched."""
        self._require_numeric("velocity")
        m = self._check_last(state, self.n, "m")
        return m @ self.Iinv.T

    def multiplier(self, state: ArrayLike) -> NDArray[np.float64]:
        """lambda = -R^-1 A I^-1 ad*_w m (one constraint: -(I^-1 a, ad*_w m)/(I^-1 a, b)), shape (...) for
        one covector, (..., k) for k."""
        m = self._check_last(state, self.n, "m")
        c = self.algebra._coad(self.velocity(m), m)
        if self.k == 1:
            lam = -(c @ self.Iinv_a) / self._r
            return lam if self.single else lam[..., None]
        return -self._solve_R(c @ self.IinvA.T)

    def forcing(self, state: ArrayLike) -> NDArray[np.float64]:
        """The control force B^T lambda(m) = sum_i lambda_i b_i, shape (..., n)."""
        lam = self.multiplier(state)
        if self.k == 1:
            return np.multiply.outer(lam if self.single else lam[..., 0], self.b)
        return lam @ self.B

    def rhs(self, state: ArrayLike) -> NDArray[np.float64]:
        """m' = ad*_w m + lambda(m) b, batched."""
        m = self._check_last(state, self.n, "m")
        return self.algebra._coad(self.velocity(m), m) + self.forcing(m)

    @polynomial_quantity(2)
    def energy(self, state: ArrayLike) -> NDArray[np.float64]:
        """T = (I^-1 m, m)/2 (a first integral iff b is parallel to a)."""
        m = self._check_last(state, self.n, "m")
        return 0.5 * np.einsum("...i,...i->...", m, self.velocity(m))

    def check_state(self, state: ArrayLike, project: bool = False) -> NDArray[np.float64]:
        """The state m, checked against (a, I^-1 m) = 0 (or projected I^-1-orthogonally if ``project``)."""
        self._require_numeric("check_state")
        return self._check_m(self._check_last(state, self.n, "m", finite=True), project)

    def state_from(self, w: ArrayLike | None = None, m: ArrayLike | None = None, lam: None = None,
                   project: bool = False) -> NDArray[np.float64]:
        """The state m = I w from velocities on the constraint (or m directly); ``lam`` is not a state here."""
        if lam is not None:
            raise ServoError("lambda is not part of the state of a first-kind system: it is determined by m")
        if (w is None) == (m is None):
            raise ServoError("give exactly one of w (velocities) and m (momenta)")
        self._require_numeric("state_from")
        if m is not None:
            return self.check_state(m, project=project)
        return self._w_on_constraint(w, project) @ self.I.T

    def problem(self) -> CoadjointProblem:
        """:class:`integrators.CoadjointProblem` with w(z) = I^-1 z and forcing f(z) = lambda(z) b; for the
        nonholonomic model (b parallel to a) it carries :meth:`discrete_data` as ``discrete``, so that the
        discrete Lagrange-d'Alembert-Suslov methods "dlas_exp" / "dlas_cay" run on it by name. Built once
        per system and shared (:meth:`LieSystem.problem`)."""
        return self._built("problem", type(self)._problem)

    def _problem(self):
        self._require_numeric("problem")
        inv = {}
        if self.b_parallel_a:
            inv["energy"] = self.energy
        # (I^-1 a, m) = (a, w) is conserved by the exact flow (lambda is chosen so); declaring it lets the
        # Lie-group methods project each step back onto the constraint
        cons = {"(a, w)": self.constraint_residual} if self.k == 1 else \
            {f"(a_{i + 1}, w)": polynomial_quantity(1)(lambda m, i=i: self.velocity(m) @ self.A[i])
             for i in range(self.k)}
        problem = CoadjointProblem(self.algebra, self.velocity, forcing=self.forcing, velocity_matrix=self.Iinv,
                                   invariants=inv, constraints=cons, linear_invariants=self.IinvA,
                                   name=self.name, outputs=self.outputs(),
                                   tolerances={k: CONSTRAINT_CHECK_RTOL for k in cons})
        if self.b_parallel_a:   # the discrete Lagrange-d'Alembert-Suslov schemes (dlas_exp, dlas_cay) apply
            problem.discrete = self.discrete_data()
        return problem

    def _equations(self):
        return first_kind_equations(self, self.kind)

    def _first_integrals(self):
        return first_kind_integrals(self)

    def _reduced(self):
        return reduce_first_kind(self)


class Nonholonomic(ServoFirstKind):
    """The nonholonomic model: ServoFirstKind with b = a (Suslov's problem on so(3)); T is conserved."""

    kind = "nonholonomic"
    #: b = a: the control is not a parameter of its own
    _SETTABLE = {"I": "inertia", "a": "a", "A": "a"}

    def __init__(self, algebra: LieAlgebra, inertia: Parameter, *, a: Parameter, name: str | None = None) -> None:
        super().__init__(algebra, inertia, a=a, b=a, name=name)

    @classmethod
    def _build(cls, algebra, inertia, a, b, name):
        return cls(algebra, inertia, a=a, name=name)


document_default(ServoFirstKind, "linear_invariants")
document_default(Nonholonomic, "linear_invariants")
