"""The discrete Moser-Veselov algorithm for the free rigid body on so(3)* (Moser and Veselov
(1991); McLachlan and Zanna (2005), "The discrete Moser-Veselov algorithm for the free rigid body,
revisited").

With I = diag(I_1, I_2, I_3) write D = diag(d_1, d_2, d_3), d_i = (I_j + I_k - I_i)/2, so that
I_i = d_j + d_k and D hat(a) + hat(a) D = hat(I a). One step is

    find Omega in SO(3) with   hat(h m_n) = Omega^T D - D Omega,      then   m_{n+1} = Omega m_n.

(Linearising, Omega = I - h hat(w) + O(h^2) with w = I^-1 m, so m_{n+1} = m_n + h m_n x w + O(h^2):
Euler's equations.) The update is a rotation, so |m| is kept to round-off; the energy is kept as
well (measured to round-off in the tests). The implicit equation is
solved with Omega = exp(hat omega) (Rodrigues) by the simplified Newton iteration
omega <- omega + I^-1 (vee(Omega^T D - D Omega) - h m) (its linearisation at omega = 0 is -I omega),
batched, to ``tol`` relative; ConvergenceError otherwise.
"""

from __future__ import annotations

import numpy as np

from liegroups import so3_coefficients

from ..core.errors import ConvergenceError
from ..geometry.spaces import _cross


class MoserVeselovStepper:
    """Stepper for the ``moser_veselov`` method (order 2, keeps the Casimir |m|^2)."""

    fevals = 0

    def __init__(self, method, problem, tol=1e-15, max_iter=60):
        a = np.diag(problem.velocity_matrix).astype(float)
        self.inertia = 1.0 / a
        I1, I2, I3 = self.inertia
        self.d = np.array([(I2 + I3 - I1) / 2, (I3 + I1 - I2) / 2, (I1 + I2 - I3) / 2])
        self.tol, self.max_iter = tol, max_iter
        self.iterations = 0

    def _residual(self, omega, target):
        """vee(Omega^T D - D Omega) - target with Omega = exp(hat omega)."""
        a, b = so3_coefficients(np.einsum("...i,...i->...", omega, omega))
        eye = np.eye(3)
        X = np.zeros(omega.shape[:-1] + (3, 3))
        X[..., 0, 1], X[..., 0, 2], X[..., 1, 2] = -omega[..., 2], omega[..., 1], -omega[..., 0]
        X[..., 1, 0], X[..., 2, 0], X[..., 2, 1] = omega[..., 2], -omega[..., 1], omega[..., 0]
        R = eye + a[..., None, None] * X + b[..., None, None] * (X @ X)
        M = np.swapaxes(R, -1, -2) * self.d[None, :] - self.d[:, None] * R
        return np.stack([M[..., 2, 1], M[..., 0, 2], M[..., 1, 0]], axis=-1) - target

    def _omega(self, t, m, h):
        target = h * m
        omega = -h * m / self.inertia
        scale = max(1e-300, float(np.max(np.abs(target))))
        for it in range(self.max_iter):
            r = self._residual(omega, target)
            omega = omega + r / self.inertia
            err = float(np.max(np.abs(r)))
            if err <= self.tol * scale:
                self.iterations = it + 1
                return omega
        raise ConvergenceError(f"Moser-Veselov equation hat(h m) = Omega^T D - D Omega did not converge at "
                               f"t = {t}: residual {err:.3e} > {self.tol * scale:.1e} after {self.max_iter} "
                               f"iterations (reduce h)")

    def delta(self, t, m, h):
        """Omega m - m = a (omega x m) + b omega x (omega x m)."""
        omega = self._omega(t, m, h)
        a, b = so3_coefficients(np.einsum("...i,...i->...", omega, omega))
        c1 = _cross(omega, m)
        return a[..., None] * c1 + b[..., None] * _cross(omega, c1)

    def step(self, t, m, h):
        return m + self.delta(t, m, h)
