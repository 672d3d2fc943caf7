"""The adaptive RKMK pairs deliver the accuracy asked for (issue 24): at the same rtol, rkmk853's final error is
within 3x of rk853_projected's on so(4), se(3), so(5) and so(4) in a random basis, and the reason the error norm
of DOP853 in RKMK form extrapolates less than Hairer's (:mod:`integrators.core.controller`) holds.

Expected values are independent of the code under test: the final states against solve_ivp's DOP853 at rtol
1e-13 (its error, ~1e-12 here, is below 1% of the errors compared); the local errors against the exact flow of
one step by the same tight solve_ivp; the error norm against its formula written here.
"""

import contextlib
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from integrators import METHODS, CoadjointProblem, integrate
from integrators.core import controller
from integrators.reference.pair import ReferencePair
from liegroups import named

#: the issue's target: rkmk853's final error at most this many times rk853_projected's at the same rtol
TARGET = 3.0


def _algebra(name):
    if name == "so(4) random basis":
        g = named.so4()
        return g.change_basis(np.eye(6) + 0.3 * np.random.default_rng(5).standard_normal((6, 6)))
    return {"so(4)": named.so4, "se(3)": named.se3, "so(5)": lambda: named.so(5)}[name]()


def _problem(g, seed=1):
    """z' = ad*_{W z} z, W the inverse of a random SPD inertia B B^T / n + I, |z0| = 3 (as
    benchmarks/rkmk_accuracy.py), and the exact solution on [0, 10] by a tight DOP853."""
    rng = np.random.default_rng(seed)
    n = g.dim
    B = rng.standard_normal((n, n))
    W = np.linalg.inv(B @ B.T / n + np.eye(n))
    z0 = rng.standard_normal(n)
    z0 *= 3.0 / np.linalg.norm(z0)
    P = CoadjointProblem(g, lambda z: z @ W.T, velocity_matrix=W, record_casimirs=False)
    sol = solve_ivp(lambda t, z: P.rhs(t, z), (0.0, 10.0), z0, method="DOP853", rtol=1e-13, atol=1e-15,
                    dense_output=True)
    return P, z0, sol


def _final_error(P, z0, sol, method, rtol, **kw):
    r = integrate(P, z0, (0.0, 10.0), method=method, rtol=rtol, atol=rtol / 100, backend="numpy", **kw)
    assert r.status == 0
    return np.linalg.norm(r.y[-1] - sol.sol(10.0)) / np.linalg.norm(z0), len(r.t) - 1


@pytest.mark.parametrize("name", ["so(4)", "se(3)", "so(5)", "so(4) random basis"])
def test_rkmk853_final_error_within_3x_of_rk853_projected(name):
    # before the RKMK norm (Hairer's norm in both forms) these were 57x (so(4)), 4.5x (se(3)), 14x (so(5))
    P, z0, sol = _problem(_algebra(name))
    rtol = 1e-8
    e_proj, n_proj = _final_error(P, z0, sol, "rk853_projected", rtol)
    e_mk, n_mk = _final_error(P, z0, sol, "rkmk853", rtol)
    assert e_mk <= TARGET * e_proj, (name, e_mk / rtol, e_proj / rtol)
    # and not by taking many more steps than rk853_projected (measured: 1.1-1.6x here; the error ratios 1.8, 0.24, 0.56, 0.08)
    assert n_mk <= 2.0 * n_proj, (name, n_mk, n_proj)


@contextlib.contextmanager
def _hairers_norm():
    """Hairer's DOP853 norm and step rule in RKMK form too (gamma 1/2, k = 7), as before the RKMK norm."""
    saved = controller.LIE_DOP853_GAMMA, controller.LIE_DOP853_ORDER
    controller.LIE_DOP853_GAMMA, controller.LIE_DOP853_ORDER = 0.5, 7
    try:
        yield
    finally:
        controller.LIE_DOP853_GAMMA, controller.LIE_DOP853_ORDER = saved


