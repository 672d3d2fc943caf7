"""Running the generated tangent flow of :mod:`integrators.codegen.tangent_source` (Lyapunov spectra).

:func:`plan` says whether a problem has a generated tangent flow and, when not, why (for the MethodError
of ``backend='numba'``): a coadjoint problem recognised by :func:`integrators.geometry.recognition.recognise`
(affine velocity, no forcing or a multiplier forcing, autonomous; the Jacobian from the structure
constants), or an ODE or time-dependent problem whose field is a polynomial of degree <= 2 in the state
(:mod:`integrators.geometry.timed_quadratic`: its coefficients tabled at the stage times, the step written by
:class:`integrators.codegen.timed_source.TimedStepper`, one text for every parameter value); the leaf
"auto" or None. A :class:`TangentPlan` compiles the text once per (structure, tableau, leaf) and mode:

* "scalar": Python floats, one trajectory per call (a Python loop over a small ensemble);
* "array": numpy (B,) columns, the whole ensemble per call (an interval that is not finite for any
  trajectory stops all, as in the numpy loop);
* "numba": jitted (extra ``liedyn[fast]``); an ensemble runs as a ``numba.prange`` loop over the
  trajectories, each with its own stopping point. The module text goes to the cache directory of
  :mod:`integrators.backends.numba_kernels` (numba's disk cache: one compilation per machine).

Under backend="auto" :func:`choose_auto` takes the compiled flow whenever that needs no compiler.
"""

from __future__ import annotations

import math

import numpy as np

from ..codegen import ensemble_source, projection, timed_source
from ..codegen.tangent_source import PBIG, lyapunov_source, stages_source
from ..geometry import recognition, timed_quadratic
from ..reference import genhelpers
from . import auto_compile, compile_child, fastpath, numba_kernels, tangent_blocks

_PLANS = {}


def _inv_float(x):
    return 1.0 / x if x != 0.0 else math.inf


def _slog_float(x):
    return math.log(x) if x > 0.0 else -math.inf


