"""Invariant manifolds I w + lambda b = k gamma of the second-kind rigid body (slide "Инвариантные многообразия")."""

import numpy as np
import pytest
import sympy as sp

from liegroups import named
from servo import PoissonSphere, ServoError, ServoSecondKind, Vakonomic, euler_angle_divergence, reconstruct_motion

I = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 0.7]])
A = np.array([0.0, 0.0, 1.0])
B = np.array([0.0, 0.4, 1.0])
GAMMA0 = np.array([0.6, 0.0, 0.8])


def test_sphere_rhs_is_the_slide_formula():
    s = ServoSecondKind(named.so3(), I, a=A, b=B)
    k = 1.7
    ps = PoissonSphere(s, k)
    g = np.random.default_rng(0).standard_normal((5, 3))
    Ki = np.linalg.inv(I)
    # slide (2): gamma' + k [I^-1 (gamma - ((a, I^-1 gamma)/(a, I^-1 b)) b)] x gamma = 0
    coef = (g @ Ki @ A) / (A @ Ki @ B)
    v = (g - coef[:, None] * B) @ Ki.T
    assert np.allclose(ps.rhs(g), -k * np.cross(v, g), atol=1e-13)
    assert np.allclose(ps.multiplier(g), k * coef, atol=1e-13)


def test_manifold_is_invariant_in_the_full_phase_space():
    # full system (1) + reconstruction R' = R hat(w): gamma(t) = R(t)^T e3 must equal (I w + lambda b)/k,
    # and the reduced sphere system must reproduce it
    s = ServoSecondKind(named.so3(), I, a=A, b=B)
    k = 1.3
    ps = PoissonSphere(s, k)
    x0 = ps.state(GAMMA0)
    assert abs(s.constraint_residual(x0)) < 1e-15
    res = s.simulate(x0, 2.0, steps=400)
    R0 = np.array([[0.8, 0.0, -0.6], [0.0, 1.0, 0.0], [0.6, 0.0, 0.8]])   # in SO(3), third row gamma0
    assert np.allclose(R0.T @ [0, 0, 1], GAMMA0)
    g = reconstruct_motion(res, g0=R0, substeps=2)
    gamma_R = np.einsum("kji,j->ki", g.y, [0.0, 0.0, 1.0])
    assert np.max(np.abs(gamma_R - ps.gamma(res.y))) < 1e-8
    import scipy.integrate

    ref = scipy.integrate.solve_ivp(lambda t, y: ps.rhs(y), (0, 2.0), GAMMA0, method="DOP853", t_eval=res.t,
                                    rtol=1e-12, atol=1e-13)
    assert np.max(np.abs(ref.y.T - ps.gamma(res.y))) < 1e-8


def test_vakonomic_energy_on_the_sphere():
    v = Vakonomic(named.so3(), I, a=A)
    k = 1.3
    ps = PoissonSphere(v, k)
    g1, g2, g3 = sp.symbols("gamma1:4", real=True)
    H = ps.energy_expr((g1, g2, g3))
    assert sp.Poly(H, g1, g2, g3).is_homogeneous and sp.Poly(H, g1, g2, g3).total_degree() == 2
    gam = np.random.default_rng(1).standard_normal((4, 3))
    # H = (I w, w)/2 with w = k W gamma (definition of the energy)
    w = ps.velocity(gam)
    assert np.allclose(ps.energy(gam), 0.5 * np.einsum("ki,ij,kj->k", w, I, w), atol=1e-13)
    f = sp.lambdify([(g1, g2, g3)], H)
    assert np.allclose([f(x) for x in gam], ps.energy(gam), atol=1e-13)
    import scipy.integrate

    sol = scipy.integrate.solve_ivp(lambda t, y: ps.rhs(y), (0, 5.0), GAMMA0, method="DOP853",
                                    rtol=1e-12, atol=1e-13, dense_output=True)
    traj = sol.sol(np.linspace(0, 5, 50)).T
    assert np.ptp(ps.energy(traj)) < 1e-10
    # the slide prints (gamma, I^-1 gamma)^2 in place of (gamma, I^-1 gamma): that is not conserved
    Ki = np.linalg.inv(I)
    printed = (np.einsum("ki,ij,kj->k", traj, Ki, traj) ** 2 - (traj @ Ki @ A) ** 2 / (A @ Ki @ A))
    assert np.ptp(printed) > 1e-3
    with pytest.raises(ServoError, match="parallel"):
        PoissonSphere(ServoSecondKind(named.so3(), I, a=A, b=B), k).energy_expr()


def test_haar_measure_divergence_in_euler_angles():
    psi, theta, phi = sp.symbols("psi theta phi", real=True)
    gamma = sp.Matrix([sp.sin(theta) * sp.sin(phi), sp.sin(theta) * sp.cos(phi), sp.cos(theta)])
    # vakonomic (b = a): W symmetric, the divergence vanishes identically
    I11, I12, I13, I22, I23, I33 = sp.symbols("I11 I12 I13 I22 I23 I33", real=True)
    Isym = sp.Matrix([[I11, I12, I13], [I12, I22, I23], [I13, I23, I33]])
    K = Isym.inv()
    a = sp.Matrix([0, 0, 1])
    Wv = K - K * a * (K * a).T / (a.T * K * a)[0, 0]
    assert sp.simplify(euler_angle_divergence(Wv, k=sp.Symbol("k"))) == 0
    # numeric general b: derived value -k ((I^-1 b) x (I^-1 a), gamma)/(a, I^-1 b), not zero
    s = ServoSecondKind(named.so3(), I, a=A, b=B)
    div = euler_angle_divergence(sp.Matrix(s.W), k=2)
    Ki = np.linalg.inv(I)
    expected = -2 * sp.Matrix(np.cross(Ki @ B, Ki @ A)).dot(gamma) / float(A @ Ki @ B)
    f = sp.lambdify((theta, phi), div - expected)
    pts = np.random.default_rng(2).uniform(0.1, 3.0, (5, 2))
    assert max(abs(f(*p)) for p in pts) < 1e-12
    assert abs(sp.lambdify((theta, phi), div)(0.7, 0.3)) > 1e-3
