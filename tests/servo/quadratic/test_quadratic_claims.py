"""The six claims of the slide "Общие свойства приведенных систем" on constructed examples, random
systems (hypothesis), the servo-sleigh and the reduced rigid body with servo-constraints."""
import numpy as np
import pytest
import sympy as sp
from hypothesis import assume, given, settings, strategies as st
from scipy.integrate import solve_ivp

from servo import QuadraticSystem
from servo.quadratic.claims import (check_all_claims, claim1_time_reversal, claim2_escaping_line,
                                    claim3_nonholonomic, claim4_parity, claim5_time_change,
                                    claim6_integral_gives_equilibria, has_real_equilibrium)

x, y = sp.symbols("x y")
J2 = np.array([[0.0, -1.0], [1.0, 0.0]])


def sleigh(alpha, beta):
    """Servo-sleigh u' = alpha u w, w' = beta u w (slide "Сервосани Чаплыгина"), built by hand."""
    Q = np.zeros((2, 2, 2))
    Q[0, 0, 1] = Q[0, 1, 0] = alpha / 2
    Q[1, 0, 1] = Q[1, 1, 0] = beta / 2
    return QuadraticSystem(Q, variables=["u", "w"])


def euler_top(I):
    """m' = m x I^-1 m: integrals |m|^2 and m.I^-1 m (both definite), principal axes are equilibria."""
    K = np.diag(1 / np.asarray(I, float))
    eps = np.zeros((3, 3, 3))
    for i, j, k in [(0, 1, 2), (1, 2, 0), (2, 0, 1)]:
        eps[i, j, k], eps[i, k, j] = 1, -1
    return QuadraticSystem(np.einsum("ijk,kl->ijl", eps, K))


small_Q = st.integers(0, 10_000).map(lambda s: np.random.default_rng(s))


# ---------------------------------------------------------------- claim 1
@settings(max_examples=8)
@given(small_Q, st.integers(2, 3))
def test_claim1_time_reversal_random(rng, p):
    q = QuadraticSystem(rng.normal(size=(p, p, p)))
    c = claim1_time_reversal(q, rng.normal(size=p) * 0.2, t_end=0.3)
    assert c.hypothesis and c.conclusion, c.details


# ---------------------------------------------------------------- claims 2 and 4
def test_claims_2_4_on_complex_squaring():
    # v = (x^2 - y^2, 2xy) is z -> z^2: |v| = |x|^2 != 0; exactly one real line (1, 0) with c = 1
    q = QuadraticSystem.from_sympy([x**2 - y**2, 2 * x * y], [x, y])
    c2, c4 = claim2_escaping_line(q), claim4_parity(q)
    assert c2.hypothesis and c2.conclusion and c4.hypothesis and c4.conclusion
    assert c4.details["real_count"] == 1


def test_claim2_hypothesis_detects_equilibria():
    # x' = xy, y' = -xy has the equilibrium axes: the hypothesis must be reported false
    q = QuadraticSystem.from_sympy([x * y, -x * y], [x, y])
    assert has_real_equilibrium(q)[0]
    assert not claim2_escaping_line(q).hypothesis and not claim4_parity(q).hypothesis


@settings(max_examples=10)
@given(small_Q, st.integers(2, 4))
def test_claims_2_4_random(rng, p):
    q = QuadraticSystem(rng.normal(size=(p, p, p)))
    lines = q.invariant_lines()
    c2, c4 = claim2_escaping_line(q, lines), claim4_parity(q, lines)
    assert c2.holds and c4.holds, (c2.details, c4.details)
    # homotopy and the sphere minimisation agree on the existence of real equilibria
    assert has_real_equilibrium(q)[0] == any(L.is_equilibrium_line for L in lines.real)


# ---------------------------------------------------------------- claim 3
@pytest.mark.parametrize("I", [(1.0, 2.0, 3.0), (2.0, 1.5, 0.7)])
def test_claim3_on_euler_top(I):
    q = euler_top(I)
    c = claim3_nonholonomic(q)
    assert c.hypothesis and c.conclusion and c.details["homotopy_equilibrium_line"]
    assert c.details["growth"] <= c.details["lyapunov_bound"] * (1 + 1e-8)


def test_claim3_hypothesis_false_without_definite_integral():
    q = QuadraticSystem.from_sympy([x**2 - y**2, 2 * x * y], [x, y])
    assert not claim3_nonholonomic(q).hypothesis


def test_claim3_rejects_a_wrong_energy():
    with pytest.raises(ValueError, match="not a first integral"):
        claim3_nonholonomic(euler_top((1, 2, 3)), energy=np.diag([1.0, 2.0, 5.0]))


