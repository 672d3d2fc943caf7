"""Independent ensembles (integrators.engine.batch, integrators.backends.batch_kernels): every trajectory of an
ensemble integrated on its own equals its single run; expected values are the single runs of the
one-trajectory generated code (which sums the dexp^-1 series term by term, where the ensemble code
sums it in closed form on so(3)), and the Casimirs of the initial states."""

import math

import numpy as np
import pytest

from scipy.linalg import expm

from integrators import CoadjointProblem, IntegrationInputError, integrate

from integrators import METHODS
from integrators.backends import batch_kernels, fastpath, numba_kernels
from integrators.codegen import projection
from integrators.core import controller
from integrators.engine import batch
from integrators.engine.starting_step import initial_step

from integrators.geometry import recognition
from integrators.codegen.batchgen import EnsembleSource
from integrators.analysis.rigid_body import REFERENCE_INERTIA, free_rigid_body
from liegroups import named

from ._problems import ADAPTIVE_PROJECTED, ADAPTIVE_RK, ADAPTIVE_RKMK, ALGEBRAS, quadratic_problem, start

NUMBA = numba_kernels.available()


def _singles(P, Z, **kw):
    return np.array([integrate(P, z, (0.0, 3.0), save_every=10 ** 9, **kw).y[-1] for z in Z])


@pytest.mark.parametrize("alg", ["so3", "se3"])
@pytest.mark.parametrize("method", ADAPTIVE_RKMK + ADAPTIVE_RK + ADAPTIVE_PROJECTED)
def test_independent_ensemble_equals_single_runs(alg, method):
    P = quadratic_problem(ALGEBRAS[alg](), seed=3)
    Z = start(P.dim, 4, batch=(2, 3))
    kw = dict(method=method, rtol=1e-9, atol=1e-11, backend="numpy")
    r = integrate(P, Z, (0.0, 3.0), ensemble="independent", **kw)
    assert r.status == 0 and r.y.shape == (2, 2, 3, P.dim) and list(r.t) == [0.0, 3.0]
    single = _singles(P, Z.reshape(-1, P.dim), **kw)
    # round-off only: the ensemble's Rodrigues coefficients come from numpy's sin and cos by half
    # angles (genhelpers._co3_array), the single run's from math.sin; an ulp there grows over the
    # run to ~1e-13 on se(3) with rkmk853 (1.2e-13 before the dexp^-1 series was folded, 1.8e-13 after)
    assert np.max(np.abs(r.y[-1].reshape(-1, P.dim) - single)) <= 5e-13 * max(1.0, float(np.max(np.abs(single))))
    assert np.array_equal(r.y[0], Z)
    # every trajectory takes its own steps: the counts are those of the single runs
    counts = [integrate(P, z, (0.0, 3.0), **kw).nsteps for z in Z.reshape(-1, P.dim)]
    assert list(r.nsteps_each.ravel()) == counts and r.nsteps == max(counts)
    assert np.all(r.t_end == 3.0)
    if "casimirs" not in r.preserves:     # the ambient form keeps linear invariants only
        return
    for k in (k for k in r.invariants if k.startswith("casimir:")):
        v = r.invariants[k]
        assert np.max(np.abs(v[1] - v[0]) / np.maximum(np.abs(v[0]), 1e-3)) <= 1e-14, k


def test_independent_ambient_pair_and_backward_time():
    P = quadratic_problem(named.sl2(), seed=4)
    Z = start(3, 6, batch=(3,))
    kw = dict(method="rk45", rtol=1e-8, atol=1e-10, backend="numpy")
    r = integrate(P, Z, (0.0, -2.0), ensemble="independent", **kw)
    single = np.array([integrate(P, z, (0.0, -2.0), **kw).y[-1] for z in Z])
    assert r.status == 0 and np.max(np.abs(r.y[-1] - single)) <= 1e-13


