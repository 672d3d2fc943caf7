"""Time to the first result (issue 24): backend="numba" on a structure whose specialised loop is neither
compiled nor in numba's disk cache runs the generic kernel and queues the specialised compile
(integrators.backends.auto_compile.choose_numba); a fixed-step "auto" run of one trajectory continues in the
compiled loop in chunks once it is ready (fastpath._fixed_chunks).

Expected values: the numpy backend's run of the same generated loop (the specialised text run as Python, its
output grid too; the generic kernel is tested against the numpy reference in test_generic_kernel.py, its grid
against the specialised loop's in test_generic_kernel_grid.py). No specialised loop is compiled here (minutes):
the queue records its jobs instead.
"""

import math

import numpy as np
import pytest

from integrators import METHODS, integrate
from integrators.backends import auto_compile, compile_child, fastpath, generic_kernel, numba_kernels
from integrators.core.errors import MethodError
from liegroups import named

from ._problems import quadratic_problem, start

needs_numba = pytest.mark.skipif(not numba_kernels.available(), reason="numba not installed")


def _random_basis(alg, seed):
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.standard_normal((alg.dim, alg.dim)))[0]
    return alg.change_basis(Q * rng.uniform(0.5, 2.0, alg.dim)[None, :])


@pytest.fixture
def cold(monkeypatch, tmp_path):
    """Every specialised loop "not compiled and not on disk", the cache markers in an empty directory, and the
    background queue recording its jobs instead of compiling."""
    jobs = []
    monkeypatch.setattr(auto_compile, "submit", lambda key, job: jobs.append(key))
    monkeypatch.setattr(auto_compile, "compiled", lambda pl, kind: False)
    monkeypatch.delenv("LIEDYN_AUTO_COMPILE", raising=False)
    return jobs


def _problem(seed, alg=None):
    alg = alg or _random_basis(named.se3(), seed)
    return quadratic_problem(alg, seed), start(alg.dim, seed)



@needs_numba
@pytest.mark.parametrize("method", ["rkmk853", "rk853_projected"])
def test_cold_numba_runs_the_generic_kernel_and_queues_the_specialised_loop(cold, method, monkeypatch):
    generic_kernel.warm()
    monkeypatch.setattr(auto_compile, "specialised_on_disk", lambda pl, kind: False)
    P, y0 = _problem(31)
    kw = dict(method=method, rtol=1e-9, atol=1e-11)
    a = integrate(P, y0, (0.0, 3.0), backend="numba", **kw)
    b = integrate(P, y0, (0.0, 3.0), backend="numpy", **kw)
    assert a.backend == auto_compile.NUMBA_GENERIC_LABEL and b.backend == "numpy"
    assert [k[0] for k in cold] == ["adaptive"]                      # the specialised loop, in the background
    assert a.status == b.status == 0 and abs(a.nsteps - b.nsteps) <= 1
    assert np.max(np.abs(a.y[-1] - b.y[-1])) <= 1e-11 * (1.0 + np.max(np.abs(b.y)))
    # with an output grid: the generic kernel fills it in its loop, equal to the numpy backend's grid to round-off
    te = np.linspace(0.0, 3.0, 31)
    g = integrate(P, y0, (0.0, 3.0), backend="numba", t_eval=te, **kw)
    gn = integrate(P, y0, (0.0, 3.0), backend="numpy", t_eval=te, **kw)
    assert g.backend == auto_compile.NUMBA_GENERIC_LABEL and np.array_equal(g.t, te)
    assert np.max(np.abs(g.y - gn.y)) <= 1e-10 * (1.0 + np.max(np.abs(gn.y)))
    assert cold[-1][0] == "adaptive_grid"
    if METHODS[method].project:   # the grid states on the Casimirs' level set of y0 too
        from integrators.codegen import projection
        pr = projection.of_algebra(P.algebra)
        assert np.max(np.abs(pr.values(g.y) - pr.values(y0))) <= 1e-12 * (1.0 + np.max(np.abs(pr.values(y0))))


