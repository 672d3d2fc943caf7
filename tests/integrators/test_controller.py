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
    np.testing.assert_array_equal(scalar, controller.factors(errs, acc, order))
    # independent: scipy's formula on the accepted finite errors, the clamps elsewhere
    expected = [10.0 if e == 0 else min(10.0, 0.9 * e ** (-1 / (order + 1))) if a else
                (max(0.2, 0.9 * e ** (-1 / (order + 1))) if e < 1e300 else 0.2) for e, a in zip(errs, acc)]
    np.testing.assert_allclose(scalar, expected, rtol=0, atol=0)
