"""The integrators use liegroups' so(3) coefficients and closed forms: an algebra with the so(3)
structure constants built from matrices gets the generated so(3) code and the same numbers as named.so3(), and the
closed-form actions are exact to round-off at small and large angles (reference: mpmath expm at 50
digits)."""

import mpmath
import numpy as np
import pytest

from integrators import CoadjointProblem, integrate

from integrators.geometry import recognition
from integrators.methods import get_method
from integrators.reference import genhelpers
from integrators.core.problems import ReconstructionProblem
from integrators.geometry.spaces import AffineCoadjointSpace, GroupSpace, se3_coadjoint_exp
from liegroups import SE3, LieAlgebra, named

ANGLES = [1e-8, 1e-4, 1e-2, 0.5, 3.0]
AXIS = np.array([0.36, -0.48, 0.8])
INERTIA = np.array([2.0, 1.0, 2.0 / 3.0])


def _hat(x):
    return np.array([[0, -x[2], x[1]], [x[2], 0, -x[0]], [-x[1], x[0], 0]])


def _expm(M):
    mpmath.mp.dps = 50
    E = mpmath.expm(mpmath.matrix([[mpmath.mpf(float(v)) for v in row] for row in M]))
    return np.array([[float(E[i, j]) for j in range(E.cols)] for i in range(E.rows)])


def _body(algebra):
    return CoadjointProblem(algebra, lambda m: m / INERTIA, velocity_matrix=np.diag(1 / INERTIA),
                            hamiltonian=lambda m: 0.5 * np.sum(m * m / INERTIA, axis=-1))


@pytest.mark.parametrize("method", ["rkmk4", "cf4", "splitting", "moser_veselov"])
def test_so3_from_matrices_takes_the_so3_paths(method):
    built = LieAlgebra.from_matrices([_hat(e) for e in np.eye(3)], name="rotations from matrices")
    P, Q = _body(built), _body(named.so3())
    get_method(method, P)  # the so(3)-only methods apply too
    z0 = np.array([0.3, -0.2, 0.9])
    # both are recognised as so(3) (the generated code writes Rodrigues' formula and the splitting for them)
    assert recognition.recognise(P, z0).closed == recognition.recognise(Q, z0).closed == "so3"
    a = integrate(P, z0, (0.0, 3.0), method=method, steps=30)
    b = integrate(Q, z0, (0.0, 3.0), method=method, steps=30)
    np.testing.assert_array_equal(a.y, b.y)


@pytest.mark.parametrize("t", ANGLES + [20.0])
def test_generated_rodrigues_coefficients_are_exact(t):
    # a = sin t / t, b = (1 - cos t)/t^2 of the generated so(3) exponential (co2 on floats and on numpy
    # columns) against mpmath at 50 digits and against liegroups' own so3_coefficients
    import liegroups

    mpmath.mp.dps = 50
    tt = mpmath.mpf(t)
    ref = np.array([float(mpmath.sin(tt) / tt), float((1 - mpmath.cos(tt)) / tt ** 2)])
    for got in (genhelpers.SCALAR["co2"](t * t), [float(v[0]) for v in genhelpers.ARRAY["co2"](np.array([t * t]))],
                [float(v) for v in liegroups.so3_coefficients(t * t)]):
        np.testing.assert_allclose(got, ref, rtol=4e-16, atol=0)


@pytest.mark.parametrize("t", ANGLES)
def test_affine_so3_action_is_exact_to_round_off(t):
    """exp of [[A, v], [0, 0]] with A = ad(x)^T = -hat(x): the affine flow z' = ad*_x z + v."""
    x = t * AXIS
    z, v = np.array([0.4, -1.1, 0.7]), np.array([0.2, 0.5, -0.3])
    M = np.zeros((4, 4))
    M[:3, :3], M[:3, 3] = -_hat(x), v
    E = _expm(M)
    ref = E[:3, :3] @ z + E[:3, 3]
    P = CoadjointProblem(named.so3(), lambda m: m, forcing=lambda m: 0.0 * m)
    got = AffineCoadjointSpace(P).act(np.concatenate([x, v]), z)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-15 * np.max(np.abs(ref)))


@pytest.mark.parametrize("t", ANGLES)
def test_se3_group_and_coadjoint_actions_are_exact_to_round_off(t):
    x = np.concatenate([t * AXIS, [0.7, -0.2, 1.3]])
    E = _expm(SE3.hat(x))
    got = GroupSpace(SE3, lambda s: x).act(x, np.eye(4))
    np.testing.assert_allclose(got, E, rtol=0, atol=6e-16)
    z = np.array([0.3, -0.8, 0.5, 1.1, 0.2, -0.4])
    Ad = np.zeros((6, 6))  # Ad_g on (omega, v): [[R, 0], [hat(p) R, R]]; the coadjoint motion is Ad_g^T z
    R, p = E[:3, :3], E[:3, 3]
    Ad[:3, :3], Ad[3:, 3:], Ad[3:, :3] = R, R, _hat(p) @ R
    np.testing.assert_allclose(se3_coadjoint_exp(x, z), Ad.T @ z, rtol=0, atol=1e-15)


def test_reconstruction_problem_uses_the_group_closed_form():
    P = ReconstructionProblem(SE3, lambda s: np.array([0.0, 0.0, 1e-4, 1.0, 0.0, 0.0]))
    res = integrate(P, np.eye(4), (0.0, 1.0), method="rkmk4", steps=4)
    np.testing.assert_allclose(res.y[-1], _expm(SE3.hat(np.array([0.0, 0.0, 1e-4, 1.0, 0.0, 0.0]))),
                               rtol=0, atol=1e-15)
