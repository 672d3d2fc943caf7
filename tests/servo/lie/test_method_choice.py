"""The default integrator of ``simulate``: the table servo.lie.method_choice.METHOD_TABLE.

Expected values: the Casimirs are computed here from z (|z|^2 on so(3)*, |Gamma|^2 and (M, Gamma) on
se(3)*), the constraint (a, w) from the velocities, and the reference trajectory is scipy's DOP853 at
rtol 1e-13, atol 1e-15 on the problem's right-hand side (an independent solver).
"""

import numpy as np
import pytest
import scipy.integrate

from integrators.methods import get_method, preserved
from liegroups import named
from servo import EulerPoincare, Nonholonomic, ServoError, ServoFirstKind, ServoSecondKind
from servo.lie.method_choice import ADAPTIVE_OPTIONS, METHOD_TABLE, choose, needs


def _heavy_top():
    K = np.zeros((6, 6))
    K[:3, :3] = np.diag([1.0, 0.5, 1 / 3.5])
    s = EulerPoincare(named.se3(), inverse_inertia=K, linear_term=[0, 0, 0, 0.2, -0.4, 1.4])
    return s, np.array([0.3, 0.1, 2.0, 0.0, 0.38941834, 0.92106099]), \
        lambda z: np.stack([np.sum(z[..., 3:] ** 2, -1), np.sum(z[..., :3] * z[..., 3:], -1)], -1)


def _systems():
    so3 = named.so3()
    I = np.diag([2.0, 1.0, 0.5])
    sq = lambda z: np.sum(z * z, axis=-1, keepdims=True)  # noqa: E731  |z|^2, the Casimir of so(3)*
    free = EulerPoincare(so3, [2.0, 1.0, 0.5])
    servo2 = ServoSecondKind(so3, I, a=[0, 0, 1], b=[0, 0.3, 1])
    suslov = Nonholonomic(so3, I, a=[0, 0, 1])
    servo1 = ServoFirstKind(named.se2(), np.diag([1.0, 1.5, 0.8]), a=[0, 1, 0], b=[0.5, 1, -0.5])
    return {
        "free so(3)": (free, np.array([0.4, 0.1, 0.9]), sq),
        "heavy top se(3)*": _heavy_top(),
        "servo 2nd kind so(3)": (servo2, servo2.state_from(w=[1.0, 0.5, 0.0], lam=0.3), sq),
        "Suslov so(3)": (suslov, suslov.state_from(w=[1.0, 0.5, 0.0]), None),
        "servo 1st kind se(2)": (servo1, servo1.state_from(w=[1.0, 0.0, 0.5]), None),
    }


SYSTEMS = _systems()


def test_the_table_is_data_and_says_what_each_row_keeps():
    assert set(METHOD_TABLE) == {"casimirs", "linear_invariants"}
    assert needs(SYSTEMS["free so(3)"][0].problem()) == "casimirs"
    assert needs(SYSTEMS["servo 2nd kind so(3)"][0].problem()) == "casimirs"
    assert needs(SYSTEMS["Suslov so(3)"][0].problem()) == "linear_invariants"
    assert choose(SYSTEMS["Suslov so(3)"][0].problem()) == ("rk853", ADAPTIVE_OPTIONS)
    assert SYSTEMS["servo 1st kind se(2)"][0].default_method == "rk853"
    assert SYSTEMS["heavy top se(3)*"][0].default_method == "rk853_projected"
    with pytest.raises(ServoError, match="coadjoint"):
        needs(type("P", (), {"kind": "ode"})())


@pytest.mark.parametrize("name", sorted(SYSTEMS))
@pytest.mark.parametrize("grid", [True, False])
def test_default_keeps_what_the_claims_need_and_reaches_its_accuracy(name, grid):
    s, y0, casimirs = SYSTEMS[name]
    problem = s.problem()
    method, _ = choose(problem)
    assert needs(problem) in preserved(get_method(method, problem), problem)  # declared
    T = 10.0
    res = s.simulate(y0, T, steps=1000 if grid else None)
    assert res.method == method and res.status == 0
    if grid:  # the grid of `steps` from the continuous extension, the pair's own steps are few
        assert len(res.t) == 1001
        np.testing.assert_allclose(res.t, np.linspace(0.0, T, 1001), rtol=0, atol=1e-12)
        assert res.nsteps < 300
    else:
        assert res.nsteps < 300  # the pair chooses its own (few) steps
    z = np.asarray(res.z)
    if casimirs is not None:  # kept to round-off
        C = casimirs(z)
        assert np.max(np.abs(C - C[0])) <= 1e-14 * max(1.0, float(np.max(np.abs(C[0])))) * 10
    for k, r in res.constraints.items():  # (a, w) = 0 to round-off
        assert np.max(np.abs(r)) < 1e-13, (k, np.max(np.abs(r)))
    z0 = np.asarray(s.to_problem(s.check_state(y0)), dtype=float)
    ref = scipy.integrate.solve_ivp(problem.rhs, (0.0, T), z0, method="DOP853", rtol=1e-13, atol=1e-15)
    err = float(np.max(np.abs(z[-1] - ref.y[:, -1])))
    assert err < 1e-9, err


def test_without_a_polynomial_casimir_the_lie_group_pair_keeps_the_orbit():
    # Bianchi IV has no polynomial Casimir (its Casimir is not polynomial): the projected pair does not
    # apply there, and the table's fallback, rkmk853, is what simulate takes
    g = named.bianchi("IV")
    assert g.casimirs() == []
    s = EulerPoincare(g, [2.0, 1.0, 0.5])
    assert choose(s.problem()) == ("rkmk853", ADAPTIVE_OPTIONS)
    assert choose(SYSTEMS["free so(3)"][0].problem()) == ("rk853_projected", ADAPTIVE_OPTIONS)
    res = s.simulate(np.array([0.3, 0.2, 0.4]), 2.0, steps=20)
    assert res.method == "rkmk853" and res.status == 0
