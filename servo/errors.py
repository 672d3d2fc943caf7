"""Exceptions of the servo Lie-group systems (Euler-Poincare, servo-constraints of both kinds).

Every error is a ``ValueError`` subclass whose message names the identity or condition that failed,
where it failed and by how much (Kozlov's realizability condition, the constraint (a, w) = 0, the
symmetry and positivity of the inertia tensor).
"""


class ServoError(ValueError):
    """Base class for invalid input to a servo system."""


class InertiaError(ServoError):
    """The inertia tensor is not square of the algebra's size, not symmetric or not positive definite."""


class CovectorError(ServoError):
    """A constraint covector a or a control covector b has the wrong length or is zero."""


class UnrealizableConstraintError(ServoError):
    """Kozlov's realizability condition (I^-1 a, b) != 0 fails.

    Attributes
    ----------
    value : float or sympy expression
        The number (I^-1 a, b) at construction.
    scale : float or None
        |a| |b| |I^-1| it was compared against (numeric input).
    """

    def __init__(self, message, value=None, scale=None):
        super().__init__(message)
        self.value = value
        self.scale = scale


class ConstraintViolationError(ServoError):
    """A state does not satisfy the constraint (a, w) = 0; ``residual`` holds the largest |(a, w)|."""

    def __init__(self, message, residual=None):
        super().__init__(message)
        self.residual = residual


class SymbolicParameterError(ServoError):
    """A numeric operation (rhs, simulate, ...) was asked of a system with symbolic parameters."""
