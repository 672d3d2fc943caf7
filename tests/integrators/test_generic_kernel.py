"""The generic compiled kernel (integrators.backends.generic_kernel): one adaptive loop for every algebra, the
structure constants as data, and the "auto" policy that runs it (integrators.backends.auto_compile) instead of
waiting on a compiler.

Expected values come from the numpy reference loop (``fast=False``: generic numpy stages, expm of the scaled
Taylor series with squaring, dexp^-1 by spaces.dexpinv_series, the reference projection), a second
implementation of the same method; the kernel must take the same steps and end at the same state to
round-off (amplified by the flow over a short interval). The algebras are drawn with a seed: named ones
in random bases and random solvable ones R x_D R^k, dimensions 3 to 8.
"""

import math

import numpy as np
import pytest

from integrators import METHODS, CoadjointProblem, integrate
from integrators.backends import auto_compile, background, batch_kernels, fastpath, generic_kernel, numba_kernels
from integrators.codegen import generic_source, projection
from integrators.core.errors import MethodError
from integrators.geometry.recognition import Structure, closed_form
from liegroups import LieAlgebra, named

from ._problems import quadratic_problem, start

NUMBA = numba_kernels.available()
needs_numba = pytest.mark.skipif(not NUMBA, reason="numba not installed")
PAIRS = ("rk45", "rk853", "rkmk45", "rkmk853", "rk853_projected")


def _random_basis(alg, seed):
    rng = np.random.default_rng(seed)
    n = alg.dim
    Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    return alg.change_basis(Q * rng.uniform(0.5, 2.0, n)[None, :])


def _almost_abelian(seed, n):
    """R x_D R^(n-1): [e_n, e_i] = sum_j D[i, j] e_j, the other brackets 0 (Jacobi holds for any D)."""
    D = np.random.default_rng(seed).uniform(-1.0, 1.0, (n - 1, n - 1))
    C = np.zeros((n, n, n))
    for i in range(n - 1):
        C[n - 1, i, :n - 1] = D[i]
        C[i, n - 1, :n - 1] = -D[i]
    return LieAlgebra(C, name=f"R x_D R^{n - 1} ({seed})")


def _sl3():
    return named.sl(3)


#: (label, builder) of the drawn algebras, dimensions 3..8
DRAWN = {
    "so3 random basis": lambda: _random_basis(named.so3(), 1),
    "bianchi VI_-2.5": lambda: named.bianchi("VI", a=-2.5),
    "R x_D R^3": lambda: _almost_abelian(2, 4),
    "R x_D R^4": lambda: _almost_abelian(3, 5),
    "se3 random basis": lambda: _random_basis(named.se3(), 4),
    "so4 random basis": lambda: _random_basis(named.so4(), 5),
    "R x_D R^6": lambda: _almost_abelian(6, 7),
    "sl3": _sl3,
}


def _plan(alg, method, seed):
    M = METHODS[method]
    P = quadratic_problem(alg, seed)
    y0 = start(alg.dim, seed)
    proj = projection.of_algebra(alg) if M.project else None
    pl = fastpath.plan(P, M.tableau, M.lie, M.terms, y0, proj)
    assert pl is not None
    return P, y0, pl


def _kernel_run(pl, y0, t1, rtol, atol, mode="numba", h=0.0, max_steps=10**6, cz=None):
    """The generic loop of one trajectory from t = 0 (h <= 0: its own starting step), every step saved."""
    n = pl.st.n
    fn = generic_kernel.function(pl.st, pl.tab, pl.lie, pl.terms, pl.proj, mode)
    ts, ys = np.empty(8), np.empty((8, n))
    ts[0], ys[0] = 0.0, y0
    cz = pl.targets(y0).tolist() if cz is None else cz
    out = fn(0.0, t1, h, rtol, atol, math.inf, 1, max_steps, 0, ts, ys, *y0.tolist(), *([0.0] * n), *cz)
    status, t, h, ns, nr, j = out[:6]
    return status, t, h, ns, nr, out[6][:j], out[7][:j], np.array(out[8:8 + n]), np.array(out[8 + n:8 + 2 * n])