@needs_numba
def test_the_decision_and_the_switch(cold, monkeypatch):
    generic_kernel.warm()
    P, y0 = _problem(32)
    M = METHODS["rkmk853"]
    pl = fastpath.plan(P, M.tableau, M.lie, M.terms, y0)
    on_disk = set()
    monkeypatch.setattr(auto_compile, "specialised_on_disk", lambda pl, kind: kind in on_disk)
    assert auto_compile.choose_numba(pl, 1.0, 1e-8, 1e-10, None) == "generic"
    on_disk.add("adaptive")            # a background job finished (its marker): the specialised loop is loaded
    assert auto_compile.choose_numba(pl, 1.0, 1e-8, 1e-10, None) == "numba"
    assert auto_compile.choose_numba(pl, 1.0, 1e-8, 1e-10, None, grid=True) == "generic"   # another loop
    on_disk.clear()
    monkeypatch.setattr(auto_compile, "compiled", lambda pl, kind: kind == "adaptive")      # compiled here
    assert auto_compile.choose_numba(pl, 1.0, 1e-8, 1e-10, None) == "numba"
    monkeypatch.setattr(auto_compile, "compiled", lambda pl, kind: False)
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "wait")      # the old behaviour: compiled in the call
    assert auto_compile.choose_numba(pl, 1.0, 1e-8, 1e-10, None) == "numba"
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "off")       # no background job: compiled in the call too
    assert auto_compile.choose_numba(pl, 1.0, 1e-8, 1e-10, None) == "numba"
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "soon")      # a bad policy: a clear error, not a silent default
    with pytest.raises(MethodError, match="LIEDYN_AUTO_COMPILE='soon'"):
        integrate(P, y0, (0.0, 1.0), method="rkmk853", backend="numba")


@needs_numba
def test_markers_name_the_loop_and_the_code_generator(monkeypatch, tmp_path):
    monkeypatch.setenv("LIEDYN_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("LIEDYN_AUTO_COMPILE", raising=False)
    P, y0 = _problem(33)
    M = METHODS["rk45"]
    pl = fastpath.plan(P, M.tableau, M.lie, M.terms, y0)
    assert not auto_compile.specialised_on_disk(pl, "adaptive")
    auto_compile.write_marker(auto_compile._spec_marker(pl, "adaptive"))
    assert auto_compile.specialised_on_disk(pl, "adaptive") and not auto_compile.specialised_on_disk(pl, "fixed")
    monkeypatch.setattr(auto_compile, "_CODEGEN_DIGEST", ["another generator"])   # a changed code generator
    assert not auto_compile.specialised_on_disk(pl, "adaptive")
    # a call the generic kernel does not cover is cold when its loop is neither compiled here nor on disk
    monkeypatch.setattr(auto_compile, "compiled", lambda pl, kind: False)
    assert auto_compile.numba_cold(pl, "fixed")
    monkeypatch.setattr(auto_compile, "compiled", lambda pl, kind: True)
    assert not auto_compile.numba_cold(pl, "fixed")
    monkeypatch.setattr(auto_compile, "compiled", lambda pl, kind: False)
    auto_compile.write_marker(auto_compile._spec_marker(pl, "fixed"))
    assert not auto_compile.numba_cold(pl, "fixed")
    assert auto_compile.numba_cold(pl, "step")
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "wait")        # compiling in the call is what was asked
    assert not auto_compile.numba_cold(pl, "step")


