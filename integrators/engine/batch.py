"""Independent ensembles of the adaptive pairs: every trajectory takes its own steps.

``integrate(problem, Y0 (B, ..., dim), ..., method="rkmk853", ensemble="independent")`` runs each
trajectory with its own first step (Hairer's starting step of its own y0), its own step sizes and
rejections: the controller of :func:`integrators.codegen.programs.adaptive_source` (Hairer, Norsett and
Wanner, *Solving ODEs I*, II.4, as in solve_ivp) applied per trajectory, so each final state is the
one the single run from that y0 gives (to round-off), and an RKMK pair keeps every trajectory's
Casimirs to round-off as its single run does (a projected pair by projecting every accepted step
onto the level set of its own initial Casimirs, :mod:`integrators.codegen.projection`). Saved: the end
points, ``t = [t0, t1]``, ``y`` of shape (2, B, ..., dim) (the step sequences differ, there is no
common time grid), or with ``t_eval`` (an output grid, also from h / steps) the states at those times
from each trajectory's own accepted steps and the pair's continuous extension (as its single run's
dense output: equal to round-off): on the numpy engine
:func:`integrators.reference.dense_output.extension`, on the compiled one each trajectory's loop fills
its column (:mod:`integrators.codegen.dense_source`). The result also carries ``t_end``,
``nsteps_each`` and ``nrejected_each`` per trajectory and ``failed`` (the flat indices of those that stopped before t1,
:mod:`integrators.core.lost`; their later grid rows hold their last finite state); ``nsteps``,
``nrejected`` and ``nfev`` are those of the longest run.

Engines:

* numpy: the stages of :mod:`integrators.codegen.writer` written once for arrays of shape (B,) (one ufunc
  call per term for the whole ensemble) and a vectorized controller: each trajectory has its own t,
  h and error; an attempt is accepted or rejected per trajectory (masks), and trajectories that
  reached t1 leave the arrays (the active set is compacted). The stages are those of
  :mod:`integrators.codegen.batchgen` (on so(3) the truncated dexp^-1 series summed with two brackets).
* numba: :func:`integrators.backends.batch_kernels.adaptive_independent` (a parallel loop over trajectories,
  each running the compiled one-trajectory loop; on so(3) RKMK pairs and the ambient pairs vectorized lanes, refilled as
  trajectories finish; with an output grid always the one-trajectory loop, which fills it).
* generic (backend "auto" or "numba" while the specialised kernel of a structure is not compiled:
  :func:`integrators.backends.auto_compile.choose_independent`): :func:`integrators.backends.generic_ensemble.run`, a
  parallel loop over the trajectories each running the generic compiled loop (the structure as data, compiled once
  per machine); result.backend :data:`integrators.backends.auto_compile.GENERIC_LABEL`.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..backends import auto_compile, batch_kernels, fastpath, generic_ensemble, numba_kernels
from ..codegen import batchgen, linear_projection, projection
from ..reference import genhelpers
from ..reference.pair import ReferencePair
from . import growth
from .starting_step import check_controls, initial_step
from ..reference import dense_output
from ..core import controller
from ..core.summation import compensated_add
from ..core.errors import IntegrationInputError
from ..core.result import IntegrationResult
from ..core import lost

ENSEMBLE_MODES = ("shared", "independent")

_CACHE = {}

#: the numpy engine integrates this many trajectories at a time (arrays of a few 10 kB: in cache)
CHUNK = 2048
#: without first_step, an ensemble of more rows estimates the work that chooses its backend from Hairer's starting
#: step of this many of them (numpy); the compiled kernels then compute each trajectory's own (H0 = 0 there), the
#: numpy paths all rows' here: 10^4 states on se(3) 2.7 ms in numpy of a 33 ms call
START_SAMPLE = 256


def check_mode(ensemble):
    """``ensemble`` must be one of ENSEMBLE_MODES (IntegrationInputError otherwise)."""
    if ensemble not in ENSEMBLE_MODES:
        raise IntegrationInputError(f"ensemble must be one of {', '.join(map(repr, ENSEMBLE_MODES))} "
                                    f"(one step sequence for the whole ensemble, or each trajectory its own); "
                                    f"got {ensemble!r}")


def _functions(pl):
    key = (pl.st.key, pl.tab.name, pl.lie, pl.terms, None if pl.proj is None else pl.proj.key)
    fns = _CACHE.get(key)
    if fns is None:
        env = dict(genhelpers.ARRAY, np=np)
        exec(compile(batchgen.attempt_source(pl.st, pl.tab, pl.lie, pl.terms, pl.proj), "<liedyn ensemble attempt>",
                     "exec"), env)
        fns = _CACHE[key] = (env["first"], env["attempt"])
    return fns


class _Grid:
    """The output grid of an independent ensemble (module docstring): each trajectory's states at the grid
    times inside its accepted steps, from the pair's continuous extension of that step
    (:func:`integrators.reference.dense_output.extension`; a grid time at the step's end takes the
    step's state), evaluated in batches of at most FLUSH points."""

    FLUSH = 1 << 15

    def __init__(self, te, B, n, dense, t0):
        self.te, self.dense = te, dense
        self.u = te if te[-1] >= te[0] else -te
        self.direction = 1.0 if te[-1] >= te[0] else -1.0
        self.Y = np.empty((len(te), B, n))
        self.next = np.zeros(B, np.int64)         # per trajectory: its first grid point not yet filled
        at0 = te == t0
        self.next[:] = int(np.sum(at0))
        self.parts, self.size = [], 0

    def start(self, Z):
        self.Y[: self.next[0]] = Z

    def step(self, rows, t_prev, hs, t_new, zs, zn):
        """The accepted steps of the trajectories ``rows`` (original indices) from (t_prev, zs (m, n)) of
        size hs to (t_new, zn)."""
        gi = self.next[rows]
        gk = np.searchsorted(self.u, self.direction * t_new, side="right")
        cnt = gk - gi
        has = cnt > 0
        if not has.any():
            return
        rows, gi, cnt, t_prev, hs, t_new, zs, zn = (v[has] for v in (rows, gi, cnt, t_prev, hs, t_new, zs, zn))
        self.next[rows] = gi + cnt
        r = np.repeat(np.arange(len(rows)), cnt)
        g = np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt) + gi[r]
        at_end = self.te[g] == t_new[r]
        self.Y[g[at_end], rows[r[at_end]]] = zn[r[at_end]]
        inner = ~at_end
        if inner.any():
            r, g = r[inner], g[inner]
            self.parts.append((rows[r], g, zs[r], t_prev[r], hs[r], (self.te[g] - t_prev[r]) / hs[r]))
            self.size += len(r)
            if self.size >= self.FLUSH:
                self.flush()

    def flush(self):
        if not self.parts:
            return
        b, g, zs, tp, hs, sv = (np.concatenate(v) for v in zip(*self.parts))
        self.parts, self.size = [], 0
        with np.errstate(all="ignore"):
            self.Y[g, b] = self.dense(tp, zs, hs, sv, b)

    def finish(self, out, status):
        """The states of the trajectories that stopped before t1 (status != 0) held at their last finite
        state at the later grid times; returns Y (G, B, n)."""
        self.flush()
        for b in np.flatnonzero(status != 0):
            self.Y[self.next[b]:, b] = out[b]
        return self.Y


