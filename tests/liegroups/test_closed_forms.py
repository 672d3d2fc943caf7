"""Closed forms (Rodrigues, SE(2)/SE(3) exp, log, Ad, the so(3) dexp / dexp^-1 and the closed-form
coadjoint_exp) against independent general paths: scipy.linalg.expm of the hat matrix, and the general
matrix-function path of a copy of the same algebra built with closed_forms=False (same C, no closed
form: expm of ad, the block-matrix phi(ad x)). Angles include 0, 1e-9, the switch points 1e-2 and 1
(on both sides), and pi - 1e-7. A fourth-order Runge-Kutta integration of g' = g hat(X) written here checks that a
constant velocity from the identity reproduces the group exp.
"""

import numpy as np
import pytest
import scipy.linalg

from liegroups import SE2, SE3, SO3, LieAlgebra, group_for, named

ANGLES = [0.0, 1e-9, 1e-5, 1e-2 * (1 - 1e-9), 1e-2 * (1 + 1e-9), 1 - 1e-9, 1 + 1e-9,
          0.7, 2.0, np.pi - 1e-3, np.pi - 1e-7, np.pi]
AXIS = np.array([0.36, -0.48, 0.8])  # unit vector


def _general(kind):
    return LieAlgebra(named.get(kind).structure_constants, closed_forms=False)


def _so3_inputs():
    rng = np.random.default_rng(5)
    x = np.concatenate([np.array(ANGLES)[:, None] * AXIS, rng.standard_normal((20, 3))])
    return x, rng.standard_normal(x.shape)


def test_rodrigues_against_expm():
    x, _ = _so3_inputs()
    ref = np.stack([scipy.linalg.expm(SO3.hat(xi)) for xi in x])
    assert np.allclose(SO3.exp(x), ref, atol=1e-14, rtol=0)
    assert np.max(SO3.defect(SO3.exp(x))) < 1e-14


@pytest.mark.parametrize("kind", ["so3", "se2", "se3"])
def test_closed_forms_match_the_general_path(kind):
    g, gen = named.get(kind), _general(kind)
    rng = np.random.default_rng(6)
    rot = slice(0, 3) if kind != "se2" else slice(2, 3)
    x = rng.standard_normal((len(ANGLES) + 10, g.dim))
    x[: len(ANGLES), rot] = (np.array(ANGLES)[:, None] * AXIS)[:, : rot.stop - rot.start]
    if kind == "se2":
        x[: len(ANGLES), 2] = ANGLES
    m, v = rng.standard_normal((2,) + x.shape)
    assert np.allclose(g.exp_ad(x), gen.exp_ad(x), atol=1e-13, rtol=0)
    assert np.allclose(g.coadjoint_exp(x, m), gen.coadjoint_exp(x, m), atol=1e-13, rtol=0)
    assert np.allclose(g.dexp(x, v), gen.dexp(x, v), atol=1e-13, rtol=0)
    assert np.allclose(g.dexpinv(x, v), gen.dexpinv(x, v), atol=1e-13, rtol=0)


def test_so3_dexp_dexpinv_tiny_angles_match_the_series():
    g = named.so3()
    for t in [0.0, 1e-9, 1e-5, 1e-3]:
        x = t * AXIS
        v = np.array([0.3, 1.0, -0.7])
        assert np.allclose(g.dexp(x, v), g.dexp(x, v, order=8), atol=1e-16 + 1e-15)
        assert np.allclose(g.dexpinv(x, v), g.dexpinv(x, v, order=8), atol=2e-16 + 1e-15)


def test_so3_dexpinv_near_2pi_is_large_not_nan():
    g = named.so3()
    out = g.dexpinv((2 * np.pi - 1e-6) * AXIS, np.array([1.0, 0.0, 0.0]))
    assert np.all(np.isfinite(out)) and np.max(np.abs(out)) > 1e5


