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


@pytest.mark.parametrize("name", ["dlas_exp", "dlas_cay", "lie_rattle_exp", "lie_rattle_cay"])
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


# ---------------------------------------------------------------- the compiled loops
def _suslov_so3():
    return suslov_problem(named.so3(), np.diag([1.0, 2.0, 3.0]) + 0.3 * (np.ones((3, 3)) - np.eye(3)), [0, 0, 1.0],
                          group=liegroups.SO3)


def _se3():
    return suslov_problem(named.se3(), np.diag([1.0, 2.0, 3.0, 1.5, 1.2, 1.1]) + 0.1,
                          [[0, 0, 1.0, 0, 0, 0], [0, 0, 0, 0, 1.0, 0]], group=liegroups.SE3)


@pytest.mark.parametrize("which, name", [("sleigh", "dlas_exp"), ("sleigh", "dlas_cay"), ("so3", "dlas_exp"),
                                         ("so3", "dlas_cay"), ("se3", "dlas_cay")])
def test_compiled_dlas_loop_equals_the_numpy_newton(which, name):
    # the kernel (closed-form dtau^-1, multiplier eliminated, analytic Jacobian) run as plain Python, against
    # the numpy stepper (complex-step Jacobian of the full (xi, L) system): the same map to round-off
    from integrators.reference.nonholonomic import compiled
    from integrators.reference.stepping import make_stepper
    p = {"sleigh": sleigh, "so3": _suslov_so3, "se3": _se3}[which]()
    w = {"sleigh": [[0.3, 0.0, 1.2], [-0.5, 0.0, 0.4]], "so3": [[1.0, 0.5, 0.0], [0.2, -1.0, 0.0]],
         "se3": [[1.0, 0.5, 0.0, 0.3, 0.0, 0.2], [0.1, -0.4, 0.0, 0.2, 0.0, -0.3]]}[which]
    m0 = np.asarray(w) @ p.discrete.I
    ref = integrate(p, m0, (0.0, 1.0), method=name, h=0.05, backend="numpy")
    st = make_stepper(METHODS[name], p)
    assert st.compiled_reason is None
    got = compiled.run_dlas(st, m0, 0.0, 0.05, 20, 1, None)
    np.testing.assert_allclose(got.y, ref.y, rtol=0, atol=2e-14)
    assert st.nfev_total <= 4 * 20 * 2                  # quadratic convergence: a few iterations per step


def test_the_closed_form_of_dexp_inverse():
    from integrators.reference.nonholonomic.kernels import beta_exp
    # the series and the closed form meet at s = 0.04; both against the Bernoulli series of z/(e^z - 1):
    # dexp^-1 = sum B_k/k! ad^k with ad^3 = -s ad gives beta = sum_{j>=1} B_{2j}/(2j)! (-s)^(j-1)
    from math import factorial
    B = {2: 1 / 6, 4: -1 / 30, 6: 1 / 42, 8: -1 / 30, 10: 5 / 66, 12: -691 / 2730, 14: 7 / 6}
    for s in (1e-6, 0.0399, 0.0401, 0.3):
        ref = sum(B[2 * j] / factorial(2 * j) * (-s) ** (j - 1) for j in range(1, 8))
        assert abs(beta_exp(s)[0] - ref) < 1e-15
        d = 1e-6
        assert abs(beta_exp(s)[1] - (beta_exp(s + d)[0] - beta_exp(s - d)[0]) / (2 * d)) < 1e-9


numba_only = pytest.mark.skipif(not __import__("integrators.backends.numba_kernels", fromlist=["x"]).available(),
                                reason="numba not installed")


@numba_only
def test_numba_backend_runs_the_compiled_loop():
    r = integrate(sleigh(), m0(), (0.0, 1.0), method="dlas_exp", h=0.05, backend="numba")
    ref = integrate(sleigh(), m0(), (0.0, 1.0), method="dlas_exp", h=0.05, backend="numpy")
    assert r.backend == "numba" and ref.backend == "numpy"
    np.testing.assert_allclose(r.y, ref.y, rtol=0, atol=2e-14)


