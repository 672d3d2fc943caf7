"""Group reconstruction g' = g w(t) from body velocities sampled on a time grid.

``reconstruct(group, w, g0, t, method="rkmk4", substeps=1)``

* ``group``: ``liegroups.SO3``, ``SE2`` or ``SE3`` (or the name "SO3"/"SE2"/"SE3").
* ``w``: body velocities in algebra coordinates, either an array of shape (K, ..., dim) sampled at
  the K times ``t`` (e.g. ``problem.velocity(result.y)`` of an ``integrate`` result, with
  ``t = result.t``), or a callable ``w(t) -> (..., dim)``.
* ``g0``: (..., N, N) initial group elements (broadcast against the batch axes of w).
* ``t``: (K,) increasing or decreasing times.

Returns an :class:`IntegrationResult` whose ``y`` has shape (K, ..., N, N) with ``y[k] = g(t[k])``
and ``constraints["group_defect"]`` = ``group.defect(y)`` (max |R^T R - I|, |det R - 1| and the
homogeneous row).

Each step is g_{n+1} = g_n exp(hat Theta_n) with Theta_n from a Lie-group method (RKMK, CF4, CG3;
Munthe-Kaas 1999; Celledoni, Marthinsen and Owren 2003), so g stays in the group to round-off for any
number of steps. The increment g_n (exp(hat Theta) - I) is computed without cancellation and added
with Kahan's compensated summation, so the round-off random walk of the defect grows like
eps h sqrt(N). Sampled velocities are interpolated by a cubic spline (error O(h^4), matching the
order of rkmk4/cf4) to give the stage values between samples; a callable is evaluated exactly.
``substeps`` splits every interval [t_k, t_{k+1}] into that many equal method steps.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.interpolate

from liegroups import SE2, SE3, SO3

from .errors import IntegrationInputError
from .methods import get_method, preserved
from .problems import ReconstructionProblem
from .result import IntegrationResult
from .stepping import make_stepper


def _group(group):
    if isinstance(group, str):
        try:
            return {"SO3": SO3, "SE2": SE2, "SE3": SE3}[group.upper()]
        except KeyError:
            raise IntegrationInputError(f"unknown group {group!r}; use SO3, SE2 or SE3") from None
    return group


def velocity_function(w, t):
    """A callable w(t) from samples (K, ..., dim) at times t (cubic spline; linear for K = 2)."""
    t = np.asarray(t, dtype=float)
    w = np.asarray(w, dtype=float)
    if w.shape[0] != t.shape[0]:
        raise IntegrationInputError(f"w has {w.shape[0]} samples but t has {t.shape[0]} times")
    if t.shape[0] < 2:
        raise IntegrationInputError("reconstruction needs at least two sample times")
    order = np.argsort(t)
    ts = t[order]
    if np.any(np.diff(ts) <= 0):
        raise IntegrationInputError("sample times t must be strictly monotone (found a repeated time)")
    if len(ts) == 2:
        return scipy.interpolate.interp1d(ts, w[order], axis=0, fill_value="extrapolate")
    return scipy.interpolate.CubicSpline(ts, w[order], axis=0, bc_type="not-a-knot")


def reconstruct(group, w, g0, t, method="rkmk4", substeps=1):
    """Integrate g' = g w(t) on the matrix group from g(t[0]) = g0; see the module docstring."""
    G = _group(group)
    t = np.asarray(t, dtype=float)
    if t.ndim != 1 or t.shape[0] < 2:
        raise IntegrationInputError(f"t must be a 1-d array of at least two times, got shape {t.shape}")
    if callable(w):
        wf = w
    else:
        w = np.asarray(w, dtype=float)
        if w.shape[-1] != G.dim:
            raise IntegrationInputError(f"w must have last axis {G.dim} (the dimension of the Lie algebra of "
                                        f"{G.name}), got shape {w.shape}")
        bad = np.argwhere(~np.isfinite(w))
        if bad.size:
            raise IntegrationInputError(f"w must be finite: sample {tuple(int(v) for v in bad[0])} is "
                                        f"{w[tuple(bad[0])]}")
        wf = velocity_function(w, t)
    problem = ReconstructionProblem(G, wf)
    m = get_method(method, problem)
    g0 = np.asarray(g0, dtype=float)
    N = G.matrix_size
    if g0.shape[-2:] != (N, N):
        raise IntegrationInputError(f"g0 must be (..., {N}, {N}) elements of {G.name}, got shape {g0.shape}")
    defect = float(np.max(G.defect(g0)))
    if defect > 1e-8:
        raise IntegrationInputError(f"g0 is not in {G.name}: group defect {defect:.3e} > 1e-8")
    start = time.perf_counter()
    stepper = make_stepper(m, problem)
    w0 = np.asarray(wf(t[0]))
    g = np.broadcast_to(g0, w0.shape[:-1] + (N, N)).copy()
    ys = np.empty((len(t),) + g.shape)
    ys[0] = g
    s = int(substeps)
    e = np.zeros_like(g)  # Kahan compensation: g + e is the state
    for k in range(len(t) - 1):
        h = (t[k + 1] - t[k]) / s
        for i in range(s):
            yk = stepper.delta(t[k] + i * h, g, h) + e
            gn = g + yk
            e = (g - gn) + yk
            g = gn
        ys[k + 1] = g + e
    res = IntegrationResult(t=t.copy(), y=ys, nsteps=(len(t) - 1) * s, method=m.name,
                            nfev=(len(t) - 1) * s * stepper.fevals, message="reached the last sample time",
                            preserves=preserved(m, problem))
    res.constraints["group_defect"] = G.defect(ys)
    res.wall_time = time.perf_counter() - start
    return res
