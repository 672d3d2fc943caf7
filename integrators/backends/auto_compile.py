"""What backend="auto" runs when a compiled loop would pay off, without waiting on a compiler.

The specialised numba loops (:mod:`integrators.codegen.programs`, one text per structure and method) take
13-190 s to compile on a new algebra. Under "auto" (numba installed) a run that the engine would hand to
numba (:data:`integrators.backends.fastpath.AUTO_NUMBA_WORK`), or a Python run that outlasts
:data:`integrators.backends.fastpath.NUMPY_CHUNK` steps, takes, in this order (:func:`choose`,
:func:`continue_with`; smaller runs of one trajectory take the generic kernel too when it pays, see
:func:`choose`):

1. the specialised loop when it is compiled in this process (or was loaded from numba's disk cache by
   an earlier background job);
2. else, for one trajectory without events, the generic kernel (:mod:`integrators.backends.generic_kernel`:
   the structure as data, compiled once per machine; every adaptive pair, RK and RKMK and the projected
   ones, on unforced coadjoint problems and on forced ones with the multiplier force of servo-constraints of
   the first kind, several constraints or Suslov's problem, whose RKMK generators live in g x g*), when it
   is compiled in this process or in the disk cache (loading it takes about a second, once per process);
3. else the numpy loop;

(a fixed-step run that the engine would compile takes 1. or 3., :func:`choose_fixed`; an independent ensemble 1.,
else the generic ensemble kernel :mod:`integrators.backends.generic_ensemble` when it is compiled or on disk, else 3.,
:func:`choose_independent`), and in cases 2
and 3 the missing loops (the generic kernel, and the specialised loop of this
plan) are compiled in the background; a later call (or the next chunk of a long Python run, or the next
process) picks them up.

Where the background compiles run, their queue and the children that outlive the caller:
:mod:`integrators.backends.background` (its ``submit``, ``poll``, ``busy``, ``policy`` and ``FAILED`` are
imported here; ``background.wait`` blocks until the queue is empty).

Measured (benchmarks/short_processes.py, RESULTS "short_processes"; ServoFirstKind on so(4), rkmk853 through
``simulate``, backend="numba", fresh processes of about 4 s one after another, 2 cores at load 3.6-6.7): with the
compile in a child, they ran the generic kernel (12-16 ms a call) until the children were done, 171 s after the
first (two loops at nice 10), and the specialised loop from numba's disk cache (0.58-0.70 ms a call) in every
later process; with the compile in a thread (before), the first 52 processes, 217 s, stayed at 12-22 ms, one
system's loop arriving only because a process's exit hung 72 s behind the compiling thread, the other's never in
300 s. A process's own numpy calls beside the compile: 2.69 s of CPU alone, 3.06 s beside the child, 4.24 s
beside the thread (its compile counts in the process; wall 3.97 s alone, 6.2-6.4 s beside either on that load).

Measured (benchmarks/cold_start.py, RESULTS "Cold start and the generic kernel"): the generic kernel
compiles in ~12 s of CPU (11.1-12.2 s at load 2.5-3.3; 8.2-8.6 s before it filled output grids) once per machine
and loads in 0.6-2 s (numba's import included); on a structure never
compiled, the first "auto" call of rkmk853 on so(5) takes 1.1 s (numpy's first call 2.5 s: code
generation), a 40,000-step rk853_projected run on so(5) 2.4 s where "auto" used to take 34 s; the
generic kernel runs 1.6-3.2x the specialised loop's time, 0.09-0.6x solve_ivp DOP853's.

backend="numba" (:func:`choose_numba`): an adaptive pair on one trajectory without events whose specialised
loop is neither compiled in this process nor in numba's disk cache (a marker file per loop, keyed by the
code generator's sources and numba's version: :func:`specialised_on_disk`) runs the generic kernel
(result.backend :data:`NUMBA_GENERIC_LABEL`; it fills an output grid in its loop as the specialised
"adaptive_grid" loop does) with the specialised loop queued here; measured: the first
call on 10 drawn algebras of dimension 3-10 0.5-1.8 s instead of 13-190 s (benchmarks/cold_start.py); rkmk853 on
ServoFirstKind(so(4)) through ``simulate`` (its 1000-point grid), one or two constraints, 0.46 s instead of 83 s
(0.39 s of CPU instead of 82 s, 2 cores at load 2-3, the specialised loop compiled in the call before: its generators
in g x g* were not in the generic kernel). Through ``simulate`` with its 1000-point grid, t in [0, 10], rtol 1e-10,
atol 1e-12, the specialised loop hidden (a structure not compiled; median of 20 calls in 4 processes interleaved
with the tree before the kernel filled the grid, which saved every step and filled the grid from the numpy
reference's extension; load 1.9-2.3): rkmk853 on ServoFirstKind(so(4)) 3.6 ms (was 11.4 ms; numpy 20.2 ms, solve_ivp
DOP853 3.6 ms), on R x_D R^5 in a random basis 5.6 ms (was 9.3; numpy 32.4, DOP853 9.5), rk853_projected on so(5)
in a random basis 17.6 ms (was 21.5; numpy 13.0, DOP853 4.7: every grid point projected onto the quartic Casimir's
714 monomials, 13 us a point, where the numpy loop projects the 1001 points as columns). The loops the
generic kernel does not cover (fixed steps, shared-step ensembles, events) run numpy while they compile in the
background, as under "auto", and result.backend says so (:func:`numba_cold`; they compiled in the call before: a
fixed-step rkmk4 run on so(5) in a random basis 49 s, now 0.6 s); an independent ensemble runs the generic ensemble
kernel meanwhile
(:func:`choose_numba_independent`). A fixed-step "auto" run of one trajectory that the engine would compile runs
Python chunks and continues compiled once its loop is ready (:func:`continue_fixed`).

``LIEDYN_AUTO_COMPILE``: "background" (default, the above; the thread and the children run at nice 10 where the
OS allows it), "wait" (compile the specialised loop in the call, as backend="numba" does) or "off" (never
compile under "auto": the specialised loop when compiled, the generic kernel when in the disk cache,
else numpy; nothing in the background, e.g. for test suites and short scripts); any other value raises
MethodError at the first "auto" decision.
"""