@pytest.mark.skipif(not NUMBA, reason="numba not installed")
def test_compiled_independent_ensemble_equals_single_runs():
    body = free_rigid_body(REFERENCE_INERTIA)
    Z = np.array([np.cos(1.1), 0.0, np.sin(1.1)]) + 0.05 * np.random.default_rng(2).standard_normal((5, 3))
    kw = dict(method="rkmk45", rtol=1e-9, atol=1e-11)
    r = integrate(body, Z, (0.0, 3.0), ensemble="independent", backend="numba", **kw)
    assert r.backend == "numba" and r.status == 0
    single = _singles(body, Z, backend="numpy", **kw)
    assert np.max(np.abs(r.y[-1] - single)) <= 1e-13
    c = np.sum(r.y * r.y, axis=-1)
    assert np.max(np.abs(c[1] - c[0]) / c[0]) <= 1e-14
    # se(3): each trajectory runs the compiled one-trajectory loop (no lanes)
    P = quadratic_problem(named.se3(), seed=6)
    Z = start(6, 7, batch=(3,))
    r = integrate(P, Z, (0.0, 3.0), ensemble="independent", backend="numba", **kw)
    assert r.backend == "numba" and r.status == 0
    assert np.max(np.abs(r.y[-1] - _singles(P, Z, backend="numpy", **kw))) <= 1e-13


def test_branch_free_so3_exponential_is_rodrigues():
    """The lane code's exp(ad x)^T z (series of sin u / u and cos u at u = |x|/16, three doublings)
    against scipy's expm of the 3x3 matrix of ad*_x, for |x| from 0 to 16, to the round-off of
    Rodrigues' formula itself (the term b x cross (x cross z) has size ~ |x|^2 |z|)."""
    st = recognition.recognise(free_rigid_body(REFERENCE_INERTIA), np.ones(3))
    src = EnsembleSource(st)
    src.lanes = True
    y = src.act(["x0", "x1", "x2"], ["z0", "z1", "z2"], delta=False)
    env = {}
    exec("def f(x0, x1, x2, z0, z1, z2):\n    _big = 0.0\n" + "\n".join(src.lines)
         + f"\n    return ({', '.join(y)}), _big\n", env)
    C = named.so3().structure_constants
    rng = np.random.default_rng(5)
    for r in (0.0, 1e-9, 0.3, 2.0, 7.5, 15.9):
        x = rng.standard_normal(3)
        x *= r / max(np.linalg.norm(x), 1e-300)
        z = rng.standard_normal(3)
        adT = np.einsum("i,ijk->jk", x, C)  # (ad*_x z)_j = x_i C[i, j, k] z_k
        got, big = env["f"](*x, *z)
        assert np.max(np.abs(np.array(got) - expm(adT) @ z)) <= 8 * 2.2e-16 * (1 + r * r) * np.linalg.norm(z), r
        assert big == pytest.approx(r * r)


@pytest.mark.skipif(not NUMBA, reason="numba not installed")
def test_compiled_ensemble_rejects_a_first_step_beyond_the_exponential_range():
    # first_step 60: |theta| > 16, beyond the branch-free exponential; the lanes reject such a step
    # (as the single runs, whose error estimate rejects it) and then agree with the numpy ensemble
    body = free_rigid_body(REFERENCE_INERTIA)
    Z = 5.0 * np.random.default_rng(3).standard_normal((3, 3))
    kw = dict(method="rkmk45", rtol=1e-9, atol=1e-11, first_step=60.0, ensemble="independent")
    a = integrate(body, Z, (0.0, 3.0), backend="numba", **kw)
    b = integrate(body, Z, (0.0, 3.0), backend="numpy", **kw)
    assert np.all(a.nrejected_each >= 1) and np.array_equal(a.nsteps_each, b.nsteps_each)
    assert np.max(np.abs(a.y - b.y)) <= 1e-12 * np.max(np.abs(b.y))


