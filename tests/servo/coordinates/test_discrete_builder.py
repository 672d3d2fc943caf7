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


# ---------------------------------------------------------------- the discrete vakonomic scheme (dvak_mid)
SK_PHI = x.diff(t) * sp.sin(ph) - y.diff(t) * sp.cos(ph)


def skate():
    return LagrangianSystem((x.diff(t) ** 2 + y.diff(t) ** 2 + ph.diff(t) ** 2) / 2, -x, [x, y, ph])


def _orders(errs):
    e = np.asarray(errs)
    return np.log2(e[:-1] / e[1:])


def test_dvak_mid_order_two_on_the_vakonomic_skate():
    """Kozlov's slides: with lambda(0) = 0 the vakonomic skate on the inclined plane has lambda = -t sin phi and
    phi'' = t^2 sin phi cos phi, x' = t cos^2 phi, y' = t sin phi cos phi: those reduced equations, solved by scipy
    at rtol 1e-13, are the independent reference. Order 2, phi = 0 at every node, lambda = -t sin phi."""
    from scipy.integrate import solve_ivp
    w = 0.8

    def ref(tt, s):
        return [tt * np.cos(s[2]) ** 2, tt * np.sin(s[2]) * np.cos(s[2]), s[3], tt ** 2 * np.sin(s[2]) * np.cos(s[2])]

    qe = solve_ivp(ref, (0, 2.0), [0, 0, 0, w], rtol=1e-13, atol=1e-13, method="DOP853").y[:3, -1]
    v = skate().constrain(SK_PHI, model="vakonomic")
    errs = []
    for k in range(4):
        r = v.simulate([0, 0, 0], [0, 0, w], 2.0, steps=20 * 2 ** k, lam0=[0.0], method="dvak_mid")
        assert r.status == 0 and r.method == "dvak_mid"
        assert np.max(np.abs(r.constraints["phi"])) < 1e-12
        errs.append(np.max(np.abs(r.q[-1] - qe)))
    assert np.all(np.abs(_orders(errs) - 2.0) < 0.05), errs
    np.testing.assert_allclose(r.lam[:, 0], -r.t * np.sin(r.q[:, 2]), atol=1e-6)


def test_dvak_mid_against_the_continuous_servo2_equations():
    """A servo-constraint of the second kind proper (N = x', phi = the skate's; realizable while sin phi != 0) on the skate with a potential:
    the discrete scheme converges with order 2 to the library's continuous equations of the model solved by
    DOP853 at rtol 1e-12 (q, q' and the state multiplier)."""
    L = LagrangianSystem((x.diff(t) ** 2 + y.diff(t) ** 2 + ph.diff(t) ** 2) / 2, (x ** 2 + y ** 2) / 2 - x, [x, y, ph])
    c = L.constrain(SK_PHI, model="servo2", control=[x.diff(t)])
    q0, v0, lam0 = [0.1, 0.0, 0.3], [np.cos(0.3) * 0.7, np.sin(0.3) * 0.7, 0.9], [0.2]
    ref = c.simulate(q0, v0, 1.5, steps=1, lam0=lam0, rtol=1e-12, atol=1e-12)
    Yref = np.concatenate([ref.q[-1], ref.qd[-1], ref.lam[-1]])
    errs = []
    for k in range(4):
        r = c.simulate(q0, v0, 1.5, steps=15 * 2 ** k, lam0=lam0, method="dvak_mid")
        assert np.max(np.abs(r.constraints["phi"])) < 1e-12
        errs.append(np.max(np.abs(np.concatenate([r.q[-1], r.qd[-1], r.lam[-1]]) - Yref)))
    assert np.all(np.abs(_orders(errs) - 2.0) < 0.1), errs
    assert errs[-1] < 1e-3


def test_dvak_mid_is_symmetric():
    """Phi_{-h} o Phi_h = id on (q, v, lambda) (to the Newton tolerance): the midpoint L*_d is symmetric."""
    from integrators import METHODS
    from integrators.reference.stepping import make_stepper
    from integrators import ODEProblem
    c = skate().constrain(SK_PHI, model="vakonomic")
    p = ODEProblem(lambda tt, yy: yy, 7)
    p.discrete = c.vakonomic_problem()
    st = make_stepper(METHODS["dvak_mid"], p)
    y0 = np.array([0.1, 0.2, 0.3, np.cos(0.3), np.sin(0.3), 0.7, 0.4])
    y1 = st.step(0.0, y0, 0.2)
    assert np.max(np.abs(y1 - y0)) > 0.05
    np.testing.assert_allclose(st.step(0.2, y1, -0.2), y0, atol=1e-13)


