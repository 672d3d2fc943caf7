"""``simulate`` of an ensemble with ``ensemble="independent"`` and its defaults (issue 23): the default
output grid (steps=1000) is filled from each trajectory's own steps, so each trajectory equals its single
``simulate`` run (the same steps, the same continuous extension) to round-off; the constraint holds."""

import numpy as np

from liegroups import named
from servo.lie import ServoFirstKind

I = np.diag([1.0, 2.0, 3.0, 1.5, 2.5, 4.0])
A = np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0])
B = np.array([1.0, 1.0, 0.0, 0.0, 0.0, 1.0])


def _on_constraint(X, Z):
    """Z moved along b onto (a, I^-1 m) = 0 (a derivation: (a, I^-1 (m - c b)) = 0 for c below)."""
    ia = np.linalg.solve(I, A)
    return Z - np.outer((Z @ ia) / (ia @ B), B)


def test_an_independent_ensemble_simulates_with_the_defaults():
    X = ServoFirstKind(named.so4(), I, a=A, b=B)
    Z = _on_constraint(X, np.random.default_rng(0).standard_normal((3, 6)))
    r = X.simulate(Z, 2.0, ensemble="independent")
    assert r.status == 0 and r.y.shape == (1001, 3, 6) and np.allclose(r.t, np.linspace(0.0, 2.0, 1001))
    assert len(r.failed) == 0 and np.all(r.t_end == 2.0)
    for k in range(3):
        s = X.simulate(Z[k], 2.0)
        assert np.max(np.abs(s.y - r.y[:, k])) <= 1e-13 * max(1.0, np.max(np.abs(s.y)))
    w = r.y @ np.linalg.inv(I).T
    assert np.max(np.abs(w @ A)) <= 1e-12 * np.max(np.abs(r.y))
