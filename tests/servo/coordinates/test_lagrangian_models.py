"""Lagrangian systems with two-sided constraints: nonholonomic (Cetaev), vakonomic, servo 1st/2nd kind.

Expected values come from exact solutions in Kozlov's lectures on servo-constraints, from hand derivations
written out below, and from Talamucci's Example 2 (Talamucci 2025) with Euler's theorem.
"""

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp
from sympy.physics.mechanics import dynamicsymbols

from servo import (InitialConstraintError, LagrangianError, LagrangianSystem, RealizabilityError,
                   SymbolicParameterError)

x, y, phi = dynamicsymbols("x y phi")
t = dynamicsymbols._t
T_SKATE = (x.diff() ** 2 + y.diff() ** 2 + phi.diff() ** 2) / 2
PHI_SKATE = x.diff() * sp.sin(phi) - y.diff() * sp.cos(phi)


@pytest.fixture(scope="module")
def skate():
    return LagrangianSystem(T_SKATE, -x, [x, y, phi])


def test_free_equations_match_hand_derivation():
    # pendulum with a moving support: L = (x'^2 + th'^2)/2 + x' th' cos th + cos th (hand-derived)
    xx, th = dynamicsymbols("xx th")
    L = LagrangianSystem((xx.diff() ** 2 + th.diff() ** 2) / 2 + xx.diff() * th.diff() * sp.cos(th), -sp.cos(th),
                         [xx, th])
    eqs = L.equations()
    expect0 = xx.diff(t, 2) + th.diff(t, 2) * sp.cos(th) - th.diff() ** 2 * sp.sin(th)
    expect1 = th.diff(t, 2) + xx.diff(t, 2) * sp.cos(th) + sp.sin(th)
    assert sp.simplify(eqs[0].lhs - eqs[0].rhs - expect0) == 0
    assert sp.simplify(eqs[1].lhs - eqs[1].rhs - expect1) == 0
    # numeric free acceleration solves the same linear system
    q, qd = np.array([0.2, 0.7]), np.array([-0.3, 1.1])
    a = L.free_acceleration(0.0, q, qd)
    Amat = np.array([[1, np.cos(q[1])], [np.cos(q[1]), 1]])
    rhs = np.array([qd[1] ** 2 * np.sin(q[1]), -np.sin(q[1])])
    np.testing.assert_allclose(a, np.linalg.solve(Amat, rhs), atol=1e-13)
    # batched over leading axes
    qb, qdb = np.tile(q, (4, 3, 1)), np.tile(qd, (4, 3, 1))
    assert L.free_acceleration(0.0, qb, qdb).shape == (4, 3, 2)
    np.testing.assert_allclose(L.free_acceleration(0.0, qb, qdb)[2, 1], a, atol=1e-14)


def test_skate_on_inclined_plane_exact_solution(skate):
    """Kozlov's slides: x = sin^2(wt)/(2w^2), y = (wt - sin(2wt)/2)/(2w^2), phi = wt, to 1e-9."""
    c = skate.constrain(PHI_SKATE, model="nonholonomic")
    w = 1.3
    res = c.simulate([0, 0, 0], [0, 0, w], 6.0, steps=60)
    tt = res.t
    exact = np.stack([np.sin(w * tt) ** 2 / (2 * w ** 2), (w * tt - np.sin(2 * w * tt) / 2) / (2 * w ** 2), w * tt], -1)
    assert np.abs(res.q - exact).max() < 1e-9
    # multiplier from [L] = lambda dphi/dq' on the exact solution: lambda = -y''/cos phi = -2 sin(wt)
    np.testing.assert_allclose(res.lam[:, 0], -2 * np.sin(w * tt), atol=1e-8)


def test_skate_symbolic_pieces(skate):
    c = skate.constrain(PHI_SKATE)
    eqs = c.equations()
    lam = c.lam[0]
    assert sp.simplify(eqs[0].lhs - eqs[0].rhs - (x.diff(t, 2) - 1 - lam * sp.sin(phi))) == 0
    assert sp.simplify(eqs[1].lhs - eqs[1].rhs - (y.diff(t, 2) + lam * sp.cos(phi))) == 0
    assert c.realizability() == 1  # (A^-1 a, a) = sin^2 + cos^2
    assert c.homogeneity_degree() == 1 and c.is_homogeneous()
    assert sp.latex(eqs[0])  # printable


