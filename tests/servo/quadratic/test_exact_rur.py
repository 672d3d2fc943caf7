"""The exact path's coordinates on systems whose entries span many scales (issue 25).

The Groebner path of servo.quadratic.exact used to recover the coordinates of its points from the traces
Tr(M_g M_u^k) by one Vandermonde solve over all the values u(P); on a mixed-scale p = 3 system of the fuzz
(``W980``: entries 2^-57 .. 2^44) two real lines came out 3e-3 off, while passing the normwise residual check,
and on ``W981`` the coordinates changed with the random chart. They now come from the rational univariate
representation g(P) = G_g(u(P)) / G_1(u(P)) evaluated at each u(P) in ball arithmetic, and ``_verify`` also
checks every component against the sizes of its own terms.

Expected values by a second method written here: Newton's method in mpmath at 120 digits on v(xi) = c xi, in the
chart of the point's largest component, from each simple point the exact path returns; it must converge to a
root that agrees with the point in every component (relative 1e-13, or below 1e-60 of the largest), with a
non-singular Jacobian, the roots pairwise apart. The points are then distinct simple roots, and with the trivial root and the multiple
points (singular, checked in the test) the Bezout number 2^p = 8 leaves nothing else.
"""
import numpy as np
import pytest

mpmath = pytest.importorskip("mpmath")

from servo import QuadraticSystem  # noqa: E402
from servo.quadratic import polynomials, rur  # noqa: E402
from servo.quadratic.exact import compare_with_exact, exact_invariant_lines  # noqa: E402

# (i, j, k, m, e): Q[i, j, k] = Q[i, k, j] = m 2^e, every other entry 0 (`benchmarks/_lines_fuzz.py`, mixed
# kind, p = 3, from the parts run with --seed 980 and --seed 981)
W980 = [(0, 0, 0, -1, -57), (0, 0, 1, -1, -31), (0, 0, 2, 1, 5), (1, 0, 2, -1, 10), (1, 1, 1, 1, 44),
        (1, 1, 2, 1, 44), (1, 2, 2, 1, -3), (2, 0, 1, -3, 4), (2, 1, 1, -3, 41), (2, 1, 2, 3, -56),
        (2, 2, 2, -3, -2)]
W981 = [(0, 0, 2, 1, 23), (0, 1, 1, -1, 21), (0, 1, 2, 3, -19), (0, 2, 2, -1, -31), (1, 0, 1, -1, -33),
        (1, 0, 2, -1, -48), (1, 1, 1, -3, 57), (1, 2, 2, 3, 8), (2, 1, 2, -1, -65)]


def system(entries):
    Q = np.zeros((3, 3, 3))
    for i, j, k, m, e in entries:
        Q[i, j, k] = Q[i, k, j] = m * 2.0 ** e
    return QuadraticSystem(Q)


def newton(Q, d, c, dps=120):
    """Newton on F(xi, c) = Q(xi, xi) - c xi = 0 with xi_m = d_m fixed (m the largest |d_m|), from (d, c): the
    root as an mpmath list (xi, c), and the smallest singular value of the Jacobian over its largest."""
    p = len(d)
    m = int(np.argmax(np.abs(d)))
    free = [a for a in range(p + 1) if a != m]
    with mpmath.workdps(dps):
        Qm = [[[mpmath.mpf(float(Q[i, j, k])) for k in range(p)] for j in range(p)] for i in range(p)]
        x = [mpmath.mpc(complex(a)) for a in d] + [mpmath.mpc(complex(c))]
        for _ in range(100):
            F = mpmath.matrix([mpmath.fsum(Qm[i][j][k] * x[j] * x[k] for j in range(p) for k in range(p))
                               - x[p] * x[i] for i in range(p)])
            J = mpmath.matrix(p, p)
            for i in range(p):
                for b, a in enumerate(free):
                    J[i, b] = -x[i] if a == p else 2 * mpmath.fsum(Qm[i][a][k] * x[k] for k in range(p)) - (
                        x[p] if a == i else 0)
            dx = mpmath.lu_solve(J, F)
            for b, a in enumerate(free):
                x[a] -= dx[b]
            if mpmath.norm(dx) <= mpmath.mpf(10) ** (10 - dps) * mpmath.norm(mpmath.matrix(x)):
                sv = mpmath.svd_c(J, compute_uv=False)
                return x, float(min(sv) / max(sv))
    raise AssertionError(f"Newton did not converge from {d}, c = {c}")


