"""Adaptive step size with error control, shaped like scipy.integrate.solve_ivp.

Methods (:data:`integrators.methods.METHODS`):

* "rkmk45", "rkmk853": the Dormand-Prince 5(4) and DOP853 tableaux in Runge-Kutta-Munthe-Kaas form
  on g* (Munthe-Kaas 1999; Engo 2000, "On the construction of geometric integrators in the RKMK
  class", for embedded RKMK pairs): K_i = h dexpinv_{theta_i}(w(exp(theta_i) . z)), dexp^-1 truncated
  after ad^(q-2) for the order q = 5, 8 of the pair. Every accepted step is z1 = exp(ad theta)^T z, so
  an adaptive step only changes h and the Casimirs are kept to round-off as by the fixed-step methods.
  The error estimate is the state difference to leading order, ad*_{theta - theta_hat} z.
* "rk45", "rk853": the same tableaux as ordinary Runge-Kutta methods on the ambient space (they keep
  linear invariants, e.g. the constraint of a servo-constraint of the first kind, to round-off).
* "rk45_projected", "rk853_projected": "rk45", "rk853" with every accepted step projected onto the
  level set {C_k = C_k(y0)} of the algebra's polynomial Casimirs (Hairer, Lubich and Wanner 2006,
  IV.4, Algorithm 4.2; :mod:`integrators.codegen.projection`); the error estimate is the unprojected step's,
  the next step starts (and evaluates its first stage) at the projected state, whose increment is
  added with the same compensated sum; C(y0) of the initial state is the target of every step (also
  when a run continues in chunks), and the states at ``t_eval`` are projected too (onto C(y0)), those
  at events onto C of the located step's start (on that level set to round-off).

Controller (Hairer, Norsett and Wanner, *Solving ODEs I*, II.4, as in solve_ivp): error norm
RMS(err / (atol + rtol max(|z|, |z1|))) (DOP853: err5^2 / sqrt(n (err5^2 + 0.01 err3^2))), accept when
<= 1, next h = h min(10, max(0.2, 0.9 err^(-1/(k+1)))) with k the order of the error estimator; an
ensemble shares one step sequence (the largest error of its trajectories decides; a trajectory that
blows up is lost alone and leaves it, :mod:`integrators.engine.freeze`). The first step is
Hairer's starting-step algorithm unless ``first_step`` is given; ``max_step`` caps |h|.

Events are located by the method's own continuous extension (one step of size tau from the step's
start, see :mod:`integrators.engine.events`), so event times are as accurate as the states; they are
checked as the run goes, after each segment of 8, 16, ... 4096 accepted steps of the same loop (continued
from its own state, so the segments are the unsegmented run to round-off), and a terminal event ends the
run in the segment where it happens. Output at
``t_eval`` (or the grid of h / steps) comes from the pairs' continuous extensions,
:mod:`integrators.reference.dense_output`.

Paths: the generated code (:mod:`integrators.codegen.writer`, numpy or numba backend) when the problem's
structure is recognised, else (and with ``fast=False``) the generic numpy stages written here, the
reference both are tested against.
"""

from __future__ import annotations

import math

import numpy as np

from ..reference import dense_output
from ..backends import fastpath, numba_kernels, projection_rows, segmented_run
from ..codegen import projection
from . import freeze
from ..core import lost
from ..core.result import IntegrationResult
from .segments import run_with_events
from .starting_step import check_controls, initial_step
from ..geometry.closed_dexpinv import space_dexpinv
from ..geometry.spaces import CoadjointSpace
from ..core import controller
from ..core.summation import compensated_add
from ..reference.runge_kutta import lincomb, rk_increment, rkmk_increment, stages


