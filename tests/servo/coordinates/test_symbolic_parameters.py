"""Symbolic parameters in systems in coordinates: equations(), realizability() and homogeneity_degree() work
with sympy symbols; simulate needs numbers (``.subs({symbol: value})``, as for the Lie-group classes) and
raises SymbolicParameterError otherwise.

Expected values by hand: a body of mass m on a slope, T = m x'^2/2, V = m g x:  m x'' + m g = 0. The skate
with mass m and moment of inertia J: A = diag(m, m, J), dphi/dq' = (sin phi, -cos phi, 0), so for the control
M = (-sin phi, cos phi, kappa) (A^-1 M, dphi/dq') = -(sin^2 + cos^2)/m = -1/m; for N = -phi (vakonomic)
(A^-1 dN/dq', dphi/dq') = -1/m too. alpha x'^2 - y'^2 is homogeneous of degree 2 whatever alpha.
"""

import numpy as np
import pytest
import sympy as sp
from sympy.physics.mechanics import dynamicsymbols

from servo import LagrangianSystem, SymbolicParameterError

x, y, phi = dynamicsymbols("x y phi")
t = dynamicsymbols._t
m, g, J, kappa, alpha = sp.symbols("m g J kappa alpha", positive=True)
PHI = x.diff() * sp.sin(phi) - y.diff() * sp.cos(phi)


@pytest.fixture(scope="module")
def skate():
    return LagrangianSystem(m * (x.diff() ** 2 + y.diff() ** 2) / 2 + J * phi.diff() ** 2 / 2, -m * g * x, [x, y, phi])


def test_free_equations_with_symbols():
    L = LagrangianSystem(m * x.diff() ** 2 / 2, m * g * x, [x])
    assert L.symbols == (g, m) and not L.is_numeric
    eq = L.equations()[0]
    assert sp.simplify(eq.lhs - eq.rhs - (m * x.diff(t, 2) + m * g)) == 0
    with pytest.raises(SymbolicParameterError, match=r"simulate needs numeric parameters .* symbols g, m"):
        L.simulate([0.0], [1.0], 1.0)
    r = L.subs({m: 2.0, g: 9.81}).simulate([0.0], [1.0], 1.0, steps=4)
    np.testing.assert_allclose(r.q[:, 0], r.t - 9.81 * r.t ** 2 / 2, atol=1e-12)


def test_constrained_models_with_symbols(skate):
    s1 = skate.constrain(PHI, model="servo1", control=[-sp.sin(phi), sp.cos(phi), kappa])
    assert sp.simplify(s1.realizability() + 1 / m) == 0
    assert set(s1.symbols) == {g, J, kappa, m}
    vak = skate.constrain(PHI, model="vakonomic")
    assert sp.simplify(vak.realizability() + 1 / m) == 0
    nh = skate.constrain(PHI)
    eqs = nh.equations()
    lam = nh.lam[0]
    assert sp.simplify(eqs[0].lhs - eqs[0].rhs - (m * x.diff(t, 2) - m * g - lam * sp.sin(phi))) == 0
    assert nh.homogeneity_degree() == 1
    quad = skate.constrain(alpha * x.diff() ** 2 - y.diff() ** 2)
    assert quad.homogeneity_degree() == 2 and alpha in quad.symbols
    for c in (s1, vak, nh):
        with pytest.raises(SymbolicParameterError, match="use .subs"):
            c.simulate([0, 0, 0], [0, 0, 1.0], 1.0)


def test_subs_gives_the_numeric_system(skate):
    """The substituted system moves like the one built with numbers (the skate from rest, phi' = w:
    x = g sin^2(wt)/(2 w^2) for any m, J; Kozlov's lectures, with gravity g)."""
    c = skate.constrain(PHI).subs({m: 3.0, g: 2.0, J: 0.5})
    assert c.is_numeric
    w = 1.3
    r = c.simulate([0, 0, 0], [0, 0, w], 3.0, steps=30)
    np.testing.assert_allclose(r.q[:, 0], 2.0 * np.sin(w * r.t) ** 2 / (2 * w ** 2), atol=1e-9)
    s1 = skate.constrain(PHI, model="servo1", control=[-sp.sin(phi), sp.cos(phi), kappa]).subs(
        {m: 1.0, g: 1.0, J: 1.0, kappa: 0.0})
    ref = LagrangianSystem((x.diff() ** 2 + y.diff() ** 2 + phi.diff() ** 2) / 2, -x, [x, y, phi]).constrain(PHI)
    np.testing.assert_allclose(s1.simulate([0, 0, 0], [0, 0, w], 2.0, steps=10).q,
                               ref.simulate([0, 0, 0], [0, 0, w], 2.0, steps=10).q, atol=1e-10)


def test_one_sided_with_symbols(skate):
    c = skate.constrain(PHI >= 0, model="one_sided", control=[-sp.sin(phi), sp.cos(phi), kappa])
    assert sp.simplify(c.realizability() + 1 / m) == 0
    with pytest.raises(SymbolicParameterError, match="kappa"):
        c.simulate([0, 0, 0], [0, 0, 1.0], 1.0)
    num = c.subs({m: 1.0, g: 1.0, J: 1.0, kappa: 0.0})
    r = num.simulate([0, 0, 0], [0, 0, 1.0], 1.0, steps=10)
    assert r.control_sign.min() == -1.0            # (A^-1 M, df/dq') = -1 < 0: Kozlov's sign rule flips M
