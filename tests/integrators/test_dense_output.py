"""Output at requested times for the adaptive pairs (integrators.reference.dense_output).

Expected values: the exact elliptic solution of the free rigid body (integrators.analysis.rigid_body); the
Casimir |m|^2 at t = 0; the solver's own accepted states (a run without t_eval); the order conditions
of a continuous extension, sum_i b_i(s) c_i^(k-1) = s^k / k and sum_i b_i(s) (A c)_i = s^3 / 6
(Hairer, Norsett and Wanner I, II.6), and exp(s h) for y' = y.
"""

import numpy as np
import pytest

from integrators import IntegrationInputError, integrate, tableaux
from integrators.reference.pair import ReferencePair
from integrators.reference.dense_output import at_times, weights
from integrators.methods import METHODS

from ._problems import ADAPTIVE_RK, ADAPTIVE_RKMK
from integrators.analysis.rigid_body import REFERENCE_INERTIA, REFERENCE_M0, free_rigid_body, rigid_body_exact

PROBLEM = free_rigid_body(REFERENCE_INERTIA)
M0 = np.array(REFERENCE_M0)


DENSE = [t.name for t in tableaux.TABLEAUX.values() if t.P is not None]


def _extended(tab):
    """(A, c) over the stages, the FSAL stage (row b, node 1) and the interpolant's extra stages."""
    rows = list(tab.A) + ([tab.b] if tab.fsal else []) + list(tab.extra_A)
    c = list(tab.c) + ([1.0] if tab.fsal else []) + list(tab.extra_c)
    A = np.zeros((len(rows), len(rows)))
    for i, row in enumerate(rows):
        A[i, :len(row)] = row
    return A, np.array(c)


@pytest.mark.parametrize("name", DENSE)
def test_continuous_extension_order_conditions(name):
    """The bushy-tree and two tall-tree conditions written out by hand (the full set over all trees is
    test_tableaux.py's), theta(1) = the step, and the extra stages' own row-sum conditions."""
    tab = tableaux.get(name)
    order = tab.dense_order
    A, c = _extended(tab)
    s = np.linspace(0.0, 1.0, 11)
    B = weights(tab, s)
    for k in range(1, order + 1):
        np.testing.assert_allclose(B @ c ** (k - 1), s ** k / k, atol=1e-12)
    np.testing.assert_allclose(B @ (A @ c), s ** 3 / 6, atol=1e-12)
    np.testing.assert_allclose(B @ (A @ c ** 2), s ** 4 / 12, atol=1e-12)
    n = tab.s
    np.testing.assert_allclose(B[-1, :n], tab.b, atol=1e-13)  # theta(1) is the step
    np.testing.assert_allclose(B[-1, n:], 0.0, atol=1e-13)
    # stage weights sum_j a_ij c_j^(k-1) = c_i^k / k the extra stages need for the stated order
    for k in range(1, 3):
        np.testing.assert_allclose(A[n + 1:] @ c ** (k - 1), c[n + 1:] ** k / k, atol=1e-12)


@pytest.mark.parametrize("name", DENSE)
def test_dense_output_on_y_equals_y_has_the_stated_order(name):
    """On y' = y the interpolant's local error is O(h^(dense_order + 1)) against exp(s h)."""
    tab = tableaux.get(name)
    order, h0 = tab.dense_order, 0.04 if tab.dense_order < 6 else 0.4
    A, c = _extended(tab)
    s = np.array([0.3, 0.5, 0.77])
    errs = []
    for h in (h0, h0 / 2, h0 / 4):
        K = np.zeros(len(c))
        for i in range(len(c)):
            K[i] = h * (1.0 + A[i] @ K)
        errs.append(np.abs(1.0 + weights(tab, s) @ K - np.exp(s * h)))
    ratios = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    assert np.all(ratios > order + 0.7), ratios  # local error O(h^(order + 1))


@pytest.mark.parametrize("method", ADAPTIVE_RKMK + ADAPTIVE_RK)
def test_grid_of_1000_points_matches_the_exact_rigid_body(method):
    te = np.linspace(0.0, 10.0, 1000)
    r = integrate(PROBLEM, M0, (0.0, 10.0), method=method, t_eval=te, rtol=1e-10, atol=1e-12)
    bare = integrate(PROBLEM, M0, (0.0, 10.0), method=method, rtol=1e-10, atol=1e-12)
    assert np.array_equal(r.t, te)
    err = np.max(np.abs(r.y - rigid_body_exact(REFERENCE_INERTIA, M0, te)))
    err_steps = np.max(np.abs(bare.y - rigid_body_exact(REFERENCE_INERTIA, M0, bare.t)))
    # the interpolant adds at most a few rtol to the method's own global error (~20 rtol for the RKMK pairs)
    assert err <= 1.5 * err_steps + 3e-10 and err <= 3e-9, (err, err_steps)


@pytest.mark.parametrize("method", ADAPTIVE_RKMK)
def test_rkmk_grid_keeps_the_casimir_at_every_output_point(method):
    r = integrate(PROBLEM, M0, (0.0, 10.0), method=method, steps=999, rtol=1e-10, atol=1e-12)
    assert len(r.t) == 1000 and r.t[-1] == 10.0
    c0 = M0 @ M0
    assert np.max(np.abs(np.sum(r.y ** 2, axis=1) - c0)) / c0 <= 1e-14


@pytest.mark.parametrize("method", ADAPTIVE_RKMK + ADAPTIVE_RK)
def test_output_at_accepted_steps_is_the_solvers_own_state(method):
    bare = integrate(PROBLEM, M0, (0.0, 5.0), method=method, rtol=1e-8, atol=1e-10, backend="numpy")
    r = integrate(PROBLEM, M0, (0.0, 5.0), method=method, rtol=1e-8, atol=1e-10, t_eval=bare.t, backend="numpy")
    assert np.array_equal(r.y, bare.y)
    # just inside a step the extension is continuous with the step's end (s -> 1)
    mid = bare.t[1:] - 1e-9 * np.diff(bare.t)
    r2 = integrate(PROBLEM, M0, (0.0, 5.0), method=method, rtol=1e-8, atol=1e-10, t_eval=mid)
    np.testing.assert_allclose(r2.y, bare.y[1:], atol=1e-8)


@pytest.mark.parametrize("method", ADAPTIVE_RKMK)
def test_batch_equals_the_single_evaluations_on_the_same_steps(method):
    tableau = METHODS[method].tableau.name
    rng = np.random.default_rng(3)
    Y0 = rng.standard_normal((4, 3))
    te = np.linspace(0.0, 3.0, 57)
    r = integrate(PROBLEM, Y0, (0.0, 3.0), method=method, t_eval=te, rtol=1e-10, atol=1e-12)
    bare = integrate(PROBLEM, Y0, (0.0, 3.0), method=method, rtol=1e-10, atol=1e-12)
    ref = ReferencePair(PROBLEM, tableaux.get(tableau), True, METHODS[method].terms)
    assert r.y.shape == (57, 4, 3)
    for j in range(4):
        single = at_times(ref, bare.t, bare.y[:, j], te)
        # the ensemble's grid comes from the generated loop's own stages: equal to round-off (a few ulp)
        np.testing.assert_allclose(r.y[:, j], single, rtol=0, atol=1e-14)
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