@pytest.mark.parametrize("G", [SO3, SE2, SE3], ids=["SO3", "SE2", "SE3"])
def test_group_exp_hat_vee_ad(G):
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal((2, 30, G.dim))
    g = G.exp(x)
    assert np.allclose(g, np.stack([scipy.linalg.expm(G.hat(xi)) for xi in x]), atol=1e-13)
    assert np.allclose(G.vee(G.hat(y)), y)
    # hat is a Lie-algebra homomorphism from the named algebra in the same basis
    X, Y = G.hat(x), G.hat(y)
    assert np.allclose(G.hat(G.algebra.bracket(x, y)), X @ Y - Y @ X, atol=1e-13)
    # Ad_g y = vee(g hat(y) g^-1), and it equals exp(ad x) of the algebra without closed forms
    assert np.allclose(G.hat(np.einsum("...ij,...j->...i", G.Ad(g), y)), g @ Y @ G.inverse(g), atol=1e-12)
    gen = LieAlgebra(G.algebra.structure_constants, closed_forms=False)
    assert np.allclose(G.Ad(g), gen.exp_ad(x), atol=1e-11)
    assert np.allclose(G.compose(g, G.inverse(g)), G.identity((30,)), atol=1e-13)
    assert np.allclose(G.inverse(g), np.linalg.inv(g), atol=1e-12)
    assert np.max(G.defect(g)) < 1e-13
    assert group_for(G.name.lower()) is G


@pytest.mark.parametrize("G", [SO3, SE2, SE3], ids=["SO3", "SE2", "SE3"])
def test_log_exp_round_trips(G):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((40, G.dim))
    rot = slice(0, 3) if G is not SE2 else slice(2, 3)
    for t in ANGLES[:-1]:  # |rotation| < pi: log(exp(x)) = x
        xi = x[:1].copy()
        xi[0, rot] = (t * AXIS)[: rot.stop - rot.start] if G is not SE2 else t
        assert np.allclose(G.log(G.exp(xi)), xi, atol=1e-12), t
        assert np.allclose(G.log(G.exp(xi[0])), xi[0], atol=1e-12), t  # unbatched
    n = np.linalg.norm(x[:, rot], axis=-1, keepdims=True)
    x[:, rot] *= np.where(n > 3.0, 3.0 / n, 1.0)
    assert np.allclose(G.log(G.exp(x)), x, atol=1e-11)
    g = G.exp(5.0 * rng.standard_normal((40, G.dim)))  # arbitrary elements: exp(log(g)) = g
    assert np.allclose(G.exp(G.log(g)), g, atol=1e-11)


def test_log_of_exact_half_turns_mixed_with_identity():
    """diag(1, -1, -1) has R - R^T = 0 exactly: no division by zero (RuntimeWarning is an error here)."""
    R = np.stack([np.diag([1.0, -1, -1]), np.eye(3), np.diag([-1.0, -1, 1]), SO3.exp([0, 0, 1e-9])])
    w = SO3.log(R.reshape(2, 2, 3, 3)).reshape(4, 3)
    assert np.allclose(np.abs(w), [[np.pi, 0, 0], [0, 0, 0], [0, 0, np.pi], [0, 0, 1e-9]], atol=1e-15)
    assert np.allclose(SO3.exp(w), R, atol=1e-15)
    g = np.eye(4)
    g[:3, :3], g[:3, 3] = R[0], [1.0, 2.0, 3.0]
    assert np.allclose(SE3.exp(SE3.log(g)), g, atol=1e-14)
    h = np.diag([-1.0, -1.0, 1.0])
    h[:2, 2] = [1.0, 2.0]
    assert np.allclose(SE2.exp(SE2.log(h)), h, atol=1e-14)


def test_so3_log_at_pi_returns_a_valid_logarithm():
    for axis in [AXIS, np.array([1.0, 0, 0]), np.array([0, 0, -1.0])]:
        R = SO3.exp(np.pi * axis)
        w = SO3.log(R)
        assert np.isclose(np.linalg.norm(w), np.pi)
        assert np.allclose(SO3.exp(w), R, atol=1e-14)