from __future__ import annotations

import hashlib
import math
import sys
import weakref
from pathlib import Path

import numpy as np

from . import batch_kernels, compile_child, generic_ensemble, generic_kernel, numba_kernels
from .background import FAILED, busy, poll, policy, submit
from .output_grid import OutputGrid

#: a run of one trajectory takes the generic kernel from this work estimate when it is loaded: from any work, since
#: the loaded kernel's call costs less than the numpy loop's setup (the numpy loop costs 20 us - 40 ms a step, the
#: generic kernel about 1-10 us): simulate on six drawn systems (so(4), so(4) servo1, Bianchi VI, se(3) in a random
#: basis servo2, R x_D R^5 and so(5) in random bases), runs of 1 to 27 steps with and without an output grid, 1.3-11.5x
#: faster by the kernel (benchmarks/auto_short_runs.py, RESULTS.md "auto_short_runs"); the tests raise it to start a
#: run in numpy
GENERIC_WORK = 0
#: ... and loads it from the disk cache from this work estimate (see worth_loading)
GENERIC_LOAD_WORK = 10_000
#: a run by the generic kernel from this work estimate queues the specialised loop's compile
SPECIALISE_WORK = 20_000

#: result.backend of a run by the generic kernel
GENERIC_LABEL = "numba (generic kernel)"
#: result.backend of a backend="numba" run by the generic kernel (the specialised loop not ready)
NUMBA_GENERIC_LABEL = "numba (generic kernel; the specialised loop compiles in the background)"
#: ... and of one in numpy (a fresh machine: the generic kernel not compiled yet)
NUMBA_NUMPY_NOTE = " (backend='numba': no compiled loop ready yet, they compile in the background)"
#: ... and of a cold one the generic kernel does not run (a fixed-step run, a shared-step ensemble, events):
#: numpy while its specialised loop compiles in the background
NUMBA_COLD_NOTE = (" (backend='numba': its compiled loop compiles in the background; the generic kernel runs only"
                   " the adaptive pairs of autonomous problems, without events or shared steps)")

def label(mode):
    """result.backend for a loop mode ("generic" -> :data:`GENERIC_LABEL`, "scalar" -> "numpy")."""
    return {"generic": GENERIC_LABEL, "scalar": "numpy"}.get(mode, mode)