def test_vakonomic_skate_equations_and_solution(skate):
    """Slides: phi'' = t^2 sin phi cos phi, x' = t cos^2 phi, y' = t sin phi cos phi (lambda = -t sin phi)."""
    v = skate.constrain(PHI_SKATE, model="vakonomic")
    eqs = v.equations()
    lam = v.lam[0]
    sol = {lam: -t * sp.sin(phi)}
    xd, yd = t * sp.cos(phi) ** 2, t * sp.sin(phi) * sp.cos(phi)
    acc = {phi.diff(t, 2): t ** 2 * sp.sin(phi) * sp.cos(phi)}
    for e in eqs:
        r = (e.lhs - e.rhs).subs(sol).doit()
        r = r.subs({x.diff(t, 2): sp.diff(xd, t), y.diff(t, 2): sp.diff(yd, t)}).subs(acc)
        r = r.subs({x.diff(t): xd, y.diff(t): yd}).subs(acc)
        assert sp.simplify(r) == 0, e
    w = 0.8
    res = v.simulate([0, 0, 0], [0, 0, w], 2.0, steps=40, lam0=[0.0])

    def ref(tt, s):  # the slides' reduced equations, integrated independently
        return [tt * np.cos(s[2]) ** 2, tt * np.sin(s[2]) * np.cos(s[2]), s[3], tt ** 2 * np.sin(s[2]) * np.cos(s[2])]

    r = solve_ivp(ref, (0, 2.0), [0, 0, 0, w], t_eval=res.t, rtol=1e-12, atol=1e-12, method="DOP853")
    assert np.abs(res.q - r.y[:3].T).max() < 1e-9
    np.testing.assert_allclose(res.lam[:, 0], -res.t * np.sin(res.q[:, 2]), atol=1e-9)


def test_servo_models_reduce_to_nonholonomic_and_vakonomic(skate):
    a = [sp.sin(phi), -sp.cos(phi), 0]
    nh = skate.constrain(PHI_SKATE).simulate([0, 0, 0.3], [0, 0, 1.1], 2.0, steps=20)
    s1 = skate.constrain(PHI_SKATE, model="servo1", control=a).simulate([0, 0, 0.3], [0, 0, 1.1], 2.0, steps=20)
    assert np.abs(nh.q - s1.q).max() < 1e-10
    vk = skate.constrain(PHI_SKATE, model="vakonomic").simulate([0, 0, 0.3], [0, 0, 1.1], 2.0, steps=20, lam0=[0.4])
    s2 = skate.constrain(PHI_SKATE, model="servo2", control=PHI_SKATE).simulate([0, 0, 0.3], [0, 0, 1.1], 2.0,
                                                                                 steps=20, lam0=[-0.4])
    assert np.abs(vk.q - s2.q).max() < 1e-10
    np.testing.assert_allclose(vk.lam, -s2.lam, atol=1e-10)
    assert np.abs(vk.q - nh.q).max() > 1e-2  # the models really differ


def test_servo1_realizability_and_constraint_kept(skate):
    # control torque mixed with a push along the blade: M = (cos phi, sin phi, 1)
    M = [sp.cos(phi), sp.sin(phi), 1]
    c = skate.constrain(PHI_SKATE, model="servo1", control=M)
    assert sp.simplify(c.realizability()) == 0  # (A^-1 M, a) = sin cos - cos sin = 0: not realizable
    with pytest.raises(RealizabilityError, match="realizability"):
        c.simulate([0, 0, 0], [0, 0, 1], 1.0)
    M2 = [sp.cos(phi) + sp.sin(phi), sp.sin(phi) - sp.cos(phi), 1]
    c2 = skate.constrain(PHI_SKATE, model="servo1", control=M2)
    assert sp.simplify(c2.realizability() - 1) == 0
    res = c2.simulate([0, 0, 0], [0.5, 0, 1], 3.0, steps=30)
    q, qd = res.q, res.qd
    assert np.abs(qd[:, 0] * np.sin(q[:, 2]) - qd[:, 1] * np.cos(q[:, 2])).max() < 1e-9
    # phi'' = lambda (the only force on phi): check from finite differences of phi'
    assert np.abs(np.gradient(qd[:, 2], res.t)[5:-5] - res.lam[5:-5, 0]).max() < 5e-3


