"""The integrate() interface: result shapes, batching, error paths, the generated fixed-step path."""

import numpy as np
import pytest

from integrators import (DEFAULT_STEPS, METHODS, CoadjointProblem, ConvergenceError, IntegrationInputError,
                         MethodError, ODEProblem, integrate)
from integrators.analysis.rigid_body import REFERENCE_INERTIA, REFERENCE_M0, free_rigid_body
from liegroups import named

from ._problems import STRUCTURED, quadratic_problem, start

BODY = free_rigid_body(REFERENCE_INERTIA)


def test_result_shapes_and_save_every():
    z0 = start(3, 1, batch=(4, 2))
    res = integrate(BODY, z0, (0.0, 1.0), method="rkmk4", steps=10, save_every=3)
    np.testing.assert_allclose(res.t, [0.0, 0.3, 0.6, 0.9, 1.0], atol=1e-15)
    assert res.y.shape == (5, 4, 2, 3)
    assert res.invariants["energy"].shape == (5, 4, 2)
    assert res.nsteps == 10 and res.nfev == 40 and res.status == 0 and res.success
    assert res.wall_time > 0
    np.testing.assert_array_equal(res.y[0], z0)


def test_h_is_rounded_to_cover_the_span_and_default_steps():
    res = integrate(BODY, REFERENCE_M0, (0.0, 1.0), method="rk4", h=0.3)
    assert res.nsteps == 4 and abs(res.h - 0.25) < 1e-15 and res.t[-1] == 1.0
    res = integrate(BODY, REFERENCE_M0, (0.0, 1.0), method="rk4")
    assert res.nsteps == DEFAULT_STEPS


@pytest.mark.parametrize("name", [n for n in METHODS if METHODS[n].fixed_step and n not in STRUCTURED])
def test_batch_equals_one_at_a_time(name):
    z0 = start(3, 2, batch=(3,))
    both = integrate(BODY, z0, (0.0, 2.0), method=name, steps=20)
    for i in range(3):
        one = integrate(BODY, z0[i], (0.0, 2.0), method=name, steps=20)
        np.testing.assert_allclose(both.y[:, i], one.y, atol=1e-13)


@pytest.mark.parametrize("name", ["lie_euler", "rkmk2", "rkmk4", "cf4", "cg3", "splitting", "splitting4"])
def test_fast_so3_path_agrees_with_generic_path(name):
    z0 = start(3, 3, batch=(5,))
    fast = integrate(BODY, z0, (0.0, 5.0), method=name, steps=50)
    slow = integrate(BODY, z0, (0.0, 5.0), method=name, steps=50, fast=False)
    np.testing.assert_allclose(fast.y, slow.y, atol=1e-13)
    one = integrate(BODY, z0[0], (0.0, 5.0), method=name, steps=50)
    np.testing.assert_allclose(one.y, slow.y[:, 0], atol=1e-13)


def test_backward_in_time_returns_to_start():
    fwd = integrate(BODY, REFERENCE_M0, (0.0, 3.0), method="rkmk4", steps=300)
    back = integrate(BODY, fwd.y[-1], (3.0, 0.0), method="rkmk4", steps=300)
    np.testing.assert_allclose(back.y[-1], REFERENCE_M0, atol=1e-9)


def test_scipy_batch_and_grid():
    z0 = start(3, 4, batch=(2,))
    res = integrate(BODY, z0, (0.0, 2.0), method="scipy:DOP853", steps=4, rtol=1e-12, atol=1e-14)
    ref = integrate(BODY, z0, (0.0, 2.0), method="rkmk4", steps=2000)
    assert res.y.shape == (5, 2, 3) and res.nsteps > 0 and res.nfev > 0
    np.testing.assert_allclose(res.y, ref.y[::500], atol=1e-10)


def test_unknown_and_inapplicable_methods_list_the_valid_ones():
    with pytest.raises(MethodError, match=r"unknown integration method 'rk5'.*rkmk4"):
        integrate(BODY, REFERENCE_M0, (0, 1), method="rk5")
    se3 = quadratic_problem(named.se3(), 1)
    with pytest.raises(MethodError, match=r"'splitting' does not apply.*so\(3\) free rigid body.*cf4"):
        integrate(se3, start(6, 1), (0, 1), method="splitting")
    ode = ODEProblem(lambda t, y: -y, 2)
    with pytest.raises(MethodError, match=r"'rkmk4' does not apply.*ode problems.*rk4"):
        integrate(ode, [1.0, 0.0], (0, 1), method="rkmk4")
    assert isinstance(MethodError("x"), ValueError)