@numba_only
def test_numba_without_a_compiled_path_is_a_method_error():
    m = np.array([1.0, 0.5, 0.0, 0.3, 0.0, 0.2]) @ _se3().discrete.I
    with pytest.raises(MethodError, match="ad_x\\^3"):
        integrate(_se3(), m, (0.0, 1.0), method="dlas_exp", h=0.1, backend="numba")
    with pytest.raises(MethodError, match="scalar"):
        integrate(disk(), disk_y0(), (0.0, 1.0), method="mp_lda", h=0.1, backend="numba")


def test_scalar_functions_must_agree_with_the_batched_ones():
    with pytest.raises(IntegrationInputError, match="grad_V1"):
        lagrange_dalembert_problem(np.eye(4), lambda q: np.zeros_like(q), disk_A,
                                   scalar=(lambda q: np.ones(4), lambda q: disk_A(q)))


def test_compiled_coordinate_loops_equal_the_numpy_steps():
    from integrators.reference.nonholonomic import compiled, contact_oscillator, contact_oscillator_initial
    from integrators.reference.stepping import make_stepper
    p = contact_oscillator(0.3)
    y0 = contact_oscillator_initial(np.linspace(-0.9, 0.9, 4))
    h = 2 * np.sin(np.pi / 40)
    for name in ("mp_lda", "nh_rattle"):
        ref = integrate(p, y0, (0.0, 20 * h), method=name, h=h, backend="numpy", fast=False)   # driver's loop
        st = make_stepper(METHODS[name], p)
        got = (compiled.run_mp(st, y0, 0.0, h, 20, 1) if name == "mp_lda" else
               compiled.run_rattle(st, y0, st._lambda(y0), 0.0, h, 20, 1)[0])
        np.testing.assert_allclose(got.y, ref.y, rtol=0, atol=1e-14)


# ---------------------------------------------------------------- the published nonholonomic RATTLE
def _contact():
    from integrators.reference.nonholonomic import contact_oscillator, contact_oscillator_initial
    return contact_oscillator(0.3), contact_oscillator_initial(np.array([-0.5, 0.3]))


def test_rattle_solves_the_two_step_gni_equations():
    # Ferraro, Iglesias and Martin de Diego (2008), trapezoidal L_d, M = 1: the discrete Lagrange-d'Alembert
    # equation (q_{k+1} - 2 q_k + q_{k-1})/h^2 = -grad V(q_k) + A(q_k)^T lambda_k and the constraint on the
    # average discrete Legendre transform A(q_k) (q_{k+1} - q_{k-1}) / (2h) = 0, at every interior node
    p, y0 = _contact()
    h = 0.1
    r = integrate(p, y0, (0.0, 3.0), method="nh_rattle", h=h)
    q = r.y[..., :3]
    d = p.discrete
    qk = q[1:-1]
    acc = (q[2:] - 2 * qk + q[:-2]) / h ** 2 + d.grad_V(qk)          # = A(q_k)^T lambda_k: along (1, 0, y_k)
    a = d.A(qk)[..., 0, :]
    lam = np.einsum("...i,...i->...", acc, a) / np.einsum("...i,...i->...", a, a)
    np.testing.assert_allclose(acc, lam[..., None] * a, rtol=0, atol=1e-11)
    np.testing.assert_allclose(np.einsum("...i,...i->...", a, q[2:] - q[:-2]) / (2 * h), 0.0, atol=1e-13)


def test_rattle_is_symmetric_and_reversible_on_the_extended_state():
    from integrators.reference.stepping import make_stepper
    p, y0 = _contact()
    st = make_stepper(METHODS["nh_rattle"], p)
    lam0 = st._lambda(y0) + 0.01                               # any lambda_0: the map is symmetric on (q, p, lambda)
    y, lam = y0, lam0
    for _ in range(7):
        y, lam = st.advance(y, lam, 0.2)
    back, lb = y, lam
    for _ in range(7):
        back, lb = st.advance(back, lb, -0.2)                   # Phi_{-h} = Phi_h^{-1}
    np.testing.assert_allclose(back, y0, atol=1e-13)
    np.testing.assert_allclose(lb, lam0, atol=1e-12)
    flip = np.concatenate([y[..., :3], -y[..., 3:]], -1)       # rho Phi_h rho = Phi_h^{-1}, rho(q, v, l) = (q, -v, l)
    rev, lr = flip, lam
    for _ in range(7):
        rev, lr = st.advance(rev, lr, 0.2)
    np.testing.assert_allclose(np.concatenate([rev[..., :3], -rev[..., 3:]], -1), y0, atol=1e-13)
    np.testing.assert_allclose(lr, lam0, atol=1e-12)


