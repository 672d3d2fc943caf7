"""Output at requested times for the adaptive pairs (integrators.dense_output).

Expected values: the exact elliptic solution of the free rigid body (integrators.rigid_body); the
Casimir |m|^2 at t = 0; the solver's own accepted states (a run without t_eval); the order conditions
of a continuous extension, sum_i b_i(s) c_i^(k-1) = s^k / k and sum_i b_i(s) (A c)_i = s^3 / 6
(Hairer, Norsett and Wanner I, II.6), and exp(s h) for y' = y.
"""

import numpy as np
import pytest

from integrators import IntegrationInputError, integrate, tableaux
from integrators.adaptive import _Reference
from integrators.dense_output import DP5_P, at_times, weights
from integrators.methods import METHODS
from integrators.rigid_body import REFERENCE_INERTIA, REFERENCE_M0, free_rigid_body, rigid_body_exact

PROBLEM = free_rigid_body(REFERENCE_INERTIA)
M0 = np.array(REFERENCE_M0)


def _dp5_with_fsal():
    tab = tableaux.get("dp5")
    s = len(tab["b"])
    A = np.zeros((s + 1, s + 1))
    for i, row in enumerate(tab["A"]):
        A[i, :len(row)] = row
    A[s, :s] = tab["b"]
    return A, np.append(tab["c"], 1.0)


def test_dp5_continuous_extension_order_conditions():
    A, c = _dp5_with_fsal()
    s = np.linspace(0.0, 1.0, 11)
    B = weights("dp5", s)
    for k in range(1, 5):
        np.testing.assert_allclose(B @ c ** (k - 1), s ** k / k, atol=1e-14)
    np.testing.assert_allclose(B @ (A @ c), s ** 3 / 6, atol=1e-14)
    np.testing.assert_allclose(B[-1, :6], tableaux.get("dp5")["b"], atol=1e-15)  # theta(1) is the step


def test_dp5_dense_output_on_y_equals_y_has_local_order_5():
    A, c = _dp5_with_fsal()
    s = np.array([0.3, 0.5, 0.77])
    errs = []
    for h in (0.1, 0.05, 0.025):
        K = np.zeros(len(c))
        for i in range(len(c)):
            K[i] = h * (1.0 + A[i] @ K)
        errs.append(np.abs(1.0 + weights("dp5", s) @ K - np.exp(s * h)))
    ratios = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    assert np.all(ratios > 4.8), ratios  # error O(h^5): a dense output of order 4


@pytest.mark.parametrize("method", ["rkmk45", "rk45"])
def test_grid_of_1000_points_matches_the_exact_rigid_body(method):
    te = np.linspace(0.0, 10.0, 1000)
    r = integrate(PROBLEM, M0, (0.0, 10.0), method=method, t_eval=te, rtol=1e-10, atol=1e-12)
    bare = integrate(PROBLEM, M0, (0.0, 10.0), method=method, rtol=1e-10, atol=1e-12)
    assert np.array_equal(r.t, te)
    err = np.max(np.abs(r.y - rigid_body_exact(REFERENCE_INERTIA, M0, te)))
    err_steps = np.max(np.abs(bare.y - rigid_body_exact(REFERENCE_INERTIA, M0, bare.t)))
    # the interpolant adds nothing visible to the method's own error, which is ~10-20 rtol here
    assert err <= 1.5 * err_steps + 1e-11 and err <= 3e-9, (err, err_steps)


def test_rkmk45_grid_keeps_the_casimir_at_every_output_point():
    r = integrate(PROBLEM, M0, (0.0, 10.0), method="rkmk45", steps=999, rtol=1e-10, atol=1e-12)
    assert len(r.t) == 1000 and r.t[-1] == 10.0
    c0 = M0 @ M0
    assert np.max(np.abs(np.sum(r.y ** 2, axis=1) - c0)) / c0 <= 1e-14


@pytest.mark.parametrize("method", ["rkmk45", "rk45"])
def test_output_at_accepted_steps_is_the_solvers_own_state(method):
    bare = integrate(PROBLEM, M0, (0.0, 5.0), method=method, rtol=1e-8, atol=1e-10)
    r = integrate(PROBLEM, M0, (0.0, 5.0), method=method, rtol=1e-8, atol=1e-10, t_eval=bare.t)
    assert np.array_equal(r.y, bare.y)
    # just inside a step the extension is continuous with the step's end (s -> 1)
    mid = bare.t[1:] - 1e-9 * np.diff(bare.t)
    r2 = integrate(PROBLEM, M0, (0.0, 5.0), method=method, rtol=1e-8, atol=1e-10, t_eval=mid)
    np.testing.assert_allclose(r2.y, bare.y[1:], atol=1e-8)


def test_batch_equals_the_single_evaluations_on_the_same_steps():
    rng = np.random.default_rng(3)
    Y0 = rng.standard_normal((4, 3))
    te = np.linspace(0.0, 3.0, 57)
    r = integrate(PROBLEM, Y0, (0.0, 3.0), method="rkmk45", t_eval=te, rtol=1e-10, atol=1e-12)
    bare = integrate(PROBLEM, Y0, (0.0, 3.0), method="rkmk45", rtol=1e-10, atol=1e-12)
    ref = _Reference(PROBLEM, tableaux.get("dp5"), True, METHODS["rkmk45"].terms)
    assert r.y.shape == (57, 4, 3)
    for j in range(4):
        single = at_times(ref, bare.t, bare.y[:, j], te)
        np.testing.assert_allclose(r.y[:, j], single, rtol=0, atol=1e-15)
        np.testing.assert_allclose(r.y[:, j], rigid_body_exact(REFERENCE_INERTIA, Y0[j], te), atol=3e-9)


def test_backward_in_time_grid():
    te = np.linspace(2.0, 0.0, 40)
    r = integrate(PROBLEM, M0, (2.0, 0.0), method="rkmk45", t_eval=te, rtol=1e-10, atol=1e-12)
    assert np.array_equal(r.t, te)
    assert np.max(np.abs(r.y[0] - M0)) == 0.0
    # initial state M0 at t = 2: the exact state at te is the flow from M0 by te - 2
    np.testing.assert_allclose(r.y, rigid_body_exact(REFERENCE_INERTIA, M0, te - 2.0), atol=3e-9)


def test_bad_grids_are_refused():
    with pytest.raises(IntegrationInputError, match="within t_span"):
        integrate(PROBLEM, M0, (0.0, 1.0), method="rkmk45", t_eval=[0.5, 1.5])
    with pytest.raises(IntegrationInputError, match="not both"):
        integrate(PROBLEM, M0, (0.0, 1.0), method="rkmk45", t_eval=[0.5], steps=3)
    for method in ("rkmk853", "rk853"):
        with pytest.raises(IntegrationInputError, match="rkmk45 / rk45"):
            integrate(PROBLEM, M0, (0.0, 1.0), method=method, steps=10)

