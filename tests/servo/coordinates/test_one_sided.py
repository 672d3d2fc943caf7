"""One-sided constraints: Kozlov's one-sided Chaplygin sleigh (Kozlov 2019, section 3), several
constraints W q' + h <= 0 (Salnikova et al. 2023), one-sided servo-constraints (Kozlov 2019, sect. 6).

Expected values: the closed-form straight line and circle of Kozlov's section 3 (derived in the
comments), the event times pi/|w0|, and for several constraints the realization by strong one-sided
friction (an independent model that converges to the one-sided motion, Salnikova et al.).
"""

import numpy as np
import pytest
import sympy as sp
from sympy.physics.mechanics import dynamicsymbols

from servo import ActiveSetError, InitialConstraintError, LagrangianError, LagrangianSystem

x, y, phi = dynamicsymbols("x y phi")
A_BLADE = [-sp.sin(phi), sp.cos(phi), 0]           # v = (a, q') transverse velocity of the blade
V_SLEIGH = -x.diff() * sp.sin(phi) + y.diff() * sp.cos(phi)
U0, W0 = 1.0, -0.7


@pytest.fixture(scope="module")
def sleigh():
    L = LagrangianSystem((x.diff() ** 2 + y.diff() ** 2 + phi.diff() ** 2) / 2, 0, [x, y, phi])
    return L, L.constrain(V_SLEIGH >= 0, model="one_sided")


def exact_sleigh(t):
    """v >= 0, start v = 0, u = U0 > 0, w = W0 < 0: leave at once, straight line x = U0 t until
    t_j = pi/|W0|, then on the circle x = x_j - (U0/W0) sin(W0 t), y = (U0/W0)(cos(W0 t) + 1)
    (velocity u (cos phi, sin phi) with u = -U0 after the half turn)."""
    tj = np.pi / abs(W0)
    xs = np.where(t < tj, U0 * t, U0 * tj - (U0 / W0) * np.sin(W0 * t))
    ys = np.where(t < tj, 0.0, (U0 / W0) * (np.cos(W0 * t) + 1))
    return np.stack([xs, ys, W0 * t], -1)


def test_one_sided_sleigh_forward(sleigh):
    L, c = sleigh
    res = c.simulate([0, 0, 0], [U0, 0, W0], 12.0, steps=240)
    assert [e[1:] for e in res.events] == [("leave", 0), ("join", 0)]
    assert res.events[0][0] == 0.0
    assert abs(res.events[1][0] - np.pi / abs(W0)) < 1e-10
    assert np.abs(res.q - exact_sleigh(res.t)).max() < 1e-8
    on = res.t > np.pi / abs(W0) + 1e-9
    centre = np.array([U0 * np.pi / abs(W0), U0 / W0])
    r = np.linalg.norm(res.q[on, :2] - centre, axis=-1)
    np.testing.assert_allclose(r, U0 / abs(W0), atol=1e-8)        # radius V/|w|
    np.testing.assert_allclose(res.lam[on, 0], -W0 * U0, atol=1e-8)  # lambda = w u > 0: never leaves
    assert np.all(res.lam[~on, 0] == 0)
    # before the join the speed is constant and the blade turns uniformly
    np.testing.assert_allclose(res.qd[~on, :2], [[U0, 0]] * (~on).sum(), atol=1e-10)


def test_one_sided_sleigh_not_reversible(sleigh):
    """Reversing the velocity at a point of the circle: the sleigh stays on the circle (no leave event)
    instead of retracing the straight line."""
    L, c = sleigh
    fwd = c.simulate([0, 0, 0], [U0, 0, W0], 8.0, steps=80)
    q1, qd1 = fwd.q[-1], fwd.qd[-1]
    back = c.simulate(q1, -qd1, 8.0, steps=80)
    assert back.events == []
    centre = np.array([U0 * np.pi / abs(W0), U0 / W0])
    np.testing.assert_allclose(np.linalg.norm(back.q[:, :2] - centre, axis=-1), U0 / abs(W0), atol=1e-8)
    assert np.all(back.lam[:, 0] > 0.5)
    assert np.linalg.norm(back.q[-1, :2]) > 1.0  # does not return to the start (0, 0)
    # the two-sided (reversible) nonholonomic sleigh, run back from the start, is a different motion
    two = L.constrain(V_SLEIGH).simulate([0, 0, 0], [U0, 0, W0], 1.0, steps=10)
    assert np.abs(two.q[:, :2] - fwd.q[:11, :2]).max() > 1e-2


