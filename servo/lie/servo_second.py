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

Several constraints A w = 0 (rows a_i) with controls B (rows b_i): T* = T + (lambda, B w), z = m + B^T lambda,
lambda(z) = R^-1 A I^-1 z with R = A I^-1 B^T, W = I^-1 - I^-1 B^T R^-1 A I^-1; the state is (m, lambda_1..k),
shape (..., n + k), and F(m + sum_i lambda_i b_i) is a first integral for every Casimir F.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from integrators import CoadjointProblem, polynomial_quantity

from ..errors import ServoError
from .constrained import CONSTRAINT_CHECK_RTOL, LeftInvariantConstrained
from .first_integrals import second_kind_integrals
from .symbolic import second_kind_equations
from .reduction import reduce_second_kind
from .method_choice import document_default

if TYPE_CHECKING:
    from liegroups import LieAlgebra

    from .euler_poincare import Output
    from .parameters import Parameter

__all__ = ["ServoSecondKind", "Vakonomic"]


class ServoSecondKind(LeftInvariantConstrained):
    """(m + lambda b)' = ad*_w (m + lambda b), (a, w) = 0, m = I w (Kozlov's servo-constraint of type II).

    .. math::

        \\frac{d}{dt}(m + \\lambda b) = \\operatorname{ad}^*_{\\omega} (m + \\lambda b), \\qquad
        (a, \\omega) = 0, \\qquad m = I \\omega,

    the Euler-Poincare equations of :math:`T + \\lambda (b, \\omega)`, :math:`T = \\tfrac12 (I\\omega, \\omega)`, with
    :math:`\\lambda` a state variable; with :math:`z = m + \\lambda b`, :math:`\\omega = W z` is linear in
    :math:`z` and :math:`\\dot z = \\operatorname{ad}^*_{W z} z`, realizable iff :math:`(I^{-1} a, b) \\neq 0`
    (Kozlov, lectures on servo-constraints).

    Parameters as :class:`servo.ServoFirstKind`. The state is (m_1..m_n, lambda); the integrated variable
    is z = m + lambda b, a pure coadjoint motion.
    """

    kind = "servo2"

    def __init__(self, algebra: LieAlgebra, inertia: Parameter, *, a: Parameter, b: Parameter,
                 name: str | None = None) -> None:
        super().__init__(algebra, inertia, a, b, name)
        self.state_dim = self.n + self.k
        if self.is_numeric:
            if self.k == 1:
                self.Iinv_b = self.Iinv @ self.b
                self.W = self.Iinv - np.outer(self.Iinv_b, self.Iinv_a) / self._r
                # z -> (m, lambda) as one product: lambda = (I^-1 a, z)/r, m = z - lambda b (from_problem)
                self._split = np.hstack([np.eye(self.n) - np.outer(self.Iinv_a / self._r, self.b),
                                         (self.Iinv_a / self._r)[:, None]])
            else:
                IinvB = self.Iinv @ self.B.T                       # (n, k)
                self.W = self.Iinv - IinvB @ np.linalg.solve(self.R, self.IinvA)

    # ------------------------------------------------------------ z <-> (m, lambda)
    def to_problem(self, state: ArrayLike) -> NDArray[np.float64]:
        """z = m + lambda b (several: z = m + B^T lambda)."""
        s = self._check_last(state, self.state_dim, "state (m, lambda)")
        if self.k == 1:
            return s[..., :self.n] + np.multiply.outer(s[..., self.n], self.b)
        return s[..., :self.n] + s[..., self.n:] @ self.B

    def from_problem(self, z: ArrayLike) -> NDArray[np.float64]:
        """(m, lambda) with lambda = (I^-1 a, z)/(I^-1 a, b) and m = z - lambda b (several: lambda =
        R^-1 A I^-1 z, m = z - B^T lambda)."""
        z = self._check_last(z, self.n, "z")
        if self.k == 1:      # z [I - (I^-1 a) b^T / r, I^-1 a / r]: one product (a 1001-point grid: 24 -> 7 us)
            return z @ self._split
        lam = self._solve_R(z @ self.IinvA.T)
        return np.concatenate([z - lam @ self.B, lam], axis=-1)

    def velocity_z(self, z: ArrayLike) -> NDArray[np.float64]:
        """w(z) = W z (linear), batched."""
        return self._check_last(z, self.n, "z") @ self.W.T

    # ------------------------------------------------------------------ numerics
    def velocity(self, state: ArrayLike) -> NDArray[np.float64]:
        """w = I^-1 m, batched."""
        self._require_numeric("velocity")
        s = self._check_last(state, self.state_dim, "state (m, lambda)")
        return s[..., :self.n] @ self.Iinv.T

    def multiplier(self, state: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(lambda, lambda') with lambda' = (I^-1 a, ad*_w z)/(I^-1 a, b), each of shape (...) (several
        constraints: lambda' = R^-1 A I^-1 ad*_w z, each of shape (..., k))."""
        s = self._check_last(state, self.state_dim, "state (m, lambda)")
        z = self.to_problem(s)
        zdot = self.algebra._coad(self.velocity_z(z), z)
        if self.k == 1:
            lam, lamdot = s[..., self.n].copy(), (zdot @ self.Iinv_a) / self._r
            return (lam, lamdot) if self.single else (lam[..., None], lamdot[..., None])
        return s[..., self.n:].copy(), self._solve_R(zdot @ self.IinvA.T)

    def rhs(self, state: ArrayLike) -> NDArray[np.float64]:
        """(m', lambda') with z' = ad*_{Wz} z, lambda' = (I^-1 a, z')/(I^-1 a, b), m' = z' - lambda' b."""
        s = self._check_last(state, self.state_dim, "state (m, lambda)")
        z = self.to_problem(s)
        zdot = self.algebra._coad(self.velocity_z(z), z)
        if self.k == 1:
            lamdot = (zdot @ self.Iinv_a) / self._r
            return np.concatenate([zdot - np.multiply.outer(lamdot, self.b), lamdot[..., None]], axis=-1)
        lamdot = self._solve_R(zdot @ self.IinvA.T)
        return np.concatenate([zdot - lamdot @ self.B, lamdot], axis=-1)

    @polynomial_quantity(2)
    def energy(self, state: ArrayLike) -> NDArray[np.float64]:
        """T = (I w, w)/2 = (I^-1 m, m)/2 (a first integral iff b is parallel to a)."""
        s = self._check_last(state, self.state_dim, "state (m, lambda)")
        m = s[..., :self.n]
        return 0.5 * np.einsum("...i,...i->...", m, m @ self.Iinv.T)

    def check_state(self, state: ArrayLike, project: bool = False) -> NDArray[np.float64]:
        """(m, lambda) with (a, I^-1 m) = 0 checked (or m projected I^-1-orthogonally if ``project``)."""
        self._require_numeric("check_state")
        s = self._check_last(state, self.state_dim, "state (m, lambda)", finite=True)
        m = self._check_m(s[..., :self.n], project)
        return np.concatenate([m, s[..., self.n:]], axis=-1)

    def state_from(self, w: ArrayLike | None = None, lam: ArrayLike = 0.0, m: ArrayLike | None = None,
                   project: bool = False) -> NDArray[np.float64]:
        """The state (I w, lambda) (or (m, lambda)); w must satisfy (a, w) = 0 unless ``project``."""
        if (w is None) == (m is None):
            raise ServoError("give exactly one of w (velocities) and m (momenta)")
        self._require_numeric("state_from")
        if w is not None:
            m = self._w_on_constraint(w, project) @ self.I.T
        else:
            m = self._check_m(self._check_last(m, self.n, "m", finite=True), project)
        lam = np.broadcast_to(self._lam_in(self._finite_lambda(lam)), m.shape[:-1] + (self.k,))
        return np.concatenate([m, lam], axis=-1)

    def problem(self) -> CoadjointProblem:
        """:class:`integrators.CoadjointProblem` z' = ad*_{Wz} z, with ``velocity_matrix`` W and no forcing.

        For b parallel to a, W is symmetric and H(z) = (z, W z)/2 = T is recorded as "energy". It carries
        :meth:`discrete_data` as ``discrete`` (the discrete vakonomic methods "dvak_exp", "dvak_cay"). Built
        once per system and shared (:meth:`LieSystem.problem`).
        """
        return self._built("problem", type(self)._problem)

    def _problem(self):
        self._require_numeric("problem")
        ham = None
        if self.b_parallel_a:
            W = self.W

            @polynomial_quantity(2)
            def ham(z):
                return 0.5 * np.einsum("...i,...i->...", z, z @ W.T)
        problem = CoadjointProblem(self.algebra, self.velocity_z, velocity_matrix=self.W, hamiltonian=ham,
                                   constraints=self._constraints_z(),
                                   name=self.name, outputs=self.outputs(), state_map=self.from_problem,
                                   tolerances={k: CONSTRAINT_CHECK_RTOL for k in self._constraints_z()})
        problem.discrete = self.discrete_data()   # the discrete vakonomic methods dvak_exp / dvak_cay
        return problem

    def _constraints_z(self):
        linear = polynomial_quantity(1)     # (a_i, W z): the guard's scale from its values on the axes
        if self.k == 1:
            return {"(a, w)": linear(lambda z: self.velocity_z(z) @ self.a)}
        return {f"(a_{i + 1}, w)": linear(lambda z, i=i: self.velocity_z(z) @ self.A[i]) for i in range(self.k)}

    def outputs(self) -> dict[str, Output]:
        """As for every Lie-group system: "multiplier" and "lambda" are lambda (one value per time, shape
        (K, ...) as for the first kind, so that ``to_csv`` writes it as a column), and "lambda_dot" is its
        rate lambda' = (I^-1 a, z')/(I^-1 a, b) (:meth:`multiplier` returns the pair)."""
        out = super().outputs()

        def lam(z: NDArray[np.float64]) -> NDArray[np.float64]:
            return self.multiplier(self.from_problem(z))[0]

        out["multiplier"] = lam
        out["lambda"] = lam       # the same callable: recorded once (integrators.core.result.finish)
        out["lambda_dot"] = lambda z: self.multiplier(self.from_problem(z))[1]
        return out

    def _equations(self):
        return second_kind_equations(self, self.kind)

    def _first_integrals(self):
        return second_kind_integrals(self)

    def _reduced(self):
        return reduce_second_kind(self)


class Vakonomic(ServoSecondKind):
    """The vakonomic model: ServoSecondKind with b = a; T = (I w, w)/2 is conserved."""

    kind = "vakonomic"
    #: b = a: the control is not a parameter of its own
    _SETTABLE = {"I": "inertia", "a": "a", "A": "a"}

    def __init__(self, algebra: LieAlgebra, inertia: Parameter, *, a: Parameter, name: str | None = None) -> None:
        super().__init__(algebra, inertia, a=a, b=a, name=name)

    @classmethod
    def _build(cls, algebra, inertia, a, b, name):
        return cls(algebra, inertia, a=a, name=name)


document_default(ServoSecondKind, "casimirs")
document_default(Vakonomic, "casimirs")