def compiled(pl, kind):
    """True when the plan's specialised numba function ``kind`` is compiled in this process (after picking up
    the finished children, :func:`integrators.backends.background.poll`)."""
    poll()
    fn = pl._functions.get((kind, "numba"))
    if fn is None:
        return False
    if fn not in _COMPILED:     # a dispatcher's ``signatures`` costs ~25 us a call; once compiled it stays so
        if not getattr(fn, "signatures", ()):
            return False
        _COMPILED.add(fn)
    return True


#: the plans' numba functions found compiled (:func:`compiled`)
_COMPILED = weakref.WeakSet()


def _job(fn, pl, name, *args):
    """The background compile ``fn(pl, *args)`` of the plan's loop ``name`` (its marker, :func:`_spec_marker`)."""
    return compile_child.Job(fn, (pl,) + args, _spec_marker(pl, name))


def generic_ready():
    """True when the generic kernel can run now without a compile: compiled in this process, or loaded
    here from the disk cache (only while no background job holds the compiler lock); else its compile is
    queued and False."""
    if generic_kernel.compiled():
        return True
    if not busy() and generic_kernel.on_disk():
        generic_kernel.warm()
        return generic_kernel.compiled()
    submit("generic", generic_kernel.warm_elsewhere)
    return False


def _warm_single(pl, kind, t1, rtol, atol, max_step):
    """A call of no step of the plan's single-trajectory function ``kind`` ("adaptive" or "step") with
    the argument types of the engine's calls: compiles it (or loads it from numba's disk cache)."""
    fn = pl.function(kind, "numba")
    n = pl.st.n
    if kind == "step":
        fn(0.0, *([0.0] * n))
    else:
        p = 0 if pl.proj is None else pl.proj.p
        ms = math.inf if max_step is None else float(max_step)
        fn(t1, t1, 1.0, rtol, atol, ms, 1, 1, 0, np.empty(4), np.empty((4, n)), *([0.0] * (2 * n + p)))
    write_marker(_spec_marker(pl, kind))


def _warm_batch(pl, t1, rtol, atol, max_step, grid=False):
    """The same for the compiled shared-step ensemble loop (an ensemble of one, no step; ``grid``: the one that
    fills an output grid, "adaptive_batch_grid"), and its marker."""
    kind = "adaptive_batch_grid" if grid else "adaptive_batch"
    fn = pl.function(kind, "numba")
    n = pl.st.n
    Z = np.zeros((1, n))
    CZ = () if pl.proj is None else (np.zeros((1, pl.proj.p)),)
    ms = math.inf if max_step is None else float(max_step)
    args = ()
    if grid:
        out = OutputGrid(np.array([t1]), (1, 1, n), pl, pl.targets(Z))
        out.start(t1, Z)
        args = out.args("numba")
    fn(t1, t1, 1.0, rtol, atol, ms, 1, 1, 0, np.empty(4), np.empty((4, 1, n)), Z, np.zeros_like(Z), *CZ,
       np.ones(1, np.bool_), np.zeros(1), np.zeros_like(Z), *args)
    write_marker(_spec_marker(pl, kind))


def loop_kinds(ensemble, events, grid=False):
    """The plan's specialised loops a run takes: the adaptive loop ("adaptive_batch" for a shared-step
    ensemble), its form that fills an output grid ("_grid", with or without events: the segmented run of
    :mod:`integrators.backends.segmented_run` fills it too), and for the events of one trajectory the one-step map
    "step" that locates them (an ensemble's events locate with the numpy one)."""
    kind = ("adaptive_batch" if ensemble else "adaptive") + ("_grid" if grid else "")
    return (kind, "step") if events and not ensemble else (kind,)


