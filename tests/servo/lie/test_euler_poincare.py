"""Free Euler-Poincare systems: Euler's equations, the heavy top on se(3)*, integrals, input errors."""

import numpy as np
import pytest
import sympy as sp

from liegroups import named
from servo import EulerPoincare, InertiaError, ServoError
from servo.errors import SymbolicParameterError


def test_so3_is_eulers_equations_batched():
    # independent: Euler's equations m' = m x w with w = I^-1 m (textbook cross product)
    rng = np.random.default_rng(1)
    A = rng.standard_normal((3, 3))
    I = A @ A.T + 3 * np.eye(3)
    s = EulerPoincare(named.so3(), I)
    m = rng.standard_normal((4, 5, 3))
    w = np.linalg.solve(I, m[..., None])[..., 0]
    assert np.allclose(s.rhs(m), np.cross(m, w), atol=1e-13)
    assert np.allclose(s.velocity(m), w, atol=1e-13)


def test_free_rigid_body_matches_reference_values():
    # independent reference values (Jacobi elliptic solution): I = (2, 1, 2/3), m0 = (cos 1.1, 0, sin 1.1)
    s = EulerPoincare(named.so3(), [2.0, 1.0, 2.0 / 3.0])
    m0 = np.array([np.cos(1.1), 0.0, np.sin(1.1)])
    assert s.hamiltonian(m0) == pytest.approx(0.6471252793138366, rel=1e-14)
    res = s.simulate(m0, 1.0, steps=100)
    assert res.method == "rk853_projected"  # servo.lie.method_choice.METHOD_TABLE
    assert np.allclose(res.y[-1], [0.36911008, -0.37284632, 0.85131861], atol=2e-8)
    assert np.max(np.abs(res.invariants["energy"] - res.invariants["energy"][0])) < 1e-9


def test_symbolic_euler_equations_diagonal():
    # textbook: I1 w1' = (I2 - I3) w2 w3 and cyclic
    I1, I2, I3 = sp.symbols("I1 I2 I3", positive=True)
    eq = EulerPoincare(named.so3(), [I1, I2, I3]).equations()
    w1, w2, w3 = eq.omega
    t = eq.t
    expected = [I1 * w1.diff(t) - (I2 - I3) * w2 * w3, I2 * w2.diff(t) - (I3 - I1) * w3 * w1,
                I3 * w3.diff(t) - (I1 - I2) * w1 * w2]
    for e, x in zip(eq.exprs, expected):
        assert sp.expand(e - x) == 0
    assert "\\dot{\\omega}_{1}" in eq.latex()


def _heavy_top(J=(1.0, 2.0, 3.5), mg=2.0, chi=(0.1, -0.2, 0.7)):
    Kinv = np.zeros((6, 6))
    Kinv[:3, :3] = np.diag(1.0 / np.asarray(J))
    c = np.concatenate([np.zeros(3), mg * np.asarray(chi)])
    return EulerPoincare(named.se3(), inverse_inertia=Kinv, linear_term=c), np.asarray(J), mg, np.asarray(chi)


def test_heavy_top_on_se3_is_euler_poisson():
    # independent: M' = M x Omega + m g Gamma x chi, Gamma' = Gamma x Omega, Omega = J^-1 M
    s, J, mg, chi = _heavy_top()
    rng = np.random.default_rng(2)
    y = rng.standard_normal((7, 6))
    M, G = y[:, :3], y[:, 3:]
    Om = M / J
    expected = np.concatenate([np.cross(M, Om) + mg * np.cross(G, chi), np.cross(G, Om)], axis=-1)
    assert np.allclose(s.rhs(y), expected, atol=1e-13)
    H = 0.5 * np.sum(M * Om, axis=-1) + mg * G @ chi
    assert np.allclose(s.hamiltonian(y), H, atol=1e-13)


def test_heavy_top_keeps_energy_and_casimirs():
    s, *_ = _heavy_top()
    y0 = np.array([0.3, -0.5, 1.0, 0.0, np.sin(0.4), np.cos(0.4)])
    res = s.simulate(y0, 2.0, steps=400)
    names = {f.name: f for f in s.first_integrals()}
    assert set(names) == {"energy", "casimir:m1*m4 + m2*m5 + m3*m6", "casimir:m4**2 + m5**2 + m6**2"}
    G = res.y[:, 3:]
    assert np.max(np.abs(np.sum(G * G, -1) - 1.0)) < 1e-13          # |Gamma| = 1 to round-off (Lie-Poisson)
    assert np.max(np.abs(names["energy"](res.y) - names["energy"](y0))) < 1e-7
    with pytest.raises(ServoError, match="linear term"):
        s.reduced()
    with pytest.raises(ServoError, match="inverse_inertia"):
        s.state_from(w=np.ones(6))


def test_reduced_free_system_is_the_same_field():
    s = EulerPoincare(named.se2(), [1.0, 2.0, 0.5])
    red = s.reduced()
    m = np.random.default_rng(3).standard_normal((6, 3))
    assert red.p == 3
    assert np.allclose(red.system.v(m), s.rhs(m), atol=1e-13)


@pytest.mark.parametrize("inertia, match", [
    ([[1.0, 0.2, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], r"symmetric: \|I\[0,1\] - I\[1,0\]\| = 2\.000e-01"),
    ([[1.0, 0.0, 0.0], [0.0, -2.0, 0.0], [0.0, 0.0, 1.0]], r"positive definite: its smallest eigenvalue is -2"),
    (np.eye(2), r"shape \(3, 3\)"),
    ([1.0, np.nan, 1.0], r"finite"),
])
def test_bad_inertia_is_named(inertia, match):
    with pytest.raises(InertiaError, match=match):
        EulerPoincare(named.so3(), inertia)


def test_argument_errors():
    g = named.so3()
    with pytest.raises(ServoError, match="exactly one"):
        EulerPoincare(g)
    with pytest.raises(ServoError, match="exactly one"):
        EulerPoincare(g, np.eye(3), inverse_inertia=np.eye(3))
    with pytest.raises(InertiaError, match="semidefinite"):
        EulerPoincare(g, inverse_inertia=np.diag([1.0, -1.0, 1.0]))
    s = EulerPoincare(g, np.eye(3))
    with pytest.raises(ServoError, match="last axis of length 3"):
        s.rhs(np.ones(4))
    sym = EulerPoincare(g, sp.symbols("A B C", positive=True))
    with pytest.raises(SymbolicParameterError, match="A, B, C"):
        sym.simulate(np.ones(3), 1.0)
    num = sym.subs({sp.Symbol("A", positive=True): 2, sp.Symbol("B", positive=True): 1,
                    sp.Symbol("C", positive=True): 0.5})
    assert np.allclose(num.velocity(np.ones(3)), [0.5, 1.0, 2.0])
