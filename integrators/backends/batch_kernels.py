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
  a lane whose trajectory finished takes the next one of its thread's range. The projected ambient
  pairs (rk45_projected, rk853_projected) go in lanes too: their attempt is polynomial arithmetic
  without branch; the projection of an accepted step (a Newton loop with a data-dependent exit) runs
  per lane in the controller's loop. 10^4 rigid bodies, rk853_projected: 2.4 -> 1.2 us per trajectory.
* :func:`fixed_parallel`: every trajectory runs :func:`integrators.codegen.programs.fixed_source` (n fixed
  steps) and writes its saved states into its column of the ensemble's output. On so(3) and se(3)
  RKMK (:func:`fixed_lanes_source`) the trajectories go in lanes instead: one step of all lanes is
  one loop of straight-line arithmetic with the branch-free exponentials of
  :class:`integrators.codegen.batchgen.EnsembleSource` (the one-trajectory code calls co2 / co3, whose
  branch and sin, cos, sqrt keep the compiler from vectorizing), JAM lanes interleaved per
  iteration; the few trajectories the lanes cannot take (|omega h| > 16, or not finite) run again
  with the one-trajectory code. 10^5 bodies, RKMK4, 20 steps, one core: se(3) 5.3e6 -> 2.2e7,
  so(3) 6.5e6 -> 3.4e7 body-steps/s.

The loop is ``numba.prange`` (threads: ``NUMBA_NUM_THREADS``, default the number of cores). The
module text (generated source, a jitted copy of the one-trajectory function and the parallel
wrapper) is written to the cache directory of :mod:`integrators.backends.numba_kernels` and compiled with
numba's on-disk cache, so each structure compiles once per machine.
"""

from __future__ import annotations

import re

import numpy as np

from ..codegen import batchgen, programs
from . import numba_kernels
from ..core import controller

_LANE_FNS = {}

#: save_every of the runs that keep only the end point (larger than any step count)
_NEVER = 1 << 62

_ADAPTIVE = """
run = numba.njit(run, cache=CACHE, error_model="numpy")


@numba.njit(parallel=True, cache=CACHE, error_model="numpy")
def ensemble(t0, t1, H0, rtol, atol, max_step, max_steps, Z, OUT, ST, TE, NS, NR, CZ):
    for b in numba.prange(Z.shape[0]):
        ts = np.empty(2)
        ys = np.empty((2, {n}))
        ts[0] = t0
        out = run(t0, t1, H0[b], rtol, atol, max_step, {never}, max_steps, 0, ts, ys, {zb}, {zeros}{cz})
        ST[b] = out[0]
        TE[b] = out[1]
        NS[b] = out[3]
        NR[b] = out[4]
{store}
"""

_ADAPTIVE_GRID = """
run = numba.njit(run, cache=CACHE, error_model="numpy")


@numba.njit(parallel=True, cache=CACHE, error_model="numpy")
def ensemble(t0, t1, H0, rtol, atol, max_step, max_steps, Z, OUT, ST, TE, NS, NR, CZ, TEV, YE, GI):
    for b in numba.prange(Z.shape[0]):
        ts = np.empty(2)
        ys = np.empty((2, {n}))
        ts[0] = t0
        out = run(t0, t1, H0[b], rtol, atol, max_step, {never}, max_steps, 0, ts, ys, {zb}, {zeros}{cz}, TEV,
                  YE[:, b, :], GI[b:b + 1])
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
#: the lanes' attempt loop computes JAM independent lanes per iteration (interleaved statement by
#: statement): one lane's attempt is a chain of dependent operations (the stages, the series of the
#: exponential), so a single vectorized chain waits on latency; JAM chains keep the units busy
JAM = 2

_NAME = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")


def _indent(lines, k):
    return "\n".join("    " * k + ln.strip() for ln in lines)


