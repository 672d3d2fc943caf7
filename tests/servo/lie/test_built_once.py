"""What depends only on a system is built once per system (servo.lie.built_once), and a changed parameter is
never served a stale problem.

Expected values: a system built afresh from the new parameters (bit for bit), and the formulas of the
models written out here from the new parameters: H = (m, I^-1 m)/2; the first-kind multiplier
lambda = -(I^-1 a, ad*_w m)/(I^-1 a, b); the second-kind velocity matrix
W = I^-1 - (I^-1 b)(I^-1 a)^T/(a, I^-1 b) (Kozlov's lectures on servo-constraints).
"""

import numpy as np
import pytest

import servo.lie.euler_poincare as ep
from integrators import integrate
from liegroups import named
from servo import EulerPoincare, Nonholonomic, ServoFirstKind, ServoSecondKind
from servo.errors import InertiaError, UnrealizableConstraintError

I1 = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.0]])
I2 = np.diag([1.0, 3.0, 0.5])
M0 = np.array([0.4, -0.7, 1.1])


def _coad(alg, w, m):
    """(ad*_w m)_j = sum_{i,k} w_i C[i, j, k] m_k, written out."""
    return np.einsum("i,ijk,k->j", w, alg.structure_constants, m)


def test_problem_and_choice_built_once_and_used_by_simulate(monkeypatch):
    s = EulerPoincare(named.so4(), np.arange(1.0, 7.0))
    built, seen = [], []
    real_build, real_integrate = EulerPoincare._problem, ep.integrate
    monkeypatch.setattr(EulerPoincare, "_problem", lambda self: built.append(1) or real_build(self))
    monkeypatch.setattr(ep, "integrate", lambda P, *a, **k: seen.append(P) or real_integrate(P, *a, **k))
    m0 = np.linspace(0.2, 1.2, 6)
    first = s.simulate(m0, 1.0, steps=50)
    second = s.simulate(m0, 1.0, steps=50)
    assert s.default_method == first.method
    assert len(built) == 1 and seen[0] is seen[1] is s.problem()
    assert np.array_equal(first.y, second.y)
    # integrate on the kept problem is the same run as simulate
    direct = real_integrate(s.problem(), m0, (0.0, 1.0), method=first.method, steps=50, rtol=1e-12, atol=1e-14)
    assert np.array_equal(direct.y, first.y)


def test_assigned_inertia_gives_a_new_problem_and_the_old_one_keeps_its_own():
    s = EulerPoincare(named.so3(), I1)
    old = s.problem()
    before = s.simulate(M0, 2.0, steps=20)
    s.I = I2
    assert s.problem() is not old
    after = s.simulate(M0, 2.0, steps=20)
    fresh = EulerPoincare(named.so3(), I2).simulate(M0, 2.0, steps=20)
    assert np.array_equal(after.y, fresh.y) and np.max(np.abs(after.y - before.y)) > 1e-2
    # the energy is that of the new inertia (independent formula), and it is kept
    H2 = 0.5 * np.einsum("ki,ij,kj->k", after.y, np.linalg.inv(I2), after.y)
    assert np.allclose(H2, 0.5 * M0 @ np.linalg.solve(I2, M0), rtol=1e-10)
    # the problem handed out before the change still integrates the old system, whole (velocity and matrix)
    again = integrate(old, M0, (0.0, 2.0), method=before.method, steps=20, rtol=1e-12, atol=1e-14)
    assert np.array_equal(again.y, before.y)
    assert np.allclose(old.velocity_matrix, np.linalg.inv(I1), rtol=1e-14)
    assert np.allclose(old.velocity(M0), np.linalg.solve(I1, M0), rtol=1e-14)


def test_assigned_inverse_inertia_and_linear_term():
    K = np.diag([1.0, 0.5, 0.0, 0.0, 0.0, 0.0]) + np.diag([0.0, 0.0, 0.25, 0.0, 0.0, 0.0])
    top = EulerPoincare(named.se3(), inverse_inertia=K, linear_term=[0, 0, 0, 0, 0, 1.0])
    m0 = np.array([0.1, 0.2, 0.3, 0.0, 0.6, 0.8])
    top.c = [0, 0, 0, 0.5, 0, 0]
    fresh = EulerPoincare(named.se3(), inverse_inertia=K, linear_term=[0, 0, 0, 0.5, 0, 0])
    assert np.array_equal(top.velocity(m0), K @ m0 + [0, 0, 0, 0.5, 0, 0])
    assert np.array_equal(top.simulate(m0, 1.0, steps=10).y, fresh.simulate(m0, 1.0, steps=10).y)
    top.c = None                              # no linear term: the velocity matrix is K again
    assert not top.has_linear_term and np.array_equal(top.problem().velocity_matrix, K)
    s = EulerPoincare(named.so3(), I1)
    s.Iinv = np.linalg.inv(I2)                # given as K = I^-1 from now on
    assert s.I is None and np.allclose(s.velocity(M0), np.linalg.solve(I2, M0), rtol=1e-14)