@pytest.mark.skipif(not NUMBA, reason="numba not installed")
def test_compiled_fixed_step_ensemble_keeps_the_last_finite_state():
    # rk4 far beyond its stability bound on an unbounded sl(2)* orbit: some trajectories explode
    P = quadratic_problem(named.sl2(), seed=1)
    Z = np.array([[3.0, 3.0, 3.0], [0.01, 0.0, 0.01]])
    with np.errstate(all="ignore"):
        a = integrate(P, Z, (0.0, 400.0), method="rk4", steps=200, backend="numba")
        b = integrate(P, Z, (0.0, 400.0), method="rk4", steps=200, backend="numpy")
    assert a.status == b.status == -1 and "overflow" in a.message
    assert np.all(np.isfinite(a.y)) and a.y.shape == b.y.shape and np.max(np.abs(a.y - b.y)) <= 1e-12


def test_bad_ensemble_arguments():
    P = quadratic_problem(named.so3(), seed=1)
    Z = start(3, 1, batch=(2,))
    with pytest.raises(IntegrationInputError, match="ensemble must be one of 'shared', 'independent'.*'each'"):
        integrate(P, Z, (0.0, 1.0), method="rkmk45", ensemble="each")
    with pytest.raises(IntegrationInputError, match="locates no events .* need ensemble='shared'"):
        integrate(P, Z, (0.0, 1.0), method="rkmk45", ensemble="independent", events=lambda t, z: z[..., 0])
    with pytest.raises(IntegrationInputError, match="fast=False.*ensemble='shared'"):
        integrate(P, Z, (0.0, 1.0), method="rkmk45", ensemble="independent", fast=False)


@pytest.mark.skipif(not NUMBA, reason="numba not installed")
def test_compiled_lanes_refill_and_thread_count_do_not_change_results():
    """600 trajectories (more than the 256 lanes of a thread, so finished lanes take new ones) with
    |m| from 0.2 to 3 (step counts from a few to many), run with 1 and 2 threads: every final state
    equals the single run of the one-trajectory code (numpy floats) from the same y0 and takes the
    same steps."""
    import numba

    body = free_rigid_body(REFERENCE_INERTIA)
    rng = np.random.default_rng(11)
    Z = rng.standard_normal((600, 3))
    Z *= (0.2 + 2.8 * rng.random(600))[:, None] / np.linalg.norm(Z, axis=1)[:, None]
    kw = dict(method="rkmk45", rtol=1e-7, atol=1e-9)
    pick = np.r_[0:600:37, 599]
    single = [integrate(body, z, (0.0, 3.0), backend="numpy", **kw) for z in Z[pick]]
    before = numba.get_num_threads()
    try:
        for th in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
            numba.set_num_threads(th)
            r = integrate(body, Z, (0.0, 3.0), ensemble="independent", backend="numba", **kw)
            assert r.backend == "numba" and r.status == 0
            assert np.max(np.abs(r.y[-1][pick] - np.array([s.y[-1] for s in single]))) <= 1e-13, th
            assert list(r.nsteps_each[pick]) == [s.nsteps for s in single], th
            assert np.ptp(r.nsteps_each) >= 5  # the trajectories do take different step counts
    finally:
        numba.set_num_threads(before)


