"""The catalog's exact solutions against independent values: independent reference values and
scipy DOP853 solutions of the equations written out in the test."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from catalog.verify.exact import NoExactSolution, euler_top_solution, inclined_skate, servo_sleigh_u


def test_euler_top_reference_values():
    """m(1), m(10) for I = (2, 1, 2/3), m0 = (cos 1.1, 0, sin 1.1), computed independently."""
    f = euler_top_solution([2, 1, 2 / 3], [np.cos(1.1), 0, np.sin(1.1)])
    np.testing.assert_allclose(f([1.0])[0], [0.36911008, -0.37284632, 0.85131861], atol=1e-8)
    np.testing.assert_allclose(f([10.0])[0], [0.40706614, 0.28300743, 0.86844917], atol=1e-8)


@pytest.mark.parametrize("seed", range(6))
def test_euler_top_random_against_dop853(seed):
    rng = np.random.default_rng(seed)
    I = rng.uniform(0.5, 3.0, 3)
    m0 = rng.normal(size=3)
    sol = solve_ivp(lambda t, m: np.cross(m, m / I), (0, 15), m0, rtol=1e-12, atol=1e-12, method="DOP853",
                    t_eval=np.linspace(0, 15, 40))
    np.testing.assert_allclose(euler_top_solution(I, m0)(sol.t), sol.y.T, atol=1e-8)


def test_euler_top_refuses_equal_moments():
    with pytest.raises(NoExactSolution):
        euler_top_solution([1, 1, 2], [1, 0, 0.5])


@pytest.mark.parametrize("alpha, beta, u0, w0", [(0.5, -0.5, 1.0, 0.5), (1.0, 2.0, -0.3, 0.4), (0.0, 0.7, 0.5, 1.0)])
def test_servo_sleigh_solution(alpha, beta, u0, w0):
    sol = solve_ivp(lambda t, x: [alpha * x[0] * x[1], beta * x[0] * x[1]], (0, 2), [u0, w0], rtol=1e-12,
                    atol=1e-13, t_eval=np.linspace(0, 2, 20))
    np.testing.assert_allclose(servo_sleigh_u(alpha, beta, u0, w0)(sol.t), sol.y.T, atol=1e-9)


def test_inclined_skate_solution_solves_the_constrained_equations():
    """x'' = 1 + lam sin(phi), y'' = -lam cos(phi), phi'' = 0 with x' sin(phi) = y' cos(phi) (Kozlov's lectures)."""
    w = 1.3

    def f(t, s):
        x, y, ph, xd, yd, pd = s
        # lam from differentiating the constraint: (x'' sin - y'' cos) + pd (xd cos + yd sin) = 0
        lam = -(np.sin(ph) + pd * (xd * np.cos(ph) + yd * np.sin(ph)))
        return [xd, yd, pd, 1 + lam * np.sin(ph), -lam * np.cos(ph), 0.0]

    sol = solve_ivp(f, (0, 5), [0, 0, 0, 0, 0, w], rtol=1e-12, atol=1e-13, t_eval=np.linspace(0, 5, 30))
    np.testing.assert_allclose(inclined_skate(w)(sol.t), sol.y.T, atol=1e-8)