def test_fixed_step_auto_continues_compiled_in_chunks(monkeypatch):
    """A one-trajectory fixed-step "auto" run big enough for numba runs Python chunks until its compiled loop is
    ready, then continues there from the chunk's z, e: the steps and saves of one numpy run. The compiled loop
    is stood in for by the generated Python loop (so the comparison is exact), made 'ready' after 2 chunks."""
    jobs = []
    monkeypatch.setattr(auto_compile, "submit", lambda key, job: jobs.append(key))
    monkeypatch.delenv("LIEDYN_AUTO_COMPILE", raising=False)
    monkeypatch.setattr(numba_kernels, "available", lambda: True)
    monkeypatch.setattr(fastpath, "AUTO_NUMBA_WORK", 100)
    monkeypatch.setattr(fastpath, "NUMPY_CHUNK", 50)
    P, y0 = _problem(34, named.so4())
    M = METHODS["rkmk4"]
    pl = fastpath.plan(P, M.tableau, M.lie, M.terms, y0)
    calls = []

    def ready(pl_, kind):
        calls.append(kind)
        return kind == "fixed" and len(calls) > 2
    monkeypatch.setattr(auto_compile, "compiled", ready)
    real = pl.function
    monkeypatch.setattr(pl, "function", lambda kind, mode: real(kind, "scalar" if mode == "numba" else mode))
    for steps, every in ((523, 7), (400, 50), (130, 1)):
        calls.clear()
        a = integrate(P, y0, (0.0, 2.0), method="rkmk4", steps=steps, save_every=every)
        b = integrate(P, y0, (0.0, 2.0), method="rkmk4", steps=steps, save_every=every, backend="numpy")
        first = -(-50 // every) * every * 2         # two Python chunks of a multiple of save_every >= 50
        assert a.backend == f"numpy for the first {first} steps, then numba", a.backend
        assert np.array_equal(a.t, b.t) and np.array_equal(a.y, b.y) and a.nsteps == b.nsteps == steps
    assert jobs and jobs[0][0] == "fixed"
    # never ready: numpy to the end, in chunks, the same result
    monkeypatch.setattr(auto_compile, "compiled", lambda pl, kind: False)
    a = integrate(P, y0, (0.0, 2.0), method="rkmk4", steps=523, save_every=7)
    b = integrate(P, y0, (0.0, 2.0), method="rkmk4", steps=523, save_every=7, backend="numpy")
    assert a.backend == "numpy" and np.array_equal(a.y, b.y) and np.array_equal(a.t, b.t)


@pytest.mark.parametrize("method", ["rkmk4", "rk4"])
def test_cold_numba_fixed_step_runs_numpy_while_its_loop_compiles(cold, method, monkeypatch):
    """backend="numba" with a fixed-step method whose loop is neither compiled nor on disk (there is no loop for
    every algebra for fixed steps; policy "background"): the generated loop runs in numpy in chunks with that
    compile queued, and continues compiled from the chunk it is ready, the numpy run's states to the bit;
    result.backend says which. (Before: the call compiled the loop, 49 s on so(5) in a random basis.) The
    compiled loop is stood in for by the generated Python loop, so the comparison is exact."""
    monkeypatch.setattr(auto_compile, "specialised_on_disk", lambda pl, kind: False)
    monkeypatch.setattr(fastpath, "NUMPY_CHUNK", 50)
    P, y0 = _problem(35, named.so4())
    M = METHODS[method]
    pl = fastpath.plan(P, M.tableau, M.lie, M.terms, y0)
    real = pl.function
    monkeypatch.setattr(pl, "function", lambda kind, mode: real(kind, "scalar" if mode == "numba" else mode))
    kw = dict(method=method, steps=523, save_every=7)
    b = integrate(P, y0, (0.0, 2.0), backend="numpy", **kw)
    a = integrate(P, y0, (0.0, 2.0), backend="numba", **kw)     # never ready: numpy to the end
    assert a.backend == "numpy" + auto_compile.NUMBA_COLD_NOTE, a.backend
    assert [k[0] for k in cold] == ["fixed"]
    assert np.array_equal(a.t, b.t) and np.array_equal(a.y, b.y) and a.nsteps == b.nsteps == 523
    calls = []

    def ready(pl_, kind):   # asked by the cold label, the choice, then after each chunk: ready after two chunks
        calls.append(kind)
        return kind == "fixed" and len(calls) > 3
    monkeypatch.setattr(auto_compile, "compiled", ready)
    a = integrate(P, y0, (0.0, 2.0), backend="numba", **kw)
    assert a.backend == f"numpy for the first {2 * 56} steps, then numba", a.backend    # chunks of 56 = 8 x 7
    assert np.array_equal(a.t, b.t) and np.array_equal(a.y, b.y)
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "wait")     # compiling in the call is what was asked
    a = integrate(P, y0, (0.0, 2.0), backend="numba", **kw)
    assert a.backend == "numba" and np.array_equal(a.y, b.y)


@pytest.mark.parametrize("ensemble,events,grid,kinds", [
    (True, False, False, ("adaptive_batch",)), (True, False, True, ("adaptive_batch_grid",)),
    (False, True, False, ("adaptive", "step")), (False, True, True, ("adaptive_grid", "step")),
    (True, True, True, ("adaptive_batch_grid",)), (False, False, True, ("adaptive_grid",))])
def test_auto_queues_the_loops_the_run_takes(cold, ensemble, events, grid, kinds, monkeypatch):
    """"auto" (and a cold backend="numba" call) queue the specialised loops the run will call: the shared-step
    ensemble's loop that fills an output grid is "adaptive_batch_grid" (the segmented run of events fills one
    too), one trajectory's events also need the one-step map; once those are compiled the choice is numba (a
    queued "adaptive_batch" for a gridded ensemble left its next call compiling "adaptive_batch_grid" in the call)."""
    P, y0 = _problem(36)
    M = METHODS["rk45"]
    pl = fastpath.plan(P, M.tableau, M.lie, M.terms, np.stack([y0, y0]) if ensemble else y0)
    assert auto_compile.loop_kinds(ensemble, events, grid) == kinds
    args = (pl, "numba", 1e7, ensemble, events, 1.0, 1e-8, 1e-10, None)
    first = auto_compile.choose(*args, grid=11 if grid else 0)
    assert first == ("numpy" if ensemble or events else first) and first in ("numpy", "generic")
    assert tuple(k[0] for k in cold) == kinds
    monkeypatch.setattr(auto_compile, "compiled", lambda pl, kind: kind in kinds)
    assert auto_compile.choose(*args, grid=11 if grid else 0) == "numba"


