"""The result of an integration (shaped like scipy's OdeResult) with invariant diagnostics."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class IntegrationResult:
    """Solution of ``integrate`` / ``reconstruct``.

    Attributes
    ----------
    t : (K,) array of output times.
    y : (K, ..., dim) array; ``y[k]`` is the state at ``t[k]`` (for reconstruction (K, ..., N, N)).
    status : int
        0 reached the end, 1 a terminal event stopped every trajectory, -1 failure.
    message : str
    nfev : int
        Right-hand-side (or generator) evaluations, counted once per batched call.
    nsteps : int
    wall_time : float (seconds, time.perf_counter)
    invariants, constraints : dict name -> (K, ...) array of the recorded quantity at each t[k].
    method : str
    h : float or None (the step of fixed-step methods)
    preserves : frozenset of what the method keeps on this problem
    t_events, y_events : lists (one entry per event function) of arrays of event times (n_e,) and
        states (n_e, dim); ``event_index`` gives the batch index of each (n_e, batch_ndim).
    """

    t: np.ndarray
    y: np.ndarray
    status: int = 0
    message: str = ""
    nfev: int = 0
    nsteps: int = 0
    wall_time: float = 0.0
    invariants: dict = field(default_factory=dict)
    constraints: dict = field(default_factory=dict)
    method: str = ""
    h: float | None = None
    preserves: frozenset = frozenset()
    t_events: list | None = None
    y_events: list | None = None
    event_index: list | None = None

    @property
    def success(self):
        return self.status >= 0

    def drift(self, name):
        """max_k |I(t_k) - I(t_0)| / |I(t_0)| of invariant ``name`` (per trajectory); absolute
        (denominator 1) where |I(t_0)| < 1e-12, e.g. for a constraint value 0."""
        v = self.invariants[name]
        d = np.abs(v[0])
        return np.max(np.abs(v - v[0]), axis=0) / np.where(d < 1e-12, 1.0, d)

    def max_residual(self, name):
        """max_k |c(t_k)| of constraint ``name`` (per trajectory)."""
        return np.max(np.abs(self.constraints[name]), axis=0)


def record(problem, ys):
    """Evaluate the problem's invariants and constraints on the saved states ys (K, ..., dim)."""
    inv = {k: np.asarray(f(ys), dtype=float) for k, f in getattr(problem, "invariants", {}).items()}
    con = {k: np.asarray(f(ys), dtype=float) for k, f in getattr(problem, "constraints", {}).items()}
    return inv, con