def choose(pl, mode, work, ensemble, events, t1, rtol, atol, max_step, grid=False):
    """The loop of an "auto" run (numba installed) given the engine's choice ``mode`` ("numba" for runs
    of at least AUTO_NUMBA_WORK step-trajectories, else "numpy") and its ``work`` estimate:

    * the engine would compile ("numba"): the specialised loop when compiled, else the generic kernel
      (one trajectory, no events) when ready, else numpy, the missing loops compiled in the background;
    * a smaller run of one trajectory without events: the specialised loop when it is compiled in this
      process (a background job's, picked up here), else the generic kernel when it is loaded in this
      process (work >= GENERIC_WORK, 0), or
      when its disk cache is there and the run pays for loading it (:func:`worth_loading`); the
      specialised loop is queued when work >= SPECIALISE_WORK;
    * else numpy, with the generic kernel loaded from its disk cache in the background thread (about a second; the
      process's later runs take it).

    With an output grid (``grid``) one trajectory without events takes the same choice with the loop that fills
    it: the specialised "adaptive_grid" loop (the one compiled, checked and queued) or the generic kernel, which
    fills the grid in its loop too (:mod:`integrators.codegen.generic_source`); ``grid`` is the number of output
    times (0: none).

    Policy "wait" (LIEDYN_AUTO_COMPILE): ``mode`` unchanged (the specialised loop compiled in the call)."""
    if policy() == "wait":
        return mode
    single = not ensemble and not events
    kinds = loop_kinds(ensemble, events, bool(grid))
    if mode == "numba":
        if all(compiled(pl, k) for k in kinds):
            return "numba"
        generic = single and generic_kernel.covers(pl) and generic_ready()
        _queue(pl, kinds, t1, rtol, atol, max_step)
        return "generic" if generic else "numpy"
    if single and compiled(pl, kinds[0]):      # compiled by a background job or an earlier call
        return "numba"
    if single and not generic_kernel.covers(pl):   # no generic kernel runs it: numpy, the specialised loop queued
        if work >= SPECIALISE_WORK and compile_child.available():   # (in a child: this thread runs the numpy loop)
            _queue(pl, kinds, t1, rtol, atol, max_step)
        return mode
    if not single or (work < GENERIC_WORK and not _slow_numpy(pl)):
        return mode
    if generic_kernel.compiled() or (worth_loading(pl, work) and generic_ready()):
        if work >= SPECIALISE_WORK:
            _queue(pl, kinds, t1, rtol, atol, max_step)
        return "generic"
    if generic_kernel.on_disk():     # a short run in a process that has not loaded the kernel: numpy now, and the
        submit("generic-load", generic_kernel.warm)   # kernel loaded in the background thread for the next runs
    return mode


def choose_fixed(pl, ensemble):
    """The loop of a fixed-step "auto" run that the engine would compile (numba installed, enough work):
    "numba" when its compiled loop is ready in this process (one trajectory: the specialised "fixed"
    function; an ensemble: :func:`integrators.backends.batch_kernels.fixed_ready`) or in numba's disk cache (a
    child process's compile, loaded in the call: :func:`_from_disk`), else "numpy" with
    that compile queued in the background (:func:`submit`). Policy "wait": "numba" (compiled in the call)."""
    if policy() == "wait":
        return "numba"
    if ensemble:
        if batch_kernels.fixed_ready(pl) or _from_disk(pl, "fixed_batch", batch_kernels.warm_fixed):
            return "numba"
        submit(("fixed_batch", pl.st.key, getattr(pl.tab, "name", None), pl.lie, pl.terms),
               _job(batch_kernels.warm_fixed, pl, "fixed_batch"))
        return "numpy"
    if compiled(pl, "fixed") or _from_disk(pl, "fixed", _warm_fixed):
        return "numba"
    submit(("fixed", pl.st.key, getattr(pl.tab, "name", None), pl.lie, pl.terms), _job(_warm_fixed, pl, "fixed"))
    return "numpy"


def _from_disk(pl, name, warm):
    """Load the plan's compiled loop ``name`` in the call when a child process (or an earlier process) left it in
    numba's disk cache (its marker, :func:`specialised_on_disk`) and no compile runs in this process: ``warm(pl)``,
    a fraction of a second. True when loaded; a failed load goes to FAILED (the run then takes numpy)."""
    if busy() or not specialised_on_disk(pl, name):
        return False
    try:
        warm(pl)
    except Exception as exc:  # noqa: BLE001 - reported in FAILED; the run takes numpy
        FAILED.append(((name, pl.st.key), f"loading {name} from numba's disk cache: {type(exc).__name__}: {exc}"))
        return False
    return True


def choose_independent(pl, grid):
    """The kernel of an ensemble="independent" "auto" run that the engine would compile: "numba" when the specialised
    kernel is ready (:func:`integrators.backends.batch_kernels.independent_ready`) or in numba's disk cache
    (:func:`_from_disk`), else "generic" when the generic ensemble kernel
    (:mod:`integrators.backends.generic_ensemble`, every algebra, compiled once per machine) is ready
    (:func:`generic_ensemble_ready`), else "numpy"; in the last two cases the specialised kernel's compile is
    queued. Policy "wait": "numba"; "off": nothing queued (the generic ensemble kernel when it is on disk)."""
    name = "independent_grid" if grid else "independent"
    if policy() == "wait" or batch_kernels.independent_ready(pl, grid) or _from_disk(
            pl, name, lambda pl_: batch_kernels.warm_independent(pl_, bool(grid))):
        return "numba"
    generic = _generic_ensemble_applies(pl, grid) and generic_ensemble_ready()
    _queue_independent(pl, grid)
    return "generic" if generic else "numpy"