@needs_numba
@pytest.mark.parametrize("label", sorted(DRAWN))
def test_generic_kernel_agrees_with_the_numpy_reference(label):
    alg = DRAWN[label]()
    assert 3 <= alg.dim <= 8
    for k, method in enumerate(PAIRS):
        if METHODS[method].project and projection.of_algebra(alg) is None:
            continue            # no polynomial Casimir to project onto: the pair does not apply
        P, y0, pl = _plan(alg, method, 7 + k)
        if not generic_kernel.covers(pl):   # RKMK on an almost abelian algebra moves with R^2 on its orbits
            assert pl.lie and closed_form(alg.structure_constants) == "almost_abelian"
            continue                        # (integrators.geometry.orbit_space): not the kernel's method
        ref = integrate(P, y0, (0.0, 2.0), method=method, rtol=1e-8, atol=1e-10, fast=False)
        status, t, _, ns, nr, ts, ys, z, e = _kernel_run(pl, y0, 2.0, 1e-8, 1e-10)
        assert status == 0 and t == 2.0 and ref.status == 0
        assert abs(ns - ref.nsteps) <= 1 and abs(nr - ref.nrejected) <= 1, (method, ns, ref.nsteps)
        scale = 1.0 + np.max(np.abs(ref.y))
        assert np.max(np.abs((z + e) - ref.y[-1])) <= 1e-9 * scale, method
        if ns == ref.nsteps:   # the same steps (the error norm of a small error is a cancelled quantity: the
            # step sizes from it agree to 1e-7..3e-5 relative, not to round-off; rkmk853's first step here has
            # err 5e-8, whose spread under 1e-16 relative changes of the stages is 2.5e-3, so the next step
            # h err^(-1/7) agrees to ~4e-4)
            np.testing.assert_allclose(ts, ref.t, rtol=1e-3, atol=0)
        if pl.proj is not None:   # every accepted step on the level set of C(y0)
            drift = np.abs(pl.proj.values(ys) - pl.proj.values(y0))
            assert np.max(drift) <= 1e-12 * (1.0 + np.max(np.abs(pl.proj.values(y0)))), method


def test_python_text_is_the_numba_kernel_and_the_generated_loop():
    """The kernel's text run as Python floats takes the generated (straight-line, per-structure) loop's
    steps exactly and ends at its state to round-off (a third implementation: closed-form and folded
    exponentials there, the plain Taylor action here)."""
    alg = _random_basis(named.so4(), 9)
    for method in ("rkmk45", "rk853_projected"):
        _, y0, pl = _plan(alg, method, 3)
        status, t, _, ns, nr, ts, ys, z, e = _kernel_run(pl, y0, 1.0, 1e-7, 1e-9, mode="python")
        gen = pl.function("adaptive", "scalar")
        n = alg.dim
        T, Y = np.empty(8), np.empty((8, n))
        T[0], Y[0] = 0.0, y0
        out = gen(0.0, 1.0, 0.0, 1e-7, 1e-9, math.inf, 1, 10**6, 0, T, Y, *y0, *([0.0] * n), *pl.targets(y0))
        assert (status, ns, nr) == (out[0], out[3], out[4]) and status == 0
        zg = np.array(out[8:8 + n]) + np.array(out[8 + n:8 + 2 * n])
        assert np.max(np.abs(z + e - zg)) <= 1e-12 * (1.0 + np.max(np.abs(zg)))
        if NUMBA:
            nb = _kernel_run(pl, y0, 1.0, 1e-7, 1e-9)
            assert nb[3] == ns and np.max(np.abs(nb[7] + nb[8] - z - e)) <= 1e-13 * (1.0 + np.max(np.abs(z)))


