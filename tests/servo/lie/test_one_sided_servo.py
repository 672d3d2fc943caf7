"""One-sided servo-constraint of the second kind on SE(2) (Kozlov (2019), section 7; servo.lie.one_sided_servo).

Expected values come from two independent sources:
* the same system written in coordinates (x, y, theta), T = M (x'^2 + y'^2)/2 + J theta'^2/2, the body
  velocities u = x' cos theta + y' sin theta, v = -x' sin theta + y' cos theta, w = theta', the constraint
  v >= 0 and T* = T + lambda (b_u u + b_v v + b_w w) (``model="one_sided_servo2"`` of servo.coordinates,
  itself checked against a hand-derived motion): Lagrange's equations in coordinates versus the
  Euler-Poincare equations on se(2)*;
* the Casimir p1^2 + p2^2 of se(2)*: kept by m while free (m' = ad*_w m) and by z = m + lambda b while
  held (z' = ad*_w z).
"""

import numpy as np
import pytest
import sympy as sp
from sympy.physics.mechanics import dynamicsymbols

from liegroups import named
from servo import ConstraintViolationError, LagrangianSystem, ServoError, UnrealizableConstraintError
from servo.lie.one_sided_servo import OneSidedServoSecondKind

M, J = 1.0, 0.37
B = np.array([0.27, -1.0, -0.46])
M0 = np.array([-0.97, 0.2, 0.63])


@pytest.fixture(scope="module")
def runs():
    s = OneSidedServoSecondKind(named.se2(), np.diag([M, M, J]), a=[0, 1, 0], b=B)
    r = s.simulate(list(M0) + [0.0], 9.0, steps=90)
    x, y, th = dynamicsymbols("x y theta")
    u = x.diff() * sp.cos(th) + y.diff() * sp.sin(th)
    v = -x.diff() * sp.sin(th) + y.diff() * sp.cos(th)
    L = LagrangianSystem(M * (x.diff() ** 2 + y.diff() ** 2) / 2 + J * th.diff() ** 2 / 2, 0, [x, y, th])
    c = L.constrain(v >= 0, model="one_sided_servo2", control=B[0] * u + B[1] * v + B[2] * th.diff())
    w0 = M0 / [M, M, J]
    rc = c.simulate([0, 0, 0], w0, 9.0, steps=90)
    return s, r, rc


def test_against_coordinates(runs):
    s, r, rc = runs
    assert s.realizability() == pytest.approx(-1 / M)
    kinds = [e[1] for e in r.events]
    assert kinds == ["join", "leave", "join", "leave"], r.events
    assert [e[1] for e in rc.events] == kinds
    np.testing.assert_allclose([e[0] for e in r.events], [e[0] for e in rc.events], atol=1e-9)
    q, qd = rc.q, rc.qd
    U = qd[:, 0] * np.cos(q[:, 2]) + qd[:, 1] * np.sin(q[:, 2])
    V = -qd[:, 0] * np.sin(q[:, 2]) + qd[:, 1] * np.cos(q[:, 2])
    np.testing.assert_allclose(r.w, np.stack([U, V, qd[:, 2]], -1), atol=1e-8)
    np.testing.assert_allclose(r.lam, rc.lam[:, 0], atol=1e-8)


def test_sign_conditions_and_casimir(runs):
    s, r, _ = runs
    assert r.lam.min() >= -1e-12 and r.w[:, 1].min() >= -1e-9        # lambda >= 0, (a, w) >= 0
    assert np.all(r.lam[~r.held] == 0) and np.abs(r.w[r.held, 1]).max() < 1e-9
    z = r.y[:, :3] + r.lam[:, None] * B
    for mask, vec in ((~r.held, r.y[:, :3]), (r.held, z)):
        # each phase is a run of consecutive samples; the Casimir is constant within it
        idx = np.nonzero(mask)[0]
        for part in np.split(idx, np.nonzero(np.diff(idx) > 1)[0] + 1):
            c = vec[part, 0] ** 2 + vec[part, 1] ** 2
            assert np.abs(c - c[0]).max() < 1e-9


def test_error_paths():
    with pytest.raises(UnrealizableConstraintError, match="use -b"):
        OneSidedServoSecondKind(named.se2(), np.diag([M, M, J]), a=[0, 1, 0], b=-B)
    s = OneSidedServoSecondKind(named.se2(), np.diag([M, M, J]), a=[0, 1, 0], b=B)
    with pytest.raises(ConstraintViolationError, match="violates the one-sided constraint"):
        s.simulate([1.0, -0.5, 0.0, 0.0], 1.0)
    with pytest.raises(ServoError, match="must be >= 0, and 0 unless"):
        s.simulate([1.0, 0.5, 0.0, 1.0], 1.0)
    with pytest.raises(ServoError, match="forward in time"):
        s.simulate(list(M0) + [0.0], -1.0)
