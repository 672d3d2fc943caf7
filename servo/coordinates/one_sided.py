"""One-sided differential constraints f_nu(q, q', t) >= 0 (or W q' + h <= 0) on a Lagrangian system.

Sources: Kozlov 2019, sections 2, 3 and 6; Salnikova, Kugushev, Demidov 2023.

Motion: free ([L] = F) where every f_nu > 0; on the boundary the active constraints act with the
Cetaev reaction sum lambda_nu df_nu/dq' (or the control force sum lambda_nu M_nu of a one-sided
servo-constraint of the 1st kind) with lambda_nu >= 0. Which constraints are active at a state with
f_nu = 0 is decided by the complementarity problem at acceleration level
    w = (df/dq') q'' + (df/dq) q' + df/dt >= 0,  lambda >= 0,  lambda_nu w_nu = 0,
which for M = df/dq' is exactly Gauss's principle (minimum compulsion subject to the active
inequalities, ``servo.coordinates.gauss``); it is solved exactly by enumerating active sets, smallest first.
Events (located by scipy's solve_ivp root finder on the dense output, DOP853 with tight tolerances,
independent of the project's ``integrators`` package):
- "leave":  an active multiplier lambda_nu changes sign from + to - (Kozlov's rule, section 2);
- "join":   an inactive f_nu reaches 0 from inside.
Velocities are continuous at every event (the motion is shockless, Salnikova et al., section 2):
only the set of active constraints changes. The motion is defined forward in time only (it is not
reversible, Kozlov section 3).
"""

from __future__ import annotations

from functools import cached_property
from itertools import combinations

import numpy as np
import sympy as sp
from scipy.integrate import solve_ivp

from .constraint_models import HomogeneityMixin
from .lagrangian import as_covector, vectorize
from .result import SimulationResult, check_solution, time_grid
from ..errors import ActiveSetError, InitialConstraintError, LagrangianError


def parse_inequalities(system, constraints):
    """Relationals (f >= g, f <= g, strict too) or a pair (W, h) meaning W q' + h <= 0 -> list of f >= 0."""
    S = system
    if isinstance(constraints, tuple) and len(constraints) == 2 and not isinstance(constraints[0], sp.Basic):
        W, h = constraints
        W = sp.Matrix(W)
        h = list(sp.Matrix(h)) if not np.isscalar(h) else [h]
        if W.shape != (len(h), S.n):
            raise LagrangianError(f"W must have shape (len(h), n) = ({len(h)}, {S.n}), got {W.shape}")
        return [-(sum(W[i, j] * S.qd[j] for j in range(S.n)) + sp.sympify(h[i])) for i in range(len(h))]
    items = list(constraints) if isinstance(constraints, (list, tuple)) else [constraints]
    out = []
    for i, c in enumerate(items):
        if isinstance(c, (sp.GreaterThan, sp.StrictGreaterThan)):
            f = c.lhs - c.rhs
        elif isinstance(c, (sp.LessThan, sp.StrictLessThan)):
            f = c.rhs - c.lhs
        else:
            raise LagrangianError(f"one-sided constraint {i} must be a relation f >= 0 (or W q' + h <= 0), got {c!r}")
        if all(sp.simplify(sp.diff(S.plain(f), u)) == 0 for u in S.us):
            raise LagrangianError(f"one-sided constraint {i}: {f} >= 0 does not depend on q' (df/dq' != 0 fails)")
        out.append(f)
    if not out:
        raise LagrangianError("no one-sided constraint given")
    return out