def test_nan_field_gives_status_minus_one_and_the_budget_minus_two():
    """A field that is NaN everywhere: every attempt's error norm is NaN (read as inf), the step shrinks by
    MIN_FACTOR until it is below 1e-300 and the loop stops with status -1 after no accepted step; the
    generated loop of the same structure says the same. A budget of 5 accepted steps stops with status -2
    after exactly 5, and a second call from the returned (t, h, z, e) ends where the whole run ends."""
    n = 3
    C = np.zeros((n, n, n))
    for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
        C[i, j, k], C[j, i, k] = 1.0, -1.0
    W = np.diag([1.0, 2.0, np.nan])
    st = Structure(C, W, np.zeros(n))
    tab = METHODS["rk853"].tableau
    fn = generic_kernel.function(st, tab, False, 1, None, "python")
    y0 = [0.3, 0.2, 0.1]
    out = fn(0.0, 1.0, 0.1, 1e-8, 1e-10, math.inf, 1, 100, 0, np.empty(4), np.empty((4, n)), *y0, 0.0, 0.0, 0.0)
    assert out[0] == -1 and out[3] == 0 and out[4] > 100 and out[2] < 1e-300
    # the budget, through the plan of a real problem
    alg = named.so3()
    P, y0, pl = _plan(alg, "rkmk853", 11)
    mode = "numba" if NUMBA else "python"
    whole = _kernel_run(pl, y0, 30.0, 1e-9, 1e-11, mode=mode)
    part = _kernel_run(pl, y0, 30.0, 1e-9, 1e-11, mode=mode, max_steps=5)
    assert part[0] == -2 and part[3] == 5 and part[1] < 30.0 and whole[0] == 0 and whole[3] > 5
    n = alg.dim
    fn = generic_kernel.function(pl.st, pl.tab, pl.lie, pl.terms, None, mode)
    ts, ys = np.empty(4), np.empty((4, n))
    rest = fn(part[1], 30.0, part[2], 1e-9, 1e-11, math.inf, 1, 10**6, 0, ts, ys, *part[7], *part[8])
    assert rest[0] == 0 and rest[3] + 5 == whole[3]
    zf = np.array(rest[8:8 + n]) + np.array(rest[8 + n:8 + 2 * n])
    assert np.max(np.abs(zf - (whole[7] + whole[8]))) <= 1e-14


@needs_numba
def test_growing_the_saved_steps_between_calls_of_the_loop_changes_nothing():
    """The loop (gk_steps, compiled without reference counting) stops when the saved steps have no row for the
    next step and the entry grows them and calls it again with the counters, the step size and the first stage
    kept: a run that grows from 1 row to ~30 saves every step as a run with room for all of them does, bit for
    bit (a restart from scratch would recompute the starting step; the FSAL stage recomputed at the
    compensated state would differ in the last bits)."""
    alg = _random_basis(named.so4(), 5)
    for method in ("rk853_projected", "rkmk45"):
        _, y0, pl = _plan(alg, method, 4)
        n = alg.dim
        fn = generic_kernel.function(pl.st, pl.tab, pl.lie, pl.terms, pl.proj, "numba")
        runs = []
        for rows in (1, 4096):
            ts, ys = np.empty(rows), np.empty((rows, n))
            ts[0], ys[0] = 0.0, y0
            out = fn(0.0, 5.0, 0.0, 1e-9, 1e-11, math.inf, 1, 10**6, 0, ts, ys, *y0.tolist(), *([0.0] * n),
                     *pl.targets(y0).tolist())
            assert out[0] == 0 and out[1] == 5.0
            runs.append((out[5], out[6][:out[5]], out[7][:out[5]], np.array(out[8:])))
        (j1, t1, y1, z1), (j2, t2, y2, z2) = runs
        assert j1 == j2 > 20 and np.array_equal(t1, t2) and np.array_equal(y1, y2) and np.array_equal(z1, z2)


def test_text_carries_the_controller_constants():
    from integrators.core import controller
    text = generic_source.text()
    assert "@" not in text                     # every placeholder filled
    for v in (controller.SAFETY, controller.MIN_FACTOR, controller.MAX_FACTOR):
        assert repr(float(v)) in text
    assert set(generic_source.FUNCTIONS) <= {ln[4:ln.index("(")] for ln in text.splitlines() if ln.startswith("def ")}


def test_generic_mode_is_only_the_adaptive_loop():
    _, y0, pl = _plan(named.so3(), "rk45", 1)
    with pytest.raises(MethodError, match="generic kernel runs the adaptive loop"):
        pl.function("step", "generic")


# ------------------------------------------------------------------ the "auto" policy
@pytest.fixture
def queued(monkeypatch):
    """auto_compile.submit recording its jobs instead of compiling (no compile in the background of a test)."""
    jobs = []
    monkeypatch.setattr(auto_compile, "submit", lambda key, job: jobs.append(key))
    monkeypatch.delenv("LIEDYN_AUTO_COMPILE", raising=False)
    return jobs


