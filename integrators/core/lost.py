"""What an ensemble run says about the trajectories it lost: one message and two result attributes,
shared by the shared-step ensembles (the adaptive pairs with ``ensemble="shared"`` and the fixed-step
methods, :mod:`integrators.engine.adaptive`, :mod:`integrators.backends.fastpath`,
:mod:`integrators.engine.driver`) and the independent ones (:mod:`integrators.engine.batch`).

Per trajectory (flat index over the batch axes) a status: 0 it reached t1, -1 it was lost (its
state overflowed or became NaN, or its own error estimate asked for a step below 10 eps |t|), -2 the
step budget ran out before t1, -3 (an independent ensemble) it stepped across the pole of a finite-time blow-up
and is cut at its peak (:mod:`integrators.engine.growth`); and ``t_end``, the time it reached. A lost trajectory is frozen at its
last finite state, which the later saved rows of a shared ensemble repeat; the others go on to t1.
:func:`mark` puts on the result

* ``status`` -1 and a message naming how many trajectories stopped early, why, the first of them by
  flat index and its time, when any did (the run lost trajectories);
* ``t_end`` (the batch shape): the time each trajectory reached;
* ``failed`` (1-d int array): the flat indices of those that did not reach t1.
"""

from __future__ import annotations

import numpy as np

LOST, SPENT, CROSSED = -1, -2, -3

#: why a trajectory of an independent ensemble is cut at its peak (:func:`integrators.engine.growth.crossings`)
CROSSED_WHY = ("a step went across the singularity of a finite-time blow-up (the state grew more than "
               "integrators.engine.growth.GROWTH_LIMIT times its size at both ends, by a step far below the "
               "trajectory's mean step; t_end is its peak): its later grid rows hold its last state before the "
               "peak, without an output grid its end row is NaN")


def stopped_message(status, t_end, max_steps=None, lost_why=None):
    """The message of a run whose per-trajectory ``status`` (flat) has non-zero entries (or "reached the
    end of t_span" when it has none); ``lost_why`` overrides the reason given for status -1."""
    status = np.asarray(status).ravel()
    t_end = np.asarray(t_end, dtype=float).ravel()
    failed = np.flatnonzero(status != 0)
    if failed.size == 0:
        return "reached the end of t_span"
    b = int(failed[0])
    lost, spent, crossed = (int(np.sum(status == v)) for v in (LOST, SPENT, CROSSED))
    why = []
    if lost:
        why.append(f"{lost} because " + (lost_why or "the step size fell below 10 eps |t| (overflow, NaN or a "
                                                      "singularity)"))
    if spent:
        why.append(f"{spent} because the step budget of {max_steps} accepted steps was spent (max_steps)")
    if crossed:
        why.append(f"{crossed} because {CROSSED_WHY}")
    return (f"{failed.size} of {status.size} trajectories stopped early: {'; '.join(why)}; the first at flat "
            f"index {b}, t = {t_end[b]:.6g}; their last finite states are kept (t_end says where, failed "
            f"lists them)")


def mark(res, status, t_end, batch_shape, max_steps=None, lost_why=None, later=None):
    """Set ``res.t_end`` (``batch_shape``), ``res.failed`` and, when a trajectory stopped early, status -1
    and :func:`stopped_message` (followed by ``later``, e.g. what the others did). Returns res."""
    status = np.asarray(status).ravel()
    res.t_end = np.asarray(t_end, dtype=float).reshape(batch_shape)
    res.failed = np.flatnonzero(status != 0)
    if res.failed.size:
        res.status = -1
        res.message = stopped_message(status, t_end, max_steps, lost_why) + (f"; {later}" if later else "")
    return res


def hold_after(t, ys, t_end, frozen, states):
    """The rows of ys (K, B, n) (flat batch) at times t (K,) past ``t_end[b]`` (in the direction of t) set
    to ``states[b]`` for every trajectory b with ``frozen[b]`` (in place; e.g. after dense output, whose
    interpolant from a frozen trajectory's repeated rows would move it). Returns ys."""
    direction = 1.0 if len(t) < 2 or t[-1] >= t[0] else -1.0
    for b in np.flatnonzero(frozen):
        ys[direction * (t - t_end[b]) > 0.0, b] = states[b]
    return ys


def report_shared(res, alive, t_end, run_status, t, batch_shape, max_steps=None, lost_why=None):
    """The end of a shared-step ensemble run (in place): the trajectories not ``alive`` (flat (B,) bool)
    were lost at ``t_end``; the others stopped with the run at t, having reached t1 (``run_status`` 0)
    or spent the step budget (-2). Without a lost trajectory the run's status and message stay as
    they are (``t_end`` and ``failed`` are still set). Returns res."""
    alive = np.asarray(alive, dtype=bool).ravel()
    mine = 0 if run_status == 0 else SPENT if run_status == SPENT else LOST
    status = np.where(alive, mine, LOST)
    t_end = np.where(alive, float(t), np.asarray(t_end, dtype=float).ravel())
    if alive.all():
        res.t_end = t_end.reshape(batch_shape)
        res.failed = np.flatnonzero(status != 0)
        return res
    later = "the later saved rows repeat them"
    if alive.any():
        later += ("; the others reached the end of t_span" if mine == 0 else
                  f"; the others stopped at t = {float(t):.6g}" if mine == LOST else "")
    return mark(res, status, t_end, batch_shape, max_steps, lost_why, later)

#: why a trajectory of a shared-step ensemble is lost (:mod:`integrators.engine.freeze`)
SHARED_WHY = ("the state overflowed or became NaN, or the trajectory's own error estimate asked for a step below "
              "10 eps |t| (a singularity)")

#: why a fixed-step ensemble loses a trajectory
FIXED_WHY = "the solution overflowed or became NaN (reduce h)"