class _Reference:
    """The generic numpy stages of an embedded pair (RKMK on g* or ambient RK)."""

    def __init__(self, problem, tab, lie, terms, proj=None, target=None):
        self.problem, self.tab, self.lie, self.terms = problem, tab, lie, terms
        if lie:
            self.space = CoadjointSpace(problem)
        self.rhs = problem.rhs if problem.kind == "coadjoint" else problem.f
        self.fevals = len(tab.b)
        # the projection onto {C = target} (integrators.codegen.projection) of a projected pair, else None
        self.proj, self.target = proj, target
        # the same increment by compiled code when the run is compiled (projection_rows.compiled_projection)
        self.proj_increment = None if proj is None else proj.increment

    def projection(self, z1):
        """The projection increment at z1 (zero without a projection)."""
        return self.proj_increment(z1, self.target) if self.proj is not None else 0.0

    def first(self, t, z):
        return self.space.field(t, z) if self.lie else self.rhs(t, z)

    def increment(self, z, hs):
        """The map (t_i, theta_i) -> K_i of this pair's form at z with step hs
        (:mod:`integrators.reference.runge_kutta`)."""
        return rkmk_increment(self.space, z, hs, self.terms) if self.lie else rk_increment(self.rhs, z, hs)

    def stages(self, t, z, hs, w0):
        """(Ks, theta, d, z1, w_last, K_last) of one attempt with the signed step hs."""
        Ks = stages(self.tab.A[1:], self.tab.c[1:], t, hs, self.increment(z, hs), [hs * w0])  # FSAL: K_1 = hs w0
        theta = lincomb(self.tab.b, Ks)
        d = self.space.act_delta(theta, z) if self.lie else theta
        z1 = z + d
        wl = self.first(t + hs, z1)
        if self.lie:
            Kl = space_dexpinv(self.space, theta, hs * wl, self.terms) if self.terms > 1 else hs * wl
        else:
            Kl = hs * wl
        return Ks, theta, d, z1, wl, Kl

    def error(self, z, z1, Ks, Kl, rtol, atol, rows=False):
        """The error norm of the attempt, the largest over an ensemble (NaN -> inf), or with ``rows``
        each trajectory's (an array of the batch shape)."""
        Kall = Ks + ([Kl] if self.tab.fsal else [])
        sc = atol + rtol * np.maximum(np.abs(z), np.abs(z1))
        errs = []
        for E in self.tab.E:
            et = sum(e * K for e, K in zip(E, Kall) if e != 0.0)
            if self.lie:
                et = self.space.algebra._coad(et, z)   # unchecked: a NaN attempt is rejected, not raised
            errs.append(et / sc)
        n = z.shape[-1]
        if len(errs) == 1:
            err = np.sqrt(np.sum(errs[0] ** 2, axis=-1) / n)
        else:
            e5, e3 = np.sum(errs[0] ** 2, axis=-1), np.sum(errs[1] ** 2, axis=-1)
            err = e5 / np.sqrt(n * (e5 + 0.01 * e3) + 1e-300)
        if rows:
            return err
        m = float(np.max(err))
        return m if m == m else math.inf

    def step(self, t, y, tau):
        """One step of size tau (the continuous extension used for events), projected when the pair is
        (:meth:`project_step`)."""
        return self.project_step(y, y + self.stages(t, y, tau, self.first(t, y))[2])

    def project_step(self, y, z1):
        """z1 (the end of a trial step from y) projected onto {C = C(y)}: the targets of the step's start,
        on the level set of C(y0) to round-off, and of the shape of y whether it is one trajectory of an
        ensemble (event location steps each alone) or all of them."""
        return z1 if self.proj is None else z1 + self.proj.increment(z1, self.proj.values(y))


