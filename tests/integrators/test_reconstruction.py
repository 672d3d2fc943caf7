"""Group reconstruction g' = g w(t).

Independent expected values: for a constant velocity (or w(t) = f(t) xi, which commutes with itself)
g(t) = g0 exp(F(t) xi) with the group's closed-form exp (Rodrigues / SE(n) formulas in liegroups);
for a non-commuting w(t) a DOP853 solution of the 9 or 16 matrix ODE entries at rtol 1e-13.
"""

import numpy as np
import pytest
import scipy.integrate

from integrators import CoadjointProblem, IntegrationInputError, ReconstructionProblem, integrate, reconstruct
from integrators.analysis.rigid_body import free_rigid_body
from liegroups import SE2, SE3, SO3

GROUPS = {"SO3": SO3, "SE2": SE2, "SE3": SE3}


@pytest.mark.parametrize("gname", sorted(GROUPS))
@pytest.mark.parametrize("method", ["lie_euler", "rkmk4", "cf4", "cg3"])
def test_constant_velocity_reproduces_exp(gname, method):
    G = GROUPS[gname]
    xi = np.linspace(0.3, -0.7, G.dim)
    t = np.linspace(0.0, 3.0, 31)
    res = reconstruct(G, np.broadcast_to(xi, (31, G.dim)), G.identity(), t, method=method)
    np.testing.assert_allclose(res.y, G.exp(t[:, None] * xi), atol=1e-13)
    via = integrate(ReconstructionProblem(G, lambda s: xi), G.identity(), (0.0, 3.0), method=method, steps=30)
    np.testing.assert_allclose(via.y[-1], G.exp(3.0 * xi), atol=1e-13)


def test_commuting_time_dependent_velocity_and_order():
    xi = np.array([0.3, -0.2, 0.5, 1.0, 2.0, -1.0])
    g0 = SE3.exp(np.array([0.1, 0.2, 0.3, 0.0, 1.0, 0.0]))
    exact = g0 @ SE3.exp(np.sin(4.0) * xi)
    errs = []
    for n in (20, 40, 80):
        t = np.linspace(0.0, 4.0, n + 1)
        res = reconstruct(SE3, lambda s: np.cos(s) * xi, g0, t)
        errs.append(np.max(np.abs(res.y[-1] - exact)))
    slopes = np.log2(np.array(errs[:-1]) / errs[1:])
    assert np.all(np.abs(slopes - 4) < 0.25), (errs, slopes)


def _matrix_ode_reference(G, wfun, g0, T):
    N = G.matrix_size

    def f(t, y):
        return (y.reshape(N, N) @ G.hat(wfun(t))).ravel()

    sol = scipy.integrate.solve_ivp(f, (0.0, T), g0.ravel(), method="DOP853", rtol=1e-13, atol=1e-15)
    return sol.y[:, -1].reshape(N, N)


@pytest.mark.parametrize("gname", ["SO3", "SE3"])
def test_sampled_noncommuting_velocity_against_dop853(gname):
    G = GROUPS[gname]
    rng = np.random.default_rng(4)
    A, B = rng.standard_normal((2, G.dim))

    def wfun(t):
        return np.cos(t) * A + np.sin(2 * t) * B

    T = 3.0
    ref = _matrix_ode_reference(G, wfun, G.identity(), T)
    errs = []
    for n in (40, 80, 160):
        t = np.linspace(0.0, T, n + 1)
        w = np.array([wfun(s) for s in t])  # sampled velocities (cubic spline in between)
        res = reconstruct(G, w, G.identity(), t)
        errs.append(np.max(np.abs(res.y[-1] - ref)))
        assert np.max(res.constraints["group_defect"]) < 1e-13
    assert errs[-1] < 1e-6
    assert np.log2(errs[1] / errs[2]) > 3.5, errs


def test_stays_in_the_group_over_many_steps():
    """R^T R = I to 1e-13 after 10^3 exp-based steps for a batch (longer runs in the benchmark)."""
    rng = np.random.default_rng(2)
    w = rng.standard_normal((4, 6))
    res = reconstruct(SE3, lambda s: w * np.cos(0.1 * s), SE3.identity((4,)), [0.0, 50.0], substeps=1000)
    assert np.max(res.constraints["group_defect"]) < 1e-13


