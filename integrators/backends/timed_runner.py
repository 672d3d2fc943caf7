"""Running the generated fixed-step loop of a time-dependent field quadratic in the state.

A time-dependent coadjoint problem (``time_dependent=True``: :class:`servo.TimeDependentSystem`, forced
sleighs, a gyrostat with a varying rotor) or an ODE problem y' = f(t, y) whose field is, at every t, a
polynomial of degree <= 2 in the state (:func:`integrators.geometry.timed_quadratic.recognise`) runs an
explicit Runge-Kutta tableau in rk form (rk4, euler, midpoint, heun, rk3, ...: the fixed-step methods
whose stages are evaluations of the field) as the generated loop of
:func:`integrators.codegen.timed_source.fixed_source`, its coefficients tabled at the stage times (one
period when the period is a whole number of steps, else the whole run up to
:data:`integrators.geometry.timed_quadratic.MAX_TABLE` numbers). Modes as in
:mod:`integrators.backends.fastpath`: Python floats for one trajectory (and each of a small ensemble), numpy
columns for an ensemble, numba (a ``prange`` over the trajectories) when compiled. The adaptive pairs run
:mod:`integrators.backends.timed_adaptive`.
"""

from __future__ import annotations


import numpy as np

from ..codegen import timed_source
from ..codegen.source_text import Lines
from ..core import lost
from ..core.result import IntegrationResult
from ..geometry import recognition, timed_quadratic
from ..reference import genhelpers
from . import auto_compile, compile_child, fastpath, numba_kernels

#: ensembles up to this size run the one-trajectory code per trajectory (as fastpath.SMALL_BATCH)
SMALL_BATCH = 8

_FNS = {}


def applies(problem, method):
    """True when ``problem`` is time-dependent (or an ODE problem) and ``method`` a fixed-step tableau in
    rk form (no projection), or in rkmk form on a time-dependent coadjoint problem without forcing."""
    tab = getattr(method, "tableau", None)
    timed = getattr(problem, "kind", None) == "ode" or bool(getattr(problem, "time_dependent", False))
    if not (timed and tab is not None and getattr(method, "fixed_step", False)
            and not getattr(method, "project", True) and getattr(problem, "linear_invariants", None) is None):
        return False
    return not method.lie or (problem.kind == "coadjoint" and problem.forcing is None)



def why_not(problem, method, y0, t0=0.0):
    """None when the generated loop applies, else the reason (a sentence)."""
    if not applies(problem, method):
        return (f"{method.name} on {problem.name}: the generated loop of a time-dependent field runs the "
                f"fixed-step tableaux in rk form, and in rkmk form without forcing")
    if method.lie:
        if timed_quadratic.recognise_velocity(problem, y0, t0, getattr(problem, "period", None)) is None:
            return f"the velocity of {problem.name} is not affine in the state at fixed t (w = W(t) z + c(t))"
        return None
    if timed_quadratic.recognise(problem, y0, t0, getattr(problem, "period", None)) is None:
        return (f"the field of {problem.name} is not a polynomial of degree <= 2 in the state at fixed t (the "
                f"generated loop of an ODE or time-dependent problem is written for such fields)")
    return None


class _LieShape:
    """What the RKMK loop's text is written from: the structure constants (their closed form) and the
    dexp^-1 terms; the velocity comes from the table."""

    def __init__(self, problem, terms):
        C = np.asarray(problem.algebra.structure_constants, dtype=float)
        n = C.shape[0]
        self.st = recognition.Structure(C, np.eye(n), np.zeros(n), None, recognition.closed_form(C))
        self.terms = terms
        self.key = (self.st.key, terms)


def _module(n, tab, lie=None):
    w = Lines(indent=0)
    w.emit('run = numba.njit(run, **JIT)')
    w.emit("")
    w.emit("")
    w.emit('@numba.njit(parallel=True, **JIT)')
    w.emit("def ensemble(h, nsteps, save_every, t0, TB, S, k0, Z, YS, DONE, J):")
    w.emit("    for b in numba.prange(Z.shape[0]):")
    w.emit("        ts = np.empty(YS.shape[0])")
    zb = ", ".join(f"Z[b, {i}]" for i in range(n))
    w.emit(f"        out = run(h, nsteps, save_every, ts, YS[:, b, :], t0, TB, S, k0, {zb}, {', '.join(['0.0'] * n)})")
    w.emit("        DONE[b] = out[0]")
    w.emit("        J[b] = out[1]")
    return _text(n, tab, lie) + "\n" + w.text()


def _text(n, tab, lie=None):
    if lie is None:
        return timed_source.fixed_source(n, tab)
    return timed_source.lie_fixed_source(lie.st, tab, lie.terms)


