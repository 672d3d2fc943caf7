"""Compiled ensembles (numba, extra ``liedyn[fast]``): a parallel loop over the trajectories, each
running the compiled one-trajectory code of :mod:`integrators.codegen.writer` on its own.

* :func:`adaptive_independent`: every trajectory runs the whole adaptive loop of
  :func:`integrators.codegen.programs.adaptive_source` (its own step sizes, rejections and first step;
  stages written by :mod:`integrators.codegen.batchgen`), so
  each result is the one its single run gives (to round-off: the compiled code may contract
  products into fused multiply-adds); a projected pair passes each trajectory's targets C(y0).
  On so(3) RKMK pairs the trajectories go in lanes (LANES per thread): the controller runs per
  lane, but one attempt of all lanes is one loop of straight-line arithmetic (the stages of
  :func:`integrators.codegen.batchgen.attempt_lines` with the branch-free exponential: no call, no branch),
  which the compiler vectorizes, with JAM lanes per iteration interleaved (one lane's attempt is a
  long chain of dependent operations: a single chain leaves the vector units waiting on latency);
  a lane whose trajectory finished takes the next one of its thread's range. The ambient pairs (rk45,
  rk853 and their projected forms) go in lanes on every algebra: their attempt is polynomial arithmetic
  without branch (in a generic basis the field as a quadratic form, :func:`integrators.codegen.batchgen.quadratic_form`);
  a projected pair's projection runs in the vectorized attempt too, as a fixed number of Newton
  iterations (:data:`integrators.codegen.ensemble_source.PROJ_ITER`), and again per lane with the single
  run's loop (its data-dependent exit) when the residual is not at round-off after them. 10^4 rigid bodies, rk853_projected: 2.4 -> 1.2 us per trajectory;
  10^4 servo-constraints of the first kind on Bianchi VI (rk853): 33 -> 13 ms of CPU a call.
  The kernel of each structure and method is written once per process (:data:`_LANE_FNS`).
* :func:`fixed_parallel`: every trajectory runs :func:`integrators.codegen.fixed_programs.fixed_source` (n fixed
  steps) and writes its saved states into its column of the ensemble's output. On so(3) and se(3)
  RKMK (:func:`integrators.codegen.ensemble_source.fixed_lanes_source`) the trajectories go in lanes instead: one step of all lanes is
  one loop of straight-line arithmetic with the branch-free exponentials of
  :class:`integrators.codegen.batchgen.EnsembleSource` (the one-trajectory code calls co2 / co3, whose
  branch and sin, cos, sqrt keep the compiler from vectorizing), JAM lanes interleaved per
  iteration; the few trajectories the lanes cannot take (|omega h| > 16, or not finite) run again
  with the one-trajectory code. 10^5 bodies, RKMK4, 20 steps, one core: se(3) 5.3e6 -> 2.2e7,
  so(3) 6.5e6 -> 3.4e7 body-steps/s.

The loop is ``numba.prange`` (threads: ``NUMBA_NUM_THREADS``, default the number of cores). The
module text (generated source, a jitted copy of the one-trajectory function and the parallel
wrapper) is written by :mod:`integrators.codegen.ensemble_source`; this module turns it into callables: it is written to the cache directory of :mod:`integrators.backends.numba_kernels` and compiled with
numba's on-disk cache, so each structure compiles once per machine.
"""

from __future__ import annotations

import math

import numpy as np

from ..codegen import ensemble_source
from ..codegen.ensemble_source import JAM
from ..methods import CommutatorFree, Splitting
from . import numba_kernels

_LANE_FNS = {}


def _load(text):
    """The function ``ensemble`` of the generated module ``text`` (:func:`integrators.backends.numba_kernels.load_module`)."""
    return numba_kernels.load_module(text, "liedyn_ens", "the compiled ensemble")["ensemble"]


def _lanes(pl, t_eval):
    """True when :func:`adaptive_independent` runs plan ``pl`` in the lane kernel (else each trajectory's loop)."""
    return t_eval is None and ((pl.st.closed == "so3" and pl.lie) or not pl.lie)


def starts_itself(pl, t_eval=None):
    """True when the kernel of :func:`adaptive_independent` for plan ``pl`` computes Hairer's starting step of a
    trajectory given H0[b] <= 0 (the one-trajectory loops and the ambient pairs' lanes; the so(3) RKMK lanes
    take theirs from the caller)."""
    return not (_lanes(pl, t_eval) and pl.lie)