def test_so3_defect_measures_distance_from_the_group():
    R = SO3.exp(np.array([0.3, -0.2, 0.1]))
    assert SO3.defect(R) < 1e-15
    # (1+e) R: |R^T R - I| = (1+e)^2 - 1 ~ 2e, |det - 1| = (1+e)^3 - 1 ~ 3e; the defect is the max
    assert np.isclose(SO3.defect(R * (1 + 1e-6)), 3e-6, rtol=1e-3)


def _rk4_group(X, steps):
    g = np.eye(X.shape[-1])
    h = 1.0 / steps
    for _ in range(steps):
        k1 = g @ X
        k2 = (g + 0.5 * h * k1) @ X
        k3 = (g + 0.5 * h * k2) @ X
        k4 = (g + h * k3) @ X
        g = g + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return g


@pytest.mark.parametrize("G", [SO3, SE2, SE3], ids=["SO3", "SE2", "SE3"])
def test_constant_velocity_from_identity_reproduces_group_exp(G):
    x = np.random.default_rng(9).standard_normal(G.dim)
    g = _rk4_group(G.hat(x), 400)
    assert np.allclose(g, G.exp(x), atol=1e-9)


def test_so3_coefficient_functions_against_mpmath():
    """sin t/t, (1-cos t)/t^2, (t-sin t)/t^3 and (1-(t/2)cot(t/2))/t^2 to ~1e-15 relative at every t,
    including both sides of the Taylor switches (reference: mpmath at 40 digits)."""
    import mpmath

    from liegroups import so3_coefficients, so3_dexp_coefficient, so3_dexpinv_coefficient

    mpmath.mp.dps = 40
    ts = np.concatenate([np.logspace(-9, 0.6, 60), [1e-2 * (1 - 1e-12), 1e-2 * (1 + 1e-12), 1 - 1e-12,
                                                    1 + 1e-12, np.pi, 6.0]])
    a, b = so3_coefficients(ts**2)
    c, d = so3_dexp_coefficient(ts**2), so3_dexpinv_coefficient(ts**2)
    for k, t in enumerate(ts):
        T = mpmath.mpf(float(t))
        ref = [mpmath.sin(T) / T, (1 - mpmath.cos(T)) / T**2, (T - mpmath.sin(T)) / T**3,
               (1 - T / 2 * mpmath.cot(T / 2)) / T**2]
        for got, r in zip((a[k], b[k], c[k], d[k]), ref):
            assert abs(got - float(r)) <= 4e-15 * abs(float(r)), (t, got, float(r))


def test_bernoulli_coefficients_are_the_taylor_coefficients_of_z_over_expm1():
    """Reference: sympy's exact series of z/(e^z - 1) (dexpinv's psi)."""
    import sympy as sp

    from liegroups import bernoulli_coefficients

    z = sp.symbols("z")
    ser = sp.series(z / (sp.exp(z) - 1), z, 0, 12).removeO()
    exact = [float(ser.coeff(z, k)) for k in range(12)]
    assert np.allclose(bernoulli_coefficients(12), exact, rtol=1e-15, atol=0)


@pytest.mark.parametrize("kind", ["so3", "se2", "se3"])
def test_closed_forms_broadcast_like_the_general_path(kind):
    g, gen = named.get(kind), _general(kind)
    rng = np.random.default_rng(10)
    x1, m1 = rng.standard_normal((2, g.dim))
    xb, mb = rng.standard_normal((2, 4, 1, g.dim))
    for x, m in [(x1, mb), (xb, m1), (xb, rng.standard_normal((3, g.dim)))]:
        for f in ("coadjoint_exp", "dexp", "dexpinv"):
            a, b = getattr(g, f)(x, m), getattr(gen, f)(x, m)
            assert a.shape == b.shape == np.broadcast_shapes(x.shape, m.shape)
            assert np.allclose(a, b, atol=1e-12), f
