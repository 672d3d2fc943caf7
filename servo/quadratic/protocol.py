"""What the solvers of servo.quadratic read from a system: the protocol ``QuadraticField``.

``QuadraticSystem`` implements it; the invariant-line solver, the Kovalevskaya exponents, the first
integrals and the exact checks are written against it (they read Q, p, is_real, variables, v and the
Jacobian, and a claim or integral may ask for the invariant lines), so that ``system`` can import them
without their importing ``system``.
"""
from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from numpy.typing import ArrayLike, NDArray

from .line_types import InvariantLines

__all__ = ["QuadraticField"]


@runtime_checkable
class QuadraticField(Protocol):
    """x' = v(x), v_i(x) = sum_{j,k} Q[i,j,k] x_j x_k with Q of shape (p, p, p), symmetric in (j, k)."""

    variables: tuple[str, ...]

    @property
    def Q(self) -> NDArray[Any]:
        """The coefficient tensor, shape (p, p, p), real or complex."""

    @property
    def p(self) -> int:
        """Dimension of the state space."""

    @property
    def is_real(self) -> bool:
        """True if Q is real."""

    def v(self, x: ArrayLike) -> NDArray[Any]:
        """v(x), batched over the leading axes of x."""

    def jacobian(self, x: ArrayLike) -> NDArray[Any]:
        """dv_i/dx_j = 2 sum_k Q[i,j,k] x_k, shape (..., p, p)."""

    def invariant_lines(self, **kw: Any) -> InvariantLines:
        """All invariant lines (``servo.quadratic.invariant_lines.invariant_lines`` of the system)."""
