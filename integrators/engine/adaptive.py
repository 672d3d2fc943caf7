"""Adaptive step size with error control, shaped like scipy.integrate.solve_ivp.

Methods (:data:`integrators.methods.METHODS`):

* "rkmk45", "rkmk853": the Dormand-Prince 5(4) and DOP853 tableaux in Runge-Kutta-Munthe-Kaas form
  on g* (Munthe-Kaas 1999; Engo 2000, "On the construction of geometric integrators in the RKMK
  class", for embedded RKMK pairs): K_i = h dexpinv_{theta_i}(w(exp(theta_i) . z)), dexp^-1 summed
  to round-off (closed forms on so(3)-, so(4)- and se(3)-like structures,
  :mod:`integrators.geometry.closed_dexpinv`; a truncation would be shared by both solutions of the pair,
  where the error estimate cannot see it). On a forced problem (z' = ad*_w z + f(z)) the generators are the
  pairs (w, f) in g x g* with the affine action (:class:`integrators.geometry.spaces.AffineCoadjointSpace`; the
  error estimate mapped by ad*_x z + v), every accepted step projected onto the problem's linear invariants
  (:mod:`integrators.codegen.linear_projection`; generated for one trajectory when the forcing is the
  multiplier force of those invariants, :mod:`integrators.codegen.affine_source`). Without a forcing every
  accepted step is z1 = exp(ad theta)^T z, so
  an adaptive step only changes h and the Casimirs are kept to round-off as by the fixed-step methods.
  The error estimate is the state difference to leading order, ad*_{theta - theta_hat} z; rkmk853's
  norm extrapolates less than Hairer's DOP853 norm (sqrt(S5/n) F^(1/5) instead of F^(1/2), step rule
  k = 6; the exponent calibrated, :mod:`integrators.core.controller`), since the RKMK stage equation's
  order-8 error is larger relative to its fifth- and third-order estimates than the ambient pair's: at the
  same rtol its final error is within 2x of rk853_projected's on so(4), so(5), se(3), random bases and the
  drawn systems of benchmarks/drawn_systems.py (1.0-1.8x the steps; with Hairer's norm up to 63x), at the
  same cost at matched error. The 5(4) pairs are measured against the projected pair of their own tableau
  (the same order; against rk853_projected they end 2-24x higher, being of order 5): within 3x of it at
  equal steps; at equal rtol on se(3) 3-4x, their RKMK estimate being 3x smaller at equal h (so 1.25x
  longer steps, and 1.25^5 = 3).
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
RMS(err / (atol + rtol max(|z|, |z1|))) (DOP853: err5^2 / sqrt(n (err5^2 + 0.01 err3^2)), in RKMK form
err5 (err5^2 / (err5^2 + 0.01 err3^2))^(1/5)), accept when
<= 1, next h = h min(10, max(0.2, 0.9 err^(-1/(k+1)))) with k the order of the error estimator; an
ensemble shares one step sequence (the largest error of its trajectories decides; a trajectory that
blows up is lost alone and leaves it, :mod:`integrators.engine.freeze`). The first step is
Hairer's starting-step algorithm unless ``first_step`` is given; ``max_step`` caps |h|.

Events are located by the method's own continuous extension (one step of size tau from the step's
start, see :mod:`integrators.engine.events`), so event times are as accurate as the states; they are
checked as the run goes, after each segment of 8, 16, ... 4096 accepted steps of the same loop (continued
from its own state, so the segments are the unsegmented run to round-off), and a terminal event ends the
run in the segment where it happens. Output at
``t_eval`` (or the grid of h / steps) comes from the pairs' continuous extensions: on the generated path
the loop fills the grid from each accepted step's own stages (:mod:`integrators.codegen.dense_source`;
compiled: inline, the generic compiled kernel :mod:`integrators.backends.generic_kernel` too; Python: the
logged steps evaluated together), whose definition is the numpy reference
:mod:`integrators.reference.dense_output` (equal to round-off; it also serves the numpy reference path and,
with events, the steps after a terminal event stopped a trajectory).

Paths: the generated code (:mod:`integrators.codegen.writer`, numpy or numba backend) when the problem's
structure is recognised, else (and with ``fast=False``) the generic numpy stages of :class:`integrators.reference.pair.ReferencePair`, the
reference both are tested against.
"""

from __future__ import annotations

import functools

import numpy as np

from ..reference import dense_output
from ..backends import auto_compile, fastpath, numba_kernels, projection_rows, segmented_run, timed_adaptive
from ..codegen import linear_projection, projection
from ..core import controller, lost
from .segments import run_with_events
from .starting_step import check_controls, initial_step
from ..reference.pair import ReferencePair
from .reference_run import ReferenceRun, reference_loop