def _numpy_independent(pl, Z, H0, t0, t1, rtol, atol, max_step, max_steps=10**6, grid=None):
    """The vectorized controller (module docstring); returns (Y, status, t_end, nsteps, nrejected, grid, peaks) as
    :func:`integrators.backends.batch_kernels.adaptive_independent` (``grid``: a :class:`_Grid` (the rows of Z its
    trajectories 0..B-1) filled from the accepted steps, or None); peaks (B, 3) each trajectory's (zmax, tmax, hmax)."""
    first, attempt = _functions(pl)
    B, n = Z.shape
    order = controller.estimate_order(pl.tab, pl.lie)
    direction = 1.0 if t1 > t0 else -1.0
    out = Z.copy()
    status, t_end = np.zeros(B, np.int64), np.full(B, float(t0))
    nsteps, nrej = np.zeros(B, np.int64), np.zeros(B, np.int64)
    idx = np.arange(B)
    z = [np.ascontiguousarray(Z[:, i]) for i in range(n)]
    e = [np.zeros(B) for _ in range(n)]
    cz = list(np.moveaxis(pl.targets(Z), -1, 0))   # a projected pair: C(y0) of each trajectory
    w0 = list(first(*z))
    t = np.full(B, float(t0))
    h = np.asarray(H0, dtype=float).copy()
    ns, nr = np.zeros(B, np.int64), np.zeros(B, np.int64)
    peak = np.zeros((B, 3))                       # each trajectory's (zmax, tmax, hmax), as the single loop's
    pz, pt, ph = np.zeros(B), np.full(B, float(t0)), np.zeros(B)
    with np.errstate(all="ignore"):
        while idx.size:
            h = np.minimum(h, max_step)
            last = direction * (t + direction * h - t1) >= 0.0
            h = np.where(last, np.abs(t1 - t), h)
            hs = direction * h
            err, *rest = attempt(hs, rtol, atol, *z, *w0, *cz)
            d, wl = rest[:n], rest[n:]
            err = np.where(err == err, err, math.inf)
            acc = err <= 1.0
            bad = acc & ~np.isfinite(sum(d))
            good = acc & ~bad
            if grid is not None and good.any():
                zs = np.stack([z[i][good] + e[i][good] for i in range(n)], -1)
                t_prev, h_acc = t[good], hs[good]
            for i in range(n):
                s, e_new = compensated_add(z[i], e[i], d[i])
                e[i] = np.where(good, e_new, e[i])
                z[i] = np.where(good, s, z[i])
            w0 = [np.where(good, u, v) for u, v in zip(wl, w0)]   # the generator: n, or 2 on an orbit space
            t = np.where(good, np.where(last, t1, t + hs), t)
            if grid is not None and good.any():
                grid.step(idx[good], t_prev, h_acc, t[good], zs, np.stack([z[i][good] + e[i][good] for i in range(n)], -1))
            zn = functools.reduce(np.maximum, map(np.abs, z))
            new = good & (zn > pz)
            pz, pt, ph = np.where(new, zn, pz), np.where(new, t, pt), np.where(new, hs, ph)
            ns += good
            nr += ~acc
            h = h * controller.factors(err, acc, order)
            tiny = ~acc & ((h < 10.0 * 2.2e-16 * np.abs(t)) | (h < 1e-300))
            spent = good & ~last & (ns >= max_steps)
            done = (good & last) | bad | tiny | spent
            if done.any():
                k = idx[done]
                out[k] = np.stack([z[i][done] + e[i][done] for i in range(n)], -1)
                status[k] = np.where((bad | tiny)[done], -1, np.where(spent[done], -2, 0))
                t_end[k], nsteps[k], nrej[k] = t[done], ns[done], nr[done]
                peak[k] = np.stack([pz[done], pt[done], ph[done]], -1)
                keep = ~done
                idx, t, h, ns, nr = idx[keep], t[keep], h[keep], ns[keep], nr[keep]
                pz, pt, ph = pz[keep], pt[keep], ph[keep]
                z = [v[keep] for v in z]
                e = [v[keep] for v in e]
                w0 = [v[keep] for v in w0]
                cz = [v[keep] for v in cz]
    return out, status, t_end, nsteps, nrej, grid, peak


