"""Discrete Euler-Poincare schemes on Lie groups for constrained left-invariant systems, one step a map
of the reduced state on g* (the group is reconstructed from the discrete velocities by g_{k+1} = g_k tau(h xi_k)).

Notation: T = (I xi, xi)/2, constraints A xi = 0 (rows a_i), controls B; tau = exp or cay
(:mod:`integrators.reference.nonholonomic.retractions`), D_x = (dtau^-1_x)^T, Ad*_x = Ad_{tau(x)}^T.

**Discrete Lagrange-d'Alembert-Suslov (Fedorov and Zenkov 2005)**, ``lie_nonholonomic``. The discrete
Lagrange-d'Alembert principle for l_d(xi) = h T(xi) with the discrete constraint A xi_k = 0 gives the
discrete Euler-Poincare-Suslov equations (in the retraction form of Bou-Rabee and Marsden 2009)

    D_{h xi_k} I xi_k = Ad*_{h xi_{k-1}} D_{h xi_{k-1}} I xi_{k-1} + A^T Lambda_k,     A xi_k = 0,      (1)

an impulse Lambda_k in the constraint directions at every node. One step of the map on the node momentum
m_k (on the constraint A I^-1 m_k = 0): solve (Newton, n + k unknowns)

    D_{h xi} I xi = m_k + A^T L,   A xi = 0,

then m_{k+1} = Ad*_{h xi} (m_k + A^T L) + A^T c with c fixed by A I^-1 m_{k+1} = 0. The node momentum
splits the impulse of (1) into the part before and after the node (Lambda_k = c_k + L_k); the discrete
velocities xi_k are exactly those of (1), and A I^-1 m = (a, w) = 0 holds to round-off at every node.
Order 2 (the map is symmetric: D_{-x} = Ad*_x D_x for exp and cay), measured in the tests on the
Chaplygin sleigh's exact solution; keeps the constraint (a linear invariant); energy not exactly.

**Lie-group nonholonomic RATTLE** (the geometric nonholonomic integrator of Ferraro, Iglesias and Martin de
Diego 2008 written on the reduced space g* of an LL system), ``lie_nonholonomic``. Ferraro, Jimenez and
Martin de Diego 2015 extend the GNI to reduced systems; we could not compare with their equations, so this
reduced form is derived here (below) and its order and symmetry are measured, not inherited. The discrete Euler-Poincare momenta around node k, mu_k^+ = D_{h xi_k} I xi_k and
mu_k^- = Ad*_{h xi_{k-1}} mu_{k-1}^+, differ by the impulse h A^T lambda_k, and the constraint is put on
their average m_k = (mu_k^+ + mu_k^-)/2 (no discrete constraint on xi_k): with lambda_k carried as in the
coordinate RATTLE, one step of the extended state (m_k, lambda_k) is

    mu^+ = m_k + h/2 A^T lambda_k,   D_{h xi} I xi = mu^+  (Newton in xi, n unknowns),
    mu^- = Ad*_{h xi} mu^+,   m_{k+1} = mu^- + h/2 A^T lambda_{k+1},   A I^-1 m_{k+1} = 0  (k x k linear).

Symmetric on (m, lambda) (going back from (m_{k+1}, lambda_{k+1}) with -h gives mu^- -> xi -> mu^+ ->
lambda_k, m_k): order 2; A I^-1 m = (a, w) = 0 to round-off at every node. The starting multiplier is the
continuous one of m_0; the multiplier is remembered by the stepper like ``nh_rattle``'s.

Not for long runs towards an attracting motion: as a symmetric two-step method it carries a parasitic
mode lambda_k + (-1)^k delta_k, and where the principal flow contracts (the Chaplygin sleigh tends to the
steady motion u = c, omega = 0; Suslov's problem with a non-diagonal inertia likewise) the parasitic mode
expands (the symmetric map's inverse is the map with -h): on the sleigh at h = 0.05 the alternating part of
omega grows from 1e-5 at t = 5 to 1e-3 at t = 20, and over 10^6 steps the solution is destroyed (relative
energy error 1.0, the sleigh reversed; benchmarks/RESULTS.md, section nonholonomic). dlas_exp / dlas_cay,
one-step maps of m, keep the attractor.

**Where dlas applies, and Veselova's system.** Fedorov and Zenkov (2005) write the discrete Lagrange-d'Alembert
principle for LL systems (their title: left-invariant Lagrangian AND left-invariant constraints), the class that
reduces to g*: the state m and the constant covectors A of :class:`LieConstraintData` (Suslov's problem, the
Chaplygin sleigh). Veselova's system (a rigid body with (omega, gamma) = 0, gamma = R^T e_3 the vertical in the
body, gamma' = gamma x omega) is not of that class: its constraint is right-invariant, the prototype of the
LR systems of Fedorov and Jovanovic (2004) (left-invariant metric, right-invariant constraints, which they
treat as generalized Chaplygin systems with an invariant measure). Its constraint covector moves with the
group element, the reduced state is (m, gamma) on g* x S^2, and a discrete scheme has to place the discrete
constraint on the moving gamma_k (gamma_{k+1} = tau(h xi_k)^-1 gamma_k): neither the LL equations above nor
their reduction to g* give it. The discrete Veselova system is derived in the Lie-groupoid framework of
Iglesias, Marrero, Martin de Diego and Martinez (2008) (one of their examples, on the action groupoid of
SO(3) on S^2); it is not implemented here, and the library's servo systems on Lie groups have only constant
(left-invariant) constraints, so no library system is of that kind. (The search tool did not return the text
of Fedorov and Zenkov (2005); the scope above rests on its title and on the LL/LR distinction of Fedorov and
Jovanovic (2004).)

**Discrete vakonomic / servo-constraint of the second kind** (Benito and Martin de Diego 2005 for the
vakonomic model B = A), ``lie_second_kind``. Hamilton's principle for the discrete action
sum_k h (T(xi_k) + (lambda_k, B xi_k)) with A xi_k = 0 gives the discrete Euler-Poincare equations of
T* = T + (lambda, B xi) (Kozlov's lectures) for z_k = D_{h xi_k}(I xi_k + B^T lambda_k):

    D_{h xi_k} (I xi_k + B^T lambda_k) = z_k,   A xi_k = 0,   z_{k+1} = Ad*_{h xi_k} z_k.            (2)

z stays on its coadjoint orbit exactly, so every Casimir F(m + lambda b) is kept to round-off; order 2
(symmetric). For B != A (a servo-constraint of the second kind proper) no discrete variational principle
is published that we know of: (2) is the same discrete Euler-Poincare step of T* with the multiplier per
step closing it, and its order and its Casimirs are measured, not inherited from a theorem.
"""

