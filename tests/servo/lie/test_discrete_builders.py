"""The servo systems on Lie groups hand the discrete schemes of integrators.reference.nonholonomic their data."""

import numpy as np
import pytest

import liegroups
from liegroups import named
from servo.errors import ServoError
from servo.lie import Nonholonomic, ServoFirstKind, ServoSecondKind, Vakonomic

M, IC, A = 1.0, 0.5, 0.7
INERTIA = np.array([[M, 0, 0], [0, M, M * A], [0, M * A, IC + M * A * A]])


def test_nonholonomic_problem_carries_the_data_and_simulates_by_name():
    s = Nonholonomic(named.se2(), INERTIA, a=[0, 1, 0])
    d = s.problem().discrete
    assert d.structure == "lie_nonholonomic" and d.group is liegroups.SE2
    np.testing.assert_array_equal(d.I, INERTIA)
    # the sleigh's exact solution u(t) = c tanh(a m c t / J + artanh(u0/c)) (tests/integrators/test_nonholonomic.py)
    J, u0, w0 = IC + M * A * A, 0.3, 1.2
    E = 0.5 * M * u0 ** 2 + 0.5 * J * w0 ** 2
    c = np.sqrt(2 * E / M)
    u = c * np.tanh(A * M * c * 2.0 / J + np.arctanh(u0 / c))
    for method in ("dlas_exp", "dlas_cay", "lie_rattle_exp", "lie_rattle_cay"):
        r = s.simulate(np.array([u0, 0, w0]) @ INERTIA, 2.0, steps=400, method=method)
        assert r.status == 0 and r.method == method
        assert abs(r.w[-1, 0] - u) < 1e-4                  # second order: error ~ 1e-5 at h = 0.005
        assert np.max(np.abs(r.w[:, 1])) < 1e-12


def test_second_kind_problem_carries_controls():
    s = ServoSecondKind(named.so3(), [1.0, 2.0, 3.0], a=[1, 0, 0], b=[1, 1, 1])
    d = s.problem().discrete
    assert d.structure == "lie_second_kind"
    np.testing.assert_array_equal(d.B, [[1, 1, 1]])
    assert Vakonomic(named.so3(), [1.0, 2.0, 3.0], a=[1, 1, 0]).problem().discrete.structure == "lie_second_kind"


def test_first_kind_with_other_control_has_no_discrete_principle():
    s = ServoFirstKind(named.so3(), [1.0, 2.0, 3.0], a=[1, 0, 0], b=[1, 1, 0])
    assert not hasattr(s.problem(), "discrete")
    with pytest.raises(ServoError, match="not variational"):
        s.discrete_data()
    from integrators import MethodError
    with pytest.raises(MethodError, match="problem.discrete"):
        s.simulate([0.0, 1.0, 1.0], 1.0, method="dlas_exp")