def test_bad_inputs_name_the_problem():
    with pytest.raises(IntegrationInputError, match=r"last axis of length 3.*shape \(4,\)"):
        integrate(BODY, np.ones(4), (0, 1))
    with pytest.raises(IntegrationInputError, match=r"entry \(1,\) is nan"):
        integrate(BODY, [1.0, np.nan, 0.0], (0, 1))
    with pytest.raises(IntegrationInputError, match="two different finite times"):
        integrate(BODY, REFERENCE_M0, (1.0, 1.0))
    with pytest.raises(IntegrationInputError, match="positive finite step"):
        integrate(BODY, REFERENCE_M0, (0, 1), h=-0.1)
    with pytest.raises(IntegrationInputError, match="positive integer"):
        integrate(BODY, REFERENCE_M0, (0, 1), steps=0)
    with pytest.raises(IntegrationInputError, match="save_every"):
        integrate(BODY, REFERENCE_M0, (0, 1), save_every=0)


def test_velocity_matrix_mismatch_is_reported():
    P = CoadjointProblem(named.so3(), lambda m: m / 2.0, velocity_matrix=np.eye(3))
    with pytest.raises(ValueError, match=r"velocity_matrix W does not match velocity\(z\)"):
        integrate(P, [1.0, 0.5, 0.2], (0, 1), method="rkmk4", steps=10)


def test_blow_up_ends_with_status_minus_one_not_nan():
    ode = ODEProblem(lambda t, y: y * y, 1)  # y = 1/(1 - t) blows up at t = 1
    res = integrate(ode, [1.0], (0.0, 2.0), method="rk4", steps=200)
    assert res.status == -1 and "overflowed or became NaN" in res.message
    assert np.all(np.isfinite(res.y)) and 0.95 < res.t[-1] < 1.1


def test_midpoint_that_cannot_converge_raises():
    stiff = ODEProblem(lambda t, y: -1e4 * y, 1)
    with pytest.raises(ConvergenceError, match=r"implicit midpoint did not converge at t = 0.*increment"):
        integrate(stiff, [1.0], (0.0, 1.0), method="midpoint", steps=10)


def test_plain_ode_orders():
    """y' = -y: rk4 and midpoint against exp(-t) (sanity of the plain-ODE path)."""
    ode = ODEProblem(lambda t, y: -y, 1)
    for name, p in (("rk4", 4), ("midpoint", 2)):
        e1 = abs(integrate(ode, [1.0], (0, 1), method=name, steps=10).y[-1, 0] - np.exp(-1))
        e2 = abs(integrate(ode, [1.0], (0, 1), method=name, steps=20).y[-1, 0] - np.exp(-1))
        assert abs(np.log2(e1 / e2) - p) < 0.1


def test_chunked_ensemble_equals_unchunked(monkeypatch):
    from integrators.backends import fastpath

    z0 = start(3, 6, batch=(5, 2))
    whole = integrate(BODY, z0, (0.0, 1.0), method="rkmk4", steps=10, save_every=5)
    monkeypatch.setattr(fastpath, "CHUNK", 3)  # chunk boundaries inside the flattened batch
    chunked = integrate(BODY, z0, (0.0, 1.0), method="rkmk4", steps=10, save_every=5)
    np.testing.assert_array_equal(whole.y, chunked.y)
    np.testing.assert_allclose(whole.t, [0.0, 0.5, 1.0])


def test_scipy_events_need_a_single_trajectory():
    with pytest.raises(ValueError, match="single trajectory"):
        integrate(BODY, start(3, 1, batch=(2,)), (0, 1), method="scipy:DOP853", events=lambda t, y: y[..., 0])


def test_moser_veselov_with_too_large_a_step_raises():
    P = free_rigid_body((3.0, 1.0, 0.5))
    with pytest.raises(ConvergenceError, match=r"Moser-Veselov equation .* did not converge at t = 0.*residual"):
        integrate(P, [3.0, 2.0, 5.0], (0.0, 10.0), method="moser_veselov", steps=5)
