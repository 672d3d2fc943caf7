"""The discrete vakonomic scheme in coordinates (``dvak_mid``) for a Lagrangian L(q, v) with constraints
phi(q, v) = 0 and the controlled Lagrangian L* = L + lambda . N(q, v) of the models of the second kind
(:class:`integrators.reference.nonholonomic.problems.VakonomicCoordinateData`; the vakonomic model is
N = -phi, so L* = L - lambda . phi).

**Discrete vakonomic mechanics (Benito and Martin de Diego 2005)**: the discrete action
sum_k L*_d(q_k, q_{k+1}; mu_k) with the midpoint discrete Lagrangian

    L*_d(q_0, q_1; mu) = h L*(q_{1/2}, w; mu),   q_{1/2} = (q_0 + q_1)/2,   w = (q_1 - q_0)/h,

one multiplier mu_k per interval and the discrete constraint phi(q_{1/2}, w) = 0 per interval; its
stationarity in q_k is the two-step discrete Euler-Lagrange equation
D_2 L*_d(q_{k-1}, q_k; mu_{k-1}) + D_1 L*_d(q_k, q_{k+1}; mu_k) = 0. In position-momentum form
(p_k = D_2 L*_d(q_{k-1}, q_k) = -D_1 L*_d(q_k, q_{k+1})), with D_1 L*_d = h/2 L*_q - L*_v and
D_2 L*_d = h/2 L*_q + L*_v at (q_{1/2}, w; mu):

    L*_v(q_{1/2}, w; mu) - h/2 L*_q(q_{1/2}, w; mu) = p_0,   phi(q_{1/2}, w) = 0       (Newton in q_1, mu: n + k)
    p_1 = L*_v(q_{1/2}, w; mu) + h/2 L*_q(q_{1/2}, w; mu).

The state of the continuous model is (q, v, lambda); it enters and leaves through the continuous Legendre
transform of L* with the constraint at the node:

    p_0 = L*_v(q_0, v_0; lambda_0);     L*_v(q_1, v_1; lambda_1) = p_1,  phi(q_1, v_1) = 0   (Newton: n + k).

So phi(q_k, v_k) = 0 holds at every node to the Newton tolerance. The midpoint L*_d is symmetric
(L*_d(q_0, q_1; mu, h) = -L*_d(q_1, q_0; mu, -h)) and the node transforms are exact, so the map is symmetric:
order 2 (measured in the tests against the continuous vakonomic equations solved by DOP853 at rtol 1e-12).
Its map on (q, p) is symplectic on the constraint-reduced space as the discrete variational principle
gives (Benito and Martin de Diego 2005); for a servo-constraint of the second kind proper (N != -phi) the same
step is the discrete Euler-Lagrange equation of L* with phi imposed per interval, for which no discrete
principle is published that we know of: its order is measured, not inherited.

Compiled runs (backend "numba"): the generated straight-line loop of :mod:`integrators.codegen.vakonomic_source`
where the problem carries expression source (L*, phi as text; servo.coordinates writes it), else the loop of
:func:`integrators.reference.nonholonomic.vakonomic_kernel.make_dvak_run` on its scalar functions.
"""

from __future__ import annotations

import numpy as np

from . import compiled, newton


class VakonomicStepper:
    """One step (q, v, lambda) -> (q, v, lambda) of the discrete vakonomic scheme (module docstring)."""

    def __init__(self, method, problem):
        self.d = problem.discrete
        self.name = method.name
        self.fevals = 0
        self.nfev_total = 0
        self.compiled_reason = (None if getattr(self.d, "scalar", None) is not None
                                or getattr(self.d, "source", None) is not None else
                                f"{method.name}'s compiled loop needs the expression source or the scalar functions "
                                f"of the problem (VakonomicCoordinateData(..., source={{'L': ..., 'phi': [...]}}) or "
                                f"scalar=(Lv1, Lq1, phi1)); servo.coordinates writes both)")

    def run(self, y0, t0, h, n, save_every, backend, jit=None, generated=None):
        """The whole run by the compiled loop (backend "numba"): the generated one (``generated``, the engine's
        maker) on the problem's expression source, else the loop on its scalar functions (the same step,
        Jacobians by complex steps), or None (the driver's numpy loop)."""
        if backend != "numba" or self.compiled_reason is not None:
            return None
        res = compiled.run_dvak(self, y0, t0, h, n, save_every, jit, generated)
        if res is None:
            self.compiled_reason = (f"{self.name}: no generated loop for these {self.d.n} coordinates and "
                                    f"{self.d.k} constraints (the straight-line loop's limit of unknowns, or no "
                                    f"maker) and no scalar functions for the generic compiled loop")
        return res

    def delta(self, t, y, h):
        return self.step(t, y, h) - y

    def step(self, t, y, h):
        d, n, k = self.d, self.d.n, self.d.k
        y = np.asarray(y, dtype=float)
        if h == 0:
            return y.copy()
        q0, v0, lam0 = y[..., :n], y[..., n:2 * n], y[..., 2 * n:]
        p0 = np.real(d.Lv(q0, v0, lam0))

        def R(u):
            q1, mu = u[..., :n], u[..., n:]
            qm, w = 0.5 * (q0 + q1), (q1 - q0) / h
            return np.concatenate([d.Lv(qm, w, mu) - 0.5 * h * d.Lq(qm, w, mu) - p0, d.phi(qm, w)], axis=-1)

        u, it1 = newton.solve(R, np.concatenate([q0 + h * v0, lam0], axis=-1), what=f"{self.name} at t = {t:.6g}")
        q1, mu = u[..., :n], u[..., n:]
        qm, w = 0.5 * (q0 + q1), (q1 - q0) / h
        p1 = np.real(d.Lv(qm, w, mu) + 0.5 * h * d.Lq(qm, w, mu))

        def N(u):
            v1, lam1 = u[..., :n], u[..., n:]
            return np.concatenate([d.Lv(q1, v1, lam1) - p1, d.phi(q1, v1)], axis=-1)

        u, it2 = newton.solve(N, np.concatenate([2 * w - v0, 2 * mu - lam0], axis=-1),
                              what=f"{self.name}'s node Legendre transform at t = {t + h:.6g}")
        self.nfev_total += it1 + it2
        return np.concatenate([q1, u], axis=-1)