def choose_small_independent(pl, grid, work):
    """The kernel of an ensemble="independent" "auto" run too small for the engine to compile for (numba installed,
    ``work`` below :data:`integrators.backends.fastpath.AUTO_NUMBA_WORK`), as :func:`choose` takes it for one
    trajectory: "numba" when the specialised kernel has run in this process, else "generic" when the generic ensemble
    kernel is loaded in this process, or on disk and the run pays for loading it (:func:`worth_loading`), else
    "numpy", the generic ensemble kernel then loaded from its disk cache in the background thread for the next
    runs. (A small ensemble in numpy pays its loop's Python per attempt whatever the number of trajectories, and a
    trajectory near a singularity takes tens of thousands of attempts: 20 servo motions on sp(4) in a random basis,
    one of them 85,679 steps, 40 s in numpy.) Policy "wait": "numpy", as before (the engine's choice)."""
    if policy() == "wait":
        return "numpy"
    if batch_kernels.independent_ready(pl, grid):
        return "numba"
    if not _generic_ensemble_applies(pl, grid):
        return "numpy"
    if generic_ensemble.compiled() or (worth_loading(pl, work) and generic_ensemble.on_disk()):
        return "generic" if generic_ensemble_ready() else "numpy"
    if generic_ensemble.on_disk():
        submit("generic-ensemble-load", generic_ensemble.warm)
    return "numpy"


def choose_numba_independent(pl, grid):
    """The kernel of a backend="numba" ensemble="independent" run: "numba" (the specialised kernel) when it is
    ready in this process or in numba's disk cache (its marker, :func:`specialised_on_disk`), else "generic"
    (:mod:`integrators.backends.generic_ensemble`) when that kernel is compiled or on disk (loaded in the call,
    about a second), with the specialised kernel's compile queued in a child process; when neither is there (a
    fresh machine) "numpy" now, the generic ensemble kernel's compile queued (and the specialised one's when it
    compiles in a child process). Policies "wait" and "off": "numba", the specialised kernel compiled in the call
    (as before the generic ensemble kernel)."""
    if policy() in ("wait", "off"):
        return "numba"
    name = "independent_grid" if grid else "independent"
    if batch_kernels.independent_ready(pl, grid) or specialised_on_disk(pl, name):
        return "numba"
    if not _generic_ensemble_applies(pl, grid):
        return "numba"
    if generic_ensemble_ready():
        _queue_independent(pl, grid)
        return "generic"
    if compile_child.available():
        _queue_independent(pl, grid)
    return "numpy"


def _generic_ensemble_applies(pl, grid):
    """The generic ensemble kernel runs every plan of an adaptive pair but the orbit space's
    (:func:`integrators.backends.generic_kernel.covers`); an output grid needs the pair's continuous extension
    (every pair of the registry has one)."""
    return generic_kernel.covers(pl) and (not grid or pl.tab.P is not None)


def _queue_independent(pl, grid):
    """Queue the compile of the plan's specialised independent-ensemble kernel (a child process)."""
    name = "independent_grid" if grid else "independent"
    submit(("independent", pl.st.key, pl.tab.name, pl.lie, pl.terms, None if pl.proj is None else pl.proj.key,
            bool(grid)), _job(batch_kernels.warm_independent, pl, name, bool(grid)))


def generic_ensemble_ready():
    """True when the generic ensemble kernel (:mod:`integrators.backends.generic_ensemble`) can run now without a
    compile: compiled in this process, or loaded here from numba's disk cache (only while no background job holds
    the compiler lock; a failed load goes to FAILED); else its compile is queued (a child process,
    :func:`integrators.backends.generic_ensemble.warm_elsewhere`) and False."""
    if generic_ensemble.compiled():
        return True
    if not busy() and generic_ensemble.on_disk():
        try:
            generic_ensemble.warm()
        except Exception as exc:  # noqa: BLE001 - reported in FAILED; the run takes another kernel
            FAILED.append(("generic_ensemble", f"loading the generic ensemble kernel: {type(exc).__name__}: {exc}"))
            return False
        return generic_ensemble.compiled()
    submit("generic_ensemble", generic_ensemble.warm_elsewhere)
    return False


