"""One-sided differential constraints f_nu(q, q', t) >= 0 (or W q' + h <= 0) on a Lagrangian system.

Sources: Kozlov (2019), sections 2, 3, 6 and 7; Salnikova, Kugushev and Demidov (2023).

Motion: free ([L] = F) where every f_nu > 0; on the boundary the active constraints act with

* the Cetaev reaction sum lambda_nu df_nu/dq' (``model="one_sided"``, no control), or
* type I, Beghin's servo-constraint (Kozlov 2019, section 6): the control force sum lambda_nu M_nu
  (``control=M``), lambda_nu >= 0. Kozlov's rule (6.2): if (A^-1 M_nu, df_nu/dq') < 0 at a state,
  the sign of M_nu is changed there ("otherwise, we can change the sign of Phi"), so the control
  always pushes towards the allowed side; the result reports lambda_nu >= 0 of the sign-corrected
  control and the sign used as the output "control_sign". A zero product is unrealizable;
* type II (``model="one_sided_servo2"``, ``control=N``; Kozlov 2019, section 7): the kinetic energy
  T* = T + sum lambda_nu N_nu with lambda_nu >= 0 a state variable:
      [L] = F - sum_nu (lambda_nu' dN_nu/dq' + lambda_nu [N_nu]).
  While f_nu = 0 is held, lambda_nu' follows from f_nu' = 0 (as for the two-sided servo-constraint of
  the second kind); off the boundary the control rests at lambda_nu = 0. The realizability sign is
  (A^-1 dN_nu/dq', df_nu/dq') < 0: only then can lambda_nu' >= 0 hold f_nu >= 0 at a join.

Which constraints are active at a state with f_nu = 0 is decided by the complementarity problem at
acceleration level, w = w0 + G mu >= 0, mu >= 0, mu_nu w_nu = 0, with mu = lambda (Cetaev, type I;
G = (df/dq') A^-1 M^T) or mu = lambda' for the constraints whose state lambda_nu is 0 (type II;
G = -(df/dq') A_lambda^-1 (dN/dq')^T); for M = df/dq' this is Gauss's principle
(``servo.coordinates.gauss``). It is solved exactly by enumerating active sets, smallest first.
Events (located by ``integrators.integrate`` with a scipy method: dense output and root finding):

- "leave": an active multiplier changes sign from + to - (Kozlov's rule, section 2): lambda_nu for
  Cetaev and type I, the state lambda_nu reaching 0 for type II;
- "join":  an inactive f_nu reaches 0 from inside.

Velocities are continuous at every event (the motion is shockless, Salnikova et al., section 2):
only the set of active constraints changes. The motion is defined forward in time only (it is not
reversible, Kozlov section 3).
"""

from __future__ import annotations

from functools import cached_property
from itertools import combinations

import numpy as np
import sympy as sp

from . import integration
from .constraint_models import HomogeneityMixin
from .lagrangian import register_model
from .symbolic import (control_rows, free_parameters, require_numeric, second_kind_pieces, subs_control,
                       vectorize)