def _grids(problem, method, pl, Z, t0, t_eval):
    """grids(lo, hi): the :class:`_Grid` of the trajectories Z[lo:hi] (None without t_eval), whose
    continuous extension is that of the generic numpy stages (:class:`integrators.reference.pair.ReferencePair`)
    with each trajectory's own projection targets C(y0)."""
    if t_eval is None:
        return lambda lo, hi: None
    ref = ReferencePair(problem, pl.tab, method.lie, method.terms, pl.proj)
    targets = pl.targets(Z)

    def make(lo, hi):
        def dense(tp, zs, hs, sv, b):
            return dense_output.extension(ref, tp, zs, hs, sv, targets[lo + b] if pl.proj is not None else None)
        g = _Grid(np.asarray(t_eval, dtype=float), hi - lo, Z.shape[1], dense, t0)
        g.start(Z[lo:hi])
        return g

    return make


def solve_independent(problem, method, y0, t0, t1, rtol, atol, first_step, max_step, backend, fast=True,
                      max_steps=10**6, t_eval=None, check=True):
    """Integrate every trajectory of the ensemble y0 (B, ..., dim) on its own (module docstring), at
    most ``max_steps`` accepted steps each (beyond: that trajectory stops, status -1 and a message).
    IntegrationInputError when the method has no generated path on this problem (or fast=False).
    ``t_eval``: the output grid (module docstring). ``check``: each trajectory's growth check
    (:func:`integrators.engine.growth.crossings`: one that stepped across the pole of a blow-up is cut at its peak);
    ``res.peak`` (batch shape + (3,)) holds every trajectory's (zmax, tmax, hmax)."""
    check_controls(rtol, atol, first_step, max_step)
    tab = method.tableau
    proj = projection.of_algebra(problem.algebra) if method.project else linear_projection.kept(problem, method)
    pl = fastpath.plan(problem, tab, method.lie, method.terms, y0, proj) if fast else None
    if pl is None and fast and backend == "numba":
        fastpath.require_compiled(backend, fastpath.no_plan_reason(problem, method.lie, proj))
    if pl is None:
        raise IntegrationInputError(
            f"ensemble='independent' runs generated code, which {method.name!r} does not have on {problem.name}"
            f"{' (fast=False)' if not fast else ''}; use ensemble='shared' (one step sequence for the ensemble)")
    n = problem.dim
    Z = np.ascontiguousarray(y0.reshape(-1, n), dtype=float)
    if first_step is None:
        rhs = problem.rhs if problem.kind == "coadjoint" else problem.f

        def starts(rows):
            return initial_step(functools.partial(rhs, t0), rows, t0, t1, controller.estimate_order(tab, method.lie),
                                rtol, atol, max_step, per_row=True)
        # the work estimate from a sample of the rows: a compiled kernel computes each trajectory's own
        sampled = Z.shape[0] > START_SAMPLE
        H0 = starts(Z[::-(-Z.shape[0] // START_SAMPLE)] if sampled else Z)
        work = float(np.mean(abs(t1 - t0) / H0)) * Z.shape[0]
        extra = 2
    else:
        H0, extra, sampled = np.full(Z.shape[0], float(first_step)), 0, False
        work = float(np.sum(abs(t1 - t0) / H0))
    ms = math.inf if max_step is None else float(max_step)
    mode = fastpath.choose_backend(backend, work)
    if backend == "auto" and mode == "numba":   # never waits on a compiler (integrators.backends.auto_compile)
        mode = auto_compile.choose_independent(pl, t_eval is not None)
    elif backend == "auto" and numba_kernels.available():   # a small run: a compiled kernel only if one is loaded
        mode = auto_compile.choose_small_independent(pl, t_eval is not None, work)
    elif backend == "numba":   # the specialised kernel not compiled: the generic ensemble kernel meanwhile
        mode = auto_compile.choose_numba_independent(pl, t_eval is not None)
    if sampled:   # H0 = 0 where the kernel takes Hairer's starting step itself, else every row's here
        inside = mode == "generic" or (mode == "numba" and batch_kernels.starts_itself(pl, t_eval))
        H0 = np.zeros(Z.shape[0]) if inside else starts(Z)
    grids = _grids(problem, method, pl, Z, t0, t_eval)
    compiled = mode in ("numba", "generic")
    if compiled:   # each trajectory's compiled loop fills its column of the grid (codegen.dense_source)
        run = batch_kernels.adaptive_independent if mode == "numba" else generic_ensemble.run
        got = run(pl, Z, H0, t0, t1, rtol, atol, ms, max_steps, t_eval)
        out, status, t_end, ns, nr, _, pk = got
        if mode == "numba" and backend in ("auto", "numba"):
            auto_compile.mark_independent(pl, t_eval is not None)
    else:  # in chunks: the temporaries of one attempt stay in cache
        parts = [_numpy_independent(pl, Z[s:s + CHUNK], H0[s:s + CHUNK], t0, t1, rtol, atol, ms, max_steps,
                                    grids(s, min(s + CHUNK, Z.shape[0])))
                 for s in range(0, Z.shape[0], CHUNK)]
        out, status, t_end, ns, nr, pk = (np.concatenate(v) for v in list(zip(*parts))[:5] + [[p[6] for p in parts]])
    crossed, G = (growth.crossings(pk, Z, out, t0, t_end, ns, status) if check else
                  (np.zeros(len(Z), bool), np.full(len(Z), np.nan)))
    if crossed.any():   # cut at the peak: t_end there, the end row NaN (no state before it is kept) or the grid held
        status, t_end, out = status.copy(), t_end.copy(), out.copy()
        status[crossed], t_end[crossed], out[crossed] = lost.CROSSED, pk[crossed, 1], np.nan
    if t_eval is None:
        tt, ys = np.array([t0, t1], dtype=float), np.stack([Z, out]).reshape((2,) + y0.shape)
    else:
        tt = np.asarray(t_eval, dtype=float)
        ys = (got[5] if compiled else
              np.concatenate([g.finish(o, st) for g, o, st in ((p[5], p[0], p[1]) for p in parts)], axis=1))
        for b in np.flatnonzero(crossed):   # the grid rows after the peak hold the last one before it
            k = max(int(np.sum((tt - t_end[b]) * (t1 - t0) <= 0.0)), 1)
            ys[k:, b] = ys[k - 1, b]
        ys = ys.reshape((len(tt),) + y0.shape)
    res = IntegrationResult(t=tt, y=ys, status=0, message="reached the end of t_span", nsteps=int(ns.max(initial=0)))
    shape = y0.shape[:-1]
    lost.mark(res, status, t_end, shape, max_steps)   # t_end, failed; status -1 and the message when any stopped
    res.peak = pk.reshape(shape + (3,))
    if check and np.isfinite(G).any():
        res.checks["growth"] = float(np.nanmax(G))
    res.nsteps_each, res.nrejected_each = ns.reshape(shape), nr.reshape(shape)
    res.nrejected = int(nr.max(initial=0))
    res.nfev = extra + 1 + int(np.max(ns + nr, initial=0)) * len(tab.b)
    res.backend = auto_compile.label(mode)
    if backend == "numba" and mode == "generic":
        res.backend = auto_compile.NUMBA_GENERIC_LABEL
    elif backend == "numba" and mode == "numpy":
        res.backend += auto_compile.NUMBA_NUMPY_NOTE
    return res