# ---------------------------------------------------------------- claim 5
@settings(max_examples=10)
@given(small_Q)
def test_claim5_random_line_of_equilibria(rng):
    l, A = rng.normal(size=2), rng.normal(size=(2, 2))
    q = QuadraticSystem(np.einsum("j,ik->ijk", l, A))      # v = l(x) A x
    c = claim5_time_change(q, rng.normal(size=2) * 0.3, t_end=0.5)
    assert c.hypothesis and c.conclusion, c.details
    ln = l / np.linalg.norm(l)
    assert abs(abs(c.details["l"] @ ln) - 1) < 1e-8


def test_claim5_hypothesis_false_without_equilibria():
    q = QuadraticSystem.from_sympy([x**2 - y**2, 2 * x * y], [x, y])
    assert not claim5_time_change(q, [0.1, 0.2]).hypothesis


# ---------------------------------------------------------------- claim 6
@settings(max_examples=10)
@given(small_Q, st.booleans())
def test_claim6_constructed_integrals(rng, definite):
    # every quadratic field on R^2 keeping H = x^T S x is v = lam(x) J S x (lam linear)
    S = rng.normal(size=(2, 2))
    S = S @ S.T + 0.1 * np.eye(2) if definite else np.diag([1.0, -rng.uniform(0.2, 3)])
    lam = rng.normal(size=2)
    q = QuadraticSystem(np.einsum("j,ik->ijk", lam, J2 @ S))
    c = claim6_integral_gives_equilibria(q)
    assert c.hypothesis and c.conclusion and c.details["homotopy_equilibrium_line"]


@settings(max_examples=10)
@given(small_Q)
def test_claim6_random(rng):
    q = QuadraticSystem(rng.normal(size=(2, 2, 2)))
    assert claim6_integral_gives_equilibria(q).holds


# ---------------------------------------------------------------- servo-sleigh
def test_sleigh_exact_solution_lines_and_claims():
    alpha, beta = 0.8, -1.7
    q = sleigh(alpha, beta)
    u0, w0 = 0.4, 0.3
    gamma = beta * u0 - alpha * w0                              # the slide's integral
    C = (gamma / u0 - beta)
    t = np.linspace(0, 3, 7)
    sol = solve_ivp(lambda t, s: q.v(s), (0, 3), [u0, w0], t_eval=t, rtol=1e-12, atol=1e-14)
    assert np.allclose(sol.y[0], gamma / (beta + C * np.exp(gamma * t)), rtol=1e-9)
    # lines by hand: u = 0 and w = 0 are equilibria, beta u = alpha w has c = |alpha beta|/n
    L = q.invariant_lines()
    n = np.hypot(alpha, beta)
    assert L.certified and L.real_count == 3
    esc = [l for l in L if not l.is_equilibrium_line]
    assert len(esc) == 1 and esc[0].c == pytest.approx(abs(alpha * beta) / n, rel=1e-12)
    assert abs(abs(esc[0].direction @ np.array([alpha, beta]) / n) - 1) < 1e-12
    lin = q.linear_first_integrals()
    assert lin.shape == (1, 2) and abs(abs(lin[0] @ [beta, -alpha]) / n - 1) < 1e-12
    claims = check_all_claims(q)
    assert all(c.holds for c in claims.values())
    assert claims[5].hypothesis and claims[5].conclusion


# ---------------------------------------------------------------- reduced servo systems
def _so3_systems():
    from liegroups import named
    from servo import Nonholonomic, ServoFirstKind, ServoSecondKind, Vakonomic
    g = named.so3()
    I = np.array([[3.0, 0.4, 0.2], [0.4, 2.0, 0.1], [0.2, 0.1, 1.5]])
    a, b = [0, 0, 1], [0, 0.5, 1]
    return {"nonholonomic": Nonholonomic(g, I, a=a), "servo1": ServoFirstKind(g, I, a=a, b=b),
            "servo2": ServoSecondKind(g, I, a=a, b=b), "vakonomic": Vakonomic(g, I, a=a)}, I


def test_servo_sleigh_reduction_matches_the_slide():
    from liegroups import named
    from servo import ServoFirstKind
    m, I, a, b, c = 2.0, 0.5, 0.3, 1.1, -0.7
    red = ServoFirstKind(named.se2(), np.diag([m, m, I]), a=[0, 1, 0], b=[a, b, c]).reduced()
    assert np.allclose(red.system.Q, sleigh(a / b, m * c / (I * b)).Q, atol=1e-12)


def test_rigid_body_servo_constraints_satisfy_all_claims():
    systems, I = _so3_systems()
    for name, S in systems.items():
        red = S.reduced()
        q = red.system
        energy = None
        if name == "nonholonomic":       # kinetic energy on the constraint: x^T E^T I E x / 2
            E = np.linalg.solve(I, red.to_state)
            energy = E.T @ I @ E
        claims = check_all_claims(q, energy=energy)
        assert all(c.holds for c in claims.values()), (name, {k: c.details for k, c in claims.items()})
        if name == "nonholonomic":       # claim 3 applies: stable, with a line of equilibria
            assert claims[3].hypothesis and claims[3].conclusion
