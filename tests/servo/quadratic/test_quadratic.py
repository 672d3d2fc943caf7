"""QuadraticSystem basics: v, jacobian, symmetrization, from_sympy, error paths."""
import numpy as np
import pytest
import sympy as sp

from servo import QuadraticSystem
from servo import QuadraticSystemError


def test_v_matches_hand_written_field_and_batches():
    u, w = sp.symbols("u w")
    q = QuadraticSystem.from_sympy([2 * u * w, 3 * u * w + w**2 - u**2], [u, w])
    x = np.random.default_rng(0).normal(size=(4, 5, 2))
    U, W = x[..., 0], x[..., 1]
    expected = np.stack([2 * U * W, 3 * U * W + W**2 - U**2], axis=-1)
    assert np.allclose(q.v(x), expected, atol=1e-14)


def test_symmetrization_keeps_v_and_jacobian_matches_finite_differences():
    rng = np.random.default_rng(1)
    Q = rng.normal(size=(3, 3, 3))          # not symmetric in (j, k)
    q = QuadraticSystem(Q)
    assert np.allclose(q.Q, q.Q.transpose(0, 2, 1))
    x = rng.normal(size=(7, 3))
    assert np.allclose(q.v(x), np.einsum("ijk,nj,nk->ni", Q, x, x))
    h = 1e-6
    J = q.jacobian(x)
    for j in range(3):
        e = np.zeros(3); e[j] = h
        fd = (q.v(x + e) - q.v(x - e)) / (2 * h)
        assert np.allclose(J[..., :, j], fd, atol=1e-8)


def test_sympy_roundtrip():
    rng = np.random.default_rng(2)
    q = QuadraticSystem(rng.integers(-3, 4, size=(3, 3, 3)))
    q2 = QuadraticSystem.from_sympy(q.to_sympy(), sp.symbols(q.variables))
    assert np.allclose(q.Q, q2.Q)


@pytest.mark.parametrize("Q, msg", [
    (np.zeros((2, 2)), "shape"),
    (np.zeros((2, 3, 3)), "shape"),
    (np.full((2, 2, 2), np.nan), "non-finite entry at index"),
])
def test_bad_tensor_raises(Q, msg):
    with pytest.raises(QuadraticSystemError, match=msg):
        QuadraticSystem(Q)


def test_from_sympy_rejects_non_quadratic_and_symbolic_coefficients():
    u, w, a = sp.symbols("u w a")
    with pytest.raises(ValueError, match="component 1 .*degree 3"):
        QuadraticSystem.from_sympy([u * w, w**3], [u, w])
    with pytest.raises(ValueError, match="degree 1"):
        QuadraticSystem.from_sympy([u * w + u, w**2], [u, w])
    with pytest.raises(ValueError, match="free symbols"):
        QuadraticSystem.from_sympy([a * u * w, w**2], [u, w])


def test_bad_state_shape_raises():
    q = QuadraticSystem(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match=r"shape \(\.\.\., 2\)"):
        q.v(np.zeros(3))


def test_simulate_goes_through_the_integrators_and_follows_an_invariant_line():
    """On an invariant line x = s xi with v(xi) = c xi the flow is s' = c s^2, s(t) = s0 / (1 - c s0 t)."""
    Q = np.zeros((2, 2, 2))
    Q[0, 0, 0], Q[0, 0, 1], Q[0, 1, 0], Q[1, 1, 1] = 1.0, 0.5, 0.5, 2.0   # v = (x1^2 + x1 x2, 2 x2^2)
    q = QuadraticSystem(Q)
    xi = np.array([1.0, 0.0])            # v(xi) = (1, 0) = 1 * xi
    res = q.simulate(0.3 * xi, 2.0, steps=20, rtol=1e-12, atol=1e-14)
    s = 0.3 / (1.0 - 0.3 * res.t)
    assert res.status == 0 and res.method == "scipy:DOP853"
    assert np.max(np.abs(res.y - s[:, None] * xi)) < 1e-10
    rk = q.simulate(0.3 * xi, 2.0, steps=2000, method="rk4")
    assert np.max(np.abs(rk.y[-1] - s[-1] * xi)) < 1e-9