def mark_independent(pl, grid):
    """Record that the plan's specialised independent-ensemble kernel is in numba's disk cache (after a call ran
    it: compiled or loaded), once per plan and grid in a process, so a later process takes it
    (:func:`choose_numba_independent`) instead of the generic ensemble kernel."""
    name = "independent_grid" if grid else "independent"
    if (id(pl), name) in _MARKED:
        return
    m = _spec_marker(pl, name)
    if m is not None and not m.exists():
        write_marker(m)
    _MARKED.add((id(pl), name))


def _warm_fixed(pl):
    """A run of no step of the plan's one-trajectory fixed-step loop: compiles it (or loads it)."""
    n = pl.st.n
    pl.function("fixed", "numba")(0.0, 0, 1, np.empty(1), np.empty((1, n)), 0.0, *([0.0] * (2 * n)))
    write_marker(_spec_marker(pl, "fixed"))


def continue_fixed(pl):
    """The loop a fixed-step "auto" run of one trajectory continues in after a chunk of NUMPY_CHUNK Python
    steps: "numba" when its compiled loop (queued by :func:`choose_fixed`) is ready in this process, else
    "scalar" (asked again after the next chunk)."""
    return "numba" if policy() == "wait" or compiled(pl, "fixed") else "scalar"


def worth_loading(pl, work):
    """True when a run of estimated ``work`` (Hairer's starting step into the interval: 3-6 times the
    accepted steps) pays for loading the generic kernel into this process (numba's import and the disk
    cache: about a second): work >= GENERIC_LOAD_WORK, or an RKMK pair on an algebra without a closed-form
    exponential (its numpy loop costs 0.4-40 ms a step and its first call seconds of code generation)."""
    return work >= GENERIC_LOAD_WORK or _slow_numpy(pl)


#: the closed forms whose numpy loop is cheap (a few scalar functions and products of 3 or 6 components)
CHEAP_CLOSED = ("so3", "se3", "ad3", "ad3x2")


def _slow_numpy(pl):
    """An RKMK pair on an algebra without a cheap closed-form exponential (:data:`CHEAP_CLOSED`): its numpy loop
    costs 0.4-40 ms a step and its first call 0.5-3 s of code generation (so(4), so(5) in
    benchmarks/generic_kernel.py), more than loading the generic kernel. (:func:`choose` asks only for plans the
    generic kernel covers: not the steps on an almost abelian algebra's orbits.)"""
    return bool(pl.lie) and pl.st.closed not in CHEAP_CLOSED


def continue_with(pl, t1, rtol, atol, max_step, grid=False):
    """The loop a single "auto" run continues in after NUMPY_CHUNK Python steps: "numba" when the
    specialised loop is compiled, else "generic" when that kernel is ready, else "scalar" (numpy, asked
    again after the next chunk), queueing the missing compiles: the generic kernel's (in a child process,
    :func:`integrators.backends.generic_kernel.warm_elsewhere`), the specialised loop's in a child process too,
    or, where it would compile in this process's thread, only once the generic kernel runs (its compiled loop
    releases the interpreter lock; the Python loop would starve). ``grid``: the run fills an output grid, the
    specialised loop is then "adaptive_grid" (the generic kernel fills the grid too)."""
    kind = "adaptive_grid" if grid else "adaptive"
    if policy() == "wait" or compiled(pl, kind):
        return "numba"
    generic = generic_kernel.covers(pl) and generic_ready()
    if generic or compile_child.available():   # (a compile in this process's thread would starve the Python
        _queue(pl, (kind,), t1, rtol, atol, max_step)   # loop: then only once the generic kernel runs)
    return "generic" if generic else "scalar"


def _queue(pl, kinds, t1, rtol, atol, max_step):
    """Queue the compiles of the plan's specialised ``kinds`` (:func:`loop_kinds`) not compiled in this process,
    each by its warm call: :func:`_warm_grid`, :func:`_warm_batch` (with or without a grid), :func:`_warm_single`."""
    for kind in kinds:
        if compiled(pl, kind):
            continue
        key = (kind, pl.st.key, pl.tab.name, pl.lie, pl.terms, None if pl.proj is None else pl.proj.key)
        if kind == "adaptive_grid":
            submit(key, _job(_warm_grid, pl, kind, t1, rtol, atol, max_step))
        elif kind.startswith("adaptive_batch"):
            submit(key, _job(_warm_batch, pl, kind, t1, rtol, atol, max_step, kind.endswith("_grid")))
        else:
            submit(key, _job(_warm_single, pl, kind, kind, t1, rtol, atol, max_step))


