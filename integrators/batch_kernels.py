"""Compiled ensembles (numba, extra ``liedyn[fast]``): a parallel loop over the trajectories, each
running the compiled one-trajectory code of :mod:`integrators.codegen` on its own.

* :func:`adaptive_independent`: every trajectory runs the whole adaptive loop of
  :func:`integrators.codegen.adaptive_source` (its own step sizes, rejections and first step;
  stages written by :mod:`integrators.batchgen`), so
  each result is the one its single run gives (to round-off: the compiled code may contract
  products into fused multiply-adds).
  On so(3) RKMK pairs the trajectories go in lanes of LANES: the controller runs per lane, but one
  attempt of all lanes is one loop of straight-line arithmetic (the stages of
  :func:`integrators.batchgen.attempt_lines` with the branch-free exponential: no call, no branch),
  which the compiler vectorizes; finished lanes idle until their block is done.
* :func:`fixed_parallel`: every trajectory runs :func:`integrators.codegen.fixed_source` (n fixed
  steps) and writes its saved states into its column of the ensemble's output.

The loop is ``numba.prange`` (threads: ``NUMBA_NUM_THREADS``, default the number of cores). The
module text (generated source, a jitted copy of the one-trajectory function and the parallel
wrapper) is written to the cache directory of :mod:`integrators.numba_kernels` and compiled with
numba's on-disk cache, so each structure compiles once per machine.
"""

from __future__ import annotations

import hashlib

import numpy as np

from . import batchgen, codegen, numba_kernels

_MODULES = {}

#: save_every of the runs that keep only the end point (larger than any step count)
_NEVER = 1 << 62

_ADAPTIVE = """
run = numba.njit(run, cache=CACHE, error_model="numpy")


@numba.njit(parallel=True, cache=CACHE, error_model="numpy")
def ensemble(t0, t1, H0, rtol, atol, max_step, Z, OUT, ST, TE, NS, NR):
    for b in numba.prange(Z.shape[0]):
        ts = np.empty(2)
        ys = np.empty((2, {n}))
        ts[0] = t0
        out = run(t0, t1, H0[b], rtol, atol, max_step, {never}, {never}, ts, ys, {zb}, {zeros})
        ST[b] = out[0]
        TE[b] = out[1]
        NS[b] = out[3]
        NR[b] = out[4]
{store}
"""

_FIXED = """
run = numba.njit(run, cache=CACHE, error_model="numpy")


@numba.njit(parallel=True, cache=CACHE, error_model="numpy")
def ensemble(h, nsteps, save_every, t0, Z, YS, DONE, J):
    for b in numba.prange(Z.shape[0]):
        ts = np.empty(YS.shape[0])
        out = run(h, nsteps, save_every, ts, YS[:, b, :], t0, {zb}, {zeros})
        DONE[b] = out[0]
        J[b] = out[1]
"""


#: lanes of the branch-free so(3) kernel: trajectories stepped together by one vectorizable loop
LANES = 256


def _indent(lines, k):
    return "\n".join("    " * k + ln.strip() for ln in lines)


def lanes_source(pl):
    """Module text of the lane kernel (so(3) RKMK pairs; see :func:`adaptive_independent`)."""
    n, C = pl.st.n, LANES
    fl, w, al, d, wl = batchgen.attempt_lines(pl.st, pl.tab, pl.lie, pl.terms, lanes=True)
    order = pl.tab["err_order"]
    ex = -1.0 / (order + 1)
    load = "; ".join(f"z{i} = Zc[{i}, b]" for i in range(n))
    load_w = "; ".join(f"W0_{i} = Wc[{i}, b]" for i in range(n))
    return f"""
@numba.njit(parallel=True, cache=CACHE, error_model="numpy")
def ensemble(t0, t1, H0, rtol, atol, max_step, Z, OUT, ST, TE, NS, NR):
    B = Z.shape[0]
    direction = 1.0 if t1 > t0 else -1.0
    for c in numba.prange((B + {C} - 1) // {C}):
        lo = c*{C}
        m = min({C}, B - lo)
        Zc = np.zeros(({n}, {C})); Ec = np.zeros(({n}, {C})); Wc = np.zeros(({n}, {C}))
        Dc = np.zeros(({n}, {C})); Lc = np.zeros(({n}, {C})); ERR = np.zeros({C}); BIG = np.zeros({C})
        T = np.full({C}, t0); H = np.zeros({C}); HS = np.zeros({C}); LAST = np.zeros({C}, np.bool_)
        DONE = np.ones({C}, np.bool_); ns = np.zeros({C}, np.int64); nr = np.zeros({C}, np.int64)
        for b in range(m):
            DONE[b] = False
            H[b] = H0[lo + b]
            for i in range({n}):
                Zc[i, b] = Z[lo + b, i]
        for b in range({C}):
            {load}
{_indent(fl, 3)}
            {"; ".join(f"Wc[{i}, b] = {w[i]}" for i in range(n))}
        nact = m
        while nact > 0:
            for b in range({C}):
                hb = min(H[b], max_step)
                LAST[b] = direction*(T[b] + direction*hb - t1) >= 0.0
                if LAST[b]:
                    hb = abs(t1 - T[b])
                H[b] = hb
                HS[b] = 0.0 if DONE[b] else direction*hb
            for b in range({C}):
                hs = HS[b]
                {load}
                {load_w}
                _big = 0.0
{_indent(al, 4)}
                ERR[b] = err
                BIG[b] = _big
                {"; ".join(f"Dc[{i}, b] = {d[i]}" for i in range(n))}
                {"; ".join(f"Lc[{i}, b] = {wl[i]}" for i in range(n))}
            for b in range(m):
                if DONE[b]:
                    continue
                err = ERR[b]
                if not (err == err) or BIG[b] > 256.0:
                    err = np.inf
                fin = False
                status = 0
                if err <= 1.0:
                    chk = {" + ".join(f"Dc[{i}, b]" for i in range(n))}
                    if not (chk - chk == 0.0):
                        fin = True
                        status = -1
                    else:
                        for i in range({n}):
                            _y = Dc[i, b] + Ec[i, b]; _s = Zc[i, b] + _y; Ec[i, b] = (Zc[i, b] - _s) + _y; Zc[i, b] = _s
                            Wc[i, b] = Lc[i, b]
                        T[b] = t1 if LAST[b] else T[b] + HS[b]
                        ns[b] += 1
                        fac = 10.0 if err == 0.0 else min(10.0, 0.9*err**({ex!r}))
                        H[b] = H[b]*fac
                        fin = LAST[b]
                else:
                    nr[b] += 1
                    fac = 0.2 if not (err < 1e300) else max(0.2, 0.9*err**({ex!r}))
                    H[b] = H[b]*fac
                    if H[b] < 10.0*2.2e-16*abs(T[b]) or H[b] < 1e-300:
                        fin = True
                        status = -1
                if fin:
                    DONE[b] = True
                    nact -= 1
                    for i in range({n}):
                        OUT[lo + b, i] = Zc[i, b] + Ec[i, b]
                    ST[lo + b] = status
                    TE[lo + b] = T[b]
                    NS[lo + b] = ns[b]
                    NR[lo + b] = nr[b]
"""


