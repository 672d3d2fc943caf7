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
nonholonomic integrator (GNI) for the trapezoidal discrete Lagrangian L_d(q_0, q_1) = h/2 (L(q_0, v) + L(q_1, v)),
v = (q_1 - q_0)/h, is the two-step method

    D_1 L_d(q_k, q_{k+1}) + D_2 L_d(q_{k-1}, q_k) = -h A(q_k)^T lambda_k,
    A(q_k) M^-1 (D_2 L_d(q_{k-1}, q_k) - D_1 L_d(q_k, q_{k+1}))/2 = 0

(the constraint on the average of the two discrete Legendre transforms). With p_k that average and
p_{k+1/2} = M (q_{k+1} - q_k)/h it is their nonholonomic RATTLE, a one-step map of the extended state
(q_k, p_k, lambda_k):

    p_{k+1/2} = p_k - h/2 grad V(q_k) + h/2 A(q_k)^T lambda_k,
    q_{k+1}   = q_k + h M^-1 p_{k+1/2},
    p_{k+1}   = p_{k+1/2} - h/2 grad V(q_{k+1}) + h/2 A(q_{k+1})^T lambda_{k+1},   A(q_{k+1}) M^-1 p_{k+1} = 0,

where node k's multiplier lambda_k enters both half kicks around it (lambda_{k+1} is a k x k linear
solve: the method is explicit). On the extended state the map is symmetric (Phi_{-h} o Phi_h = id: going
back, the constraint at q_k returns the same lambda_k) and reversible under (q, p, lambda) -> (q, -p, lambda);
order 2. The multiplier is the state the two-step method needs beyond (q, v): it is carried from step to
step (inside the compiled and numpy loops of :meth:`RattleStepper.run`; in the step-by-step loop of
``integrate`` with events, the stepper remembers the lambda of the states it returned). The one starting
value is lambda_0 = the Lagrange-d'Alembert multiplier of (q_0, v_0) (any O(h^2)-accurate value keeps the
order); an error delta in it stays as the two-step method's parasitic mode lambda_k + (-1)^k delta, which
does not grow (the half kicks of consecutive nodes cancel it to O(h delta)).

**A gauge term** L = v^T M v / 2 + a(q) . v - V(q) (``LagrangeDAlembertData(gauge=(a, Da))``, used by the
non-reversible test problem of Modin and Verdier 2020). The momentum is p = M v + a(q), the force
dL/dq = -grad V + Da^T v. McLachlan and Perlmutter write (4.18) for L = v^T M v / 2 - V; our extension keeps
its half drifts and puts the kick on p with the force at the midpoint (symmetric, order 2, measured):

    M (v_1 - v_0) + a(q_1) - a(q_0) = h (-grad V(q_{1/2}) + Da(q_{1/2})^T (v_0 + v_1)/2 + A(q_{1/2})^T lambda),

and nh_rattle, the GNI of the trapezoidal L_d (their construction applied to this L) with the term (a(q_k) + a(q_{k+1})) . (q_{k+1} - q_k)/2, with
w = (q_{k+1} - q_k)/h, solves (Newton in q_{k+1}, n unknowns)

    M w + (a_k + a_{k+1})/2 - h/2 Da_k^T w = p_k - h/2 grad V(q_k) + h/2 A(q_k)^T lambda_k,
    p_{k+1} = M w + (a_k + a_{k+1})/2 + h/2 (Da_{k+1}^T w - grad V(q_{k+1})) + h/2 A(q_{k+1})^T lambda_{k+1},
    A(q_{k+1}) M^-1 (p_{k+1} - a_{k+1}) = 0.

