"""Time to the first result (issue 24) for the kernels that are no plan's loop and have no generic kernel: a
time-dependent problem's loops (fixed step, adaptive pairs, shared-step ensembles), the tangent flow of
lyapunov_spectrum and the compiled section of poincare_section. Under a cold backend="numba" (neither loaded nor in
numba's disk cache) they run numpy while a child process compiles the kernel
(integrators.backends.auto_compile.numba_or_cold).

Expected values: the numpy backend's run of the same generated code, to the bit; what the child process would
receive, rebuilt from the job's pickled payload (its function and a plan whose marker is the run's, so the child
writes the module the caller looks for). No kernel is compiled here: the queue records its jobs.
"""

import pickle

import numpy as np
import pytest
import sympy as sp

from integrators import integrate, lyapunov_spectrum, poincare_section
from integrators.backends import (auto_compile, compile_child, numba_kernels, section_runner, tangent_runner,
                                  timed_adaptive, timed_runner)
from liegroups import named
from servo import TimeDependentSystem

from ._problems import quadratic_problem, start

needs_numba = pytest.mark.skipif(not numba_kernels.available(), reason="numba not installed")
t = sp.Symbol("t")


@pytest.fixture
def queued(monkeypatch, tmp_path):
    """Policy "background", the markers in an empty cache directory (``tmp_path``), and the background queue
    recording its (key, job) pairs instead of compiling."""
    jobs = []
    monkeypatch.setenv("LIEDYN_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("LIEDYN_AUTO_COMPILE", raising=False)
    monkeypatch.setattr(auto_compile, "submit", lambda key, job: jobs.append((key, job)))
    return jobs


def _received(job, cache):
    """(the function, its arguments) a child process rebuilds from ``job``'s pickled payload, after checking the job
    is a child's (a compile_child.Job whose marker is in the cache directory ``cache``, named in the payload)."""
    assert isinstance(job, compile_child.Job) and job.marker.parent == cache
    modname, qualname, args, marker = pickle.loads(job.payload())
    assert marker == str(job.marker)
    return compile_child.resolve(modname, qualname), args


@needs_numba
@pytest.mark.parametrize("method", ["rk4", "rkmk4"])
def test_cold_numba_time_dependent_fixed_step_runs_numpy_while_a_child_compiles(queued, method, monkeypatch, tmp_path):
    """A time-dependent problem's fixed-step loop (integrators.backends.timed_runner) under backend="numba", neither
    loaded nor in numba's disk cache: the generated loop runs in numpy (the numpy backend's states to the bit) and
    its compile is queued as a child-process job whose plan rebuilds the same module (the marker, a hash of the
    module's text, is the one the run looks for). (Before: compiled in the call, 97 s for rk4 and 59 s for rkmk4 on
    so(5) in a random basis.) With the marker on disk the call takes numba; policy "wait" compiles in the call."""
    monkeypatch.setattr(timed_runner, "_fixed_loaded", lambda n, tab, lie=None: False)
    S = TimeDependentSystem(named.so3(), [2.0, 1.5, 1.0], gyrostat=[0, 0, sp.cos(t)], period=2 * np.pi).problem()
    m0 = np.array([0.3, 0.2, 0.5])
    kw = dict(method=method, steps=200, save_every=4)
    b = integrate(S, m0, (0.0, 2 * np.pi), backend="numpy", **kw)
    a = integrate(S, m0, (0.0, 2 * np.pi), backend="numba", **kw)
    assert a.backend == "numpy" + auto_compile.NUMBA_COLD_NOTE, a.backend
    assert np.array_equal(a.t, b.t) and np.array_equal(a.y, b.y)
    (key, job), = queued
    assert key[0] == "timed-fixed"
    fn, (n, tab, lie) = _received(job, tmp_path)                               # what the child process receives
    assert fn is timed_runner._fixed_warm and (lie is not None) == (method == "rkmk4")
    assert timed_runner._fixed_marker(n, tab, lie) == job.marker               # the child's module is the run's
    auto_compile.write_marker(job.marker)                                     # the child done: on disk
    monkeypatch.setattr(timed_runner, "_fixed_warm", lambda *a: None)
    ran = []
    def function(n, tab, mode, lie=None):
        ran.append(mode)
        raise RuntimeError("stop")
    monkeypatch.setattr(timed_runner, "function", function)
    with pytest.raises(RuntimeError, match="stop"):
        integrate(S, m0, (0.0, 2 * np.pi), backend="numba", **kw)
    assert ran == ["numba"] and len(queued) == 1
    job.marker.unlink()
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "wait")                         # compiling in the call is asked
    with pytest.raises(RuntimeError, match="stop"):
        integrate(S, m0, (0.0, 2 * np.pi), backend="numba", **kw)
    assert ran == ["numba", "numba"] and len(queued) == 1