from ..errors import ActiveSetError, InitialConstraintError, IntegrationError, LagrangianError


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
    """A Lagrangian system with one-sided constraints f_nu >= 0 (see the module docstring).

    kind = 1: Cetaev (control None) or type I servo-constraint (control = covector(s) M);
    kind = 2: type II servo-constraint (control = function(s) N, T* = T + lambda N, lambda >= 0).
    """

    def __init__(self, system, constraints, control=None, model="one_sided"):
        S = self.system = system
        self.model = model
        self.kind = 2 if model == "one_sided_servo2" else 1
        self.f = self._exprs = parse_inequalities(S, constraints)
        self.k = len(self.f)
        self.control = control
        P = sp.Matrix([S.plain(f) for f in self.f])
        self.J_sym = P.jacobian(S.us)
        self.c_sym = P.jacobian(S.qs) * sp.Matrix(S.us) + P.diff(S.t)
        self.P_sym = P
        extra = []
        if self.kind == 2:
            if control is None:
                raise LagrangianError("model 'one_sided_servo2' needs control = N (function(s) of q, q', t), "
                                      "T* = T + lambda N with lambda >= 0")
            N = list(control) if isinstance(control, (list, tuple)) else [control]
            if len(N) != self.k or any(isinstance(x, (list, tuple, sp.MatrixBase)) for x in N):
                raise LagrangianError(f"one_sided_servo2 needs one scalar function N per constraint "
                                      f"(a list of {self.k}), got {control!r}")
            self.N_dyn = [sp.sympify(x) for x in N]
            Np = [S.plain(x) for x in self.N_dyn]
            self.NJ_sym, self.H_sym, self.dN_sym = second_kind_pieces(S, Np)
            self.M_sym = None
            extra = Np
        elif control is None:
            self.M_sym = self.J_sym
        else:
            rows = control_rows(control, self.k, S.n, "one-sided control")
            self.M_sym = sp.Matrix([[S.plain(x) for x in r] for r in rows])
            extra = list(self.M_sym)
        allowed = set(S.qs) | set(S.us) | {S.t}
        self.symbols = tuple(sorted(set(S.symbols) | set(free_parameters(list(P) + extra, allowed)), key=str))

    @property
    def is_numeric(self):
        """True when no parameter symbols remain (required to simulate)."""
        return not self.symbols

    def subs(self, mapping):
        """The same constrained system with parameters replaced by values."""
        S = self.system.subs(mapping)
        to_new = dict(zip(self.system.qd, S.qd))
        cons = [sp.Ge(sp.sympify(f).subs(mapping).xreplace(to_new), 0) for f in self.f]
        ctrl = subs_control(self.control, mapping)
        return OneSidedSystem(S, cons, control=ctrl, model=self.model)

    def equations(self):
        """The equations of motion with the complementarity conditions (sympy).

        Cetaev / type I: [L] = F + sum lambda_nu M_nu, f_nu >= 0, lambda_nu >= 0, lambda_nu f_nu = 0;
        type II: [L] = F - sum (lambda_nu' dN_nu/dq' + lambda_nu [N_nu]), f_nu >= 0, lambda_nu >= 0,
        lambda_nu f_nu = 0 (Kozlov 2019, section 7).
        """
        S = self.system
        lhs = S.lagrange_derivative(S.L)
        rhs = sp.Matrix(S.forces)
        if self.kind == 1:
            lam = sp.symbols(f"lambda1:{self.k + 1}")
            for i in range(self.k):
                rhs += lam[i] * sp.Matrix([S.dynamic(x) for x in self.M_sym.row(i)])
        else:
            from sympy.physics.mechanics import dynamicsymbols

            lam = dynamicsymbols(f"lambda1:{self.k + 1}") if self.k > 1 else [dynamicsymbols("lambda1")]
            for li, N in zip(lam, self.N_dyn):
                dN = sp.Matrix([sp.diff(N, qd) for qd in S.qd])
                rhs -= li.diff(S.t) * dN + li * S.lagrange_derivative(N)
        return ([sp.Eq(lhs[i], sp.expand(rhs[i])) for i in range(S.n)] + [sp.Ge(f, 0) for f in self.f]
                + [sp.Ge(x, 0) for x in lam] + [sp.Eq(x * f, 0) for x, f in zip(lam, self.f)])

    def realizability(self):
        """det (A^-1 M_mu, df_nu/dq') (type I: must be > 0 for one constraint, Kozlov 2019, (6.2)) or
        det (A^-1 dN_mu/dq', df_nu/dq') (type II: must be < 0 for one constraint, see the module docstring)."""
        S = self.system
        B = self.M_sym if self.kind == 1 else self.NJ_sym
        return sp.simplify(S.dynamic((self.J_sym * S.A_sym.inv() * B.T).det()))

    # ----------------------------------------------------------------- numerics
    @cached_property
    def _num(self):
        require_numeric(self.symbols, "a numeric evaluation", repr(self))
        S = self.system
        args = (S.t, *S.qs, *S.us)
        out = {"f": vectorize(list(self.P_sym), args)}
        pieces = list(self.J_sym) + list(self.c_sym)
        if self.kind == 1:
            pieces += list(self.M_sym)
        else:
            pieces += list(self.NJ_sym) + [x for H in self.H_sym for x in H] + [x for d in self.dN_sym for x in d]
        out["pieces"] = vectorize(pieces, args)  # J, c, then M (type I) or dN/dq', d2N/dq'2, [N] + ... (type II)
        return out

    def constraint_values(self, t, q, qd):
        """f_nu(q, q', t), shape (..., k)."""
        return self._num["f"](*self.system._args(t, q, qd))

    def _pieces(self, t, q, qd, lam=None):
        """(a0, B, G, w0, sign): q'' = a0 + B mu, w = f' = w0 + G mu (see the module docstring).

        Type I: B = A^-1 (s M)^T with s_nu = sign (A^-1 M_nu, df_nu/dq') (Kozlov's rule (6.2)); type II:
        B = -A_lambda^-1 (dN/dq')^T with A_lambda = A + sum lambda_nu d^2 N_nu/dq'^2 and mu = lambda'.
        """
        S, n, k = self.system, self.system.n, self.k
        A, rhs = S.inertia_and_rhs(t, q, qd)
        v = self._num["pieces"](*S._args(t, q, qd))
        v = np.broadcast_to(v, np.shape(rhs)[:-1] + v.shape[-1:])
        batch = np.shape(rhs)[:-1]
        J = v[..., :k * n].reshape(batch + (k, n))
        c = v[..., k * n:k * n + k]
        rest = v[..., k * n + k:]
        if self.kind == 1:
            a0 = np.linalg.solve(A, rhs[..., None])[..., 0]
            M = rest.reshape(J.shape)
            B = np.linalg.solve(A, np.swapaxes(M, -1, -2))
            d = np.einsum("...ij,...ji->...i", J, B)
            sign = np.where(d < 0, -1.0, 1.0)
            B = B * sign[..., None, :]
        else:
            lam = np.zeros(np.shape(rhs)[:-1] + (k,)) if lam is None else np.asarray(lam, dtype=float)
            NJ = rest[..., :k * n].reshape(J.shape)
            H = rest[..., k * n:k * n + k * n * n].reshape(batch + (k, n, n))
            dN = rest[..., k * n + k * n * n:].reshape(J.shape)
            Al = A + np.einsum("...k,...kij->...ij", lam, H)
            a0 = np.linalg.solve(Al, (rhs - np.einsum("...k,...ki->...i", lam, dN))[..., None])[..., 0]
            B = -np.linalg.solve(Al, np.swapaxes(NJ, -1, -2))
            sign = np.ones(np.shape(rhs)[:-1] + (k,))
        w0 = np.einsum("...ij,...j->...i", J, a0) + c
        return a0, B, J @ B, w0, sign

    def acceleration(self, t, q, qd, active, lam=None):
        """(q'', mu) with the constraints in ``active`` held at f' = 0 (mu = 0 for the others).

        mu = lambda for Cetaev and type I (the multiplier of the sign-corrected control), mu = lambda'
        for type II (``lam``: the state multipliers).
        """
        a0, B, G, w0, _ = self._pieces(t, q, qd, lam)
        mu = np.zeros(np.shape(w0))
        act = sorted(active)
        if act:
            Gs = G[..., act, :][..., :, act]
            mu[..., act] = np.linalg.solve(Gs, -w0[..., act, None])[..., 0]
        return a0 + np.einsum("...ij,...j->...i", B, mu), mu

    def _lcp(self, t, q, qd, candidates, exclude, tol, forced=(), lam=None, free_sign=()):
        a0, B, G, w0, _ = self._pieces(t, q, qd, lam)
        cand = [i for i in sorted(candidates) if i not in exclude and i not in forced]
        scale = 1.0 + np.abs(w0).max()
        for size in range(len(cand) + 1):
            for Sset in combinations(cand, size):
                Sset = sorted(set(Sset) | set(forced))
                mu = np.zeros(self.k)
                if Sset:
                    Gs = G[np.ix_(Sset, Sset)]
                    if abs(np.linalg.det(Gs)) < 1e-12 * (1.0 + np.abs(Gs).max()) ** len(Sset):
                        continue
                    mu[Sset] = np.linalg.solve(Gs, -w0[Sset])
                w = w0 + G @ mu
                signed = [i for i in Sset if i not in free_sign]
                if np.all(mu[signed] >= -tol * scale) and all(w[i] >= -tol * scale for i in candidates):
                    return set(Sset), w, scale, a0 + B @ mu
        return None

    def select_active(self, t, q, qd, candidates, exclude=(), tol=1e-9, probe=1e-6, lam=None):
        """The active set among ``candidates`` (constraints with f = 0) solving the complementarity problem.

        mu_S = -G_SS^-1 w0_S >= 0 and w_i = w0_i + (G mu)_i >= 0 for the candidates outside S; smallest
        sets first, so at a sign change of mu (mu = 0) the constraint is released. Type II: constraints
        with a state lambda_nu > 0 are active whatever the sign of lambda_nu'. Degenerate ties (w_i = 0
        and mu_i = 0, e.g. a start from rest) are decided at second order: the state is advanced by a
        short Taylor step of length ``probe`` in the chosen mode and a free candidate whose w_i then
        turns negative is made active.
        """
        held = set() if lam is None else {i for i in range(self.k) if lam[i] > 0}
        candidates = set(candidates) | held
        out = self._lcp(t, q, qd, candidates, exclude - held if exclude else (), tol, forced=tuple(sorted(held)),
                        lam=lam, free_sign=held)
        if out is None:
            _, _, G, w0, _ = self._pieces(t, q, qd, lam)
            hint = ("check the realizability det (A^-1 M, df/dq') > 0" if self.kind == 1 else
                    "type II needs (A^-1 dN/dq', df/dq') < 0 (lambda >= 0 must push towards f > 0); use -N")
            raise ActiveSetError(f"no active set at t = {t:.12g}: candidates {sorted(candidates)}, "
                                 f"free constraint accelerations w0 = {w0.tolist()}, G = {G.tolist()}; {hint}")
        active, w, scale, acc = out
        ties = [i for i in sorted(candidates) if i not in active and i not in exclude and abs(w[i]) <= tol * scale]
        if ties:
            q1, qd1 = np.asarray(q) + probe * np.asarray(qd), np.asarray(qd) + probe * acc
            _, _, G, w0, _ = self._pieces(t + probe, q1, qd1, lam)
            mu = np.zeros(self.k)
            act = sorted(active)
            if act:
                mu[act] = np.linalg.solve(G[np.ix_(act, act)], -w0[act])
            w1 = w0 + G @ mu
            push = [i for i in ties if w1[i] < -tol * scale]
            if push:
                better = self._lcp(t, q, qd, candidates, exclude, tol, forced=tuple(sorted(active | set(push))),
                                   lam=lam, free_sign=held)
                if better is not None:
                    active = better[0]
        return active

    def _mode_problem(self, act):
        """The first-order problem of one mode (the active set ``act`` held)."""
        n, k = self.system.n, self.k

        if self.kind == 1:
            def acc(t, q, qd, _e):
                return self.acceleration(t, q, qd, act)[0]
        else:
            def acc(t, q, qd, lam):
                qdd, lamd = self.acceleration(t, q, qd, act, lam)
                return np.concatenate([qdd, lamd], axis=-1)

        return integration.first_order_problem(n, acc, extra=k if self.kind == 2 else 0, name=repr(self))

    def _mode_events(self, active, act):
        """Terminal events (direction -1) of a mode: the multiplier of an active constraint, f of an inactive one."""
        n = self.system.n
        evs = []
        for i in range(self.k):
            if i in active and self.kind == 1:
                ev = (lambda tt, yy, i=i: self.acceleration(tt, yy[:n], yy[n:], act)[1][i])
            elif i in active:
                ev = (lambda tt, yy, i=i: yy[2 * n + i])
            else:
                ev = (lambda tt, yy, i=i: self.constraint_values(tt, yy[:n], yy[n:2 * n])[i])
            ev.terminal, ev.direction = True, -1
            evs.append(ev)
        return evs

    def _event_values(self, active, act, ts, Y):
        """The event functions of a mode on samples (ts (K,), Y (K, dim)), shape (K, k)."""
        n = self.system.n
        out = self.constraint_values(ts, Y[:, :n], Y[:, n:2 * n])
        if active:
            mult = Y[:, 2 * n:] if self.kind == 2 else self.acceleration(ts, Y[:, :n], Y[:, n:], act)[1]
            idx = sorted(active)
            out[:, idx] = mult[:, idx]
        return out

    def _run_mode(self, problem, evs, active, act, y, t, t_end, max_step, grid, method, rtol, atol, out_y,
                  out_act, depth=0):
        """Integrate one mode from (t, y) to t_end or its first event with ONE call of ``integrate``.

        The solver's own steps can be long (free motions polynomial in t make its error estimate vanish),
        long enough to step over a whole arch of an event function, which solve_ivp's sign test between
        steps would miss. So the dense output is also sampled every ``max_step``; a + to - change of an
        event function between two samples before the located event is a missed event: that sample
        interval is integrated again (recursively, with 8 times finer samples) from the earlier sample.
        Fills out_y / out_act on the output grid; returns (status, t_stop, y_stop, event index, nfev).
        """
        if depth > 12:
            raise ActiveSetError(f"one-sided simulate: an event near t = {t:.12g} could not be located")
        m = max(1, int(np.ceil((t_end - t) / max_step)))
        on_grid = grid[(grid >= t) & (grid <= t_end)]
        ts = np.unique(np.concatenate([t + (t_end - t) * np.arange(m + 1) / m, on_grid]))
        ts = ts[(ts >= t) & (ts <= t_end)]
        res = integration.run(problem, y, t, t_end, method, rtol, atol, t_eval=ts, events=evs,
                              where="one-sided simulate")
        t_stop, i_e, y_stop = t_end, None, res.y[-1]
        if res.status == 1:
            t_stop, i_e = min((te[0], i) for i, te in enumerate(res.t_events) if len(te))
            y_stop = res.y_events[i_e][0]
        g = self._event_values(active, act, res.t, res.y)
        missed = np.nonzero(np.any((g[:-1] > 0) & (g[1:] < 0), axis=1) & (res.t[1:] <= t_stop))[0]
        keep = res.t <= (res.t[missed[0]] if len(missed) else t_stop)
        for tt, yy in zip(res.t[keep], res.y[keep]):  # at an event time the mode after it overwrites
            j = np.searchsorted(grid, tt)
            if j < len(grid) and grid[j] == tt:
                out_y[j], out_act[j] = yy, act
        if not len(missed):
            return res.status, t_stop, y_stop.copy(), i_e, res.nfev
        k = missed[0]
        status, t_stop, y_stop, i_e, used = self._run_mode(problem, evs, active, act, res.y[k], res.t[k],
                                                           res.t[k + 1], (res.t[k + 1] - res.t[k]) / 8, grid,
                                                           method, rtol, atol, out_y, out_act, depth + 1)
        if status != 1:
            raise ActiveSetError(f"one-sided simulate: a sign change of an event function in "
                                 f"[{res.t[k]:.12g}, {res.t[k + 1]:.12g}] could not be located")
        return status, t_stop, y_stop, i_e, res.nfev + used

    def simulate(self, q0, qd0, t_end, steps=200, t0=0.0, method=integration.DEFAULT_METHOD, rtol=1e-12,
                 atol=1e-12, tol=1e-9, max_events=500, lam0=None, max_step=None):
        """Event-driven integration forward in time with ``integrators.integrate`` (a scipy method).

        Each mode (set of active constraints) is one first-order problem and one ``integrate`` call; its
        leave / join events are the terminal events of ``integrate`` (direction -1), located on scipy's
        dense output, and the mode is switched between calls. solve_ivp finds events from sign changes
        between consecutive solver steps; on motions that are polynomial in t (a free sleigh moves on a
        straight line) DOP853 steps over a whole arch of f = u sin(w t) and would miss the join, so the
        dense output is also sampled every ``max_step`` (default (t_end - t0) / max(steps, 200)) and a
        sign change missed between two samples is located by integrating that piece again.

        lam0: type II only, the initial multipliers (default 0; > 0 only where f_nu = 0).
        Returns an IntegrationResult on linspace(t0, t_end, steps + 1) with outputs "q", "qd",
        "lambda" (alias res.lam; 0 where inactive; type II: the state lambda) and "control_sign"
        (type I), res.events: a list of (t, "leave" | "join", index), and res.segments: a list of
        (t_start, t_end, y_start, y_end, active). A constraint at f = 0 at t0 that is released at once
        is reported as (t0, "leave", index). Raises InitialConstraintError if some f_nu(q0, qd0) < -tol.
        """
        require_numeric(self.symbols, "simulate", repr(self))
        S, n, k = self.system, self.system.n, self.k
        if not integration.is_scipy_method(method):
            raise LagrangianError(f"one-sided simulate locates its events with a scipy method "
                                  f"('scipy:DOP853', 'scipy:Radau', ...), got {method!r}")
        if lam0 is not None and self.kind == 1:
            raise LagrangianError("lam0 is only for one_sided_servo2: here lambda is determined by the state")
        if not t_end > t0:
            raise LagrangianError(f"one-sided motion is defined forward in time only (Kozlov 2019, sect. 3): "
                                  f"t_end = {t_end} <= t0 = {t0}; reverse the velocities instead")
        q0, qd0 = integration.check_state(q0, qd0, n)
        f0 = self.constraint_values(t0, q0, qd0)
        if f0.min() < -tol:
            i = int(np.argmin(f0))
            raise InitialConstraintError(f"initial state violates the one-sided constraint {i}: {self.f[i]} = "
                                         f"{f0[i]:.3e} < 0", index=i, residual=f0[i])
        extra = np.zeros(0)
        if self.kind == 2:
            extra = np.zeros(k) if lam0 is None else np.atleast_1d(np.asarray(lam0, dtype=float))
            if extra.shape != (k,) or np.any(extra < 0):
                raise LagrangianError(f"lam0 must be {k} numbers >= 0, got {lam0!r}")
            bad = [i for i in range(k) if extra[i] > 0 and f0[i] > tol]
            if bad:
                raise LagrangianError(f"lam0[{bad[0]}] = {extra[bad[0]]} > 0 but constraint {bad[0]} is not at "
                                      f"its boundary (f = {f0[bad[0]]:.3e}): the control rests at 0 off f = 0")
        y = np.concatenate([q0, qd0, extra])
        grid = integration.time_grid(t0, t_end, steps)
        if max_step is None:
            max_step = (t_end - t0) / max(int(steps), 200)
        out_y = np.full((len(grid), len(y)), np.nan)
        out_act = [None] * len(grid)
        t, prev, exclude, hit, events, segments, nfev = t0, None, set(), set(), [], [], 0
        while True:
            lam_state = y[2 * n:] if self.kind == 2 else None
            f = self.constraint_values(t, y[:n], y[n:2 * n])
            cand = {i for i in range(k) if abs(f[i]) <= tol} | exclude | hit
            active = self.select_active(t, y[:n], y[n:2 * n], cand, exclude=exclude, tol=tol, lam=lam_state)
            before = set(range(k)) & cand if prev is None else prev
            for i in sorted(active - before):
                events.append((float(t), "join", i))
            for i in sorted(before - active):
                events.append((float(t), "leave", i))
            prev = active
            if len(events) > max_events:
                raise ActiveSetError(f"more than {max_events} leave/join events before t = {t:.6g} (chattering?)")
            act = sorted(active)
            problem, evs = self._mode_problem(act), self._mode_events(active, act)
            start = t
            status, t_e, y, i_e, used = self._run_mode(problem, evs, active, act, y, t, t_end, max_step, grid,
                                                        method, rtol, atol, out_y, out_act)
            nfev += used
            if status != 1:
                segments.append((start, t_end, None, y, act))
                break
            if self.kind == 2 and i_e in active:
                y[2 * n + i_e] = 0.0  # the control has run out: lambda_i = 0 exactly at the leave event
            segments.append((start, t_e, None, y.copy(), act))
            exclude = {i_e} if i_e in active else set()
            hit = {i_e}
            t = t_e
        # start states of the segments: the end state of the one before (the motion is shockless)
        y_start = np.concatenate([q0, qd0, extra])
        for j, (ta, tb, _, yb, act) in enumerate(segments):
            segments[j] = (ta, tb, y_start, yb, act)
            y_start = yb
        if np.isnan(out_y).any():
            j = int(np.argmax(np.isnan(out_y).any(axis=1)))
            raise IntegrationError(f"one-sided simulate: no state was recorded at the output time t = {grid[j]:.12g}")
        lam, sign = np.zeros((len(grid), k)), np.ones((len(grid), k))
        for j, tt in enumerate(grid):
            yy = out_y[j]
            if self.kind == 2:
                lam[j] = yy[2 * n:]
            else:
                lam[j] = self.acceleration(tt, yy[:n], yy[n:], out_act[j])[1]
                sign[j] = self._pieces(tt, yy[:n], yy[n:2 * n])[4]
        result = integration.IntegrationResult(t=grid, y=out_y, status=0, message="reached the end of t_span",
                                               nfev=nfev, nsteps=len(segments),
                                               method=integration.canonical_name(method) or str(method))
        result.outputs = {"q": out_y[:, :n], "qd": out_y[:, n:2 * n]}
        if self.kind == 1:
            result.outputs["control_sign"] = sign
        result.events = events
        result.segments = segments
        return integration.finish(result, self, lam, S.labels + tuple(f"lambda{i + 1}" for i in range(k))
                                  * (self.kind == 2))

    def __repr__(self):
        return f"OneSidedSystem(f={self.f} >= 0, model={self.model!r})"


register_model(("one_sided", "one_sided_servo2"),
               lambda system, phi, model, control: OneSidedSystem(system, phi, control=control, model=model))
