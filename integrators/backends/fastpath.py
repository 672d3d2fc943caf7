"""Running the generated code of :mod:`integrators.codegen.programs`: backends, modes and results.

``backend`` is "numpy" (generated Python: floats for one trajectory, numpy columns for an ensemble),
"numba" (the same source jitted; MethodError when numba is missing) or "auto" (numba when it is
installed, else numpy). :func:`plan` says whether a problem/method pair has a generated path at all;
the generic steppers remain the reference (``fast=False`` in :func:`integrators.integrate`).
"""

from __future__ import annotations

import math

import numpy as np

from . import auto_compile, batch_kernels, numba_kernels
from .output_grid import OutputGrid
from .plan import plan  # noqa: F401  (fastpath.plan: what the engine calls)
from ..geometry import recognition
from ..core.errors import IntegrationInputError, MethodError
from ..core.result import IntegrationResult
from ..core import lost

BACKENDS = ("auto", "numpy", "numba")

#: fixed-step ensembles up to this size run the one-trajectory code per trajectory (the numpy
#: columns only pay off for larger ones)
SMALL_BATCH = 8

#: ensembles are stepped in chunks of this many trajectories (temporaries stay in cache)
CHUNK = 8192


#: "auto" compiles with numba only for runs of at least this many step-trajectories
AUTO_NUMBA_WORK = 1_000_000
#: an adaptive run in Python ("auto", numba installed) that has not ended after this many accepted steps
#: (about 1-3 s) continues in the compiled loop
NUMPY_CHUNK = 20_000


def choose_backend(backend, work):
    """resolve_backend, with "auto" -> numpy for runs too small to pay for compiling."""
    if backend == "auto" and work < AUTO_NUMBA_WORK:
        return "numpy"
    return resolve_backend(backend)


def resolve_backend(backend):
    """"numpy" or "numba" for a requested backend; MethodError naming the valid ones otherwise."""
    if backend not in BACKENDS:
        raise MethodError(f"unknown backend {backend!r}; backends: {', '.join(BACKENDS)}")
    if backend == "auto":
        return "numba" if numba_kernels.available() else "numpy"
    if backend == "numba":
        numba_kernels.require("backend='numba'")
    return backend


_FIELDS = {}


def field(pl):
    """The vector field f(z) = (I - P) ad*_{W z + c} z of a plan's structure for one state z (n,), in
    numpy (a handful of calls; the problem's own rhs may validate its input at every call). The
    structure was checked against the problem's callables at the initial state (recognition.recognise),
    so this is the problem's rhs up to round-off; the starting step of the adaptive pairs uses it."""
    st = pl.st
    f = _FIELDS.get(st.key)
    if f is None:
        n = st.n
        T = np.ascontiguousarray(st.C.transpose(1, 0, 2).reshape(n, n * n))   # (j, i n + k) <- C[i, j, k]
        WT, c = np.ascontiguousarray(st.W.T), st.c.copy()
        Q = None if st.P is None else np.eye(n) - st.P

        def f(z):
            g = T @ np.multiply.outer(z @ WT + c, z).ravel()   # (ad*_w z)_j = sum_ik w_i C[i, j, k] z_k
            return g if Q is None else Q @ g

        if len(_FIELDS) >= 256:        # a sweep over many problems: keep the table small
            _FIELDS.clear()
        _FIELDS[st.key] = f
    return f


def _nsaves(n, save_every):
    return n // save_every + 1 + (1 if n % save_every else 0)


