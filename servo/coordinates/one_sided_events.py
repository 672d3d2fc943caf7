"""Event-driven integration of a one-sided system: one ``integrators.integrate`` call per mode (set of active
constraints), the leave / join events of the mode as terminal events, the mode switched between calls.

Velocities are continuous at every event (the motion is shockless, Salnikova, Kugushev and Demidov
(2023), section 2); the motion is defined forward in time only (Kozlov (2019), section 3).
``EventDrivenMixin`` holds these methods of ``OneSidedSystem`` (``servo.coordinates.one_sided``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from . import integration
from .symbolic import require_numeric
from ..errors import ActiveSetError, InitialConstraintError, IntegrationError, LagrangianError

__all__ = ["EventDrivenMixin"]


class EventDrivenMixin:
    """``simulate`` of a one-sided system (a mixin of ``OneSidedSystem``: it reads ``system``, ``k``, ``kind``,
    ``f``, ``symbols`` and calls ``constraint_values``, ``acceleration``, ``select_active`` and ``_pieces``)."""

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

        return integration.first_order_problem(n, acc, extra=k if self.kind == 2 else 0, name=repr(self),
                                               period=self.system.period)

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

    def simulate(self, q0: ArrayLike, qd0: ArrayLike, t_end: float, steps: int = 200, t0: float = 0.0,
                 method: str = integration.DEFAULT_METHOD, rtol: float = 1e-12, atol: float = 1e-12,
                 tol: float = 1e-9, max_events: int = 500, lam0: ArrayLike | None = None,
                 max_step: float | None = None) -> integration.IntegrationResult:
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
