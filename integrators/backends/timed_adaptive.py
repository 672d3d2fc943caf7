"""Running the generated adaptive loop of a time-dependent field quadratic in the state.

An embedded pair in rk form (rk45, rk853, tsit5, ...) on a time-dependent problem that gives the source of its
coefficients (:meth:`servo.TimeDependentSystem.coefficient_source`), or on an ODE or time-dependent problem with a
period (the coefficients a Fourier fit over one period, :mod:`integrators.geometry.timed_fourier`), runs the
generated loop of :func:`integrators.codegen.timed_source.adaptive_source`: one trajectory on Python floats or
compiled, an ensemble with one shared step on numpy columns or compiled (:func:`run_ensemble`). The fixed-step
methods run :mod:`integrators.backends.timed_runner`.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np

from ..codegen import timed_source
from ..core.result import IntegrationResult
from ..geometry import timed_fourier, timed_quadratic
from ..reference import genhelpers
from . import auto_compile, compile_child, fastpath, numba_kernels


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
                        + '\ncoef = numba.njit(coef, **JIT)\n\n'
                        + timed_source.adaptive_source(self.n, self.tab)
                        + '\nrun = numba.njit(run, **JIT)\n')
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
        return ('import math\n' + self.coef_text + '\ncoef = numba.njit(coef, **JIT)\n\n'
                + timed_source.adaptive_source(self.n, self.tab, batch=True)
                + '\nrun = numba.njit(run, **JIT)\n')

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
        """The marker of the compiled one-trajectory loop (:meth:`warm`), or None without a writable cache."""
        return numba_kernels.kernel_marker(self.text, "liedyn_tad", "backend='numba'")

    def warm(self):
        """Compile (or load) the numba loop with the argument types of :func:`run_adaptive` (a run of no step)."""
        n = self.n
        self.function("numba")(1.0, 1.0, 1.0, 1e-6, 1e-6, math.inf, 1, 1, 0, np.empty(4), np.empty((4, n)),
                               *([0.0] * (2 * n)))
        auto_compile.write_marker(self.marker())


_ADAPTIVE = {}
_BATCH_MODULES = {}


def _batch_full(text):
    return numba_kernels.header(True) + numba_kernels.prelude(numba_kernels.cache_dir() is not None) + text


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


def choose_ensemble(pl, backend, work):
    """"numba" or "numpy" for an ensemble of plan ``pl``: under "auto" "numba" when its compiled ensemble is already
    loaded in this process (no call waits on a compiler; nothing is queued); backend="numba" by
    :func:`integrators.backends.auto_compile.numba_or_cold` (numpy while a child process compiles it)."""
    if backend == "auto":
        return "numba" if pl.compiled("numba_batch") else "numpy"
    if backend == "numba" and numba_kernels.available():
        marker = pl.batch_marker()
        return auto_compile.numba_or_cold(("timed-batch", pl.text), pl.compiled("numba_batch"), marker,
                                          lambda: compile_child.Job(AdaptivePlan.warm_batch, (pl,), marker))
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


def choose_adaptive(pl, backend, work):
    """"numba" or "numpy" for a run of plan ``pl``: backend "auto" by the rules of
    :func:`integrators.backends.auto_compile.choose_kernel` (no call waits on a compiler), "numba" by
    :func:`integrators.backends.auto_compile.numba_or_cold` (numpy while a child process compiles the loop; the
    coefficient text of a 10-dimensional field takes minutes)."""
    if backend not in ("auto", "numba") or not numba_kernels.available():
        return fastpath.choose_backend(backend, work)
    key = ("timed-adaptive", pl.text)

    def job():
        return compile_child.Job(AdaptivePlan.warm, (pl,), pl.marker())
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
        zf = np.array(out[8:8 + n]) + np.array(out[8 + n:8 + 2 * n])
        if np.all(np.isfinite(zf)) and ts[-1] != t:
            ts, ys = np.append(ts, t), np.concatenate([ys, zf[None]], axis=0)
    res = IntegrationResult(t=ts, y=ys, status=-1 if status else 0, message=msg, nsteps=int(nsteps),
                            peak=tuple(float(v) for v in out[-3:]))
    return res, int(nsteps), int(nrej)