class OneSidedSystem(HomogeneityMixin):
    """A Lagrangian system with one-sided constraints f_nu >= 0 (see the module docstring)."""

    def __init__(self, system, constraints, control=None):
        S = self.system = system
        self.f = self._exprs = parse_inequalities(S, constraints)
        self.k = len(self.f)
        P = sp.Matrix([S.plain(f) for f in self.f])
        self.J_sym = P.jacobian(S.us)
        self.c_sym = P.jacobian(S.qs) * sp.Matrix(S.us) + P.diff(S.t)
        if control is None:
            self.M_sym = self.J_sym
        else:
            rows = list(control)
            if self.k == 1 and len(rows) == S.n and not isinstance(rows[0], (list, tuple, sp.MatrixBase)):
                rows = [rows]
            if len(rows) != self.k:
                raise LagrangianError(f"one control covector per constraint needed: {len(rows)} given, k = {self.k}")
            self.M_sym = sp.Matrix([[S.plain(x) for x in as_covector(r, S.n, "control covector M")] for r in rows])
        self.P_sym = P

    def equations(self):
        """[L] = F + sum lambda_nu M_nu with lambda_nu >= 0, f_nu >= 0, lambda_nu f_nu = 0 (sympy)."""
        S = self.system
        lam = sp.symbols(f"lambda1:{self.k + 1}")
        lhs = S.lagrange_derivative(S.L)
        rhs = sp.Matrix(S.forces)
        for i in range(self.k):
            rhs += lam[i] * sp.Matrix([S.dynamic(x) for x in self.M_sym.row(i)])
        return ([sp.Eq(lhs[i], rhs[i]) for i in range(S.n)] + [sp.Ge(f, 0) for f in self.f]
                + [sp.Ge(x, 0) for x in lam] + [sp.Eq(x * f, 0) for x, f in zip(lam, self.f)])

    def realizability(self):
        """det (A^-1 M_mu, df_nu/dq'): must be > 0 for one constraint (Kozlov 2019, (6.2))."""
        S = self.system
        return sp.simplify(S.dynamic((self.J_sym * S.A_sym.inv() * self.M_sym.T).det()))

    # ----------------------------------------------------------------- numerics
    @cached_property
    def _num(self):
        S = self.system
        args = (S.t, *S.qs, *S.us)
        return {"f": vectorize(list(self.P_sym), args), "J": vectorize(list(self.J_sym), args),
                "c": vectorize(list(self.c_sym), args), "M": vectorize(list(self.M_sym), args)}

    def constraint_values(self, t, q, qd):
        """f_nu(q, q', t), shape (..., k)."""
        return self._num["f"](*self.system._args(t, q, qd))

    def _pieces(self, t, q, qd):
        S, n, k = self.system, self.system.n, self.k
        args = S._args(t, q, qd)
        A = S.mass_matrix(t, q, qd)
        a0 = np.linalg.solve(A, (S.force(t, q, qd) - S.bias(t, q, qd))[..., None])[..., 0]
        J = self._num["J"](*args).reshape(np.shape(a0)[:-1] + (k, n))
        M = self._num["M"](*args).reshape(J.shape)
        AiM = np.linalg.solve(A, np.swapaxes(M, -1, -2))
        w0 = np.einsum("...ij,...j->...i", J, a0) + self._num["c"](*args)
        return a0, AiM, J @ AiM, w0

    def acceleration(self, t, q, qd, active):
        """(q'', lambda) with the constraints in ``active`` held at f' = 0 (lambda = 0 for the others)."""
        a0, AiM, G, w0 = self._pieces(t, q, qd)
        lam = np.zeros(np.shape(w0))
        act = sorted(active)
        if act:
            Gs = G[..., act, :][..., :, act]
            lam[..., act] = np.linalg.solve(Gs, -w0[..., act, None])[..., 0]
        return a0 + np.einsum("...ij,...j->...i", AiM, lam), lam

    def _lcp(self, t, q, qd, candidates, exclude, tol, forced=()):
        a0, AiM, G, w0 = self._pieces(t, q, qd)
        cand = [i for i in sorted(candidates) if i not in exclude and i not in forced]
        scale = 1.0 + np.abs(w0).max()
        for size in range(len(cand) + 1):
            for Sset in combinations(cand, size):
                Sset = sorted(set(Sset) | set(forced))
                lam = np.zeros(self.k)
                if Sset:
                    Gs = G[np.ix_(Sset, Sset)]
                    if abs(np.linalg.det(Gs)) < 1e-12 * (1.0 + np.abs(Gs).max()) ** len(Sset):
                        continue
                    lam[Sset] = np.linalg.solve(Gs, -w0[Sset])
                w = w0 + G @ lam
                if np.all(lam[Sset] >= -tol * scale) and all(w[i] >= -tol * scale for i in candidates):
                    return set(Sset), w, scale, a0 + AiM @ lam
        return None

    def select_active(self, t, q, qd, candidates, exclude=(), tol=1e-9, probe=1e-6):
        """The active set among ``candidates`` (constraints with f = 0) solving the complementarity problem.

        lambda_S = -G_SS^-1 w0_S >= 0 and w_i = w0_i + (G lambda)_i >= 0 for the candidates outside S;
        smallest sets first, so at a sign change of lambda (lambda = 0) the constraint is released.
        Degenerate ties (w_i = 0 and lambda_i = 0, e.g. a start from rest) are decided at second order:
        the state is advanced by a short Taylor step of length ``probe`` in the chosen mode and a free
        candidate whose w_i then turns negative is made active.
        """
        out = self._lcp(t, q, qd, candidates, exclude, tol)
        if out is None:
            _, _, G, w0 = self._pieces(t, q, qd)
            raise ActiveSetError(f"no active set at t = {t:.12g}: candidates {sorted(candidates)}, "
                                 f"free constraint accelerations w0 = {w0.tolist()}, G = {G.tolist()}; "
                                 "check the realizability det (A^-1 M, df/dq') > 0")
        active, w, scale, acc = out
        ties = [i for i in sorted(candidates) if i not in active and i not in exclude and abs(w[i]) <= tol * scale]
        if ties:
            q1, qd1 = np.asarray(q) + probe * np.asarray(qd), np.asarray(qd) + probe * acc
            _, AiM, G, w0 = self._pieces(t + probe, q1, qd1)
            lam = np.zeros(self.k)
            act = sorted(active)
            if act:
                lam[act] = np.linalg.solve(G[np.ix_(act, act)], -w0[act])
            w1 = w0 + G @ lam
            push = [i for i in ties if w1[i] < -tol * scale]
            if push:
                better = self._lcp(t, q, qd, candidates, exclude, tol, forced=tuple(sorted(active | set(push))))
                if better is not None:
                    active = better[0]
        return active

    def simulate(self, q0, qd0, t_end, steps=200, t0=0.0, method="DOP853", rtol=1e-12, atol=1e-12,
                 tol=1e-9, max_events=500, lam0=None, max_step=None):
        """Event-driven integration forward in time (scipy solve_ivp with dense output and events).

        Events are found from sign changes of f_nu (or lambda_nu) between consecutive steps, so the step
        is capped at ``max_step`` (default (t_end - t0) / max(steps, 200)): on motions that are polynomial
        in t (a free sleigh moves on a straight line) DOP853 would otherwise step over a whole arch of
        f = u sin(w t) and miss the join.

        Returns a SimulationResult with res.lam (multipliers, 0 where inactive) and res.events, a list of
        (t, "leave" | "join", index). A constraint at f = 0 at t0 that is released at once is reported as
        (t0, "leave", index). Raises InitialConstraintError if some f_nu(q0, qd0) < -tol.
        """
        S, n = self.system, self.system.n
        if lam0 is not None:
            raise LagrangianError("lam0 is not used by one-sided constraints: lambda is determined by the state")
        if not t_end > t0:
            raise LagrangianError(f"one-sided motion is defined forward in time only (Kozlov 2019, sect. 3): "
                                  f"t_end = {t_end} <= t0 = {t0}; reverse the velocities instead")
        y = np.concatenate([np.asarray(q0, dtype=float), np.asarray(qd0, dtype=float)])
        if y.shape != (2 * n,):
            raise LagrangianError(f"q0 and qd0 must have shape ({n},)")
        f0 = self.constraint_values(t0, y[:n], y[n:])
        if f0.min() < -tol:
            i = int(np.argmin(f0))
            raise InitialConstraintError(f"initial state violates the one-sided constraint {i}: {self.f[i]} = "
                                         f"{f0[i]:.3e} < 0", index=i, residual=f0[i])
        grid = time_grid(t0, t_end, steps)
        if max_step is None:
            max_step = (t_end - t0) / max(int(steps), 200)
        t, prev, exclude, hit, events, segments, nfev = t0, None, set(), set(), [], [], 0
        while True:
            f = self.constraint_values(t, y[:n], y[n:])
            cand = {i for i in range(self.k) if abs(f[i]) <= tol} | exclude | hit
            active = self.select_active(t, y[:n], y[n:], cand, exclude=exclude, tol=tol)
            before = set(range(self.k)) & cand if prev is None else prev
            for i in sorted(active - before):
                events.append((float(t), "join", i))
            for i in sorted(before - active):
                events.append((float(t), "leave", i))
            prev = active
            if len(events) > max_events:
                raise ActiveSetError(f"more than {max_events} leave/join events before t = {t:.6g} (chattering?)")
            act = sorted(active)

            def rhs(tt, yy, act=act):
                return np.concatenate([yy[n:], self.acceleration(tt, yy[:n], yy[n:], act)[0]])

            evs = []
            for i in range(self.k):
                if i in active:
                    ev = (lambda tt, yy, i=i, act=act: self.acceleration(tt, yy[:n], yy[n:], act)[1][i])
                else:
                    ev = (lambda tt, yy, i=i: self.constraint_values(tt, yy[:n], yy[n:])[i])
                ev.terminal, ev.direction = True, -1
                evs.append(ev)
            sol = solve_ivp(rhs, (t, t_end), y, method=method, rtol=rtol, atol=atol, dense_output=True, events=evs,
                            max_step=max_step)
            check_solution(sol, "one-sided simulate")
            nfev += sol.nfev
            segments.append((t, sol.t[-1], sol.sol, act))
            if sol.status != 1:
                break
            hit = [(te[0], i) for i, te in enumerate(sol.t_events) if len(te)]
            t_e, i_e = min(hit)
            y = sol.y_events[i_e][0].copy()
            exclude = {i_e} if i_e in active else set()
            hit = {i_e}
            t = t_e
        q, qd, lam = np.zeros((len(grid), n)), np.zeros((len(grid), n)), np.zeros((len(grid), self.k))
        for j, tt in enumerate(grid):
            for (ta, tb, dense, act) in reversed(segments):  # at an event time, the mode after it
                if ta <= tt <= tb:
                    break
            yy = dense(tt)
            q[j], qd[j] = yy[:n], yy[n:]
            lam[j] = self.acceleration(tt, yy[:n], yy[n:], act)[1]
        res = SimulationResult(t=grid, q=q, qd=qd, lam=lam, events=events, nfev=nfev, message="ok")
        res.segments = segments
        return res

    def __repr__(self):
        return f"OneSidedSystem(f={self.f} >= 0)"