def choose_kernel(key, loaded, marker, job, work, load_work, engine_work):
    """The backend of an "auto" run (numba installed) of a kernel that is not a plan's loop (the tangent flow
    of the Lyapunov spectra, the lane kernel of the Poincare sections, a time-dependent problem's loops), by the
    rules above: "numba" when the kernel is ``loaded`` in this process; policy "wait": "numba" from
    ``engine_work`` (compiled in the call); else, for a run of at least ``load_work``, "numba" when numba's disk
    cache holds it (``marker()``, a path written by the job after its compile, exists) and no background job holds
    the compiler (the job run here loads it: a fraction of a second), or "numpy" with the job queued under ``key``
    (not under policy "off": a :class:`integrators.backends.compile_child.Job` compiles in a child process);
    smaller runs "numpy". ``job()`` makes the job (only when one is needed: its marker hashes the kernel's
    text)."""
    pol = policy()
    if loaded:
        return "numba"
    if pol == "wait":
        return "numba" if work >= engine_work else "numpy"
    if work < load_work:
        return "numpy"
    m = marker()
    if m is not None and m.exists() and not busy():
        job()()
        return "numba"
    if pol != "off":
        submit(key, job())
    return "numpy"


write_marker = numba_kernels.write_marker


def numba_or_cold(key, loaded, marker, job):
    """The loop of a backend="numba" call of a kernel that is not a plan's loop and has no generic kernel (a
    time-dependent problem's loops, the tangent flow of the Lyapunov spectra, the compiled Poincare section):
    "numba" when it is ``loaded`` in this process, under the policies "wait" and "off" (compiling in the call is
    what they ask for), without a writable cache directory (``marker`` None: no child process can compile it) or
    when numba's disk cache holds it (``marker`` exists and no background compile holds numba's lock: loaded in
    the call, a fraction of a second); else "numpy", with ``job()`` (a
    :class:`integrators.backends.compile_child.Job`) queued under ``key`` to compile in a child process (the
    result's backend then ends with :data:`NUMBA_COLD_NOTE`)."""
    if loaded or policy() != "background":
        return "numba"
    if marker is None or (marker.exists() and not busy()):
        return "numba"
    submit(key, job())
    return "numpy"


# ------------------------------------------------------------------ backend="numba" on a structure not compiled
def choose_numba(pl, t1, rtol, atol, max_step, grid=False):
    """The loop of a backend="numba" adaptive run of one trajectory without events (``grid``: it fills an
    output grid): "numba" (the specialised loop) when it is compiled in this process or in numba's disk
    cache (:func:`specialised_on_disk`), else "generic" (:mod:`integrators.backends.generic_kernel`, loaded
    from its disk cache in about 1-2 s; it fills an output grid in its loop too), with the specialised loop's
    compile queued in the background (a child process, :func:`submit`); a later call (or the next process) takes
    it once ready.
    When the generic kernel is not on disk (a fresh machine: its compile is ~12 s of CPU) or a background job
    holds numba's compiler: "numpy" (the generated loop as Python, continuing compiled in chunks once a loop is
    ready, as under "auto"), with the generic kernel's compile queued, and the specialised loop's when it
    compiles in a child process (in this process's thread it would starve the Python loop: then later).
    Policies (LIEDYN_AUTO_COMPILE) "wait" and "off" (no background compiles; the test suite's): "numba", the
    specialised loop compiled in the call as before."""
    kind = "adaptive_grid" if grid else "adaptive"
    pol = policy()
    if pol in ("wait", "off"):
        return "numba"
    if compiled(pl, kind):
        mark_compiled(pl, kind)
        return "numba"
    if specialised_on_disk(pl, kind):
        return "numba"
    if not generic_kernel.covers(pl):   # no generic kernel runs it: numpy now, the specialised loop queued
        if compile_child.available():
            _queue(pl, (kind,), t1, rtol, atol, max_step)
        return "numpy"
    if not generic_kernel.compiled():
        if generic_kernel.on_disk() and not busy():
            generic_kernel.warm()        # from the disk cache: ~1-2 s
        else:   # a fresh machine (or a background compile holds numba's lock): numpy now, never a wait; the
            # generic kernel compiles in a child process, and so does the specialised loop when it can (a
            # compile in this process's thread would starve the Python loop: then once the generic kernel runs)
            submit("generic", generic_kernel.warm_elsewhere)
            if compile_child.available():
                _queue(pl, (kind,), t1, rtol, atol, max_step)
            return "numpy"
    _queue(pl, (kind,), t1, rtol, atol, max_step)
    return "generic"


