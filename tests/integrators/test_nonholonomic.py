"""The discrete mechanics schemes of integrators.reference.nonholonomic: measured orders against exact solutions,
the constraint at every step, Casimirs, reversibility, batches, events and the error paths."""

import numpy as np
import pytest

import liegroups
from liegroups import named
from integrators import ConvergenceError, IntegrationInputError, MethodError, integrate
from integrators.methods import METHODS
from integrators.reference.nonholonomic import LieConstraintData, lagrange_dalembert_problem, suslov_problem

# ---------------------------------------------------------------- the Chaplygin sleigh on SE(2)
MASS, IC, OFF = 1.0, 0.5, 0.7               # mass, inertia about the centre of mass, its distance a from the blade
J = IC + MASS * OFF ** 2
# body velocities (u, v, w) of the contact point; centre of mass at (a, 0): its velocity is (u, v + a w), so
# T = m (u^2 + (v + a w)^2)/2 + I_c w^2/2; the blade forbids v: a = (0, 1, 0)
INERTIA = np.array([[MASS, 0, 0], [0, MASS, MASS * OFF], [0, MASS * OFF, IC + MASS * OFF ** 2]])
U0, W0 = 0.3, 1.2


def sleigh_exact(t, u0=U0, w0=W0):
    """On v = 0: T = m u^2/2 + J w^2/2 = E, and the constrained equations are u' = a w^2, w' = -(m a / J) u w
    (derived in test_sleigh_exact_solution). With w^2 = (2E - m u^2)/J: u' = (a m / J)(c^2 - u^2),
    c = sqrt(2E/m), so u = c tanh(a m c t / J + artanh(u0/c)) and w = sign(w0) sqrt((2E - m u^2)/J)."""
    E = 0.5 * MASS * u0 ** 2 + 0.5 * J * w0 ** 2
    c = np.sqrt(2 * E / MASS)
    u = c * np.tanh(OFF * MASS * c * t / J + np.arctanh(u0 / c))
    return u, np.sign(w0) * np.sqrt((2 * E - MASS * u * u) / J)


def sleigh():
    return suslov_problem(named.se2(), INERTIA, [0.0, 1.0, 0.0], group=liegroups.SE2)


def m0():
    return np.array([U0, 0.0, W0]) @ INERTIA


def test_sleigh_exact_solution():
    # the formula solves u' = a w^2, w' = -(m a/J) u w (central differences) ...
    t, d = np.linspace(0.0, 3.0, 7), 1e-5
    (u, w), (up, wp), (um, wm) = sleigh_exact(t), sleigh_exact(t + d), sleigh_exact(t - d)
    np.testing.assert_allclose((up - um) / (2 * d), OFF * w ** 2, atol=1e-9)
    np.testing.assert_allclose((wp - wm) / (2 * d), -(MASS * OFF / J) * u * w, atol=1e-9)
    # ... which are the library's continuous Euler-Poincare-Suslov equations (DOP853 pair at tight tolerance)
    r = integrate(sleigh(), m0(), (0.0, 3.0), method="rk853", rtol=1e-13, atol=1e-14, t_eval=t)
    w_num = r.y @ np.linalg.inv(INERTIA).T
    np.testing.assert_allclose(w_num[:, 0], u, atol=1e-11)
    np.testing.assert_allclose(w_num[:, 2], w, atol=1e-11)


def _orders(errs):
    e = np.asarray(errs)
    return np.log2(e[:-1] / e[1:])


@pytest.mark.parametrize("name", ["dlas_exp", "dlas_cay"])
def test_dlas_order_and_constraint_on_the_sleigh(name):
    errs = []
    for k in range(4):
        r = integrate(sleigh(), m0(), (0.0, 2.0), method=name, h=0.1 * 2.0 ** -k)
        assert r.status == 0, r.message
        w = r.y @ np.linalg.inv(INERTIA).T
        assert np.max(np.abs(w[:, 1])) <= 1e-12          # the constraint (a, w) = v = 0 at every step
        u, om = sleigh_exact(r.t[-1])
        errs.append(max(abs(w[-1, 0] - u), abs(w[-1, 2] - om)))
    assert np.all(np.abs(_orders(errs) - 2.0) < 0.05), errs
    assert METHODS[name].order == 2 and "linear_invariants" in r.preserves


def test_dlas_batch_equals_single_runs():
    p = sleigh()
    ws = np.array([[0.3, 0.0, 1.2], [-0.5, 0.0, 0.4], [0.1, 0.0, -2.0]])
    batch = integrate(p, ws @ INERTIA, (0.0, 1.0), method="dlas_exp", h=0.05)
    for i, w in enumerate(ws):
        one = integrate(p, w @ INERTIA, (0.0, 1.0), method="dlas_exp", h=0.05)
        np.testing.assert_allclose(batch.y[:, i], one.y, rtol=0, atol=1e-13)


# ---------------------------------------------------------------- the vertical rolling disk
DM, R, IFLIP, IROT = 1.0, 1.0, 0.5, 0.7
WPHI, WTH, PHI0 = 0.8, 1.3, 0.2
Q0 = np.array([0.1, -0.2, PHI0, 0.3])


def disk_A(q):
    phi = np.asarray(q)[..., 2]
    one, zero = np.ones_like(phi), np.zeros_like(phi)
    return np.stack([np.stack([one, zero, zero, -R * np.cos(phi)], -1),
                     np.stack([zero, one, zero, -R * np.sin(phi)], -1)], -2)


