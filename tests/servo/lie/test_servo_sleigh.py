"""Chaplygin's servo-sleigh on E(2) (slide "Сервосани Чаплыгина"): reduction, integral, exact u(t), path."""

import numpy as np
import pytest
import scipy.integrate
import sympy as sp

from liegroups import named
from servo import ServoFirstKind, planar_path, reconstruct_motion

MASS, J, AU, BV, CW = 1.0, 0.5, 0.4, 1.0, -0.3
ALPHA, BETA = AU / BV, MASS * CW / (J * BV)       # slide: alpha = a/b, beta = m c/(I b)


def sleigh():
    return ServoFirstKind(named.se2(), [MASS, MASS, J], a=[0, 1, 0], b=[AU, BV, CW])


def test_symbolic_reduction_is_the_slide_system():
    m, I, au, bv, cw = sp.symbols("m I a_u b_v c_w", positive=True)
    s = ServoFirstKind(named.se2(), [m, m, I], a=[0, 1, 0], b=[au, bv, cw])
    red = s.reduced()
    u, w = red.variables
    assert [str(v) for v in red.variables] == ["u", "w"]
    alpha, beta = au / bv, m * cw / (I * bv)
    assert sp.simplify(red.exprs[0] - alpha * u * w) == 0
    assert sp.simplify(red.exprs[1] - beta * u * w) == 0
    # the slide's equations m u' = lambda a, 0 = -m u w + lambda b, I w' = lambda c
    eq = s.equations().on_constraint()
    U, W = eq.omega[0], eq.omega[1]
    t, lam = eq.t, eq.lam
    slide = [m * U.diff(t) - lam * au, -m * U * W + lam * bv, I * W.diff(t) - lam * cw]
    for e, x in zip(eq.exprs, slide):
        assert sp.simplify(e + x) == 0 or sp.simplify(e - x) == 0
    # the integral beta u - alpha w (up to a constant factor)
    lin = [f for f in s.first_integrals() if f.kind == "linear"]
    assert len(lin) == 1
    om1, om3 = sp.symbols("omega1 omega3", real=True)
    ratio = sp.simplify(lin[0].expr_w / (beta * om1 - alpha * om3))
    assert not ratio.free_symbols & {om1, om3} and ratio != 0


@pytest.mark.parametrize("b, I, expected", [
    # beta u - alpha w with alpha = a_u/b_v, beta = m c_w/(I b_v): (0.4, -0.6) here, so -0.6 (u + 2/3 w)
    ((AU, BV, CW), J, "omega1 + 2*omega3/3"),
    # the catalog's servo_sleigh (m = I = 1, b = (1/2, 1, -1/2)): alpha = 1/2, beta = -1/2, -(u + w)/2
    ((0.5, 1.0, -0.5), 1.0, "omega1 + omega3"),
])
def test_linear_integral_prints_with_exact_coefficients(b, I, expected):
    # float data give the integral as a researcher writes it: leading coefficient 1, exact fractions
    # (not 0.707106781187 omega1 + 0.707106781187 omega3, the unit null vector)
    s = ServoFirstKind(named.se2(), [MASS, MASS, I], a=[0, 1, 0], b=list(b))
    (lin,) = [f for f in s.first_integrals() if f.kind == "linear"]
    om1, om3 = sp.symbols("omega1 omega3", real=True)
    assert sp.simplify(lin.expr_w - sp.sympify(expected, locals={"omega1": om1, "omega3": om3})) == 0
    assert not lin.expr_w.atoms(sp.Float) and not lin.expr.atoms(sp.Float)


def test_u_matches_exact_solution():
    s = sleigh()
    u0, w0, T = 1.0, 0.5, 5.0
    gamma = BETA * u0 - ALPHA * w0
    C = gamma / u0 - BETA
    res = s.simulate(s.state_from(w=[u0, 0.0, w0]), T, steps=2000)
    u = res.w[:, 0]
    exact = gamma / (BETA + C * np.exp(gamma * res.t))
    assert np.max(np.abs(u - exact)) < 1e-9
    lin = [f for f in s.first_integrals() if f.kind == "linear"][0]
    assert np.ptp(lin(res.y)) < 1e-12
    assert np.max(np.abs(res.w[:, 1])) < 1e-13      # v = 0 kept


def test_reconstructed_path_matches_planar_kinematics():
    # independent: x' = u cos phi, y' = u sin phi, phi' = w with the exact u(t), w = (beta u - gamma)/alpha
    s = sleigh()
    u0, w0, T = 1.0, 0.5, 5.0
    gamma = BETA * u0 - ALPHA * w0
    C = gamma / u0 - BETA
    res = s.simulate(s.state_from(w=[u0, 0.0, w0]), T, steps=500)
    g = reconstruct_motion(res, substeps=2)
    assert np.max(g.constraints["group_defect"]) < 1e-13
    x, y, phi = planar_path(g.y)

    def f(t, q):
        u = gamma / (BETA + C * np.exp(gamma * t))
        return [u * np.cos(q[2]), u * np.sin(q[2]), (BETA * u - gamma) / ALPHA]

    ref = scipy.integrate.solve_ivp(f, (0, T), [0.0, 0.0, 0.0], method="DOP853", t_eval=res.t,
                                    rtol=1e-12, atol=1e-13)
    assert np.max(np.abs(x - ref.y[0])) < 1e-7
    assert np.max(np.abs(y - ref.y[1])) < 1e-7
    assert np.max(np.abs(np.angle(np.exp(1j * (phi - ref.y[2]))))) < 1e-7