P = dynamicsymbols("q1:7")
P1, P2 = sp.Matrix(P[:3]), sp.Matrix(P[3:])
V1, V2 = P1.diff(t), P2.diff(t)
B = (P1 + P2) / 2
D = P1 - P2
TALAMUCCI = {  # Example 2 of Talamucci 2025 and the degrees of homogeneity in q'
    "parallel": (list(V1.cross(V2)), 2),
    "perpendicular": ([V1.dot(V2)], 2),
    "equal speeds": ([sp.sqrt(V1.dot(V1)) - sp.sqrt(V2.dot(V2))], 1),
    "midpoint parallel": (list(B.diff(t).cross(D))[:2], 1),
    "midpoint perpendicular": ([B.diff(t).dot(D)], 1),
    "both perpendicular": ([V1.dot(D), V2.dot(D)], 1),
}


@pytest.fixture(scope="module")
def two_points():
    T = (V1.dot(V1) + V2.dot(V2)) / 2
    return LagrangianSystem(T, D.dot(D) / 2 + P[2] + 2 * P[5], list(P))


@pytest.mark.parametrize("name", sorted(TALAMUCCI))
def test_talamucci_example2_homogeneous(two_points, name):
    phis, degree = TALAMUCCI[name]
    c = two_points.constrain(phis)
    degs = c.homogeneity_degree()
    assert (degs if isinstance(degs, list) else [degs]) == [degree] * len(phis)
    assert c.is_homogeneous()


@pytest.mark.parametrize("name,qd0", [
    ("parallel", [1, 0.5, 0, 2, 1, 0]),
    ("perpendicular", [1, 0, 0, 0, 1, 0.5]),
    ("equal speeds", [1, 0, 0, 0, 0.6, 0.8]),
])
def test_homogeneous_constraints_conserve_energy(two_points, name, qd0):
    """The Cetaev reaction lambda dphi/dq' does no work when phi is homogeneous: E = T + V is constant."""
    c = two_points.constrain(TALAMUCCI[name][0])
    q0 = [0, 0, 0, 1, 0.3, -0.2]
    res = c.simulate(q0, qd0, 2.0, steps=20)
    E = two_points.energy(res.t, res.q, res.qd)
    assert np.abs(E - E[0]).max() < 1e-8 * (1 + abs(E[0]))
    assert np.abs(res.lam).max() > 0.1  # the constraint really acts
    for p in TALAMUCCI[name][0]:  # and is kept
        vals = [float(two_points.plain(p).subs(dict(zip(two_points.qs + two_points.us, list(a) + list(b)))))
                for a, b in zip(res.q[::5], res.qd[::5])]
        assert np.abs(vals).max() < 1e-9


def test_nonhomogeneous_constraint_changes_energy():
    """phi = x'^2 + y'^2 - 1 (prescribed speed) is not homogeneous; under gravity E = T + V is not kept."""
    px, py = dynamicsymbols("px py")
    L = LagrangianSystem((px.diff() ** 2 + py.diff() ** 2) / 2, py, [px, py])
    c = L.constrain(px.diff() ** 2 + py.diff() ** 2 - 1)
    assert c.homogeneity_degree() is None and not c.is_homogeneous()
    res = c.simulate([0, 0], [1, 0], 1.0, steps=10)
    E = L.energy(res.t, res.q, res.qd)
    # speed stays 1, so T = 1/2 and E - E0 = y(t) - y(0) which falls under gravity
    np.testing.assert_allclose(res.qd[:, 0] ** 2 + res.qd[:, 1] ** 2, 1, atol=1e-9)
    np.testing.assert_allclose(E - E[0], res.q[:, 1], atol=1e-9)
    assert E[-1] - E[0] < -0.1


def test_error_paths(skate):
    with pytest.raises(LagrangianError, match="dynamicsymbol"):
        LagrangianSystem(sp.Symbol("a") ** 2, 0, [sp.Symbol("a")])
    with pytest.raises(SymbolicParameterError, match=r"simulate needs numeric parameters .* symbols m; use \.subs"):
        LagrangianSystem(sp.Symbol("m") * x.diff() ** 2 / 2, 0, [x]).simulate([0], [1], 1.0)
    with pytest.raises(LagrangianError, match="singular"):
        LagrangianSystem(x.diff() ** 2 / 2, 0, [x, y])
    with pytest.raises(LagrangianError, match="does not depend on the velocities"):
        skate.constrain(x - y)
    with pytest.raises(LagrangianError, match="unknown model"):
        skate.constrain(PHI_SKATE, model="holonomic")
    with pytest.raises(LagrangianError, match="one_sided"):
        skate.constrain(PHI_SKATE >= 0)
    with pytest.raises(LagrangianError, match="needs control"):
        skate.constrain(PHI_SKATE, model="servo1")
    c = skate.constrain(PHI_SKATE)
    with pytest.raises(InitialConstraintError, match=r"phi_0 = 1\.000e\+00"):
        c.simulate([0, 0, np.pi / 2], [1, 0, 0], 1.0)
    with pytest.raises(LagrangianError, match="shape"):
        c.simulate([0, 0], [0, 0], 1.0)