def test_rattle_with_events_carries_the_multiplier():
    # the step-by-step loop (events) remembers lambda and gives the run of the whole-run loop
    p, y0 = _contact()

    def g(t, y):
        return y[..., 0] - 10.0                                 # never reached
    a = integrate(p, y0, (0.0, 2.0), method="nh_rattle", h=0.1, events=g)
    b = integrate(p, y0, (0.0, 2.0), method="nh_rattle", h=0.1)
    np.testing.assert_allclose(a.y, b.y, rtol=0, atol=1e-13)


def test_the_report_shows_the_benchmark_figures(tmp_path):
    from pathlib import Path
    from catalog.output import report
    src = Path(report.__file__).resolve().parents[2] / "benchmarks" / "figures"
    html = report._nonholonomic_figures(tmp_path)
    present = [k for k in report.NONHOLONOMIC_FIGURES if (src / f"nonholonomic_{k}.svg").exists()]
    for k in present:
        name = f"nonholonomic_{k}.svg"
        assert f"fig/{name}" in html
        assert (tmp_path / "fig" / name).read_bytes() == (src / name).read_bytes()
    if not present:
        assert "no figures" in html


# ---------------------------------------------------------------- a gauge term (Modin and Verdier 2020)
def _disk_gauge():
    """a = grad S, S = sin(x) cos(phi) + theta^2/2 + x y: exact, so the continuous motion is the disk's."""
    def a(q):
        x, y, phi, th = (q[..., i] for i in range(4))
        return np.stack([np.cos(x) * np.cos(phi) + y, x, -np.sin(x) * np.sin(phi), th], -1)

    def Da(q):
        x, y, phi, th = (q[..., i] for i in range(4))
        out = np.zeros(np.shape(q) + (4,), dtype=np.result_type(x, float))
        out[..., 0, 0] = -np.sin(x) * np.cos(phi)
        out[..., 0, 2] = out[..., 2, 0] = -np.cos(x) * np.sin(phi)
        out[..., 0, 1] = out[..., 1, 0] = 1.0
        out[..., 2, 2] = -np.sin(x) * np.cos(phi)
        out[..., 3, 3] = 1.0
        return out
    return a, Da


def disk_gauge():
    return lagrange_dalembert_problem(np.diag([DM, DM, IFLIP, IROT]), lambda q: np.zeros_like(q), disk_A,
                                      potential=lambda q: np.zeros(np.shape(q)[:-1]), gauge=_disk_gauge())


@pytest.mark.parametrize("name", ["mp_lda", "nh_rattle"])
def test_gauge_term_keeps_order_two_and_the_constraint(name):
    """An exact gauge term changes no continuous motion (the disk's exact solution still holds), but the
    discrete schemes see it: they must still converge with order 2 and keep A(q) v = 0."""
    errs, errs0 = [], []
    for k in range(4):
        h = 0.1 * 2.0 ** -k
        r = integrate(disk_gauge(), disk_y0(), (0.0, 5.0), method=name, h=h)
        assert r.status == 0, r.message
        for c in r.constraints.values():
            assert np.max(np.abs(c)) <= 1e-12
        q, _ = disk_exact(r.t[-1])
        errs.append(np.max(np.abs(r.y[-1, :4] - q)))
        errs0.append(np.max(np.abs(integrate(disk(), disk_y0(), (0.0, 5.0), method=name, h=h).y[-1, :4] - q)))
    assert np.all(np.abs(_orders(errs) - 2.0) < 0.05), errs
    assert abs(errs[0] - errs0[0]) > 1e-3 * errs0[0]          # the discrete schemes do see the gauge term


