"""Events of the adaptive pairs located as the run goes: the run (the numpy reference
:class:`integrators.engine.reference_run.ReferenceRun` or the generated
:class:`integrators.backends.segmented_run.AdaptiveRun`) advances by segments of accepted steps and each
segment's steps are scanned by :class:`integrators.engine.events.EventTracker`, so a terminal event ends
the run where it happens.
"""

from __future__ import annotations

import numpy as np

from ..backends import fastpath
from ..core.result import IntegrationResult
from .events import EventTracker


class _EventStepper:
    def __init__(self, step, fevals):
        self.step, self.fevals = step, fevals


#: the first segment of a run with events (accepted steps); each next one is twice as long, up to SEGMENT_MAX
SEGMENT_FIRST = 8
SEGMENT_MAX = 4096


def run_with_events(problem, run, y0, t0, events, step, fevals, save_every, max_steps):
    """Advance ``run`` (:class:`integrators.engine.reference_run.ReferenceRun` or :class:`integrators.backends.segmented_run.AdaptiveRun`) by
    segments of accepted steps, 8, 16, ... up to SEGMENT_MAX, and scan each accepted step for sign changes
    of the events (:class:`integrators.engine.events.EventTracker`, located on the method's one-step map)
    right after its segment: when a terminal event has stopped every trajectory the run ends there, so a
    run to a terminal event costs about what a run to the event time costs (at most the rest of its last
    segment more), whatever t_span says. Saves every ``save_every``-th step, the last and the event state."""
    tracker = EventTracker(events, problem, _EventStepper(step, fevals), t0, y0)
    keep_t, keep_y = [t0], [y0]
    t_prev, y_prev, y_out = t0, y0, y0
    k = 0
    stopped = False
    status = -2
    budget = SEGMENT_FIRST
    while status == -2 and run.nsteps < max_steps and not stopped:
        status, ts, ys = run.advance(min(budget, max_steps - run.nsteps))
        for t_new, y_raw in zip(ts, ys):
            k += 1
            y_new = tracker.after_step(t_prev, y_prev, t_new, y_raw, t_new - t_prev)
            t_prev, y_prev, y_out = t_new, y_raw, y_new
            last = status == 0 and t_new == ts[-1]
            if k % save_every == 0 or last or tracker.all_stopped():
                keep_t.append(t_new)
                keep_y.append(y_new)
            if tracker.all_stopped():
                stopped = True
                break
        budget = min(2 * budget, SEGMENT_MAX)
    if stopped:
        st, msg = 1, "a terminal event stopped every trajectory"
    elif status == 0:
        st, msg = 0, "reached the end of t_span"
    else:
        st, msg = -1, fastpath.stop_message(-1 if status == -1 else -2, run.t, max_steps)
        zf = run.state()
        if np.all(np.isfinite(zf)) and keep_t[-1] != run.t:
            keep_t.append(run.t)
            keep_y.append(zf)
    if not stopped and keep_t[-1] != t_prev:   # the last accepted step is always kept
        keep_t.append(t_prev)
        keep_y.append(y_out)
    res = IntegrationResult(t=np.array(keep_t), y=np.array(keep_y), status=st, message=msg, nsteps=run.nsteps)
    tracker.finish(res)
    if res.status == 1 and np.ndim(y0) == 1:
        res.t = np.append(res.t[:-1], tracker.stop_time)
        res.y = np.concatenate([res.y[:-1], tracker.stop_state[None]], axis=0)
    return res
