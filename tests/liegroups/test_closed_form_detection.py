"""One public implementation of the so(3) coefficient functions, accurate to round-off at every angle
(reference: mpmath at 50 digits), and LieAlgebra.closed_form decided from the structure constants."""

import mpmath
import numpy as np
import pytest

from liegroups import (LieAlgebra, bernoulli_coefficients, from_bivectors, named, so3_coefficients,
                       so3_dexp_coefficient, so3_dexpinv_coefficient)

ANGLES = [1e-8, 1e-4, 1e-2, 0.5, 3.0]


def _reference(t):
    mpmath.mp.dps = 50
    T = mpmath.mpf(t)
    return [float(v) for v in (mpmath.sin(T) / T, (1 - mpmath.cos(T)) / T**2, (T - mpmath.sin(T)) / T**3,
                               (1 - T / 2 * mpmath.cot(T / 2)) / T**2)]


@pytest.mark.parametrize("t", ANGLES)
def test_coefficients_are_accurate_to_round_off(t):
    ra, rb, rc, rd = _reference(t)
    t2 = np.array([t * t])
    a, b = so3_coefficients(t2)
    c, d = so3_dexp_coefficient(t2), so3_dexpinv_coefficient(t2)
    for got, ref in ((a[0], ra), (b[0], rb), (c[0], rc), (d[0], rd)):
        assert abs(got - ref) <= 4e-16 * abs(ref) + 1e-300, (t, got, ref)
    fa, fb = so3_coefficients(float(t * t))  # the scalar (math) path used by straight-line code
    assert type(fa) is float and type(fb) is float
    assert abs(fa - ra) <= 4e-16 * ra and abs(fb - rb) <= 4e-16 * rb


def test_coefficients_at_zero_and_in_batches():
    a, b = so3_coefficients(np.zeros((2, 3)))
    assert a.shape == b.shape == (2, 3) and np.all(a == 1.0) and np.all(b == 0.5)
    assert so3_coefficients(0.0) == (1.0, 0.5)
    np.testing.assert_allclose(so3_dexp_coefficient(np.zeros(2)), 1 / 6, rtol=1e-16)
    np.testing.assert_allclose(so3_dexpinv_coefficient(np.zeros(2)), 1 / 12, rtol=1e-16)
    assert bernoulli_coefficients(4) == (1.0, -0.5, 1 / 12, 0.0)


def _hat_basis():
    E = []
    for i in range(3):
        e = np.zeros(3)
        e[i] = 1.0
        E.append(np.array([[0, -e[2], e[1]], [e[2], 0, -e[0]], [-e[1], e[0], 0]]))
    return E


def test_closed_form_is_decided_from_the_structure_constants():
    assert named.so3().closed_form == "so3" and named.se2().closed_form == "se2" and named.se3().closed_form == "se3"
    built = LieAlgebra.from_matrices(_hat_basis(), name="my rotations")
    assert built.closed_form == "so3"
    assert named.su2().closed_form == "so3"  # -i sigma/2 has C = epsilon
    assert named.bianchi("IX").closed_form == "so3"
    c, s = np.cos(0.3), np.sin(0.3)
    rotated = named.so3().change_basis(np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]]))  # epsilon is rotation-invariant
    assert rotated.closed_form == "so3"
    assert named.so3().change_basis(2.0 * np.eye(3)).closed_form is None  # C = 2 epsilon
    for other in (named.sl2(), named.so21(), named.heisenberg(), named.so4(), from_bivectors((3, 0))):
        assert other.closed_form is None, other.name
    se2 = LieAlgebra.from_matrices([np.array([[0, 0, 1.0], [0, 0, 0], [0, 0, 0]]),
                                    np.array([[0, 0, 0], [0, 0, 1.0], [0, 0, 0]]),
                                    np.array([[0, -1.0, 0], [1.0, 0, 0], [0, 0, 0]])])
    assert se2.closed_form == "se2"


def test_round_off_in_c_still_counts_but_a_real_change_does_not():
    C = np.array(named.so3().structure_constants)
    noise = np.zeros_like(C)
    noise[0, 1, 2], noise[1, 0, 2] = 3e-16, -3e-16
    assert LieAlgebra(C + noise).closed_form == "so3"
    noise[0, 1, 2], noise[1, 0, 2] = 1e-6, -1e-6
    assert LieAlgebra(C + noise, rtol=1e-3).closed_form is None


def test_closed_form_can_be_switched_off_and_is_read_only():
    alg = LieAlgebra(named.so3().structure_constants, closed_forms=False)
    assert alg.closed_form is None
    with pytest.raises(AttributeError):
        named.so3().closed_form = "se3"
    assert named.so3()._closed_form == "so3"  # the alias still read by older callers


def test_an_algebra_built_from_matrices_gets_the_closed_forms():
    built = LieAlgebra.from_matrices(_hat_basis())
    rng = np.random.default_rng(3)
    x, m = rng.standard_normal((2, 5, 3))
    general = LieAlgebra(built.structure_constants, closed_forms=False)
    ref = named.so3()
    for f in ("exp_ad", "coadjoint_exp", "dexp", "dexpinv"):
        args = (x,) if f == "exp_ad" else (x, m)
        np.testing.assert_array_equal(getattr(built, f)(*args), getattr(ref, f)(*args))
        np.testing.assert_allclose(getattr(built, f)(*args), getattr(general, f)(*args), atol=1e-13)
