"""Group reconstruction g' = g w(t).

Independent expected values: for a constant velocity (or w(t) = f(t) xi, which commutes with itself)
g(t) = g0 exp(F(t) xi) with the group's closed-form exp (Rodrigues / SE(n) formulas in liegroups);
for a non-commuting w(t) a DOP853 solution of the 9 or 16 matrix ODE entries at rtol 1e-13.
"""

import numpy as np
import pytest
import scipy.integrate

from integrators import CoadjointProblem, IntegrationInputError, ReconstructionProblem, integrate, reconstruct
from integrators.rigid_body import free_rigid_body
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