def test_auto_runs_numpy_and_queues_the_compiles_when_nothing_is_ready(queued, monkeypatch):
    _, y0, pl = _plan(_random_basis(named.so4(), 21), "rkmk853", 2)   # a structure never compiled here
    monkeypatch.setattr(generic_kernel, "compiled", lambda: False)
    monkeypatch.setattr(generic_kernel, "on_disk", lambda: False)
    got = auto_compile.choose(pl, "numba", 2e6, False, False, 1.0, 1e-8, 1e-10, None)
    assert got == "numpy"
    assert queued[0] == "generic" and queued[1][0] == "adaptive"      # the generic kernel first
    assert auto_compile.continue_with(pl, 1.0, 1e-8, 1e-10, math.inf) == "scalar"
    # ensembles and events never take the generic kernel: numpy while their specialised loops compile
    queued.clear()
    assert auto_compile.choose(pl, "numba", 2e6, True, False, 1.0, 1e-8, 1e-10, None) == "numpy"
    assert [k[0] for k in queued] == ["adaptive_batch"]
    queued.clear()
    assert auto_compile.choose(pl, "numba", 2e6, False, True, 1.0, 1e-8, 1e-10, None) == "numpy"
    assert sorted(k[0] for k in queued if k != "generic") == ["adaptive", "step"]
    # a small run of a closed-form structure stays numpy and queues nothing (its loop not compiled in this
    # process: another test may have compiled the so(3) rk45 loop, which "auto" would then take)
    queued.clear()
    monkeypatch.setattr(auto_compile, "compiled", lambda pl, kind: False)
    _, y3, p3 = _plan(named.so3(), "rk45", 2)
    assert auto_compile.choose(p3, "numpy", 500, False, False, 1.0, 1e-8, 1e-10, None) == "numpy" and not queued


def test_fixed_step_auto_runs_numpy_and_queues_the_compile(queued, monkeypatch):
    # a fixed-step run big enough for numba on a structure never compiled here: numpy now, the compiled
    # loop (one trajectory) or ensemble kernels queued; the numpy result is the numpy backend's
    monkeypatch.setattr(fastpath, "AUTO_NUMBA_WORK", 100)    # "big enough", without a long numpy run
    P, y0, _ = _plan(_random_basis(named.so4(), 23), "rk45", 3)
    Y = y0 + 0.01 * np.random.default_rng(3).standard_normal((30, 6))
    a = integrate(P, Y, (0.0, 1.0), method="rk4", steps=100, save_every=100)
    b = integrate(P, Y, (0.0, 1.0), method="rk4", steps=100, save_every=100, backend="numpy")
    assert a.backend == "numpy" and np.array_equal(a.y, b.y)
    assert [k[0] for k in queued] == ["fixed_batch"]
    M = METHODS["rk4"]
    pl = fastpath.plan(P, M.tableau, M.lie, M.terms, y0)
    queued.clear()
    assert auto_compile.choose_fixed(pl, False) == "numpy" and [k[0] for k in queued] == ["fixed"]
    monkeypatch.setattr(auto_compile, "compiled", lambda pl, kind: kind == "fixed")   # ready: taken
    assert auto_compile.choose_fixed(pl, False) == "numba"
    monkeypatch.setattr(batch_kernels, "fixed_ready", lambda pl: True)
    assert auto_compile.choose_fixed(pl, True) == "numba"
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "wait")                                  # compile in the call
    monkeypatch.setattr(batch_kernels, "fixed_ready", lambda pl: False)
    assert auto_compile.choose_fixed(pl, True) == "numba"


def test_independent_ensemble_auto_runs_numpy_and_queues_the_compile(queued, monkeypatch):
    # ensemble="independent" big enough for numba on a structure never compiled here: numpy now (the
    # numpy backend's result), the kernel queued; taken once ready; compiled in the call under "wait"
    monkeypatch.setattr(fastpath, "AUTO_NUMBA_WORK", 100)    # "big enough", without a long numpy run
    # (the generic ensemble kernel not ready: tests/integrators/test_generic_ensemble.py tests that choice)
    monkeypatch.setattr(auto_compile, "generic_ensemble_ready", lambda: False)
    P, y0, _ = _plan(_random_basis(named.so4(), 25), "rk45", 4)
    Y = y0 + 0.01 * np.random.default_rng(4).standard_normal((30, 6))
    kw = dict(method="rk45", rtol=1e-6, atol=1e-9, ensemble="independent")
    a = integrate(P, Y, (0.0, 2.0), **kw)
    b = integrate(P, Y, (0.0, 2.0), backend="numpy", **kw)
    assert a.backend == "numpy" and np.array_equal(a.y, b.y)
    assert [k[0] for k in queued] == ["independent"] and queued[0][-1] is False
    M = METHODS["rk45"]
    pl = fastpath.plan(P, M.tableau, M.lie, M.terms, y0)
    monkeypatch.setattr(batch_kernels, "independent_ready", lambda pl, grid: not grid)
    assert auto_compile.choose_independent(pl, False) == "numba"
    queued.clear()
    assert auto_compile.choose_independent(pl, True) == "numpy" and queued[0][-1] is True
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "wait")
    assert auto_compile.choose_independent(pl, True) == "numba"