def solve_adaptive(problem, method, y0, t0, t1, rtol, atol, first_step, max_step, save_every, events,
                   backend, fast, t_eval=None, max_steps=10**6):
    """Integrate with an embedded pair (see the module docstring), at most ``max_steps`` accepted steps
    (beyond: status -1, saying so); an IntegrationResult with nfev, nsteps, ``nrejected`` and, with
    events, t_events / y_events as for the fixed-step methods."""
    check_controls(rtol, atol, first_step, max_step)
    if t_eval is not None:
        save_every = 1
    tab = method.tableau
    lie, terms = method.lie, method.terms
    order = controller.estimate_order(tab, lie)
    # a projected pair projects onto the Casimirs; an RKMK pair on a forced problem onto its linear invariants
    proj = projection.of_algebra(problem.algebra) if method.project else linear_projection.kept(problem, method)
    pl = fastpath.plan(problem, tab, lie, terms, y0, proj) if fast else None
    # the numpy pair: the loop when there is no plan, the step the events call without one, the projection
    ref = (ReferencePair(problem, tab, lie, terms, proj, None if proj is None else proj.values(y0))
           if pl is None or events is not None else None)
    # a time-dependent problem that gives the source of its coefficients: the generated loop of
    # integrators.codegen.timed_source (one trajectory or a shared-step ensemble, no events; the engine's starting
    # step, as the reference)
    timed = (pl is None and fast and events is None and timed_adaptive.adaptive_candidate(problem, method))
    tpl = None
    if timed and backend == "numba":
        tpl = timed_adaptive.adaptive_plan(problem, method, y0, t0)
    if pl is None and tpl is None and backend == "numba":
        why = fastpath.no_plan_reason(problem, lie, proj)
        if getattr(problem, "time_dependent", False):
            why = (f"{problem.name} depends on t: the generated adaptive loop needs no events, an "
                   f"embedded pair in rk form and the problem's coefficient_source (servo.TimeDependentSystem "
                   f"gives it)")
        fastpath.require_compiled(backend, why)
    if first_step is not None:
        h0, extra = float(first_step), 0
    elif pl is not None and y0.ndim == 1 and (backend != "auto" or not numba_kernels.available()):
        h0, extra = 0.0, 2   # the backend does not depend on h0: the generated loop takes the starting step
    else:
        rhs = problem.rhs if problem.kind == "coadjoint" else problem.f
        f = fastpath.field(pl) if pl is not None and y0.ndim == 1 else functools.partial(rhs, t0)
        h0, extra = initial_step(f, y0, t0, t1, order, rtol, atol, max_step), 2
    work = abs(t1 - t0) / h0 * max(1, y0.size // problem.dim) if h0 > 0.0 else 0.0
    if timed and tpl is None:      # (h0 > 0 here: the engine's starting step; Hairer's h0 is a few steps' size)
        tpl = timed_adaptive.adaptive_plan(problem, method, y0, t0, work / 4.0)
    mode = fastpath.choose_backend(backend, work) if pl is not None else "numpy"
    if backend == "auto" and pl is not None and numba_kernels.available():   # never waits on a compiler
        mode = auto_compile.choose(pl, mode, work, y0.ndim > 1, events is not None, t1, rtol, atol, max_step,
                                  grid=0 if t_eval is None else len(t_eval))
    kinds = auto_compile.loop_kinds(y0.ndim > 1, events is not None, t_eval is not None)
    cold = False   # backend="numba": the generic kernel while the specialised loop compiles (auto_compile)
    if backend == "numba" and pl is not None and tpl is None:
        if y0.ndim == 1 and events is None:
            mode = auto_compile.choose_numba(pl, t1, rtol, atol, max_step, grid=t_eval is not None)
        elif auto_compile.numba_cold(pl, kinds[0]):   # an ensemble or events, no generic kernel: numpy while
            cold = True                                # the loops compile in the background, as under "auto"
            mode = auto_compile.choose(pl, "numba", work, y0.ndim > 1, events is not None, t1, rtol, atol,
                                       max_step, grid=0 if t_eval is None else len(t_eval))
    every = 1 if events is not None else save_every
    if events is not None:   # the events are located as the run goes: a terminal event ends it there
        step = fastpath.step_function(pl, mode) if pl is not None else ref.step
        if pl is not None and proj is not None:
            step = ref.projected(step)
        run = (segmented_run.AdaptiveRun(pl, y0, t0, t1, h0, rtol, atol, max_step, mode, t_eval) if pl is not None
               else ReferenceRun(ref, y0, t0, t1, h0, rtol, atol, max_step, order))
        res = run_with_events(problem, run, y0, t0, events, step, len(tab.b), save_every, max_steps)
        nsteps, nrej = run.nsteps, run.nrej
        if y0.ndim == 1:
            res.peak = run.peak
        res.backend = mode
    elif tpl is not None and y0.ndim > 1:     # an ensemble: one shared step, numpy columns or compiled
        mode = timed_adaptive.choose_ensemble(tpl, backend, work)
        res, nsteps, nrej = timed_adaptive.run_ensemble(tpl, y0, t0, t1, h0, rtol, atol, max_step, every, mode,
                                                      max_steps)
        if backend == "numba" and mode == "numpy":
            res.backend = "numpy" + auto_compile.NUMBA_COLD_NOTE
    elif tpl is not None:
        mode = timed_adaptive.choose_adaptive(tpl, backend, work)
        res, nsteps, nrej = timed_adaptive.run_adaptive(tpl, y0, t0, t1, h0, rtol, atol, max_step, every, mode,
                                                      max_steps)
        res.backend = mode + (auto_compile.NUMBA_COLD_NOTE if backend == "numba" and mode == "numpy" else "")
    elif pl is not None:
        switch = ((backend == "auto" and fastpath.resolve_backend("auto") == "numba")
                  or (backend == "numba" and mode == "numpy"))   # (numba: a fresh machine, choose_numba)
        res, nsteps, nrej = fastpath.run_adaptive(pl, y0, t0, t1, h0, rtol, atol, max_step, every, mode,
                                                  max_steps, switch, t_eval)
        if mode == "generic" and backend == "numba":
            res.backend = auto_compile.NUMBA_GENERIC_LABEL
        elif mode == "numpy" and backend == "numba":
            res.backend += auto_compile.NUMBA_NUMPY_NOTE
    else:
        res, nsteps, nrej = reference_loop(ref, y0, t0, t1, h0, rtol, atol, max_step, every, order,
                                            max_steps)
    if cold and mode == "numpy":   # an ensemble or a run with events, which the generic kernel does not run
        res.backend = "numpy" + auto_compile.NUMBA_COLD_NOTE
    if backend == "numba" and pl is not None and mode == "numba":
        auto_compile.mark_compiled(pl, kinds[0])
    # a projected pair evaluates the first stage of every step after the first anew (no FSAL)
    res.nfev += extra + 1 + (nsteps + nrej) * len(tab.b) + (nsteps if proj is not None else 0)
    res.nrejected = nrej
    if pl is None and tpl is None:
        res.backend = fastpath.reference_label(problem, lie) if fast else "numpy (generic reference)"
    if t_eval is None or (pl is not None and events is None):   # the generated loop (or the generic kernel) filled it
        return res
    # the continuous extension at t_eval: the generated loop's grid (integrators.codegen.dense_source) up to
    # the first step an event changed; the numpy reference (integrators.reference.dense_output) for the rest
    te = t_eval[(t_eval - res.t[-1]) * (t1 - t0) <= 0.0]
    k0, head = 0, None
    if pl is not None and events is not None:
        k0 = _first_event_row(res, events, t1 - t0)
        _, yg = run.grid_output()
        m = int(np.sum((te - res.t[k0]) * (t1 - t0) <= 0.0))   # the grid times up to the last unchanged step
        head, te = yg[:m], te[m:]
    if proj is not None and mode == "numba" and backend == "numba":   # the output points projected compiled too
        # (not under auto: that compile would wait)
        ref.proj_increment = projection_rows.compiled_projection(proj)
    last = res.y[-1]
    tail = res.y[k0:]
    if len(te):
        with np.errstate(all="ignore"):   # a lost trajectory's rows may overflow in the recomputed stages
            tail = dense_output.at_times(ref, res.t[k0:], res.y[k0:], te)
    else:
        tail = tail[:0]
    res.y = tail if head is None else np.concatenate([head, tail], axis=0)
    res.t = t_eval[:len(res.y)]
    _hold_lost(res, last)
    return res


def _first_event_row(res, events, span):
    """The last saved row of an events run before the first step in which a terminal event stopped a
    trajectory (its later rows hold the stopped trajectories' event states, or end at the event time):
    the rows up to it are the generated loop's own accepted steps; the last row when none stopped."""
    evs = list(events) if isinstance(events, (list, tuple)) else [events]
    hits = [t for e, ts in zip(evs, res.t_events) if getattr(e, "terminal", False) for t in np.ravel(ts)]
    if not hits:
        return len(res.t) - 1
    first = min(hits) if span > 0 else max(hits)
    k = int(np.argmax((res.t - first) * span >= 0.0))
    return max(k - 1, 0)


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