def test_reconstruction_after_an_integration():
    """The documented workflow: velocities of an integrate() result, then reconstruct()."""
    P = free_rigid_body((2.0, 1.0, 2.0 / 3.0))
    r = integrate(P, [0.4, 0.1, 0.9], (0.0, 5.0), method="rkmk4", h=0.01)
    g = reconstruct(SO3, P.velocity(r.y), np.eye(3), r.t)
    # spatial angular momentum R m is conserved (independent mechanical identity)
    spatial = np.einsum("kij,kj->ki", g.y, r.y)
    assert np.max(np.abs(spatial - spatial[0])) < 1e-9
    assert g.y.shape == (len(r.t), 3, 3)


def test_bad_inputs():
    t = np.linspace(0, 1, 5)
    with pytest.raises(IntegrationInputError, match="not in SO3"):
        reconstruct(SO3, np.zeros((5, 3)), 2 * np.eye(3), t)
    with pytest.raises(IntegrationInputError, match="last axis 6"):
        reconstruct(SE3, np.zeros((5, 3)), np.eye(4), t)
    with pytest.raises(IntegrationInputError, match="4 samples but t has 5"):
        reconstruct(SO3, np.zeros((4, 3)), np.eye(3), t)
    with pytest.raises(IntegrationInputError, match="finite"):
        reconstruct(SO3, np.full((5, 3), np.nan), np.eye(3), t)
    with pytest.raises(ValueError, match="does not apply"):
        reconstruct(SO3, np.zeros((5, 3)), np.eye(3), t, method="rk4")


# ----------------------------------------------------------------------------- the fast path
def _noncommuting(G, seed=3):
    rng = np.random.default_rng(seed)
    A, B = rng.standard_normal((2, G.dim))
    return lambda s: np.cos(s) * A + np.sin(2 * s) * B + 0.2 * B


@pytest.mark.parametrize("gname", sorted(GROUPS))
@pytest.mark.parametrize("method", ["lie_euler", "rkmk2", "rkmk4", "cf4", "cg3"])
def test_fast_path_agrees_with_the_generic_stepper(gname, method):
    """Same steps, two evaluation orders: all steps at once + prefix scan vs one Kahan step at a time."""
    G = GROUPS[gname]
    wf = _noncommuting(G)
    g0 = G.exp(np.linspace(0.2, -0.4, G.dim))
    t = np.linspace(0.0, 4.0, 41)
    fast = reconstruct(G, wf, g0, t, method=method, substeps=3)
    slow = reconstruct(G, wf, g0, t, method=method, substeps=3, fast=False)
    assert fast.nsteps == slow.nsteps == 120
    np.testing.assert_allclose(fast.y, slow.y, rtol=0, atol=1e-13)
    w = np.array([wf(s) for s in t])  # sampled: the same spline on both paths
    np.testing.assert_allclose(reconstruct(G, w, g0, t, method=method).y,
                               reconstruct(G, w, g0, t, method=method, fast=False).y, rtol=0, atol=1e-13)


def test_fast_path_batches_and_vectorized_callable():
    """A batch of velocities against a batch of g0 (shapes broadcast), a vectorized w(t), chunked scans."""
    import integrators.engine.reconstruction as rec
    rng = np.random.default_rng(5)
    A = rng.standard_normal((4, 6))
    g0 = SE3.exp(rng.standard_normal((4, 6)) * 0.5)
    t = np.linspace(0.0, 3.0, 31)
    scalar = reconstruct(SE3, lambda s: np.cos(s) * A, g0, t, substeps=2)
    vec = reconstruct(SE3, lambda s: np.cos(s)[:, None, None] * A, g0, t, substeps=2, vectorized=True)
    old = rec.CHUNK_MATRICES
    try:
        rec.CHUNK_MATRICES = 8 * 4  # 4 intervals per chunk: the carry between chunks is exercised
        chunked = reconstruct(SE3, lambda s: np.cos(s) * A, g0, t, substeps=2)
    finally:
        rec.CHUNK_MATRICES = old
    for i in range(4):  # each trajectory alone through the generic path
        one = reconstruct(SE3, lambda s: np.cos(s) * A[i], g0[i], t, substeps=2, fast=False)
        np.testing.assert_allclose(scalar.y[:, i], one.y, atol=1e-13)
    np.testing.assert_allclose(vec.y, scalar.y, atol=1e-15)
    np.testing.assert_allclose(chunked.y, scalar.y, atol=1e-14)