def test_auto_policy_wait_and_a_bad_policy(queued, monkeypatch):
    _, y0, pl = _plan(named.so3(), "rk45", 2)
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "wait")
    assert auto_compile.choose(pl, "numba", 2e6, False, False, 1.0, 1e-8, 1e-10, None) == "numba"
    assert auto_compile.choose(pl, "numpy", 5e4, False, False, 1.0, 1e-8, 1e-10, None) == "numpy"
    assert auto_compile.continue_with(pl, 1.0, 1e-8, 1e-10, math.inf) == "numba" and not queued
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "later")
    with pytest.raises(MethodError, match="LIEDYN_AUTO_COMPILE='later'.*background, wait, off"):
        auto_compile.choose(pl, "numba", 2e6, False, False, 1.0, 1e-8, 1e-10, None)


def test_background_queue_runs_jobs_once_and_records_failures(monkeypatch):
    # an earlier test's job in this process (the guard's load of the Casimir rows, queued while a test had the
    # policy unset) finishes first
    assert background.wait(120)
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "off")
    auto_compile.submit(("t", 0), lambda: 1 / 0)          # "off": nothing is queued
    assert not auto_compile.busy()
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "background")
    done = []
    gate = __import__("threading").Event()
    auto_compile.submit(("t", 1), lambda: (gate.wait(5), done.append(1)))
    auto_compile.submit(("t", 1), lambda: done.append(99))        # the same key while pending: dropped
    auto_compile.submit(("t", 2), lambda: 1 / 0)
    gate.set()
    assert background.wait(10)
    assert done == [1] and not auto_compile.busy()
    assert any(k == ("t", 2) and "ZeroDivisionError" in msg for k, msg in auto_compile.FAILED)


@needs_numba
def test_auto_takes_the_generic_kernel_with_the_reference_result(queued):
    """With the generic kernel ready, an RKMK run on an algebra without a closed form (a structure whose
    specialised loop is not compiled) runs the generic kernel under "auto", queues no wait, and agrees
    with the numpy backend's generated loop to round-off."""
    generic_kernel.warm()
    alg = _random_basis(named.se3(), 33)     # no closed-form exponential in this basis
    P = quadratic_problem(alg, 4)
    y0 = start(alg.dim, 4)
    kw = dict(method="rkmk853", rtol=1e-9, atol=1e-11)
    a = integrate(P, y0, (0.0, 3.0), backend="auto", **kw)
    b = integrate(P, y0, (0.0, 3.0), backend="numpy", **kw)
    assert a.backend == auto_compile.GENERIC_LABEL and b.backend == "numpy"
    assert a.nsteps == b.nsteps and a.status == 0
    # the steps agree to the rounding of a small error norm (~1e-5 relative), the end state to round-off
    np.testing.assert_allclose(a.t, b.t, rtol=1e-4, atol=0)
    assert np.max(np.abs(a.y[-1] - b.y[-1])) <= 1e-11 * (1.0 + np.max(np.abs(b.y)))