def _warm_grid(pl, t1, rtol, atol, max_step):
    """A call of no step of the plan's one-trajectory loop that fills an output grid ("adaptive_grid"): compiles
    it (or loads it from numba's disk cache), and writes its marker."""
    n = pl.st.n
    y = np.zeros(n)
    grid = OutputGrid(np.array([t1]), (1, n), pl, pl.targets(y))
    grid.start(t1, y)
    p = 0 if pl.proj is None else pl.proj.p
    ms = math.inf if max_step is None else float(max_step)
    pl.function("adaptive_grid", "numba")(t1, t1, 1.0, rtol, atol, ms, 1, 1, 0, np.empty(4), np.empty((4, n)),
                                          *([0.0] * (2 * n + p)), *grid.args("numba"))
    write_marker(_spec_marker(pl, "adaptive_grid"))


_CODEGEN_DIGEST = []


def _codegen_digest():
    """A digest of everything the specialised texts depend on besides the plan: the code generator's
    sources (integrators/codegen, the helpers), numba's and Python's versions (read once per process)."""
    if not _CODEGEN_DIGEST:
        root = Path(__file__).resolve().parents[1]
        h = hashlib.sha1()
        for f in sorted((root / "codegen").glob("*.py")) + sorted((root / "reference").glob("genhelpers.py")) \
                + [Path(numba_kernels.__file__), Path(__file__).with_name("loader.py")]:
            h.update(f.read_bytes())
        numba = numba_kernels.require("the numba backend")
        h.update(f"{numba.__version__}|{sys.version_info[:2]}".encode())
        _CODEGEN_DIGEST.append(h.hexdigest()[:16])
    return _CODEGEN_DIGEST[0]


def _spec_marker(pl, kind):
    """The file that says the plan's specialised function ``kind`` is in numba's disk cache (written after its
    compile by :func:`_warm_single`, :func:`_warm_grid` or a call that found it compiled), or None when the
    cache directory is not writable."""
    d = numba_kernels.cache_dir()
    if d is None:
        return None
    tag = repr((kind, pl.st.key, pl.tab.name, pl.lie, pl.terms, None if pl.proj is None else pl.proj.key))
    return d / f"liedyn_spec_{hashlib.sha1((_codegen_digest() + tag).encode()).hexdigest()[:20]}.ok"


def specialised_on_disk(pl, kind):
    """True when the plan's specialised function ``kind`` was compiled into numba's disk cache (its marker
    exists): loading it takes a fraction of a second plus the code generation of its text."""
    m = _spec_marker(pl, kind)
    return m is not None and m.exists()


def numba_cold(pl, kind):
    """True for a backend="numba" run that the generic kernel does not cover (a fixed-step run, a shared-step
    ensemble, events) when its compiled loop ``kind`` is neither compiled in this process nor in numba's disk
    cache: it runs numpy while that loop compiles in the background (its result.backend ends with
    :data:`NUMBA_COLD_NOTE`; a fixed-step run of one trajectory continues compiled from the chunk the loop is
    ready, :func:`integrators.backends.fastpath.run_fixed`). False when the loop is ready, or under the policies
    "wait" and "off" (compiling in the call is what they ask for)."""
    if policy() != "background":
        return False
    return not (compiled(pl, kind) or specialised_on_disk(pl, kind))


def mark_compiled(pl, kind):
    """Record that the plan's specialised function ``kind`` is in numba's disk cache (after a call compiled it);
    once per plan and kind in a process (no file system access on later calls)."""
    if (id(pl), kind) in _MARKED or not compiled(pl, kind):
        return
    m = _spec_marker(pl, kind)
    if m is not None and not m.exists():
        write_marker(m)
    _MARKED.add((id(pl), kind))


#: (id of a plan, kind) whose marker this process wrote or found (plans live as long as the process)
_MARKED = set()
