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
columns for an ensemble, numba (a ``prange`` over the trajectories) when compiled.
"""

from __future__ import annotations

import hashlib
import math
import sys

import numpy as np

from ..codegen import timed_source
from ..codegen.source_text import Lines
from ..core import lost
from ..core.result import IntegrationResult
from ..geometry import recognition, timed_fourier, timed_quadratic
from ..reference import genhelpers
from . import auto_compile, compile_child, fastpath, numba_kernels
from .plan import Plan

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
    """What the RKMK loop's text is written from: the structure constants (their closed form, in ``st``) and the
    dexp^-1 terms; the velocity comes from the table."""

    def __init__(self, st, terms):
        self.st, self.terms = st, terms
        self.key = (self.st.key, terms)

    @classmethod
    def of(cls, problem, terms):
        C = np.asarray(problem.algebra.structure_constants, dtype=float)
        n = C.shape[0]
        return cls(recognition.Structure(C, np.eye(n), np.zeros(n), None, recognition.closed_form(C)), terms)


def _module(n, tab, lie=None):
    w = Lines(indent=0)
    w.emit('run = numba.njit(run, cache=CACHE, error_model="numpy")')
    w.emit("")
    w.emit("")
    w.emit('@numba.njit(parallel=True, cache=CACHE, error_model="numpy")')
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
    d = numba_kernels.cache_dir()
    if d is None:
        return None
    numba = numba_kernels.require("backend='numba'")
    tag = f"{_module(n, tab, lie)}|{numba.__version__}|{sys.version_info[:2]}"
    return d / f"liedyn_timed_{hashlib.sha1(tag.encode()).hexdigest()[:20]}.ok"


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


def _warm_job(pl):
    """:func:`_fixed_warm` for a :class:`integrators.backends.compile_child.Job` (the child rebuilds a plan from
    its data): ``pl.st`` the structure of the rkmk form (``pl.lie``) or a placeholder of the dimension (the rk
    form's text depends on the dimension and the tableau only), ``pl.terms`` the dexp^-1 terms."""
    _fixed_warm(pl.st.n, pl.tab, _LieShape(pl.st, pl.terms) if pl.lie else None)


def _job(n, tab, lie):
    st = lie.st if lie is not None else recognition.Structure(np.zeros((n, n, n)), np.eye(n), np.zeros(n))
    pl = Plan(st, tab, lie is not None, None if lie is None else lie.terms)
    return compile_child.Job(_warm_job, pl, (), _fixed_marker(n, tab, lie))


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
        lie = None if tq is None else _LieShape.of(problem, method.terms)
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


class AdaptivePlan:
    """The generated adaptive loop of an embedded pair (rk form) for a time-dependent problem that gives the
    source of its coefficients (``problem.coefficient_source()``: ``coef(t)``, the coefficients of its
    quadratic field, e.g. :meth:`servo.TimeDependentSystem.coefficient_source`), checked against the
    coefficients read off the problem's own field (:class:`integrators.geometry.timed_quadratic.TimedQuadratic`)."""

    def __init__(self, n, tab, coef_text, coef_py=None):
        self.n, self.tab, self.coef_text = n, tab, coef_text
        self.text = coef_text + "\n" + timed_source.adaptive_source(n, tab)
        self.coef_py = coef_py     # coef(t) for the Python-float loop instead of the text's (numpy: a Fourier fit)
        self._fns = {}

    def __reduce__(self):
        """Pickled as its data for a background compile's child process (the Python loop's ``coef_py`` is not
        the compiled loop's: left out)."""
        return (AdaptivePlan, (self.n, self.tab, self.coef_text))

    def function(self, mode):
        fn = self._fns.get(mode)
        if fn is None:
            if mode == "array":      # an ensemble's numpy columns, one shared step
                env = dict(genhelpers.ARRAY, math=__import__("math"), np=np)
                text = self.coef_text + "\n" + timed_source.adaptive_source(self.n, self.tab, columns=True)
                exec(compile(text, f"<liedyn timed adaptive columns {self.tab.name}>", "exec"), env)
                if self.coef_py is not None:
                    env["coef"] = self.coef_py
                fn = env["run"]
            elif mode == "numba_batch":      # an ensemble compiled, one shared step
                fn = _load_batch(self._batch_text())["run"]
            elif mode == "numba":
                text = ('import math\n' + self.coef_text
                        + '\ncoef = numba.njit(coef, cache=CACHE, error_model="numpy")\n\n'
                        + timed_source.adaptive_source(self.n, self.tab)
                        + '\nrun = numba.njit(run, cache=CACHE, error_model="numpy")\n')
                fn = numba_kernels.load_module(text, "liedyn_tad", "backend='numba'")["run"]
            else:
                env = dict(genhelpers.SCALAR, math=__import__("math"))
                exec(compile(self.text, f"<liedyn timed adaptive {self.tab.name}>", "exec"), env)
                if self.coef_py is not None:
                    env["coef"] = self.coef_py
                fn = env["run"]
            self._fns[mode] = fn
        return fn

    def _batch_text(self):
        return ('import math\n' + self.coef_text + '\ncoef = numba.njit(coef, cache=CACHE, error_model="numpy")\n\n'
                + timed_source.adaptive_source(self.n, self.tab, batch=True)
                + '\nrun = numba.njit(run, cache=CACHE, error_model="numpy")\n')

    def compiled(self, mode="numba"):
        fn = self._fns.get(mode)
        return fn is not None and bool(getattr(fn, "signatures", ()))

    def batch_marker(self):
        """The marker of the compiled shared-step ensemble loop (:meth:`warm_batch`), or None without a writable
        cache directory."""
        return numba_kernels.kernel_marker(_batch_full(self._batch_text()), "liedyn_tadb", "backend='numba'")

    def warm_batch(self):
        """Compile (or load) the shared-step ensemble loop with the argument types of :func:`run_ensemble` (an
        ensemble of one, no step), then write its marker."""
        n = self.n
        Z = np.zeros((1, n))
        self.function("numba_batch")(1.0, 1.0, 1.0, 1e-6, 1e-6, math.inf, 1, 1, 0, np.empty(4), np.empty((4, 1, n)),
                                     Z, np.zeros_like(Z), np.ones(1, np.bool_), np.zeros(1), np.zeros_like(Z))
        auto_compile.write_marker(self.batch_marker())

    def marker(self):
        d = numba_kernels.cache_dir()
        if d is None:
            return None
        numba = numba_kernels.require("backend='numba'")
        tag = f"{self.text}|{numba.__version__}|{sys.version_info[:2]}"
        return d / f"liedyn_tad_{hashlib.sha1(tag.encode()).hexdigest()[:20]}.ok"

    def warm(self):
        """Compile (or load) the numba loop with the argument types of :func:`run_adaptive` (a run of no step)."""
        n = self.n
        self.function("numba")(1.0, 1.0, 1.0, 1e-6, 1e-6, math.inf, 1, 1, 0, np.empty(4), np.empty((4, n)),
                               *([0.0] * (2 * n)))
        auto_compile.write_marker(self.marker())


_ADAPTIVE = {}
_BATCH_MODULES = {}


def _batch_full(text):
    return numba_kernels.header(True) + f"import numba\nCACHE = {numba_kernels.cache_dir() is not None}\n\n" + text


def _load_batch(text):
    """The namespace of a compiled-ensemble module ``text`` (the batch helpers: outputs of shape (cap, B, n)),
    once per text and process, in numba's disk cache when the cache directory is writable."""
    numba_kernels.require("backend='numba'")
    full = _batch_full(text)
    digest = hashlib.sha1(full.encode()).hexdigest()[:20]
    ns = _BATCH_MODULES.get(digest)
    if ns is None:
        ns = _BATCH_MODULES[digest] = numba_kernels.load_source(full, f"liedyn_tadb_{digest}")[0]
    return ns


class _EnsembleView:
    """An :class:`AdaptivePlan` seen as the plan :func:`integrators.backends.fastpath.run_adaptive` runs an
    ensemble of (its columns and compiled-batch loops; no projection, no output grid)."""

    def __init__(self, pl):
        self.pl, self.proj = pl, None
        self.st = timed_source.TimedShape(pl.n)

    def function(self, kind, mode):
        if (kind, mode) == ("adaptive", "array"):
            return self.pl.function("array")
        if (kind, mode) == ("adaptive_batch", "numba"):
            return self.pl.function("numba_batch")
        raise KeyError((kind, mode))   # pragma: no cover - run_ensemble passes no grid

    def targets(self, y):
        return np.zeros(np.shape(y)[:-1] + (0,))


def run_ensemble(pl, y0, t0, t1, h0, rtol, atol, max_step, save_every, mode, max_steps=10**6):
    """An ensemble y0 (..., n) by the generated adaptive loop with one shared step (numpy columns, or compiled
    for ``mode`` "numba"), first step h0 (the engine's); (IntegrationResult, nsteps, nrejected) as
    :func:`integrators.backends.fastpath.run_adaptive` returns them (lost trajectories reported alike)."""
    return fastpath.run_adaptive(_EnsembleView(pl), y0, t0, t1, h0, rtol, atol, max_step, save_every,
                                 "numba" if mode == "numba" else "numpy", max_steps)


def _warm_batch(pl):
    """:meth:`AdaptivePlan.warm_batch`, by name for a :class:`integrators.backends.compile_child.Job`."""
    pl.warm_batch()


def choose_ensemble(pl, backend, work):
    """"numba" or "numpy" for an ensemble of plan ``pl``: under "auto" "numba" when its compiled ensemble is already
    loaded in this process (no call waits on a compiler; nothing is queued); backend="numba" by
    :func:`integrators.backends.auto_compile.numba_or_cold` (numpy while a child process compiles it)."""
    if backend == "auto":
        return "numba" if pl.compiled("numba_batch") else "numpy"
    if backend == "numba" and numba_kernels.available():
        marker = pl.batch_marker()
        return auto_compile.numba_or_cold(("timed-batch", pl.text), pl.compiled("numba_batch"), marker,
                                          lambda: compile_child.Job(_warm_batch, pl, (), marker))
    return fastpath.choose_backend(backend, work)


#: an adaptive run of at least this many estimated evaluations of the field has the problem derive its
#: coefficient source (servo.TimeDependentSystem: 0.1-0.7 s of sympy on se(2), about 1000-3500 evaluations
#: of its numpy field at 0.2 ms each); shorter runs take the generated loop only when the source is derived
DERIVE_EVALS = 1000


def adaptive_candidate(problem, method):
    """True when ``problem`` and ``method`` (an embedded pair in rk form) could run the generated adaptive loop:
    a time-dependent problem with ``coefficient_source``, or an ODE or time-dependent problem with a
    ``period`` (its coefficients then a Fourier fit over one period, :mod:`integrators.geometry.timed_fourier`)."""
    tab = getattr(method, "tableau", None)
    if not (tab is not None and tab.adaptive and not method.lie and not method.project):
        return False
    if getattr(problem, "linear_invariants", None) is not None:
        return False
    timed = getattr(problem, "kind", None) == "ode" or bool(getattr(problem, "time_dependent", False))
    return timed and (getattr(problem, "coefficient_source", None) is not None
                      or getattr(problem, "period", None) is not None)


def _fourier(tq, period):
    """(text of coef(t), coef for the Python loop) of the Fourier fit of ``tq`` over ``period`` (kept on tq), or
    None when the fit does not resolve the coefficients."""
    got = getattr(tq, "_fourier", None)
    if got is None or got[0] != period:
        fit = timed_fourier.fit(tq, period)
        src = None if fit is None else (timed_source.fourier_coef_source(fit), timed_fourier.coefficients_function(fit))
        got = tq._fourier = (period, src)
    return got[1]


def adaptive_plan(problem, method, y0, t0=0.0, steps=math.inf):
    """The :class:`AdaptivePlan` of a time-dependent problem with ``coefficient_source`` (a callable
    ``coefficient_source(derive=True)`` -> the text of ``coef(t)`` or None), or of an ODE or time-dependent
    problem with a ``period`` (the Fourier fit of its coefficients over one period,
    :mod:`integrators.geometry.timed_fourier`, kept with the recognised field), and an embedded pair in rk
    form; or None (no source, a run of fewer than DERIVE_EVALS estimated evaluations (``steps`` x stages)
    whose source is not derived or fitted yet, a source whose coefficients differ from the field's by more
    than 1e-9 relative at the check times, a field that is not quadratic or whose coefficients the fit does
    not resolve)."""
    if not adaptive_candidate(problem, method):
        return None
    tab = method.tableau
    derive = steps * len(tab.b) >= DERIVE_EVALS
    period = getattr(problem, "period", None)
    coef_py = None
    source = getattr(problem, "coefficient_source", None)
    text = source(derive=derive) if source is not None else None
    if not text:
        tq = timed_quadratic.recognise(problem, y0, t0, period)
        if tq is None or period is None or not (derive or getattr(tq, "_fourier", None) is not None):
            return None
        got = _fourier(tq, period)
        if got is None:
            return None
        text, coef_py = got
    key = (text, tab.name)
    pl = _ADAPTIVE.get(key)
    if pl is not None:
        return pl
    tq = timed_quadratic.recognise(problem, y0, t0, period)
    if tq is None:
        return None
    env = {"math": __import__("math")}
    exec(compile(text, "<coefficient source>", "exec"), env)
    span = getattr(problem, "period", None) or 1.0
    times = t0 + span * np.array([0.0, 0.29, 0.61, 0.97])
    want = tq.coefficients(times).reshape(len(times), -1)
    got = np.array([env["coef"](float(t)) for t in times], dtype=float)
    if got.shape != want.shape or not np.all(np.abs(got - want) <= 1e-9 * (1.0 + np.abs(want).max())):
        return None
    if len(_ADAPTIVE) >= 64:
        _ADAPTIVE.clear()
    pl = _ADAPTIVE[key] = AdaptivePlan(tq.n, tab, text, coef_py)
    return pl


def _warm_adaptive(pl):
    """:meth:`AdaptivePlan.warm`, by name for a :class:`integrators.backends.compile_child.Job`."""
    pl.warm()


def choose_adaptive(pl, backend, work):
    """"numba" or "numpy" for a run of plan ``pl``: backend "auto" by the rules of
    :func:`integrators.backends.auto_compile.choose_kernel` (no call waits on a compiler), "numba" by
    :func:`integrators.backends.auto_compile.numba_or_cold` (numpy while a child process compiles the loop; the
    coefficient text of a 10-dimensional field takes minutes)."""
    if backend not in ("auto", "numba") or not numba_kernels.available():
        return fastpath.choose_backend(backend, work)
    key = ("timed-adaptive", pl.text)

    def job():
        return compile_child.Job(_warm_adaptive, pl, (), pl.marker())
    if backend == "numba":
        return auto_compile.numba_or_cold(key, pl.compiled(), pl.marker(), job)
    return auto_compile.choose_kernel(key, pl.compiled(), pl.marker, job, work, fastpath.AUTO_NUMBA_WORK,
                                      fastpath.AUTO_NUMBA_WORK)


def run_adaptive(pl, y0, t0, t1, h0, rtol, atol, max_step, save_every, mode, max_steps=10**6):
    """One trajectory from y0 (n,) by the generated adaptive loop with first step h0 (> 0: the engine's,
    as the reference loop takes); (IntegrationResult, nsteps, nrejected) as
    :func:`integrators.engine.reference_run.reference_loop` returns them."""
    n = pl.n
    fn = pl.function("numba" if mode == "numba" else "scalar")
    ts, ys = np.empty(64), np.empty((64, n))
    ts[0], ys[0] = t0, y0
    ms = math.inf if max_step is None else float(max_step)
    with np.errstate(all="ignore"):
        out = fn(float(t0), float(t1), float(h0), float(rtol), float(atol), ms, int(save_every), int(max_steps), 0,
                 ts, ys, *(float(v) for v in y0), *([0.0] * n))
    status, t, _, nsteps, nrej, j, ts, ys = out[:8]
    ts, ys = ts[:j], ys[:j]
    if status == 0:
        msg = "reached the end of t_span"
    else:
        msg = fastpath.stop_message(status, t, max_steps)
        zf = np.array(out[8:8 + n]) + np.array(out[8 + n:])
        if np.all(np.isfinite(zf)) and ts[-1] != t:
            ts, ys = np.append(ts, t), np.concatenate([ys, zf[None]], axis=0)
    res = IntegrationResult(t=ts, y=ys, status=-1 if status else 0, message=msg, nsteps=int(nsteps))
    return res, int(nsteps), int(nrej)