def test_dvak_mid_refused_where_it_does_not_apply():
    with pytest.raises(LagrangianError, match="not 'vakonomic' or 'servo2'"):
        skate().constrain(SK_PHI).vakonomic_problem()
    L = LagrangianSystem((x.diff(t) ** 2 + y.diff(t) ** 2 + ph.diff(t) ** 2) / 2, t * x, [x, y, ph])
    with pytest.raises(LagrangianError, match="depend on t"):
        L.constrain(SK_PHI, model="vakonomic").vakonomic_problem()
    from integrators import IntegrationInputError, MethodError
    from integrators.reference.nonholonomic import VakonomicCoordinateData
    with pytest.raises(IntegrationInputError, match="shape"):
        VakonomicCoordinateData(3, 1, lambda q, v, m: v, lambda q, v, m: q, lambda q, v: v)
    with pytest.raises(MethodError):     # a nonholonomic problem carries other data
        skate().constrain(SK_PHI).simulate([0, 0, 0], [0, 0, 1.0], 1.0, steps=10, method="dvak_mid")


@pytest.mark.parametrize("model", ["vakonomic", "servo2"])
def test_dvak_mid_compiled_loop_equals_the_numpy_steps(model):
    """The loop of kernels.make_dvak_run (run as plain Python) on the scalar functions servo writes from its
    symbolic L*, phi (complex-step Jacobians inside the loop) is the numpy stepper's map, a batch of two states."""
    from integrators import METHODS, ODEProblem
    from integrators.reference.nonholonomic import compiled
    from integrators.reference.stepping import make_stepper
    if model == "vakonomic":
        c = skate().constrain(SK_PHI, model="vakonomic")
    else:
        L = LagrangianSystem((x.diff(t) ** 2 + y.diff(t) ** 2 + ph.diff(t) ** 2) / 2, (x ** 2 + y ** 2) / 2 - x,
                             [x, y, ph])
        c = L.constrain(SK_PHI, model="servo2", control=[x.diff(t)])
    p = ODEProblem(lambda tt, yy: yy, 7)
    p.discrete = c.vakonomic_problem()
    st = make_stepper(METHODS["dvak_mid"], p)
    assert st.compiled_reason is None
    y0 = np.array([[0.1, 0.0, 0.3, np.cos(0.3) * 0.7, np.sin(0.3) * 0.7, 0.9, 0.2],
                   [0.0, 0.1, 0.6, 0.5 * np.cos(0.6), 0.5 * np.sin(0.6), -0.3, -0.1]])
    ref = np.empty((11,) + y0.shape)
    ref[0] = yk = y0
    for j in range(1, 11):
        ref[j] = yk = st.step(0.0, yk, 0.1)
    got = compiled.run_dvak(make_stepper(METHODS["dvak_mid"], p), y0, 0.0, 0.1, 10, 1)
    assert got.status == 0 and np.max(np.abs(ref)) < 10
    np.testing.assert_allclose(got.y, ref, rtol=0, atol=1e-13)


def test_dvak_mid_scalar_functions_are_checked():
    from integrators import IntegrationInputError
    from integrators.reference.nonholonomic import VakonomicCoordinateData
    d = skate().constrain(SK_PHI, model="vakonomic").vakonomic_problem()
    Lv1, Lq1, phi1 = d.scalar

    def twice(q, v, m, out):
        Lv1(q, v, m, out)
        out *= 2.0
    with pytest.raises(IntegrationInputError, match="scalar Lv1 disagrees"):
        VakonomicCoordinateData(3, 1, d.Lv, d.Lq, d.phi, scalar=(twice, Lq1, phi1))


def test_disk_generated_loops_from_the_symbolic_equations():
    """nonholonomic_problem carries grad V, A, dA printed from the symbolic equations: the engine's generated
    loops (numba) on them give the numpy steps' answer."""
    pytest.importorskip("numba")
    from integrators import ODEProblem, integrate
    d = disk().nonholonomic_problem()
    assert d.source["A"][0][3] == "-numpy.cos(q2)" and d.source["dA"][0][3][2] == "numpy.sin(q2)"
    p = ODEProblem(lambda t, y: y, 8)
    p.discrete = d
    y0 = np.array([0.1, -0.2, 0.2, 0.3, np.cos(0.2) * 1.3, np.sin(0.2) * 1.3, 0.8, 1.3])
    for method in ("mp_lda", "nh_rattle"):
        got = integrate(p, y0, (0.0, 5.0), steps=200, method=method, backend="numba")
        ref = integrate(p, y0, (0.0, 5.0), steps=200, method=method, backend="numpy")
        assert got.backend == "numba" and got.status == 0
        np.testing.assert_allclose(got.y, ref.y, rtol=0, atol=1e-12)