def function(n, tab, mode, lie=None):
    """The generated loop for dimension n and tableau ``tab`` in ``mode`` ("scalar", "array", or "numba":
    then (run, ensemble)); ``lie``: the :class:`_LieShape` of an RKMK tableau (velocity tabled)."""
    key = (n, tab.name, tuple(map(tuple, tab.A)), tuple(tab.b), mode, None if lie is None else lie.key)
    fn = _FNS.get(key)
    if fn is None:
        if mode == "numba":
            ns = numba_kernels.load_module(_module(n, tab, lie), "liedyn_timed", "backend='numba'")
            fn = (ns["run"], ns["ensemble"])
        else:
            env = dict(genhelpers.SCALAR if mode == "scalar" else genhelpers.ARRAY)
            exec(compile(_text(n, tab, lie), f"<liedyn timed {tab.name} {mode}>", "exec"), env)
            fn = env["run"]
        _FNS[key] = fn
    return fn


def _fixed_marker(n, tab, lie=None):
    return numba_kernels.kernel_marker(_module(n, tab, lie), "liedyn_timed", "backend='numba'")


def _fixed_loaded(n, tab, lie=None):
    fn = _FNS.get((n, tab.name, tuple(map(tuple, tab.A)), tuple(tab.b), "numba", None if lie is None else lie.key))
    return fn is not None and all(bool(getattr(f, "signatures", ())) for f in fn)


def _stride(n, tab, lie=None):
    return len(tab.A) * n * ((1 + n) if lie is not None else timed_quadratic.nfeatures(n))


def _fixed_warm(n, tab, lie=None):
    """Compile (or load) the numba loop and ensemble with the argument types of :func:`run_fixed`."""
    run, ens = function(n, tab, "numba", lie)
    TB = np.zeros(_stride(n, tab, lie))
    run(1e-3, 1, 1, np.empty(2), np.empty((2, n)), 0.0, TB, 1, 0, *([0.0] * (2 * n)))
    ens(1e-3, 1, 1, 0.0, TB, 1, 0, np.zeros((2, n)), np.empty((2, 2, n)), np.empty(2, np.int64),
        np.empty(2, np.int64))
    auto_compile.write_marker(_fixed_marker(n, tab, lie))


def _job(n, tab, lie):
    return compile_child.Job(_fixed_warm, (n, tab, lie), _fixed_marker(n, tab, lie))


def choose_fixed(n, tab, backend, work, lie=None):
    """"numba" or "numpy" for a fixed-step run of estimated ``work``: backend "auto" by
    :func:`integrators.backends.auto_compile.choose_kernel` (no call waits on a compiler), others as
    :func:`integrators.backends.fastpath.choose_backend`, but a backend="numba" run whose loop is neither loaded
    nor in numba's disk cache: "numpy" while it compiles in the background (a child process; the rk form in 10
    dimensions takes ~100 s to compile), "numba" from the call it is ready (policies "wait" and "off": compiled
    in the call). The compile is a :func:`_job`."""
    if backend not in ("auto", "numba") or not numba_kernels.available():
        return fastpath.choose_backend(backend, work)
    key = ("timed-fixed", n, tab.name, None if lie is None else lie.key)
    loaded = _fixed_loaded(n, tab, lie)
    if backend == "numba":
        return auto_compile.numba_or_cold(key, loaded, _fixed_marker(n, tab, lie), lambda: _job(n, tab, lie))
    return auto_compile.choose_kernel(key, loaded, lambda: _fixed_marker(n, tab, lie), lambda: _job(n, tab, lie),
                                      work, fastpath.AUTO_NUMBA_WORK, fastpath.AUTO_NUMBA_WORK)


def table(tq, tab, h, t0, nsteps, period, per_stage):
    """(TB flat, S) of :func:`integrators.geometry.timed_quadratic.table_layout` (``per_stage`` numbers a
    stage), or None when too large."""
    S, times = timed_quadratic.table_layout(tab.c, h, nsteps, period, t0)
    if S * times.shape[1] * per_stage > timed_quadratic.MAX_TABLE:
        return None
    return np.ascontiguousarray(tq.coefficients(times.ravel()).ravel()), S


