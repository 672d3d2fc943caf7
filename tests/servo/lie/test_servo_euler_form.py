"""Rigid body with a second-kind servo-constraint, b2 = 0: a linear change of variables to Euler's equations
(slide "Твердое тело с левоинвариантной сервосвязью", last bullet)."""

import numpy as np
import pytest
import scipy.integrate
import sympy as sp

from liegroups import named
from servo import ServoError, ServoSecondKind, euler_form
from servo.lie.euler_form import euler_form_symbolic


def test_symbolic_map_gives_eulers_equations():
    d = euler_form_symbolic()
    Isym = sp.Matrix(3, 3, lambda i, j: sp.Symbol(f"I{min(i, j) + 1}{max(i, j) + 1}", real=True))
    s = ServoSecondKind(named.so3(), Isym, a=[0, 0, 1], b=[0, 0, d["b3"]])
    eq = s.equations().on_constraint()
    t = eq.t
    x = [eq.omega[0], eq.omega[1], eq.lam]
    xdot = [f.diff(t) for f in x]
    P = d["P"]
    J1, J2, J3 = d["J"]
    m = P * sp.Matrix(x)
    euler = sp.Matrix([(J3 - J2) * m[1] * m[2], (J1 - J3) * m[2] * m[0], (J2 - J1) * m[0] * m[1]])
    # the equations are linear in the rates: A xdot = r; Euler's form claims P xdot = euler(P x)
    A = sp.Matrix([[sp.diff(e, u) for u in xdot] for e in eq.exprs])
    r = -sp.Matrix([e.subs({u: 0 for u in xdot}) for e in eq.exprs])
    # exact check at rational points, with cos t, sin t from a rational u: ((1-u^2), 2u)/(1+u^2)
    rng = np.random.default_rng(0)
    for _ in range(3):
        u = sp.Rational(int(rng.integers(-9, 10)), 7)
        c, sn = (1 - u**2) / (1 + u**2), 2 * u / (1 + u**2)
        vals = {sp.cos(d["t"]): c, sp.sin(d["t"]): sn}
        for sym in (d["A1"], d["A2"], d["I13"], d["I23"], d["I33"], d["b3"]):
            vals[sym] = sp.Rational(int(rng.integers(1, 30)), 11)
        vals[d["A1"]] += 3
        vals[d["A2"]] += 3
        vals[d["I33"]] += 10
        vals.update({f: sp.Rational(int(v), 5) for f, v in zip(x, rng.integers(-9, 10, 3))})
        # the inertia in the parametrization I2 = rot(-t) diag(A1, A2) rot(t) of its upper block
        vals.update({Isym[i, j]: d["inertia"][i, j].subs(vals) for i in range(3) for j in range(i, 3)})
        Av, rv = A.subs(vals), r.subs(vals)
        rates = Av.LUsolve(rv)
        assert (P.subs(vals) * rates - euler.subs(vals)).applyfunc(sp.simplify) == sp.zeros(3, 1)


def test_numeric_map_along_trajectories():
    I = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 0.7]])
    s = ServoSecondKind(named.so3(), I, a=[0, 0, 1], b=[0, 0, 2.0])
    ef = euler_form(s)
    # J: 0 and the inverses of the principal values of the upper 2x2 block of I (independent eigvalsh)
    assert np.allclose(np.sort(ef.J), np.sort(np.r_[0.0, 1.0 / np.linalg.eigvalsh(I[:2, :2])]), atol=1e-12)
    assert np.allclose(ef.R @ ef.R.T, np.eye(3), atol=1e-13) and np.linalg.det(ef.R) == pytest.approx(1.0)
    x0 = s.state_from(w=[1.0, 0.5, 0.0], lam=0.3)
    res = s.simulate(x0, 3.0, steps=300)
    m = ef.from_state(res.y)
    ref = scipy.integrate.solve_ivp(lambda t, y: ef.rhs(y), (0, 3.0), m[0], method="DOP853", t_eval=res.t,
                                    rtol=1e-12, atol=1e-13)
    assert np.max(np.abs(m - ref.y.T)) < 1e-7


def test_euler_form_needs_b_parallel_to_a():
    s = ServoSecondKind(named.so3(), np.diag([2.0, 1.0, 0.5]), a=[0, 0, 1], b=[0, 0.4, 1.0])
    with pytest.raises(ServoError, match="b parallel to a"):
        euler_form(s)
