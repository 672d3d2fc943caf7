"""Newton's method for the implicit steps of the discrete mechanics schemes, batched over the leading
axes (every trajectory of an ensemble solves its own system in the same numpy calls).

The unknown u (..., p) solves R(u) = 0. The Jacobian dR/du is formed column by column by complex-step
differentiation, J e_j = Im R(u + i eps e_j) / eps with eps = 1e-30 (Squire and Trefethen 1998): exact
to round-off (no subtraction), so Newton converges quadratically; all p columns are one batched call of
R on (p, ..., p) complex arguments (the perturbation axis in front, so R's data broadcast). R must be complex-analytic in u (numpy's expm, solve, sin, cos are).
Iteration stops when max |du| <= ``tol`` * max(1, max |u|) over the batch, or when the increment stops
decreasing below 1e3 * tol (round-off floor); after ``max_iter`` iterations ConvergenceError.
"""

from __future__ import annotations

import numpy as np

from ...core.errors import ConvergenceError

EPS_CS = 1e-30


def jacobian(R, u):
    """dR/du (..., q, p) at real u (..., p) by complex steps (one batched call of R)."""
    p = u.shape[-1]
    # (p, ..., p): U[j] = u + i eps e_j; the perturbation axis in front broadcasts with the data (..., .)
    U = u[None] + 1j * EPS_CS * np.eye(p).reshape((p,) + (1,) * (u.ndim - 1) + (p,))
    return np.moveaxis(np.imag(R(U)) / EPS_CS, 0, -1)


def solve(R, u0, tol=4e-16, max_iter=30, what="the implicit step"):
    """u with R(u) = 0 from the guess u0 (..., p); returns (u, iterations)."""
    u = np.array(u0, dtype=float)
    prev = np.inf
    for it in range(1, max_iter + 1):
        r = np.real(R(u.astype(complex)))
        J = jacobian(R, u)
        du = np.linalg.solve(J, -r[..., None])[..., 0]
        u = u + du
        d = float(np.max(np.abs(du))) if du.size else 0.0
        scale = max(1.0, float(np.max(np.abs(u)))) if u.size else 1.0
        if not np.isfinite(d):
            raise ConvergenceError(f"Newton's method for {what} produced a non-finite iterate (iteration {it}); "
                                   f"reduce h")
        if d <= tol * scale or (d >= prev and d <= 1e3 * tol * scale):
            return u, it
        prev = d
    raise ConvergenceError(f"Newton's method for {what} did not converge: last increment {d:.3e} > "
                           f"{tol * scale:.1e} after {max_iter} iterations (reduce h)")