def test_matrix_form_equals_relational_form(sleigh):
    L, c = sleigh
    W = sp.Matrix([[sp.sin(phi), -sp.cos(phi), 0]])          # W q' + h <= 0 is -v <= 0
    cm = L.constrain((W, [0]), model="one_sided")
    a = c.simulate([0, 0, 0.2], [U0, 0.3, W0], 6.0, steps=30)
    b = cm.simulate([0, 0, 0.2], [U0, 0.3, W0], 6.0, steps=30)
    assert np.abs(a.q - b.q).max() < 1e-12
    assert [e[1:] for e in a.events] == [e[1:] for e in b.events] == [("join", 0)]


def test_one_sided_servo_first_kind(sleigh):
    """Control lambda M with lambda >= 0, M = (-sin phi, cos phi, 1/2): (A^-1 M, df/dq') = 1 > 0.
    After joining, the motion is the two-sided servo-constraint of the 1st kind with the same M."""
    L, _ = sleigh
    M = [-sp.sin(phi), sp.cos(phi), sp.Rational(1, 2)]
    c = L.constrain(V_SLEIGH >= 0, model="one_sided", control=M)
    assert sp.simplify(c.realizability() - 1) == 0
    res = c.simulate([0, 0, 0], [U0, 0, W0], 9.0, steps=90)
    kinds = [e[1] for e in res.events]
    assert kinds[:2] == ["leave", "join"] and abs(res.events[1][0] - np.pi / abs(W0)) < 1e-10
    assert res.lam.min() >= -1e-9
    v = -res.qd[:, 0] * np.sin(res.q[:, 2]) + res.qd[:, 1] * np.cos(res.q[:, 2])
    assert v.min() > -1e-9
    tj = res.events[1][0]
    seg = [s for s in res.segments if s[0] == tj][0]
    yj = seg[2]                                             # the state at the join
    assert len(res.events) == 2 and seg[1] == 9.0          # stays on the constraint after joining
    after = res.t >= tj
    two = L.constrain(V_SLEIGH, model="servo1", control=M).simulate(yj[:3], yj[3:], 9.0, t0=tj, steps=20)
    np.testing.assert_allclose(two.q[-1], res.q[-1], atol=1e-8)
    np.testing.assert_allclose(two.qd[-1], res.qd[-1], atol=1e-8)
    np.testing.assert_allclose(res.control_sign[after], 1.0)


def test_one_sided_servo_first_kind_sign_rule(sleigh):
    """Kozlov (2019), section 6: if (A^-1 M, df/dq') < 0 the sign of M is changed. M = (sin phi, -cos phi, 0)
    = -df/dq' gives (A^-1 M, df/dq') = -1, so the motion is the Cetaev one-sided sleigh (M = df/dq'):
    leave at once, join at pi/|w0|, lambda = w0 u0 sign-corrected >= 0 after it, control_sign = -1."""
    L, c = sleigh
    flip = L.constrain(V_SLEIGH >= 0, model="one_sided", control=[sp.sin(phi), -sp.cos(phi), 0])
    assert sp.simplify(flip.realizability() + 1) == 0
    a = flip.simulate([0, 0, 0], [U0, 0, W0], 8.0, steps=40)
    b = c.simulate([0, 0, 0], [U0, 0, W0], 8.0, steps=40)
    assert [e[1:] for e in a.events] == [("leave", 0), ("join", 0)]
    assert abs(a.events[1][0] - np.pi / abs(W0)) < 1e-10
    np.testing.assert_allclose(a.q, b.q, atol=1e-10)
    on = a.t > np.pi / abs(W0) + 1e-9
    np.testing.assert_allclose(a.lam[on, 0], -W0 * U0, atol=1e-8)
    np.testing.assert_allclose(a.control_sign[:, 0], -1.0)


