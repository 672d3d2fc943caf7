"""The one step-size controller: its constants are scipy's (the rule of Hairer, Norsett and Wanner I, II.4
that solve_ivp implements), and the generated loops and the numpy ensembles apply the same rule."""

import numpy as np
import pytest
from scipy.integrate._ivp import rk as scipy_rk

from integrators.core import controller


def test_constants_are_solve_ivps():
    assert (controller.SAFETY, controller.MIN_FACTOR, controller.MAX_FACTOR) == (
        scipy_rk.SAFETY, scipy_rk.MIN_FACTOR, scipy_rk.MAX_FACTOR)


@pytest.mark.parametrize("order", [3, 4, 7])
def test_the_three_forms_of_the_rule_agree(order):
    errs = np.array([0.0, 1e-12, 0.3, 1.0, 1.7, 50.0, 1e305, np.inf, np.nan])
    acc = errs <= 1.0
    scalar = [controller.accepted_factor(e, order) if a else controller.rejected_factor(e, order)
              for e, a in zip(errs, acc)]
    env = {}
    src = ("def a(err):\n    " + controller.accepted_source(order) + "\n    return fac\n"
           "def r(err):\n    " + controller.rejected_source(order) + "\n    return fac\n")
    exec(src, env)
    generated = [env["a"](e) if ok else env["r"](e) for e, ok in zip(errs, acc)]
    np.testing.assert_array_equal(scalar, generated)
    # the text for every order (the generic kernel): the exponent a variable of the text
    env = {"expo": controller.exponent(order)}
    exec("def a(err):\n    " + controller.accepted_source("expo") + "\n    return fac\n"
         "def r(err):\n    " + controller.rejected_source("expo") + "\n    return fac\n", env)
    np.testing.assert_array_equal(scalar, [env["a"](e) if ok else env["r"](e) for e, ok in zip(errs, acc)])
    np.testing.assert_array_equal(scalar, controller.factors(errs, acc, order))
    # independent: scipy's formula on the accepted finite errors, the clamps elsewhere
    expected = [10.0 if e == 0 else min(10.0, 0.9 * e ** (-1 / (order + 1))) if a else
                (max(0.2, 0.9 * e ** (-1 / (order + 1))) if e < 1e300 else 0.2) for e, a in zip(errs, acc)]
    np.testing.assert_allclose(scalar, expected, rtol=0, atol=0)


def test_the_error_norm_is_scipys_in_both_forms():
    # independent: scipy's norms (RungeKutta: the RMS norm; DOP853: Hairer's norm of its two estimates),
    # written here from scipy's _estimate_error_norm; the estimates already divided by the scale
    from math import sqrt
    rng = np.random.default_rng(3)
    n = 7
    for _ in range(20):
        e5, e3 = rng.normal(size=n) * 10.0 ** rng.uniform(-8, 2), rng.normal(size=n) * 10.0 ** rng.uniform(-8, 2)
        s5, s3 = float(e5 @ e5), float(e3 @ e3)
        rms = np.linalg.norm(e5) / np.sqrt(n)
        dop = s5 / np.sqrt((s5 + 0.01 * s3) * n)
        np.testing.assert_allclose(controller.error_norm([s5], n), rms, rtol=1e-14)
        np.testing.assert_allclose(controller.error_norm([s5, s3], n), dop, rtol=1e-14)
        env = {"sqrt": sqrt, "S5": s5, "S3": s3}
        np.testing.assert_allclose(eval(controller.error_norm_source(["S5"], n), env), rms, rtol=1e-14)
        np.testing.assert_allclose(eval(controller.error_norm_source(["S5", "S3"], n), env), dop, rtol=1e-14)
        env["dim"] = n   # the dimension a variable of the text (the generic kernel)
        np.testing.assert_allclose(eval(controller.error_norm_source(["S5", "S3"], "dim"), env), dop, rtol=1e-14)
    # an ensemble: one norm per trajectory; both estimates zero is a zero error (not NaN)
    np.testing.assert_array_equal(controller.error_norm([np.zeros(3), np.zeros(3)], n), np.zeros(3))
