"""Invariant manifolds of a rigid body with a left-invariant servo-constraint of the second kind.

Kozlov's lectures on servo-constraints ("Инвариантные многообразия"). On so(3) the second-kind
system (I w + lambda b)' + w x (I w + lambda b) = 0, (a, w) = 0, together with the Poisson equations
alpha' + w x alpha = 0 (and for beta, gamma: the fixed space axes seen in the body), keeps the
projections (I w + lambda b, alpha) = c1, (.., beta) = c2, (.., gamma) = c3. On c1 = c2 = 0, c3 = k:

    I w + lambda b = k gamma,  lambda = k (a, I^-1 gamma)/(a, I^-1 b),
    w = k I^-1 (gamma - lambda/k b) = k W gamma,
    gamma' + k [I^-1 (gamma - ((a, I^-1 gamma)/(a, I^-1 b)) b)] x gamma = 0.          (2)

Derived here (and tested):

* for b parallel to a (vakonomic) the energy on the sphere is quadratic in gamma,
  H = (I w, w)/2 = (k^2/2) [(gamma, I^-1 gamma) - (a, I^-1 gamma)^2/(a, I^-1 a)]
  (the slide prints (gamma, I^-1 gamma)^2, which is not conserved: a misprint);
* the flow on SO(3) restricted to the manifold, R' = R hat(k W gamma), gamma = R^T e3, has divergence
  -k ((I^-1 b) x (I^-1 a), gamma)/(a, I^-1 b) with respect to the Haar measure sin(theta) dtheta dphi dpsi:
  the Haar measure is preserved for b parallel to a and not in general.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import sympy as sp
from numpy.typing import ArrayLike, NDArray

from ..errors import ServoError
from .servo_second import ServoSecondKind

__all__ = ["PoissonSphere", "euler_angle_divergence", "euler_angles_frame"]


class PoissonSphere:
    """The reduced system (2) on the Poisson sphere for a second-kind system on so(3) and a level k != 0."""

    def __init__(self, system: ServoSecondKind, k: float) -> None:
        if not isinstance(system, ServoSecondKind) or system.algebra.closed_form != "so3" or system.k != 1:
            raise ServoError("the Poisson-sphere reduction is for servo-constraints of the second kind on so(3)")
        if k == 0:
            raise ServoError("the level k of I w + lambda b = k gamma must be non-zero")
        system._require_numeric("PoissonSphere")
        self.system = system
        self.k = float(k)

    def rhs(self, gamma: ArrayLike) -> NDArray[np.float64]:
        """gamma' = -k (W gamma) x gamma = k gamma x (W gamma), batched."""
        g = np.asarray(gamma, dtype=float)
        return self.k * np.cross(g, g @ self.system.W.T)

    def velocity(self, gamma: ArrayLike) -> NDArray[np.float64]:
        """w = k W gamma = k I^-1 (gamma - ((a, I^-1 gamma)/(a, I^-1 b)) b)."""
        return self.k * np.asarray(gamma, dtype=float) @ self.system.W.T

    def multiplier(self, gamma: ArrayLike) -> NDArray[np.float64]:
        """lambda = k (a, I^-1 gamma)/(a, I^-1 b)."""
        s = self.system
        return self.k * (np.asarray(gamma, dtype=float) @ s.Iinv_a) / s._r

    def state(self, gamma: ArrayLike) -> NDArray[np.float64]:
        """The state (m, lambda) of the full system on the manifold I w + lambda b = k gamma."""
        g = np.asarray(gamma, dtype=float)
        lam = self.multiplier(g)
        m = self.k * g - np.multiply.outer(lam, self.system.b)
        return np.concatenate([m, lam[..., None]], axis=-1)

    def gamma(self, state: ArrayLike) -> NDArray[np.float64]:
        """gamma = (m + lambda b)/k for a state on the manifold."""
        return self.system.to_problem(state) / self.k

    def energy_expr(self, gamma_symbols: Sequence[sp.Symbol] | None = None) -> sp.Expr:
        """The energy on the sphere (b parallel to a only; ServoError otherwise), a sympy expression:
        (k^2/2) [(gamma, I^-1 gamma) - (a, I^-1 gamma)^2 / (a, I^-1 a)]."""
        s = self.system
        if not s.b_parallel_a:
            raise ServoError("T = (I w, w)/2 is a first integral only for b parallel to a (vakonomic); "
                             "for this b it is not conserved")
        g = sp.Matrix(gamma_symbols or sp.symbols("gamma1:4", real=True))
        K, a = s.Iinv_sym, s.a_sym
        k = sp.nsimplify(self.k)
        return sp.expand(k**2 / 2 * ((g.T * K * g)[0, 0] - (a.T * K * g)[0, 0] ** 2 / (a.T * K * a)[0, 0]))

    def energy(self, gamma: ArrayLike) -> NDArray[np.float64]:
        """Numeric value of :meth:`energy_expr`, batched."""
        s = self.system
        if not s.b_parallel_a:
            self.energy_expr()
        g = np.asarray(gamma, dtype=float)
        Kg = g @ s.Iinv.T
        return 0.5 * self.k**2 * (np.einsum("...i,...i->...", g, Kg) - (Kg @ s.a) ** 2 / (s.a @ s.Iinv_a))


