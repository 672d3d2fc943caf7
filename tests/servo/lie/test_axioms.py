"""What every Lie-group system promises, tested once over every model and every named algebra (the way
jaxlie tests its group axioms once over every group).

For each model (free Euler-Poincare, servo-constraint of the first kind, nonholonomic, of the second kind,
vakonomic) on each named algebra, with a random positive definite inertia and random covectors a, b
(seeded; realizable since (I^-1 a, b) != 0 generically, checked):

* the constraint (a, w) = 0 is kept along the run (to round-off for the Lie-group method: the first kind
  projects onto (I^-1 a, m) = const, the second kind is linear in z);
* every first integral the system declares stays constant to the method's accuracy (Casimirs of the
  second kind to round-off: the run is a coadjoint motion);
* a batch of initial states gives the same trajectories as single runs, to round-off;
* the full trajectory agrees with the reduced homogeneous quadratic system x' = v(x) integrated by a
  second, independent method (scipy's DOP853 at tight tolerance) and mapped back by ``to_state``.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from liegroups import named
from servo import EulerPoincare, Nonholonomic, ServoFirstKind, ServoSecondKind, Vakonomic

ALGEBRAS = ("so3", "se2", "se3", "sl2", "heisenberg", "so4")
MODELS = ("free", "servo1", "nonholonomic", "servo2", "vakonomic")
T_END, STEPS = 0.5, 200


def _spd(rng, n):
    A = rng.normal(size=(n, n))
    return A @ A.T / n + np.eye(n)


def build(model, alg_name, seed=0):
    rng = np.random.default_rng(zlib.crc32(f"{model}/{alg_name}/{seed}".encode()))
    alg = named.get(alg_name)
    n = alg.dim
    I = _spd(rng, n)
    a, b = rng.normal(size=n), rng.normal(size=n)
    if abs(np.linalg.solve(I, a) @ b) < 0.1 * np.linalg.norm(a) * np.linalg.norm(b) / np.linalg.norm(I, 2):
        b = b + 0.5 * a
    cls = {"free": None, "servo1": ServoFirstKind, "nonholonomic": Nonholonomic,
           "servo2": ServoSecondKind, "vakonomic": Vakonomic}[model]
    if cls is None:
        sysm = EulerPoincare(alg, I)
    elif model in ("nonholonomic", "vakonomic"):
        sysm = cls(alg, I, a=a)
    else:
        sysm = cls(alg, I, a=a, b=b)
    w = 0.4 * rng.normal(size=(3, n)) / np.sqrt(n)
    if cls is None:
        states = sysm.state_from(w=w)
    elif model in ("servo2", "vakonomic"):
        states = sysm.state_from(w=w, lam=0.3 * rng.normal(size=3), project=True)
    else:
        states = sysm.state_from(w=w, project=True)
    return sysm, states


CASES = [(m, a) for m in MODELS for a in ALGEBRAS]


@pytest.mark.parametrize("model,alg_name", CASES)
def test_constraint_and_integrals_are_kept(model, alg_name):
    sysm, states = build(model, alg_name)
    res = sysm.simulate(states[0], T_END, steps=STEPS)
    assert res.status == 0, res.message
    scale = 1.0 + float(np.max(np.abs(res.y)))
    if model != "free":
        w = res.w
        assert np.max(np.abs(w @ sysm.a)) < 1e-12 * scale * np.linalg.norm(sysm.a)
    for F in sysm.first_integrals():
        v = np.asarray(F(res.y), dtype=float)
        drift = np.max(np.abs(v - v[0])) / max(1.0, abs(v[0]))
        tol = 1e-12 if (F.kind == "casimir" and model in ("free", "servo2", "vakonomic")) else 1e-7
        assert drift < tol, (F.name, drift)


@pytest.mark.parametrize("model,alg_name", CASES)
def test_batch_equals_single_runs(model, alg_name):
    sysm, states = build(model, alg_name)
    # a fixed-step method takes the same steps on every trajectory: the batch equals the single runs
    fixed = {"rk853_projected": "rkmk4", "rkmk853": "rkmk4", "rk853": "rk4"}[sysm.default_method]
    batch = sysm.simulate(states, T_END, steps=50, method=fixed)
    for k in range(len(states)):
        single = sysm.simulate(states[k], T_END, steps=50, method=fixed)
        assert np.allclose(batch.y[:, k], single.y, rtol=1e-13, atol=1e-14)
    # the default adaptive pair controls one step size for the whole batch (the largest error decides),
    # so the batch equals the single runs to the pair's accuracy (rtol 1e-12), not bit for bit
    batch = sysm.simulate(states, T_END, steps=50)
    for k in range(len(states)):
        single = sysm.simulate(states[k], T_END, steps=50)
        assert np.allclose(batch.y[:, k], single.y, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("model,alg_name", CASES)
def test_reduced_and_full_trajectories_agree(model, alg_name):
    sysm, states = build(model, alg_name)
    red = sysm.reduced()
    q = red.system
    x0 = red.from_state @ states[0]
    assert np.allclose(red.to_state @ x0, states[0], atol=1e-12)
    sol = solve_ivp(lambda t, x: q.v(x), (0.0, T_END), x0, method="DOP853", rtol=1e-12, atol=1e-14,
                    t_eval=np.linspace(0.0, T_END, STEPS + 1))
    full = sysm.simulate(states[0], T_END, steps=STEPS)
    mapped = sol.y.T @ red.to_state.T
    assert np.max(np.abs(mapped - full.y)) < 1e-7 * (1.0 + np.max(np.abs(full.y)))
