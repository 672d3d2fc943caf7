"""Event location inside a step, for every method of the engine's loops (fixed-step and adaptive; the scipy
adapters use solve_ivp's own events).

An event is a callable g(t, y) -> (...) (one value per trajectory) with optional attributes
``terminal`` (bool, stop that trajectory at the event) and ``direction`` (+1 only rising zero
crossings, -1 only falling, 0 both), as in scipy.integrate.solve_ivp.

Location. When g changes sign over a step [t_n, t_n + h] of a trajectory, the root tau* in (0, h] of

    G(tau) = g(t_n + tau, Phi_tau(y_n))

is found by Brent's method (scipy.optimize.brentq, xtol 1e-14), where Phi_tau is ONE step of the same
method with step tau from y_n. This is the method's own continuous extension: its error is the local
error O(tau^(p+1)) of the method, so the event time is as accurate as the states themselves (better
than a cubic Hermite interpolant for p = 4), and for Lie-Poisson methods the event state stays on the
coadjoint orbit. Each G evaluation costs one step; these evaluations are added to ``nfev``.

The adaptive pairs check the events as the run goes, segment by segment
(:func:`integrators.engine.segments.run_with_events`), so a terminal event ends the run where it happens.

Batches: every trajectory is located separately (its slice y[idx] is stepped alone, so the problem's
callables must accept a single state). A terminal event freezes that trajectory at its event state
(later saved values repeat it); integration stops when every trajectory is frozen; for a single
trajectory the last saved point is then (t_event, y_event).
"""

from __future__ import annotations

import numpy as np
import scipy.optimize

from ..core.errors import IntegrationInputError


def _as_list(events):
    return list(events) if isinstance(events, (list, tuple)) else [events]


class EventTracker:
    """Detects sign changes of the event functions after every step and locates them."""

    def __init__(self, events, problem, stepper, t0, y0):
        self.events = _as_list(events)
        for e in self.events:
            if not callable(e):
                raise IntegrationInputError(f"an event must be a callable g(t, y), got {e!r}")
        self.stepper = stepper
        self.state_shape = y0.shape[-1:]
        self.batch_shape = y0.shape[:-2] if problem.kind == "reconstruction" else y0.shape[:-1]
        if problem.kind == "reconstruction":
            raise IntegrationInputError("events are not supported for reconstruction problems")
        self.g_prev = [self._eval(e, t0, y0) for e in self.events]
        self.stopped = np.zeros(self.batch_shape, dtype=bool)
        self.frozen = None
        self.found = [[] for _ in self.events]  # (t, y, index)
        self.nfev = 0
        self.stop_time = None
        self.stop_state = None

    def _eval(self, e, t, y):
        v = np.asarray(e(t, y), dtype=float)
        return np.broadcast_to(v, self.batch_shape).copy()

    def _locate(self, e, t, y, h, idx):
        yi = y[idx]

        def G(tau):
            self.nfev += self.stepper.fevals
            return float(e(t + tau, self.stepper.step(t, yi, tau)))

        g0 = float(e(t, yi))
        if g0 == 0.0:
            return 0.0, yi
        tau = scipy.optimize.brentq(G, 0.0, h, xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=200)
        return tau, self.stepper.step(t, yi, tau)

    def after_step(self, t, y, t_new, y_new, h):
        """Check the step [t, t_new]; locate crossings; return y_new with terminal trajectories frozen."""
        if self.frozen is not None:
            y_new = np.where(self._mask(), self.frozen, y_new)
        hits = {}
        for n, e in enumerate(self.events):
            g_new = self._eval(e, t_new, y_new)
            g_old = self.g_prev[n]
            d = getattr(e, "direction", 0)
            cross = (np.sign(g_old) != np.sign(g_new)) & (g_old != 0.0) & ~self.stopped
            if d > 0:
                cross &= g_new > g_old
            elif d < 0:
                cross &= g_new < g_old
            for idx in map(tuple, np.argwhere(cross)):
                tau, ye = self._locate(e, t, y, h, idx)
                hits.setdefault(idx, []).append((tau, n, ye))
            self.g_prev[n] = g_new
        for idx, lst in hits.items():
            lst.sort(key=lambda r: r[0])
            for tau, n, ye in lst:
                self.found[n].append((t + tau, ye, idx))
                if getattr(self.events[n], "terminal", False):
                    self._freeze(idx, t + tau, ye)
                    break
        if self.frozen is not None:
            y_new = np.where(self._mask(), self.frozen, y_new)
        return y_new

    def _mask(self):
        return self.stopped.reshape(self.stopped.shape + (1,))

    def _freeze(self, idx, te, ye):
        if self.frozen is None:
            self.frozen = np.zeros(self.batch_shape + ye.shape)
        self.stopped[idx] = True
        self.frozen[idx] = ye
        if self.stopped.ndim == 0 or self.stopped.size == 1:
            self.stop_time, self.stop_state = te, ye

    def all_stopped(self):
        return bool(np.all(self.stopped))

    def finish(self, res):
        """Store t_events / y_events / event_index on the result and add the location cost to nfev."""
        res.t_events = [np.array([f[0] for f in fl]) for fl in self.found]
        res.y_events = [np.array([f[1] for f in fl]).reshape((len(fl),) + self.state_shape) for fl in self.found]
        res.event_index = [np.array([f[2] for f in fl], dtype=int).reshape(len(fl), len(self.batch_shape))
                           for fl in self.found]
        res.nfev += self.nfev