def _load(text):
    """The function ``ensemble`` of the generated module ``text`` (numba's disk cache when the cache
    directory is writable, else compiled in memory for this process)."""
    numba_kernels.require("the compiled ensemble")
    on_disk = numba_kernels.cache_dir() is not None
    full = numba_kernels._HEADER.format(batch=False) + f"import numba\nCACHE = {on_disk}\n\n" + text
    digest = hashlib.sha1(full.encode()).hexdigest()[:20]
    fn = _MODULES.get(digest)
    if fn is None:
        fn = _MODULES[digest] = numba_kernels.load_source(full, f"liedyn_ens_{digest}")[0]["ensemble"]
    return fn


def _args(n):
    return (", ".join(f"Z[b, {i}]" for i in range(n)), ", ".join(["0.0"] * n))


def adaptive_independent(pl, Z, H0, t0, t1, rtol, atol, max_step):
    """Each row of Z (B, n) integrated from t0 to t1 by the adaptive pair of plan ``pl`` with its own
    first step H0[b]; returns (Y (B, n) final states (the last finite one when a run failed),
    status (B,), t_end (B,), nsteps (B,), nrejected (B,))."""
    n = pl.st.n
    if pl.st.closed == "so3" and pl.lie:
        fn = _load(lanes_source(pl))
    else:
        zb, zeros = _args(n)
        store = "\n".join(f"        OUT[b, {i}] = out[{8 + i}] + out[{8 + n + i}]" for i in range(n))
        text = batchgen.adaptive_source(pl.st, pl.tab, pl.lie, pl.terms) + _ADAPTIVE.format(
            n=n, never=_NEVER, zb=zb, zeros=zeros, store=store)
        fn = _load(text)
    Z = np.ascontiguousarray(Z, dtype=float)
    B = Z.shape[0]
    out = np.empty_like(Z)
    st, te = np.empty(B, np.int64), np.empty(B)
    ns, nr = np.empty(B, np.int64), np.empty(B, np.int64)
    with np.errstate(all="ignore"):
        fn(float(t0), float(t1), np.ascontiguousarray(H0, dtype=float), float(rtol), float(atol), float(max_step),
           Z, out, st, te, ns, nr)
    return out, st, te, ns, nr


def fixed_parallel(pl, Z, t0, h, n, save_every, K):
    """n fixed steps of size h from each row of Z (B, dim); returns (ts (K,), ys (K, B, dim), done (B,),
    saves (B,)): a trajectory that overflowed has done < n and only its first saves[b] rows set."""
    dim = pl.st.n
    zb, zeros = _args(dim)
    text = codegen.source("fixed", pl.st, pl.tab, pl.lie, pl.terms) + _FIXED.format(zb=zb, zeros=zeros)
    fn = _load(text)
    Z = np.ascontiguousarray(Z, dtype=float)
    B = Z.shape[0]
    ys = np.empty((K, B, dim))
    ys[0] = Z
    done, saves = np.empty(B, np.int64), np.empty(B, np.int64)
    with np.errstate(all="ignore"):
        fn(float(h), int(n), int(save_every), float(t0), Z, ys, done, saves)
    ks = list(range(0, n + 1, save_every)) + ([n] if n % save_every else [])
    ts = t0 + np.array(ks, dtype=float) * h  # the times the generated loop writes: t0 + k*h
    return ts, ys, done, saves