def test_assigned_b_first_kind_multiplier_follows_the_new_control():
    alg = named.so4()
    Id = np.arange(1.0, 7.0)
    a = np.array([1.0, 0, 0, 0, 0, 1.0])
    b1, b2 = np.array([0.5, 1.0, 0, 0, 1.0, 0]), np.array([1.0, 1.0, 0, 0, 0, 0])
    s = ServoFirstKind(alg, Id, a=a, b=b1)
    m0 = s.state_from(w=np.array([0.3, 0.1, -0.2, 0.4, 0.2, 0.5]), project=True)
    before = s.simulate(m0, 2.0, steps=20)
    s.b = b2
    Iinv = np.diag(1.0 / Id)
    w = Iinv @ m0
    lam = -(Iinv @ a) @ _coad(alg, w, m0) / ((Iinv @ a) @ b2)
    assert s.multiplier(m0) == pytest.approx(lam, rel=1e-13)
    assert np.allclose(s.problem().rhs(0.0, m0), _coad(alg, w, m0) + lam * b2, rtol=1e-13, atol=1e-15)
    after = s.simulate(m0, 2.0, steps=20)
    fresh = ServoFirstKind(alg, Id, a=a, b=b2).simulate(m0, 2.0, steps=20)
    assert np.array_equal(after.y, fresh.y) and np.max(np.abs(after.y - before.y)) > 1e-3


def test_assigned_b_second_kind_velocity_matrix_follows():
    alg = named.so3()
    a, b1, b2 = np.array([0.0, 0.0, 1.0]), np.array([0.2, 0.1, 1.0]), np.array([-0.5, 0.4, 1.0])
    s = ServoSecondKind(alg, I1, a=a, b=b1)
    W1 = s.problem().velocity_matrix.copy()
    s.b = b2
    Ki = np.linalg.inv(I1)
    W = Ki - np.outer(Ki @ b2, Ki @ a) / (a @ Ki @ b2)
    assert np.allclose(s.problem().velocity_matrix, W, rtol=1e-13, atol=1e-15)
    assert np.max(np.abs(W - W1)) > 1e-2
    s.a = [0.0, 1.0, 1.0]                      # and the constraint
    a2 = np.array([0.0, 1.0, 1.0])
    W = Ki - np.outer(Ki @ b2, Ki @ a2) / (a2 @ Ki @ b2)
    assert np.allclose(s.problem().velocity_matrix, W, rtol=1e-13, atol=1e-15)


def test_integrals_and_reduced_system_follow_an_assigned_inertia():
    s = EulerPoincare(named.so3(), I1)
    E1 = {F.name: F for F in s.first_integrals()}
    s.I = I2
    E2 = {F.name: F for F in s.first_integrals()}
    k = "energy"
    assert E2[k](M0) == pytest.approx(0.5 * M0 @ np.linalg.solve(I2, M0), rel=1e-13)
    assert E1[k](M0) == pytest.approx(0.5 * M0 @ np.linalg.solve(I1, M0), rel=1e-13)   # the old one keeps I1


def test_bad_assignments_are_refused_and_leave_the_system_as_it_was():
    s = ServoFirstKind(named.so3(), I1, a=[0.0, 0.0, 1.0], b=[0.2, 0.1, 1.0])
    P = s.problem()
    with pytest.raises(InertiaError, match="positive definite"):
        s.I = np.diag([1.0, -2.0, 3.0])
    c = np.linalg.solve(I1, [0.0, 0.0, 1.0])     # I^-1 a
    with pytest.raises(UnrealizableConstraintError):
        s.b = [c[2], 0.0, -c[0]]                # (I^-1 a, b) = c0 c2 - c2 c0 = 0
    assert s.problem() is P and np.array_equal(s.I, I1)
    with pytest.raises(AttributeError, match="derived from the system's parameters"):
        s.Iinv = np.eye(3)
    with pytest.raises(AttributeError, match="derived"):
        s.IinvA = np.eye(3)[:1]
    with pytest.raises(ValueError, match="read-only"):
        s.I[0, 0] = 5.0
    with pytest.raises(ValueError, match="read-only"):
        s.b[0] = 5.0
    assert s.problem() is P
    nh = Nonholonomic(named.so3(), I1, a=[0.0, 0.0, 1.0])
    with pytest.raises(AttributeError, match="derived"):
        nh.b = [1.0, 0.0, 0.0]                 # b = a in the nonholonomic model
    nh.a = [0.0, 1.0, 0.0]
    assert np.array_equal(nh.b, [0.0, 1.0, 0.0])


def test_problem_changed_in_place_does_not_change_the_system():
    s = ServoFirstKind(named.so3(), I1, a=[0.0, 0.0, 1.0], b=[0.2, 0.1, 1.0])
    P = s.problem()
    P.velocity_matrix[0, 0] = 99.0
    P.linear_invariants[0] = [1.0, 0.0, 0.0]
    assert np.allclose(s.Iinv, np.linalg.inv(I1), rtol=1e-14)
    assert np.allclose(s.IinvA[0], np.linalg.solve(I1, [0.0, 0.0, 1.0]), rtol=1e-14)


def test_name_travels_to_the_problem_and_a_copy_builds_its_own():
    import copy

    s = EulerPoincare(named.so3(), I1, name="first")
    assert s.problem().name == "first"
    s.name = "second"
    assert s.problem().name == "second"
    t = copy.copy(s)
    assert t.problem() is not s.problem() and t.problem().velocity.__self__ is not s
    assert np.array_equal(t.simulate(M0, 1.0, steps=5).y, s.simulate(M0, 1.0, steps=5).y)