def run_fixed(problem, method, y0, t0, h, n, save_every, backend):
    """n steps of ``method``'s tableau from y0 (..., dim) at t0 with the generated loop (rk form: the field
    tabled; rkmk form: the velocity tabled); an IntegrationResult (its ``backend`` the loop that ran), or
    None when the problem is not recognised or its coefficient table would be too large. ``backend``:
    "auto" (:func:`choose_fixed`), "numpy" or "numba"."""
    period = getattr(problem, "period", None)
    tab = method.tableau
    lie = None
    if method.lie:
        tq = timed_quadratic.recognise_velocity(problem, y0.reshape(-1, y0.shape[-1])[:2], t0, period)
        lie = None if tq is None else _LieShape(problem, method.terms)
    else:
        tq = timed_quadratic.recognise(problem, y0.reshape(-1, y0.shape[-1])[:2], t0, period)
    if tq is None:
        return None
    tb = table(tq, tab, h, t0, n, period, _stride(tq.n, tab, lie) // len(tab.A))
    if tb is None:
        return None
    TB, S = tb
    dim = tq.n
    asked = backend
    backend = choose_fixed(dim, tab, backend, n * max(1, y0.size // dim), lie)
    note = auto_compile.NUMBA_COLD_NOTE if asked == "numba" and backend == "numpy" else ""
    K = n // save_every + 1 + (1 if n % save_every else 0)
    mode = "numba" if backend == "numba" else "scalar"
    TBs = TB if mode == "numba" else TB.tolist()

    def one(z0):
        f = function(dim, tab, mode, lie)
        f = f[0] if mode == "numba" else f
        ts, ys = np.empty(K), np.empty((K, dim))
        ts[0], ys[0] = t0, z0
        with np.errstate(all="ignore"):
            out = f(h, n, save_every, ts, ys, t0, TBs, S, 0, *(float(v) for v in z0), *([0.0] * dim))
        return out[0], out[1], ts, ys, np.array(out[2:2 + dim]) + np.array(out[2 + dim:])

    if y0.ndim == 1:
        done, j, ts, ys, zf = one(y0)
        if done < n:
            ts, ys = ts[:j], ys[:j]
            if ts[-1] != t0 + done * h:
                ts = np.append(ts, t0 + done * h)
                ys = np.concatenate([ys, zf[None]], axis=0)
            res = IntegrationResult(t=ts, y=ys, status=-1, nsteps=done, h=h,
                                    message=f"the solution overflowed or became NaN after step {done} (t = "
                                            f"{t0 + done * h:.6g}); the last finite state is kept; reduce h")
        else:
            res = IntegrationResult(t=ts, y=ys, status=0, message="reached the end of t_span", nsteps=n, h=h)
        res.backend = backend + note
        return res
    flat = np.ascontiguousarray(y0.reshape(-1, dim), dtype=float)
    B = flat.shape[0]
    ts = t0 + np.array(list(range(0, n + 1, save_every)) + ([n] if n % save_every else []), dtype=float) * h
    ys = np.empty((K, B, dim))
    ys[0] = flat
    if mode == "numba":
        _, ens = function(dim, tab, "numba", lie)
        done, J = np.empty(B, np.int64), np.empty(B, np.int64)
        ens(float(h), int(n), int(save_every), float(t0), TB, int(S), 0, flat, ys, done, J)
        bad = np.flatnonzero(done < n)
    elif B <= SMALL_BATCH:
        bad = np.arange(B)
    else:
        f = function(dim, tab, "array", lie)
        yv = np.empty((K, dim, B))
        cols = [np.ascontiguousarray(flat[:, i]) for i in range(dim)]
        with np.errstate(all="ignore"):
            f(h, n, save_every, np.empty(K), yv, t0, TB, S, 0, *cols, *[np.zeros(B) for _ in range(dim)])
        ys[1:] = yv[1:].transpose(0, 2, 1)
        with np.errstate(invalid="ignore"):
            bad = np.flatnonzero(~np.isfinite(ys - ys).all(axis=(0, 2)))
    t_end, alive = np.full(B, t0 + n * h), np.ones(B, dtype=bool)
    for b in bad:   # a small ensemble, or the trajectories lost: one at a time, to their last finite state
        done, j, _, yb, zf = one(flat[b])
        ys[:j, b] = yb[:j]
        if done < n:
            ys[j:, b] = zf
            t_end[b], alive[b] = t0 + done * h, False
    ys = ys.reshape((K,) + y0.shape)
    res = IntegrationResult(t=ts, y=ys, status=0, message="reached the end of t_span", nsteps=n, h=h)
    if not alive.any():
        k = int(np.searchsorted(ts, t_end.max(), side="right"))
        res.t, res.y = ts[:k], ys[:k]
        if ts[k - 1] != t_end.max():
            res.t = np.append(res.t, t_end.max())
            res.y = np.concatenate([res.y, ys[-1:]], axis=0)
        res.nsteps = int(round((t_end.max() - t0) / h))
    res = lost.report_shared(res, alive, t_end, -1 if not alive.any() else 0, t0 + n * h, y0.shape[:-1],
                             lost_why=lost.FIXED_WHY)
    res.backend = backend + note
    return res