class _Crossing:
    """g = z_0 (a sign change of the first coordinate), not terminal."""
    terminal, direction = False, 0

    def __call__(self, t, y):
        return np.asarray(y)[..., 0]


@pytest.mark.parametrize("case", ["ensemble", "ensemble grid", "events", "events grid"])
def test_cold_numba_ensembles_and_events_run_numpy_while_their_loops_compile(cold, case, monkeypatch):
    """backend="numba" on a shared-step ensemble or with events (no loop for every algebra runs them), their loops
    neither compiled nor on disk: the generated loop runs as Python, the numpy run to the bit, with the loops the
    run takes queued (they compiled in the call before: rk853_projected on so(4) in a random basis, an ensemble of
    100: 59 s); result.backend says so."""
    monkeypatch.setattr(auto_compile, "specialised_on_disk", lambda pl, kind: False)
    P, y0 = _problem(37)
    Y = np.stack([y0, 0.5 * y0, -0.8 * y0]) if case.startswith("ensemble") else y0
    kw = dict(method="rk45", rtol=1e-8, atol=1e-10)
    if case.endswith("grid"):
        kw["t_eval"] = np.linspace(0.0, 2.0, 21)
    if case.startswith("events"):
        kw["events"] = _Crossing()
    b = integrate(P, Y, (0.0, 2.0), backend="numpy", **kw)
    a = integrate(P, Y, (0.0, 2.0), backend="numba", **kw)
    assert a.backend == "numpy" + auto_compile.NUMBA_COLD_NOTE, a.backend
    batch, ev, grid = case.startswith("ensemble"), case.startswith("events"), case.endswith("grid")
    assert tuple(k[0] for k in cold) == auto_compile.loop_kinds(batch, ev, grid)
    assert a.status == b.status == 0 and np.array_equal(a.t, b.t) and np.array_equal(a.y, b.y)
    if ev:
        assert len(b.t_events[0]) >= 1 and np.array_equal(a.t_events[0], b.t_events[0])


def test_fixed_step_chunks_stop_at_an_overflow_like_one_run(monkeypatch):
    """A run that overflows after several chunks keeps the last finite state, as the unchunked loop does."""
    monkeypatch.setattr(auto_compile, "submit", lambda key, job: None)
    monkeypatch.setattr(auto_compile, "compiled", lambda pl, kind: False)
    monkeypatch.setattr(numba_kernels, "available", lambda: True)
    monkeypatch.setattr(fastpath, "AUTO_NUMBA_WORK", 10)
    monkeypatch.setattr(fastpath, "NUMPY_CHUNK", 20)
    alg = named.sl2()      # z' = ad*_{Mz} z on sl(2) with an indefinite M blows up in finite time
    M = np.diag([1.0, -3.0, 2.0])
    from integrators import CoadjointProblem
    P = CoadjointProblem(alg, lambda z: z @ M, velocity_matrix=M)
    y0 = 0.02 * np.array([3.0, 2.0, -4.0])
    kw = dict(method="rk4", steps=4000, save_every=3, check=False)
    a = integrate(P, y0, (0.0, 40.0), **kw)
    b = integrate(P, y0, (0.0, 40.0), backend="numpy", **kw)
    assert b.status == -1 and a.status == -1 and a.nsteps == b.nsteps and b.nsteps > 3 * 21
    assert np.array_equal(a.t, b.t) and np.array_equal(a.y, b.y)
    assert math.isfinite(a.y[-1].sum())


@needs_numba
def test_auto_with_an_output_grid_takes_the_loaded_generic_kernel(cold):
    """Under "auto" (policy background) a run with an output grid on an algebra without a closed-form exponential
    takes the generic kernel when it is loaded, the grid filled in its loop: the numpy backend's grid to
    round-off; so does a closed-form structure's small run (GENERIC_WORK = 0: the loaded kernel from any work)."""
    generic_kernel.warm()
    P, y0 = _problem(35)
    te = np.linspace(0.0, 3.0, 41)
    kw = dict(method="rkmk853", rtol=1e-9, atol=1e-11, t_eval=te)
    a = integrate(P, y0, (0.0, 3.0), backend="auto", **kw)
    b = integrate(P, y0, (0.0, 3.0), backend="numpy", **kw)
    assert a.backend == auto_compile.GENERIC_LABEL and np.array_equal(a.t, te)
    assert np.max(np.abs(a.y - b.y)) <= 1e-10 * (1.0 + np.max(np.abs(b.y)))
    assert not cold                                   # a small run: nothing queued
    P3, y3 = _problem(36, named.so3())
    c = integrate(P3, y3, (0.0, 1.0), method="rk45", t_eval=np.linspace(0.0, 1.0, 5), backend="auto")
    d = integrate(P3, y3, (0.0, 1.0), method="rk45", t_eval=np.linspace(0.0, 1.0, 5), backend="numpy")
    assert c.backend == auto_compile.GENERIC_LABEL and c.nsteps == d.nsteps
    assert np.max(np.abs(c.y - d.y)) <= 1e-12 * (1.0 + np.max(np.abs(d.y)))