from __future__ import annotations

import numpy as np

from . import compiled, newton
from .retractions import retraction


class _LieStepper:
    def __init__(self, method, problem):
        d = problem.discrete
        self.d = d
        self.tau = retraction(method.retraction, d.algebra, d.group)
        self.fevals = 0
        self.nfev_total = 0
        self.name = method.name
        self.retraction = method.retraction
        self.compiled_reason = (f"{method.name} has no compiled loop (dlas_exp, dlas_cay, lie_rattle_exp and "
                                f"lie_rattle_cay have)")

    def delta(self, t, y, h):
        return self.step(t, y, h) - y

    def run(self, y0, t0, h, n, save_every, backend, jit=None, generated=None):
        """The whole run by the compiled loop (backend "numba"), or None (the driver's numpy loop)."""
        return None


class SuslovStepper(_LieStepper):
    """One step of the discrete Lagrange-d'Alembert-Suslov map m_k -> m_{k+1} (eq. (1) above)."""

    def __init__(self, method, problem):
        super().__init__(method, problem)
        d = self.d
        self.IA = d.A @ d.Iinv                            # A I^-1
        self.G = self.IA @ d.A.T                          # A I^-1 A^T
        data = compiled.dlas_data_of(self.retraction, d, self.tau)
        self.compiled_reason = data if isinstance(data, str) else None

    def run(self, y0, t0, h, n, save_every, backend, jit=None, generated=None):
        """The whole run by the compiled loop (the same map with the multiplier eliminated: the engine's generated
        straight-line loop with simplified Newton, ``generated``, else the generic loop of
        :mod:`integrators.reference.nonholonomic.kernels` with an analytic Jacobian), or None: backend "numpy",
        or no closed form of the retraction on this algebra (``compiled_reason``)."""
        if backend != "numba" or self.compiled_reason is not None:
            return None
        return compiled.run_dlas(self, y0, t0, h, n, save_every, jit, generated=generated)

    def step(self, t, m, h):
        d, tau, n = self.d, self.tau, self.d.n
        m = np.asarray(m, dtype=float)

        def R(u):
            xi, L = u[..., :n], u[..., n:]
            r1 = tau.dinv_T(h * xi, xi @ d.I) - m - L @ d.A
            return np.concatenate([r1, xi @ d.A.T], axis=-1)

        u0 = np.concatenate([m @ d.Iinv, np.zeros(m.shape[:-1] + (d.k,))], axis=-1)
        u, it = newton.solve(R, u0, what=f"{self.name} at t = {t:.6g}")
        self.nfev_total += it
        xi, L = u[..., :n], u[..., n:]
        arr = tau.Ad_T(h * xi, m + L @ d.A)
        c = -np.linalg.solve(self.G, (arr @ self.IA.T)[..., None])[..., 0]
        return arr + c @ d.A


