"""A step across a finite-time blow-up, which no other check sees: the third end-of-run check of an adaptive run
(after the two of :mod:`integrators.engine.guard`; ``check=False`` skips it too).

A motion that blows up at t*, |z| ~ c (t* - t)^-a (a servo-constraint's multiplier force can make it), is followed
by an adaptive pair with steps shrinking like t* - t; the run then ends at t* with a collapsed step (status -1).
Unless one step of about t* - t lands past the pole, on the continuation of the solution through infinity (as
x = 1/(t* - t) of x' = x^2 continues negative after t*): no solution of the equations, but finite, its error
estimates small relative to its size, and the run reaches t1 with status 0. Seen with scipy's DOP853 at rtol 1e-12
and with liedyn's rk853 at rtol 1e-5 to 1e-11 on a servo-constrained motion on sp(4) that blows up at
t* = 6.95845 (benchmarks/blow_up.py), ending at |z| ~ 250 after a peak of 7e7 to 6e10.

What is left of it is the peak: the largest |z|_inf of the accepted steps (the loops track it between output points:
``IntegrationResult.peak``; else the saved states), many orders above the states at both ends, reached by a step
many orders below the run's mean step (near a pole the steps shrink with the distance to it). Both are asked for:

    G = zmax / max(|z(t0)|_inf, |z(t_end)|_inf) > GROWTH_LIMIT   and   |h_peak| < STEP_FRACTION |t_end - t0| / nsteps

A smooth excursion, however large (a homoclinic loop from near a small equilibrium and back), is passed with
ordinary steps at its peak and is not taken for a pole. A run judged to have crossed one is cut at its peak
(status -1, the message says where and by how much), as a run that stops at the pole is; ``res.checks["growth"]``
records G for every checked run of one trajectory.

The trajectories of an independent ensemble (:mod:`integrators.engine.batch`) are judged alike, each by the peak
its own loop tracked (:func:`crossings`): one that crossed a pole is cut at its peak as a lost trajectory is
(:mod:`integrators.core.lost`, t_end its peak time), the others run on; ``res.checks["growth"]`` records the largest G
of the trajectories judged. (A shared-step ensemble tracks no peak per trajectory: the shared step collapses at
the first pole, where its trajectory is lost.)
"""

from __future__ import annotations

import numpy as np

from .quantity_scale import absmax_last

#: the peak must exceed the states at both ends by this factor (the crossings seen: 3e5 to 3e8)
GROWTH_LIMIT = 1e4
#: and be reached by a step below this fraction of the run's mean step (the crossings seen: 1e-5 and below)
STEP_FRACTION = 1e-3


def peak_of(res):
    """(zmax, tmax, hmax) of a one-trajectory result: the loop's tracked peak (every accepted step), else the saved
    states' largest (a saved state's step is its interval; scipy's methods); None for an ensemble or an empty run.
    (The saved states are not read when the loop tracked it: on 1001 output points that read is ~60 us, 15% of a
    compiled call on so(5).)"""
    y = np.asarray(res.y)
    if y.ndim != 2 or len(y) < 2:
        return None
    if len(res.peak):
        return tuple(float(v) for v in res.peak)
    with np.errstate(invalid="ignore"):
        norms = np.max(np.abs(y), axis=1)
    k = int(np.nanargmax(norms)) if np.any(np.isfinite(norms)) else 0
    return float(norms[k]), float(res.t[k]), float(res.t[k] - res.t[k - 1]) if k else 0.0


def check(res):
    """The growth check of an adaptive run of one trajectory (in place; the module docstring): records G in
    ``res.checks["growth"]`` and, when the run crossed a pole, cuts it at its peak with status -1. A run whose peak
    lies past its last reported state (it stopped at the pole: with an output grid, after its last grid time) is
    left as it is, G unrecorded."""
    pk = peak_of(res)
    if pk is None or res.nsteps < 1:
        return res
    zmax, tmax, hmax = pk
    span = float(res.t[-1] - res.t[0])
    if (tmax - res.t[-1]) * span > 0.0:   # the peak is past the reported states: a run that stopped at it
        return res                         # (a collapsed step at the pole, its tail after the last grid time)
    y = np.asarray(res.y)
    ends = max(float(np.max(np.abs(y[0]))), float(np.max(np.abs(y[-1]))))
    if not (np.isfinite(zmax) and np.isfinite(ends)):
        return res
    G = zmax / max(ends, 1e-300)
    res.checks["growth"] = G
    mean = abs(span) / res.nsteps
    if not (G > GROWTH_LIMIT and abs(hmax) < STEP_FRACTION * mean and tmax != res.t[-1]):
        return res
    keep = int(np.sum((res.t - tmax) * span <= 0.0))
    later = f" (later: {res.message})" if res.status == -1 else ""
    _cut(res, max(keep, 1), tmax, span)
    res.status = -1
    res.message = (f"the state reached |z| = {zmax:.3g} at t = {tmax:.8g}, {G:.3g} times its size at both ends of "
                   f"the run, by a step of {abs(hmax):.3g} (the run's mean step {mean:.3g}): the motion blows up "
                   f"there and a step went across the singularity, onto a continuation that solves nothing; the "
                   f"solution is kept up to t = {res.t[-1]:.8g} (check=False keeps the whole run, for a motion "
                   f"that does pass through so large a state){later}")
    return res


def crossings(peaks, starts, ends, t0, t_end, nsteps, status):
    """The growth check of the trajectories of an independent ensemble (flat, B of them): ``peaks`` (B, 3) the
    (zmax, tmax, hmax) each loop tracked, ``starts`` and ``ends`` (B, n) its states at t0 and t_end (B,),
    ``nsteps`` (B,) its accepted steps, ``status`` (B,) (a trajectory lost on the way, status -1, is not judged:
    it stopped at its pole or before) -> (crossed (B,) bool, G (B,) the growth factor, NaN where not judged): the
    test of :func:`check` per trajectory, G > GROWTH_LIMIT and |hmax| < STEP_FRACTION |t_end - t0| / nsteps."""
    peaks = np.asarray(peaks, dtype=float).reshape(-1, 3)
    zmax, tmax, hmax = peaks.T
    with np.errstate(all="ignore"):
        size = np.maximum(absmax_last(starts), absmax_last(ends))   # (a short last axis: folded, ~20x faster)
        G = zmax / np.maximum(size, 1e-300)
        judged = (np.asarray(status) != -1) & (np.asarray(nsteps) >= 1) & (size < np.inf) & (zmax < np.inf)
        G[~judged] = np.nan
        crossed = judged & (G > GROWTH_LIMIT)
        if crossed.any():   # (the step test only where the growth is there: 10^4 trajectories, ~0.1 ms)
            mean = np.abs(np.asarray(t_end, dtype=float) - t0) / np.maximum(nsteps, 1)
            crossed &= (np.abs(hmax) < STEP_FRACTION * mean) & (tmax != t_end)
    return crossed, G


def _cut(res, j, tmax, span):
    """Keep the first j saved states and the events up to tmax."""
    res.t, res.y = res.t[:j], res.y[:j]
    if res.t_events is not None:
        keep = [(np.asarray(te) - tmax) * span <= 0.0 for te in res.t_events]
        res.t_events = [np.asarray(te)[k] for te, k in zip(res.t_events, keep)]
        if res.y_events is not None:
            res.y_events = [np.asarray(ye)[k] for ye, k in zip(res.y_events, keep)]
        if res.event_index is not None:
            res.event_index = [np.asarray(ix)[k] for ix, k in zip(res.event_index, keep)]