@needs_numba
def test_cold_numba_on_a_fresh_machine_runs_numpy_and_queues_the_generic_kernel(cold, monkeypatch):
    """No generic kernel on disk (a fresh machine; or a background job holding numba's compiler): backend="numba"
    runs the generated loop as Python (the numpy backend's result, exactly) and says so, with the generic
    kernel's compile queued, and the specialised loop's too when it compiles in a child process (a compile in a
    thread of this process would starve the Python loop: then it is queued once the generic kernel runs)."""
    monkeypatch.setattr(generic_kernel, "compiled", lambda: False)
    monkeypatch.setattr(generic_kernel, "on_disk", lambda: False)
    monkeypatch.setattr(auto_compile, "specialised_on_disk", lambda pl, kind: False)
    P, y0 = _problem(37)
    kw = dict(method="rk853_projected", rtol=1e-9, atol=1e-11)
    a = integrate(P, y0, (0.0, 3.0), backend="numba", **kw)
    b = integrate(P, y0, (0.0, 3.0), backend="numpy", **kw)
    assert a.backend == "numpy" + auto_compile.NUMBA_NUMPY_NOTE
    assert np.array_equal(a.y, b.y) and np.array_equal(a.t, b.t)
    assert cold[0] == "generic" and [k[0] for k in cold[1:]] == ["adaptive"]       # (a child process)
    cold.clear()
    monkeypatch.setattr(compile_child, "available", lambda: False)      # no child process: the thread, later
    integrate(P, y0, (0.0, 3.0), backend="numba", **kw)
    assert cold == ["generic"]        # the specialised loop once the generic kernel runs (next test)
    cold.clear()
    monkeypatch.setattr(generic_kernel, "on_disk", lambda: True)      # on disk, but the compiler is busy
    monkeypatch.setattr(auto_compile, "busy", lambda: True)
    M = METHODS["rk853_projected"]
    from integrators.codegen import projection
    pl = fastpath.plan(P, M.tableau, M.lie, M.terms, y0, projection.of_algebra(P.algebra))
    assert auto_compile.choose_numba(pl, 1.0, 1e-8, 1e-10, None) == "numpy" and cold[0] == "generic"


@needs_numba
def test_the_generic_kernel_compiles_in_a_child_process_and_the_python_loop_is_left_alone(cold, monkeypatch):
    """warm_elsewhere compiles (here: finds) the kernel in numba's disk cache from a child process; a Python run
    that continues after a chunk queues the generic kernel and, in a child process, the specialised loop; without
    a child process only the generic kernel while it is not ready (a compile in a thread of this process would
    starve the Python loop), the specialised loop once the generic kernel runs."""
    generic_kernel.warm()                        # (in the disk cache: the child only loads it)
    generic_kernel.warm_elsewhere()
    assert generic_kernel.on_disk()
    P, y0 = _problem(38)
    M = METHODS["rkmk853"]
    pl = fastpath.plan(P, M.tableau, M.lie, M.terms, y0)
    monkeypatch.setattr(generic_kernel, "compiled", lambda: False)
    monkeypatch.setattr(generic_kernel, "on_disk", lambda: False)
    assert auto_compile.continue_with(pl, 1.0, 1e-8, 1e-10, math.inf) == "scalar"
    assert cold[0] == "generic" and [k[0] for k in cold[1:]] == ["adaptive"]        # a child process: both
    cold.clear()
    monkeypatch.setattr(compile_child, "available", lambda: False)   # the thread: not beside the Python loop
    assert auto_compile.continue_with(pl, 1.0, 1e-8, 1e-10, math.inf) == "scalar" and cold == ["generic"]
    monkeypatch.setattr(generic_kernel, "compiled", lambda: True)
    assert auto_compile.continue_with(pl, 1.0, 1e-8, 1e-10, math.inf) == "generic"
    assert cold[-1][0] == "adaptive"