@pytest.mark.skipif(not NUMBA, reason="numba not installed")
def test_compiled_ambient_lanes_take_hairers_starting_step_in_the_lane():
    """More trajectories than batch.START_SAMPLE: integrate passes H0 = 0 to the compiled kernel, and each lane of
    an ambient pair computes Hairer's starting step when it loads a trajectory (the text of the one-trajectory
    loop, its second field evaluation the lane's first stage again). Every final state and step count is that of
    the single run (numpy floats, its own starting step), and the kernel given numpy's per-row starting steps
    ends the same."""
    body = free_rigid_body(REFERENCE_INERTIA)
    rng = np.random.default_rng(12)
    Z = rng.standard_normal((400, 3))
    Z *= (0.2 + 2.8 * rng.random(400))[:, None] / np.linalg.norm(Z, axis=1)[:, None]
    assert len(Z) > batch.START_SAMPLE
    kw = dict(method="rk853_projected", rtol=1e-8, atol=1e-10)
    pick = np.r_[0:400:23, 399]
    single = [integrate(body, z, (0.0, 3.0), backend="numpy", **kw) for z in Z[pick]]
    r = integrate(body, Z, (0.0, 3.0), ensemble="independent", backend="numba", **kw)
    assert r.backend == "numba" and r.status == 0
    assert np.max(np.abs(r.y[-1][pick] - np.array([s.y[-1] for s in single]))) <= 1e-12   # (compiled: fma)
    assert list(r.nsteps_each[pick]) == [s.nsteps for s in single]
    assert np.ptp(r.nsteps_each) >= 3
    # the same kernel from numpy's starting steps (integrators.engine.starting_step, per row)
    pl = fastpath.plan(body, METHODS["rk853_projected"].tableau, False, METHODS["rk853_projected"].terms, Z,
                       projection.of_algebra(body.algebra))
    order = controller.estimate_order(METHODS["rk853_projected"].tableau, False)
    H0 = initial_step(lambda z: body.rhs(0.0, z), Z, 0.0, 3.0, order, kw["rtol"], kw["atol"], None, per_row=True)
    out, st, _, ns, _ = batch_kernels.adaptive_independent(pl, Z, H0, 0.0, 3.0, kw["rtol"], kw["atol"], math.inf)[:5]
    # (the two starting steps differ in their last bits: a trajectory may take one step more or less, and then
    # ends within its tolerance of the other; those with the same steps end the same to round-off)
    same = ns == r.nsteps_each
    assert np.all(st == 0) and np.max(np.abs(ns - r.nsteps_each)) <= 1 and np.mean(same) >= 0.95
    assert np.max(np.abs(out[same] - r.y[-1][same])) <= 1e-12 * np.max(np.abs(out))
    assert np.max(np.abs(out - r.y[-1])) <= 1e-6 * np.max(np.abs(out))


def _kirchhoff():
    Mk = np.diag(1.0 / np.array([1.0, 2.0, 3.0, 1.0, 1.5, 2.0]))
    return CoadjointProblem(named.se3(), lambda z: z @ Mk, velocity_matrix=Mk, name="Kirchhoff"), Mk


def _with_angles(Z, Mk, ang, h):
    """Z with its M rows scaled so that |omega h| = ang (omega = the rotation part of M Mk)."""
    Z = Z.copy()
    Z[:, :3] *= (ang / h / np.linalg.norm(Z[:, :3] @ Mk[:3, :3], axis=1))[:, None]
    return Z


@pytest.mark.skipif(not NUMBA, reason="numba not installed")
def test_compiled_fixed_step_se3_lanes_equal_single_runs():
    """se(3) RKMK4 fixed steps: the lane kernel (branch-free exponential, two lanes interleaved)
    against each trajectory's single run with the one-trajectory code (co3: sin, cos, and the series
    below t^2 = 1e-2), with |omega h| from 1e-9 to 3 (both sides of the series' branch point), more
    trajectories than one chunk of lanes (a partly filled last chunk)."""
    P, Mk = _kirchhoff()
    h, steps, B = 0.5, 6, 300
    Z = _with_angles(np.random.default_rng(11).standard_normal((B, 6)), Mk, np.logspace(-9, np.log10(3.0), B), h)
    kw = dict(method="rkmk4", steps=steps, save_every=2, check=False)
    r = integrate(P, Z, (0.0, h * steps), backend="numba", **kw)
    assert r.status == 0 and r.y.shape == (4, B, 6)
    for b in list(range(0, B, 23)) + [B - 1]:
        s = integrate(P, Z[b], (0.0, h * steps), backend="numpy", **kw).y
        assert np.max(np.abs(r.y[:, b] - s)) <= 1e-13 * np.max(np.abs(s)), b


