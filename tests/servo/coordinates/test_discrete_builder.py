"""ConstrainedSystem.nonholonomic_problem: the data of the discrete Lagrange-d'Alembert schemes from a
LagrangianSystem, and simulate by method name."""

import numpy as np
import pytest
import sympy as sp
from sympy.physics.mechanics import dynamicsymbols

from servo.coordinates import LagrangianSystem
from servo.errors import LagrangianError

x, y, ph, th = dynamicsymbols("x y phi theta")
t = dynamicsymbols._t


def disk(mass_matrix_depends_on_q=False):
    T = (x.diff(t) ** 2 + y.diff(t) ** 2) / 2 + ph.diff(t) ** 2 / 4 + sp.Rational(7, 20) * th.diff(t) ** 2
    if mass_matrix_depends_on_q:
        T = T + x ** 2 * ph.diff(t) ** 2 / 2
    L = LagrangianSystem(T, 0, [x, y, ph, th])
    return L.constrain([x.diff(t) - sp.cos(ph) * th.diff(t), y.diff(t) - sp.sin(ph) * th.diff(t)])


def test_disk_data_and_simulate_by_name():
    c = disk()
    d = c.nonholonomic_problem()
    np.testing.assert_allclose(d.M, np.diag([1.0, 1.0, 0.5, 0.7]))
    q = np.array([0.0, 0.0, 0.4, 0.0])
    np.testing.assert_allclose(d.A(q), [[1, 0, 0, -np.cos(0.4)], [0, 1, 0, -np.sin(0.4)]])
    np.testing.assert_allclose(d.dA(q)[0, 3, 2], np.sin(0.4))          # d(-cos phi)/dphi
    Wp, Wt, phi0 = 0.8, 1.3, 0.2
    q0, v0 = [0.1, -0.2, phi0, 0.3], [np.cos(phi0) * Wt, np.sin(phi0) * Wt, Wp, Wt]
    phi = Wp * 5 + phi0
    x_exact = Wt / Wp * (np.sin(phi) - np.sin(phi0)) + 0.1
    for method in ("mp_lda", "nh_rattle"):
        r = c.simulate(q0, v0, 5.0, steps=400, method=method)
        assert r.status == 0 and r.method == method
        assert abs(r.q[-1, 0] - x_exact) < 1e-4
        assert np.max(np.abs(r.constraints["phi"])) < 1e-12
        np.testing.assert_allclose(r.lam[-1], Wt * Wp * np.array([-np.sin(phi), np.cos(phi)]), atol=1e-3)


def test_refused_where_the_scheme_does_not_apply():
    with pytest.raises(LagrangianError, match="constant mass matrix"):
        disk(mass_matrix_depends_on_q=True).nonholonomic_problem()
    L = LagrangianSystem((x.diff(t) ** 2 + y.diff(t) ** 2) / 2, 0, [x, y])
    with pytest.raises(LagrangianError, match="not 'nonholonomic'"):
        L.constrain(x.diff(t) - y.diff(t), model="vakonomic").nonholonomic_problem()
    with pytest.raises(LagrangianError, match=r"A\(q\) q' = 0"):
        L.constrain(x.diff(t) - y.diff(t) ** 2).nonholonomic_problem()