def run_fixed(pl, y0, t0, h, n, save_every, backend, switch=False):
    """n fixed steps of size h from y0 (..., dim) with the generated code; an IntegrationResult. ``switch``
    (one trajectory, "auto" with numba installed, the compiled loop queued): a Python run goes in chunks of
    about NUMPY_CHUNK steps and continues compiled once that loop is ready (:func:`_fixed_chunks`)."""
    dim = pl.st.n
    K = _nsaves(n, save_every)
    mode = "numba" if backend == "numba" else "scalar"
    if y0.ndim == 1:
        ts = np.empty(K)
        ys = np.empty((K, dim))
        ts[0], ys[0] = t0, y0
        if switch and mode == "scalar" and n > NUMPY_CHUNK:
            out, last = _fixed_chunks(pl, y0, t0, h, n, save_every, ts, ys)
        else:
            with np.errstate(all="ignore"):
                out = pl.function("fixed", mode)(h, n, save_every, ts, ys, t0, *(float(v) for v in y0),
                                                 *([0.0] * dim))
            last = mode
        done, j = out[0], out[1]
        if done < n:  # the step done + 1 overflowed: keep the last finite state
            zf = np.array(out[2:2 + dim]) + np.array(out[2 + dim:2 + 2 * dim])
            ts, ys = ts[:j], ys[:j]
            if ts[-1] != t0 + done * h:
                ts = np.append(ts, t0 + done * h)
                ys = np.concatenate([ys, zf[None]], axis=0)
            res = _failed(ts, ys, done, h, t0)
        else:
            res = IntegrationResult(t=ts, y=ys, status=0, message="reached the end of t_span", nsteps=n, h=h)
        if last != mode:
            res.backend = f"numpy for the first {out[-1]} steps, then numba"
        return res
    flat = y0.reshape(-1, dim)
    B = flat.shape[0]
    ts = t0 + np.array(list(range(0, n + 1, save_every)) + ([n] if n % save_every else []), dtype=float) * h
    ys = np.empty((K, B, dim))
    ys[0] = flat
    if mode == "numba":  # a parallel compiled loop over the trajectories (integrators.backends.batch_kernels)
        ts, ys, done, saves = batch_kernels.fixed_parallel(pl, flat, t0, h, n, save_every, K)
        bad = np.flatnonzero(done < n)
    elif B <= SMALL_BATCH:  # one trajectory after the other
        bad = np.arange(B)
    else:
        f = pl.function("fixed", "array")
        yv = ys.transpose(0, 2, 1)  # (K, dim, B) view
        tw = np.empty(K)
        for s0 in range(0, B, CHUNK):
            sl = slice(s0, s0 + CHUNK)
            cols = [np.ascontiguousarray(flat[sl, i]) for i in range(dim)]
            ysl = np.empty((K, dim, cols[0].shape[0]))
            with np.errstate(all="ignore"):
                f(h, n, save_every, tw, ysl, t0, *cols, *[np.zeros_like(cols[0]) for _ in range(dim)])
            yv[1:, :, sl] = ysl[1:]
        with np.errstate(invalid="ignore"):
            bad = np.flatnonzero(~np.isfinite(ys - ys).all(axis=(0, 2)))
    # the trajectories whose state stopped being finite (and those of a small ensemble) run alone with the
    # one-trajectory code, which stops at the last finite state: a lost trajectory keeps it in its later rows
    t_end, alive = np.full(B, t0 + n * h), np.ones(B, dtype=bool)
    one = pl.function("fixed", mode)
    for b in bad:
        tb, yb = np.empty(K), np.empty((K, dim))
        tb[0], yb[0] = t0, flat[b]
        with np.errstate(all="ignore"):
            out = one(h, n, save_every, tb, yb, t0, *(float(v) for v in flat[b]), *([0.0] * dim))
        done, j = out[0], out[1]
        ys[:j, b] = yb[:j]
        if done < n:
            ys[j:, b] = np.array(out[2:2 + dim]) + np.array(out[2 + dim:])
            t_end[b], alive[b] = t0 + done * h, False
    ys = ys.reshape((K,) + y0.shape)
    res = IntegrationResult(t=ts, y=ys, status=0, message="reached the end of t_span", nsteps=n, h=h)
    if not alive.any():      # every trajectory lost: the run ends with the last of them
        k = int(np.searchsorted(ts, t_end.max(), side="right"))
        res.t, res.y = ts[:k], ys[:k]
        if ts[k - 1] != t_end.max():
            res.t = np.append(res.t, t_end.max())
            res.y = np.concatenate([res.y, ys[-1:]], axis=0)
        res.nsteps = int(round((t_end.max() - t0) / h))
    return lost.report_shared(res, alive, t_end, -1 if not alive.any() else 0, t0 + n * h, y0.shape[:-1],
                              lost_why=lost.FIXED_WHY)


