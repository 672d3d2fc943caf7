"""The one numpy loop of the adaptive pairs: the controller of
:func:`integrators.codegen.programs.adaptive_source` written over numpy arrays (the reference the generated
loops are tested against), run by segments (:class:`ReferenceRun`, the interface of
:class:`integrators.backends.segmented_run.AdaptiveRun`: the events of :mod:`integrators.engine.segments`) or
whole (:func:`reference_loop`, one segment). Controller and error norm: :mod:`integrators.core.controller`;
the stages: :class:`integrators.reference.pair.ReferencePair`; an ensemble shares the steps and loses
trajectories alone (:mod:`integrators.engine.freeze`, reported by :mod:`integrators.core.lost`)."""

from __future__ import annotations

import math

import numpy as np

from ..backends import fastpath
from ..core import controller, lost
from ..core.result import IntegrationResult
from ..core.summation import compensated_add
from . import freeze


class ReferenceRun:
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
        self.peak = (0.0, t0, 0.0)   # one trajectory's (zmax, tmax, hmax) of its accepted steps

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
                    if frz is None:   # one trajectory: the run's peak (integrators.engine.growth)
                        zn = float(np.max(np.abs(z)))
                        if zn > self.peak[0]:
                            self.peak = (zn, t, hs)
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


def reference_loop(ref, y0, t0, t1, h, rtol, atol, max_step, save_every, order, max_steps=10**6):
    """The whole reference run as one segment of :class:`ReferenceRun`: (IntegrationResult, nsteps, nrejected);
    an ensemble's lost trajectories reported as the generated loops report them (:mod:`integrators.core.lost`)."""
    run = ReferenceRun(ref, y0, t0, t1, h, rtol, atol, max_step, order)
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
    if run.frz is None:
        res.peak = run.peak
    if run.frz is not None:
        lost.report_shared(res, run.frz.alive, run.frz.t_end, status, run.t, y0.shape[:-1], max_steps,
                           lost.SHARED_WHY)
    return res, run.nsteps, run.nrej


def _lose(frz, which, t, state):
    """Freeze the trajectories ``which`` of a shared ensemble at (t, state); True when any froze."""
    return bool(frz.freeze(which, t, state).any())