def jam(lines, names, copies):
    """The straight-line ``lines`` written ``copies`` times, interleaved line by line; copy k > 0
    renames every name in ``names`` and every name assigned in ``lines`` to name_J<k> (one lane's
    attempt per copy: independent chains of operations the processor overlaps)."""
    own = set(names)
    for ln in lines:
        own.update(v.strip() for v in ln.split("=", 1)[0].split(","))
    out = []
    for ln in lines:
        for k in range(copies):
            out.append(ln.strip() if k == 0 else
                       _NAME.sub(lambda m: m.group(0) + f"_J{k}" if m.group(0) in own else m.group(0), ln.strip()))
    return out


def lanes_source(pl, copies=JAM):
    """Module text of the lane kernel (so(3) RKMK pairs and the projected ambient pairs; see
    :func:`adaptive_independent`).

    The trajectories are split into one contiguous group per thread (``numba.prange``); a group keeps
    C = copies * S lanes, refilled from its range as trajectories finish (no lane idles while its
    group has work left). One attempt of all lanes is the loop over s < S computing the lanes
    s, s + S, ..., s + (copies - 1) S (:func:`jam`)."""
    n = pl.st.n
    fl, w, al, d, wl = batchgen.attempt_lines(pl.st, pl.tab, pl.lie, pl.terms, lanes=True)
    order = pl.tab.err_order
    inputs = [f"z{i}" for i in range(n)] + [f"W0_{i}" for i in range(n)] + ["hs", "_big", "err"]
    body = []
    for k in range(copies):
        lane, sfx = ("b", "") if k == 0 else (f"b + {k}*S", f"_J{k}")
        body += [f"hs{sfx} = HS[{lane}]", f"_big{sfx} = 0.0"] + [f"z{i}{sfx} = Zc[{i}, {lane}]" for i in range(n)]
        body += [f"W0_{i}{sfx} = Wc[{i}, {lane}]" for i in range(n)]
    body += jam(al, inputs, copies)
    for k in range(copies):  # d and wl are names assigned in al: copy k has them with the suffix
        lane, sfx = ("b", "") if k == 0 else (f"b + {k}*S", f"_J{k}")
        body += [f"ERR[{lane}] = err{sfx}", f"BIG[{lane}] = _big{sfx}"]
        body += [f"Dc[{i}, {lane}] = {d[i]}{sfx}" for i in range(n)]
        body += [f"Lc[{i}, {lane}] = {wl[i]}{sfx}" for i in range(n)]
    load = [f"Zc[{i}, b] = Z[nxt, {i}]; Ec[{i}, b] = 0.0" for i in range(n)]
    load += [f"z{i} = Zc[{i}, b]" for i in range(n)] + [ln.strip() for ln in fl]
    load += [f"Wc[{i}, b] = {w[i]}" for i in range(n)]
    load += ["IDX[b] = nxt; T[b] = t0; H[b] = H0[nxt]; ns[b] = 0; nr[b] = 0; nxt += 1"]
    return _LANES.format(n=n, S=LANES // copies, C=copies * (LANES // copies), load4=_indent(load, 4),
                         body=_indent(body, 4), chk=" + ".join(f"Dc[{i}, b]" for i in range(n)),
                         accept_fac=controller.accepted_source(order), reject_fac=controller.rejected_source(order),
                         accept=_accept_lines(pl), load6=_indent(load, 6))