@pytest.mark.skipif(not NUMBA, reason="numba not installed")
def test_compiled_fixed_step_se3_beyond_the_series_range_and_overflow():
    """|omega h| = 20 (beyond the lanes' series range t <= 16; RKMK4 overflows at the third step)
    is run again by the one-trajectory code: the ensemble equals the numpy ensemble (two finite
    steps, then the overflow: that trajectory alone is lost, its last finite state held in the later
    rows); the trajectories beside it run to the end, equal to their single runs."""
    P, Mk = _kirchhoff()
    h, steps = 0.5, 3
    Z = _with_angles(np.random.default_rng(15).standard_normal((3, 6)), Mk, np.array([20.0, 0.5, 12.0]), h)
    kw = dict(method="rkmk4", steps=steps, save_every=1, check=False)
    with np.errstate(all="ignore"):
        a = integrate(P, Z, (0.0, h * steps), backend="numba", **kw)
        b = integrate(P, Z, (0.0, h * steps), backend="numpy", **kw)
    assert a.status == b.status == -1 and a.y.shape == b.y.shape == (4, 3, 6)
    for r in (a, b):     # two steps, then overflow: lost at t = 2 h = 1
        assert list(r.failed) == [0] and list(r.t_end) == [1.0, 1.5, 1.5] and "flat index 0, t = 1" in r.message
        assert np.array_equal(r.y[3, 0], r.y[2, 0]) and np.all(np.isfinite(r.y))
    for k in range(3):  # each trajectory at its own scale (the first reaches 1e45)
        assert np.max(np.abs(a.y[:, k] - b.y[:, k])) <= 1e-12 * np.max(np.abs(b.y[:, k])), k
    for k in (1, 2):
        s = integrate(P, Z[k], (0.0, h * steps), backend="numba", **kw).y
        assert np.max(np.abs(a.y[:, k] - s)) <= 1e-13 * np.max(np.abs(s)), k


def test_branch_free_se3_exponential_is_the_coadjoint_action():
    """The lane code's Ad*_exp(x) z on se(3) (branch-free a, b, c: series at |omega|/16, four
    doublings) against scipy's expm of the 6x6 matrix of ad*_x, for |omega| from 0 to 16 (both sides
    of the one-trajectory code's branch t^2 = 1e-2), to the round-off of the closed form (terms of
    size ~ |omega|^2 |v| |z|)."""
    P, _ = _kirchhoff()
    st = recognition.recognise(P, np.ones(6))
    src = EnsembleSource(st)
    src.lanes = True
    x, z = [f"x{i}" for i in range(6)], [f"z{i}" for i in range(6)]
    y = src.act(x, z, delta=False)
    env = {}
    exec(f"def f({', '.join(x + z)}):\n    _big = 0.0\n" + "\n".join(src.lines)
         + f"\n    return ({', '.join(y)}), _big\n", env)
    C = named.se3().structure_constants
    rng = np.random.default_rng(5)
    for r in (0.0, 1e-9, 1e-4, 0.09, 0.11, 0.3, 2.0, 7.5, 15.9):
        xv, zv = rng.standard_normal(6), rng.standard_normal(6)
        xv[:3] *= r / np.linalg.norm(xv[:3])
        adT = np.einsum("i,ijk->jk", xv, C)  # (ad*_x z)_j = x_i C[i, j, k] z_k
        got, big = env["f"](*xv, *zv)
        scale = np.linalg.norm(zv) * (1 + r * r) * (1 + np.linalg.norm(xv[3:]))
        assert np.max(np.abs(np.array(got) - expm(adT) @ zv)) <= 8 * 2.2e-16 * scale, r
        assert big == pytest.approx(r * r)


