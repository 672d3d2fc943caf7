"""Result object of the Lagrangian simulations and the one scipy driver they share.

The integrations here call ``scipy.integrate.solve_ivp`` directly (DOP853 by default, Radau for stiff
friction runs, tight tolerances, dense output and events). This is deliberate and independent of the
project's ``integrators`` package: event location to 1e-10 in time needs dense output and root
finding on it, which solve_ivp provides and which we trust as a second, independent method.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import solve_ivp
from ..errors import IntegrationError


@dataclass
class SimulationResult:
    """Samples of a simulation, mirroring ``solve_ivp``'s result.

    t : (m,) times; q, qd : (m, n) coordinates and velocities; lam : (m, k) multipliers
    (k = 0 for a free system; for servo-constraints of the second kind lambda is a state variable);
    events : list of (t, "leave" | "join", index) for one-sided constraints; nfev : rhs evaluations.
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    lam: np.ndarray
    events: list = field(default_factory=list)
    nfev: int = 0
    message: str = ""


def time_grid(t0, t_end, steps):
    """The output grid linspace(t0, t_end, steps + 1); checks steps >= 1 and t_end != t0."""
    if int(steps) < 1:
        raise IntegrationError(f"steps must be >= 1, got {steps}")
    if not np.isfinite(t_end) or t_end == t0:
        raise IntegrationError(f"t_end must be finite and differ from t0 = {t0}, got {t_end}")
    return np.linspace(t0, t_end, int(steps) + 1)


def check_solution(sol, where):
    """Raise IntegrationError if solve_ivp failed or returned non-finite values."""
    if sol.status == -1:
        raise IntegrationError(f"{where}: solve_ivp failed at t = {sol.t[-1]:.6g}: {sol.message}")
    if not np.all(np.isfinite(sol.y)):
        raise IntegrationError(f"{where}: non-finite state produced (blow-up) before t = {sol.t[-1]:.6g}")


def integrate_first_order(rhs, q0, qd0, t_end, steps, t0, method, rtol, atol, n, lam_of=None, extra0=(),
                          vectorized=False, jac=None):
    """Integrate y' = rhs(t, y), y = (q, q', extra) with solve_ivp on the grid of ``time_grid``.

    ``lam_of(t, y)`` (optional) returns the multipliers at a state (array (k,)) for the result.
    """
    q0 = np.asarray(q0, dtype=float)
    qd0 = np.asarray(qd0, dtype=float)
    if q0.shape != (n,) or qd0.shape != (n,):
        raise IntegrationError(f"q0 and qd0 must have shape ({n},), got {q0.shape} and {qd0.shape}")
    y0 = np.concatenate([q0, qd0, np.asarray(extra0, dtype=float).ravel()])
    grid = time_grid(t0, t_end, steps)
    sol = solve_ivp(rhs, (t0, t_end), y0, method=method, t_eval=grid, rtol=rtol, atol=atol, vectorized=vectorized,
                    **({} if jac is None else {"jac": jac}))
    check_solution(sol, "simulate")
    Y = sol.y.T
    lam = np.zeros((len(grid), 0)) if lam_of is None else np.array([lam_of(t, y) for t, y in zip(grid, Y)])
    return SimulationResult(t=grid, q=Y[:, :n], qd=Y[:, n:2 * n], lam=lam, nfev=sol.nfev, message=sol.message)