def _fixed_chunks(pl, y0, t0, h, n, save_every, ts, ys):
    """The one-trajectory fixed-step loop in chunks of a multiple of save_every steps (>= NUMPY_CHUNK) while it
    runs as Python, continuing from the returned z, e (Kahan's compensation carried over) in the compiled loop
    once :func:`integrators.backends.auto_compile.continue_fixed` says it is ready: the same steps as one
    call, saved at the same steps (a chunk ends on a saved step), with t = t0 + k h of the whole run. Returns
    ((done, saves, z..., e..., steps run in Python), the last mode)."""
    dim = pl.st.n
    chunk = -(-NUMPY_CHUNK // save_every) * save_every
    z, e = [float(v) for v in y0], [0.0] * dim
    mode, k0, j, python = "scalar", 0, 1, 0
    while k0 < n:
        m = n - k0 if mode == "numba" else min(chunk, n - k0)
        tc, yc = np.empty(m // save_every + 3), np.empty((m // save_every + 3, dim))
        with np.errstate(all="ignore"):
            out = pl.function("fixed", mode)(h, m, save_every, tc, yc, t0 + k0 * h, *z, *e)
        done, jc = out[0], out[1]
        if mode == "scalar":
            python += done
        # the chunk's saves (rows 1 .. jc - 1) at its steps k = save_every, 2 save_every, ... and its last
        steps = np.arange(save_every, done + 1, save_every)
        if len(steps) < jc - 1:
            steps = np.append(steps, done)
        ts[j:j + jc - 1] = t0 + (k0 + steps) * h
        ys[j:j + jc - 1] = yc[1:jc]
        j += jc - 1
        z, e = list(out[2:2 + dim]), list(out[2 + dim:])
        k0 += done
        if done < m:
            break
        if mode == "scalar":
            mode = auto_compile.continue_fixed(pl)
    return (k0, j, *z, *e, python), mode


def _failed(ts, ys, done, h, t0):
    where = f"after step {done} (t = {t0 + done * h:.6g})" if done is not None else f"after t = {ts[-1]:.6g}"
    return IntegrationResult(t=ts, y=ys, status=-1, nsteps=done if done is not None else len(ts) - 1, h=h,
                             message=f"the solution overflowed or became NaN {where}; the last finite "
                                     f"state is kept; reduce h")


def _run_single(pl, y0, t0, t1, h0, rtol, atol, ms, save_every, mode, budget, switch, grid=None):
    """One trajectory by the generated loop, called in chunks of NUMPY_CHUNK accepted steps while it runs
    as Python (``mode`` "scalar") and ``switch`` allows the compiled loop: a run that is still going after
    a chunk continues compiled from the returned t, h, z, e (equal to an unchunked run to round-off: the
    first stage's generator is recomputed from z). ``grid``: an :class:`OutputGrid` the loop fills.
    Returns (status, t, nsteps, nrej, ts, ys, zf, mode, peak): peak the loop's (zmax, tmax, hmax) over every chunk."""
    dim = pl.st.n
    kind = "adaptive" if grid is None else "adaptive_grid"
    z, e = y0.tolist(), [0.0] * dim
    cz = (pl.targets(y0) if grid is None else grid.targets).tolist()   # C(y0), for every chunk (the grid has it)
    t, h, since, left, nsteps, nrej = t0, h0, 0, budget, 0, 0
    T, Y = [], []                 # the chunks' saved states (the first chunk's arrays start with y0)
    peak = (0.0, t0, 0.0)
    ts, ys = np.empty(64), np.empty((64, dim))
    ts[0], ys[0] = t0, y0
    while True:
        chunk = min(left, NUMPY_CHUNK) if mode == "scalar" and switch else left
        more = () if grid is None else grid.args("numba" if mode == "generic" else mode)   # (the kernel's grid)
        if mode == "numba":   # compiled: no floating-point warnings to silence
            out = pl.function(kind, mode)(t, t1, h, rtol, atol, ms, save_every, chunk, since, ts, ys, *z, *e,
                                          *cz, *more)
        else:
            with np.errstate(all="ignore"):
                out = pl.function(kind, mode)(t, t1, h, rtol, atol, ms, save_every, chunk, since, ts, ys,
                                              *z, *e, *cz, *more)
        status, t, h, ns, nr, j, ts, ys = out[:8]
        z, e = list(out[8:8 + dim]), list(out[8 + dim:8 + 2 * dim])
        if out[-3] > peak[0]:
            peak = tuple(float(v) for v in out[-3:])
        T.append(ts[:j] if not T else ts[1:j])
        Y.append(ys[:j] if not Y else ys[1:j])
        nsteps, nrej, left = nsteps + ns, nrej + nr, left - ns
        if status != -2 or left <= 0:
            break
        since = (since + ns) % save_every
        mode = auto_compile.continue_with(pl, t1, rtol, atol, ms, grid is not None)   # never waits on a compiler
        ts, ys = np.empty(64), np.empty((64, dim))
        ts[0] = t
    zf = None if status == 0 else np.array(z) + np.array(e)
    if len(T) == 1:
        return status, t, nsteps, nrej, T[0], Y[0], zf, mode, peak
    return status, t, nsteps, nrej, np.concatenate(T), np.concatenate(Y), zf, mode, peak


def run_adaptive(pl, y0, t0, t1, h0, rtol, atol, max_step, save_every, backend, max_steps=10**6, switch=False,
                 t_eval=None):
    """The generated adaptive loop from y0 (..., dim) (an ensemble shares one step sequence), at most
    ``max_steps`` accepted steps; ``switch``: a single trajectory that outlasts NUMPY_CHUNK steps in Python
    continues compiled (backend "auto" with numba installed). Returns (IntegrationResult, nsteps,
    nrejected); the result's ``backend`` says which loop ran. ``t_eval`` (sorted in the direction of
    integration, within t_span): the loop fills the states at these times after each accepted step from
    the pair's continuous extension (:mod:`integrators.codegen.dense_source`; the generic kernel,
    ``backend`` "generic", fills it in its loop too) and saves no step but the last; the result's t, y are
    then the times reached and their states."""
    dim = pl.st.n
    cap = 64
    mode = backend if backend in ("numba", "generic") else "scalar"   # generic: auto_compile.choose
    ms = math.inf if max_step is None else float(max_step)
    budget = int(max_steps)
    grid = None
    if t_eval is not None:
        save_every = budget + 1      # the grid is the output: no step is saved but the last
        G, B = len(t_eval), y0.size // dim
        layout = (G, dim) if y0.ndim == 1 else (G, B, dim) if mode == "numba" else (G, dim, B)
        flat = y0.reshape(-1, dim)
        grid = OutputGrid(t_eval, layout, pl, pl.targets(y0 if y0.ndim == 1 else flat), t1 < t0)
        grid.start(t0, y0 if y0.ndim == 1 else flat if mode == "numba" else flat.T)
    used = auto_compile.label(backend)
    if y0.ndim == 1:
        status, t, nsteps, nrej, ts, ys, zf, last, peak = _run_single(pl, y0, t0, t1, h0, rtol, atol, ms,
                                                                      save_every, mode, budget, switch, grid)
        if last != mode:
            used = f"numpy for the first {NUMPY_CHUNK} steps, then {auto_compile.label(last)}"
    elif mode == "numba":  # compiled ensemble: one loop over the trajectories inside every stage
        f = pl.function("adaptive_batch" if grid is None else "adaptive_batch_grid", "numba")
        Z = np.ascontiguousarray(y0.reshape(-1, dim))
        E = np.zeros_like(Z)
        ts = np.empty(cap)
        ys = np.empty((cap,) + Z.shape)
        ts[0], ys[0] = t0, Z
        CZ = () if pl.proj is None else (np.ascontiguousarray(pl.targets(Z)),)
        alive, t_end, FZ = np.ones(Z.shape[0], np.bool_), np.full(Z.shape[0], float(t0)), np.zeros_like(Z)
        with np.errstate(all="ignore"):
            status, t, _, nsteps, nrej, j, ts, ys = f(t0, t1, h0, rtol, atol, ms, save_every, budget, 0, ts, ys,
                                                      Z, E, *CZ, alive, t_end, FZ,
                                                      *(() if grid is None else grid.args(mode)))
        ts, ys = ts[:j], ys[:j].reshape((j,) + y0.shape)
        zf = np.where(alive[:, None], Z + E, FZ).reshape(y0.shape)
    else:
        f = pl.function("adaptive" if grid is None else "adaptive_grid", "array")
        flat = y0.reshape(-1, dim)
        cols = [np.ascontiguousarray(flat[:, i]) for i in range(dim)]
        ts = np.empty(cap)
        ys = np.empty((cap, dim, flat.shape[0]))
        ts[0], ys[0] = t0, flat.T
        cz = [np.ascontiguousarray(v) for v in np.moveaxis(pl.targets(flat), -1, 0)]
        alive, t_end = np.ones(flat.shape[0], np.bool_), np.full(flat.shape[0], float(t0))
        FZ = np.zeros((dim, flat.shape[0]))
        with np.errstate(all="ignore"):
            out = f(t0, t1, h0, rtol, atol, ms, save_every, budget, 0, ts, ys, *cols,
                    *[np.zeros_like(c) for c in cols], *cz, alive, t_end, FZ,
                    *(() if grid is None else grid.args("array")))
        status, t, _, nsteps, nrej, j, ts, ys = out[:8]
        ts = ts[:j]
        ys = ys[:j].transpose(0, 2, 1).reshape((j,) + y0.shape)
        zf = (np.stack(out[8:8 + dim], -1) + np.stack(out[8 + dim:], -1))
        zf = np.where(alive[:, None], zf, FZ.T).reshape(y0.shape)
    run_status = int(status)
    if status == 0:
        msg = "reached the end of t_span"
    else:
        msg = stop_message(status, t, budget)
        status = -1
        if np.all(np.isfinite(zf)) and ts[-1] != t:
            ts = np.append(ts, t)
            ys = np.concatenate([ys, zf[None]], axis=0)
    res = IntegrationResult(t=ts, y=ys, status=int(status), message=msg, nsteps=int(nsteps))
    if y0.ndim == 1:
        res.peak = peak
    if grid is not None:   # the times reached and their states, in the layout of y0
        k = grid.filled
        ye = grid.ye[:k] if y0.ndim == 1 or mode == "numba" else grid.ye[:k].transpose(0, 2, 1)
        if y0.ndim > 1:   # a lost trajectory holds its last finite state after its t_end
            lost.hold_after(grid.te[:k], ye, t_end, ~alive, zf.reshape(-1, dim))
        res.t, res.y = grid.te[:k], ye.reshape((k,) + y0.shape)
    if y0.ndim > 1:   # the trajectories an ensemble lost (integrators.engine.freeze)
        lost.report_shared(res, alive, t_end, run_status, t, y0.shape[:-1], budget, lost.SHARED_WHY)
    res.backend = used
    return res, int(nsteps), int(nrej)


def stop_message(status, t, max_steps):
    """Why an adaptive run stopped before t1: status -1 (the step size collapsed) or -2 (the budget)."""
    if status == -2:
        return (f"the step budget of {max_steps} accepted steps was spent at t = {t:.6g} before the end of "
                f"t_span (the solution needs smaller steps than that budget allows); pass a larger max_steps "
                f"to go further")
    return (f"the step size fell below 10 eps |t| at t = {t:.6g} (overflow, NaN or a singularity); the "
            f"last finite state is kept")


def step_function(pl, backend):
    """One step z -> z1 of the method with step tau, for event location: f(t, y, tau)."""
    mode = "numba" if backend == "numba" else "scalar"
    f1 = pl.function("step", mode)
    fa = None

    def step(t, y, tau):
        y = np.asarray(y, dtype=float)
        if y.ndim == 1:
            return np.array(f1(float(tau), *(float(v) for v in y)))
        nonlocal fa
        if fa is None:
            fa = pl.function("step", "array")
        flat = y.reshape(-1, y.shape[-1])
        out = fa(float(tau), *(np.ascontiguousarray(flat[:, i]) for i in range(flat.shape[1])))
        return np.stack(out, -1).reshape(y.shape)

    return step


class GeneratedStepper:
    """The stepper interface (``step(t, y, h) -> y1``, ``fevals``) over the generated one-step function of a
    plan (:func:`step_function`, numpy backend): the events of a fixed-step method locate with it."""

    def __init__(self, pl, fevals):
        self.step, self.fevals = step_function(pl, "numpy"), fevals


def no_plan_reason(problem, lie, proj):
    """Why :func:`plan` found no generated path for ``problem`` (for the MethodError of backend='numba')."""
    if getattr(problem, "kind", None) != "coadjoint":
        return f"only coadjoint problems have generated code ({problem.name} is a {problem.kind} problem)"
    if getattr(problem, "time_dependent", False):
        return (f"{problem.name} depends on t (time_dependent=True) and the generated code is written for "
                f"autonomous problems; the numpy steppers take it (backend='numpy' or 'auto')")
    st = recognition.recognise(problem, np.zeros(problem.dim) + 0.5)
    if st is None:
        return (f"the generator does not recognise {problem.name}: its velocity must be affine in z (w = W z + c), "
                f"its forcing a multiplier force of its linear invariants, its dimension at most 12")
    if lie:
        return (f"an adaptive RKMK pair has generated code for the forcing of {problem.name} on one trajectory; "
                f"an ensemble of it runs the numpy reference loop")
    return f"the Casimir projection has no generated code for the forcing of {problem.name}"


def reference_label(problem, lie):
    """``result.backend`` of a run of the numpy reference loop where generated code was asked for: "numpy (generic
    reference)", with the reason for a forced coadjoint problem (a forcing the generator does not recognise as
    the multiplier force of linear invariants, a Python callable only: it keeps the reference loop and says so)."""
    if getattr(problem, "kind", None) == "coadjoint" and problem.forcing is not None and \
            not getattr(problem, "time_dependent", False):
        return f"numpy (generic reference: {no_plan_reason(problem, lie, None)})"
    return "numpy (generic reference)"


def require_compiled(backend, why):
    """backend='numba' on a run with no compiled path: MethodError saying why (the option is never ignored)."""
    if backend == "numba":
        raise MethodError(f"backend='numba' asks for compiled code, which this run does not have: {why}; "
                          f"backend='auto' compiles where a compiled path exists, 'numpy' runs the numpy code")


def check_backend_args(backend, fast):
    """backend must be one of BACKENDS; fast=False (the reference) with backend='numba' is contradictory."""
    if backend not in BACKENDS:
        raise MethodError(f"unknown backend {backend!r}; backends: {', '.join(BACKENDS)}")
    if not fast and backend == "numba":
        raise IntegrationInputError("fast=False asks for the generic numpy reference; backend='numba' "
                                    "asks for compiled code: give one of them")