@pytest.mark.parametrize("gname", sorted(GROUPS))
def test_exact_solution_of_a_noncommuting_velocity(gname):
    """g(t) = g0 exp(t a) exp(t b) solves g' = g w with w(t) = Ad_{exp(-t b)} a + b
    (differentiate: g' = g0 e^{ta} a e^{tb} + g b = g (e^{-tb} a e^{tb} + b)); rkmk4 and cf4 are order 4."""
    G = GROUPS[gname]
    rng = np.random.default_rng(11)
    a, b = rng.standard_normal((2, G.dim))
    g0 = G.exp(rng.standard_normal(G.dim))

    def wf(s):
        return G.Ad(G.exp(-s * b)) @ a + b

    T = 2.0
    exact = g0 @ G.exp(T * a) @ G.exp(T * b)
    for method in ("rkmk4", "cf4"):
        errs = [np.max(np.abs(reconstruct(G, wf, g0, [0.0, T], method=method, substeps=n).y[-1] - exact))
                for n in (40, 80, 160)]
        slopes = np.log2(np.array(errs[:-1]) / errs[1:])
        assert np.all(np.abs(slopes - 4) < 0.3), (method, errs, slopes)
        assert errs[-1] < 1e-7


@pytest.mark.parametrize("gname", sorted(GROUPS))
def test_constant_velocity_over_1e5_steps_stays_at_round_off(gname):
    """Constant w: every step factor is exp(h w), so g_n = g0 exp(t_n w) exactly up to round-off; after
    10^5 steps the error and the group defect stay at round-off (no projection, no compensation)."""
    G = GROUPS[gname]
    xi = np.linspace(0.9, -0.6, G.dim)
    g0 = G.exp(np.linspace(-0.3, 0.5, G.dim))
    n = 100_000
    t = np.linspace(0.0, 20.0, 101)
    res = reconstruct(G, lambda s: np.broadcast_to(xi, (len(s), G.dim)), g0, t, method="lie_euler",
                      substeps=n // 100, vectorized=True)
    assert res.nsteps == n
    np.testing.assert_allclose(res.y, g0 @ G.exp(t[:, None] * xi), rtol=0, atol=1e-12)
    assert np.max(res.constraints["group_defect"]) < 1e-13
    if G is not SO3:  # the homogeneous row is never touched
        assert np.all(res.y[..., -1, :] == np.eye(G.matrix_size)[-1])


def test_prefix_increments_is_the_running_product():
    from integrators.engine.reconstruction import prefix_increments
    rng = np.random.default_rng(7)
    D = 0.3 * rng.standard_normal((37, 2, 3, 3))
    running, want = np.broadcast_to(np.eye(3), (2, 3, 3)).copy(), []
    for j in range(37):  # (I + D_0) ... (I + D_j), multiplied one at a time
        running = running @ (np.eye(3) + D[j])
        want.append(running - np.eye(3))
    np.testing.assert_allclose(prefix_increments(D.copy()), np.array(want), atol=1e-13)


@pytest.mark.parametrize("gname", sorted(GROUPS))
def test_expm1_has_no_cancellation(gname):
    G = GROUPS[gname]
    x = np.linspace(0.7, -1.1, G.dim)
    np.testing.assert_allclose(G.expm1(x), G.exp(x) - np.eye(G.matrix_size), atol=1e-15)
    tiny = 1e-9 * x  # exp(X) - I = X + X^2/2 + O(|X|^3), relative to |X| ~ 1e-9
    X = G.hat(tiny)
    np.testing.assert_allclose(G.expm1(tiny), X + X @ X / 2, rtol=0, atol=1e-25)


def test_fast_path_bad_inputs():
    t = np.linspace(0, 1, 5)
    with pytest.raises(IntegrationInputError, match=r"w\(0.5"):
        reconstruct(SO3, lambda s: np.full(3, np.nan) if s == 0.5 else np.ones(3), np.eye(3), t)
    with pytest.raises(IntegrationInputError, match="vectorized w"):
        reconstruct(SO3, lambda s: np.ones(3), np.eye(3), t, vectorized=True)
    with pytest.raises(IntegrationInputError, match="substeps"):
        reconstruct(SO3, lambda s: np.ones(3), np.eye(3), t, substeps=0)
    with pytest.raises(IntegrationInputError, match="t must be finite"):
        reconstruct(SO3, lambda s: np.ones(3), np.eye(3), [0.0, np.inf])
