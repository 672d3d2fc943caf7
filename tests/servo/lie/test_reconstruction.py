"""Group reconstruction g' = g w through integrators for SO(3), SE(2), SE(3)."""

import numpy as np
import pytest

from liegroups import SE2, SE3, SO3, named
from servo import EulerPoincare, ServoError, ServoSecondKind, reconstruct_motion


def _velocity(dim, seed):
    rng = np.random.default_rng(seed)
    c, f = rng.standard_normal(dim), rng.uniform(0.5, 2.0, dim)
    return lambda t: c * np.cos(f * t) + 0.3


@pytest.mark.parametrize("G", [SE2, SO3, SE3])
def test_orientation_stays_orthogonal_over_many_steps(G):
    # exp-based steps keep R^T R = 1 to round-off over 10^5 steps (under a second each);
    # benchmarks/servo_reconstruction.py also runs rkmk4
    steps = 100_000
    t = np.linspace(0.0, 500.0, steps + 1)
    res = reconstruct_motion((t, _velocity(G.dim, 1)), group=G, method="lie_euler")
    assert res.nsteps == steps
    assert np.max(res.constraints["group_defect"]) < 1e-12
    R = res.y[-1][:3, :3] if G is not SE2 else res.y[-1][:2, :2]
    k = R.shape[0]
    assert np.max(np.abs(R.T @ R - np.eye(k))) < 1e-12


def test_reconstruction_of_a_free_rigid_body_conserves_spatial_momentum():
    # independent: the spatial angular momentum R m is constant for the free rigid body (Noether)
    s = EulerPoincare(named.so3(), [2.0, 1.0, 0.5])
    res = s.simulate(np.array([0.3, 1.0, -0.4]), 3.0, steps=600)
    g = reconstruct_motion(res, substeps=2)
    spatial = np.einsum("kij,kj->ki", g.y, res.y)
    assert np.max(np.abs(spatial - spatial[0])) < 1e-7
    assert np.max(g.constraints["group_defect"]) < 1e-13


def test_reconstruction_needs_a_matrix_group():
    s = ServoSecondKind(named.sl2(), np.eye(3), a=[0, 0, 1], b=[0, 0, 1])
    res = s.simulate(s.state_from(w=[0.1, 0.2, 0.0]), 0.1, steps=5)
    with pytest.raises(ServoError, match="no matrix group"):
        reconstruct_motion(res)
    with pytest.raises(ServoError, match="group="):
        reconstruct_motion((res.t, res.w))
