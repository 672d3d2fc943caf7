"""Redundant but consistent constraints: Talamucci (2025), Example 2, cases (i) and (iv) in the paper's
own form, three equations of rank 2 (the components of a cross product = 0).

Two points P1 = (q1, q2, q3), P2 = (q4, q5, q6) in space, T = (|P1'|^2 + |P2'|^2)/2, springs
V = (|P1|^2 + |P2 - e_x|^2)/2, Cetaev's model.

(i)  P1' x P2' = 0 (parallel velocities). The components (x, z) alone say w = P1' x P2' = w_y e_y, and
     w . P1' = 0 then gives w_y P1'_y = 0: while P1'_y != 0 the two-equation form has the same zero
     set, and both are regular there, so the normal spaces span{dphi/dq'} coincide and so do the
     Cetaev motions. The reaction R = J^T lambda = (P2' x lambda, -P1' x lambda) does not see the
     component of lambda along P1' (|| P2'): the minimum-norm multiplier has lambda . P1' = 0.
(iv) d x (P1' + P2') = 0, d = P1 - P2 (the midpoint velocity is parallel to the joining line). The
     components (x, z) suffice while d_y != 0 (same argument with w . d = 0). R = (-d x lambda,
     -d x lambda): the minimum-norm multiplier has lambda . d = 0.
Both constraints are positively homogeneous in q' (degree 2 and 1), so T + V is conserved
(Talamucci, Proposition 1). Expected values: the two-equation form (a second, independent set of
equations), energy conservation, and the multiplier conditions just derived.
"""

import numpy as np
import pytest
import sympy as sp
from sympy.physics.mechanics import dynamicsymbols

from servo import LagrangianSystem, RealizabilityError

q = dynamicsymbols("q1:7")
t = dynamicsymbols._t
v = [x.diff(t) for x in q]
P1d, P2d = sp.Matrix(v[:3]), sp.Matrix(v[3:])
D = sp.Matrix(q[:3]) - sp.Matrix(q[3:])
T = sum(x ** 2 for x in v) / 2
V = (q[0] ** 2 + q[1] ** 2 + q[2] ** 2 + (q[3] - 1) ** 2 + q[4] ** 2 + q[5] ** 2) / 2
CROSS = {"i": list(P1d.cross(P2d)), "iv": list(D.cross(P1d + P2d))}


@pytest.fixture(scope="module")
def systems():
    L = LagrangianSystem(T, V, q)
    return {name: (L.constrain(phi), L.constrain([phi[0], phi[2]])) for name, phi in CROSS.items()}


def _initial(name, seed):
    rng = np.random.default_rng(seed)
    if name == "i":
        q0 = rng.uniform(-0.5, 0.5, 6) + [0, 0, 0, 1, 0, 0]
        p1 = np.array([rng.uniform(-0.3, 0.3), rng.choice([-1, 1]) * rng.uniform(0.8, 1.2), rng.uniform(-0.3, 0.3)])
        return q0, np.concatenate([p1, rng.uniform(-1.5, 1.5) * p1])
    d = np.array([rng.uniform(-0.3, 0.3), rng.choice([-1, 1]) * rng.uniform(0.8, 1.2), rng.uniform(-0.3, 0.3)])
    p2 = rng.uniform(-0.5, 0.5, 3)
    q0 = np.concatenate([p2 + d, p2])
    e = rng.uniform(-0.5, 0.5, 3)
    b = rng.uniform(-1, 1) * d
    return q0, np.concatenate([b + e, b - e])


def _energy(res):
    P, Qd = res.q, res.qd
    return 0.5 * (Qd ** 2).sum(-1) + 0.5 * ((P[:, :3] ** 2).sum(-1) + ((P[:, 3:] - [1, 0, 0]) ** 2).sum(-1))


