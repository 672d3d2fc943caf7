"""Adapters to scipy.integrate.solve_ivp (RK45, RK23, DOP853, Radau, BDF, LSODA) so every comparison
has the tool users would pick instead.

A batch of initial conditions is flattened into one long state vector: the solver then takes one
shared adaptive step sequence whose error norm is taken over the whole batch (cheap and vectorized;
for independent step control integrate the trajectories one at a time).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.integrate
from liegroups import LieGroupsError

from ..core.errors import IntegrationInputError, IntegratorError
from ..core.grid import output_grid
from ..core.result import IntegrationResult


#: the solve_ivp methods that use a Jacobian
IMPLICIT = ("Radau", "BDF", "LSODA")


def _batched_jac(jac, shape):
    """The Jacobian of the flattened batch: block diagonal with one (dim, dim) block per trajectory."""
    if len(shape) == 1:
        return jac

    def J(t, yflat):
        blocks = np.asarray(jac(t, yflat.reshape(shape)), dtype=float)
        d = shape[-1]
        blocks = np.broadcast_to(blocks, shape[:-1] + (d, d)).reshape(-1, d, d)
        out = np.zeros((blocks.shape[0], d, blocks.shape[0], d))
        idx = np.arange(blocks.shape[0])
        out[idx, :, idx, :] = blocks
        return out.reshape(yflat.size, yflat.size)

    return J


class _Stop(IntegratorError):
    """Raised inside a step to end the run (non-finite right-hand side, budget spent)."""


class _Guard:
    """The budget (accepted steps, wall-clock seconds) and the finiteness check of a scipy run."""

    def __init__(self, max_steps, max_wall_time):
        self.max_steps, self.max_wall_time = max_steps, max_wall_time
        self.start = time.perf_counter()
        self.steps = 0

    def values(self, t, y, f):
        if not np.all(np.isfinite(f)):
            where = "the state" if not np.all(np.isfinite(y)) else "the right-hand side"
            raise _Stop(f"{where} became NaN or inf at t = {t:.6g} (overflow or a NaN in the right-hand side); "
                        f"the last accepted state is kept")
        if time.perf_counter() - self.start > self.max_wall_time:
            raise _Stop(f"the wall-clock budget of {self.max_wall_time:g} s was spent at t = {t:.6g} after "
                        f"{self.steps} steps (max_wall_time); the last accepted state is kept")


_GUARDED = {}


def _guarded_class(name):
    """The scipy OdeSolver ``name`` with a step that stops (status -1, message) on a _Stop or when the
    step budget is spent, instead of looping on NaN step sizes."""
    if name not in _GUARDED:
        base = scipy.integrate._ivp.ivp.METHODS[name]

        def _step_impl(self):
            g = self.guard
            if g.steps >= g.max_steps:
                return False, (f"the step budget of {g.max_steps} steps was spent at t = {self.t:.6g} "
                               f"(max_steps); the last accepted state is kept")
            try:
                ok, msg = base._step_impl(self)
            except _Stop as stop:
                return False, str(stop)
            except (ValueError, np.linalg.LinAlgError) as exc:  # a NaN / inf Jacobian in Radau, BDF
                return False, f"the step failed at t = {self.t:.6g}: {exc} (overflow in the Jacobian)"
            g.steps += 1
            if ok and not np.all(np.isfinite(self.y)):
                return False, f"the state became NaN or inf at t = {self.t:.6g}"
            return ok, msg

        _GUARDED[name] = type(f"Guarded{name}", (base,), {"_step_impl": _step_impl, "guard": None})
    return _GUARDED[name]


def solve_scipy(problem, method, y0, t0, t1, h, steps, save_every, events, rtol, atol, t_eval=None,
                budget=(10**6, 120.0)):
    """Run solve_ivp(method.scipy_name) on the problem's right-hand side; return an IntegrationResult.

    Output times: ``t_eval`` when given (exactly those that are reached), else the grid of h / steps
    (every save_every-th point and t1), else the solver's own steps (every save_every-th and the last).

    ``budget = (max_steps, max_wall_time)``: beyond either the run stops with status -1 and a message
    saying which; a right-hand side that returns NaN or inf stops it at that step (status -1) instead
    of letting the step-size control loop on NaN step sizes.
    """
    shape = y0.shape
    rhs = problem.rhs if problem.kind == "coadjoint" else problem.f
    guard = _Guard(*budget)

    def fun(t, yflat):
        with np.errstate(all="ignore"):
            try:
                out = np.asarray(rhs(t, yflat.reshape(shape)), dtype=float).reshape(-1)
            except LieGroupsError as exc:   # e.g. an exponential that overflows inside the field
                raise _Stop(f"the right-hand side failed at t = {t:.6g}: {exc}") from None
        guard.values(t, yflat, out)
        return out

    explicit = t_eval is not None
    if not explicit and (h is not None or steps is not None):
        t_eval = output_grid(t0, t1, h, steps, save_every)
    ev = None
    if events is not None:
        if len(shape) != 1:
            raise IntegrationInputError("events with a scipy method need a single trajectory (y0 of shape (dim,)); "
                             f"got a batch of shape {shape[:-1]}")
        ev = [_wrap_event(e, shape) for e in (events if isinstance(events, (list, tuple)) else [events])]
    options = {}
    if method.scipy_name in IMPLICIT and getattr(problem, "jac", None) is not None:
        options["jac"] = _batched_jac(problem.jac, shape)
    solver = type(f"Run{method.scipy_name}", (_guarded_class(method.scipy_name),), {"guard": guard})
    def failed_at_start(message):
        return IntegrationResult(t=np.array([t0]), y=y0[None].copy(), status=-1, message=message, nfev=1)

    try:
        with np.errstate(over="ignore", invalid="ignore"):
            sol = scipy.integrate.solve_ivp(fun, (t0, t1), y0.reshape(-1), method=solver,
                                            dense_output=t_eval is not None, rtol=rtol, atol=atol, events=ev,
                                            **options)
    except _Stop as stop:  # at the initial state (the solver's first evaluations)
        return failed_at_start(str(stop))
    except (ValueError, np.linalg.LinAlgError) as exc:  # a NaN / inf initial Jacobian
        return failed_at_start(f"the solver could not start at t = {t0:.6g}: {exc}")
    if len(sol.t) < 2 and sol.status < 0:  # the first step failed: no dense output to evaluate
        return failed_at_start(str(sol.message))
    if t_eval is not None:
        ts = t_eval[t_eval <= sol.t[-1]] if t1 > t0 else t_eval[t_eval >= sol.t[-1]]
        ys = sol.sol(ts).T.reshape((len(ts),) + shape) if len(ts) else np.empty((0,) + shape)
        ys[ts == t0] = y0
    else:
        ts = sol.t
        ys = sol.y.T.reshape((len(ts),) + shape)
        if save_every > 1:
            keep = np.arange(0, len(ts), save_every)
            if keep[-1] != len(ts) - 1:
                keep = np.append(keep, len(ts) - 1)
            ts, ys = ts[keep], ys[keep]
    res = IntegrationResult(t=ts, y=ys, status=int(sol.status), message=str(sol.message),
                            nfev=int(sol.nfev), nsteps=len(sol.t) - 1)
    if ev is not None and sol.status == 1 and t_eval is not None and not explicit:
        # a terminal event: end the output at the event, like solve_ivp without t_eval
        te = sol.t[-1]
        if len(ts) == 0 or ts[-1] != te:
            res.t = np.append(ts, te)
            res.y = np.concatenate([ys, sol.y[:, -1].reshape((1,) + shape)], axis=0)
    if ev is not None:
        res.t_events = [np.asarray(te) for te in sol.t_events]
        res.y_events = [np.asarray(ye) for ye in sol.y_events]
        res.event_index = [np.zeros((len(te), 0), dtype=int) for te in sol.t_events]
    return res


def _wrap_event(e, shape):
    def g(t, yflat):
        return float(e(t, yflat.reshape(shape)))

    g.terminal = getattr(e, "terminal", False)
    g.direction = getattr(e, "direction", 0)
    return g
