"""Discrete Lagrange-d'Alembert schemes in coordinates for L = v^T M v / 2 - V(q), A(q) v = 0 (constant
M, :class:`integrators.reference.nonholonomic.problems.LagrangeDAlembertData`); one step maps y = (q, v) with
A(q) v = 0 to the next such state.

**McLachlan and Perlmutter (2006), eq. (4.18)** (``mp_lda``): the second-order discrete
Lagrange-d'Alembert method

    q_{1/2} = q_0 + h/2 v_0,
    M (v_1 - v_0) = h (-grad V(q_{1/2}) + A(q_{1/2})^T lambda),
    A(q_1) v_1 = 0,   q_1 = q_{1/2} + h/2 v_1,

implicit in (v_1, lambda) (Newton, n + k unknowns, Jacobian [[M, -h A(q_{1/2})^T], [A(q_1) +
h/2 dA(q_1)[v_1], 0]] exact). Reversible: (q_1, -v_1) maps to (q_0, -v_0) with the same lambda. Keeps
A(q) v = 0 to round-off at every step; energy not exactly (bounded where the problem is reversible
integrable, Modin and Verdier 2020). Order 2.

**Nonholonomic RATTLE (Ferraro, Iglesias and Martin de Diego 2008)** (``nh_rattle``). Their geometric
nonholonomic integrator (GNI) for the trapezoidal discrete Lagrangian is a two-step method: the discrete
Lagrange-d'Alembert equation D1 L_d(q_k, q_{k+1}) + D2 L_d(q_{k-1}, q_k) = h lambda_k A(q_k)^T and the
constraint on the average of the two discrete Legendre transforms, A(q_k) M^-1 p_k = 0 with
p_k = (p_{k-1/2} + p_{k+1/2})/2; written with half steps (their nonholonomic RATTLE)

    p_{k+1/2} = p_k - h/2 grad V(q_k) + h/2 A(q_k)^T lambda_k,
    q_{k+1}   = q_k + h M^-1 p_{k+1/2},
    p_{k+1}   = p_{k+1/2} - h/2 grad V(q_{k+1}) + h/2 A(q_{k+1})^T lambda_{k+1},   A(q_{k+1}) M^-1 p_{k+1} = 0,

where each node's lambda_k enters both half steps around it. A one-step map of (q, v) (what
``integrate``, its events, guard and outputs need) cannot carry lambda_k from one step to the next, so
here the first half step takes lambda_k = the Lagrange-d'Alembert multiplier of the state (q_k, v_k)
(the consistent starting value of the two-step method, which is also its value to O(h^2)) and the second
half step the lambda_{k+1} that puts p_{k+1} on the constraint (a k x k linear solve: the method is
explicit). Order 2, A(q) v = 0 to round-off at every node; this one-step form is not symmetric (the
two-step GNI is), which the benchmarks show on the contact oscillator.
"""

from __future__ import annotations

import numpy as np

from . import newton


class _CoordStepper:
    def __init__(self, method, problem):
        self.d = problem.discrete
        self.name = method.name
        self.fevals = 0
        self.nfev_total = 0

    def delta(self, t, y, h):
        return self.step(t, y, h) - y


class MPStepper(_CoordStepper):
    """McLachlan-Perlmutter (2006) eq. (4.18)."""

    def step(self, t, y, h):
        d, n, k = self.d, self.d.n, self.d.k
        y = np.asarray(y, dtype=float)
        if h == 0:                 # the identity (event location evaluates steps of length 0)
            return y.copy()
        q0, v0 = y[..., :n], y[..., n:]
        qh = q0 + 0.5 * h * v0
        F = -np.asarray(d.grad_V(qh), dtype=float)
        Ah = d.A(qh)
        u = np.concatenate([v0, np.zeros(y.shape[:-1] + (k,))], axis=-1)
        scale = max(1.0, float(np.max(np.abs(y))))
        prev = np.inf
        for it in range(1, 31):
            v1, lam = u[..., :n], u[..., n:]
            q1 = qh + 0.5 * h * v1
            A1 = d.A(q1)
            r1 = (v1 - v0) @ d.M.T - h * (F + np.einsum("...ij,...i->...j", Ah, lam))
            r2 = np.einsum("...ij,...j->...i", A1, v1)
            J = np.zeros(y.shape[:-1] + (n + k, n + k))
            J[..., :n, :n] = d.M
            J[..., :n, n:] = -h * np.swapaxes(Ah, -1, -2)
            J[..., n:, :n] = A1 + 0.5 * h * np.einsum("...ijl,...j->...il", d.dA(q1), v1)
            du = np.linalg.solve(J, -np.concatenate([r1, r2], axis=-1)[..., None])[..., 0]
            u = u + du
            dn = float(np.max(np.abs(du)))
            if not np.isfinite(dn):
                raise newton.ConvergenceError(f"{self.name}: Newton produced a non-finite iterate at t = {t:.6g}; "
                                              f"reduce h")
            if dn <= 4e-16 * scale or (dn >= prev and dn <= 4e-13 * scale):   # converged, or at round-off
                break
            prev = dn
        else:
            raise newton.ConvergenceError(f"{self.name}: Newton did not converge at t = {t:.6g} (last increment "
                                          f"{dn:.3e} after 30 iterations); reduce h")
        self.nfev_total += it
        v1 = u[..., :n]
        return np.concatenate([qh + 0.5 * h * v1, v1], axis=-1)


class RattleStepper(_CoordStepper):
    """The nonholonomic RATTLE of Ferraro, Iglesias and Martin de Diego (2008), one-step form."""

    def step(self, t, y, h):
        d, n = self.d, self.d.n
        y = np.asarray(y, dtype=float)
        q0, v0 = y[..., :n], y[..., n:]
        lam0 = d.multiplier(q0, v0)
        p = v0 @ d.M.T
        ph = p + 0.5 * h * (-np.asarray(d.grad_V(q0)) + np.einsum("...ij,...i->...j", d.A(q0), lam0))
        q1 = q0 + h * ph @ d.Minv.T
        A1 = d.A(q1)
        pt = ph - 0.5 * h * np.asarray(d.grad_V(q1))
        AMi = A1 @ d.Minv                                    # (..., k, n)
        G = np.einsum("...ij,...lj->...il", AMi, A1)
        mu = -np.linalg.solve(G, np.einsum("...ij,...j->...i", AMi, pt)[..., None])[..., 0]
        p1 = pt + np.einsum("...ij,...i->...j", A1, mu)
        self.nfev_total += 1
        return np.concatenate([q1, p1 @ d.Minv.T], axis=-1)