def _accept_lines(pl):
    """The accepted step of lane b: the compensated sum of the increment Dc and the next first stage
    Lc; for a projected pair the end point Zc + Dc is projected onto the lane's targets CZ[IDX[b]]
    first (:func:`integrators.codegen.programs._project_accepted`) and the next first stage is taken there."""
    n = pl.st.n
    if pl.proj is None:
        lines = [f"for i in range({n}):",
                 "    _y = Dc[i, b] + Ec[i, b]; _s = Zc[i, b] + _y; Ec[i, b] = (Zc[i, b] - _s) + _y; Zc[i, b] = _s",
                 "    Wc[i, b] = Lc[i, b]"]
    else:
        src = batchgen.EnsembleSource(pl.st)
        src.indent, src.count = 0, 10 ** 6    # names apart from those of the attempt
        zq = src.assign("zq", [f"Zc[{i}, b] + Dc[{i}, b]" for i in range(n)])
        wp, inc = programs._project_accepted(src, pl.proj, zq, [f"CZ[IDX[b], {k}]" for k in range(pl.proj.p)],
                                             pl.lie)
        lines = src.lines + [f"_y = (Dc[{i}, b] + {inc[i]}) + Ec[{i}, b]; _s = Zc[{i}, b] + _y; "
                             f"Ec[{i}, b] = (Zc[{i}, b] - _s) + _y; Zc[{i}, b] = _s; Wc[{i}, b] = {wp[i]}"
                             for i in range(n)]
    return "\n".join(" " * 24 + ln for ln in lines)


_LANES = """
@numba.njit(parallel=True, cache=CACHE, error_model="numpy")
def ensemble(t0, t1, H0, rtol, atol, max_step, max_steps, Z, OUT, ST, TE, NS, NR, CZ, G):
    B = Z.shape[0]
    direction = 1.0 if t1 > t0 else -1.0
    per = (B + G - 1) // G
    S = {S}
    C = {C}
    for g in numba.prange(G):
        lo = g*per
        hi = min(B, lo + per)
        Zc = np.zeros(({n}, C)); Ec = np.zeros(({n}, C)); Wc = np.zeros(({n}, C))
        Dc = np.zeros(({n}, C)); Lc = np.zeros(({n}, C)); ERR = np.zeros(C); BIG = np.zeros(C)
        T = np.full(C, t0); H = np.zeros(C); HS = np.zeros(C); LAST = np.zeros(C, np.bool_)
        IDX = np.full(C, -1, np.int64); ns = np.zeros(C, np.int64); nr = np.zeros(C, np.int64)
        nxt = lo
        nact = 0
        for b in range(C):
            if nxt < hi:
{load4}
                nact += 1
        while nact > 0:
            for b in range(C):
                hb = min(H[b], max_step)
                LAST[b] = direction*(T[b] + direction*hb - t1) >= 0.0
                if LAST[b]:
                    hb = abs(t1 - T[b])
                H[b] = hb
                HS[b] = 0.0 if IDX[b] < 0 else direction*hb
            for b in range(S):
{body}
            for b in range(C):
                if IDX[b] < 0:
                    continue
                err = ERR[b]
                if not (err == err) or BIG[b] > 256.0:
                    err = np.inf
                fin = False
                status = 0
                if err <= 1.0:
                    chk = {chk}
                    if not (chk - chk == 0.0):
                        fin = True
                        status = -1
                    else:
{accept}
                        T[b] = t1 if LAST[b] else T[b] + HS[b]
                        ns[b] += 1
                        {accept_fac}
                        H[b] = H[b]*fac
                        fin = LAST[b]
                        if not fin and ns[b] >= max_steps:
                            fin = True
                            status = -2
                else:
                    nr[b] += 1
                    {reject_fac}
                    H[b] = H[b]*fac
                    if H[b] < 10.0*2.2e-16*abs(T[b]) or H[b] < 1e-300:
                        fin = True
                        status = -1
                if fin:
                    k = IDX[b]
                    for i in range({n}):
                        OUT[k, i] = Zc[i, b] + Ec[i, b]
                    ST[k] = status
                    TE[k] = T[b]
                    NS[k] = ns[b]
                    NR[k] = nr[b]
                    if nxt < hi:
{load6}
                    else:
                        IDX[b] = -1
                        nact -= 1
"""


def _load(text):
    """The function ``ensemble`` of the generated module ``text`` (:func:`integrators.backends.numba_kernels.load_module`)."""
    return numba_kernels.load_module(text, "liedyn_ens", "the compiled ensemble")["ensemble"]


def _args(n):
    return (", ".join(f"Z[b, {i}]" for i in range(n)), ", ".join(["0.0"] * n))


