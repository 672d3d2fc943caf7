"""The exact free-rigid-body solution used as the reference of the order tests.

Independent checks: reference values m(1), m(10), H0 (computed elsewhere); Euler's
equations m' = m x (m / I) by central finite differences; agreement with scipy DOP853 at tight
tolerance for random bodies (including odd axis orderings and rotation about the other axis).
"""

import numpy as np
import pytest

from integrators import integrate
from integrators.analysis.rigid_body import REFERENCE_INERTIA, REFERENCE_M0, free_rigid_body, rigid_body_exact


def test_independent_reference_values():
    m = rigid_body_exact(REFERENCE_INERTIA, REFERENCE_M0, np.array([0.0, 1.0, 10.0]))
    np.testing.assert_allclose(m[0], REFERENCE_M0, atol=1e-14)
    np.testing.assert_allclose(m[1], [0.36911008, -0.37284632, 0.85131861], atol=6e-9)
    np.testing.assert_allclose(m[2], [0.40706614, 0.28300743, 0.86844917], atol=6e-9)
    H0 = free_rigid_body(REFERENCE_INERTIA).hamiltonian(np.array(REFERENCE_M0))
    assert abs(H0 - 0.6471252793138366) < 1e-15


@pytest.mark.parametrize("seed", range(6))
def test_exact_solution_satisfies_euler_equations(seed):
    rng = np.random.default_rng(seed)
    inertia = rng.uniform(0.3, 3.0, 3)
    m0 = rng.standard_normal(3)
    t = np.linspace(0.0, 6.0, 13)
    d = 1e-5
    m = rigid_body_exact(inertia, m0, t)
    dm = (rigid_body_exact(inertia, m0, t + d) - rigid_body_exact(inertia, m0, t - d)) / (2 * d)
    np.testing.assert_allclose(dm, np.cross(m, m / inertia), atol=1e-8)
    np.testing.assert_allclose(m[0], m0, atol=1e-13)


@pytest.mark.parametrize("seed", range(4))
def test_exact_solution_agrees_with_dop853(seed):
    rng = np.random.default_rng(10 + seed)
    inertia = rng.uniform(0.3, 3.0, 3)
    m0 = rng.standard_normal(3)
    res = integrate(free_rigid_body(inertia), m0, (0.0, 8.0), method="scipy:DOP853", steps=40,
                    rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(res.y, rigid_body_exact(inertia, m0, res.t), atol=1e-10)


def test_bad_bodies_raise():
    with pytest.raises(ValueError, match="distinct"):
        rigid_body_exact((1.0, 1.0, 2.0), (1.0, 0.0, 0.0), 1.0)
    with pytest.raises(ValueError, match="separatrix"):
        rigid_body_exact((2.0, 1.0, 0.5), (0.0, 1.0, 0.0), 1.0)
    with pytest.raises(ValueError, match="positive"):
        free_rigid_body((1.0, -1.0, 2.0))
