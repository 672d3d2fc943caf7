"""The homotopy tracker of servo.quadratic.homotopy on its own: the start system, the fast kernels
against the formulas, the end points of every path against roots known in closed form, and
reproducibility. Expected values are derived here: for v = (x1^2, x2^2) the eigen-equations
x1^2 = c x1, x2^2 = c x2 have, in P^2 with z = (x1, x2, c), exactly the four points [1:0:1], [0:1:1],
[1:1:1] and the trivial [0:0:1], all regular: the Bezout number 2^2 = 4, so every path ends at one of them
and each is reached once."""

import numpy as np

from servo.quadratic.homotopy import QuadraticEigenHomotopy, solve_rows


def test_start_points_solve_the_start_system_on_the_patch():
    h = QuadraticEigenHomotopy(np.zeros((3, 3, 3)), rng=5)
    z0 = h.start_points()
    assert z0.shape == (8, 4)
    assert np.allclose(h.G(z0), 0, atol=1e-14) and np.allclose(z0 @ h.a, 1, atol=1e-14)
    assert np.allclose(h.H(z0, np.zeros(8)), 0, atol=1e-14)
    assert len({tuple(np.round(z / z[-1], 12)) for z in z0}) == 8


def _proj(z):
    z = np.asarray(z)
    k = int(np.argmax(np.abs(z)))
    return tuple(np.round((z / z[k]).real, 9))


def test_every_path_ends_at_a_known_root_once():
    Q = np.zeros((2, 2, 2))
    Q[0, 0, 0] = Q[1, 1, 1] = 1.0                    # v = (x1^2, x2^2)
    res = QuadraticEigenHomotopy(Q, rng=3).solve()
    assert res.converged.all() and res.regular.all() and np.all(res.cycle == 1)
    ends = sorted(_proj(z) for z in res.z)
    expected = sorted(_proj(np.array(v, float)) for v in ([1, 0, 1], [0, 1, 1], [1, 1, 1], [0, 0, 1]))
    assert ends == expected


def test_the_same_seed_gives_the_same_paths():
    rng = np.random.default_rng(7)
    Q = rng.integers(-3, 4, size=(3, 3, 3)).astype(float)
    Q = (Q + Q.transpose(0, 2, 1)) / 2
    a, b = QuadraticEigenHomotopy(Q, rng=11).solve(), QuadraticEigenHomotopy(Q, rng=11).solve()
    assert np.array_equal(a.z, b.z) and a.gamma == b.gamma


def test_homotopy_fast_kernels_match_the_formulas():
    # the tracker builds [H_z; a], H_t and H from one matmul (dF, dG linear in z, Euler's identity
    # F(z) = dF(z) z / 2) and solves through the LAPACK gufunc: check them against F, G, JF
    rng = np.random.default_rng(1)
    p = 4
    Q = rng.normal(size=(p, p, p)) + 1j * rng.normal(size=(p, p, p))
    h = QuadraticEigenHomotopy((Q + Q.transpose(0, 2, 1)) / 2, rng=2)
    z = rng.normal(size=(6, p + 1)) + 1j * rng.normal(size=(6, p + 1))
    t = rng.uniform(size=6)
    J, Ht, Hv = h._aug(z, t.astype(complex))
    JG = np.concatenate([2 * np.eye(p)[None] * z[:, None, :-1], -2 * np.repeat(z[:, -1:, None], p, 1)], 2)
    top = t[:, None, None] * h.JF(z) + ((1 - t) * h.gamma)[:, None, None] * JG
    assert np.allclose(J[:, :-1], top, atol=1e-13) and np.allclose(J[:, -1], h.a)
    assert np.allclose(Ht, h.F(z) - h.gamma * h.G(z), atol=1e-13)
    assert np.allclose(Hv, h.H(z, t), atol=1e-13)
    v = h._velocity_lin(z, t)
    assert np.allclose(v, h._velocity(z, t.astype(complex), np.ones(6, complex)), atol=1e-13)
    assert np.allclose(np.einsum("bij,bj->bi", J[:, :-1], v), -Ht, atol=1e-12)
    Js = J.copy()
    Js[2] = 0                                   # a singular row gives NaN, the others are solved
    x = solve_rows(Js, z)
    assert np.all(np.isnan(x[2])) and np.allclose(np.einsum("bij,bj->bi", J[[0, 1, 3]], x[[0, 1, 3]]), z[[0, 1, 3]])


def test_pairwise_angles_against_the_stable_formula_per_pair():
    """pairwise_angles (cheap formula above sine 1e-2, lowered by 1e-13) against asin |w - u (u^H w)| pair by
    pair: never above it, within 1e-10 of it (asin amplifies the 1e-13 near pi / 2), and to 1e-6 relative for a pair 3e-10 apart (the cheap formula would give ~1e-8 absolute)."""
    from servo.quadratic.certify import pairwise_angles
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(30, 4)) + 1j * rng.normal(size=(30, 4))
    Z[1] = Z[0] * (1 + 2j) + 1e-9 * rng.normal(size=4)
    A = pairwise_angles(Z)
    for a in range(30):
        for b in range(30):
            u, w = Z[a] / np.linalg.norm(Z[a]), Z[b] / np.linalg.norm(Z[b])
            ref = np.arcsin(min(1.0, np.linalg.norm(w - u * np.vdot(u, w))))
            assert A[a, b] <= ref + 1e-15 and abs(A[a, b] - ref) < 1e-10
    ref01 = np.arcsin(np.linalg.norm(Z[1] / np.linalg.norm(Z[1]) - Z[0] / np.linalg.norm(Z[0])
                                     * np.vdot(Z[0] / np.linalg.norm(Z[0]), Z[1] / np.linalg.norm(Z[1]))))
    assert 1e-10 < A[0, 1] and abs(A[0, 1] - ref01) < 1e-6 * ref01


def test_straight_path_velocity_matches_the_general_one():
    """_velocity_lin (dG written out sparsely) and _velocity (the full augmented Jacobian) solve the same
    [H_z; a] dz = [-H_t; 0]."""
    from servo.quadratic.homotopy import QuadraticEigenHomotopy
    p = 4
    h = QuadraticEigenHomotopy(np.random.default_rng(1).normal(size=(p, p, p)), rng=2, w=np.arange(1.0, p + 1))
    z = np.random.default_rng(3).normal(size=(7, p + 1)) + 1j
    tau = np.linspace(0, 1, 7)
    np.testing.assert_allclose(h._velocity_lin(z, tau), h._velocity(z, tau.astype(complex), np.ones(7)),
                               rtol=1e-10, atol=1e-12)


def test_tracking_in_blocks_gives_the_end_points_of_one_batch():
    """Paths are independent: tracked CHUNK at a time (here 5 of 16 at a time, uneven last block) they end
    where the single batch ends them."""
    from servo import QuadraticSystem
    from servo.quadratic.homotopy import QuadraticEigenHomotopy
    Q = QuadraticSystem(np.random.default_rng(11).normal(size=(4, 4, 4))).Q
    one = QuadraticEigenHomotopy(Q, rng=3)
    blocks = QuadraticEigenHomotopy(Q, rng=3)
    blocks.chunk = 5
    a, b = one.solve(), blocks.solve()
    assert a.converged.all() and (a.converged == b.converged).all()
    assert np.abs(a.z - b.z).max() < 1e-10 * np.abs(a.z).max()