def adaptive_independent(pl, Z, H0, t0, t1, rtol, atol, max_step, max_steps=10**6, t_eval=None):
    """Each row of Z (B, n) integrated from t0 to t1 by the adaptive pair of plan ``pl`` with its own
    first step H0[b], at most ``max_steps`` accepted steps each; returns (Y (B, n) final states (the
    last finite one when a run failed, the state reached when the budget was spent), status (B,): 0,
    -1 (the step size collapsed) or -2 (the budget), t_end (B,), nsteps (B,), nrejected (B,)).
    ``t_eval`` (sorted in the direction of integration): each trajectory's loop also fills its column
    of the output grid from its own accepted steps (:mod:`integrators.codegen.dense_source`; the
    lanes are not used then), returned as a sixth item YE (G, B, n), a trajectory that stopped early
    holding its last finite state at the later times."""
    n = pl.st.n
    lanes = t_eval is None and ((pl.st.closed == "so3" and pl.lie) or (not pl.lie and pl.proj is not None))
    if lanes:
        key = (pl.st.key, pl.tab.name, pl.lie, pl.terms, JAM, None if pl.proj is None else pl.proj.key)
        fn = _LANE_FNS.get(key)
        if fn is None:  # writing the source takes milliseconds: once per structure and method
            fn = _LANE_FNS[key] = _load(lanes_source(pl))
    else:
        zb, zeros = _args(n)
        store = "\n".join(f"        OUT[b, {i}] = out[{8 + i}] + out[{8 + n + i}]" for i in range(n))
        cz = "".join(f", CZ[b, {k}]" for k in range(0 if pl.proj is None else pl.proj.p))
        text = (batchgen.adaptive_source(pl.st, pl.tab, pl.lie, pl.terms, pl.proj, grid=t_eval is not None)
                + (_ADAPTIVE if t_eval is None else _ADAPTIVE_GRID).format(n=n, never=_NEVER, zb=zb, zeros=zeros,
                                                                        store=store, cz=cz))
        fn = _load(text)
    Z = np.ascontiguousarray(Z, dtype=float)
    B = Z.shape[0]
    out = np.empty_like(Z)
    st, te = np.empty(B, np.int64), np.empty(B)
    ns, nr = np.empty(B, np.int64), np.empty(B, np.int64)
    args = (float(t0), float(t1), np.ascontiguousarray(H0, dtype=float), float(rtol), float(atol), float(max_step),
            int(max_steps), Z, out, st, te, ns, nr)
    args += (np.ascontiguousarray(pl.targets(Z)),)   # the projection's targets C(y0) per trajectory ((B, 0): none)
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
    if t_eval is None:
        return out, st, te, ns, nr
    for b in np.flatnonzero(st != 0):   # stopped early: its last finite state at the later grid times
        YE[GI[b]:, b] = out[b]
    return out, st, te, ns, nr, YE