@pytest.mark.parametrize("name", ["mp_lda", "nh_rattle"])
def test_gauge_term_breaks_reversibility(name):
    """Without the gauge (q1, -v1) steps back to (q0, -v0) (to round-off, lambda carried); with an exact gauge
    a = grad S the defect is O(h^3): measured order 3 between h and h/2."""
    from integrators import METHODS
    from integrators.reference.stepping import make_stepper

    def defect(p, h):
        st = make_stepper(METHODS[name], p)
        y1 = st.step(0.0, disk_y0(), h)
        if name == "nh_rattle":       # the reversed state carries the multiplier of (q1, v1)
            st._remember(np.concatenate([y1[:4], -y1[4:]]), st._lambda(y1))
        back = st.step(0.0, np.concatenate([y1[:4], -y1[4:]]), h)
        return np.max(np.abs(back - np.concatenate([Q0, -disk_y0()[4:]])))

    assert defect(disk(), 0.2) <= 1e-13
    d1, d2 = defect(disk_gauge(), 0.2), defect(disk_gauge(), 0.1)
    assert d1 > 1e-6
    assert 2.6 < np.log2(d1 / d2) < 3.4, (d1, d2)


def test_gauge_must_be_the_derivative():
    a, Da = _disk_gauge()
    with pytest.raises(IntegrationInputError, match="not the derivative"):
        lagrange_dalembert_problem(np.eye(4), lambda q: np.zeros_like(q), disk_A, gauge=(a, lambda q: 2 * Da(q)))
    with pytest.raises(IntegrationInputError, match="gauge must be"):
        lagrange_dalembert_problem(np.eye(4), lambda q: np.zeros_like(q), disk_A, gauge=a)


def test_gauge_without_scalar_functions_has_no_compiled_loop():
    with pytest.raises(MethodError, match="gauge term.*scalar a1"):
        integrate(disk_gauge(), disk_y0(), (0.0, 1.0), method="nh_rattle", h=0.1, backend="numba")


def _disk_gauge_scalar():
    """disk_gauge with the scalar functions of one q (grad_V1, A1, dA1, a1, Da1) of its compiled loops."""
    def g1(q):
        return np.zeros(4)

    def A1(q):
        out = np.zeros((2, 4))
        out[0, 0] = out[1, 1] = 1.0
        out[0, 3], out[1, 3] = -R * np.cos(q[2]), -R * np.sin(q[2])
        return out

    def dA1(q):
        out = np.zeros((2, 4, 4))
        out[0, 3, 2], out[1, 3, 2] = R * np.sin(q[2]), -R * np.cos(q[2])
        return out

    def a1(q):
        return np.array([np.cos(q[0]) * np.cos(q[2]) + q[1], q[0], -np.sin(q[0]) * np.sin(q[2]), q[3]])

    def Da1(q):
        out = np.zeros((4, 4))
        out[0, 0] = out[2, 2] = -np.sin(q[0]) * np.cos(q[2])
        out[0, 2] = out[2, 0] = -np.cos(q[0]) * np.sin(q[2])
        out[0, 1] = out[1, 0] = out[3, 3] = 1.0
        return out
    return lagrange_dalembert_problem(np.diag([DM, DM, IFLIP, IROT]), lambda q: np.zeros_like(q), disk_A,
                                      potential=lambda q: np.zeros(np.shape(q)[:-1]), gauge=_disk_gauge(),
                                      scalar=(g1, A1, dA1, a1, Da1))


@pytest.mark.parametrize("which", ["disk", "contact"])
def test_compiled_gauge_loops_equal_the_numpy_steps(which):
    """The compiled loops with a gauge term (run as plain Python) are the numpy steps (the driver's loop): the
    rolling disk with an exact gauge (k = 2, a full Da) and Modin and Verdier's non-reversible contact
    oscillator (a batch of 4)."""
    from integrators.reference.nonholonomic import compiled, contact_oscillator_initial, contact_oscillator_nonreversible
    from integrators.reference.stepping import make_stepper
    if which == "disk":
        p, y0, h = _disk_gauge_scalar(), disk_y0(), 0.1
    else:
        p, y0, h = contact_oscillator_nonreversible(0.3), contact_oscillator_initial(np.linspace(-0.9, 0.9, 4)), 0.3
    for name in ("mp_lda", "nh_rattle"):
        ref = integrate(p, y0, (0.0, 20 * h), method=name, h=h, backend="numpy", fast=False)
        st = make_stepper(METHODS[name], p)
        assert st.compiled_reason is None
        got = (compiled.run_mp(st, y0, 0.0, h, 20, 1) if name == "mp_lda" else
               compiled.run_rattle(st, y0, st._lambda(y0), 0.0, h, 20, 1)[0])
        np.testing.assert_allclose(got.y, ref.y, rtol=0, atol=1e-13)
        A = p.discrete.A(got.y[..., :4] if which == "disk" else got.y[..., :3])
        v = got.y[..., 4:] if which == "disk" else got.y[..., 3:]
        assert np.max(np.abs(np.einsum("...ij,...j->...i", A, v))) <= 1e-14