def test_hairers_norm_in_rkmk_form_misses_the_target_on_so4():
    # the same run with Hairer's norm (the RKMK error estimate unchanged otherwise): the bound above fails,
    # so the test above tests the norm (numpy reference path, fast=False: the norm read at run time)
    P, z0, sol = _problem(_algebra("so(4)"))
    rtol = 1e-8
    e_proj, _ = _final_error(P, z0, sol, "rk853_projected", rtol, fast=False)
    with _hairers_norm():
        e_old, _ = _final_error(P, z0, sol, "rkmk853", rtol, fast=False)
    e_new, _ = _final_error(P, z0, sol, "rkmk853", rtol, fast=False)
    assert e_old > 10.0 * e_proj and e_new <= TARGET * e_proj


def _local(P, sol, method, h, states):
    """Geometric means over ``states`` of (true local error of the propagated solution) / (error norm), the
    true error of one step of size h from the exact solution's state, measured in the norm's own scale."""
    m = METHODS[method]
    ref = ReferencePair(P, m.tableau, m.lie, m.terms)
    rtol, atol = 1e-8, 1e-10
    out = []
    for t in states:
        z = sol.sol(t)
        exact = solve_ivp(lambda s, y: P.rhs(s, y), (0.0, h), z, method="DOP853", rtol=1e-13, atol=1e-16).y[:, -1]
        Ks, _, _, z1, _, Kl = ref.stages(t, z, h, ref.first(t, z))
        sc = atol + rtol * np.maximum(np.abs(z), np.abs(z1))
        true = np.sqrt(np.mean(((z1 - exact) / sc) ** 2))
        out.append(true / ref.error(z, z1, Ks, Kl, rtol, atol))
    return math.exp(np.mean(np.log(out)))


def test_the_reason_rkmk853_needs_its_own_norm():
    # so(4) at h = 0.2 (the steps of rtol ~1e-8): true local error over the norm, at 8 states of the orbit
    P, z0, sol = _problem(_algebra("so(4)"))
    states = np.linspace(0.5, 9.0, 8)
    h = 0.2
    rk = _local(P, sol, "rk853", h, states)
    with _hairers_norm():
        hairer = _local(P, sol, "rkmk853", h, states)
    lie = _local(P, sol, "rkmk853", h, states)
    # Hairer's extrapolation e5 (10 e5 / e3) is > 5x less conservative in RKMK form (measured: 15x) ...
    assert hairer > 5.0 * rk, (hairer, rk)
    # ... while the 5(4) pair's plain RMS of one estimate is as reliable in both forms (measured 0.073 / 0.059)
    assert _local(P, sol, "rkmk45", 0.1, states) < 3.0 * _local(P, sol, "rk45", 0.1, states)
    # the RKMK norm brings the ratio back to at most the ambient form's (measured 0.021 / 0.066)
    assert lie <= rk, (lie, rk)


def test_the_rkmk_norm_is_its_formula_in_every_form():
    # err = sqrt(S5/n) (S5 / (S5 + 0.01 S3))^(1/5), written here; the generated text evaluates the same
    rng = np.random.default_rng(4)
    n = 6
    for _ in range(20):
        s5, s3 = 10.0 ** rng.uniform(-10, 2), 10.0 ** rng.uniform(-10, 2)
        expected = math.sqrt(s5 / n) * (s5 / (s5 + 0.01 * s3)) ** 0.2
        np.testing.assert_allclose(controller.error_norm([s5, s3], n, lie=True), expected, rtol=1e-14)
        env = {"sqrt": math.sqrt, "S5": s5, "S3": s3, "dim": n}
        np.testing.assert_allclose(eval(controller.error_norm_source(["S5", "S3"], n, lie=True), env), expected,
                                   rtol=1e-14)
        np.testing.assert_allclose(eval(controller.error_norm_source(["S5", "S3"], "dim", lie=True), env),
                                   expected, rtol=1e-14)
    # both zero: zero (an exact step is accepted, not NaN); the one-estimate norm is the same in both forms
    assert controller.error_norm([0.0, 0.0], n, lie=True) == 0.0
    assert controller.error_norm([4.0], 4, lie=True) == controller.error_norm([4.0], 4) == 1.0
    # the step rule's order: 6 for DOP853 in RKMK form (err ~ h^6.8), the tableau's otherwise
    assert controller.estimate_order(METHODS["rkmk853"].tableau, True) == 6
    assert controller.estimate_order(METHODS["rk853"].tableau, False) == 7
    assert controller.estimate_order(METHODS["rkmk45"].tableau, True) == 4