@needs_numba
def test_cold_numba_time_dependent_adaptive_pair_runs_numpy_while_a_child_compiles(queued, monkeypatch, tmp_path):
    """The generated adaptive loop of a time-dependent problem (its coefficient source as text) under backend="numba",
    neither loaded nor on disk: the numpy run's states to the bit, result.backend says why, and the child's job
    carries the plan as its text (the same marker when rebuilt from the pickle). (Before: compiled in the call,
    108 s for rk45 on so(5) in a random basis.) With the marker on disk the call takes numba."""
    monkeypatch.setattr(timed_adaptive.AdaptivePlan, "compiled", lambda self, mode="numba": False)
    P = TimeDependentSystem(named.so3(), [2.0, 1.5, 1.0], gyrostat=[0, 0, sp.cos(t)], period=2 * np.pi).problem()
    m0 = np.array([0.3, 0.4, 1.2])
    kw = dict(method="rk45", rtol=1e-10, atol=1e-12)
    b = integrate(P, m0, (0.0, 7.0), backend="numpy", **kw)
    a = integrate(P, m0, (0.0, 7.0), backend="numba", **kw)
    assert b.backend == "numpy" and a.backend == "numpy" + auto_compile.NUMBA_COLD_NOTE, a.backend
    assert np.array_equal(a.t, b.t) and np.array_equal(a.y, b.y) and a.nsteps == b.nsteps
    (key, job), = queued
    assert key[0] == "timed-adaptive"
    fn, (pl,) = _received(job, tmp_path)
    assert fn is timed_adaptive.AdaptivePlan.warm and isinstance(pl, timed_adaptive.AdaptivePlan)
    assert pl.marker() == job.marker
    # an ensemble: one shared step; its compiled loop is another module, queued as its own job
    M0 = m0 + 0.01 * np.arange(6.0).reshape(2, 3)
    ea = integrate(P, M0, (0.0, 7.0), backend="numba", **kw)
    eb = integrate(P, M0, (0.0, 7.0), backend="numpy", **kw)
    assert ea.backend == "numpy" + auto_compile.NUMBA_COLD_NOTE and np.array_equal(ea.y, eb.y)
    key_b, job_b = queued[1]
    assert key_b[0] == "timed-batch" and job_b.marker != job.marker
    fn, (pl_b,) = _received(job_b, tmp_path)
    assert fn is timed_adaptive.AdaptivePlan.warm_batch and pl_b.batch_marker() == job_b.marker
    auto_compile.write_marker(job.marker)                   # the child done: the next call loads it
    monkeypatch.setattr(timed_adaptive, "run_adaptive", lambda pl, *a: (_ for _ in ()).throw(RuntimeError(a[-2])))
    with pytest.raises(RuntimeError, match="numba"):
        integrate(P, m0, (0.0, 7.0), backend="numba", **kw)
    assert len(queued) == 2


@needs_numba
def test_cold_numba_lyapunov_spectrum_and_poincare_section_run_numpy_while_a_child_compiles(queued, monkeypatch,
                                                                                            tmp_path):
    """The compiled tangent flow of lyapunov_spectrum and the compiled section of poincare_section under
    backend="numba", neither loaded nor on disk: the numpy run's results to the bit, result.backend says why, and
    each kernel's compile is queued as a child-process job whose pickled plan writes the module the call looks for
    (its marker). (Before: compiled in the call, minutes on so(5) in a random basis.)"""
    monkeypatch.setattr(tangent_runner, "compiled", lambda pl, B: False)
    monkeypatch.setattr(section_runner, "compiled", lambda pl: False)
    P, y0 = quadratic_problem(named.so4(), 36), start(6, 36)

    def child(job, warm, marker):
        fn, args = _received(job, tmp_path)
        assert fn is warm and marker(args[0]) == job.marker

    kw = dict(dt=0.5, h=0.01)
    a = lyapunov_spectrum(P, y0, 5.0, backend="numba", **kw)
    b = lyapunov_spectrum(P, y0, 5.0, backend="numpy", **kw)
    assert b.backend == "numpy" and a.backend == "numpy" + auto_compile.NUMBA_COLD_NOTE, a.backend
    assert np.array_equal(a.exponents, b.exponents) and np.array_equal(a.y, b.y)
    (key, job), = queued
    assert key[0] == "tangent"
    child(job, tangent_runner.warm_job, tangent_runner._marker)
    queued.clear()
    sec = (np.eye(len(y0))[0], float(y0[0]))
    a = poincare_section(P, y0, sec, 20.0, steps=4000, direction=0, backend="numba")
    b = poincare_section(P, y0, sec, 20.0, steps=4000, direction=0, backend="numpy")
    assert b.backend == "numpy" and a.backend == "numpy" + auto_compile.NUMBA_COLD_NOTE, a.backend
    assert len(a.points) > 0 and np.array_equal(a.points, b.points) and np.array_equal(a.times, b.times)
    (key, job), = queued      # the section's kernel only (not the fixed-step loop of its numpy chunks)
    assert key[0] == "section"
    child(job, section_runner.warm, section_runner._marker)