class _ReferenceRun:
    """The controller of :func:`integrators.codegen.programs.adaptive_source`, written over numpy arrays (the
    reference), as a run that advances by segments (:meth:`advance`, the same interface as
    :class:`integrators.backends.segmented_run.AdaptiveRun`): t, the proposed h, z, the compensation e and the
    first stage's generator are carried from call to call, so segments are the whole run exactly. An
    ensemble (y0 (..., B, n)) shares the steps and loses trajectories alone (:mod:`integrators.engine.freeze`)."""

    def __init__(self, ref, y0, t0, t1, h, rtol, atol, max_step, order):
        self.ref, self.t1, self.rtol, self.atol, self.order = ref, t1, rtol, atol, order
        self.direction = 1.0 if t1 > t0 else -1.0
        self.ms = math.inf if max_step is None else max_step
        self.t, self.h, self.z, self.e = t0, h, y0.copy(), np.zeros_like(y0)
        self.w0 = ref.first(t0, self.z)
        self.frz = freeze.Freezer(y0, t0) if y0.ndim > 1 else None
        self.nsteps = self.nrej = 0

    def state(self):
        """The current state z + e (the lost trajectories of an ensemble at their last finite state)."""
        return self.z + self.e if self.frz is None else self.frz.saved(self.z + self.e)

    def advance(self, budget, save_every=1):
        """At most ``budget`` accepted steps: (status, ts, ys) of the saved ones (every ``save_every``-th and
        the last), status 0 (reached t1), -1 (the step size collapsed; for an ensemble: every trajectory was
        lost) or -2 (the budget was spent)."""
        ref, direction, t1, order, frz = self.ref, self.direction, self.t1, self.order, self.frz
        rtol, atol = self.rtol, self.atol
        t, h, z, e, w0 = self.t, self.h, self.z, self.e, self.w0
        ts, ys = [], []
        done = since = 0
        status = 0
        with np.errstate(all="ignore"):
            while direction * (t1 - t) > 0.0:
                if done >= budget:
                    status = -2
                    break
                h = min(h, self.ms)
                last = False
                if direction * (t + direction * h - t1) >= 0.0:
                    h, last = abs(t1 - t), True
                hs = direction * h
                Ks, theta, d, z1, wl, Kl = ref.stages(t, z, hs, w0)
                errs = ref.error(z, z1, Ks, Kl, rtol, atol, rows=frz is not None)
                err = errs if frz is None else frz.max_error(errs)
                if err <= 1.0:
                    if frz is not None:     # frozen before the step, at their last finite state
                        if _lose(frz, frz.nonfinite(d), t, z + e):
                            if not frz.alive.any():
                                status = -1
                                break
                            z, e, w0 = frz.park(z, e, w0, ref.first, t)
                    elif not np.all(np.isfinite(d)):
                        status = -1
                        break
                    if ref.proj is not None:  # onto {C = C(y0)}; the next first stage at the projected state
                        p = ref.projection(z1)
                        d = d + p
                        wl = ref.first(t + hs, z1 + p)
                    s, e1 = compensated_add(z, e, d)
                    if frz is not None and frz.nfrozen:   # the frozen rows stay parked
                        s, e1, wl = frz.keep(s, z), frz.keep(e1, e), frz.keep(wl, w0)
                    z, e = s, e1
                    w0 = wl
                    t = t1 if last else t + hs
                    done += 1
                    since += 1
                    if since == save_every or last:
                        since = 0
                        ts.append(t)
                        ys.append(z + e if frz is None else frz.saved(z + e))
                    hn = h * controller.accepted_factor(err, order)
                    if frz is not None and not last and hn < freeze.floor(t):
                        if _lose(frz, frz.collapsed(errs, h, t, order), t, z + e):
                            if not frz.alive.any():
                                status = -1
                                break
                            z, e, w0 = frz.park(z, e, w0, ref.first, t)
                            hn = frz.next_step(errs, h, order)
                    h = hn
                else:
                    self.nrej += 1
                    hn = h * controller.rejected_factor(err, order)
                    if hn < 10.0 * 2.2e-16 * abs(t) or hn < 1e-300:
                        if frz is None or (_lose(frz, frz.collapsed(errs, h, t, order), t, z + e)
                                           and not frz.alive.any()):
                            status = -1
                            break
                        z, e, w0 = frz.park(z, e, w0, ref.first, t)
                        hn = frz.next_step(errs, h, order)
                    h = hn
        self.t, self.h, self.z, self.e, self.w0 = t, h, z, e, w0
        self.nsteps += done
        shape = (len(ts),) + z.shape
        return status, np.array(ts, dtype=float), (np.array(ys) if ys else np.empty(shape))


def _reference_loop(ref, y0, t0, t1, h, rtol, atol, max_step, save_every, order, max_steps=10**6):
    """The whole reference run as one segment of :class:`_ReferenceRun`: (IntegrationResult, nsteps, nrejected);
    an ensemble's lost trajectories reported as the generated loops report them (:mod:`integrators.core.lost`)."""
    run = _ReferenceRun(ref, y0, t0, t1, h, rtol, atol, max_step, order)
    status, ts, ys = run.advance(max_steps, save_every)
    ts, ys = np.concatenate([[t0], ts]), np.concatenate([y0[None], ys], axis=0)
    if status == 0:
        msg = "reached the end of t_span"
    else:
        msg = fastpath.stop_message(status, run.t, max_steps)
        zf = run.state()
        if np.all(np.isfinite(zf)) and ts[-1] != run.t:
            ts, ys = np.append(ts, run.t), np.concatenate([ys, zf[None]], axis=0)
    res = IntegrationResult(t=ts, y=ys, status=-1 if status else 0, message=msg, nsteps=run.nsteps)
    if run.frz is not None:
        lost.report_shared(res, run.frz.alive, run.frz.t_end, status, run.t, y0.shape[:-1], max_steps,
                           lost.SHARED_WHY)
    return res, run.nsteps, run.nrej


def _lose(frz, which, t, state):
    """Freeze the trajectories ``which`` of a shared ensemble at (t, state); True when any froze."""
    return bool(frz.freeze(which, t, state).any())