qa, qb = dynamicsymbols("qa qb")


@pytest.fixture(scope="module")
def oscillator():
    """A 2-d oscillator with two one-sided constraints W(q) q' + h <= 0 (Salnikova et al., eq. (1))."""
    L = LagrangianSystem((qa.diff() ** 2 + qb.diff() ** 2) / 2, (qa ** 2 + 2 * qb ** 2) / 2, [qa, qb])
    W = sp.Matrix([[1, sp.Rational(3, 10) * sp.sin(qa)], [-sp.Rational(1, 5), 1]])
    h = [-sp.Rational(1, 2), -sp.Rational(2, 5)]
    return L, W, h, L.constrain((W, h), model="one_sided")


def _state(seed):
    rng = np.random.default_rng(seed)
    q0 = rng.uniform(-1, 1, 2)
    qd0 = rng.uniform(-0.3, 0.3, 2)
    return q0, qd0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_two_one_sided_constraints_shockless(oscillator, seed):
    L, W, h, c = oscillator
    q0, qd0 = _state(seed)
    res = c.simulate(q0, qd0, 6.0, steps=120)
    joins = [e for e in res.events if e[1] == "join"]
    assert joins, res.events
    f = c.constraint_values(res.t, res.q, res.qd)
    assert f.min() > -1e-8
    assert res.lam.min() > -1e-8
    assert np.abs(res.lam * f).max() < 1e-8                       # complementarity
    # shockless (Salnikova et al., section 2): no velocity jump at the events. On the grid of step dt
    # |q'(t_j+1) - q'(t_j)| <= dt max |q''|, with q'' = a0 + B lambda from the reported multipliers;
    # a shock would make some difference O(1) instead of O(dt)
    a0, B, _, _, _ = c._pieces(res.t, res.q, res.qd)
    acc = a0 + np.einsum("kij,kj->ki", B, res.lam)
    dt = res.t[1] - res.t[0]
    assert np.abs(np.diff(res.qd, axis=0)).max() <= 1.2 * dt * np.abs(acc).max()
    for (ta, tb, ya, yb, act), nxt in zip(res.segments, res.segments[1:]):
        assert tb == nxt[0] and np.array_equal(yb, nxt[2])


def test_two_one_sided_constraints_friction_limit(oscillator):
    """Independent model: one-sided viscous friction F = -N sum_i min(f_i, 0) df_i/dq' (Salnikova et al.,
    section 3) converges to the one-sided motion, velocities included, as N grows."""
    L, W, h, c = oscillator
    q0, qd0 = _state(0)
    res = c.simulate(q0, qd0, 4.0, steps=80)
    assert any(e[1] == "join" for e in res.events)
    errs = []
    for N in (100.0, 1000.0):
        forces = [0, 0]
        for i in range(2):
            fi = -(W[i, 0] * qa.diff() + W[i, 1] * qb.diff() + h[i])
            for j in range(2):
                forces[j] += sp.Piecewise((-N * fi, fi < 0), (0, True)) * (-W[i, j])
        Lf = LagrangianSystem(L.T, L.V, L.q, forces=forces)
        rf = Lf.simulate(q0, qd0, 4.0, steps=80, method="BDF", rtol=1e-8, atol=1e-10)
        errs.append(np.abs(rf.qd - res.qd).max())
    assert errs[1] < errs[0] / 4 and errs[1] < 0.02, errs


