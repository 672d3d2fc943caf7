"""Servo-constraints of the first kind (Beghin) and the nonholonomic model on a Lie group.

Kozlov's lectures on servo-constraints ("Системы на группах Ли"; Kozlov 2019, sec. 6):

    m' = ad*_w m + lambda b,   (a, w) = 0,   m = I w.

Differentiating (a, I^-1 m) = 0 along the motion gives the multiplier

    lambda = -(I^-1 a, ad*_w m) / (I^-1 a, b),

defined iff (I^-1 a, b) != 0 (realizability). Along the motion T' = (w, m') = lambda (b, w), so the
energy T = (I w, w)/2 is conserved when b = a (the nonholonomic model; for so(3) Suslov's problem) and
in general is not. The state is m (..., n) on the hyperplane (a, I^-1 m) = 0.
"""

from __future__ import annotations

import numpy as np

from .constrained import LeftInvariantConstrained

__all__ = ["ServoFirstKind", "Nonholonomic"]


class ServoFirstKind(LeftInvariantConstrained):
    """m' = ad*_w m + lambda b, (a, w) = 0, m = I w (Beghin's servo-constraint, Kozlov's type I).

    Parameters
    ----------
    algebra : liegroups.LieAlgebra
    inertia : (n, n) or (n,) symmetric positive definite, numbers or sympy expressions
    a : (n,) constraint covector, (a, w) = 0 (keyword)
    b : (n,) control covector, the force is lambda b (keyword)

    Raises UnrealizableConstraintError if (I^-1 a, b) = 0 (relative to |a||b||I^-1|).
    The default integrator is "rk4": the field satisfies (I^-1 a, ad*_w m + lambda(m) b) = 0 for every m
    (not only on the constraint), so the constraint (a, I^-1 m) = 0 is a linear invariant, which every
    Runge-Kutta method keeps to round-off; the forcing lambda b breaks the coadjoint structure, so
    Lie-Poisson methods have nothing extra to keep here. ``s.reduced()`` gives the quadratic system on
    the constraint for other integrators.
    """

    kind = "servo1"
    default_method = "rk4"

    def __init__(self, algebra, inertia, *, a, b, name=None):
        super().__init__(algebra, inertia, a, b, name)
        self.state_dim = self.n

    def velocity(self, state):
        """w = I^-1 m, batched."""
        self._require_numeric("velocity")
        m = self._check_last(state, self.n, "m")
        return m @ self.Iinv.T

    def multiplier(self, state):
        """lambda = -(I^-1 a, ad*_w m)/(I^-1 a, b), shape (...)."""
        m = self._check_last(state, self.n, "m")
        return -(self.algebra.coad(self.velocity(m), m) @ self.Iinv_a) / self._r

    def forcing(self, state):
        """The control force lambda(m) b, shape (..., n)."""
        return np.multiply.outer(self.multiplier(state), self.b)

    def rhs(self, state):
        """m' = ad*_w m + lambda(m) b, batched."""
        m = self._check_last(state, self.n, "m")
        return self.algebra.coad(self.velocity(m), m) + self.forcing(m)

    def energy(self, state):
        """T = (I^-1 m, m)/2 (a first integral iff b is parallel to a)."""
        m = self._check_last(state, self.n, "m")
        return 0.5 * np.einsum("...i,...i->...", m, self.velocity(m))

    def check_state(self, state, project=False):
        """The state m, checked against (a, I^-1 m) = 0 (or projected I^-1-orthogonally if ``project``)."""
        self._require_numeric("check_state")
        return self._check_m(self._check_last(state, self.n, "m"), project)

    def state_from(self, w=None, m=None, lam=None, project=False):
        """The state m = I w from velocities on the constraint (or m directly); ``lam`` is not a state here."""
        from ..errors import ServoError

        if lam is not None:
            raise ServoError("lambda is not part of the state of a first-kind system: it is determined by m")
        if (w is None) == (m is None):
            raise ServoError("give exactly one of w (velocities) and m (momenta)")
        self._require_numeric("state_from")
        if m is not None:
            return self.check_state(m, project=project)
        return self._w_on_constraint(w, project) @ self.I.T

    def problem(self):
        """:class:`integrators.CoadjointProblem` with w(z) = I^-1 z and forcing f(z) = lambda(z) b."""
        self._require_numeric("problem")
        from integrators import CoadjointProblem

        inv = {}
        if self.b_parallel_a:
            inv["energy"] = self.energy
        return CoadjointProblem(self.algebra, self.velocity, forcing=self.forcing, velocity_matrix=self.Iinv,
                                invariants=inv, constraints={"(a, w)": self.constraint_residual},
                                name=self.name)


class Nonholonomic(ServoFirstKind):
    """The nonholonomic model: ServoFirstKind with b = a (Suslov's problem on so(3)); T is conserved."""

    kind = "nonholonomic"

    def __init__(self, algebra, inertia, *, a, name=None):
        super().__init__(algebra, inertia, a=a, b=a, name=name)

    @classmethod
    def _build(cls, algebra, inertia, a, b, name):
        return cls(algebra, inertia, a=a, name=name)