Both stay symmetric (order 2) and keep A(q) v = 0; for a = grad S exact the continuous motion is that of
a = 0, but (a_k + a_{k+1}) . (q_{k+1} - q_k)/2 - (S(q_{k+1}) - S(q_k)) = O(h^3) is odd under exchanging q_k
and q_{k+1}: the schemes are no longer reversible under (q, v) -> (q, -v) (measured in the tests).
"""

from __future__ import annotations

import numpy as np

from . import compiled, newton


class _CoordStepper:
    def __init__(self, method, problem):
        self.d = problem.discrete
        self.name = method.name
        self.fevals = 0
        self.nfev_total = 0
        self.compiled_reason = compiled.coordinate_reason(self.d, method.scheme)

    def delta(self, t, y, h):
        return self.step(t, y, h) - y

    def run(self, y0, t0, h, n, save_every, backend, jit=None, generated=None):
        """The whole run by the compiled loop (backend "numba", when the problem has scalar functions), or
        None (the driver's numpy loop)."""
        if backend != "numba" or self.compiled_reason is not None:
            return None
        return compiled.run_mp(self, y0, t0, h, n, save_every, jit, generated)


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
        gauge = d.gauge is not None
        if gauge:
            a0, Dah = d.a(q0), d.Da(qh)
            F = F + 0.5 * np.einsum("...ji,...j->...i", Dah, v0)
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
            if gauge:
                r1 = r1 + d.a(q1) - a0 - 0.5 * h * np.einsum("...ji,...j->...i", Dah, v1)
                J[..., :n, :n] += 0.5 * h * (d.Da(q1) - np.swapaxes(Dah, -1, -2))
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
    """The nonholonomic RATTLE of Ferraro, Iglesias and Martin de Diego (2008) on (q, p, lambda) (see the
    module docstring): ``step`` takes lambda_k from the states it returned before (the last ``MEMORY``), else
    the continuous multiplier of (q_k, v_k) (a starting value)."""

    MEMORY = 4

    def __init__(self, method, problem):
        super().__init__(method, problem)
        self._memory = []                      # [(y returned, its lambda)], newest last

    def _lambda(self, y):
        for ym, lam in reversed(self._memory):
            if ym.shape == y.shape and np.max(np.abs(ym - y), initial=0.0) <= 1e-13 * max(1.0, float(np.max(np.abs(y)))):
                return lam
        n = self.d.n
        return self.d.multiplier(y[..., :n], y[..., n:])

    def _remember(self, y, lam):
        self._memory.append((y, lam))
        del self._memory[:-self.MEMORY]

    def advance(self, y, lam, h):
        """One step of the extended map: (y_k, lambda_k) -> (y_{k+1}, lambda_{k+1})."""
        d, n = self.d, self.d.n
        q0, v0 = y[..., :n], y[..., n:]
        ph = v0 @ d.M.T + 0.5 * h * (-np.asarray(d.grad_V(q0)) + np.einsum("...ij,...i->...j", d.A(q0), lam))
        if d.gauge is None:
            q1 = q0 + h * ph @ d.Minv.T
            A1 = d.A(q1)
            pt = ph - 0.5 * h * np.asarray(d.grad_V(q1))
        else:
            q1, pt = self._gauge_positions(q0, ph, h)
            A1 = d.A(q1)
        AMi = A1 @ d.Minv                                    # (..., k, n)
        G = 0.5 * h * np.einsum("...ij,...lj->...il", AMi, A1)
        a1 = 0.0 if d.gauge is None else d.a(q1)
        lam1 = -np.linalg.solve(G, np.einsum("...ij,...j->...i", AMi, pt - a1)[..., None])[..., 0]
        p1 = pt + 0.5 * h * np.einsum("...ij,...i->...j", A1, lam1)
        return np.concatenate([q1, (p1 - a1) @ d.Minv.T], axis=-1), lam1

    def _gauge_positions(self, q0, ph, h):
        """(q_{k+1}, p_{k+1} without the constraint impulse) of the gauge form (module docstring); ``ph`` is
        M v_k + h/2 (-grad V + A^T lambda)_k (the node's p_k = M v_k + a_k enters as ph + a_k)."""
        d, n = self.d, self.d.n
        a0, Da0 = d.a(q0), d.Da(q0)
        rhs = ph + a0
        q1 = q0 + h * (ph @ d.Minv.T)                        # the step without the gauge's change
        scale = max(1.0, float(np.max(np.abs(q0))))
        prev = np.inf
        for it in range(1, 31):
            w = (q1 - q0) / h
            a1 = d.a(q1)
            r = w @ d.M.T + 0.5 * (a0 + a1) - 0.5 * h * np.einsum("...ji,...j->...i", Da0, w) - rhs
            J = d.M / h + 0.5 * d.Da(q1) - 0.5 * np.swapaxes(Da0, -1, -2)
            dq = -np.linalg.solve(J, r[..., None])[..., 0]
            q1 = q1 + dq
            dn = float(np.max(np.abs(dq)))
            if not np.isfinite(dn):
                raise newton.ConvergenceError(f"{self.name}: Newton produced a non-finite iterate; reduce h")
            if dn <= 4e-16 * scale or (dn >= prev and dn <= 4e-13 * scale):
                break
            prev = dn
        else:
            raise newton.ConvergenceError(f"{self.name}: Newton for q_(k+1) did not converge (last increment "
                                          f"{dn:.3e} after 30 iterations); reduce h")
        self.nfev_total += it - 1
        w = (q1 - q0) / h
        a1 = d.a(q1)
        pt = w @ d.M.T + 0.5 * (a0 + a1) + 0.5 * h * (np.einsum("...ji,...j->...i", d.Da(q1), w)
                                                       - np.asarray(d.grad_V(q1)))
        return q1, pt

    def step(self, t, y, h):
        y = np.asarray(y, dtype=float)
        lam = self._lambda(y)
        if h == 0:                 # the identity (event location evaluates steps of length 0)
            self._remember(y.copy(), lam)
            return y.copy()
        y1, lam1 = self.advance(y, lam, h)
        self.nfev_total += 1
        self._remember(y1, lam1)
        return y1

    def run(self, y0, t0, h, n, save_every, backend, jit=None, generated=None):
        """The whole run carrying lambda exactly: the compiled loop (backend "numba", with the problem's scalar
        functions) or a numpy loop (backend "numpy")."""
        y0 = np.asarray(y0, dtype=float)
        lam = self._lambda(y0)
        if backend == "numba":
            if self.compiled_reason is not None:
                return None
            res, lam_end = compiled.run_rattle(self, y0, lam, t0, h, n, save_every, jit, generated)
            if res.status == 0:
                self._remember(res.y[-1].copy(), lam_end)
            return res
        K = compiled.n_saved(n, save_every)
        ys = np.empty((K,) + y0.shape)
        ys[0], y, j = y0, y0, 1
        with np.errstate(over="ignore", invalid="ignore"):
            for k in range(1, n + 1):
                y, lam = self.advance(y, lam, h)
                if k % save_every == 0 or k == n:
                    ys[j] = y
                    j += 1
        self.nfev_total = n
        self._remember(y, lam)
        return compiled.result_of(self.name, ys, y0, t0, h, n, save_every)
