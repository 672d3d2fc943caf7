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
number of steps. Sampled velocities are interpolated by a cubic spline (error O(h^4), matching the
order of rkmk4/cf4) to give the stage values between samples; a callable is evaluated exactly (one
call per distinct stage time, or one call for all of them with ``vectorized=True``: then ``w`` takes
an array of times (M,) and returns (M, ..., dim)). ``substeps`` splits every interval
[t_k, t_{k+1}] into that many equal method steps.

Two paths compute the same steps (they agree to round-off; tested):

* ``fast=True`` (default). The generator w(t) does not depend on g, so every stage velocity, every
  Theta_n and every step factor E_n = exp(hat Theta_n) is computed for all steps at once (arrays over
  the step axis; closed-form exp of SO(3), SE(2), SE(3) written as D_n = E_n - I without
  cancellation, ``group.expm1``). Only the product g_n = g_0 E_0 ... E_{n-1} is sequential; it is an
  inclusive prefix product, evaluated in log2(steps) rounds of the Hillis-Steele scan on the
  increments, (I + A)(I + B) = I + (A + B + A B). Each output depends on at most log2(steps) + 1
  rounded combinations, and an increment of the first rounds is of size h |w|, so the round-off of g
  (and its group defect) grows like eps log2(steps) instead of eps sqrt(steps); no projection and no
  compensation are needed. The homogeneous row of SE(2) / SE(3) stays exactly (0, ..., 0, 1).
  Memory is bounded by scanning at most :data:`CHUNK_MATRICES` step matrices at a time.
* ``fast=False``: the generic stepper of :mod:`integrators.reference.stepping` one step at a time, the
  increment g_n (exp(hat Theta) - I) added with Kahan's compensated summation (the reference).
"""

from __future__ import annotations

import time

import numpy as np
import scipy  # scipy.interpolate loads on first use (scipy's own lazy submodules)
from collections.abc import Callable
from typing import Any

import liegroups
from numpy.typing import ArrayLike

from liegroups import SE2, SE3, SO3

from ..core.validation import finite_array
from ..core.errors import IntegrationInputError
from ..core.summation import compensated_add
from ..methods import Method, RungeKutta, get_method, preserved
from ..core.problems import ReconstructionProblem
from ..core.result import IntegrationResult
from ..geometry.spaces import GroupSpace, dexpinv_series
from ..reference.runge_kutta import lincomb, stages
from ..reference.stepping import make_stepper

#: the fast path scans at most this many (N, N) step matrices (steps x batch) at a time
CHUNK_MATRICES = 1 << 18


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


def reconstruct(group: str | liegroups.matrix_groups.SO3Group | liegroups.matrix_groups.SE2Group
                | liegroups.matrix_groups.SE3Group, w: Callable[[Any], ArrayLike] | ArrayLike, g0: ArrayLike, t: ArrayLike, method: str | Method = "rkmk4", substeps: int = 1, vectorized: bool = False,
                fast: bool = True) -> IntegrationResult:
    """Integrate g' = g w(t) on the matrix group from g(t[0]) = g0; see the module docstring."""
    G = _group(group)
    t = np.asarray(t, dtype=float)
    if t.ndim != 1 or t.shape[0] < 2:
        raise IntegrationInputError(f"t must be a 1-d array of at least two times, got shape {t.shape}")
    if not np.all(np.isfinite(t)):
        raise IntegrationInputError(f"t must be finite, got {t[~np.isfinite(t)][0]} at index "
                                    f"{int(np.argmax(~np.isfinite(t)))}")
    sampled = not callable(w)
    if sampled:
        w = np.asarray(w, dtype=float)
        if w.shape[-1] != G.dim:
            raise IntegrationInputError(f"w must have last axis {G.dim} (the dimension of the Lie algebra of "
                                        f"{G.name}), got shape {w.shape}")
        bad = np.argwhere(~np.isfinite(w))
        if bad.size:
            raise IntegrationInputError(f"w must be finite: sample {tuple(int(v) for v in bad[0])} is "
                                        f"{w[tuple(bad[0])]}")
        wf = velocity_function(w, t)
        vectorized = True  # the spline takes an array of times
    else:
        wf = w
    problem = ReconstructionProblem(G, wf)
    m = get_method(method, problem)
    g0 = finite_array(g0, "g0")
    N = G.matrix_size
    if g0.shape[-2:] != (N, N):
        raise IntegrationInputError(f"g0 must be (..., {N}, {N}) elements of {G.name}, got shape {g0.shape}")
    defect = float(np.max(G.defect(g0)))
    if defect > 1e-8:
        raise IntegrationInputError(f"g0 is not in {G.name}: group defect {defect:.3e} > 1e-8")
    if isinstance(substeps, bool) or int(substeps) != substeps or substeps < 1:
        raise IntegrationInputError(f"substeps must be a positive integer, got {substeps!r}")
    s = int(substeps)
    start = time.perf_counter()
    if fast:
        ys, nfev = _reconstruct_fast(G, m, wf, vectorized, g0, t, s)
    else:
        ys, nfev = _reconstruct_generic(G, m, problem, wf, g0, t, s)
    res = IntegrationResult(t=t.copy(), y=ys, nsteps=(len(t) - 1) * s, method=m.name, nfev=nfev,
                            message="reached the last sample time", preserves=preserved(m, problem))
    res.constraints["group_defect"] = G.defect(ys)
    res.wall_time = time.perf_counter() - start
    return res