def _slog_array(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(np.where(x > 0.0, x, 0.0))


def _inv_array(x):
    with np.errstate(divide="ignore"):
        return 1.0 / x




def _lbig_float(x):
    return math.log(x) if (x > PBIG or x < 1.0 / PBIG) else 0.0


def _pbig_float(x):
    return 1.0 if (x > PBIG or x < 1.0 / PBIG) else x


def _lbig_array(x):
    out = (x > PBIG) | (x < 1.0 / PBIG)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(out, np.log(np.where(out, x, 1.0)), 0.0)


def _pbig_array(x):
    return np.where((x > PBIG) | (x < 1.0 / PBIG), 1.0, x)


def _inr_float(x):
    return 1.0 / PBIG <= x <= PBIG


def _inr_array(x):
    return bool(np.all((x >= 1.0 / PBIG) & (x <= PBIG)))


def _all_finite(x):
    return bool(np.all(np.isfinite(x)))


class TangentPlan:
    """A recognised structure, a tableau and the leaf (the first ``p`` columns kept orthogonal to the
    gradients of the Casimir projection ``proj`` and the rows of ``L``)."""

    def __init__(self, st, tab, p, proj, L, ncols, tabled=False):
        self.st, self.tab, self.p, self.proj, self.L, self.ncols = st, tab, p, proj, L, ncols
        self.n = st.n
        self.tabled = tabled    # the field's coefficients from a table (timed_source)
        self.timed = None       # ... of this TimedQuadratic (set per problem by plan)
        self._fns = {}

    def __reduce__(self):
        """Pickled as its data (a background compile's child process, :mod:`integrators.backends.compile_child`)."""
        return (TangentPlan, (self.st, self.tab, self.p, self.proj, self.L, self.ncols, self.tabled))

    def text(self):
        stepper = timed_source.TimedStepper(len(self.tab.A)) if self.tabled else None
        return lyapunov_source(self.st, self.tab, self.p, self.proj, self.L, self.ncols, stepper)

    def function(self, mode):
        fn = self._fns.get(mode)
        if fn is not None:
            return fn
        if mode == "states":     # the state's steps recording their stages (Python floats, tangent_blocks)
            stepper = timed_source.TimedStepper(len(self.tab.A)) if self.tabled else None
            env = dict(genhelpers.SCALAR)
            exec(compile(stages_source(self.st, self.tab, stepper), f"<liedyn stages {self.tab.name}>", "exec"), env)
            fn = self._fns[mode] = env["states"]
            return fn
        text = self.text()
        if mode == "numba":
            ns = numba_kernels.load_module(_module_text(self), "liedyn_tan", "backend='numba'")
            fn = (ns["run"], ns["ensemble"])
        else:
            if mode == "array":
                env = dict(genhelpers.ARRAY, np=np, fin=_all_finite, inv=_inv_array, slog=_slog_array,
                           lbig=_lbig_array, pbig=_pbig_array, inr=_inr_array)
            else:
                env = dict(genhelpers.SCALAR, inv=_inv_float, slog=_slog_float, lbig=_lbig_float, pbig=_pbig_float,
                           inr=_inr_float)
            exec(compile(text, f"<liedyn tangent {self.tab.name} {mode}>", "exec"), env)
            fn = env["run"]
        self._fns[mode] = fn
        return fn


def timed(problem):
    """True when ``problem`` goes to the tabled quadratic field (:mod:`integrators.codegen.timed_source`): an
    ODE problem y' = f(t, y), or a coadjoint problem with ``time_dependent``."""
    return getattr(problem, "kind", None) == "ode" or bool(getattr(problem, "time_dependent", False))


def why_not(problem, jac, leaf, y0, t0=0.0, period=None):
    """None when the generated tangent flow applies to ``problem``, else the reason (a sentence). A
    time-dependent problem (or an ODE problem) has one when its field is quadratic in the state at every
    t (:func:`integrators.geometry.timed_quadratic.recognise`)."""
    if getattr(problem, "kind", None) not in ("coadjoint", "ode"):
        return f"{problem.name} is a {problem.kind} problem: its Jacobian is evaluated in numpy"
    if jac is not None:
        return "a Jacobian given by the caller (jac=) is evaluated in numpy"
    if callable(leaf):
        return "a leaf given as a callable (leaf=) is evaluated in numpy"
    if timed(problem):
        if timed_quadratic.recognise(problem, y0, t0, period) is None:
            return (f"the field of {problem.name} is not a polynomial of degree <= 2 in the state at fixed t (the "
                    f"generated tangent flow of an ODE or time-dependent problem is written for such fields)")
        return None
    if jac is not None:
        return "a Jacobian given by the caller (jac=) is evaluated in numpy"
    if callable(leaf):
        return "a leaf given as a callable (leaf=) is evaluated in numpy"
    if recognition.recognise(problem, y0) is None:
        return (f"the generator does not recognise {problem.name}: its velocity must be affine in z (w = W z + c), "
                f"its forcing a multiplier force of its linear invariants, its dimension at most 12")
    return None


def plan(problem, tab, y0, leaf, r, ncols=None, t0=0.0, period=None):
    """The :class:`TangentPlan` of ``problem`` (:func:`why_not` must have returned None) with tableau
    ``tab``, r normals of the leaf ("auto": the Casimirs without forcing and the linear invariants;
    None: no leaf) and ``ncols`` tangent columns (default n). A time-dependent problem's plan carries its
    :class:`integrators.geometry.timed_quadratic.TimedQuadratic` (``pl.timed``): the text depends on n, the
    tableau and the leaf only."""
    tq = None
    if timed(problem):
        tq = timed_quadratic.recognise(problem, y0, t0, period)
        st = timed_source.TimedShape(problem.dim)
    else:
        st = recognition.recognise(problem, y0)
    n = st.n
    proj, L = None, None
    if leaf is not None and r > 0:
        if problem.forcing is None:
            proj = projection.of_algebra(problem.algebra)
        L = getattr(problem, "linear_invariants", None)
        got = (0 if proj is None else proj.p) + (0 if L is None else L.shape[0])
        if got != r:  # pragma: no cover - leaf_normals and the projection read the same Casimirs
            raise RuntimeError(f"the generated leaf has {got} normals, the numpy one {r}")
    ncols = n if ncols is None else int(ncols)
    key = (st.key, tab.name, n - r, None if proj is None else proj.key, None if L is None else L.tobytes(), ncols)
    pl = _PLANS.get(key)
    if pl is None:
        if len(_PLANS) >= 128:
            _PLANS.clear()
        pl = _PLANS[key] = TangentPlan(st, tab, n - r, proj, L, ncols, tabled=tq is not None)
    if tq is None:
        return pl
    out = TangentPlan.__new__(TangentPlan)     # the shared compiled text, this problem's field
    out.__dict__.update(pl.__dict__)
    out.timed = tq
    return out


def table(pl, h, t0, nsteps, period):
    """(TB, S): the flat coefficient table of a timed plan's field at the stage times t0 + (k + c_i) h of
    the first S steps (S = the steps of one period when the period is a whole number of steps, else
    ``nsteps``; :func:`integrators.geometry.timed_quadratic.table_layout`), or None when it would hold more
    than MAX_TABLE numbers."""
    tq = pl.timed
    S, times = timed_quadratic.table_layout(pl.tab.c, h, nsteps, period, t0)
    if S * times.shape[1] * tq.n * tq.nf > timed_quadratic.MAX_TABLE:
        return None
    return np.ascontiguousarray(tq.coefficients(times.ravel()).ravel()), S


#: under "auto" a run of at least this much work (trajectory-steps x (columns + 1)) loads the compiled tangent
#: flow from numba's disk cache (about 0.5 s with numba's import) or queues its compile in the background
LOAD_WORK = 20_000


def _module_text(pl):
    extra = timed_source.TimedStepper.args if pl.tabled else ""
    return ensemble_source.tangent_module(pl.text(), extra)


def _marker(pl):
    """The file that says the plan's compiled tangent flow is in numba's disk cache (per text, numba and
    Python version), or None when the cache directory is not writable."""
    return numba_kernels.kernel_marker(_module_text(pl), "liedyn_tan", "backend='numba'")


def compiled(pl, B):
    """True when the plan's numba function for B trajectories (one, or the ``prange`` ensemble) is compiled
    or loaded in this process: a call needs no compiler."""
    fn = pl._fns.get("numba")
    return fn is not None and bool(getattr(fn[0 if B == 1 else 1], "signatures", ()))


def warm(pl, timing=None):
    """Compile (or load from numba's disk cache) the plan's numba functions with the argument types of
    :func:`run` (runs of one QR interval of one step, one and two trajectories), then write the marker."""
    n, k = pl.n, pl.ncols
    if timing is not None:
        timing = (np.zeros_like(timing[0]), 1, 0)
    for B in (1, 2):
        Y = np.zeros((B, n))
        V = np.broadcast_to(np.eye(n)[:, :k], (B, n, k)).copy()
        run(pl, Y, V, np.zeros((B, k + 4)), 0, 1, 1, 1, 1e-3, 1e-3, "numba", timing)
    auto_compile.write_marker(_marker(pl))


def warm_job(pl, size):
    """:func:`warm` in a child process (:class:`integrators.backends.compile_child.Job`): a tabled plan's table
    of ``size`` numbers as zeros (its values do not enter the compile)."""
    warm(pl, (np.zeros(size), 1, 0) if pl.tabled else None)


def _key(pl):
    return ("tangent", pl.st.key, pl.tab.name, pl.p, pl.ncols, pl.tabled, None if pl.proj is None else pl.proj.key,
            None if pl.L is None else pl.L.tobytes())


def choose_numba(pl, B, timing=None):
    """The mode of a backend="numba" run (:func:`integrators.backends.auto_compile.numba_or_cold`): "numba", or
    "numpy" while a child process compiles the tangent flow (on so(5) in a random basis it compiled in the
    call for minutes)."""
    return auto_compile.numba_or_cold(_key(pl), compiled(pl, B), _marker(pl), lambda: _job(pl, timing))


def _job(pl, timing):
    return compile_child.Job(warm_job, (pl, 0 if timing is None else int(np.size(timing[0]))), _marker(pl))


def choose_auto(pl, B, work, timing=None):
    """The mode of a backend="auto" run with numba installed, by the rules of
    :mod:`integrators.backends.auto_compile` (:func:`integrators.backends.auto_compile.choose_kernel`: no
    call waits on a compiler): "numba" when the plan's compiled tangent flow is loaded in this process, or
    (a run of at least LOAD_WORK) when numba's disk cache holds it and no background compile holds the
    compiler (loaded in the call, about 0.5 s); else "numpy", and for a run of at least LOAD_WORK its
    compile is queued in the background (a later call takes it). Policy "wait" (LIEDYN_AUTO_COMPILE):
    "numba" from the engine's AUTO_NUMBA_WORK, compiled in the call."""
    return auto_compile.choose_kernel(_key(pl), compiled(pl, B), lambda: _marker(pl), lambda: _job(pl, timing), work,
                                      LOAD_WORK, fastpath.AUTO_NUMBA_WORK)


def _saves(nqr, save_every):
    return nqr // save_every + (1 if nqr % save_every else 0)


def run(pl, Y, V, ACC, ntr, sub, nqr, save_every, h, dt, mode, timing=None, normals=None):
    """``ntr`` transient steps, then ``nqr`` QR intervals of ``sub`` steps, from Y (B, n), V (B, n, k) (the
    frame of k = ``pl.ncols`` columns, handed to the generated code flat; ignored when nqr = 0), ACC (B, k + 4)
    (the accumulated logs and MEGNO sums); returns (Y, V, ACC, RUN (K, B, k), RUNM (K, B), done (B,)) with K the number of saves.
    ``timing`` (a timed plan): (TB, S, k0), the coefficient table (:func:`table`) and the index of the
    first step. Mode "blocks" (numpy, no transient: ``ntr`` = 0): each trajectory batched over time by
    :mod:`integrators.backends.tangent_blocks` (``normals`` y -> (..., n, r) the leaf's normals when the
    plan keeps a leaf), and by the "scalar" loop when that declines (a run that is not finite)."""
    B = Y.shape[0]
    n = pl.ncols
    K = _saves(nqr, save_every)
    h, dt = float(h), float(dt)
    extra = ()
    if timing is not None:
        TB, S, k0 = timing
        extra = (TB.tolist() if mode in ("scalar", "blocks") else TB, int(S), int(k0))
    if mode == "array":
        fn = pl.function("array")
        Zc = np.ascontiguousarray(Y.T)
        Vc = np.ascontiguousarray(V.transpose(1, 2, 0))       # (n, k, B): the flat frame's rows V[i*k + l]
        Ac = np.ascontiguousarray(ACC.T)
        RUN = np.full((K, n, B), np.nan)
        RUNM = np.full((K, B), np.nan)
        with np.errstate(all="ignore"):
            done = fn(h, ntr, sub, nqr, save_every, dt, Zc, Vc.reshape(-1, B), Ac, RUN, RUNM, *extra)
        return (Zc.T.copy(), Vc.transpose(2, 0, 1).copy(), Ac.T.copy(), RUN.transpose(0, 2, 1), RUNM,
                np.full(B, done, dtype=np.int64))
    if mode == "numba":
        one, ens = pl.function("numba")
        Z = np.ascontiguousarray(Y, dtype=float).copy()
        Vb = np.ascontiguousarray(V, dtype=float).copy()
        A = np.ascontiguousarray(ACC, dtype=float).copy()
        RUN = np.full((B, K, n), np.nan)
        RUNM = np.full((B, K), np.nan)
        done = np.zeros(B, dtype=np.int64)
        Vf = Vb.reshape(B, -1)                                 # the flat frames (views: written in place)
        if B == 1:
            done[0] = one(h, ntr, sub, nqr, save_every, dt, Z[0], Vf[0], A[0], RUN[0], RUNM[0], *extra)
        else:
            ens(h, ntr, sub, nqr, save_every, dt, Z, Vf, A, RUN, RUNM, done, *extra)
        return Z, Vb, A, RUN.transpose(1, 0, 2), RUNM.T, done
    fn = pl.function("scalar")
    Z, Vo, A = Y.copy(), V.copy(), ACC.copy()
    RUN = np.full((K, B, n), np.nan)
    RUNM = np.full((K, B), np.nan)
    done = np.zeros(B, dtype=np.int64)
    blocks = mode == "blocks" and ntr == 0 and nqr > 0
    if blocks:
        states = pl.function("states")
        if timing is not None:
            timing = tuple(timing) + (extra[0],)      # the table as a list for the Python loop
    for b in range(B):
        if blocks:
            got = tangent_blocks.run_one(pl, states, Y[b], V[b], ACC[b], sub, nqr, save_every, h, dt, timing, normals)
            if got is not None:
                Z[b], Vo[b], A[b], RUN[:, b], RUNM[:, b] = got
                done[b] = nqr
                continue
        z, v, a = Y[b].tolist(), V[b].ravel().tolist(), ACC[b].tolist()
        rb, mb = np.full((K, n), np.nan), np.full(K, np.nan)   # n: the number of columns
        done[b] = fn(h, ntr, sub, nqr, save_every, dt, z, v, a, rb, mb, *extra)
        Z[b], A[b] = z, a
        Vo[b] = np.reshape(v, Vo[b].shape)
        RUN[:, b], RUNM[:, b] = rb, mb
    return Z, Vo, A, RUN, RUNM, done