def adaptive_independent(pl, Z, H0, t0, t1, rtol, atol, max_step, max_steps=10**6, t_eval=None):
    """Each row of Z (B, n) integrated from t0 to t1 by the adaptive pair of plan ``pl`` with its own
    first step H0[b] (Hairer's starting step where H0[b] <= 0, when :func:`starts_itself`), at most
    ``max_steps`` accepted steps each; returns (Y (B, n) final states (the
    last finite one when a run failed, the state reached when the budget was spent), status (B,): 0,
    -1 (the step size collapsed) or -2 (the budget), t_end (B,), nsteps (B,), nrejected (B,), YE, PK (B, 3):
    the peak (zmax, tmax, hmax) of each trajectory's accepted steps, :mod:`integrators.engine.growth`).
    ``t_eval`` (sorted in the direction of integration): each trajectory's loop also fills its column
    of the output grid from its own accepted steps (:mod:`integrators.codegen.dense_source`; the
    lanes are not used then), returned as YE (G, B, n), a trajectory that stopped early
    holding its last finite state at the later times (None without t_eval)."""
    n = pl.st.n
    lanes = _lanes(pl, t_eval)
    # writing the source takes milliseconds: once per structure and method
    key = (pl.st.key, pl.tab.name, pl.lie, pl.terms, None if pl.proj is None else pl.proj.key,
           ("lanes", JAM, ensemble_source.PROJ_ITER) if lanes else ("loop", t_eval is not None))
    fn = _LANE_FNS.get(key)
    if fn is None:
        fn = _LANE_FNS[key] = _load(ensemble_source.lanes_source(pl) if lanes else
                                    ensemble_source.adaptive_module(pl, grid=t_eval is not None))
    Z = np.ascontiguousarray(Z, dtype=float)
    B = Z.shape[0]
    out = np.empty_like(Z)
    st, te = np.empty(B, np.int64), np.empty(B)
    ns, nr = np.empty(B, np.int64), np.empty(B, np.int64)
    args = (float(t0), float(t1), np.ascontiguousarray(H0, dtype=float), float(rtol), float(atol), float(max_step),
            int(max_steps), Z, out, st, te, ns, nr)
    PK = np.zeros((B, 3))
    args += (np.ascontiguousarray(pl.targets(Z)), PK)   # the projection's targets C(y0) per trajectory ((B, 0):
    # none); each trajectory's peak (zmax, tmax, hmax)
    if lanes:  # one group of trajectories per thread
        args += (max(1, min(numba_kernels.require().get_num_threads(), B)),)
    if t_eval is not None:   # the grid times at t0 take y0; each loop fills its column from the next one
        tev = np.ascontiguousarray(t_eval, dtype=float)
        k = int(np.sum(tev == t0))
        YE = np.empty((len(tev), B, n))
        YE[:k] = Z
        GI = np.full(B, k, np.int64)
        args += (tev, YE, GI)
    with np.errstate(all="ignore"):
        fn(*args)
    _INDEP_READY.add(_indep_key(pl, t_eval is not None))
    if t_eval is None:
        return out, st, te, ns, nr, None, PK
    for b in np.flatnonzero(st != 0):   # stopped early: its last finite state at the later grid times
        YE[GI[b]:, b] = out[b]
    return out, st, te, ns, nr, YE, PK


def fixed_parallel(pl, Z, t0, h, n, save_every, K):
    """n fixed steps of size h from each row of Z (B, dim); returns (ts (K,), ys (K, B, dim), done (B,),
    saves (B,)): a trajectory that overflowed has done < n and only its first saves[b] rows set."""
    dim = pl.st.n
    Z = np.ascontiguousarray(Z, dtype=float)
    B = Z.shape[0]
    ys = np.empty((K, B, dim))
    ys[0] = Z
    done, saves = np.full(B, n, np.int64), np.full(B, K, np.int64)
    rest = np.arange(B)
    if pl.st.closed in ("so3", "se3") and pl.lie and pl.st.P is None and not isinstance(pl.tab, (CommutatorFree,
                                                                                                  Splitting)):
        # the lane kernel (RKMK tableaux);
        # the trajectories it marks run below
        key = ("fixed", pl.st.key, pl.tab.name, pl.terms, JAM)
        fn = _LANE_FNS.get(key)
        if fn is None:
            fn = _LANE_FNS[key] = _load(ensemble_source.fixed_lanes_source(pl, JAM))
        bad = np.zeros(B, np.bool_)
        with np.errstate(all="ignore"):
            fn(float(h), int(n), int(save_every), Z, ys, bad)
        rest = np.flatnonzero(bad)
    if rest.size:
        fn = _load(ensemble_source.fixed_module(pl))
        Zr = np.ascontiguousarray(Z[rest])
        yr = np.empty((K, rest.size, dim))
        yr[0] = Zr
        dr, sr = np.empty(rest.size, np.int64), np.empty(rest.size, np.int64)
        with np.errstate(all="ignore"):
            fn(float(h), int(n), int(save_every), float(t0), Zr, yr, dr, sr)
        ys[:, rest], done[rest], saves[rest] = yr, dr, sr
    _FIXED_READY.add(_fixed_key(pl))
    ks = list(range(0, n + 1, save_every)) + ([n] if n % save_every else [])
    ts = t0 + np.array(ks, dtype=float) * h  # the times the generated loop writes: t0 + k*h
    return ts, ys, done, saves


def _indep_key(pl, grid):
    return (pl.st.key, pl.tab.name, pl.lie, pl.terms, None if pl.proj is None else pl.proj.key, bool(grid))


#: (plan, grid) whose compiled independent ensemble has run in this process
_INDEP_READY = set()


def independent_ready(pl, grid):
    """True when :func:`adaptive_independent` of plan ``pl`` (with an output grid or not) has run in this
    process: its kernel is compiled."""
    return _indep_key(pl, grid) in _INDEP_READY


def warm_independent(pl, grid):
    """Compile (or load from numba's disk cache) the kernel of :func:`adaptive_independent`: an ensemble
    of one trajectory over an empty interval."""
    n = pl.st.n
    adaptive_independent(pl, np.zeros((1, n)), np.ones(1), 0.0, 0.0, 1e-6, 1e-9, math.inf, 1,
                         np.zeros(1) if grid else None)


def _fixed_key(pl):
    return (pl.st.key, getattr(pl.tab, "name", None), pl.lie, pl.terms)


#: plans whose compiled fixed-step ensemble has run in this process (its kernels compiled or loaded)
_FIXED_READY = set()


def fixed_ready(pl):
    """True when :func:`fixed_parallel` of plan ``pl`` has run in this process (nothing left to compile
    but, rarely, the one-trajectory module of the trajectories the lane kernel hands back)."""
    return _fixed_key(pl) in _FIXED_READY


def warm_fixed(pl):
    """Compile (or load from numba's disk cache) the fixed-step ensemble kernels of plan ``pl``: a run
    of no step of one trajectory."""
    fixed_parallel(pl, np.zeros((1, pl.st.n)), 0.0, 0.0, 0, 1, 1)