@pytest.mark.parametrize("name", ["i", "iv"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_three_equations_of_rank_two_match_two_equations(systems, name, seed):
    three, two = systems[name]
    q0, qd0 = _initial(name, seed)
    assert np.abs(three.constraint_values(0.0, q0, qd0)).max() < 1e-12
    r3 = three.simulate(q0, qd0, 1.5, steps=15)
    r2 = two.simulate(q0, qd0, 1.5, steps=15)
    # the two-equation form is valid while P1'_y (case i) or d_y (case iv) stays away from 0
    guard = r2.qd[:, 1] if name == "i" else r2.q[:, 1] - r2.q[:, 4]
    assert np.abs(guard).min() > 0.05
    np.testing.assert_allclose(r3.q, r2.q, atol=1e-9)
    np.testing.assert_allclose(r3.qd, r2.qd, atol=1e-9)
    assert np.abs(_energy(r3) - _energy(r3)[0]).max() < 1e-9          # homogeneous: no work (Proposition 1)
    assert np.abs(r3.constraints["phi"]).max() < 1e-8
    # the same reaction from both forms, and the three-equation multiplier is the minimum-norm one
    n = 6
    for k in range(0, 16, 5):
        J3 = three._mat("J", three.system._args(r3.t[k], r3.q[k], r3.qd[k]), (3, n))
        J2 = two._mat("J", two.system._args(r2.t[k], r2.q[k], r2.qd[k]), (2, n))
        R3, R2 = J3.T @ r3.lam[k], J2.T @ r2.lam[k]
        np.testing.assert_allclose(R3, R2, atol=1e-7 * (1 + np.abs(R2).max()))
        axis = r3.qd[k, :3] if name == "i" else r3.q[k, :3] - r3.q[k, 3:]
        assert abs(r3.lam[k] @ axis) < 1e-8 * (1 + np.abs(r3.lam[k]).max())
        lam_ls = np.linalg.lstsq(J3.T, R2, rcond=1e-8)[0]  # min-norm J^T lam = R (rank 2: cut the round-off value)
        np.testing.assert_allclose(r3.lam[k], lam_ls, atol=1e-7 * (1 + np.abs(lam_ls).max()))


def test_homogeneity_of_the_printed_forms(systems):
    assert systems["i"][0].homogeneity_degree() == [2, 2, 2]
    assert systems["iv"][0].homogeneity_degree() == [1, 1, 1]


def test_incompatible_redundant_constraints_are_refused():
    """x' = 0 twice is redundant and consistent; x' = 0 and x' + y = 0 (rank 1 in q') are consistent at
    y = 0 but their derivatives x'' = 0 and x'' + y' = 0 are not for y' != 0: refused at the start."""
    x, y = dynamicsymbols("x y")
    L = LagrangianSystem((x.diff() ** 2 + y.diff() ** 2) / 2, 0, [x, y])
    ok = L.constrain([x.diff(), 2 * x.diff()]).simulate([0, 0], [0, 1], 1.0, steps=4)
    np.testing.assert_allclose(ok.q[-1], [0, 1], atol=1e-12)
    np.testing.assert_allclose(ok.lam, 0, atol=1e-12)
    with pytest.raises(RealizabilityError, match="inconsistent multiplier equations"):
        L.constrain([x.diff(), x.diff() + y]).simulate([0, 0], [0, 1], 1.0)


@pytest.mark.parametrize("constraint", ["parallel_3d", "midpoint_3d"])
def test_catalog_entry_in_the_printed_form(constraint):
    """``liedyn ... talamucci_two_points -p constraint=parallel_3d|midpoint_3d``: the printed three-equation
    form runs through the catalog, conserves T + V and keeps all three components at 0."""
    from catalog.registry import get
    from catalog.verify.run import checks, simulate

    e = get("talamucci_two_points", constraint=constraint, t_end=2.0, steps=20)
    assert len(e.system.phi) == 3
    verdicts = checks(e, simulate(e))
    assert {v.what for v in verdicts} >= {"integral", "constraint", "claim"}
    for v in verdicts:
        assert v.value <= v.tol or (v.tol == 0.0 and v.value == 0.0), v