@pytest.mark.skipif(not NUMBA, reason="numba not installed")
def test_compiled_fixed_step_so3_lanes_equal_single_runs():
    """so(3) RKMK4 fixed steps in lanes (branch-free Rodrigues, closed dexp^-1 sum) against the
    single runs of the one-trajectory code (co2 with its series below t^2 = 1e-8, the dexp^-1 series
    term by term), |omega h| from 1e-9 to 3, and |omega h| = 20 (rerun by the one-trajectory code)."""
    body = free_rigid_body(REFERENCE_INERTIA)
    ia = 1.0 / np.asarray(REFERENCE_INERTIA, dtype=float)
    h, steps, B = 0.5, 4, 260
    Z = np.random.default_rng(13).standard_normal((B, 3))
    ang = np.concatenate([np.logspace(-9, np.log10(3.0), B - 1), [20.0]])
    Z *= (ang / h / np.linalg.norm(Z * ia, axis=1))[:, None]  # omega = I^-1 m
    kw = dict(method="rkmk4", steps=steps, save_every=1, check=False)
    r = integrate(body, Z, (0.0, h * steps), backend="numba", **kw)
    assert r.status == 0 and r.y.shape == (steps + 1, B, 3)
    for b in list(range(0, B, 19)) + [B - 2]:
        s = integrate(body, Z[b], (0.0, h * steps), backend="numpy", **kw).y
        assert np.max(np.abs(r.y[:, b] - s)) <= 1e-13 * np.max(np.abs(s)), b
    # |omega h| = 20: RKMK4 is far outside its stability region there and amplifies round-off (the
    # compiled and the Python single runs differ by 1e-9 relative after one step), so the rerun is
    # compared with the compiled single run, the code it runs
    s = integrate(body, Z[-1], (0.0, h * steps), backend="numba", **kw).y
    assert np.max(np.abs(r.y[:, -1] - s)) <= 1e-14 * np.max(np.abs(s))


@pytest.mark.skipif(not NUMBA, reason="numba not installed")
@pytest.mark.parametrize("method", ["rk45", "rk853"])
def test_compiled_ambient_pair_lanes_equal_single_runs(method):
    """The plain ambient pairs go in lanes too (one vectorized attempt of all lanes, the controller per
    lane): 300 trajectories of Suslov's problem (a forced field with a linear invariant), more than the
    256 lanes of a thread, |m| from 0.1 to 3 (different step counts), forward and backward in time; the
    expected values are the single runs of the one-trajectory code with numpy floats from the same y0,
    with their step and rejection counts, and a trajectory that blows up (sl(2), s' = 2 s^2, t* = 0.5)
    stops alone, at t* to the time resolution, with status -1 per trajectory."""
    from ._problems import suslov

    P, m0, c, _ = suslov()
    rng = np.random.default_rng(21)
    Z = m0 + 0.3 * rng.standard_normal((300, 3))
    Z -= (Z @ c)[:, None] * c / (c @ c)              # on the constraint (c, m) = 0
    Z *= (0.1 + 2.9 * rng.random(300))[:, None] / np.linalg.norm(Z, axis=1)[:, None]
    kw = dict(method=method, rtol=1e-8, atol=1e-10)
    pick = np.r_[0:300:23, 299]
    for t1 in (3.0, -2.0):
        r = integrate(P, Z, (0.0, t1), ensemble="independent", backend="numba", **kw)
        assert r.backend == "numba" and r.status == 0
        single = [integrate(P, z, (0.0, t1), backend="numpy", **kw) for z in Z[pick]]
        ref = np.array([s.y[-1] for s in single])
        assert np.max(np.abs(r.y[-1][pick] - ref)) <= 1e-13 * np.max(np.abs(ref))
        assert list(r.nsteps_each[pick]) == [s.nsteps for s in single]
        assert list(r.nrejected_each[pick]) == [s.nrejected for s in single]
        assert np.ptp(r.nsteps_each) >= 5
    M = np.array([[1.0, 0.0, 0.2], [1.0, 0.0, 0.3], [0.2, 0.3, 1.0]])
    Q = CoadjointProblem(named.sl2(), lambda z: z @ M, velocity_matrix=M, name="sl2 with a blow-up line")
    Zq = np.array([[0.3, -0.2, 0.5], [0.0, 1.0, 0.0], [-0.3, 0.05, 0.2]])
    r = integrate(Q, Zq, (0.0, 2.0), ensemble="independent", backend="numba", check=False, **kw)
    assert r.status == -1 and list(r.failed) == [1] and r.t_end[1] == pytest.approx(0.5, rel=1e-6)
    assert np.all(r.t_end[[0, 2]] == 2.0)
    for b in (0, 2):
        s = integrate(Q, Zq[b], (0.0, 2.0), backend="numpy", check=False, **kw).y[-1]
        assert np.max(np.abs(r.y[-1, b] - s)) <= 1e-13 * np.max(np.abs(s))


