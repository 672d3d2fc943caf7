"""The generated tangent flow and the generated Poincare section against independent values: the numpy
tangent flow (einsum Jacobian from the structure constants, numpy's Householder QR), the numpy section
(integrate + vectorized Illinois) and scipy's event finder."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import integrators
from integrators import CoadjointProblem, IntegrationInputError, MethodError, ODEProblem
from integrators.analysis.phase_space import lyapunov as lyap
from integrators.analysis.phase_space.tangent import leaf_normals, tangent_field
from integrators.backends import fastpath, numba_kernels, section_runner, tangent_blocks, tangent_runner
from integrators.methods import get_method
from liegroups import named

from ._problems import suslov

needs_numba = pytest.mark.skipif(not numba_kernels.available(), reason="numba is not installed")


def kirchhoff():
    W = np.diag([1.0, 0.5, 1 / 3, 1.0, 0.8, 0.6])
    W[0, 4] = W[4, 0] = 0.1
    c = np.array([0.0, 0.1, 0.0, 0.0, 0.0, 0.2])      # a linear term: w = W z + c
    return CoadjointProblem(named.se3(), lambda z: z @ W.T + c), np.array([0.3, 0.2, 0.9, 1.0, 0.4, 0.1])


@pytest.mark.parametrize("leaf", [None, "auto"])
@pytest.mark.parametrize("which", ["kirchhoff", "suslov"])
@pytest.mark.parametrize("mode", ["scalar", "array"])
def test_generated_tangent_flow_equals_the_numpy_one(which, leaf, mode):
    p, y0 = kirchhoff() if which == "kirchhoff" else suslov()[:2]
    n = p.dim
    rng = np.random.default_rng(3)
    Y = y0 + 0.05 * rng.standard_normal((12, n))
    if which == "suslov":
        c = p.linear_invariants[0]
        Y -= np.outer(Y @ c, c) / (c @ c)
    m = get_method("rk4", p)
    normals = leaf_normals(p, leaf)
    V0, k = lyap.initial_frame(normals, Y)
    r = n - k
    pl = tangent_runner.plan(p, m.tableau, Y, leaf, r)
    # 7 steps then one projection and QR, by the generated code
    h, sub = 0.03, 7
    yg, Vg, acc, _, _, done = tangent_runner.run(pl, Y, V0, np.zeros((12, n + 4)), 0, sub, 1, 1, h, sub * h, mode)
    assert np.all(done == 1)
    # the same by the numpy loop: the einsum Jacobian stepped by the tableau, the normals removed by
    # N (N^T N)^-1 N^T, numpy's QR with a positive diagonal
    tf = tangent_field(p)
    assert tf.kind == "structure constants"
    y, V = Y.copy(), V0.copy()
    for _ in range(sub):
        y, V = lyap.rk_tangent_step(tf, m, 0.0, y, V, h)
    if normals is not None:
        V[..., :k] = lyap._project_out(normals(y), V[..., :k])
    Q, R = np.linalg.qr(V)
    d = np.diagonal(R, axis1=-2, axis2=-1)
    Q = Q * np.sign(d)[:, None, :]
    np.testing.assert_allclose(yg, y, rtol=0, atol=1e-14)
    np.testing.assert_allclose(Vg, Q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(acc[:, :n], np.log(np.abs(d)), rtol=0, atol=1e-12)
    # and the tangent flow itself is the derivative of the state's flow: a central difference of the
    # generated transient (state only) along the first frame vector
    eps = 1e-6
    yp = tangent_runner.run(pl, Y + eps * V0[..., 0], V0, np.zeros((12, n + 4)), sub, 1, 0, 1, h, h, mode)[0]
    ym = tangent_runner.run(pl, Y - eps * V0[..., 0], V0, np.zeros((12, n + 4)), sub, 1, 0, 1, h, h, mode)[0]
    y7 = Y.copy()
    V = V0.copy()
    for _ in range(sub):
        y7, V = lyap.rk_tangent_step(tf, m, 0.0, y7, V, h)
    np.testing.assert_allclose((yp - ym) / (2 * eps), V[..., 0], rtol=0, atol=1e-8)


@pytest.mark.parametrize("leaf", [None, "auto"])
def test_generated_spectrum_equals_the_reference_spectrum(leaf):
    p, y0 = kirchhoff()
    Y = y0 + 0.05 * np.random.default_rng(1).standard_normal((3, 6))
    ref = integrators.lyapunov_spectrum(p, Y, 6.0, dt=0.2, h=0.05, transient=0.5, leaf=leaf, fast=False)
    gen = integrators.lyapunov_spectrum(p, Y, 6.0, dt=0.2, h=0.05, transient=0.5, leaf=leaf, backend="numpy")
    one = integrators.lyapunov_spectrum(p, Y[1], 6.0, dt=0.2, h=0.05, transient=0.5, leaf=leaf, backend="numpy")
    assert ref.backend == "reference" and gen.backend == "numpy"
    for r in (gen,):
        np.testing.assert_allclose(r.exponents, ref.exponents, rtol=0, atol=1e-12)
        np.testing.assert_allclose(r.transverse, ref.transverse, rtol=0, atol=1e-12)
        np.testing.assert_allclose(r.running, ref.running, rtol=0, atol=1e-12)
        np.testing.assert_allclose(r.megno, ref.megno, rtol=0, atol=1e-11)
        np.testing.assert_allclose(r.t, ref.t, rtol=1e-15)
        np.testing.assert_allclose(r.y, ref.y, rtol=0, atol=1e-13)
    np.testing.assert_allclose(one.exponents, ref.exponents[1], rtol=0, atol=1e-12)
    assert gen.exponents.shape == ((3, 4) if leaf == "auto" else (3, 6))   # se(3)*: two Casimirs


@needs_numba
def test_compiled_spectrum_equals_the_reference_spectrum():
    I = np.array([1.0, 2.0, 3.0])
    p = CoadjointProblem(named.so3(), lambda z: z / I)
    y0 = np.array([[1.0, 0.3, 0.2], [0.2, 1.0, 0.5], [0.1, 0.2, 1.2]])
    ref = integrators.lyapunov_spectrum(p, y0, 20.0, dt=0.5, h=0.05, fast=False)
    for Y in (y0, y0[2]):
        gen = integrators.lyapunov_spectrum(p, Y, 20.0, dt=0.5, h=0.05, backend="numba")
        assert gen.backend == "numba"
        np.testing.assert_allclose(gen.exponents, ref.exponents if Y.ndim == 2 else ref.exponents[2], atol=1e-12)
        np.testing.assert_allclose(gen.running, ref.running if Y.ndim == 2 else ref.running[:, 2], atol=1e-12)
    # integrable: the exponents on the leaf vanish (like log t / t), the Casimir's is absent
    assert ref.exponents.shape == (3, 2) and np.max(np.abs(ref.exponents)) < 0.2


@pytest.mark.parametrize("backend", ["numpy", pytest.param("numba", marks=needs_numba)])
def test_running_products_of_the_norms_leave_their_range_and_the_sums_stay_those_of_the_logs(backend):
    # the generated loop keeps prod R_ii of the columns 1.. and moves its log into the sum when it leaves
    # [1e-30, 1e30]. At the saddle m = (0, M, 0) of the rigid body (rotation about the middle axis, a fixed
    # point of m' = m x I^-1 m) the tangent flow is linear with the exponents +lam, 0, -lam,
    # lam = M sqrt((1/I1 - 1/I2)(1/I2 - 1/I3)) (the linearisation's eigenvalues); over t = 100 the product
    # of the last column falls to e^(-289), leaving the range four times. The numpy loop (one log per
    # R_ii, numpy's Householder QR) gives the same running estimates, and both the closed form.
    I = np.array([1.0, 2.0, 3.0])
    p = CoadjointProblem(named.so3(), lambda z: z / I)
    M = 10.0
    lam = M * np.sqrt((1 / I[0] - 1 / I[1]) * (1 / I[1] - 1 / I[2]))
    y0 = np.array([0.0, M, 0.0])
    ref = integrators.lyapunov_spectrum(p, y0, 100.0, dt=0.2, h=0.02, leaf=None, fast=False)
    gen = integrators.lyapunov_spectrum(p, y0, 100.0, dt=0.2, h=0.02, leaf=None, backend=backend)
    assert gen.backend == backend
    assert lam * 100.0 > 4 * 69.1                               # ln(1e30) = 69.1
    np.testing.assert_allclose(gen.exponents, ref.exponents, rtol=0, atol=1e-12)
    np.testing.assert_allclose(gen.running, ref.running, rtol=0, atol=1e-12)
    np.testing.assert_allclose(gen.exponents, [lam, 0.0, -lam], rtol=0, atol=0.03)   # O(1/t) start-up


def test_a_problem_without_generated_tangent_flow_says_why_for_numba():
    # a pendulum with a periodically moving pivot: sin(x) is not a polynomial of degree <= 2 in the state
    pend = ODEProblem(lambda t, y: np.stack([y[..., 1], -(1 + 0.3 * np.cos(t)) * np.sin(y[..., 0])], -1), 2,
                      period=2 * np.pi)
    with pytest.raises(MethodError, match="not a polynomial of degree <= 2" if numba_kernels.available() else "numba"):
        integrators.lyapunov_spectrum(pend, [1.0, 0.0], 2.0, dt=0.1, backend="numba")
    with pytest.raises(MethodError, match="not a polynomial of degree <= 2" if numba_kernels.available() else "numba"):
        integrators.integrate(pend, [1.0, 0.0], (0.0, 1.0), method="rk4", h=0.1, backend="numba")
    assert integrators.lyapunov_spectrum(pend, [1.0, 0.0], 2.0, dt=0.1).backend == "reference"
    p, y0 = kirchhoff()
    jac = tangent_field(p).jac
    with pytest.raises(MethodError, match="jac=" if numba_kernels.available() else "numba"):
        integrators.lyapunov_spectrum(p, y0, 2.0, dt=0.1, jac=jac, backend="numba")
    # with backend "auto" the same calls run the numpy loop, and say so
    r = integrators.lyapunov_spectrum(p, y0, 2.0, dt=0.1, jac=jac)
    assert r.backend == "reference" and r.jacobian == "user jacobian"
    with pytest.raises(IntegrationInputError, match="fast=False"):
        integrators.lyapunov_spectrum(p, y0, 2.0, dt=0.1, fast=False, backend="numba")
    with pytest.raises(MethodError, match="backend"):
        integrators.lyapunov_spectrum(p, y0, 2.0, dt=0.1, backend="cuda")


def rigid_body():
    I = np.array([1.0, 2.0, 3.0])
    return CoadjointProblem(named.so3(), lambda z: z / I, velocity_matrix=np.diag(1 / I)), I


@pytest.mark.parametrize("method", ["rk4", "rkmk4"])
def test_generated_section_equals_the_numpy_section(method):
    p, I = rigid_body()
    Z = np.random.default_rng(2).standard_normal((5, 3))
    a = np.array([0.0, 1.0, 0.0])
    ref = integrators.poincare_section(p, Z, (a, 0.0), 40.0, h=0.05, method=method, backend="numpy")
    m = get_method(method, p)
    pl = fastpath.plan(p, m.tableau, m.lie, m.terms, Z)
    # a small buffer: the orbits come back for more, so the refill is exercised too
    P, T, st, K, worst = section_runner.crossings(pl, Z, 0.0, 0.05, 800, a, 0.0, 1, 1e-13, None, "scalar", cap=3)
    assert np.all(st == 0) and np.all(K == 800)
    assert sum(len(q) for q in T) >= 10
    for b in range(5):
        np.testing.assert_allclose(P[b], ref.points[b], rtol=0, atol=1e-13)
        np.testing.assert_allclose(T[b], ref.times[b], rtol=0, atol=1e-12)
    assert worst <= 1e-13
    capped = section_runner.crossings(pl, Z, 0.0, 0.05, 800, a, 0.0, 1, 1e-13, 2, "scalar", cap=3)
    assert all(len(q) == min(2, len(r)) for q, r in zip(capped[1], ref.times))


@needs_numba
def test_compiled_section_agrees_with_scipy_events():
    p, I = rigid_body()
    Z = np.array([[1.0, 0.5, 0.3], [0.2, -0.4, 1.1]])
    a = np.array([0.0, 1.0, 0.0])
    res = integrators.poincare_section(p, Z, (a, 0.0), 30.0, h=0.01, backend="numba", direction=0)
    assert res.backend == "numba" and res.status == 0
    for b in range(2):
        ev = lambda t, y: y[1]
        ref = solve_ivp(lambda t, y: np.cross(y, y / I), (0, 30.0), Z[b], events=ev, rtol=1e-12, atol=1e-13,
                        method="DOP853")
        np.testing.assert_allclose(res.times[b], ref.t_events[0], atol=1e-7)
        np.testing.assert_allclose(res.points[b], ref.y_events[0], atol=1e-7)
        assert np.max(np.abs(res.points[b][:, 1])) < 1e-12
        np.testing.assert_allclose(res.invariants["casimir:m1**2 + m2**2 + m3**2"][b], np.sum(Z[b] ** 2),
                                   rtol=1e-7)
    capped = integrators.poincare_section(p, Z, (a, 0.0), 30.0, h=0.01, backend="numba", max_crossings=3,
                                          direction=0)
    assert list(capped.info["crossings"]) == [3, 3]
    np.testing.assert_array_equal(capped.times[1], res.times[1][:3])


@pytest.mark.parametrize("k", [1, 3, 5])
def test_the_k_largest_exponents_are_those_of_the_first_k_vectors(k):
    # Gram-Schmidt leaves the span of the first k vectors to themselves: a run with k vectors has the
    # logs of the first k columns of the whole run (one of them the first column, which MEGNO follows)
    p, y0 = kirchhoff()
    Y = y0 + 0.05 * np.random.default_rng(4).standard_normal((2, 6))
    full = integrators.lyapunov_spectrum(p, Y, 6.0, dt=0.2, h=0.05, fast=False)
    for kw in ({"fast": False}, {"backend": "numpy"}):
        part = integrators.lyapunov_spectrum(p, Y, 6.0, dt=0.2, h=0.05, k=k, **kw)
        lam = np.concatenate([part.exponents, part.transverse], axis=-1)
        assert lam.shape == (2, k) and part.exponents.shape == (2, min(k, 4))
        for b in range(2):
            allx = np.concatenate([full.exponents[b], full.transverse[b]])
            assert max(np.min(np.abs(allx - v)) for v in lam[b]) < 1e-12
        np.testing.assert_allclose(part.megno, full.megno, rtol=0, atol=1e-11)
    with pytest.raises(IntegrationInputError, match="k"):
        integrators.lyapunov_spectrum(p, Y, 6.0, dt=0.2, h=0.05, k=7)


@needs_numba
@pytest.mark.parametrize("method", ["rk4", "rk45"])
def test_lane_section_kernel_gives_the_crossings_of_the_one_orbit_loop(method):
    # the lanes (16 orbits stepped together, an orbit that finishes handing its lane to the next) against the
    # one-orbit loop run in Python floats: the same arithmetic, so the same crossings to the bit, with the
    # buffers refilled (cap), the per-orbit limit, both directions and two orbits that overflow (status -1)
    p, I = rigid_body()
    Z = np.random.default_rng(3).standard_normal((40, 3))
    Z[7] *= 1e3
    Z[5] *= 1e152
    a = np.array([0.3, 1.0, -0.2])
    m = get_method(method, p)
    pl = fastpath.plan(p, m.tableau, m.lie, m.terms, Z)
    assert section_runner.lanes(pl)
    for d, mc, cap in [(1, None, 3), (0, 5, 4), (-1, 7, 100)]:
        ref = section_runner.crossings(pl, Z, 0.5, 0.05, 600, a, 0.1, d, 1e-13, mc, "scalar", cap=cap)
        got = section_runner.crossings(pl, Z, 0.5, 0.05, 600, a, 0.1, d, 1e-13, mc, "numba", cap=cap)
        assert sum(len(q) for q in ref[1]) > 90 and np.count_nonzero(ref[2] == -1) >= 1
        for x, y in zip(ref[0] + ref[1], got[0] + got[1]):
            np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(ref[2], got[2])
        np.testing.assert_array_equal(ref[3], got[3])
        assert ref[4] == got[4] <= 1e-13


@needs_numba
def test_auto_section_takes_the_compiled_kernel_without_waiting_on_a_compiler(monkeypatch, tmp_path):
    from integrators.backends import auto_compile

    monkeypatch.setenv("LIEDYN_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "background")
    monkeypatch.setattr(fastpath, "AUTO_NUMBA_WORK", 1000)
    monkeypatch.setattr(section_runner, "_NUMBA", {})
    jobs = []
    monkeypatch.setattr(auto_compile, "submit", lambda key, job: jobs.append(job))
    p, I = rigid_body()
    Z = np.random.default_rng(5).standard_normal((5, 3))
    run = lambda: integrators.poincare_section(p, Z, (np.array([0.0, 1.0, 0.0]), 0.0), 20.0, h=0.05)
    first = run()
    assert first.backend == "numpy" and len(jobs) == 1            # the numpy path now, the compile queued
    jobs[0]()
    second = run()
    assert second.backend == "numba" and len(jobs) == 1
    for b in range(5):
        np.testing.assert_allclose(second.points[b], first.points[b], rtol=0, atol=1e-12)
    # a new process: the disk cache's marker. A new process has no job of this one's background thread (a load of
    # the check's compiled Casimirs queued by an earlier test in this worker would make the section runner leave the
    # disk cache for a later call: it never waits on the thread)
    from integrators.backends import background
    background.wait()
    monkeypatch.setattr(section_runner, "_NUMBA", {})
    monkeypatch.setattr(numba_kernels, "_NAMESPACES", {})
    assert run().backend == "numba" and len(jobs) == 1


def _lorenz(t, y):
    x, v, w = y[..., 0], y[..., 1], y[..., 2]
    return np.stack([10.0 * (v - x), x * (28.0 - w) - v, x * v - 8.0 / 3.0 * w], -1)


@pytest.mark.parametrize("case", ["kirchhoff-leaf", "kirchhoff-k4", "suslov", "lorenz", "mathieu-period"])
def test_numpy_spectrum_batched_over_time_equals_the_step_by_step_loop(case, monkeypatch):
    # the numpy backend of one trajectory (integrators.backends.tangent_blocks: the stages' Jacobians, the step
    # maps, their products over blocks and the QRs batched over time) against the generated loop that steps the
    # state and the frame together and orthonormalises every interval (mode "scalar", Python floats): the same
    # state (the same generated state code), frame, sums of logs, MEGNO accumulators and running estimates
    leaf, ncols, timing = "auto", None, None
    if case.startswith("kirchhoff"):
        p, y0 = kirchhoff()
        ncols = 4 if case == "kirchhoff-k4" else None
        h, sub, nqr, save = 0.02, 3, 700, 7
    elif case == "suslov":
        p, y0 = suslov()[:2]
        h, sub, nqr, save = 0.05, 2, 400, 3
    elif case == "lorenz":
        p, y0, leaf = ODEProblem(_lorenz, 3), np.array([1.0, 1.0, 1.0]), None
        h, sub, nqr, save = 0.01, 1, 2000, 3
    else:   # x'' + (a - 2 q cos 2t) x = 0 with a period: its coefficients tabled per period
        p = ODEProblem(lambda t, y: np.stack([y[..., 1], -(1.2 - 1.4 * np.cos(2 * t)) * y[..., 0]], -1), 2,
                       period=np.pi)
        y0, leaf = np.array([1.0, 0.2]), None
        h, sub, nqr, save = np.pi / 40, 4, 300, 2
    Y = y0[None]
    m = get_method("rk4", p)
    normals = leaf_normals(p, leaf)
    V0, k = lyap.initial_frame(normals, Y)
    r = p.dim - k
    pl = tangent_runner.plan(p, m.tableau, Y, leaf, r, ncols, 0.0, getattr(p, "period", None))
    nc = pl.ncols
    if pl.timed is not None:
        TB, S = tangent_runner.table(pl, h, 0.0, nqr * sub, getattr(p, "period", None))
        timing = (TB, S, 0)
    acc = np.zeros((1, nc + 4))
    acc[0, :nc] = 0.3 * np.arange(nc)        # a run that continues earlier sums
    acc[0, nc:] = [0.1, 0.2, 0.3, 0.4]
    ref = tangent_runner.run(pl, Y, V0[..., :nc], acc, 0, sub, nqr, save, h, sub * h, "scalar", timing)
    got = tangent_runner.run(pl, Y, V0[..., :nc], acc, 0, sub, nqr, save, h, sub * h, "blocks", timing, normals)
    assert tangent_blocks.run_one(pl, pl.function("states"), Y[0], V0[0, :, :nc], acc[0], sub, nqr, save, h, sub * h,
                                  timing, normals) is not None       # batched, not the loop's fallback
    assert np.all(ref[5] == nqr) and np.all(got[5] == nqr)
    np.testing.assert_array_equal(got[0], ref[0])                        # the state: the same code
    np.testing.assert_allclose(got[1], ref[1], rtol=0, atol=1e-11)       # the frame
    np.testing.assert_allclose(got[2], ref[2], rtol=1e-12, atol=1e-11)   # sums of logs, MEGNO's sums
    np.testing.assert_allclose(got[3], ref[3], rtol=0, atol=1e-12)       # running estimates
    np.testing.assert_allclose(got[4], ref[4], rtol=1e-12, atol=1e-11)   # running MEGNO
    # in chunks of 50 steps (the stages and maps of a chunk in memory at a time): the same run to round-off
    monkeypatch.setattr(tangent_blocks, "CHUNK_STEPS", 50)
    part = tangent_runner.run(pl, Y, V0[..., :nc], acc, 0, sub, nqr, save, h, sub * h, "blocks", timing, normals)
    np.testing.assert_array_equal(part[0], ref[0])
    for a, b in zip(part[1:5], got[1:5]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-11)


def test_numpy_lorenz_spectrum_has_the_exact_sum():
    # the generated path of the Lorenz field (quadratic: its Jacobian the polynomial's derivative), numpy batched
    # over time: the sum of the exponents is the divergence -(sigma + 1 + beta) (to the method's error)
    res = integrators.lyapunov_spectrum(ODEProblem(_lorenz, 3), [1.0, 1.0, 1.0], 150.0, dt=0.1, h=0.01,
                                        transient=10.0, backend="numpy")
    assert res.backend == "numpy"
    assert abs(res.exponents[0] - 0.906) < 0.06 and abs(res.exponents[2] + 14.57) < 0.08
    assert abs(res.exponents.sum() + (10.0 + 1.0 + 8.0 / 3.0)) < 1e-3


def test_numpy_run_that_overflows_stops_as_the_step_by_step_loop():
    # y' = y^2 from y0 = 1 blows up at t = 1: the batched run declines (not finite) and the generated loop keeps
    # the estimates up to its last finite interval, as for a single step-by-step run
    p = ODEProblem(lambda t, y: y * y, 1)
    a = integrators.lyapunov_spectrum(p, [1.0], 2.0, dt=0.05, h=0.01, backend="numpy")
    assert a.backend == "numpy" and a.status == -1
    pl = tangent_runner.plan(p, get_method("rk4", p).tableau, np.ones((1, 1)), None, 0)
    TB, S = tangent_runner.table(pl, 0.01, 0.0, 200, None)
    ref = tangent_runner.run(pl, np.ones((1, 1)), np.ones((1, 1, 1)), np.zeros((1, 5)), 0, 5, 40, 1, 0.01, 0.05,
                             "scalar", (TB, S, 0))
    assert 0 < ref[5][0] < 40 and a.info["qr_steps"] == ref[5][0]