def solve_adaptive(problem, method, y0, t0, t1, rtol, atol, first_step, max_step, save_every, events,
                   backend, fast, t_eval=None, max_steps=10**6):
    """Integrate with an embedded pair (see the module docstring), at most ``max_steps`` accepted steps
    (beyond: status -1, saying so); an IntegrationResult with nfev, nsteps, ``nrejected`` and, with
    events, t_events / y_events as for the fixed-step methods."""
    check_controls(rtol, atol, first_step, max_step)
    if t_eval is not None:
        save_every = 1
    tab = method.tableau
    lie, terms, order = method.lie, method.terms, tab.err_order
    proj = projection.of_algebra(problem.algebra) if method.project else None
    ref = _Reference(problem, tab, lie, terms, proj, None if proj is None else proj.values(y0))
    pl = fastpath.plan(problem, tab, lie, terms, y0, proj) if fast else None
    if pl is None and backend == "numba":
        fastpath.require_compiled(backend, fastpath.no_plan_reason(problem, lie, proj))
    if first_step is not None:
        h0, extra = float(first_step), 0
    elif pl is not None and y0.ndim == 1 and (backend != "auto" or not numba_kernels.available()):
        h0, extra = 0.0, 2   # the backend does not depend on h0: the generated loop takes the starting step
    else:
        rhs = problem.rhs if problem.kind == "coadjoint" else problem.f
        f = fastpath.field(pl) if pl is not None and y0.ndim == 1 else (lambda y: rhs(t0, y))
        h0, extra = initial_step(f, y0, t0, t1, order, rtol, atol, max_step), 2
    work = abs(t1 - t0) / h0 * max(1, y0.size // problem.dim) if h0 > 0.0 else 0.0
    mode = fastpath.choose_backend(backend, work) if pl is not None else "numpy"
    every = 1 if events is not None else save_every
    if events is not None:   # the events are located as the run goes: a terminal event ends it there
        step = fastpath.step_function(pl, mode) if pl is not None else ref.step
        if pl is not None and proj is not None:
            step = _projected_step(step, ref)
        run = (segmented_run.AdaptiveRun(pl, y0, t0, t1, h0, rtol, atol, max_step, mode) if pl is not None else
               _ReferenceRun(ref, y0, t0, t1, h0, rtol, atol, max_step, order))
        res = run_with_events(problem, run, y0, t0, events, step, len(tab.b), save_every, max_steps)
        nsteps, nrej = run.nsteps, run.nrej
        res.backend = mode
    elif pl is not None:
        switch = backend == "auto" and fastpath.resolve_backend("auto") == "numba"
        res, nsteps, nrej = fastpath.run_adaptive(pl, y0, t0, t1, h0, rtol, atol, max_step, every, mode,
                                                  max_steps, switch)
    else:
        res, nsteps, nrej = _reference_loop(ref, y0, t0, t1, h0, rtol, atol, max_step, every, order,
                                            max_steps)
    # a projected pair evaluates the first stage of every step after the first anew (no FSAL)
    res.nfev += extra + 1 + (nsteps + nrej) * len(tab.b) + (nsteps if proj is not None else 0)
    res.nrejected = nrej
    if pl is None:
        res.backend = "numpy (generic reference)"
    if t_eval is not None:  # integrators.reference.dense_output: the continuous extension at t_eval
        te = t_eval[(t_eval - res.t[-1]) * (t1 - t0) <= 0.0]
        if proj is not None and mode == "numba":   # the projection of the output points, compiled too
            ref.proj_increment = projection_rows.compiled_projection(proj)
        last = res.y[-1]
        with np.errstate(all="ignore"):   # a lost trajectory's rows may overflow in the recomputed stages
            res.y, res.t = dense_output.at_times(ref, res.t, res.y, te), te
        _hold_lost(res, last)
    return res


def _hold_lost(res, last):
    """After dense output: the trajectories a shared ensemble lost (``res.failed`` with t_end before the
    run's end) hold their last finite state (in ``last``, the final saved row) at the output times past
    their t_end, as the saved rows did (the interpolant of their repeated rows would move them)."""
    failed = getattr(res, "failed", None)
    if failed is None or not len(failed) or len(res.t) == 0:
        return
    n = res.y.shape[-1]
    t_end = np.ravel(res.t_end)
    gone = np.zeros(t_end.size, dtype=bool)
    gone[failed] = (t_end[failed] - res.t[-1]) * (res.t[-1] - res.t[0]) < 0.0
    flat = res.y.reshape(len(res.t), -1, n)
    lost.hold_after(res.t, flat, t_end, gone, last.reshape(-1, n))


def _projected_step(step, ref):
    """The generated one-step map followed by the projection of ``ref`` (events of a projected pair)."""
    def go(t, y, tau):
        return ref.project_step(y, step(t, y, tau))
    return go