def _random_basis_problem(forced):
    """so(3) in a random basis (structure constants with every entry non-zero) with a random SPD
    velocity matrix, optionally with a multiplier force keeping the linear invariant (c, z) (a projector
    P in the field (I - P) ad*_w z)."""
    rng = np.random.default_rng(8)
    alg = named.so3().change_basis(rng.standard_normal((3, 3)) + 2.0 * np.eye(3))
    B = rng.standard_normal((3, 3))
    M = B @ B.T / 3 + np.eye(3)
    if not forced:
        return CoadjointProblem(alg, lambda z: z @ M, velocity_matrix=M, name="so3 random basis")
    c, b = np.array([1.0, 0.3, -0.5]), np.array([0.2, 1.0, 0.4])

    def forcing(z):
        g = alg.coad(z @ M, z)
        return -((g @ c) / (b @ c))[..., None] * b
    return CoadjointProblem(alg, lambda z: z @ M, velocity_matrix=M, forcing=forcing, linear_invariants=c,
                            name="so3 random basis, forced")


@pytest.mark.parametrize("forced", [False, True])
def test_quadratic_form_of_the_field_equals_the_writers_field(forced):
    """In a random basis the lanes write the ambient field as a quadratic form (fewer operations than
    w = W z + c, ad*_w z, (I - P) g); its values equal the writer's and the problem's rhs to round-off;
    on so(4) in its own basis (sparse C) with a dense velocity matrix the writer's form is kept."""
    from integrators.codegen.batchgen import quadratic_form
    from integrators.backends import fastpath
    from integrators.methods import METHODS

    P = _random_basis_problem(forced)
    m = METHODS["rk853"]
    Z = 0.7 * np.random.default_rng(3).standard_normal((16, 3))
    pl = fastpath.plan(P, m.tableau, m.lie, m.terms, Z, None)
    assert pl is not None and (pl.st.P is not None) == forced
    assert quadratic_form(pl.st) is not None
    src = EnsembleSource(pl.st)
    src.lanes = True
    f = src.field(["z0", "z1", "z2"])
    assert any(ln.strip().startswith("qm") for ln in src.lines)
    env = {}
    exec("def F(z0, z1, z2):\n" + "\n".join("    " + ln.strip() for ln in src.lines)
         + f"\n    return [{', '.join(f)}]\n", env)
    got = np.array([env["F"](*z) for z in Z])
    want = P.rhs(0.0, Z)
    assert np.max(np.abs(got - want)) <= 1e-14 * np.max(np.abs(want))
    # so(4) in its own basis (24 non-zero C[i, j, k]) with a dense W: the writer's form is cheaper
    # (w: 72 operations, ad*_w z: 72) than 21 monomials and 6 rows of up to 21 terms
    Q4 = quadratic_problem(named.so4(), seed=5)
    pl4 = fastpath.plan(Q4, m.tableau, m.lie, m.terms, start(6, 1, batch=(2,)), None)
    assert quadratic_form(pl4.st) is None


@pytest.mark.skipif(not NUMBA, reason="numba not installed")
def test_compiled_lanes_with_the_quadratic_form_equal_single_runs():
    """rk853 on the random-basis problem (bounded: the orbits of so(3)* are spheres in the original
    basis): the lanes (quadratic form) against the single runs of the one-trajectory code (the writer's
    form): the same steps, the end points to round-off."""
    P = _random_basis_problem(False)
    Z = 0.5 * np.random.default_rng(4).standard_normal((40, 3))
    kw = dict(method="rk853", rtol=1e-9, atol=1e-11)
    r = integrate(P, Z, (0.0, 2.0), ensemble="independent", backend="numba", **kw)
    assert r.backend == "numba" and r.status == 0
    pick = [0, 13, 27, 39]
    single = [integrate(P, z, (0.0, 2.0), backend="numpy", **kw) for z in Z[pick]]
    ref = np.array([s.y[-1] for s in single])
    assert np.max(np.abs(r.y[-1][pick] - ref)) <= 1e-13 * np.max(np.abs(ref))
    assert list(r.nsteps_each[pick]) == [s.nsteps for s in single]


