"""The exceptions of ``servo``: one hierarchy for its three rooms.

Every error is a ``ValueError`` subclass (bad input) whose message names the identity or condition
that failed, where it failed and by how much. ``ServoError`` is the base of all of them::

    ServoError
    ├── InertiaError                    I not square of the algebra's size, not symmetric, not positive definite
    ├── CovectorError                   a constraint or control covector of the wrong shape, or zero
    ├── UnrealizableConstraintError     the realizability condition fails: (I^-1 a, b) = 0 on a Lie group,
    │                                   det (A^-1 M, dphi/dq') = 0 in coordinates (alias RealizabilityError)
    ├── ConstraintViolationError        a state off the constraint (alias InitialConstraintError)
    ├── SymbolicParameterError          a numeric operation asked of a system with symbolic parameters
    ├── IntegrationError                an integration that cannot go on (blow-up, solver failure)
    ├── LagrangianError                 bad input to a system in coordinates
    │   ├── GaussError                  the compulsion problem of Gauss's principle
    │   └── ActiveSetError              no consistent active set of one-sided constraints
    └── QuadraticSystemError            bad input to a homogeneous quadratic system
        ├── ExactCheckError             the exact (sympy) invariant-line check cannot decide
        └── NotLinearizableError        no time change makes the system linear
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import sympy
    from numpy.typing import NDArray


class ServoError(ValueError):
    """Base class of every servo exception (all are bad input, hence ValueError)."""


class InertiaError(ServoError):
    """The inertia tensor is not square of the algebra's size, not symmetric or not positive definite."""


class CovectorError(ServoError):
    """A constraint covector a or a control covector b has the wrong length or is zero."""


class UnrealizableConstraintError(ServoError):
    """The realizability condition fails: (I^-1 a, b) = 0 on a Lie group (Kozlov's lectures on
    servo-constraints), det (A^-1 M, dphi/dq') = 0 in coordinates (Kozlov 2019, section 7).

    Attributes
    ----------
    value : float, array or sympy expression
        The number (I^-1 a, b) (or the determinant, one per state of a batch) at construction.
    scale : float or None
        What it was compared against (numeric input).
    """

    def __init__(self, message: str, value: float | NDArray[np.float64] | sympy.Expr | None = None,
                 scale: float | None = None) -> None:
        super().__init__(message)
        self.value = value
        self.scale = scale


#: the same error under the name used by the systems in coordinates
RealizabilityError = UnrealizableConstraintError


class ConstraintViolationError(ServoError):
    """A state does not satisfy a constraint; ``residual`` holds the largest residual and ``index``
    (where known) which constraint."""

    def __init__(self, message: str, residual: float | None = None, index: int | None = None) -> None:
        super().__init__(message)
        self.residual = residual
        self.index = index


#: the same error under the name used by the systems in coordinates
InitialConstraintError = ConstraintViolationError


class SymbolicParameterError(ServoError):
    """A numeric operation (rhs, simulate, ...) was asked of a system with symbolic parameters."""


class IntegrationError(ServoError):
    """An integration that cannot go on: the solver failed or the state stopped being finite."""


class LagrangianError(ServoError):
    """Invalid input to a Lagrangian system (coordinates, energies, forces, covectors, states)."""


class GaussError(LagrangianError):
    """The compulsion problem of Gauss's principle is ill-posed (shapes, singular metric, infeasible)."""


class ActiveSetError(LagrangianError):
    """No active set of the one-sided constraints satisfies the complementarity conditions."""


class QuadraticSystemError(ServoError):
    """Bad input for a QuadraticSystem (shape, non-finite entries, non-quadratic expressions)."""


class ExactCheckError(QuadraticSystemError):
    """The exact (sympy) invariant-line computation cannot decide (degree lost, not zero-dimensional)."""


class NotLinearizableError(QuadraticSystemError):
    """No time change takes the quadratic system to a linear one."""