class LieRattleStepper(_LieStepper):
    """One step of the Lie-group nonholonomic RATTLE on (m, lambda) (module docstring); ``step`` takes lambda_k
    from the states it returned (the last ``MEMORY``), else the continuous multiplier of m_k."""

    MEMORY = 4

    def __init__(self, method, problem):
        super().__init__(method, problem)
        d = self.d
        self.IA = d.A @ d.Iinv
        self.G = self.IA @ d.A.T
        self._memory = []
        data = compiled.dlas_data_of(self.retraction, d, self.tau)
        self.compiled_reason = data if isinstance(data, str) else None

    def _lambda(self, m):
        for mm, lam in reversed(self._memory):
            if mm.shape == m.shape and np.max(np.abs(mm - m), initial=0.0) <= 1e-13 * max(1.0, float(np.max(np.abs(m)))):
                return lam
        d = self.d
        c = d.algebra._coad(m @ d.Iinv, m)                 # the continuous multiplier: A I^-1 m' = 0
        return -np.linalg.solve(self.G, (c @ self.IA.T)[..., None])[..., 0]

    def _remember(self, m, lam):
        self._memory.append((m, lam))
        del self._memory[:-self.MEMORY]

    def advance(self, m, lam, h, t=0.0):
        """(m_k, lambda_k) -> (m_{k+1}, lambda_{k+1})."""
        d, tau = self.d, self.tau
        mup = m + 0.5 * h * lam @ d.A

        def R(xi):
            return tau.dinv_T(h * xi, xi @ d.I) - mup

        xi, it = newton.solve(R, mup @ d.Iinv, what=f"{self.name} at t = {t:.6g}")
        self.nfev_total += it
        mum = tau.Ad_T(h * xi, mup)
        lam1 = -np.linalg.solve(0.5 * h * self.G, (mum @ self.IA.T)[..., None])[..., 0]
        return mum + 0.5 * h * lam1 @ d.A, lam1

    def step(self, t, m, h):
        m = np.asarray(m, dtype=float)
        lam = self._lambda(m)
        if h == 0:
            self._remember(m.copy(), lam)
            return m.copy()
        m1, lam1 = self.advance(m, lam, h, t)
        self._remember(m1, lam1)
        return m1

    def run(self, y0, t0, h, n, save_every, backend, jit=None, generated=None):
        """The whole run carrying lambda exactly: the compiled dlas loop with N = 1 and the reflection 2 P - 1
        (backend "numba", see :func:`integrators.reference.nonholonomic.compiled.run_dlas`) or a numpy loop."""
        y0 = np.asarray(y0, dtype=float)
        lam = self._lambda(y0)
        if backend == "numba":
            if self.compiled_reason is not None:
                return None
            res, lam_end = compiled.run_dlas(self, y0, t0, h, n, save_every, jit, lam0=lam, generated=generated)
            if res.status == 0:
                self._remember(res.y[-1].copy(), lam_end)
            return res
        K = compiled.n_saved(n, save_every)
        ys = np.empty((K,) + y0.shape)
        ys[0], m, j = y0, y0, 1
        for k in range(1, n + 1):
            m, lam = self.advance(m, lam, h, t0 + (k - 1) * h)
            if k % save_every == 0 or k == n:
                ys[j] = m
                j += 1
        self._remember(m, lam)
        return compiled.result_of(self.name, ys, y0, t0, h, n, save_every)


class SecondKindStepper(_LieStepper):
    """One step of the discrete vakonomic / second-kind map z_k -> z_{k+1} (eq. (2) above)."""

    def __init__(self, method, problem):
        super().__init__(method, problem)
        d = self.d
        self.W = d.Iinv - d.Iinv @ d.B.T @ np.linalg.solve(d.R, d.A @ d.Iinv)
        self.compiled_reason = compiled.dvak_reason(self.retraction, d, self.tau)

    def run(self, y0, t0, h, n, save_every, backend, jit=None, generated=None):
        """The whole run by the engine's generated straight-line loop (backend "numba", ``generated``: the same
        map, simplified Newton in (eta, lambda), z_{k+1} = z_k + ad_x^T w at the root; see
        :func:`integrators.reference.nonholonomic.compiled.run_dvak_lie`), or None (the driver's numpy loop)."""
        if backend != "numba" or self.compiled_reason is not None or generated is None:
            return None
        res = compiled.run_dvak_lie(self, y0, t0, h, n, save_every, generated)
        if res is None:
            self.compiled_reason = f"{self.name}: no generated loop on {self.d.algebra.name} (dimension {self.d.n})"
        return res

    def step(self, t, z, h):
        d, tau, n = self.d, self.tau, self.d.n
        z = np.asarray(z, dtype=float)

        def R(u):
            xi, lam = u[..., :n], u[..., n:]
            r1 = tau.dinv_T(h * xi, xi @ d.I + lam @ d.B) - z
            return np.concatenate([r1, xi @ d.A.T], axis=-1)

        xi0 = z @ self.W.T
        lam0 = np.linalg.solve(d.R, ((z @ d.Iinv) @ d.A.T)[..., None])[..., 0]
        u, it = newton.solve(R, np.concatenate([xi0, lam0], axis=-1), what=f"{self.name} at t = {t:.6g}")
        self.nfev_total += it
        return tau.Ad_T(h * u[..., :n], z)