def disk():
    return lagrange_dalembert_problem(np.diag([DM, DM, IFLIP, IROT]), lambda q: np.zeros_like(q), disk_A,
                                      potential=lambda q: np.zeros(np.shape(q)[:-1]))


def disk_y0():
    return np.concatenate([Q0, [R * np.cos(PHI0) * WTH, R * np.sin(PHI0) * WTH, WPHI, WTH]])


def disk_exact(t):
    """q = (x, y, phi, theta) with x' = R cos(phi) theta', y' = R sin(phi) theta': phi = W_phi t + phi0,
    theta = W_theta t + theta0, x = x0 + rho (sin phi - sin phi0), y = y0 - rho (cos phi - cos phi0),
    rho = R W_theta / W_phi; multipliers m (x'', y'') = m R W_theta W_phi (-sin phi, cos phi)."""
    phi = WPHI * t + PHI0
    rho = R * WTH / WPHI
    q = np.array([Q0[0] + rho * (np.sin(phi) - np.sin(PHI0)), Q0[1] - rho * (np.cos(phi) - np.cos(PHI0)), phi,
                  Q0[3] + WTH * t])
    lam = DM * R * WTH * WPHI * np.array([-np.sin(phi), np.cos(phi)])
    return q, lam


@pytest.mark.parametrize("name", ["mp_lda", "nh_rattle"])
def test_coordinate_schemes_on_the_rolling_disk(name):
    errs = []
    for k in range(4):
        r = integrate(disk(), disk_y0(), (0.0, 5.0), method=name, h=0.1 * 2.0 ** -k)
        assert r.status == 0, r.message
        for c in r.constraints.values():
            assert np.max(np.abs(c)) <= 1e-12                # A(q) v = 0 at every step
        q, lam = disk_exact(r.t[-1])
        errs.append(np.max(np.abs(r.y[-1, :4] - q)))
    assert np.all(np.abs(_orders(errs) - 2.0) < 0.05), errs
    np.testing.assert_allclose(r["lambda"][-1], lam, atol=1e-4)   # the multipliers of the continuous model


def test_mp_is_reversible():
    p = disk()
    from integrators.reference.stepping import make_stepper
    st = make_stepper(METHODS["mp_lda"], p)
    y1 = st.step(0.0, disk_y0(), 0.3)
    back = st.step(0.0, np.concatenate([y1[:4], -y1[4:]]), 0.3)
    np.testing.assert_allclose(back, np.concatenate([Q0, -disk_y0()[4:]]), atol=1e-14)


def test_events_on_a_discrete_scheme():
    def g(t, y):
        return y[..., 2] - 1.0                 # phi reaches 1 at t = (1 - phi0)/W_phi = 1
    g.terminal = True
    r = integrate(disk(), disk_y0(), (0.0, 5.0), method="mp_lda", h=0.05, events=g)
    assert r.status == 1
    assert abs(r.t_events[0][0] - (1.0 - PHI0) / WPHI) < 1e-12   # phi is linear in t, and so is the scheme's phi


# ---------------------------------------------------------------- the discrete vakonomic scheme
@pytest.mark.parametrize("name", ["dvak_exp", "dvak_cay"])
def test_discrete_vakonomic_keeps_the_casimir_and_has_order_two(name):
    from servo.lie import Vakonomic
    v = Vakonomic(named.so3(), [1.0, 2.0, 3.0], a=[1, 1, 0])
    st = v.state_from(w=[1.0, -1.0, 0.5], lam=0.3)
    ref = v.simulate(st, 4.0, steps=None, method="rk853", rtol=1e-13, atol=1e-14)
    errs = []
    for N in (40, 80, 160):
        r = v.simulate(st, 4.0, steps=N, method=name)
        errs.append(np.max(np.abs(r.y[-1] - ref.y[-1])))
        cas = [k for k in r.invariants if k.startswith("casimir")]
        assert r.drift(cas[0]) < 1e-13                          # |m + lambda a|^2 on its orbit
        assert np.max(np.abs(r.constraints["(a, w)"])) < 1e-12
    assert np.all(np.abs(_orders(errs) - 2.0) < 0.1), errs


# ---------------------------------------------------------------- error paths
def test_discrete_methods_need_the_structure():
    with pytest.raises(MethodError, match="problem.discrete"):
        integrate(lambda t, y: -y, [1.0, 0.0], (0.0, 1.0), method="mp_lda")
    p = suslov_problem(named.so3(), np.diag([1.0, 2.0, 3.0]), [1.0, 0.0, 0.0])     # no group given
    with pytest.raises(MethodError, match="Cayley"):
        integrate(p, [0.0, 1.0, 1.0], (0.0, 1.0), method="dlas_cay")
    with pytest.raises(MethodError, match="lie_second_kind"):
        integrate(p, [0.0, 1.0, 1.0], (0.0, 1.0), method="dvak_exp")


def test_bad_data_is_refused():
    with pytest.raises(IntegrationInputError, match="B = A"):
        LieConstraintData(named.so3(), np.eye(3), [1.0, 0, 0], B=[1.0, 1.0, 0])
    with pytest.raises(IntegrationInputError, match="not realizable"):
        LieConstraintData(named.so3(), np.eye(3), [1.0, 0, 0], B=[0.0, 1.0, 0], structure="lie_second_kind")
    with pytest.raises(IntegrationInputError, match="positive definite"):
        lagrange_dalembert_problem(-np.eye(4), lambda q: q, disk_A)


def test_newton_failure_is_reported():
    with pytest.raises(ConvergenceError, match="dlas_exp"):
        integrate(sleigh(), m0() * 1e3, (0.0, 10.0), method="dlas_exp", h=5.0, check=False)
