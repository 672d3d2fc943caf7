"""Reduction to homogeneous quadratic systems on the constraint (slide "Общие свойства приведенных систем")."""

import numpy as np
import pytest
import scipy.integrate
import sympy as sp

from liegroups import named
from servo import QuadraticSystem, ServoFirstKind, ServoSecondKind
from servo.errors import SymbolicParameterError


def _system(cls, name, seed):
    g = named.get(name)
    n = g.dim
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    return cls(g, A @ A.T + n * np.eye(n), a=rng.standard_normal(n), b=rng.standard_normal(n)), rng


@pytest.mark.parametrize("cls, name, seed, p", [
    (ServoFirstKind, "so3", 3, 2), (ServoFirstKind, "se3", 4, 5),
    (ServoSecondKind, "so3", 5, 3), (ServoSecondKind, "se2", 6, 3), (ServoSecondKind, "se3", 7, 6),
])
def test_reduced_trajectories_agree(cls, name, seed, p):
    s, rng = _system(cls, name, seed)
    red = s.reduced()
    q = red.system
    assert isinstance(q, QuadraticSystem) and q.p == p and q.Q.shape == (p, p, p)
    assert np.allclose(red.from_state @ red.to_state, np.eye(p), atol=1e-12)
    kw = {"lam": 0.3} if cls is ServoSecondKind else {}
    x0state = s.state_from(w=0.5 * rng.standard_normal(s.n), project=True, **kw)
    # the reduced field is the full field read in the coordinates (at random points on the constraint)
    xs = rng.standard_normal((5, p))
    assert np.allclose(red.lift(q.v(xs)), s.rhs(red.lift(xs)), atol=1e-12)
    # and trajectories agree: full system (integrators) against the reduced one (scipy DOP853)
    T = 0.5
    res = s.simulate(x0state, T, steps=200)
    ref = scipy.integrate.solve_ivp(lambda t, x: q.v(x), (0, T), red.project(x0state), method="DOP853",
                                    t_eval=res.t, rtol=1e-12, atol=1e-13)
    assert np.max(np.abs(red.lift(ref.y.T) - res.y)) < 1e-7 * max(1.0, np.abs(res.y).max())


def test_symbolic_reduced_has_no_numeric_system():
    A, B = sp.symbols("A B", positive=True)
    s = ServoSecondKind(named.so3(), [A, B, 1], a=[0, 0, 1], b=[0, 1, 1])
    red = s.reduced()
    assert [str(v) for v in red.variables] == ["w1", "w2", "lambda"]
    with pytest.raises(SymbolicParameterError, match="symbolic coefficients"):
        red.system
    # rigid body, a = e3, b = (0, 1, 1): by hand z = (A w1, B w2 + lambda, lambda), z' = z x w with w3 = 0
    # gives A w1' = -lambda w2, B w2' + lambda' = lambda w1, lambda' = (A - B) w1 w2 - lambda w1
    w1, w2, lam = red.variables
    assert sp.simplify(red.exprs[0] + lam * w2 / A) == 0
    assert sp.simplify(red.exprs[2] - ((A - B) * w1 * w2 - lam * w1)) == 0
    assert sp.simplify(red.exprs[1] - (lam * w1 - red.exprs[2]) / B) == 0


def test_reduced_integrals_agree_with_the_quadratic_system_finder():
    # two independent implementations: servo.lie.first_integrals (null spaces of Q built with sympy) and
    # QuadraticSystem.linear/quadratic_first_integrals (servo.quadratic)
    from servo import Nonholonomic
    from servo.lie.first_integrals import reduced_linear_integrals, reduced_quadratic_integrals

    sleigh = ServoFirstKind(named.se2(), [1.0, 1.0, 0.5], a=[0, 1, 0], b=[0.4, 1.0, -0.3])
    red = sleigh.reduced()
    (ours,) = [np.array(l.tolist(), dtype=float).ravel() for l in reduced_linear_integrals(red)]
    (theirs,) = np.atleast_2d(red.system.linear_first_integrals())
    assert abs(ours @ theirs) == pytest.approx(np.linalg.norm(ours) * np.linalg.norm(theirs), rel=1e-10)
    assert abs(ours @ [0.4, -0.6]) < 1e-12 * np.linalg.norm(ours)    # ours || (beta, -alpha) = (-0.6, -0.4)
    I = np.array([[2.0, 0.3, 0.4], [0.3, 1.5, -0.2], [0.4, -0.2, 1.0]])
    red = Nonholonomic(named.so3(), I, a=[0, 0, 1]).reduced()
    (S,) = [np.array(x.tolist(), dtype=float) for x in reduced_quadratic_integrals(red)]
    (S2,) = red.system.quadratic_first_integrals()
    assert np.allclose(S / np.linalg.norm(S), np.sign(S2[0, 0] * S[0, 0]) * S2 / np.linalg.norm(S2), atol=1e-9)