@pytest.mark.skipif(not NUMBA, reason="numba not installed")
@pytest.mark.parametrize("iters", [2, 1])
def test_compiled_projected_lanes_project_in_the_attempt_and_equal_single_runs(iters, monkeypatch):
    """A projected ambient pair projects inside the vectorized attempt (``iters`` Newton iterations
    without a test); a lane whose residual is not yet at round-off projects again with the loop of the
    single run. With 1 iteration most accepted steps take that second path. Either way every final
    state equals the single run of the one-trajectory code (numpy floats) to round-off, with its steps,
    and keeps its Casimir |z|^2 (so(3)) to round-off."""
    from integrators.codegen import ensemble_source

    monkeypatch.setattr(ensemble_source, "PROJ_ITER", iters)
    P = quadratic_problem(named.so3(), seed=9)
    rng = np.random.default_rng(12)
    Z = rng.standard_normal((300, 3)) * (0.3 + 2.0 * rng.random(300))[:, None]
    kw = dict(method="rk45_projected", rtol=1e-6, atol=1e-8)
    r = integrate(P, Z, (0.0, 3.0), ensemble="independent", backend="numba", **kw)
    assert r.backend == "numba" and r.status == 0
    pick = np.r_[0:300:29, 299]
    single = [integrate(P, z, (0.0, 3.0), backend="numpy", **kw) for z in Z[pick]]
    ref = np.array([s.y[-1] for s in single])
    assert np.max(np.abs(r.y[-1][pick] - ref)) <= 1e-13 * np.max(np.abs(ref))
    assert list(r.nsteps_each[pick]) == [s.nsteps for s in single]
    c0, c1 = np.sum(Z * Z, axis=1), np.sum(r.y[-1] * r.y[-1], axis=1)
    assert np.max(np.abs(c1 - c0) / c0) <= 1e-14


@pytest.mark.parametrize("system,method", [("free", "rk853"), ("free", "rk853_projected"), ("free", "rkmk853"),
                                           ("servo1", "rk853")])
def test_numpy_ensemble_of_a_dense_basis_is_written_in_matrix_form_and_equals_the_single_runs(system, method):
    """sl(3) in a random basis (510 non-zero structure constants): the numpy ensemble's attempt takes the products
    with C as matrix products over the stacked columns (integrators.codegen.matrix_source, its constants in the
    text's preamble), and each trajectory ends where its single numpy run ends (the same steps; the sums in
    another order: round-off)."""
    from servo.lie import EulerPoincare, ServoFirstKind
    from tests.algebras import random_basis
    from integrators.codegen import batchgen
    rng = np.random.default_rng(3)
    alg = random_basis(named.sl(3), rng)
    A = rng.standard_normal((8, 8))
    inertia = A @ A.T / 8 + np.eye(8)
    s = (EulerPoincare(alg, inertia) if system == "free" else
         ServoFirstKind(alg, inertia, a=rng.standard_normal(8), b=rng.standard_normal(8)))
    X = rng.standard_normal((5, 8)) * 0.5
    X = s.check_state(X, project=True) if system == "servo1" else X
    m = METHODS[method]
    P = s.problem()
    Z = s.to_problem(X)
    pl = fastpath.plan(P, m.tableau, m.lie, m.terms, Z, projection.of_algebra(alg) if m.project else None)
    assert "_MC = " in batchgen.attempt_source(pl.st, pl.tab, pl.lie, pl.terms, pl.proj)
    kw = dict(method=method, backend="numpy", rtol=1e-9, atol=1e-11)
    r = s.simulate(X, 3.0, steps=None, ensemble="independent", **kw)
    assert r.status == 0 and r.backend == "numpy"
    for b in range(len(X)):
        one = s.simulate(X[b], 3.0, steps=None, **kw)
        z1 = one.outputs.get("z", one.y)[-1]
        assert r.nsteps_each[b] == one.nsteps
        assert np.max(np.abs(r.outputs.get("z", r.y)[-1, b] - z1)) <= 1e-12 * np.max(np.abs(z1))