@needs_numba
def test_auto_switches_a_long_python_run_to_the_generic_kernel_and_keeps_the_budget(queued, monkeypatch):
    """A Python run under "auto" that outlasts NUMPY_CHUNK steps continues in the generic kernel when the
    specialised loop is not compiled (no wait), with the numpy run's steps and end state to round-off; a step
    budget spent in the generic kernel ends the run with status -1 and the budget's message."""
    generic_kernel.warm()
    alg = _random_basis(named.so4(), 44)          # closed form ad3x2: small runs stay numpy at first
    P = quadratic_problem(alg, 5)
    y0 = start(alg.dim, 5)
    kw = dict(method="rk853_projected", rtol=1e-10, atol=1e-12)
    monkeypatch.setattr(fastpath, "NUMPY_CHUNK", 30)
    monkeypatch.setattr(auto_compile, "GENERIC_WORK", 1e12)    # the run starts in numpy
    monkeypatch.setattr(auto_compile, "compiled", lambda pl, kind: False)
    a = integrate(P, y0, (0.0, 20.0), backend="auto", **kw)
    b = integrate(P, y0, (0.0, 20.0), backend="numpy", **kw)
    assert a.backend == f"numpy for the first 30 steps, then {auto_compile.GENERIC_LABEL}" and b.nsteps > 60
    assert abs(a.nsteps - b.nsteps) <= 1 and a.status == b.status == 0
    # the step sequences agree to ~1e-5 relative (the rounding of small error norms), so the ends differ by
    # the method's global error over ~350 steps at rtol 1e-10 (measured 9e-9), not by round-off
    assert np.max(np.abs(a.y[-1] - b.y[-1])) <= 1e-7 * (1.0 + np.max(np.abs(b.y)))
    monkeypatch.setattr(auto_compile, "GENERIC_WORK", 0)
    c = integrate(P, y0, (0.0, 20.0), backend="auto", max_steps=7, **kw)
    assert c.backend == auto_compile.GENERIC_LABEL and c.status == -1 and c.nsteps == 7
    assert "step budget of 7" in c.message and c.t[-1] < 20.0


def test_kernel_pieces_match_the_reference_definitions():
    """dexp^-1 (summed to round-off and truncated) against spaces.dexpinv_series, the Taylor action against
    scipy's expm of ad(x)^T, and the Casimir values and gradients of the projection against the algebra's
    own Casimirs, on sl(3) in a random basis (dense C), with the kernel's functions run as Python."""
    import scipy.linalg
    from integrators.geometry.spaces import dexpinv_series
    from integrators.reference import genhelpers
    ns = dict(genhelpers.SCALAR, np=np, math=math)
    exec(compile(generic_source.text(), "<generic>", "exec"), ns)
    alg = _random_basis(_sl3(), 3)
    n = alg.dim
    C = alg.structure_constants
    st = Structure(C, np.eye(n), np.zeros(n))
    arrays = generic_kernel.data(st, METHODS["rk45"].tableau, True, 100, projection.of_algebra(alg))
    _, _, ci, cj, ck, cv, W, c, P, hasP, G2, bern = arrays[:12]
    qb, qp, qi, qv, qc = arrays[-7:-2]
    rng = np.random.default_rng(5)

    def bracket(x, y):          # -[x, y]_k = -sum_ij x_i y_j C[i, j, k], batched over rows of y
        return -np.einsum("...i,...j,ijk->...k", x, y, C)

    M, t1, t2, out = np.empty((n, n)), np.empty(n), np.empty(n), np.empty(n)
    for scale in (0.05, 0.3):
        theta, v = scale * rng.standard_normal(n), rng.standard_normal(n)
        for terms in (100, 5):
            ns["gk_dexpinv"](ci, cj, ck, cv, G2, bern, terms, False, theta, v, out, M, t1, t2)
            ref = dexpinv_series(bracket, theta, v, terms)
            assert np.max(np.abs(out - ref)) <= 1e-14 * np.max(np.abs(ref)), (scale, terms)
        x, z = 3.0 * scale * rng.standard_normal(n), rng.standard_normal(n)
        adT = np.einsum("i,ijk->jk", x, C)
        expected = scipy.linalg.expm(adT) @ z
        work = [np.empty(n) for _ in range(5)]
        for delta in (False, True):
            ns["gk_act"](ci, cj, ck, cv, x, False, z, delta, out, M, *work)
            got = out + (z if delta else 0.0)
            assert np.max(np.abs(got - expected)) <= 1e-13 * np.max(np.abs(expected)), (scale, delta)
    cas = alg.casimirs()
    p = len(cas)
    vals, G = np.empty(p), np.empty((p, n))
    z = rng.standard_normal(n)
    mon = np.empty(int(np.max(qb[:, 0] + qb[:, 1])))        # the monomials below the top degree (work)
    ns["gk_casimirs"](qb, qp, qi, qv, qc, p, z, vals, G, True, mon)
    only = np.empty(p)
    ns["gk_casimirs"](qb, qp, qi, qv, qc, p, z, only, G[:0], False, mon)   # the values alone: the same
    assert np.array_equal(only, vals)
    for k, cf in enumerate(cas):
        assert abs(vals[k] - cf(z)) <= 1e-12 * (1.0 + abs(cf(z)))
        assert np.max(np.abs(G[k] - cf.grad(z))) <= 1e-12 * (1.0 + np.max(np.abs(cf.grad(z))))