def _reconstruct_generic(G, m, problem, wf, g0, t, s):
    """One step at a time with the generic stepper; Kahan-compensated increments (the reference path)."""
    N = G.matrix_size
    stepper = make_stepper(m, problem)
    w0 = np.asarray(wf(t[0]))
    g = np.broadcast_to(g0, np.broadcast_shapes(w0.shape[:-1], g0.shape[:-2]) + (N, N)).copy()
    ys = np.empty((len(t),) + g.shape)
    ys[0] = g
    e = np.zeros_like(g)  # Kahan compensation: g + e is the state
    for k in range(len(t) - 1):
        h = (t[k + 1] - t[k]) / s
        for i in range(s):
            g, e = compensated_add(g, e, stepper.delta(t[k] + i * h, g, h))
        ys[k + 1] = g + e
    return ys, (len(t) - 1) * s * stepper.fevals


def _velocities(wf, times, vectorized, batch_ndim_hint=None):
    """w at every time of ``times`` (M,) as an (M, ..., dim) array; IntegrationInputError if not finite."""
    if vectorized:
        W = np.asarray(wf(times), dtype=float)
        if W.ndim == 0 or W.shape[0] != times.shape[0]:
            raise IntegrationInputError(f"a vectorized w(t) must return shape (M, ..., dim) for M = "
                                        f"{times.shape[0]} times, got {W.shape}")
    else:
        W = np.array([wf(x) for x in times.tolist()], dtype=float)
    bad = ~np.isfinite(W)
    if np.any(bad):
        j = int(np.argmax(np.any(bad.reshape(W.shape[0], -1), axis=1)))
        raise IntegrationInputError(f"w(t) must be finite: w({times[j]:.17g}) has a non-finite entry")
    return W


def _step_increments(G, m, space, Wc, H):
    """D_n = exp(hat Theta_n) - I for every step at once (RKMK), or the product of the update's
    exponentials minus I (commutator-free), from the stage velocities Wc[c] (S, ..., dim), steps H."""
    if isinstance(m, RungeKutta):   # the stage velocities are sampled: the increment reads them by node
        def inc(ci, theta):
            xi = H * Wc[ci]
            return xi if theta is None or m.terms <= 1 else dexpinv_series(space.bracket, theta, xi, m.terms)
        return G.expm1(lincomb(m.b, stages(m.A, m.c, 0.0, 1.0, inc)))
    D = None  # commutator-free: g_{n+1} = g_n exp(h x_1) exp(h x_2) ..., x_j = sum_i alpha_ji w(t + c_i h)
    Fs = [Wc[c] for c in m.c]
    for coeffs in m.update:
        x = lincomb(coeffs, Fs)
        if x is not None:
            E = G.expm1(H * x)
            D = E if D is None else D + E + D @ E
    return D


def prefix_increments(D):
    """In place: D[j] <- (I + D[0]) (I + D[1]) ... (I + D[j]) - I for j along axis 0 (Hillis-Steele
    scan, log2(len(D)) rounds of (I + A)(I + B) - I = A + B + A B; no cancellation of I)."""
    k, n = 1, D.shape[0]
    while k < n:
        A = D[:-k]
        D[k:] = A + D[k:] + A @ D[k:]
        k *= 2
    return D


def _reconstruct_fast(G, m, wf, vectorized, g0, t, s):
    """All steps' increments at once, then a prefix-product scan per chunk of whole intervals."""
    N = G.matrix_size
    K = len(t)
    H = np.repeat(np.diff(t) / s, s)  # (S,) step of every method step
    T = np.repeat(t[:-1], s) + np.tile(np.arange(s), K - 1) * H  # (S,) start time of every step
    cs = sorted(set(float(c) for c in m.c))
    ends = {0.0, 1.0} & set(cs)
    nfev = 0
    Wc = {}
    if ends:  # w at the step grid t_0 < ... < t_S serves both c = 0 and c = 1
        grid = np.append(T, t[-1])
        Wg = _velocities(wf, grid, vectorized)
        nfev += len(grid)
        Wc[0.0], Wc[1.0] = Wg[:-1], Wg[1:]
    for c in cs:
        if c not in Wc:
            Wc[c] = _velocities(wf, T + c * H, vectorized)
            nfev += len(T)
    any_w = next(iter(Wc.values()))
    batch = np.broadcast_shapes(any_w.shape[1:-1], g0.shape[:-2])
    Hb = H.reshape((-1,) + (1,) * (any_w.ndim - 1))
    space = GroupSpace(G, wf)
    ys = np.empty((K,) + batch + (N, N))
    g = np.broadcast_to(g0, batch + (N, N))
    ys[0] = g
    per = max(1, CHUNK_MATRICES // max(1, s * int(np.prod(batch, dtype=np.int64))))  # intervals per chunk
    for k0 in range(0, K - 1, per):
        k1 = min(K - 1, k0 + per)
        sl = slice(k0 * s, k1 * s)
        D = _step_increments(G, m, space, {c: W[sl] for c, W in Wc.items()}, Hb[sl])
        D = np.broadcast_to(D, D.shape[:1] + batch + (N, N)).copy()
        prefix_increments(D)
        P = D[s - 1::s]  # (intervals, batch, N, N): product over the chunk up to each sample time
        ys[k0 + 1:k1 + 1] = g + g @ P
        g = ys[k1]
    return ys, nfev