def test_batched_accelerations_match_hand_formula(skate):
    """Skate with L = T + x: q'' = (1, 0, 0) + lambda (sin phi, -cos phi, 0) and differentiating the constraint
    lambda = -sin phi - phi' (x' cos phi + y' sin phi) (hand derivation), on a (4, 5) batch of states."""
    rng = np.random.default_rng(1)
    q, qd = rng.normal(size=(4, 5, 3)), rng.normal(size=(4, 5, 3))
    acc, lam = skate.constrain(PHI_SKATE).acceleration(0.0, q, qd)
    ph, xd, yd, pd = q[..., 2], qd[..., 0], qd[..., 1], qd[..., 2]
    lam_ref = -np.sin(ph) - pd * (xd * np.cos(ph) + yd * np.sin(ph))
    np.testing.assert_allclose(lam[..., 0], lam_ref, atol=1e-12)
    np.testing.assert_allclose(acc, np.stack([1 + lam_ref * np.sin(ph), -lam_ref * np.cos(ph), 0 * ph], -1),
                               atol=1e-12)
    os_acc, os_lam = skate.constrain(PHI_SKATE >= 0, model="one_sided").acceleration(0.0, q, qd, [0])
    np.testing.assert_allclose(os_acc, acc, atol=1e-12)
    free_acc, zero = skate.constrain(PHI_SKATE >= 0, model="one_sided").acceleration(0.0, q, qd, [])
    np.testing.assert_allclose(free_acc, np.broadcast_to([1.0, 0, 0], q.shape), atol=1e-14)


def test_one_result_type_through_integrators(skate):
    """Every simulate returns the IntegrationResult of integrators.integrate (method names canonical, bare scipy
    names as aliases, fixed-step methods too) with the outputs q, qd, lambda; the exact skate solution
    (Kozlov's lectures) checks each method."""
    from integrators import IntegrationResult

    c = skate.constrain(PHI_SKATE)
    w = 1.3
    exact = lambda tt: np.stack([np.sin(w * tt) ** 2 / (2 * w ** 2), (w * tt - np.sin(2 * w * tt) / 2) / (2 * w ** 2),
                                 w * tt], -1)
    for method, tol, steps in (("scipy:DOP853", 1e-9, 20), ("DOP853", 1e-9, 20), ("Radau", 1e-6, 20),
                               ("rk4", 1e-7, 150)):
        rtol = 1e-9 if method == "Radau" else 1e-11
        res = c.simulate([0, 0, 0], [0, 0, w], 2.0, steps=steps, method=method, rtol=rtol, atol=1e-12)
        assert isinstance(res, IntegrationResult) and res.system is c
        assert res.method == {"DOP853": "scipy:DOP853", "Radau": "scipy:Radau"}.get(method, method)
        assert np.abs(res.q - exact(res.t)).max() < tol, method
        np.testing.assert_array_equal(res["lambda"], res.lam)
        np.testing.assert_array_equal(res.y[:, :3], res.q)
    assert res.labels == ("x", "y", "phi", "x'", "y'", "phi'")
    free = skate.simulate([0, 0, 0], [0, 0, 1.0], 1.0, steps=10)
    assert isinstance(free, IntegrationResult) and free.lam.shape == (11, 0)
    np.testing.assert_allclose(free.q[:, 0], free.t ** 2 / 2, atol=1e-12)      # x'' = 1 (V = -x)


def test_scalar_control_names_the_shape(skate):
    with pytest.raises(LagrangianError, match=r"servo1 control M must be 1 covector\(s\) of n = 3 entries"):
        skate.constrain(PHI_SKATE, model="servo1", control=sp.sin(phi))
    with pytest.raises(LagrangianError, match=r"2 given for k = 1 \(expected shape \(1, 3\)\)"):
        skate.constrain(PHI_SKATE, model="servo1", control=[[1, 0, 0], [0, 1, 0]])