def test_scalar_gauge_functions_are_checked():
    p = _disk_gauge_scalar()
    g1, A1, dA1, a1, Da1 = p.discrete.scalar
    with pytest.raises(IntegrationInputError, match="no gauge term"):
        lagrange_dalembert_problem(np.eye(4), lambda q: np.zeros_like(q), disk_A, scalar=(g1, A1, dA1, a1, Da1))
    with pytest.raises(IntegrationInputError, match="scalar Da1"):
        lagrange_dalembert_problem(np.eye(4), lambda q: np.zeros_like(q), disk_A, gauge=_disk_gauge(),
                                   scalar=(g1, A1, dA1, a1, lambda q: 2 * Da1(q)))
    with pytest.raises(IntegrationInputError, match="together"):
        lagrange_dalembert_problem(np.eye(4), lambda q: np.zeros_like(q), disk_A, gauge=_disk_gauge(),
                                   scalar=(g1, A1, dA1, a1))


# ---------------------------------------------------------------- the Lie-group nonholonomic RATTLE
def test_lie_rattle_is_symmetric_on_the_extended_state():
    """Phi_{-h} o Phi_h = id on (m, lambda) on Suslov's problem (so(3), both retractions), and the constraint
    impulse of the step is the continuous multiplier to O(h^2)."""
    from integrators.reference.stepping import make_stepper
    I3 = np.diag([1.0, 2.0, 3.0]) + 0.3 * (np.ones((3, 3)) - np.eye(3))
    p = suslov_problem(named.so3(), I3, [0, 0, 1.0], group=liegroups.SO3)
    m0_ = np.array([1.0, 0.5, 0.0]) @ I3
    m0_ = m0_ - (m0_ @ np.linalg.inv(I3) @ [0, 0, 1.0]) / (np.linalg.inv(I3)[2, 2]) * np.array([0, 0, 1.0])
    for name in ("lie_rattle_exp", "lie_rattle_cay"):
        st = make_stepper(METHODS[name], p)
        lam0 = st._lambda(m0_)
        m1, lam1 = st.advance(m0_, lam0, 0.3)
        assert abs((m1 @ np.linalg.inv(I3))[2]) <= 1e-15          # (a, w) = 0 at the node
        back, lam_b = st.advance(m1, lam1, -0.3)
        np.testing.assert_allclose(back, m0_, atol=1e-14)
        np.testing.assert_allclose(lam_b, lam0, atol=1e-13)
        lam_c = make_stepper(METHODS[name], p)._lambda(m1)          # a fresh stepper: the continuous multiplier
        assert np.max(np.abs(lam1 - lam_c)) < 0.3 ** 2 * max(1.0, np.max(np.abs(lam_c)))


def test_lie_rattle_step_by_step_equals_the_whole_run():
    """With events the driver steps one at a time: the remembered multiplier makes it the same map."""
    p = sleigh()
    whole = integrate(p, m0(), (0.0, 1.0), method="lie_rattle_exp", h=0.05)
    g = lambda t, y: y[..., 0] - 100.0            # never fires
    stepped = integrate(p, m0(), (0.0, 1.0), method="lie_rattle_exp", h=0.05, events=g)
    np.testing.assert_allclose(stepped.y[-1], whole.y[-1], atol=1e-13)