def test_error_paths(sleigh, oscillator):
    L, c = sleigh
    with pytest.raises(InitialConstraintError, match=r"-1\.000e\+00 < 0"):
        c.simulate([0, 0, 0], [0, -1, 0], 1.0)
    with pytest.raises(LagrangianError, match="forward in time"):
        c.simulate([0, 0, 0], [U0, 0, W0], -1.0)
    with pytest.raises(LagrangianError, match="must be a relation"):
        L.constrain(V_SLEIGH, model="one_sided")
    with pytest.raises(LagrangianError, match="does not depend on q'"):
        L.constrain(x >= 0, model="one_sided")
    # a control along the blade, (A^-1 M, df/dq') = 0: no lambda keeps v >= 0 at the join
    bad = L.constrain(V_SLEIGH >= 0, model="one_sided", control=[sp.cos(phi), sp.sin(phi), 0])
    with pytest.raises(ActiveSetError, match="no active set"):
        bad.simulate([0, 0, 0], [U0, 0, W0], 6.0)
    # a scalar where a covector was expected names the expected shape
    with pytest.raises(LagrangianError, match=r"1 covector\(s\) of n = 3 entries .*got the scalar"):
        L.constrain(V_SLEIGH >= 0, model="one_sided", control=sp.sin(phi))
    with pytest.raises(LagrangianError, match=r"one covector per constraint needed, 1 given for k = 2"):
        L.constrain([V_SLEIGH >= 0, x.diff() >= 0], model="one_sided", control=[[1, 0, 0]])
    with pytest.raises(LagrangianError, match="scipy method"):
        c.simulate([0, 0, 0], [U0, 0, W0], 1.0, method="rk4")
    with pytest.raises(LagrangianError, match="shape"):
        L.constrain((sp.Matrix([[1, 0]]), [0]), model="one_sided")


def test_one_sided_inclined_skate_leave_and_join_times():
    """Inclined skate (Kozlov's lectures) with the one-sided constraint -(x' sin phi - y' cos phi) >= 0 from rest,
    phi' = w. Two-sided, lambda_f = 2 sin(wt) > 0 until t = pi/w, where the skate is at rest: it leaves then,
    falls freely with f = s sin(ws) > 0 (s = t - pi/w) and rejoins at t = 2 pi/w. Checked to 1e-10 in time."""
    L = LagrangianSystem((x.diff() ** 2 + y.diff() ** 2 + phi.diff() ** 2) / 2, -x, [x, y, phi])
    c = L.constrain(-(x.diff() * sp.sin(phi) - y.diff() * sp.cos(phi)) >= 0, model="one_sided")
    w = 1.5
    res = c.simulate([0, 0, 0], [0, 0, w], 2.5 * np.pi / w, steps=100)
    assert [e[1:] for e in res.events[:2]] == [("leave", 0), ("join", 0)], res.events
    assert abs(res.events[0][0] - np.pi / w) < 1e-10 and abs(res.events[1][0] - 2 * np.pi / w) < 1e-10
    tt = res.t
    first = tt <= np.pi / w
    exact = np.stack([np.sin(w * tt) ** 2 / (2 * w ** 2), (w * tt - np.sin(2 * w * tt) / 2) / (2 * w ** 2)], -1)
    assert np.abs(res.q[first, :2] - exact[first]).max() < 1e-9
    np.testing.assert_allclose(res.lam[first, 0], 2 * np.sin(w * tt[first]), atol=1e-8)
    free = (tt > np.pi / w + 1e-9) & (tt < 2 * np.pi / w)  # a grid point within round-off of the event is ambiguous
    s = tt[free] - np.pi / w
    np.testing.assert_allclose(res.q[free, 0], s ** 2 / 2, atol=1e-9)  # x(pi/w) = 0 and the skate is at rest
    np.testing.assert_allclose(res.q[free, 1], np.pi / (2 * w ** 2), atol=1e-9)
    assert np.all(res.lam[free] == 0)


@pytest.mark.parametrize("w0", [-0.9, -1.0, -1.3, -2.0])
def test_join_not_stepped_over_on_straight_line(sleigh, w0):
    """Free motion is polynomial in t, so an uncapped DOP853 step jumps over the arch v = u0 sin(|w0| t) and
    misses the join; the join must come at t = pi/|w0| (Kozlov 2019, sect. 3) for every w0."""
    _, c = sleigh
    res = c.simulate([0.0, 0.0, 0.0], [1.0, 0.0, w0], 8.0, steps=40)
    joins = [t for t, kind, _ in res.events if kind == "join"]
    assert joins, res.events
    assert abs(joins[0] - np.pi / abs(w0)) < 1e-10
