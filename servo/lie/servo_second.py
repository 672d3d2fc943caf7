"""Servo-constraints of the second kind and the vakonomic model on a Lie group.

Kozlov's lectures on servo-constraints ("Сервосвязи второго рода"; Kozlov 2019, sec. 7):
the control changes the inertia, T* = (I w, w)/2 + lambda (b, w), and

    (m + lambda b)' = ad*_w (m + lambda b),   (a, w) = 0,   m = I w,

with lambda a state variable (its initial value is part of the data). In z = m + lambda b the constraint
gives, linearly in z,

    lambda(z) = (a, I^-1 z) / (a, I^-1 b),   w(z) = W z,   W = I^-1 - (I^-1 b)(I^-1 a)^T / (a, I^-1 b),

so z' = ad*_{W z} z is a pure coadjoint motion: every Casimir F gives the first integral F(m + lambda b),
and Lie-Poisson integrators keep it to round-off. W is symmetric iff b is parallel to a (vakonomic case),
and then T = (z, W z)/2 = (I w, w)/2 is conserved; for other b, T' = -lambda' (b, w) and T is not.
The state is (m, lambda), shape (..., n + 1).
"""

from __future__ import annotations

import numpy as np

from .constrained import LeftInvariantConstrained
from ..errors import ServoError

__all__ = ["ServoSecondKind", "Vakonomic"]


class ServoSecondKind(LeftInvariantConstrained):
    """(m + lambda b)' = ad*_w (m + lambda b), (a, w) = 0, m = I w (Kozlov's servo-constraint of type II).

    Parameters as :class:`servo.ServoFirstKind`. The state is (m_1..m_n, lambda). The default method is
    "rkmk4", a Lie-Poisson method on z = m + lambda b.
    """

    kind = "servo2"
    default_method = "rkmk4"

    def __init__(self, algebra, inertia, *, a, b, name=None):
        super().__init__(algebra, inertia, a, b, name)
        self.state_dim = self.n + 1
        if self.is_numeric:
            self.Iinv_b = self.Iinv @ self.b
            self.W = self.Iinv - np.outer(self.Iinv_b, self.Iinv_a) / self._r

    # ------------------------------------------------------------ z <-> (m, lambda)
    def to_problem(self, state):
        """z = m + lambda b."""
        s = self._check_last(state, self.n + 1, "state (m, lambda)")
        return s[..., :self.n] + np.multiply.outer(s[..., self.n], self.b)

    def from_problem(self, z):
        """(m, lambda) with lambda = (I^-1 a, z)/(I^-1 a, b) and m = z - lambda b."""
        z = self._check_last(z, self.n, "z")
        lam = (z @ self.Iinv_a) / self._r
        return np.concatenate([z - np.multiply.outer(lam, self.b), lam[..., None]], axis=-1)

    def velocity_z(self, z):
        """w(z) = W z (linear), batched."""
        return self._check_last(z, self.n, "z") @ self.W.T

    # ------------------------------------------------------------------ numerics
    def velocity(self, state):
        """w = I^-1 m, batched."""
        self._require_numeric("velocity")
        s = self._check_last(state, self.n + 1, "state (m, lambda)")
        return s[..., :self.n] @ self.Iinv.T

    def multiplier(self, state):
        """(lambda, lambda') with lambda' = (I^-1 a, ad*_w z)/(I^-1 a, b), each of shape (...)."""
        s = self._check_last(state, self.n + 1, "state (m, lambda)")
        z = self.to_problem(s)
        zdot = self.algebra.coad(self.velocity_z(z), z)
        return s[..., self.n].copy(), (zdot @ self.Iinv_a) / self._r

    def rhs(self, state):
        """(m', lambda') with z' = ad*_{Wz} z, lambda' = (I^-1 a, z')/(I^-1 a, b), m' = z' - lambda' b."""
        s = self._check_last(state, self.n + 1, "state (m, lambda)")
        z = self.to_problem(s)
        zdot = self.algebra.coad(self.velocity_z(z), z)
        lamdot = (zdot @ self.Iinv_a) / self._r
        return np.concatenate([zdot - np.multiply.outer(lamdot, self.b), lamdot[..., None]], axis=-1)

    def energy(self, state):
        """T = (I w, w)/2 = (I^-1 m, m)/2 (a first integral iff b is parallel to a)."""
        s = self._check_last(state, self.n + 1, "state (m, lambda)")
        m = s[..., :self.n]
        return 0.5 * np.einsum("...i,...i->...", m, m @ self.Iinv.T)

    def constraint_residual(self, state):
        """(a, w) along the state."""
        return self.velocity(state) @ self.a

    def check_state(self, state, project=False):
        """(m, lambda) with (a, I^-1 m) = 0 checked (or m projected I^-1-orthogonally if ``project``)."""
        self._require_numeric("check_state")
        s = self._check_last(state, self.n + 1, "state (m, lambda)")
        m = self._check_m(s[..., :self.n], project)
        return np.concatenate([m, s[..., self.n:]], axis=-1)

    def state_from(self, w=None, lam=0.0, m=None, project=False):
        """The state (I w, lambda) (or (m, lambda)); w must satisfy (a, w) = 0 unless ``project``."""
        if (w is None) == (m is None):
            raise ServoError("give exactly one of w (velocities) and m (momenta)")
        self._require_numeric("state_from")
        if w is not None:
            m = self._w_on_constraint(w, project) @ self.I.T
        else:
            m = self._check_m(self._check_last(m, self.n, "m"), project)
        lam = np.broadcast_to(np.asarray(lam, dtype=float), m.shape[:-1])
        return np.concatenate([m, lam[..., None]], axis=-1)

    def problem(self):
        """:class:`integrators.CoadjointProblem` z' = ad*_{Wz} z, with ``velocity_matrix`` W and no forcing.

        For b parallel to a, W is symmetric and H(z) = (z, W z)/2 = T is recorded as "energy".
        """
        self._require_numeric("problem")
        from integrators import CoadjointProblem

        ham = None
        if self.b_parallel_a:
            W = self.W

            def ham(z):
                return 0.5 * np.einsum("...i,...i->...", z, z @ W.T)
        return CoadjointProblem(self.algebra, self.velocity_z, velocity_matrix=self.W, hamiltonian=ham,
                                constraints={"(a, w)": lambda z: self.velocity_z(z) @ self.a},
                                name=self.name)


class Vakonomic(ServoSecondKind):
    """The vakonomic model: ServoSecondKind with b = a; T = (I w, w)/2 is conserved."""

    kind = "vakonomic"

    def __init__(self, algebra, inertia, *, a, name=None):
        super().__init__(algebra, inertia, a=a, b=a, name=name)

    @classmethod
    def _build(cls, algebra, inertia, a, b, name):
        return cls(algebra, inertia, a=a, name=name)
