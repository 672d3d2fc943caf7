"""Running the generated Poincare section of :mod:`integrators.codegen.section_source` on an ensemble.

The orbits go through a ``numba.prange`` loop (extra ``liedyn[fast]``): for a tableau in rk form the lane
kernel of :func:`integrators.codegen.section_source.lanes_module` (16 orbits stepped together by one
vectorizable loop, a finished orbit's lane taken by the next; the same crossings to the bit as the
one-orbit loop, 5-6x faster: benchmarks/phase_space.py), otherwise each orbit running the one-orbit
loop from its own step to the end or until its buffer of ``cap`` crossings is full; :func:`crossings`
collects the buffers and calls again for the orbits that still have steps to take (no state is
stored along the way: memory is B x cap x n, whatever the number of steps). Mode "scalar" runs the
same text in Python floats, orbit after orbit (for the tests, and where numba is missing).
"""

from __future__ import annotations


import numpy as np

from ..codegen import ensemble_source
from ..codegen.section_source import LANES, lanes_module, section_source
from ..methods import CommutatorFree, Splitting
from ..reference import genhelpers
from . import auto_compile, compile_child, fastpath, numba_kernels

_SCALAR = {}


def _threads():
    import numba

    return numba.get_num_threads()

def lanes(pl):
    """True when the section of plan ``pl`` runs the lane kernel (a tableau in rk form: its step is
    arithmetic only; :func:`integrators.codegen.section_source.lanes_module`)."""
    return not pl.lie and not isinstance(pl.tab, (CommutatorFree, Splitting))


def _key(pl):
    return (pl.st.key, pl.tab.name, pl.lie, pl.terms)


def _module_text(pl):
    if lanes(pl):
        return lanes_module(pl.st, pl.tab, pl.lie, pl.terms)
    return ensemble_source.section_module(section_source(pl.st, pl.tab, pl.lie, pl.terms))


def compiled(pl):
    """True when the plan's compiled section is loaded in this process (a call needs no compiler)."""
    fn = _NUMBA.get(_key(pl))
    return fn is not None and bool(getattr(fn, "signatures", ()))


def _marker(pl):
    return numba_kernels.kernel_marker(_module_text(pl), "liedyn_sec", "backend='numba'")


def warm(pl):
    """Compile (or load from numba's disk cache) the plan's compiled section with the argument types of
    :func:`crossings` (one orbit, one step), then write the disk-cache marker."""
    n = pl.st.n
    crossings(pl, np.zeros((1, n)), 0.0, 1e-3, 1, np.ones(n), 0.0, 1, 1e-13, None, "numba")
    auto_compile.write_marker(_marker(pl))


def choose(pl, backend, work):
    """"numba" or "numpy" for a section of estimated ``work`` (orbit-steps): backend "auto" with numba
    installed by :func:`integrators.backends.auto_compile.choose_kernel` (no call waits on a compiler: the
    compiled section when loaded, or in numba's disk cache for a run of at least AUTO_NUMBA_WORK, else numpy
    with its compile queued in the background); backend "numba" by
    :func:`integrators.backends.auto_compile.numba_or_cold`; "numpy" as
    :func:`integrators.backends.fastpath.choose_backend`."""
    if backend not in ("auto", "numba") or not numba_kernels.available():
        return fastpath.choose_backend(backend, work)
    def job():
        return compile_child.Job(warm, (pl,), _marker(pl))
    if backend == "numba":   # numpy while a child process compiles it, when it is neither loaded nor on disk
        return auto_compile.numba_or_cold(("section",) + _key(pl), compiled(pl), _marker(pl), job)
    return auto_compile.choose_kernel(("section",) + _key(pl), compiled(pl), lambda: _marker(pl), job, work,
                                      fastpath.AUTO_NUMBA_WORK, fastpath.AUTO_NUMBA_WORK)


_NUMBA = {}


def _function(pl, mode):
    if mode == "numba":
        fn = _NUMBA.get(_key(pl))
        if fn is None:
            prefix = "liedyn_secl" if lanes(pl) else "liedyn_sec"
            fn = _NUMBA[_key(pl)] = numba_kernels.load_module(_module_text(pl), prefix, "backend='numba'")["ensemble"]
        return fn
    text = section_source(pl.st, pl.tab, pl.lie, pl.terms)
    key = _key(pl)
    fn = _SCALAR.get(key)
    if fn is None:
        env = dict(genhelpers.SCALAR, abs=abs, min=min, max=max)
        exec(compile(text, f"<liedyn section {pl.tab.name}>", "exec"), env)
        fn = _SCALAR[key] = env["run"]
    return fn


def crossings(pl, Y, t0, h, nsteps, a, b, direction, xtol, max_crossings, mode, cap=None):
    """Crossings of a . y = b by the orbits from Y (B, n) over nsteps steps of h from t0 with the
    method of plan ``pl``; returns (points: list of (K_b, n), times: list of (K_b,), status (B,): 0 or -1
    when the orbit overflowed (its crossings up to there are kept), the step each orbit reached, the
    largest relative |g| at the located points)."""
    B, n = Y.shape
    maxc = np.full(B, np.iinfo(np.int64).max if max_crossings is None else int(max_crossings), dtype=np.int64)
    if cap is None:
        cap = int(min(4096, max(16, 2_000_000 // (B * n))))
    Z = np.ascontiguousarray(Y, dtype=float).copy()
    E = np.zeros_like(Z)
    K = np.zeros(B, dtype=np.int64)
    A = np.ascontiguousarray(a, dtype=float)
    pts = [[] for _ in range(B)]
    tms = [[] for _ in range(B)]
    status = np.zeros(B, dtype=np.int64)
    worst = 0.0
    active = np.ones(B, dtype=np.bool_)
    PTS = np.empty((B, cap, n))
    TS = np.empty((B, cap))
    CNT = np.zeros(B, dtype=np.int64)
    RES = np.zeros(B)
    fn = _function(pl, mode)
    while np.any(active):
        if mode == "numba" and lanes(pl):
            idx = np.flatnonzero(active)
            CNT[:] = 0
            ng = max(1, min(-(-len(idx) // LANES), 4 * _threads()))
            with np.errstate(all="ignore"):
                fn(float(h), int(nsteps), float(t0), cap, maxc, Z, E, K, A, float(b), int(direction), float(xtol),
                   PTS, TS, CNT, status, RES, idx, ng)
        elif mode == "numba":
            with np.errstate(all="ignore"):
                fn(float(h), int(nsteps), float(t0), cap, maxc, Z, E, K, A, float(b), int(direction), float(xtol),
                   PTS, TS, CNT, status, RES, active)
        else:
            for i in np.flatnonzero(active):
                z, e = Z[i].tolist(), E[i].tolist()
                with np.errstate(all="ignore"):
                    K[i], CNT[i], status[i], RES[i] = fn(float(h), int(K[i]), int(nsteps), float(t0), cap,
                                                         int(maxc[i]), z, e, A.tolist(), float(b), int(direction),
                                                         float(xtol), PTS[i], TS[i])
                Z[i], E[i] = z, e
            CNT[~active] = 0
        for i in np.flatnonzero(CNT):
            pts[i].append(PTS[i, :CNT[i]].copy())
            tms[i].append(TS[i, :CNT[i]].copy())
        worst = max(worst, float(np.max(RES[active]))) if np.any(active) else worst
        maxc -= CNT
        active &= (K < nsteps) & (status == 0) & (maxc > 0)
    P = [np.concatenate(p) if p else np.zeros((0, n)) for p in pts]
    T = [np.concatenate(q) if q else np.zeros(0) for q in tms]
    return P, T, status, K, worst