@lru_cache(maxsize=None)
def euler_angles_frame() -> tuple[tuple[sp.Symbol, sp.Symbol, sp.Symbol], sp.Matrix, sp.Matrix]:
    """(q, R, B) with q = (psi, theta, phi), R = Rz(psi) Rx(theta) Rz(phi) (body to space) and B with
    w = B q' for the body angular velocity hat(w) = R^T R'; gamma = R^T e3 = (sin theta sin phi,
    sin theta cos phi, cos theta). Everything is derived from R (no memorised kinematic formulas)."""
    psi, theta, phi = sp.symbols("psi theta phi", real=True)

    def rz(x):
        return sp.Matrix([[sp.cos(x), -sp.sin(x), 0], [sp.sin(x), sp.cos(x), 0], [0, 0, 1]])

    def rx(x):
        return sp.Matrix([[1, 0, 0], [0, sp.cos(x), -sp.sin(x)], [0, sp.sin(x), sp.cos(x)]])

    R = rz(psi) * rx(theta) * rz(phi)
    q = (psi, theta, phi)
    cols = []
    pyth = {sp.cos(x) ** 2: 1 - sp.sin(x) ** 2 for x in q}
    for qi in q:
        Om = (R.T * sp.diff(R, qi)).applyfunc(lambda e: sp.expand(sp.expand(e).subs(pyth)))
        cols.append(sp.Matrix([Om[2, 1], Om[0, 2], Om[1, 0]]))
    return q, R, sp.Matrix.hstack(*cols)


@lru_cache(maxsize=None)
def _generic_divergence():
    (psi, theta, phi), R, B = euler_angles_frame()
    Wg = sp.Matrix(3, 3, sp.symbols("W0:9"))
    gamma = R.T * sp.Matrix([0, 0, 1])
    Binv = (B.adjugate() / B.det()).applyfunc(sp.trigsimp)
    rates = Binv * (Wg * gamma)
    dens = sp.sin(theta)
    div = sum(sp.diff(dens * r, q) for r, q in zip(rates, (psi, theta, phi))) / dens
    return Wg, sp.trigsimp(sp.expand(sp.cancel(div)))


def euler_angle_divergence(W: ArrayLike | sp.MatrixBase, k: float | sp.Expr = 1) -> sp.Expr:
    """Divergence, with respect to the Haar measure sin(theta) dpsi dtheta dphi, of the flow on SO(3)
    R' = R hat(w), w = k W gamma, gamma = R^T e3 (W a 3x3 sympy or numeric matrix).

    The rates solve w = B(q) q'; div = (1/sin theta) sum_i d(sin theta q'_i)/dq_i. It is linear in W, so it
    is derived once for a generic W and then evaluated.
    """
    Wg, div = _generic_divergence()
    W = sp.Matrix(W)
    return sp.expand(k * div.subs(dict(zip(Wg, W)), simultaneous=True))
