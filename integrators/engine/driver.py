"""``integrate``: the one entry point (shaped like scipy.integrate.solve_ivp) and its stepping loop."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Literal, TextIO, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray
from liegroups import LieGroupsError

from ..core.errors import IntegrationInputError
from ..core.summation import compensated_add
from .events import EventTracker
from ..core.grid import DEFAULT_STEPS, output_grid, step_grid  # noqa: F401 (DEFAULT_STEPS is re-exported)
from . import batch
from ..backends import auto_compile, fastpath, nonholonomic_loops, numba_kernels, timed_runner
from .adaptive import solve_adaptive
from ..methods import LINEAR, CommutatorFree, RungeKutta, Splitting, get_method, method_table, preserved
from ..core.problems import CoadjointProblem, ODEProblem, ReconstructionProblem
from ..core.progress import RunProgress
from ..core.result import IntegrationResult, finish
from .scipy_adapter import solve_scipy
from . import growth, guard
from . import freeze
from ..core import lost
from ..core import validation
from ..reference.stepping import ProjectedStepper, make_stepper

_KINDS = ("ode", "coadjoint", "reconstruction")

#: what ``integrate`` takes as its problem (or a plain callable f(t, y))
Problem = Union[ODEProblem, CoadjointProblem, ReconstructionProblem]
#: an event function g(t, y), zero at the event (attributes ``terminal``, ``direction`` as in solve_ivp)
Event = Callable[[float, NDArray[np.float64]], float]


def _as_problem(problem, y0):
    """The problem, or a plain callable f(t, y) wrapped as ODEProblem(f, dim=y0.shape[-1]);
    returns (problem, y0 as an array)."""
    if getattr(problem, "kind", None) in _KINDS:
        return problem, y0
    if callable(problem):
        y0 = np.atleast_1d(validation.real_array(y0, "y0"))
        name = getattr(problem, "__name__", None) or type(problem).__name__
        return ODEProblem(problem, dim=y0.shape[-1], name=f"ODE y' = {name}(t, y)"), y0
    raise IntegrationInputError(
        f"problem must be an ODEProblem, CoadjointProblem, ReconstructionProblem or a callable f(t, y); "
        f"got {type(problem).__name__} {problem!r:.80}")


def _check_inputs(problem, y0, t_span):
    y0 = validation.real_array(y0, "y0")
    if problem.kind == "reconstruction":
        N = problem.group.matrix_size
        if y0.shape[-2:] != (N, N):
            raise IntegrationInputError(f"y0 must be (..., {N}, {N}) group elements of {problem.group.name}, "
                                        f"got shape {y0.shape}")
    elif y0.shape[-1:] != (problem.dim,):
        raise IntegrationInputError(f"y0 must have last axis of length {problem.dim} (the dimension of "
                                    f"{problem.name}), got shape {y0.shape}")
    if not np.isfinite(y0).all():
        bad = np.argwhere(~np.isfinite(y0))
        raise IntegrationInputError(f"y0 must be finite: entry {tuple(int(v) for v in bad[0])} is "
                                    f"{y0[tuple(bad[0])]} ({len(bad)} non-finite entries)")
    if type(t_span) in (tuple, list) and len(t_span) == 2 and all(type(v) is float or (type(v) is int and abs(v) < 2 ** 53) for v in t_span):
        t0, t1 = float(t_span[0]), float(t_span[1])   # the common case, without an array
    else:
        ts = validation.real_array(t_span, "t_span")
        if ts.shape != (2,):
            raise IntegrationInputError(f"t_span must be a pair (t0, t1) of numbers, got {t_span!r}")
        t0, t1 = float(ts[0]), float(ts[1])
    if not (math.isfinite(t0) and math.isfinite(t1)) or t1 == t0:
        raise IntegrationInputError(f"t_span must be two different finite times, got ({t0}, {t1})")
    return y0, t0, t1


def _trajectories(problem, y0):
    """The number of trajectories of a batch y0 (its size over the size of one state)."""
    one = problem.group.matrix_size ** 2 if problem.kind == "reconstruction" else problem.dim
    return max(1, int(np.size(y0)) // one)


def _check_t_eval(t_eval, t0, t1):
    """t_eval as a 1-d float array, sorted in the direction of integration and within t_span."""
    try:
        te = np.array(t_eval, dtype=float)
    except (TypeError, ValueError) as exc:
        raise IntegrationInputError(f"t_eval must be a 1-d array of times, got {t_eval!r:.80}") from exc
    if te.ndim != 1 or te.size == 0 or not np.all(np.isfinite(te)):
        raise IntegrationInputError(f"t_eval must be a non-empty 1-d array of finite times, got shape {te.shape}")
    lo, hi = min(t0, t1), max(t0, t1)
    if te.min() < lo or te.max() > hi:
        raise IntegrationInputError(f"t_eval must lie within t_span = ({t0}, {t1}); got values from "
                                    f"{te.min()} to {te.max()}")
    d = np.diff(te) if t1 > t0 else -np.diff(te)
    if np.any(d < 0):
        k = int(np.argmax(d < 0))
        raise IntegrationInputError(f"t_eval must be sorted in the direction of integration "
                                    f"({'increasing' if t1 > t0 else 'decreasing'}); t_eval[{k}] = {te[k]} is "
                                    f"followed by {te[k + 1]}")
    return te


def integrate(problem: Problem | Callable[[float, NDArray[np.float64]], ArrayLike], y0: ArrayLike,
              t_span: Sequence[float], method: str = "rkmk4", h: float | None = None, steps: int | None = None,
              save_every: int = 1, events: Event | Sequence[Event] | None = None,
              rtol: float | ArrayLike = 1e-9, atol: float | ArrayLike = 1e-12, fast: bool = True,
              t_eval: ArrayLike | None = None, backend: Literal["auto", "numpy", "numba"] = "auto",
              first_step: float | None = None, max_step: float | None = None, check: bool = True,
              max_steps: int | None = None, max_wall_time: float | None = None,
              ensemble: Literal["shared", "independent"] = "shared",
              progress: bool | TextIO | None = None) -> IntegrationResult:
    """Integrate ``problem`` from ``y0`` over ``t_span = (t0, t1)`` with ``method``.

    Parameters
    ----------
    problem : ODEProblem (y' = f(t, y)), CoadjointProblem (z' = ad*_{w(z)} z + f(z)),
        ReconstructionProblem (g' = g w(t)), or a plain callable f(t, y) (as for solve_ivp), taken as
        ``ODEProblem(f, dim=y0.shape[-1])``. Anything else raises IntegrationInputError.
    y0 : (..., dim) array (a batch of initial conditions on the leading axes), or (..., N, N) group
        elements for a reconstruction problem.
    method : str or Method
        A name of :data:`integrators.METHODS` (this list is built from it):

{METHODS}

        The bare scipy names ("DOP853", ...) are aliases. An unknown or inapplicable name raises
        ``MethodError`` (a ValueError) listing the valid ones.
    h, steps : fixed-step methods take the step h (rounded down so that an integer number of steps
        covers t_span exactly: h = (t1 - t0) / ceil(|t1 - t0| / h)) or the number of steps;
        with neither, DEFAULT_STEPS = 1000 steps. For the scipy methods and the adaptive pairs, h or
        steps only set the output grid (dense output is evaluated there, see
        :mod:`integrators.reference.dense_output`); without them the solver's own steps are returned.
    save_every : keep every save_every-th step (the last step is always kept).
    events : callable g(t, y) -> (...) or list of them, with optional attributes ``terminal`` and
        ``direction`` as in solve_ivp; see :mod:`integrators.engine.events`.
    t_eval : 1-d array of output times for the scipy methods and the adaptive pairs (as in solve_ivp: within t_span, sorted
        in the direction of integration; not together with h, steps or save_every). The fixed-step
        methods take h / steps / save_every instead and raise IntegrationInputError for t_eval.
    backend : "auto" (default), "numpy" or "numba": how the generated code of
        :mod:`integrators.codegen.writer` runs (fixed-step RKMK / RK, commutator-free and splitting, and the adaptive pairs on coadjoint
        problems whose velocity is affine, also with the multiplier force of linear invariants: a servo-constraint of
        the first kind, its Lie-group steps in g x g*, :mod:`integrators.codegen.affine_source`; a forcing the
        generator does not recognise runs the numpy reference and ``result.backend`` says why). "numba" needs the
        extra ``liedyn[fast]`` (MethodError
        naming the backends that apply without it); "auto" takes numba when installed and the run
        has at least :data:`integrators.backends.fastpath.AUTO_NUMBA_WORK` step-trajectories, else numpy.
        Compiling the code of one structure and method takes 13-190 s on 2 cores (measured on the
        drawn systems of dimension 3-10, benchmarks/RESULTS.md "Drawn systems"), once per machine. The caches
        live in ``$LIEDYN_CACHE_DIR`` (default ``~/.cache/liedyn``): the generated modules, numba's cache
        files beside them (in its ``__pycache__``; in ``$NUMBA_CACHE_DIR`` when that is set) and small
        ``*.ok`` markers of what is compiled. No call waits for that compile where a loop for every algebra
        can run instead (:mod:`integrators.backends.auto_compile`): the generic compiled kernel
        (:mod:`integrators.backends.generic_kernel`, the structure constants as data; compiled once per
        machine in ~12 s of CPU (11-12 s at load 2.5-3.3) by the Makefile's install step, else in a
        child process started by the first call that needs it, which runs numpy meanwhile; loaded in
        ~0.6-1.3 s per process) runs an adaptive pair (RK, RKMK or projected) on one trajectory without events,
        on unforced problems and on forced ones (the multiplier force of servo-constraints of the first kind, several
        constraints, Suslov: their RKMK generators in g x g*, the constraints kept by projection), filling an output
        grid (``t_eval``, ``steps`` of simulate) in its loop too, and the specialised code compiles in the background,
        in a detached child process at nice 10 (it outlives a short script and leaves the loop in the cache for the
        next process; :mod:`integrators.backends.compile_child`); a later call, or the next process, takes it once
        ready. Measured (RESULTS
        "Cold start and the generic kernel", 2 cores at load 7.7-9, 10 drawn algebras of dimension 3-10
        incl. so(5), sp(4) and random bases): the first backend="numba" call 0.5-1.8 s (was 13-190 s), the
        second 1-310 ms; with an empty cache (a fresh machine) 0.74 s in numpy, a 33,000-step run 7.5 s
        (numpy throughout: the generic kernel's compile had not finished); rkmk853 on ServoFirstKind(so(4))
        through ``simulate``: the first backend="numba" call 0.46 s (was 83 s, at load 2-3). An ensemble="independent"
        runs the generic ensemble kernel (:mod:`integrators.backends.generic_ensemble`, the generic loop in a
        parallel loop over the trajectories, compiled once per machine too) while its specialised kernel compiles,
        and under "auto" also when it is too small for the engine to compile for but that kernel is loaded in the
        process (or on disk and the run pays for loading it: :func:`integrators.backends.auto_compile.choose_small_independent`).
        A fixed-step run, a shared-step ensemble or a run with events has no generic kernel: a cold
        backend="numba" call runs the generated loop in numpy while its compiled loops compile in the background,
        as "auto" does, and ``result.backend`` says so; a fixed-step run of one trajectory continues compiled from
        the chunk its loop is ready. (They compiled in the call before: rkmk4 on so(5) in a random basis, 1000
        steps, 49 s, now 0.6 s; rk853_projected on so(4) in a random basis, a shared ensemble of 100, 59 s wall /
        25 s CPU, with events 40 s, at load 8.5.) A time-dependent problem's generated loops (fixed step, and the
        adaptive pairs of a coefficient source) do the same, their compile in a child process (they compiled in the
        call: rk4 on a gyrostat on so(5) in a random basis 97 s, rk45 108 s; now ~1 s in numpy, on so(3) the
        compiled loop ready 4-7 s later). ``LIEDYN_AUTO_COMPILE=wait`` compiles in the call. Under
        "auto" nothing waits: one trajectory runs the generic kernel or numpy until the specialised code is
        ready (a long Python run, adaptive or fixed-step, continues compiled in chunks once it is: 10^6
        rkmk4 steps on so(4) in a random basis ran 620,000 in numpy, then numba, the numpy run's states
        to the bit, 35 s of CPU against 45 s in numpy at load 11), and
        a fixed-step run or shared-step ensemble runs numpy until its compiled loop is ready (an independent
        ensemble the generic ensemble kernel when it is compiled or on disk).
        ``LIEDYN_AUTO_COMPILE=wait`` (or ``off``, no background compiles) makes backend="numba" compile in
        the call as before; under "auto" ``wait`` compiles in the call and ``off`` never compiles.
        ``result.backend`` says which ran.
    first_step, max_step : initial and largest step of the adaptive methods (rkmk45, rkmk853,
        rk45, rk853), as in solve_ivp; their results also carry ``nrejected``.
    ensemble : "shared" (default) or "independent", for the adaptive methods on an ensemble y0:
        one step sequence for all trajectories (the largest error decides; every step saved), or each
        trajectory its own steps, equal to its single run (:mod:`integrators.engine.batch`; numpy, or a
        parallel compiled loop with numba), saving t0 and t1, or the output grid of t_eval / h / steps
        filled from each trajectory's own continuous extension (numpy engine). Fixed-step methods step
        every trajectory alike either way. In every ensemble a trajectory that blows up is lost alone
        (:mod:`integrators.engine.freeze`): its state overflows or becomes NaN, or (shared steps) its
        own error estimate asks for a step below 10 eps |t|; it is frozen at its last finite state
        (which its later saved rows repeat) and leaves the shared step sequence, the others go on to
        t1. The result then has status -1, a message naming how many, the first flat index and its
        time, ``t_end`` (batch shape: the time each trajectory reached) and ``failed`` (the flat indices
        of those that stopped early); the guards judge the others. With "independent" each trajectory's
        peak is in ``peak`` (batch shape + (3,)), and one that stepped across the pole of a finite-time
        blow-up is cut at its peak the same way (the growth check below).
    rtol, atol : tolerances of the adaptive methods and of the scipy adapters (which also pass ``problem.jac``, when the problem
        has one, to Radau, BDF and LSODA).
    check : run the guards of :mod:`integrators.engine.guard` (default True): a fixed-step run whose step does
        not resolve the solution, an adaptive run of one trajectory (or a trajectory of an independent ensemble) that
        stepped across the pole of a finite-time blow-up (:mod:`integrators.engine.growth`), or any run whose declared invariants or constraints leave their
        tolerance, ends with status -1 and a message saying what, where and by how much; the figures
        are in ``result.checks``. False skips them (a few percent faster on short runs).
    max_steps, max_wall_time : the budget of the scipy methods (accepted steps, default 10^6;
        seconds, default 120) and the step budget of the adaptive pairs (accepted steps, default
        10^6, per trajectory with ensemble="independent"): beyond it the run stops with status -1 and says so. A right-hand side
        that returns NaN or inf stops any method with status -1 at the step where it appears.
    progress : None (default), True, False or a writable text stream: a line on stderr (or the stream) with
        the method, the number of trajectories and the elapsed time. None draws it only when stderr is a
        terminal and the run lasts more than a second (never with LIEDYN_PROGRESS=0); False never; see
        :mod:`integrators.core.progress`. It never changes the result.
    fast : use generated code where it applies (default True): the straight-line loops written from the
        method's tableau for coadjoint problems whose structure is recognised (:mod:`integrators.codegen`,
        run as numpy or numba by ``backend``: the Runge-Kutta tableaux in rk and rkmk form, the
        commutator-free methods and McLachlan's splitting). False forces the generic numpy path (the reference; both agree to round-off).

    Returns
    -------
    IntegrationResult with t (K,), y (K, ..., dim), status, message, nfev, nsteps, wall_time,
    invariants / constraints (name -> (K, ...)) evaluated on the saved (raw) states, preserves,
    method (the canonical name) and the problem's ``outputs`` (with a ``state_map``, y is the mapped
    state and the raw one is ``outputs["z"]``).

    Without events or projection, each step's increment y_{n+1} - y_n is computed without
    cancellation (e.g. exp(ad x)^T z - z = (exp(ad x)^T - I) z) and added with Kahan's compensated
    summation (Hairer, McLachlan and Razakarivony 2008), so round-off drift of the invariants grows like
    eps h sqrt(N) rather than eps sqrt(N).
    """
    problem, y0 = _as_problem(problem, y0)
    m = get_method(method, problem)
    y0, t0, t1 = _check_inputs(problem, y0, t_span)
    save_every = validation.step_count(save_every, "save_every")
    rtol, atol = validation.tolerances(rtol, atol)
    budget = (validation.SCIPY_MAX_STEPS if max_steps is None else validation.step_count(max_steps, "max_steps"),
              validation.SCIPY_MAX_WALL_TIME if max_wall_time is None else
              validation.positive(max_wall_time, "max_wall_time", allow_inf=True))
    if t_eval is not None:
        if m.runner == "fixed":
            raise IntegrationInputError(f"t_eval is for the scipy methods and the adaptive pairs; the fixed-step "
                                        f"method {m.name!r} saves every save_every-th step of h or steps instead")
        if h is not None or steps is not None or int(save_every) != 1:
            raise IntegrationInputError("give either t_eval or h / steps / save_every (output grid), not both")
        t_eval = _check_t_eval(t_eval, t0, t1)
    fastpath.check_backend_args(backend, fast)
    batch.check_mode(ensemble)
    if m.fixed_step or h is not None or steps is not None:  # a step grid, or an output grid (before allocating it)
        n, _ = step_grid(t0, t1, h, steps)
        validation.output_size(n // save_every + 2, y0, f"integrating {n} steps" if m.fixed_step else
                               f"an output grid of {n} intervals")
        if m.fixed_step:
            validation.step_budget(n)
    start = time.perf_counter()
    with RunProgress(progress, m.name, _trajectories(problem, y0)) as bar:
        if m.runner == "scipy":
            res = solve_scipy(problem, m, y0, t0, t1, h, steps, int(save_every), events, rtol, atol, t_eval, budget)
        elif m.runner == "adaptive":
            if h is not None or steps is not None:  # an output grid, as for the scipy methods
                t_eval = output_grid(t0, t1, h, steps, int(save_every))
            if ensemble == "independent":
                if events is not None:
                    raise IntegrationInputError("ensemble='independent' locates no events (each trajectory takes "
                                                "its own steps); events need ensemble='shared'")
                res = batch.solve_independent(problem, m, y0, t0, t1, rtol, atol, first_step, max_step, backend,
                                              fast, budget[0], t_eval, check=check and problem.kind != "reconstruction")
            else:
                res = solve_adaptive(problem, m, y0, t0, t1, rtol, atol, first_step, max_step, int(save_every),
                                     events, backend, fast, t_eval, budget[0])
        else:
            res = _fixed_step(problem, m, y0, t0, t1, h, steps, int(save_every), events, fast, backend)
        bar.done(res.nsteps)
    res.wall_time = time.perf_counter() - start
    res.method = m.name
    if not res.backend:
        res.backend = "scipy" if m.runner == "scipy" else "numpy"
    res.preserves = preserved(m, problem)
    if check and m.fixed_step and problem.kind != "reconstruction":
        guard.check_resolution(problem, make_stepper(m, problem), res, res.h, save_every)
    elif check and problem.kind != "reconstruction":   # an adaptive run that stepped across a pole
        growth.check(res)
    finish(problem, res, record_values=False)    # the values are recorded by the guard (its compiled Casimirs)
    if check:
        guard.check_quantities(problem, res, record=True)
    else:
        guard.record(problem, res)
    return res


def _kept_linear_invariants(problem, method, y0):
    """The linear invariants C of a forced coadjoint problem (see CoadjointProblem) that a Lie-group method
    projects onto {C z = C z0} after each step (:class:`integrators.reference.stepping.ProjectedStepper`), checked
    on the field at z0; None when not needed."""
    C = getattr(problem, "linear_invariants", None)
    if C is None or problem.kind != "coadjoint" or problem.forcing is None or LINEAR in method.preserves:
        return None
    F = np.asarray(problem.rhs(0.0, y0), dtype=float)
    res = np.abs(F @ C.T)
    scale = np.linalg.norm(C, axis=1) * np.max(np.abs(F)) + 1e-300
    worst = float(np.max(res / np.maximum(scale, 1.0)))
    if worst > 1e-9:
        i = int(np.argmax(np.max(res.reshape(-1, C.shape[0]), axis=0)))
        raise IntegrationInputError(
            f"linear_invariants[{i}] is not conserved by the vector field: (c, f(z0)) = "
            f"{float(np.max(res[..., i])):.3e} at the initial state (should be 0 for every z); "
            f"check the forcing lambda(z) b")
    return C


def _scheme(method):
    """(what the generated programs are written from, lie, terms) for ``method``, or None when the
    generator has no program for it: the tableau of a Runge-Kutta method in rk or rkmk form, or a
    commutator-free method or splitting itself (:mod:`integrators.codegen.programs`)."""
    if isinstance(method, RungeKutta):
        return None if method.project else (method.tableau, method.lie, method.terms)
    if isinstance(method, (CommutatorFree, Splitting)):
        return method, True, 1
    return None


def _plan(problem, method, y0):
    """The generated code's plan for a fixed-step ``method`` on ``problem`` (None when none applies);
    the declared velocity_matrix of an unforced problem on so(3) is checked against its velocity first
    (the splitting and Moser-Veselov steppers are written from it, the generated code from the velocity:
    they must be the same problem)."""
    scheme = _scheme(method)
    if scheme is None or problem.kind != "coadjoint":
        return None
    if (getattr(problem, "velocity_matrix", None) is not None and problem.forcing is None
            and problem.algebra.closed_form == "so3"):
        validation.velocity_matrix(problem, y0)
    return fastpath.plan(problem, scheme[0], scheme[1], scheme[2], y0)


def _generated(problem, method, y0, t0, h, n, save_every, backend, fevals):
    """The fixed-step run by generated code (:mod:`integrators.backends.fastpath`), or None when it does not
    apply."""
    if timed_runner.applies(problem, method):   # a time-dependent (or ODE) field quadratic in the state
        res = timed_runner.run_fixed(problem, method, y0, t0, h, n, save_every, backend)
        if res is not None:
            res.nfev = res.nsteps * fevals
        return res
    pl = _plan(problem, method, y0)
    if pl is None:
        return None
    be = fastpath.choose_backend(backend, n * max(1, y0.size // problem.dim))
    switch = False
    if backend == "auto" and be == "numba":   # never waits on a compiler (integrators.backends.auto_compile)
        be = auto_compile.choose_fixed(pl, y0.ndim > 1)
        switch = be == "numpy" and y0.ndim == 1      # numpy in chunks, compiled once that loop is ready
    cold = backend == "numba" and y0.ndim == 1 and auto_compile.numba_cold(pl, "fixed")
    if cold:   # no loop for every algebra runs fixed steps: numpy in chunks while this one compiles in the
        be = auto_compile.choose_fixed(pl, False)           # background, compiled from the chunk it is ready
        switch = be == "numpy"
    res = fastpath.run_fixed(pl, y0, t0, h, n, save_every, be, switch)
    res.nfev = res.nsteps * fevals
    if cold and not res.backend:   # numpy to the end (a run that switched says "numpy for the first k steps")
        res.backend = "numpy" + auto_compile.NUMBA_COLD_NOTE if be == "numpy" else be
    res.backend = res.backend or be
    return res


def _fixed_step(problem, method, y0, t0, t1, h, steps, save_every, events, fast=True, backend="auto"):
    n, h = step_grid(t0, t1, h, steps)
    stepper = make_stepper(method, problem)
    if fast and events is None:
        res = _generated(problem, method, y0, t0, h, n, save_every, backend, stepper.fevals)
        if res is not None:
            return res
        if hasattr(stepper, "run"):  # a stepper with its own whole-run loop (the discrete mechanics schemes)
            be = fastpath.choose_backend(backend, n * max(1, y0.size // problem.dim))
            res = stepper.run(y0, t0, h, n, save_every, be, numba_kernels.jit if be == "numba" else None,
                              generated=nonholonomic_loops.maker(stepper) if be == "numba" else None)
            if res is not None:
                res.backend = be
                return res
    if backend == "numba":
        if getattr(stepper, "compiled_reason", None):
            why = stepper.compiled_reason if events is None else "the events are located in the numpy loop"
        elif _scheme(method) is None and not isinstance(method, RungeKutta):
            why = (f"{method.name} has no generated code (the Runge-Kutta tableaux in rk and rkmk form, the "
                   f"commutator-free methods and the splittings have)")
        elif events is not None:
            why = "the events of a fixed-step method are located in the numpy loop"
        elif timed_runner.applies(problem, method) or (problem.kind == "ode"
                                                        and isinstance(method, RungeKutta)):
            why = timed_runner.why_not(problem, method, y0, t0) or "its coefficient table is too large"
        else:
            why = fastpath.no_plan_reason(problem, getattr(method, "lie", True), None)   # (commutator-free: Lie)
        fastpath.require_compiled(backend, why)
    if fast and events is not None:   # the events are located with the generated one-step map
        pl = _plan(problem, method, y0)
        if pl is not None:
            stepper = fastpath.GeneratedStepper(pl, stepper.fevals)
    C = _kept_linear_invariants(problem, method, y0)
    if C is not None:
        stepper = ProjectedStepper(stepper, C, y0)
    K = n // save_every + 1 + (1 if n % save_every else 0)
    ys = np.empty((K,) + y0.shape)
    ts = np.empty(K)
    ys[0], ts[0] = y0, t0
    y, t, j = y0, t0, 1
    tracker = None
    if events is not None:
        tracker = EventTracker(events, problem, stepper, t0, y0)
    compensated = tracker is None and not isinstance(stepper, ProjectedStepper)
    e = np.zeros_like(y0)
    status, message, done = 0, "reached the end of t_span", n
    # an ensemble loses a trajectory whose state stops being finite alone (integrators.engine.freeze)
    frz = freeze.Freezer(y0, t0) if y0.ndim > 1 and problem.kind != "reconstruction" else None
    with np.errstate(over="ignore", invalid="ignore"):
        for k in range(1, n + 1):
            t_new = t0 + k * h
            yw = y if frz is None or not frz.nfrozen else frz.keep(y, y0)   # lost rows step from y0
            e_old = e
            if compensated:  # Kahan: y + e is the state, e the carried rounding error
                y_new, e = compensated_add(yw, e, stepper.delta(t, yw, h))
            else:
                try:
                    y_new = stepper.step(t, yw, h)
                except (LieGroupsError, ArithmeticError):  # a stage overflowed inside an exponential: a NaN
                    y_new = np.full_like(y, np.nan)
            if frz is not None:
                frz.freeze(frz.nonfinite(y_new), t, y + e_old)
                if frz.alive.any() and frz.nfrozen:   # the lost rows keep their last finite state
                    y_new, e = frz.keep(y_new, y), frz.keep(e, e_old)
                elif not frz.alive.any():
                    e = e_old
            if not np.isfinite(y_new).all():
                status, done = -1, k - 1
                message = (f"the solution overflowed or became NaN in step {k} (t = {t:.6g} -> {t_new:.6g}); "
                           f"the last finite state is kept; reduce h")
                break
            if tracker is not None:
                y_new = tracker.after_step(t, y, t_new, y_new, h)
            t, y = t_new, y_new
            if k % save_every == 0 or k == n:
                ys[j], ts[j] = y + e, t
                j += 1
            if tracker is not None and tracker.all_stopped():
                status, done = 1, k
                message = "a terminal event stopped every trajectory"
                if k % save_every and k != n:
                    ys[j], ts[j] = y, t
                    j += 1
                break
    if status == -1 and ts[j - 1] != t:
        ys[j], ts[j] = y, t  # the last finite state
        j += 1
    ys, ts = ys[:j], ts[:j]
    nfev = getattr(stepper, "nfev_total", done * stepper.fevals)
    res = IntegrationResult(t=ts, y=ys, status=status, message=message, nsteps=done, h=h, nfev=int(nfev))
    if frz is not None:
        lost.report_shared(res, frz.alive, frz.t_end, 0 if status != -1 else -1, t, y0.shape[:-1],
                           lost_why=lost.FIXED_WHY)
    if fast and events is None and problem.kind == "coadjoint" and problem.forcing is not None and \
            not problem.time_dependent and _scheme(method) is not None:   # generated code asked for, the reference
        # loop ran (a forcing the generator does not recognise): say why
        res.backend = fastpath.reference_label(problem, getattr(method, "lie", True))
    if tracker is not None:
        tracker.finish(res)
        if res.status == 1 and np.ndim(y0) == 1:
            res.t = np.append(res.t[:-1], tracker.stop_time)
            res.y = np.concatenate([res.y[:-1], tracker.stop_state[None]], axis=0)
    return res


# the method list of the docstring, from the registry (a new method appears without an edit here)
if integrate.__doc__:
    integrate.__doc__ = integrate.__doc__.replace("{METHODS}", method_table(indent="        "))
