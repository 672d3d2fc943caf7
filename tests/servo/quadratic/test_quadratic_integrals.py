"""First integrals, time change to a linear system, and phase portraits of quadratic systems."""
import matplotlib
import numpy as np
import pytest
import sympy as sp

from servo import QuadraticSystem
from servo.quadratic.integrals import NotLinearizableError, min_speed_on_sphere

matplotlib.use("Agg")


def euler_top(I):
    K = np.diag(1 / np.asarray(I, float))
    eps = np.zeros((3, 3, 3))
    for i, j, k in [(0, 1, 2), (1, 2, 0), (2, 0, 1)]:
        eps[i, j, k], eps[i, k, j] = 1, -1
    return QuadraticSystem(np.einsum("ijk,kl->ijl", eps, K))


def in_span(S, basis):
    B = np.array([b.ravel() for b in basis]).T
    coef = np.linalg.lstsq(B, S.ravel(), rcond=None)[0]
    return np.linalg.norm(B @ coef - S.ravel()) < 1e-10 * np.linalg.norm(S)


def test_euler_top_quadratic_integrals_are_casimir_and_energy():
    I = (1.0, 2.0, 3.5)
    q = euler_top(I)
    basis = q.quadratic_first_integrals()
    assert len(basis) == 2                                       # |m|^2 and m.I^-1 m, nothing else
    assert in_span(np.eye(3), basis) and in_span(np.diag(1 / np.array(I)), basis)
    assert q.linear_first_integrals().shape == (0, 3)


def test_integrals_are_conserved_symbolically():
    rng = np.random.default_rng(3)
    l, A = rng.normal(size=3), rng.normal(size=(3, 3))
    A = A - A.T                                                   # x^T x conserved by v = l(x) A x
    q = QuadraticSystem(np.einsum("j,ik->ijk", l, A))
    xs = sp.symbols("x1:4")
    v = q.to_sympy(xs)
    for S in q.quadratic_first_integrals():
        H = sum(S[i, j] * xs[i] * xs[j] for i in range(3) for j in range(3))
        dH = sp.expand(sum(sp.diff(H, xs[i]) * v[i] for i in range(3)))
        assert all(abs(c) < 1e-12 for c in sp.Poly(dH, *xs).coeffs()) if dH != 0 else True
    assert in_span(np.eye(3), q.quadratic_first_integrals())


def test_random_system_has_no_integrals():
    q = QuadraticSystem(np.random.default_rng(0).normal(size=(3, 3, 3)))
    assert q.quadratic_first_integrals() == [] and q.linear_first_integrals().shape == (0, 3)


def test_linear_integral_of_triangular_system():
    # v = (x y, -x y, y^2 - x^2) ... x + y is conserved
    x, y, z = sp.symbols("x y z")
    q = QuadraticSystem.from_sympy([x * y, -x * y, y**2 - x**2], [x, y, z])
    lin = q.linear_first_integrals()
    assert lin.shape == (1, 3) and abs(abs(lin[0] @ np.array([1, 1, 0]) / np.sqrt(2)) - 1) < 1e-12


def test_time_change_p3_with_given_and_found_hyperplane():
    rng = np.random.default_rng(5)
    l, A = rng.normal(size=3), rng.normal(size=(3, 3))
    q = QuadraticSystem(np.einsum("j,ik->ijk", l, A))
    l2, A2 = q.time_change_to_linear()
    s = np.sign(l2 @ l) * np.linalg.norm(l)
    assert np.allclose(l2, l / s) and np.allclose(A2, A * s)
    l3, A3 = q.time_change_to_linear(l=l)
    assert np.allclose(np.einsum("j,ik->ijk", l3, A3) + np.einsum("j,ik->ijk", l3, A3).transpose(0, 2, 1),
                       2 * q.Q)


def test_time_change_error_names_the_residual():
    q = QuadraticSystem(np.random.default_rng(1).normal(size=(3, 3, 3)))
    with pytest.raises(NotLinearizableError, match=r"residual \|Q - Sym\(l A\)\|/\|Q\| = "):
        q.time_change_to_linear()
    x, y = sp.symbols("x y")
    with pytest.raises(ValueError, match="0 candidate"):
        QuadraticSystem.from_sympy([x**2 - y**2, 2 * x * y], [x, y]).time_change_to_linear()


def test_min_speed_finds_planted_equilibrium():
    rng = np.random.default_rng(2)
    xi = rng.normal(size=4)
    xi /= np.linalg.norm(xi)
    Q = rng.normal(size=(4, 4, 4))
    Q = 0.5 * (Q + Q.transpose(0, 2, 1))
    Q -= np.einsum("ijk,j,k->i", Q, xi, xi)[:, None, None] * np.outer(xi, xi)[None]   # v(xi) = 0
    q = QuadraticSystem(Q)
    m, where = min_speed_on_sphere(q)
    assert m < 1e-12 and np.linalg.norm(q.v(where)) < 1e-12
    assert any(L.is_equilibrium_line and abs(abs(L.direction @ xi) - 1) < 1e-8 for L in q.invariant_lines().real)


def test_phase_portraits_draw_every_real_line():
    import matplotlib.pyplot as plt
    x, y = sp.symbols("x y")
    q = QuadraticSystem.from_sympy([x * y, -x * y + y**2], [x, y])
    fig, ax = plt.subplots()
    q.phase_portrait(ax=ax, density=0.4)
    assert len(ax.get_lines()) == len(q.invariant_lines().real) == 2
    ax3 = euler_top((1.0, 2.0, 3.0)).phase_portrait(density=0.4)
    assert len(ax3.get_lines()) == 2 * len(euler_top((1.0, 2.0, 3.0)).invariant_lines().real)
    plt.close("all")
    with pytest.raises(ValueError, match="p = 2 or p = 3"):
        QuadraticSystem(np.zeros((4, 4, 4))).phase_portrait()