# ---------------------------------------------------------------- the contact oscillator and its variant
def test_contact_oscillator_y_is_forty_step_periodic():
    """With h = 2 sin(pi/40) both schemes integrate y'' = -y by a Stormer-Verlet-type step, a rotation by exactly
    2 pi/40 (cos theta = 1 - h^2/2 = cos(pi/20)): (y, y') returns after 40 steps to round-off. The benchmark's
    drift runs rely on this step being exact (a detuned h makes the phase of y beat against the grid)."""
    from integrators.reference.nonholonomic import contact_oscillator, contact_oscillator_initial
    p, h = contact_oscillator(0.3), 2 * np.sin(np.pi / 40)
    y0 = contact_oscillator_initial(np.array([-0.9, 0.4]))
    for name in ("mp_lda", "nh_rattle"):
        r = integrate(p, y0, (0.0, 40 * h), method=name, steps=40, backend="numpy")
        np.testing.assert_allclose(r.y[-1][:, [1, 4]], y0[:, [1, 4]], atol=1e-13)
        assert abs(r.h - h) <= 1e-16


def test_the_nonreversible_variant_has_the_same_motion_and_drifts_in_the_schemes():
    """Modin and Verdier (2020): the gauge term -grad S . v is a total derivative, so the continuous vector field
    is the contact oscillator's; the discrete schemes are no longer reversible, and the mean energy error moves
    secularly (here > 1e-2 between the first and the last fifth of 100 periods) where on the reversible problem
    it stays (< 1e-4)."""
    from integrators.reference.nonholonomic import (contact_oscillator, contact_oscillator_initial,
                                                    contact_oscillator_nonreversible)
    rev, nrev = contact_oscillator(0.3), contact_oscillator_nonreversible(0.3)
    y0 = contact_oscillator_initial(np.array([-0.9, 0.5]))
    Y = y0 + 0.1 * np.arange(12).reshape(2, 6) / 12
    np.testing.assert_allclose(nrev.f(0.0, Y), rev.f(0.0, Y), atol=1e-14)
    h, n = 2 * np.sin(np.pi / 40), 4000
    H = rev.invariants["energy"]
    for name in ("mp_lda", "nh_rattle"):
        moved = []
        for p in (rev, nrev):
            dH = H(integrate(p, y0, (0.0, n * h), method=name, steps=n, backend="numpy").y) - H(y0)
            moved.append(np.max(np.abs(dH[-n // 5:].mean(0) - dH[1:n // 5].mean(0))))
        assert moved[0] < 1e-4 and moved[1] > 1e-2, (name, moved)


@pytest.mark.parametrize("which, name", [("sleigh", "lie_rattle_exp"), ("so3", "lie_rattle_cay"),
                                         ("se3", "lie_rattle_cay")])
def test_compiled_lie_rattle_equals_the_numpy_loop(which, name):
    """The compiled dlas loop with N = 1, the carried state mu^+ and the reflection 2 P - 1 (run as plain
    Python) is the Lie-group RATTLE's numpy map, and hands back the multiplier at the end."""
    from integrators.reference.nonholonomic import compiled
    from integrators.reference.stepping import make_stepper
    p = {"sleigh": sleigh, "so3": _suslov_so3, "se3": _se3}[which]()
    w = {"sleigh": [[0.3, 0.0, 1.2], [-0.5, 0.0, 0.4]], "so3": [[1.0, 0.5, 0.0], [0.2, -1.0, 0.0]],
         "se3": [[1.0, 0.5, 0.0, 0.3, 0.0, 0.2], [0.1, -0.4, 0.0, 0.2, 0.0, -0.3]]}[which]
    m0_ = np.asarray(w) @ p.discrete.I
    ref_st = make_stepper(METHODS[name], p)
    ref = ref_st.run(m0_, 0.0, 0.05, 20, 1, "numpy")
    st = make_stepper(METHODS[name], p)
    assert st.compiled_reason is None
    got, lam = compiled.run_dlas(st, m0_, 0.0, 0.05, 20, 1, None, lam0=st._lambda(m0_))
    np.testing.assert_allclose(got.y, ref.y, rtol=0, atol=2e-14)
    np.testing.assert_allclose(lam, ref_st._memory[-1][1], rtol=0, atol=1e-12)