def assert_points_proved_by_newton(q, E):
    """Every simple point of E is, in every component, the root Newton converges to from it; the multiple ones
    are singular roots; with the trivial root the multiplicities add up to the Bezout number 8."""
    top = lambda v: max(abs(complex(a)) for a in v)  # noqa: E731
    roots = []
    for d, c, m in E.points:
        d = np.asarray(d, dtype=complex)
        if m > 1:                                  # a multiple root: F = 0 and a singular Jacobian, exactly
            F = np.einsum("ijk,j,k->i", q.Q, d, d) - c * d
            assert np.all(F == 0)
            J = 2 * np.einsum("ijk,k->ij", q.Q, d) - c * np.eye(3)
            assert np.linalg.matrix_rank(np.hstack([J, -d[:, None]])) < 3
            continue
        x, cond = newton(q.Q, d, c)
        assert cond > 1e-100                       # a simple root (120 digits resolve the singular values)
        scale = top(x[:3])
        for a, b in zip(list(d) + [c], x):
            b = complex(b)
            assert abs(a - b) <= 1e-13 * abs(b) + 1e-60 * scale, (d, c, x)
        with mpmath.workdps(120):                  # in the chart xi_m = 1 of its largest component
            k = int(np.argmax([abs(complex(a)) for a in x[:3]]))
            roots.append((k, [a / x[k] for a in x]))
    with mpmath.workdps(120):                      # pairwise distinct (some are 1e-54 apart)
        for n, (k, x) in enumerate(roots):
            for k2, y in roots[:n]:
                assert k != k2 or max(abs(a - b) for a, b in zip(x, y)) > mpmath.mpf(10) ** -100
    assert E.total_multiplicity == 7


@pytest.fixture(params=[True, False], ids=["flint", "sympy-mpmath"])
def flint_or_not(request, monkeypatch):
    if not request.param:
        monkeypatch.setattr(rur, "have_flint", lambda: False)
        monkeypatch.setattr(polynomials, "_flint", None)
    elif not rur.have_flint():
        pytest.skip("python-flint is not installed")
    return request.param


def test_mixed_scale_cluster_coordinates_componentwise(flint_or_not):
    """W980: four simple lines within 2e-5 of e_1 (two real, a complex pair), c from 1e-17 to 1e13: every point
    of the exact path is the root next to it in every component, and the library's krawczyk answer agrees."""
    q = system(W980)
    E = exact_invariant_lines(q, dyadic=True)
    assert_points_proved_by_newton(q, E)
    assert E.real_count == 3
    assert compare_with_exact(q.invariant_lines(), E) == []


def test_double_root_next_to_a_cluster_is_the_same_in_every_chart(flint_or_not):
    """W981: the double root e_1 (v(e_1) = Q[:, 0, 0] = 0, so c = 0) with two simple real lines within 5.4e-28 of
    it: the same points, componentwise to round-off, for three random charts and separating forms."""
    q = system(W981)
    runs = [exact_invariant_lines(q, seed=s, dyadic=True) for s in range(3)]
    assert_points_proved_by_newton(q, runs[0])
    assert sorted(m for _, _, m in runs[0].points) == [1, 1, 1, 1, 1, 2]
    key = lambda pt: (np.asarray(pt[0], complex) / np.asarray(pt[0], complex)[np.argmax(np.abs(pt[0]))], pt[1])  # noqa: E731
    for E in runs[1:]:
        for d0, c0 in map(key, runs[0].points):
            assert min(np.max(np.abs(d - d0)) + abs(c - c0) / max(1.0, abs(c0)) for d, c in map(key, E.points)) < 1e-15
