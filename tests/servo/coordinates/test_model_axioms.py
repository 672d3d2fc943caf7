"""What every constrained model of a system in coordinates promises, tested once over all models (the
way the Lie-group systems are tested once in tests/servo/lie/test_axioms.py).

The system is the Chaplygin skate on an inclined plane, T = (x'^2 + y'^2 + phi'^2)/2, V = -x, with the
blade constraint phi = x' sin(phi) - y' cos(phi) (zero, or >= 0 for the one-sided models), under every
model: nonholonomic (Cetaev), vakonomic, servo-constraints of the first kind (control M) and of the second
kind (T* = T + lambda N), one-sided (Cetaev reaction), one-sided of the first kind and of the second kind.
For every model:

* the result is the library's one result type with the declared components q, qd, lambda, and the method
  name is canonical (the bare scipy name is an alias that gives the same numbers);
* the constraint holds along the run (two-sided: |phi| small; one-sided: phi >= 0 up to round-off);
* a second integrator (Radau, implicit) gives the same motion to its tolerance;
* where the constraint is homogeneous in the velocities and ideal (nonholonomic, one-sided Cetaev), the
  energy T + V is conserved (Talamucci 2025, Proposition 1: the reaction does no work).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from sympy.physics.mechanics import dynamicsymbols

from integrators import IntegrationResult
from servo import LagrangianSystem

x, y, phi = dynamicsymbols("x y phi")
T = (x.diff() ** 2 + y.diff() ** 2 + phi.diff() ** 2) / 2
F = x.diff() * sp.sin(phi) - y.diff() * sp.cos(phi)
M = [sp.sin(phi) + sp.Rational(3, 10) * sp.cos(phi), -sp.cos(phi), sp.Rational(1, 5)]
N = F + sp.Rational(1, 4) * phi.diff()

MODELS = {
    "nonholonomic": dict(phi=F, model="nonholonomic"),
    "vakonomic": dict(phi=F, model="vakonomic"),
    "servo1": dict(phi=F, model="servo1", control=M),
    "servo2": dict(phi=F, model="servo2", control=N),
    "one_sided": dict(phi=F >= 0, model="one_sided"),
    "one_sided_servo1": dict(phi=F >= 0, model="one_sided", control=M),
    # type II pushes towards f > 0 only when (A^-1 dN/dq', df/dq') < 0 (Kozlov 2019, section 7): control -N
    "one_sided_servo2": dict(phi=F >= 0, model="one_sided_servo2", control=-N),
}
ENERGY_KEPT = {"nonholonomic", "one_sided"}
Q0, QD0 = [0.0, 0.0, 0.0], [0.5, 0.0, 0.8]      # on the boundary: phi = x' sin 0 - y' cos 0 = 0


@pytest.fixture(scope="module")
def skate():
    return LagrangianSystem(T, -x, [x, y, phi])


def _phi(q, qd):
    return qd[..., 0] * np.sin(q[..., 2]) - qd[..., 1] * np.cos(q[..., 2])


@pytest.mark.parametrize("name", list(MODELS))
def test_every_model_keeps_its_promises(skate, name):
    c = skate.constrain(**MODELS[name])
    res = c.simulate(Q0, QD0, 4.0, steps=80)
    assert isinstance(res, IntegrationResult) and res.status >= 0, res.message
    assert res.method == "scipy:DOP853"
    q, qd = np.asarray(res["q"]), np.asarray(res["qd"])
    assert q.shape == qd.shape == (81, 3) and np.asarray(res["lambda"]).shape[0] == 81
    f = _phi(q, qd)
    if name.startswith("one_sided"):
        assert f.min() > -1e-8
    else:
        assert np.max(np.abs(f)) < 1e-8
    alias = c.simulate(Q0, QD0, 4.0, steps=80, method="DOP853")
    assert alias.method == "scipy:DOP853" and np.array_equal(alias.q, res.q)
    radau = c.simulate(Q0, QD0, 4.0, steps=80, method="scipy:Radau", rtol=1e-10, atol=1e-10)
    assert np.max(np.abs(radau.q - res.q)) < 1e-6
    if name in ENERGY_KEPT:
        E = 0.5 * np.sum(qd ** 2, axis=-1) - q[:, 0]
        assert np.max(np.abs(E - E[0])) < 1e-8
