"""Linear change of variables taking a vakonomic / second-kind rigid body (b parallel to a) to Euler's equations.

Kozlov's lectures on servo-constraints ("Твердое тело с левоинвариантной сервосвязью"): for
a = (0, 0, 1), b = (0, 0, b3) (the case b2 = 0) a linear map (w1, w2, lambda) -> (m1, m2, m3) turns the
equations into Euler's m1' = (J3 - J2) m2 m3, m2' = (J1 - J3) m3 m1, m3' = (J2 - J1) m1 m2.

Derivation (general a, b = beta a): z = I w + lambda b obeys z' = z x (W z) with
W = I^-1 - (I^-1 a)(I^-1 a)^T/(a, I^-1 a), symmetric positive semidefinite with W a = 0. Write
W = R^T diag(J1, J2, J3) R with R in SO(3); then m = R z satisfies m' = R(z x Wz) = m x diag(J) m,
which is Euler's system with the J's as "inverse moments" (J for the eigenvector a is 0). For a = e3 the
upper 2x2 block of W is the inverse of I2 = [[I11, I12], [I12, I22]] (Schur complement), so J1, J2 are the
inverses of the principal values A1, A2 of I2, J3 = 0, and with I2 = rot(-t) diag(A1, A2) rot(t):

    m1 = A1 (cos t w1 + sin t w2),  m2 = A2 (-sin t w1 + cos t w2),  m3 = I13 w1 + I23 w2 + b3 lambda.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy as sp
from numpy.typing import ArrayLike, NDArray

from ..errors import ServoError
from .servo_second import ServoSecondKind

__all__ = ["EulerForm", "euler_form", "euler_form_symbolic"]


class EulerForm:
    """m = P x (x = (w_free..., lambda) on the constraint, or the state through ``from_state``) with Euler's J.

    Attributes
    ----------
    J : (3,) the coefficients of m1' = (J3 - J2) m2 m3, ...
    R : (3, 3) rotation with m = R (I w + lambda b)
    """

    def __init__(self, system: ServoSecondKind, J: ArrayLike, R: ArrayLike) -> None:
        self.system = system
        self.J = np.asarray(J, dtype=float)
        self.R = np.asarray(R, dtype=float)

    def from_state(self, state: ArrayLike) -> NDArray[np.float64]:
        """m = R (m_state + lambda b) for states (..., 4)."""
        return self.system.to_problem(state) @ self.R.T

    def rhs(self, m: ArrayLike) -> NDArray[np.float64]:
        """Euler's equations m' = m x diag(J) m: m1' = (J3 - J2) m2 m3, ..."""
        m = np.asarray(m, dtype=float)
        J1, J2, J3 = self.J
        return np.stack([(J3 - J2) * m[..., 1] * m[..., 2], (J1 - J3) * m[..., 2] * m[..., 0],
                         (J2 - J1) * m[..., 0] * m[..., 1]], axis=-1)


def euler_form(system: ServoSecondKind) -> EulerForm:
    """The :class:`EulerForm` of a numeric second-kind system on so(3) with b parallel to a."""
    if not isinstance(system, ServoSecondKind) or system.algebra.closed_form != "so3" or system.k != 1:
        raise ServoError("euler_form needs a servo-constraint of the second kind on so(3)")
    system._require_numeric("euler_form")
    if not system.b_parallel_a:
        raise ServoError("the change of variables to Euler's equations needs b parallel to a (b2 = 0 for "
                         "a = e3): for other b the velocity map W is not symmetric")
    W = 0.5 * (system.W + system.W.T)
    J, V = np.linalg.eigh(W)  # W = V diag(J) V^T, R = V^T
    if np.linalg.det(V) < 0:
        V[:, 0] = -V[:, 0]
    return EulerForm(system, J, V.T)


def euler_form_symbolic() -> dict[str, Any]:
    """The slide's case a = e3, b = (0, 0, b3), symbolically.

    Returns a dict with the symbols (A1, A2, t, I13, I23, I33, b3), the inertia I written with
    I11 = A1 cos^2 t + A2 sin^2 t, I12 = (A1 - A2) cos t sin t, I22 = A1 sin^2 t + A2 cos^2 t (every symmetric
    positive 2x2 block has this form), the map ``P`` ((w1, w2, lambda) -> m, a 3x3 Matrix) and
    ``J`` = (1/A1, 1/A2, 0).
    """
    A1, A2, I13, I23, I33, b3 = sp.symbols("A1 A2 I13 I23 I33 b3", real=True)
    t = sp.Symbol("t_I", real=True)
    c, s = sp.cos(t), sp.sin(t)
    I = sp.Matrix([[A1 * c**2 + A2 * s**2, (A1 - A2) * c * s, I13],
                   [(A1 - A2) * c * s, A1 * s**2 + A2 * c**2, I23],
                   [I13, I23, I33]])
    P = sp.Matrix([[A1 * c, A1 * s, 0], [-A2 * s, A2 * c, 0], [I13, I23, b3]])
    return {"A1": A1, "A2": A2, "t": t, "I13": I13, "I23": I23, "I33": I33, "b3": b3, "inertia": I,
            "P": P, "J": (1 / A1, 1 / A2, sp.Integer(0))}
