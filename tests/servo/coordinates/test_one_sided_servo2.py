"""One-sided servo-constraints of type II (Kozlov (2019), section 7): T* = T + lambda N with lambda >= 0 a
state variable, the constraint f >= 0 held while lambda > 0 and released when lambda returns to 0.

Hand derivation (the expected values). One coordinate x, T = x'^2/2, the force F = -cos t, the
one-sided constraint f = x' >= 0 and the control N = -x', so T* = x'^2/2 - lambda x' and

    [T*] = F:  x'' - lambda' = -cos t          ((A^-1 dN/dx', df/dx') = -1 < 0: realizable with lambda >= 0).

From x(0) = 0, x'(0) = 1/2, lambda = 0 (control at rest):
  free        x' = 1/2 - sin t, x = t/2 + cos t - 1, until x' = 0 at t1 = pi/6 (join);
  held        x' = 0, so lambda' = cos t, lambda = sin t - 1/2 >= 0, until lambda = 0 again at
              t2 = 5 pi/6 with lambda' = cos t2 < 0 (leave);
  free        x' = 1/2 - sin t >= 0 (x'(t2) = 0), x = x(t1) + (t - t2)/2 + cos t - cos t2, until
              x' = 0 at t3 = 13 pi/6 (join; x'' = -cos t3 < 0);
  held        lambda = sin t - 1/2 until t4 = 17 pi/6 (leave), then free again.
The Cetaev one-sided constraint (type I with M = df/dx') on the same data holds only while its
multiplier lambda = cos t >= 0, i.e. it leaves already at pi/2: type II keeps the constraint longer,
because the stored lambda has to run down to 0 first.
"""

import numpy as np
import pytest
import sympy as sp
from sympy.physics.mechanics import dynamicsymbols

from servo import ActiveSetError, LagrangianError, LagrangianSystem

x = dynamicsymbols("x")
t = dynamicsymbols._t
T1, T2, T3, T4 = np.pi / 6, 5 * np.pi / 6, 13 * np.pi / 6, 17 * np.pi / 6


def exact(tt):
    """Free on [0, T1], [T2, T3], [T4, ...): x = x_a + (t - t_a)/2 + cos t - cos t_a, x' = 1/2 - sin t from
    the interval's start t_a; held on [T1, T2], [T3, T4]: x constant, x' = 0, lambda = sin t - 1/2."""
    free = lambda t, ta, xa: xa + (t - ta) / 2 + np.cos(t) - np.cos(ta)
    x1 = free(T1, 0.0, 0.0)
    x3 = free(T3, T2, x1)
    xs = np.select([tt <= T1, tt <= T2, tt <= T3, tt <= T4],
                   [free(tt, 0.0, 0.0), x1 + 0 * tt, free(tt, T2, x1), x3 + 0 * tt], free(tt, T4, x3))
    held = ((tt >= T1) & (tt <= T2)) | ((tt >= T3) & (tt <= T4))
    return xs, np.where(held, 0.0, 0.5 - np.sin(tt)), np.where(held, np.sin(tt) - 0.5, 0.0)


@pytest.fixture(scope="module")
def system():
    L = LagrangianSystem(x.diff() ** 2 / 2, 0, [x], forces=[-sp.cos(t)])
    return L, L.constrain(x.diff() >= 0, model="one_sided_servo2", control=-x.diff())


def test_type_two_motion_events_and_multiplier(system):
    L, c = system
    assert sp.simplify(c.realizability() + 1) == 0
    res = c.simulate([0.0], [0.5], 9.5, steps=190)
    assert [e[1:] for e in res.events] == [("join", 0), ("leave", 0), ("join", 0), ("leave", 0)]
    np.testing.assert_allclose([e[0] for e in res.events], [T1, T2, T3, T4], atol=1e-10)
    xs, xd, lam = exact(res.t)
    np.testing.assert_allclose(res.q[:, 0], xs, atol=1e-9)
    np.testing.assert_allclose(res.qd[:, 0], xd, atol=1e-9)
    np.testing.assert_allclose(res.lam[:, 0], lam, atol=1e-9)
    np.testing.assert_allclose(res["lambda"], res.lam)
    assert res.lam.min() >= -1e-12 and res.qd.min() >= -1e-9
    assert res.labels == ("x", "x'", "lambda1")


def test_type_one_leaves_earlier(system):
    """Cetaev's one-sided constraint on the same data: lambda = cos t, released at pi/2 (not 5 pi/6)."""
    L, _ = system
    res = L.constrain(x.diff() >= 0, model="one_sided").simulate([0.0], [0.5], 2.0, steps=20)
    assert [e[1:] for e in res.events] == [("join", 0), ("leave", 0)]
    np.testing.assert_allclose([e[0] for e in res.events], [T1, np.pi / 2], atol=1e-10)


def test_type_two_equations(system):
    """[T] = F - lambda' dN/dx' - lambda [N] with dN/dx' = -1, [N] = 0: x'' = -cos t + lambda'."""
    _, c = system
    eqs = c.equations()
    lam = dynamicsymbols("lambda1")
    assert sp.simplify(eqs[0].lhs - eqs[0].rhs - (x.diff(t, 2) + sp.cos(t) - lam.diff(t))) == 0
    assert eqs[1] == sp.Ge(x.diff(t), 0) and eqs[2] == sp.Ge(lam, 0)


def test_type_two_error_paths(system):
    L, c = system
    with pytest.raises(LagrangianError, match="needs control = N"):
        L.constrain(x.diff() >= 0, model="one_sided_servo2")
    with pytest.raises(LagrangianError, match=r"one scalar function N per constraint \(a list of 1\)"):
        L.constrain(x.diff() >= 0, model="one_sided_servo2", control=[[x.diff()]])
    with pytest.raises(LagrangianError, match="lam0 must be 1 numbers >= 0"):
        c.simulate([0.0], [0.0], 1.0, lam0=[-1.0])
    with pytest.raises(LagrangianError, match="not at its boundary"):
        c.simulate([0.0], [0.5], 1.0, lam0=[1.0])
    # N = +x': (A^-1 dN/dx', df/dx') = +1, lambda >= 0 would push towards f < 0: no active set at the join
    wrong = L.constrain(x.diff() >= 0, model="one_sided_servo2", control=x.diff())
    with pytest.raises(ActiveSetError, match="use -N"):
        wrong.simulate([0.0], [0.5], 1.0)