def fixed_lanes_source(pl, copies=JAM):
    """Module text of the fixed-step lane kernel (so(3) and se(3) RKMK: the step with the
    branch-free exponential of :class:`integrators.codegen.batchgen.EnsembleSource`, no call, no branch).

    The trajectories go in chunks of C = copies * S lanes (one chunk per ``numba.prange``
    iteration); a step of all lanes is the loop over s < S computing the lanes s, s + S, ...,
    s + (copies - 1) S (:func:`jam`), then the compensated sums. ``BAD[b]`` marks a trajectory whose
    exponential left the series' range (|x| > 16 in some step) or whose end state is not finite:
    the caller runs it again with the one-trajectory code."""
    n = pl.st.n
    z = [f"z{i}" for i in range(n)]
    src = batchgen.EnsembleSource(pl.st)
    src.lanes = True
    Ks = programs._stages(src, pl.tab, z, "h", pl.lie, pl.terms)
    _, d = programs._increment(src, Ks, pl.tab.b, z, pl.lie)
    body = []
    for k in range(copies):
        lane, sfx = ("b", "") if k == 0 else (f"b + {k}*S", f"_J{k}")
        body += [f"_big{sfx} = BIG[{lane}]"] + [f"z{i}{sfx} = Zc[{i}, {lane}]" for i in range(n)]
    body += jam(src.lines, z + ["_big"], copies)
    for k in range(copies):
        lane, sfx = ("b", "") if k == 0 else (f"b + {k}*S", f"_J{k}")
        body += [f"BIG[{lane}] = _big{sfx}"] + [f"Dc[{i}, {lane}] = {d[i]}{sfx}" for i in range(n)]
    S = LANES // copies
    return f"""
@numba.njit(parallel=True, cache=CACHE, error_model="numpy")
def ensemble(h, nsteps, save_every, Z, YS, BAD):
    B = Z.shape[0]
    S = {S}
    C = {copies * S}
    for g in numba.prange((B + C - 1) // C):
        lo = g*C
        m = min(B, lo + C) - lo
        Zc = np.zeros(({n}, C)); Ec = np.zeros(({n}, C)); Dc = np.zeros(({n}, C)); BIG = np.zeros(C)
        for b in range(m):
            for i in range({n}):
                Zc[i, b] = Z[lo + b, i]
        j = 1
        for k in range(1, nsteps + 1):
            for b in range(S):
{_indent(body, 4)}
            for i in range({n}):
                for b in range(C):
                    _y = Dc[i, b] + Ec[i, b]; _s = Zc[i, b] + _y; Ec[i, b] = (Zc[i, b] - _s) + _y; Zc[i, b] = _s
            if k % save_every == 0 or k == nsteps:
                for b in range(m):
                    for i in range({n}):
                        YS[j, lo + b, i] = Zc[i, b] + Ec[i, b]
                j += 1
        for b in range(m):
            chk = {" + ".join(f"Zc[{i}, b]" for i in range(n))}
            BAD[lo + b] = not (BIG[b] <= 256.0) or not (chk - chk == 0.0)
"""


def fixed_parallel(pl, Z, t0, h, n, save_every, K):
    """n fixed steps of size h from each row of Z (B, dim); returns (ts (K,), ys (K, B, dim), done (B,),
    saves (B,)): a trajectory that overflowed has done < n and only its first saves[b] rows set."""
    dim = pl.st.n
    zb, zeros = _args(dim)
    Z = np.ascontiguousarray(Z, dtype=float)
    B = Z.shape[0]
    ys = np.empty((K, B, dim))
    ys[0] = Z
    done, saves = np.full(B, n, np.int64), np.full(B, K, np.int64)
    rest = np.arange(B)
    if pl.st.closed in ("so3", "se3") and pl.lie:  # the lane kernel; the trajectories it marks run below
        key = ("fixed", pl.st.key, pl.tab.name, pl.terms, JAM)
        fn = _LANE_FNS.get(key)
        if fn is None:
            fn = _LANE_FNS[key] = _load(fixed_lanes_source(pl, JAM))
        bad = np.zeros(B, np.bool_)
        with np.errstate(all="ignore"):
            fn(float(h), int(n), int(save_every), Z, ys, bad)
        rest = np.flatnonzero(bad)
    if rest.size:
        fn = _load(programs.source("fixed", pl.st, pl.tab, pl.lie, pl.terms) + _FIXED.format(zb=zb, zeros=zeros))
        Zr = np.ascontiguousarray(Z[rest])
        yr = np.empty((K, rest.size, dim))
        yr[0] = Zr
        dr, sr = np.empty(rest.size, np.int64), np.empty(rest.size, np.int64)
        with np.errstate(all="ignore"):
            fn(float(h), int(n), int(save_every), float(t0), Zr, yr, dr, sr)
        ys[:, rest], done[rest], saves[rest] = yr, dr, sr
    ks = list(range(0, n + 1, save_every)) + ([n] if n % save_every else [])
    ts = t0 + np.array(ks, dtype=float) * h  # the times the generated loop writes: t0 + k*h
    return ts, ys, done, saves
